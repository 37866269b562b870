"""Products and polynomials: ``cross``, ``kron``, ``convolve`` and ``polyval``, composed from
multiplication, ``matmul`` and the shape primitives (so they are bilinear, or polynomial, in the
traced values, with exact derivatives of every order).

>>> import duals
>>> duals.grad(lambda c: np.polyval(c, 2.0))(np.array([1.0, 0.0, 0.0])).tolist()
[4.0, 2.0, 1.0]
"""
import warnings

import numpy as np

from ..core import Tracer
from . import export, innermost, ndim_of as ndim, shape_of as shape
from .assembly import interleave, operand
from .shape import broadcast_to, concatenate, getitem, moveaxis, reshape, stack


def _traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


@export()
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None): the cross product of 3-vectors (or 2-vectors).

    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    if not _traced(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(operand(a), axisa, -1)
    b = moveaxis(operand(b), axisb, -1)
    na, nb = shape(a)[-1], shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)", DeprecationWarning,
                      stacklevel=3)
    A = [getitem(a, (Ellipsis, k)) for k in range(na)] + [None] * (3 - na)
    B = [getitem(b, (Ellipsis, k)) for k in range(nb)] + [None] * (3 - nb)

    def term(i, j):
        return None if A[i] is None or B[j] is None else A[i] * B[j]

    def minus(p, q):
        return p - q if p is not None and q is not None else p if q is None else -q

    c2 = minus(term(0, 1), term(1, 0))
    if na == 2 and nb == 2:
        return c2
    parts = [minus(term(1, 2), term(2, 1)), minus(term(2, 0), term(0, 2)), c2]
    full = np.broadcast_shapes(*[shape(p) for p in parts])
    c = stack([broadcast_to(p, full) for p in parts], axis=-1)
    return moveaxis(c, -1, axisc)


@export()
def kron(a, b):
    """kron(a, b): the Kronecker product, blocks ``a[i, j] * b``.

    >>> kron(np.eye(2), np.ones((1, 2))).tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    """
    if not _traced(a, b):
        return np.kron(a, b)
    a, b = operand(a), operand(b)
    d = max(ndim(a), ndim(b))
    sa = (1,) * (d - ndim(a)) + shape(a)
    sb = (1,) * (d - ndim(b)) + shape(b)
    blocks = reshape(a, interleave(sa, (1,) * d)) * reshape(b, interleave((1,) * d, sb))
    return reshape(blocks, tuple(m * n for m, n in zip(sa, sb)))


@export()
def convolve(a, v, mode="full"):
    """convolve(a, v, mode="full"): the discrete linear convolution of two 1-D sequences.

    One matrix-vector product: the sliding windows of the zero-padded longer sequence times the
    shorter one. Modes ``full``, ``same`` and ``valid`` as in NumPy.

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    if not _traced(a, v):
        return np.convolve(a, v, mode)
    from .linalg import matmul
    a = reshape(operand(a), (-1,)) if ndim(a) != 1 else operand(a)
    v = reshape(operand(v), (-1,)) if ndim(v) != 1 else operand(v)
    if shape(v)[0] > shape(a)[0]:
        a, v = v, a
    n, m = shape(a)[0], shape(v)[0]
    if m == 0:
        raise ValueError("v cannot be empty" if n else "a cannot be empty")
    dtype = np.result_type(innermost(a), innermost(v), 1.0)
    zeros = np.zeros(m - 1, dtype)
    padded = concatenate([zeros, a, zeros]) if m > 1 else a
    length = n + m - 1
    windows = getitem(padded, (np.arange(length)[:, None] - np.arange(m)[None, :] + (m - 1),))
    full = matmul(windows, v)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return getitem(full, (slice(start, start + n),))
    if mode == "valid":
        return getitem(full, (slice(m - 1, n),))
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


@export()
def polyval(p, x):
    """polyval(p, x): the polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule.

    Coefficients and points may both be traced.

    >>> float(polyval([1.0, 0.0, -1.0], 3.0))
    8.0
    """
    if isinstance(p, Tracer):
        coeffs = [getitem(p, k) for k in range(shape(p)[0])]
    elif isinstance(p, (list, tuple)):
        coeffs = list(p)
    else:
        coeffs = list(np.asarray(p))
    if not coeffs or not (_traced(x, *coeffs)):
        return np.polyval(p if not coeffs else np.asarray([innermost(c) for c in coeffs]), x)
    x = operand(x)
    y = coeffs[0]
    for c in coeffs[1:]:
        y = y * x + c
    if len(coeffs) == 1:
        y = y + 0.0 * x  # the polynomial's shape is that of x (NumPy's)
    return y
