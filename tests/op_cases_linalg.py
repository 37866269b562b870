"""Derivative cases for ``duals/ops/linalg.py``: products, contractions, solves, determinants,
Cholesky and norms over vectors, matrices, stacks and broadcast batch axes.

Matrices that are inverted or factored are made well conditioned inside the case (``+ 3 I``
with entries in ``[-1, 1]``, or ``x @ x.T + 3 I`` for positive definite ones).
"""
import numpy as np
import scipy.sparse

import duals.numpy as dnp
from op_cases import Case

L = dnp.linalg


def _adjugate(a):
    from duals.ops.determinants import adjugate_p
    return adjugate_p(a)
UNIT = (-1.0, 1.0)


def _well(a, shift=3.0):
    """``a`` plus a multiple of the identity (per matrix of a stack): far from singular."""
    return a + shift * np.eye(a.shape[-1], dtype=a.dtype)


def _spd(x):
    return x @ dnp.swapaxes(x, -1, -2) + 3.0 * np.eye(x.shape[-1], dtype=x.dtype)


# a constant sparse operator, not symmetric (its transpose is what reverse mode applies)
SPARSE = scipy.sparse.diags([1.0, -2.0, 0.5], [-1, 0, 2], shape=(5, 5), format="csr")
SP = ("sparse_matmul",)

MM = ("matmul",)
MMR = ("matmul", "reshape")

