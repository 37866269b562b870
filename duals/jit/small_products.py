"""Small matrix products of first-order dual arrays in @njit code (``x @ y`` of 3-vectors, a 3x3
rotation times a vector): the lanes from the entries' dual products summed in registers, the
value from ``np.dot`` of the real parts, as larger products (:mod:`.linalg`) compute it.

Below ``SMALL_PRODUCT`` multiply-adds, splitting the operands into real parts and lane arrays and
calling BLAS for the lanes costs more than the products themselves.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.dot(x, x)))(np.array([1.0, 2.0, 3.0])).tolist()
[2.0, 4.0, 6.0]
"""
import numpy as np

from .._overloads import overload, register_jitable
from ._types import make
from .parts import is_dual_array

__all__ = ["SMALL_PRODUCT", "is_small", "small_product", "small_inner", "real_parts"]

# m·k·n at most (a 3-vector dot through lane arrays and BLAS cost ~20x the plain call, by scalar
# dual arithmetic ~5x)
SMALL_PRODUCT = 512


@register_jitable
def is_small(a, b):
    return 0 < a.shape[1] == b.shape[0] and a.shape[0] * a.shape[1] * b.shape[1] <= SMALL_PRODUCT


def small_product(a, b, c, T):
    """The product of two small matrices, one of them first-order duals of type ``T``, whose
    value ``c`` the caller computed as larger products do (``np.dot`` of the real parts, of the
    operands' own shapes); the lanes from the entries' dual products summed in registers."""


@overload(small_product)
def _ov_small_product(a, b, c, T):
    def impl(a, b, c, T):
        out = np.empty(c.shape, T)
        for i in range(c.shape[0]):
            for j in range(c.shape[1]):
                total = a[i, 0] * b[0, j]
                for k in range(1, a.shape[1]):
                    total = total + a[i, k] * b[k, j]
                out[i, j] = make(c[i, j], total._du)
        return out
    return impl


@register_jitable
def small_inner(a, b):
    """The inner product of two short vectors, one of them first-order duals: the value from
    ``np.dot`` of the real parts (ddot, as the plain call), the lanes from the dual products."""
    total = a[0] * b[0]
    for k in range(1, a.shape[0]):
        total = total + a[k] * b[k]
    return make(np.dot(real_parts(a), real_parts(b)), total._du)


def real_parts(a):
    """A C-contiguous float array of the real parts of a 1-d or 2-d array of first-order duals,
    or of a float array."""


@overload(real_parts)
def _ov_real_parts(a):
    if not is_dual_array(a):
        return lambda a: np.ascontiguousarray(a)
    base = a.dtype.base
    if a.ndim == 1:
        def vector(a):
            out = np.empty(a.shape, base)
            for i in range(a.shape[0]):
                out[i] = a[i]._re
            return out
        return vector

    def impl(a):
        out = np.empty(a.shape, base)
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[i, j] = a[i, j]._re
        return out
    return impl
