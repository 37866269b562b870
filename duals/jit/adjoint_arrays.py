"""Whole-array functions on adjoint arrays (compiled reverse mode) that forward mode runs on lanes.

Compiled forward mode computes ``np.where``, products (``@``, ``np.dot``, ``np.matmul``) and
``np.linalg.solve``/``inv``/``det``/``slogdet``/``cholesky``/``norm`` of dual arrays by BLAS and LAPACK calls on the
real parts with the tangent lanes as extra columns (:mod:`duals.jit.linalg`). Adjoints have no
lanes: here the same functions are written with loops and scalar operations, which the tape
records (a product of ``m × k`` by ``k × n`` records ``2 m k n`` operations; ``solve`` is
Gaussian elimination with partial pivoting on the values, ``O(n³)`` operations). Exact, and
meant for the small matrices of simulation code; for large dense linear algebra use forward
mode (``duals.jacfwd``). The decompositions (``eigh``, ``eigvalsh``, ``svd``, ``qr``, ``pinv``,
``lstsq``) of adjoints are in :mod:`.adjoint_decompositions`.

>>> import numba, numpy as np, duals
>>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> duals.grad(numba.njit(lambda b: np.sum(np.linalg.solve(A, b))))(np.ones(2)).round(12).tolist()
[0.4, 0.2]
"""
import operator

import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from ._types import DualType
from .complex_types import ComplexDualType
from .extras import _real
from .linalg import norm_of_order

__all__ = ["is_adjoint"]


def is_adjoint(t):
    """is_adjoint(t) -> whether Numba type ``t`` is an adjoint or an array of adjoints."""
    e = t.dtype if isinstance(t, types.Array) else t
    return isinstance(e, DualType) and e.lanes is None


def _level(*ts):
    """The adjoint type of the highest level among the operands, or None."""
    found = None
    for t in ts:
        e = t.dtype if isinstance(t, types.Array) else t
        if is_adjoint(e) and (found is None or e.tag > found.tag):
            found = e
    return found


# ---------------------------------------------------------------- np.where

@overload(np.where, target="cpu")
def _ov_where(condition, x, y):
    T = _level(x, y)
    if T is None or not isinstance(condition, types.Array):
        return None
    x_array, y_array = isinstance(x, types.Array), isinstance(y, types.Array)

    def impl(condition, x, y):
        for operand_shape in ((x.shape if x_array else condition.shape),
                              (y.shape if y_array else condition.shape)):
            if operand_shape != condition.shape:
                raise ValueError("np.where on adjoints (compiled reverse mode) needs branches of "
                                 "the condition's shape, or scalars")
        out = np.empty(condition.shape, T)
        for idx in np.ndindex(condition.shape):
            if condition[idx]:
                out[idx] = _take(x, idx)
            else:
                out[idx] = _take(y, idx)
        return out
    return impl


def _take(v, idx):
    """_take(v, idx) -> ``v[idx]`` of an array, ``v`` itself of a scalar."""


@overload(_take)
def _ov_take(v, idx):
    if isinstance(v, types.Array):
        return lambda v, idx: v[idx]
    return lambda v, idx: v


# ---------------------------------------------------------------- products

def products_by_loops(level):
    """products_by_loops(level) -> the typer of ``@``, ``np.dot`` and ``np.matmul`` written with
    loops and scalar operations, for the 1-d and 2-d arrays whose element type ``level(a, b)``
    names (adjoints here; index sets in sparsity detection, :mod:`duals.sparse.index_lanes`)."""
    def typer(a, b):
        T = level(a, b)
        if T is None or not (isinstance(a, types.Array) and isinstance(b, types.Array)):
            return None
        if a.ndim == 1 and b.ndim == 1:
            def vv(a, b):
                _check(a.shape[0], b.shape[0])
                total = 0.0
                for i in range(a.shape[0]):
                    total = total + term(a[i], b[i])
                return total
            return vv
        if a.ndim == 2 and b.ndim == 1:
            def mv(a, b):
                _check(a.shape[1], b.shape[0])
                out = np.empty(a.shape[0], T)
                for i in range(a.shape[0]):
                    total = 0.0
                    for k in range(a.shape[1]):
                        total = total + term(a[i, k], b[k])
                    out[i] = total
                return out
            return mv
        if a.ndim == 1 and b.ndim == 2:
            def vm(a, b):
                _check(a.shape[0], b.shape[0])
                out = np.empty(b.shape[1], T)
                for j in range(b.shape[1]):
                    total = 0.0
                    for k in range(a.shape[0]):
                        total = total + term(a[k], b[k, j])
                    out[j] = total
                return out
            return vm
        if a.ndim == 2 and b.ndim == 2:
            def mm(a, b):
                _check(a.shape[1], b.shape[0])
                out = np.empty((a.shape[0], b.shape[1]), T)
                for i in range(a.shape[0]):
                    for j in range(b.shape[1]):
                        total = 0.0
                        for k in range(a.shape[1]):
                            total = total + term(a[i, k], b[k, j])
                        out[i, j] = total
                return out
            return mm
        raise errors.TypingError(f"duals.jit: products of arrays of {T} take 1-d and 2-d operands")
    return typer


