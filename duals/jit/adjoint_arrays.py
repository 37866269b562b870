"""Whole-array functions on adjoint arrays (compiled reverse mode) that forward mode runs on lanes.

Compiled forward mode computes ``np.where``, products (``@``, ``np.dot``, ``np.matmul``) and
``np.linalg.cholesky``/``norm`` of dual arrays by BLAS and LAPACK calls on the real parts with
the tangent lanes as extra columns (:mod:`duals.jit.linalg`). Adjoints have no lanes: here the
same functions are written with loops and scalar operations, which the tape records (a product
of ``m × k`` by ``k × n`` records ``2 m k n`` operations; ``cholesky`` is the column-by-column
factorisation on adjoints, ``n³ / 3`` operations, reading the lower triangle as LAPACK does). Exact, and meant for the small matrices of
simulation code; for large dense linear algebra use forward mode (``duals.jacfwd``).
``solve``, ``inv``, ``det`` and ``slogdet`` of adjoints are in :mod:`.adjoint_solves`, the
decompositions (``eigh``, ``eigvalsh``, ``svd``, ``qr``, ``pinv``, ``lstsq``) in
:mod:`.adjoint_decompositions`.

>>> import numba, numpy as np, duals
>>> f = numba.njit(lambda a: np.sum(np.linalg.cholesky(a)))
>>> duals.grad(f)(np.diag([4.0, 9.0])).round(12).tolist()
[[0.25, 0.0], [0.5, 0.166666666667]]
"""
import operator

import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from ._types import DualType
from .complex_types import ComplexDualType
from .extras import _real
from .linalg import norm_of_order, refuse_string_order

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

def _square_copy(A, T):
    """A copy of square ``A`` as a new array of adjoints ``T``, of any layout."""


@overload(_square_copy)
def _ov_square_copy(A, T):
    element = T.instance_type

    def impl(A, T):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        M = np.empty(A.shape, element)
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                M[i, j] = A[i, j]
        return M
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
    refuse_string_order(x, ord)
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
