"""Grids: ``meshgrid``, and ``linspace``/``logspace`` with traced end points (the samples are
``start + k * step``, NumPy's formula, so each sample's derivative is ``1 - k/div`` with respect to
``start`` and ``k/div`` with respect to ``stop``; the last one is ``stop`` itself).

>>> import duals
>>> duals.grad(lambda b: np.sum(np.linspace(0.0, b, 5)))(2.0)
2.5
"""
import numpy as np

from . import export, innermost, ndim_of as ndim, shape_of as shape
from .assembly import float_only, operand, traced
from .shape import broadcast_to, concatenate, expand_dims, getitem, moveaxis, reshape


@export()
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """meshgrid(*xi, sparse=False, indexing="xy"): coordinate arrays of the grid spanned by ``xi``.

    >>> [g.shape for g in meshgrid(np.ones(2), np.ones(3))]
    [(3, 2), (3, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xi = [operand(x) for x in xi]
    n = len(xi)
    s0 = (1,) * n
    out = [reshape(x, s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and n > 1:
        out[0] = reshape(out[0], (1, -1) + s0[2:])
        out[1] = reshape(out[1], (-1, 1) + s0[2:])
    if not sparse:
        full = np.broadcast_shapes(*[shape(o) for o in out])
        out = [broadcast_to(o, full) for o in out]
    return tuple(out)


@export()
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """linspace(start, stop, num=50, endpoint=True, retstep=False, axis=0): evenly spaced samples.

    ``start`` and ``stop`` may be traced (the samples are ``start + k * step``, NumPy's formula).

    >>> linspace(0.0, 1.0, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    if not traced(start, stop):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    float_only("linspace", dtype)
    start, stop = operand(start), operand(stop)
    dt = np.result_type(innermost(start), innermost(stop), 1.0)
    div = num - 1 if endpoint else num
    delta = stop - start
    k = np.arange(num, dtype=dt).reshape((-1,) + (1,) * ndim(delta))
    if div > 0:
        step = delta / div
        y = (k / div) * delta if np.any(np.asarray(innermost(step)) == 0) else k * step
    else:
        step = np.nan
        y = k * delta
    y = y + start
    if endpoint and num > 1:
        last = reshape(broadcast_to(stop, shape(delta)), (1,) + shape(delta))
        y = concatenate([getitem(y, (slice(0, num - 1),)), last], axis=0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return (y, step) if retstep else y


@export()
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """logspace(start, stop, num=50, endpoint=True, base=10.0): ``base ** linspace(start, stop, num)``.

    >>> logspace(0.0, 2.0, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    from .powers import power
    if not traced(start, stop, base):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    float_only("logspace", dtype)
    start, stop, base = operand(start), operand(stop), operand(base)
    nd = len(np.broadcast_shapes(shape(start), shape(stop), shape(base)))
    start, stop, base = (reshape(v, (1,) * (nd - ndim(v)) + shape(v)) for v in (start, stop, base))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return power(expand_dims(base, axis), y)
