"""Discrete calculus: ``diff`` (with ``n``, ``prepend``/``append``), ``cumprod`` and trapezoidal
integration (``trapezoid``, and ``trapz`` where NumPy still has it).

All are composed from ``getitem``, ``concatenate``, ``sum`` and multiplication, so every
derivative is exact, zeros included: ``cumprod`` is a prefix product by doubling (``log2 n``
rounds of ``y * shifted(y)``), exact where an entry is zero, where a quotient ``cumprod / x``
would divide by it.

>>> import duals
>>> duals.grad(lambda x: np.trapezoid(x ** 2))(np.array([0.0, 1.0, 2.0])).tolist()
[0.0, 2.0, 2.0]
"""
import numpy as np

from ..core import Tracer
from . import export, innermost, ndim_of as ndim, normalize_axis, shape_of as shape
from .reductions import sum as _sum
from .assembly import operand
from .shape import broadcast_to, concatenate, getitem, reshape

_ABSENT = object()


def _along(axis, nd, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (nd - axis - 1)


@export()
def diff(a, n=1, axis=-1, prepend=_ABSENT, append=_ABSENT):
    """diff(a, n=1, axis=-1, prepend=, append=): the ``n``-th forward difference along ``axis``.

    >>> diff(np.array([1.0, 4.0, 9.0])).tolist()
    [3.0, 5.0]
    """
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = operand(a)
    nd = ndim(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, nd)[0]
    parts = []
    for extra in (prepend, append):
        if extra is _ABSENT:
            parts.append(None)
            continue
        if ndim(extra) == 0:
            s = list(shape(a))
            s[axis] = 1
            extra = broadcast_to(extra, tuple(s))
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        a = getitem(a, _along(axis, nd, slice(1, None))) - getitem(a, _along(axis, nd, slice(None, -1)))
    return a


@export()
def cumprod(a, axis=None, dtype=None, out=None):
    """cumprod(a, axis=None): running products along ``axis`` (flattened when ``None``).

    >>> cumprod(np.array([1.0, 2.0, 3.0, 4.0])).tolist()
    [1.0, 2.0, 6.0, 24.0]
    """
    if out is not None:
        raise TypeError("cumprod(..., out=...) cannot write a traced value into an array; drop out=")
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise TypeError(f"cumprod: dtype={dtype} would truncate the derivative; use a float dtype")
    if not isinstance(a, Tracer):
        return np.cumprod(a, axis=axis, dtype=dtype)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    nd = ndim(a)
    axis = normalize_axis(axis, nd)[0]
    n = shape(a)[axis]
    v = np.asarray(innermost(a))
    dtype = v.dtype if v.dtype.kind == "f" else np.float64
    step = 1
    while step < n:
        ones = np.ones(shape(a)[:axis] + (step,) + shape(a)[axis + 1:], dtype=dtype)
        shifted = concatenate([ones, getitem(a, _along(axis, nd, slice(0, n - step)))], axis=axis)
        a = a * shifted
        step *= 2
    return a


@export()
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """trapezoid(y, x=None, dx=1.0, axis=-1): the integral of samples ``y`` by the trapezoidal rule.

    ``y``, ``x`` and ``dx`` may all be traced (moving sample points have a derivative too).

    >>> float(trapezoid(np.array([0.0, 1.0, 2.0]), dx=0.5))
    1.0
    """
    y = operand(y)
    nd = ndim(y)
    axis = normalize_axis(axis, nd)[0]
    if x is None:
        d = dx
    elif ndim(operand(x)) == 1:
        d = diff(x)
        s = [1] * nd
        s[axis] = shape(d)[0]
        d = reshape(d, tuple(s))
    else:
        d = diff(x, axis=axis)
    upper = getitem(y, _along(axis, nd, slice(1, None)))
    lower = getitem(y, _along(axis, nd, slice(None, -1)))
    return _sum(d * (upper + lower) / 2.0, axis)


if hasattr(np, "trapz"):  # removed in NumPy 2.4; same rule where it exists
    export("trapz")(trapezoid)
