"""NaN-ignoring order statistics: ``nanmedian``, ``nanquantile`` and ``nanpercentile``.

Each slice is sorted (NaN last, NumPy's order) and read at positions that depend on how many
of its entries are not NaN, so every slice gets its own pair of neighbouring order statistics
and the method's weight between them: the derivative of each result is that of
``median``/``quantile`` of the slice's numbers alone (a NaN entry has derivative zero). A
slice of NaN only gives NaN and NumPy's ``RuntimeWarning``.

>>> import duals
>>> duals.grad(lambda x: np.nanmedian(x * x))(np.array([1.0, np.nan, 3.0, 2.0])).tolist()
[0.0, 0.0, 0.0, 4.0]
"""
import warnings

import numpy as np

from ..core import Tracer
from . import export, ndim_of as ndim, shape_of as shape
from .assembly import operand, take_along_axis
from .elementwise import where
from .shape import moveaxis, reshape
from .quantile_methods import fractions, interpolate, positions as positions_of_method
from .sorting import (_float_dtype, _keep_dims, _method_of, _no_out, _no_weights, _plain, _to_last,
                      fraction_of_percent, plain_weights, sort)


def _counts(y):
    """The number of entries of each slice of ``y`` (last axis) that are not NaN, and the sorted
    ``y`` whose NaN entries are constants (so no derivative reaches them, not even ``0 · NaN``)."""
    nan = np.isnan(_plain(y))
    counts = np.count_nonzero(~nan, axis=-1)
    if np.any(counts == 0):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
    return counts, sort(where(nan, np.asarray(np.nan, _plain(y).dtype), y) if nan.any() else y, axis=-1)


def _at(ordered, index, lead):
    """``ordered[..., index]`` slice by slice: ``index`` has shape ``lead + kept``, the result too."""
    moved = np.moveaxis(index, tuple(range(len(lead))), tuple(range(-len(lead), 0))) if lead else index
    picked = take_along_axis(ordered, moved.reshape(moved.shape[:ndim(ordered) - 1] + (-1,)), -1)
    picked = reshape(picked, shape(picked)[:-1] + lead)
    return moveaxis(picked, tuple(range(-len(lead), 0)), tuple(range(len(lead)))) if lead else picked


def _nan_quantile(a, q, axis, keepdims, method, weak):
    q_plain = fractions(q)
    a = operand(a)
    y, kept, n, axes = _to_last(a, axis)
    dtype = _float_dtype(a)
    counts, ordered = _counts(y)
    qs = q_plain.shape
    q_full = q_plain.reshape(qs + (1,) * len(kept))
    q_traced = reshape(q, qs + (1,) * len(kept)) if isinstance(q, Tracer) else None
    lo, hi, t = positions_of_method(method, counts, q_full, q_traced)   # per slice
    out = interpolate(_at(ordered, lo, qs), _at(ordered, hi, qs), t, weak, dtype)
    out = where(counts == 0, np.asarray(np.nan, dtype), out)
    return _keep_dims(out, qs, shape(a), axes) if keepdims else out


@export()
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """nanquantile(a, q, axis=None, keepdims=False): ``quantile`` of each slice's entries that are
    not NaN (any of NumPy's methods; ``q`` may be traced).

    >>> float(nanquantile(np.array([1.0, np.nan, 2.0, 3.0, 4.0]), 0.5))
    2.5
    """
    _no_out("nanquantile", out)
    method = _method_of(method, interpolation)
    if not isinstance(a, Tracer) and not isinstance(q, Tracer):
        return np.nanquantile(a, q, axis=axis, method=method, keepdims=keepdims,
                              weights=plain_weights(weights))
    _no_weights("nanquantile", weights)
    return _nan_quantile(a, q, axis, keepdims, method, type(q) in (int, float))


@export()
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """nanpercentile(a, q, axis=None, keepdims=False): ``nanquantile`` at ``q / 100``.

    >>> float(nanpercentile(np.array([1.0, np.nan, 2.0, 3.0, 4.0]), 25))
    1.75
    """
    _no_out("nanpercentile", out)
    method = _method_of(method, interpolation)
    if not isinstance(a, Tracer) and not isinstance(q, Tracer):
        return np.nanpercentile(a, q, axis=axis, method=method, keepdims=keepdims,
                                weights=plain_weights(weights))
    _no_weights("nanpercentile", weights)
    return _nan_quantile(a, fraction_of_percent(q), axis, keepdims, method, type(q) in (int, float))


@export()
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """nanmedian(a, axis=None, keepdims=False): ``median`` of each slice's entries that are not NaN.

    >>> float(nanmedian(np.array([4.0, np.nan, 1.0, 3.0, 2.0])))
    2.5
    """
    _no_out("nanmedian", out)
    if not isinstance(a, Tracer):
        return np.nanmedian(a, axis=axis, keepdims=keepdims)
    y, kept, n, axes = _to_last(a, axis)
    counts, ordered = _counts(y)
    upper = counts // 2                                          # 0 for an all-NaN slice too
    lower = np.where(counts % 2, upper, np.maximum(upper - 1, 0))
    middle = (_at(ordered, lower, ()) + _at(ordered, upper, ())) / 2.0   # an odd count: the entry itself
    out = where(counts == 0, np.asarray(np.nan, _float_dtype(a)), middle)
    return _keep_dims(out, (), shape(a), axes) if keepdims else out