def term(x, y):
    """term(x, y) -> ``x * y``; of an index set (sparsity detection) and a plain exact zero, the
    product's value without the set, as the NumPy path's products follow a constant's zeros."""


def is_index_set(t):
    """is_index_set(t) -> whether Numba type ``t`` is an element type of sparsity detection
    (dual numbers whose lanes are sets of inputs: they refuse float lanes, and are not complex)."""
    return (isinstance(t, DualType) and t.lanes is not None and not isinstance(t, ComplexDualType)
            and getattr(t, "lanes_refusal", None) is not None)


@overload(term)
def _ov_term(x, y):
    if isinstance(x, types.Float) and is_index_set(y):
        return lambda x, y: x * _real(y) if x == 0.0 else x * y
    if isinstance(y, types.Float) and is_index_set(x):
        return lambda x, y: _real(x) * y if y == 0.0 else x * y
    return lambda x, y: x * y


@register_jitable
def _check(inner_a, inner_b):
    if inner_a != inner_b:
        raise ValueError("matmul: the inner dimensions of the operands differ")


for _function in (np.dot, np.matmul, operator.matmul):
    overload(_function, target="cpu")(products_by_loops(_level))


# ---------------------------------------------------------------- np.linalg

_SINGULAR = "Matrix is singular to machine precision."
_SINGULAR_DET = ("Matrix is singular (compiled reverse mode eliminates on the values: the derivative "
                 "of det at a singular matrix, the adjugate, comes from duals.jacfwd, and its second "
                 "derivative is not computed)")


@register_jitable
def _eliminate(M, R):
    """Gaussian elimination with partial pivoting (on the values) of ``M X = R`` in place;
    returns the sign of the row permutation, 0.0 for a singular ``M`` (the caller raises).
    ``M`` is square, ``R`` has the same rows."""
    n = M.shape[0]
    sign = 1.0
    for k in range(n):
        p = k
        for r in range(k + 1, n):
            if abs(_real(M[r, k])) > abs(_real(M[p, k])):
                p = r
        if _real(M[p, k]) == 0.0:
            return 0.0
        if p != k:
            sign = -sign
            for c in range(n):
                M[k, c], M[p, c] = M[p, c], M[k, c]
            for c in range(R.shape[1]):
                R[k, c], R[p, c] = R[p, c], R[k, c]
        for r in range(k + 1, n):
            factor = M[r, k] / M[k, k]
            for c in range(k, n):
                M[r, c] = M[r, c] - factor * M[k, c]
            for c in range(R.shape[1]):
                R[r, c] = R[r, c] - factor * R[k, c]
    return sign


@register_jitable
def _back_substitute(M, R):
    n = M.shape[0]
    for c in range(R.shape[1]):
        for k in range(n - 1, -1, -1):
            total = R[k, c]
            for j in range(k + 1, n):
                total = total - M[k, j] * R[j, c]
            R[k, c] = total / M[k, k]


def _square_copy(A, T):
    """A copy of square ``A`` as an array of adjoints ``T``."""


@overload(_square_copy)
def _ov_square_copy(A, T):
    def impl(A, T):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        return _columns_copy(A, T)
    return impl


@overload(np.linalg.solve, target="cpu")
def _ov_solve(A, B):
    T = _level(A, B)
    if T is None or not isinstance(A, types.Array) or A.ndim != 2:
        return None
    vector = isinstance(B, types.Array) and B.ndim == 1

    def impl(A, B):
        M = _square_copy(A, T)
        R = _columns_copy(B, T)
        if _eliminate(M, R) == 0.0:
            raise np.linalg.LinAlgError(_SINGULAR)
        _back_substitute(M, R)
        return R[:, 0].copy() if vector else R
    return impl


