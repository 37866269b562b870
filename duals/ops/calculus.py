"""Discrete calculus: ``diff`` (with ``n``, ``prepend``/``append``), ``gradient`` (central
differences, one-sided at the edges), ``cumprod`` and trapezoidal integration (``trapezoid``, and
``trapz`` where NumPy still has it).

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



def _spacing(h, n, who):
    """A scalar step, or (for coordinates) the steps between them; uniform coordinates -> a scalar."""
    h = operand(h)
    if ndim(h) == 0:
        return h, True
    if ndim(h) != 1:
        raise ValueError(f"{who}: distances must be either scalars or 1d")
    if shape(h)[0] != n:
        raise ValueError(f"{who}: when 1d, distances must match the length of the corresponding dimension")
    steps = diff(h)
    plain = np.asarray(innermost(steps))
    if not isinstance(steps, Tracer) and np.all(plain == plain[0]):
        return steps[0], True
    return steps, False


def _one_axis(f, h, uniform, axis, nd, edge_order):
    def at(index):
        return getitem(f, _along(axis, nd, index))

    def column(x):   # coefficients along the axis, broadcast against the other axes
        s = [1] * nd
        s[axis] = shape(x)[0]
        return reshape(x, tuple(s))

    if uniform:
        interior = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * h)
        if edge_order == 1:
            first = (at(slice(1, 2)) - at(slice(0, 1))) / h
            last = (at(slice(-1, None)) - at(slice(-2, -1))) / h
        else:
            first = (-1.5 * at(slice(0, 1)) + 2.0 * at(slice(1, 2)) - 0.5 * at(slice(2, 3))) / h
            last = (0.5 * at(slice(-3, -2)) - 2.0 * at(slice(-2, -1)) + 1.5 * at(slice(-1, None))) / h
        return concatenate([first, interior, last], axis=axis)
    d1, d2 = column(getitem(h, slice(None, -1))), column(getitem(h, slice(1, None)))
    interior = (-d2 / (d1 * (d1 + d2)) * at(slice(None, -2)) + (d2 - d1) / (d1 * d2) * at(slice(1, -1))
                + d1 / (d2 * (d1 + d2)) * at(slice(2, None)))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / getitem(h, slice(0, 1))
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / getitem(h, slice(-1, None))
    else:
        a, b = getitem(h, slice(0, 1)), getitem(h, slice(1, 2))
        first = (-(2.0 * a + b) / (a * (a + b)) * at(slice(0, 1)) + (a + b) / (a * b) * at(slice(1, 2))
                 - a / (b * (a + b)) * at(slice(2, 3)))
        a, b = getitem(h, slice(-2, -1)), getitem(h, slice(-1, None))
        last = (b / (a * (a + b)) * at(slice(-3, -2)) - (a + b) / (a * b) * at(slice(-2, -1))
                + (2.0 * b + a) / (b * (a + b)) * at(slice(-1, None)))
    return concatenate([first, interior, last], axis=axis)


@export()
def gradient(f, *varargs, axis=None, edge_order=1):
    """gradient(f, *varargs, axis=None, edge_order=1): NumPy's finite-difference gradient.

    Second-order central differences inside, first- or second-order one-sided differences at
    the edges; the spacing is 1, one scalar, one scalar per axis or coordinate arrays (uniform
    or not), any of them traced. One array for one axis, else a tuple of arrays, as NumPy.

    >>> gradient(np.array([1.0, 4.0, 9.0, 16.0])).tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    if not isinstance(f, Tracer) and not any(isinstance(v, Tracer) for v in varargs):
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = operand(f)
    nd = ndim(f)
    axes = tuple(range(nd)) if axis is None else tuple(
        normalize_axis(a, nd)[0] for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis}")
    if not varargs:
        varargs = (1.0,) * len(axes)
    elif len(varargs) == 1 and ndim(operand(varargs[0])) == 0:
        varargs = varargs * len(axes)
    elif len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported" if edge_order > 2 else
                         "edge_order must be 1 or 2")
    out = []
    for ax, h in zip(axes, varargs):
        if shape(f)[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        step, uniform = _spacing(h, shape(f)[ax], "gradient")
        out.append(_one_axis(f, step, uniform, ax, nd, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


if hasattr(np, "trapz"):  # removed in NumPy 2.4; same rule where it exists
    export("trapz")(trapezoid)
