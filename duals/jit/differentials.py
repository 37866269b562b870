"""Differentials: the arithmetic that compiled reverse mode's decompositions record.

A *differential* is an adjoint (:mod:`duals.jit.adjoint`) whose tape node is what counts; its
real part is 0 and unused. It stands for the change of an intermediate matrix, linear in the
changes of the inputs, as a tangent lane does in forward mode. A rule of
:mod:`.adjoint_decompositions` takes its value from LAPACK on the real parts (:func:`_values`),
builds the derivative as differentials with the factors as constant coefficients (products
:func:`_left`, :func:`_right`: one node per term ``t + c·x``, half the nodes of adjoint
arithmetic, which records the product and the sum apart) and gives each output the LAPACK value
as its real part with the last differential's node (:func:`_attach`). The constants are floats,
or duals for forward over reverse: then every coefficient carries its own derivative, and the
second order comes out of the same code.

>>> import numba, numpy as np, duals
>>> f = numba.njit(lambda a: np.sum(np.linalg.pinv(a)))
>>> duals.grad(f)(np.diag([2.0, 4.0])).tolist()
[[-0.25, -0.125], [-0.125, -0.0625]]
"""
import numpy as np

from .._overloads import overload, register_jitable
from ._types import make
from .adjoint_arrays import _level
from .lanes import laxpy, lscale

__all__ = []


def _values(x):
    """_values(x) -> the real parts of an adjoint array (floats, or duals for forward over
    reverse), a C-contiguous copy; any other array as it is (a constant)."""


@overload(_values)
def _ov_values(x):
    if _level(x) is None:
        return lambda x: x
    base = x.dtype.base

    def impl(x):
        out = np.empty(x.shape, base)
        for idx in np.ndindex(x.shape):
            out[idx] = x[idx]._re
        return out
    return impl


@register_jitable
def _step(t, c, x):
    """_step(t, c, x) -> the differential ``t + c · x``, one node."""
    return make(0.0, laxpy(t._du, 1.0, x._du, c))


@register_jitable
def _pair(c1, x1, c2, x2):
    """_pair(c1, x1, c2, x2) -> the differential ``c1 · x1 + c2 · x2``, one node."""
    return make(0.0, laxpy(x1._du, c1, x2._du, c2))


@register_jitable
def _scaled(c, x):
    """_scaled(c, x) -> the differential ``c · x``, one node."""
    return make(0.0, lscale(x._du, c))


@register_jitable
def _zeros(rows, cols, like):
    """Differentials 0 (no node) of shape ``(rows, cols)``, of ``like``'s type."""
    return np.zeros((rows, cols), like.dtype)


@register_jitable
def _left(C, dX, out):
    """``out += C dX`` (constants ``C``, differentials ``dX``): one node per term."""
    for i in range(C.shape[0]):
        for j in range(dX.shape[1]):
            t = out[i, j]
            for k in range(C.shape[1]):
                t = _step(t, C[i, k], dX[k, j])
            out[i, j] = t
    return out


@register_jitable
def _right(dX, C, out):
    """``out += dX C`` (differentials ``dX``, constants ``C``): one node per term."""
    for i in range(dX.shape[0]):
        for j in range(C.shape[1]):
            t = out[i, j]
            for k in range(dX.shape[1]):
                t = _step(t, C[k, j], dX[i, k])
            out[i, j] = t
    return out


@register_jitable
def _attach(value, d):
    """The adjoint array with real parts ``value`` and the nodes of the differentials ``d``."""
    out = np.empty(value.shape, d.dtype)
    for idx in np.ndindex(value.shape):
        out[idx] = make(value[idx], d[idx]._du)
    return out


@register_jitable
def _diagonal(d):
    out = np.empty(min(d.shape[0], d.shape[1]), d.dtype)
    for i in range(out.shape[0]):
        out[i] = d[i, i]
    return out


@register_jitable
def _contiguous(x):
    return np.ascontiguousarray(x)


@register_jitable
def _identity_minus(M):
    """``I − M`` of a square constant matrix (floats or duals)."""
    out = np.empty_like(M)
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[i, j] = (1.0 if i == j else 0.0) - M[i, j]
    return out


@register_jitable
def _negated(M):
    """``−M`` of a constant matrix (floats or duals)."""
    out = np.empty_like(M)
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[i, j] = -M[i, j]
    return out


@register_jitable
def _minus(B, M):
    """``B − M`` of two constant matrices of one shape (``M``'s type: floats or duals)."""
    out = np.empty(M.shape, M.dtype)
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[i, j] = B[i, j] - M[i, j]
    return out


def _any_adjoint(a, b):
    """Whichever of ``a``, ``b`` is an adjoint array (its type gives the differentials')."""


@overload(_any_adjoint)
def _ov_any_adjoint(a, b):
    if _level(a) is not None:
        return lambda a, b: a
    return lambda a, b: b


def _copy_rhs(b, rhs):
    """Copy the differentials of a right-hand side (1-d or 2-d) into ``rhs`` (none for floats)."""


@overload(_copy_rhs)
def _ov_copy_rhs(b, rhs):
    if _level(b) is None:
        return lambda b, rhs: None
    if b.ndim == 1:
        def vector(b, rhs):
            for i in range(b.shape[0]):
                rhs[i, 0] = b[i]
        return vector

    def matrix(b, rhs):
        for i in range(b.shape[0]):
            for c in range(b.shape[1]):
                rhs[i, c] = b[i, c]
    return matrix