def _columns_copy(B, T):
    """A matrix, or a right-hand side (1-d: one column), as a new 2-d array of adjoints, of any layout."""


@overload(_columns_copy)
def _ov_columns_copy(B, T):
    element = T.instance_type
    if B.ndim == 1:
        def vector(B, T):
            R = np.empty((B.shape[0], 1), element)
            for i in range(B.shape[0]):
                R[i, 0] = B[i]
            return R
        return vector

    def matrix(B, T):
        R = np.empty(B.shape, element)
        for i in range(B.shape[0]):
            for j in range(B.shape[1]):
                R[i, j] = B[i, j]
        return R
    return matrix


@overload(np.linalg.inv, target="cpu")
def _ov_inv(A):
    T = _level(A)
    if T is None:
        return None

    def impl(A):
        M = _square_copy(A, T)
        R = np.zeros(A.shape, T)
        for i in range(A.shape[0]):
            R[i, i] = 1.0
        if _eliminate(M, R) == 0.0:
            raise np.linalg.LinAlgError(_SINGULAR)
        _back_substitute(M, R)
        return R
    return impl


@overload(np.linalg.det, target="cpu")
def _ov_det(A):
    T = _level(A)
    if T is None:
        return None

    def impl(A):
        M = _square_copy(A, T)
        sign = _eliminate(M, np.empty((A.shape[0], 0), T))
        if sign == 0.0:
            raise np.linalg.LinAlgError(_SINGULAR_DET)
        total = M[0, 0] * sign
        for k in range(1, A.shape[0]):
            total = total * M[k, k]
        return total
    return impl


@overload(np.linalg.slogdet, target="cpu")
def _ov_slogdet(A):
    T = _level(A)
    if T is None:
        return None

    def impl(A):
        M = _square_copy(A, T)
        sign = _eliminate(M, np.empty((A.shape[0], 0), T))
        if sign == 0.0:
            raise np.linalg.LinAlgError(_SINGULAR)
        logabs = 0.0
        for k in range(A.shape[0]):
            if _real(M[k, k]) < 0.0:
                sign = -sign
            logabs = logabs + np.log(np.abs(M[k, k]))
        return sign, logabs
    return impl


@overload(np.linalg.cholesky, target="cpu")
def _ov_cholesky(A):
    T = _level(A)
    if T is None:
        return None

    def impl(A):
        # the lower triangle read, as LAPACK's potrf does, column by column
        M = _square_copy(A, T)
        n = M.shape[0]
        L = np.zeros(M.shape, T)
        for j in range(n):
            total = M[j, j]
            for k in range(j):
                total = total - L[j, k] * L[j, k]
            if _real(total) <= 0.0:
                raise np.linalg.LinAlgError("Matrix is not positive definite")
            L[j, j] = np.sqrt(total)
            for i in range(j + 1, n):
                total = M[i, j]
                for k in range(j):
                    total = total - L[i, k] * L[j, k]
                L[i, j] = total / L[j, j]
        return L
    return impl


@register_jitable
def _two_norm(x, T):
    """The 2-norm of all entries (Frobenius for a matrix); derivative 0 at zero."""
    total = 0.0
    for idx in np.ndindex(x.shape):
        total = total + x[idx] * x[idx]
    if _real(total) == 0.0:
        return total * 0.0      # the policy norm'(0) = 0, not sqrt's 1/0
    return np.sqrt(total)


@overload(np.linalg.norm, target="cpu")
def _ov_norm(x, ord=None):
    T = _level(x)
    if T is None or not isinstance(x, types.Array):
        return None
    if ord is None or isinstance(ord, (types.NoneType, types.Omitted)):
        return lambda x, ord=None: _two_norm(x, T)
    if not isinstance(ord, (types.Integer, types.Float)) or x.ndim not in (1, 2):
        raise errors.TypingError(f"duals.jit: np.linalg.norm of adjoints (compiled reverse mode) takes "
                                 f"a 1-d or 2-d array and ord=None or a number, got a {x.ndim}-d array "
                                 f"and {ord}")
    return norm_of_order(x, _two_norm, T)