CASES = [
    # ------------------------------------------------------------ matmul and the @ operator
    Case("matmul-mat-mat", dnp.matmul, ((2, 3), (3, 2)), MM),
    Case("matmul-mat-vec", dnp.matmul, ((2, 3), (3,)), MMR),
    Case("matmul-vec-mat", dnp.matmul, ((3,), (3, 2)), MMR),
    Case("matmul-vec-vec", dnp.matmul, ((3,), (3,)), MMR),
    Case("matmul-stack-stack", dnp.matmul, ((2, 2, 3), (2, 3, 2)), MM),
    Case("matmul-broadcast-batch", dnp.matmul, ((2, 1, 2, 3), (3, 3, 2)), MM),
    Case("matmul-stack-times-matrix", dnp.matmul, ((2, 2, 3), (3, 2)), MM),
    Case("matmul-matrix-times-stack", dnp.matmul, ((2, 3), (2, 3, 2)), MM),
    Case("matmul-vec-times-stack", dnp.matmul, ((3,), (2, 3, 2)), MMR),
    Case("matmul-operator-quadratic", lambda x: x @ x.T @ x, ((2, 3),), ("matmul", "transpose")),
    Case("matmul-operator-nonlinear", lambda w, x: dnp.tanh(w @ x) @ x, ((3, 3), (3,)),
         ("matmul", "tanh")),
    # ------------------------------------------------------------ dot, vdot, inner, outer
    Case("dot-vec-vec", dnp.dot, ((3,), (3,)), MMR),
    Case("dot-mat-vec", dnp.dot, ((2, 3), (3,)), MMR),
    Case("dot-scalar", lambda x, y: dnp.dot(x, y), ((), (3,)), ("mul",)),
    Case("dot-stack-stack", dnp.dot, ((2, 2, 3), (2, 3, 2)), ("matmul", "transpose", "reshape")),
    Case("dot-quadratic-form", lambda x: dnp.dot(x, dnp.dot(x, x)), ((3, 3),), MM),
    Case("vdot", dnp.vdot, ((2, 2), (4,)), MMR),
    Case("inner-vec-vec", dnp.inner, ((3,), (3,)), MMR),
    Case("inner-mat-mat", dnp.inner, ((2, 3), (4, 3)), ("matmul", "transpose", "reshape")),
    Case("outer", dnp.outer, ((2,), (3,)), ("mul", "reshape")),
    Case("outer-flattens", lambda x, y: dnp.outer(x, y * y), ((2, 2), (3,)), ("mul", "reshape")),
    # ------------------------------------------------------------ tensordot
    Case("tensordot-axes2", dnp.tensordot, ((2, 3, 2), (3, 2, 2)), ("matmul", "reshape")),
    Case("tensordot-axes-pairs", lambda x, y: dnp.tensordot(x, y, axes=([1, 0], [0, 2])),
         ((2, 3, 2), (3, 2, 2)), ("matmul", "reshape", "transpose")),
    Case("tensordot-axes0", lambda x, y: dnp.tensordot(x, y * y, axes=0), ((2,), (3,)), MMR),
    Case("tensordot-axes1-int-pair", lambda x, y: dnp.tensordot(x, y, axes=(1, 0)),
         ((2, 3), (3, 2)), MM),
    # ------------------------------------------------------------ einsum
    Case("einsum-matmul", lambda x, y: dnp.einsum("ij,jk->ik", x, y), ((2, 3), (3, 2)), MM),
    Case("einsum-batched", lambda x, y: dnp.einsum("bij,bjk->bik", x, y), ((2, 2, 3), (2, 3, 2)), MM),
    Case("einsum-ellipsis-broadcast", lambda x, y: dnp.einsum("...ij,...jk->...ik", x, y),
         ((2, 1, 2, 3), (3, 3, 2)), MM),
    Case("einsum-diagonal", lambda x: dnp.einsum("ii->i", x) * dnp.einsum("ii", x), ((3, 3),),
         ("getitem", "sum")),
    Case("einsum-dot-implicit", lambda x, y: dnp.einsum("i,i", x, y), ((3,), (3,)), MM),
    Case("einsum-elementwise", lambda x, y: dnp.einsum("ij,ij->ij", x, y), ((2, 3), (2, 3)), ("mul",)),
    Case("einsum-rowwise-dot", lambda x, y: dnp.einsum("ij,ij->i", x, y), ((2, 3), (2, 3)), MM),
    Case("einsum-outer", lambda x, y: dnp.einsum("i,j->ij", x, y), ((2,), (3,)), ("mul",)),
    Case("einsum-transpose-implicit", lambda x: dnp.einsum("ji", x) * x, ((2, 2),), ("transpose",)),
    Case("einsum-chain-of-three", lambda x, y, z: dnp.einsum("ij,jk,kl->il", x, y, z),
         ((2, 3), (3, 2), (2, 2)), MM),
    Case("einsum-sum-out-free-index", lambda x, y: dnp.einsum("ij,k->ik", x, y), ((2, 3), (2,)),
         ("sum", "mul")),
    Case("einsum-sublist-form", lambda x, y: dnp.einsum(x, [0, 1], y, [1, 2], [0, 2]),
         ((2, 3), (3, 2)), MM),
    Case("einsum-bilinear", lambda x: dnp.einsum("i,ij,j->", x, np.arange(9.0, dtype=x.dtype).reshape(3, 3), x),
         ((3,),), MM),
    # ------------------------------------------------------------ solve and inv
    Case("solve-vector", lambda a, b: L.solve(_well(a), b), ((3, 3), (3,)), ("solve",), domain=UNIT),
    Case("solve-matrix", lambda a, b: L.solve(_well(a), b), ((3, 3), (3, 2)), ("solve",), domain=UNIT),
    Case("solve-stack", lambda a, b: L.solve(_well(a), b), ((2, 3, 3), (2, 3, 2)), ("solve",),
         domain=UNIT),
    Case("solve-stack-shared-rhs", lambda a, b: L.solve(_well(a), b), ((2, 3, 3), (3, 2)),
         ("solve",), domain=UNIT),
    Case("solve-shared-matrix", lambda a, b: L.solve(_well(a), b), ((3, 3), (2, 3, 2)),
         ("solve",), domain=UNIT),
    Case("solve-stack-vector", lambda a, b: L.solve(_well(a), b), ((2, 3, 3), (3,)),
         ("solve",), domain=UNIT),
    Case("inv", lambda a: L.inv(_well(a)), ((3, 3),), ("solve",), domain=UNIT),
    Case("inv-stack", lambda a: L.inv(_well(a)), ((2, 2, 2),), ("solve",), domain=UNIT),
    # ------------------------------------------------------------ det and slogdet
    Case("det", lambda a: L.det(_well(a)), ((3, 3),), ("det",), domain=UNIT),
    Case("det-stack", lambda a: L.det(_well(a)), ((2, 3, 3),), ("det",), domain=UNIT),
    Case("det-general", lambda a: L.det(a), ((2, 2),), ("det",)),
    # the adjugate that det's rules use at a singular matrix, here where it is not singular
    Case("adjugate", lambda a: _adjugate(_well(a)), ((3, 3),), ("adjugate",), domain=UNIT),
    Case("slogdet", lambda a: L.slogdet(_well(a))[1], ((3, 3),), ("slogdet",), domain=UNIT),
    Case("slogdet-negative-det", lambda a: L.slogdet(_well(a, -3.0)).logabsdet, ((3, 3),),
         ("slogdet",), domain=UNIT),
    Case("slogdet-stack", lambda a: L.slogdet(_well(a))[1], ((2, 2, 2),), ("slogdet",), domain=UNIT),
    # ------------------------------------------------------------ cholesky
    Case("cholesky-spd", lambda x: L.cholesky(_spd(x)), ((3, 3),), ("cholesky", "matmul"), domain=UNIT),
    Case("cholesky-stack", lambda x: L.cholesky(_spd(x)), ((2, 3, 3),), ("cholesky",), domain=UNIT),
    Case("cholesky-reads-lower-triangle", lambda a: L.cholesky(_well(a)), ((3, 3),), ("cholesky",),
         domain=(-0.5, 0.5)),
    Case("cholesky-upper", lambda a: L.cholesky(_well(a), upper=True), ((3, 3),), ("cholesky",),
         domain=(-0.5, 0.5)),
    # ------------------------------------------------------------ the matrix exponential
    Case("expm", L.expm, ((3, 3),), ("expm", "concatenate"), domain=UNIT),
    Case("expm-stack", L.expm, ((2, 3, 3),), ("expm",), domain=UNIT),
    # a Jukes-Cantor rate matrix times a branch length: a triple eigenvalue
    Case("expm-repeated-eigenvalues", lambda t: L.expm(t * (np.ones((4, 4)) - 4.0 * np.eye(4)) / 3.0),
         ((),), ("expm",), domain=(0.1, 1.0)),
    # ------------------------------------------------------------ a constant scipy.sparse operand
    Case("sparse-matmul-vector", lambda x: dnp.matmul(SPARSE, x) * x, ((5,),), SP + ("mul",), float32=False),
    Case("sparse-dot-columns", lambda x: dnp.dot(SPARSE, x), ((5, 2),), SP, float32=False),
    Case("vector-at-sparse", lambda x: np.sin(x @ SPARSE), ((5,),), SP, float32=False),
    Case("matrix-at-sparse", lambda x: x @ SPARSE, ((3, 5),), SP + ("transpose",), float32=False),
    # ------------------------------------------------------------ norms
    Case("norm-vector", lambda x: L.norm(x), ((3,),), ("sqrt", "mul", "sum")),
    Case("norm-flattened", lambda x: L.norm(x), ((2, 2, 2),), ("sqrt", "sum")),
    Case("norm-ord1", lambda x: L.norm(x, 1), ((3,),), ("abs", "sum"), away_from_zero=True),
    Case("norm-inf", lambda x: L.norm(x, np.inf), ((4,),), ("abs", "max"), away_from_zero=True),
    Case("norm-neg-inf", lambda x: L.norm(x, -np.inf), ((4,),), ("abs", "min"), away_from_zero=True),
    Case("norm-p3", lambda x: L.norm(x, 3), ((3,),), ("integer_pow", "pow"), away_from_zero=True),
    Case("norm-p-fractional", lambda x: L.norm(x, 1.5), ((3,),), ("pow",), away_from_zero=True),
    Case("norm-axis-keepdims", lambda x: L.norm(x, axis=-1, keepdims=True), ((2, 3),), ("sqrt",)),
    Case("norm-fro", lambda x: L.norm(x, "fro"), ((2, 3),), ("sqrt",)),
    Case("norm-matrix-1", lambda x: L.norm(x, 1), ((3, 3),), ("abs", "sum", "max"), away_from_zero=True),
    Case("norm-matrix-inf", lambda x: L.norm(x, np.inf), ((3, 3),), ("max",), away_from_zero=True),
    Case("norm-matrix-neg1", lambda x: L.norm(x, -1, axis=(1, 2)), ((2, 3, 3),), ("min",),
         away_from_zero=True),
    Case("norm-matrix-axes-keepdims", lambda x: L.norm(x, "fro", axis=(2, 0), keepdims=True),
         ((2, 3, 2),), ("sqrt",)),
]
