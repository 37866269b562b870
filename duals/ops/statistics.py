"""Weighted and NaN-ignoring statistics: ``average`` (weights plain or traced), ``nansum``,
``nanmean``, ``nanmax`` and ``nanmin``, composed from ``where`` and the reductions.

A NaN entry is replaced by a constant (0, or -inf / +inf for ``nanmax``/``nanmin``) before
reducing, so it has derivative zero; the other entries keep theirs. ``median`` and
``percentile`` live in :mod:`duals.ops.sorting`.

>>> import duals
>>> duals.grad(lambda x: np.nansum(x * x))(np.array([1.0, np.nan, 2.0])).tolist()
[2.0, 0.0, 4.0]
"""
import numpy as np

from ..core import Tracer
from . import export, innermost, ndim_of as ndim, normalize_axis, shape_of as shape
from .assembly import operand
from .elementwise import where
from .reductions import max as _max, mean as _mean, min as _min, sum as _sum
from .shape import broadcast_to, reshape


def _plain(x):
    return np.asarray(innermost(x))


def _refuse(name, out=None, dtype=None):
    if out is not None:
        raise TypeError(f"{name}(..., out=...) cannot write a traced value into an array; drop out= "
                        f"and use the returned value")
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"{name}: dtype={dtype} would truncate the derivative; use a float dtype")


@export()
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """average(a, axis=None, weights=None, returned=False, keepdims=False): the (weighted) mean.

    ``weights`` may be traced; with ``returned=True`` the sum of the weights comes too.

    >>> float(average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
    1.5
    """
    if not isinstance(a, Tracer) and not isinstance(weights, Tracer):
        return np.average(a, axis, weights, returned, keepdims=keepdims)
    a = operand(a)
    if weights is None:
        avg = _mean(a, axis, keepdims)
        scl = np.asarray(np.size(innermost(a)) / max(np.size(innermost(avg)), 1), dtype=_plain(avg).dtype)
    else:
        w = operand(weights)
        if shape(a) != shape(w):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            axes = normalize_axis(axis, ndim(a))
            if shape(w) != tuple(shape(a)[k] for k in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            full = [1] * ndim(a)
            for k in axes:
                full[k] = shape(a)[k]
            w = reshape(w, tuple(full))
        scl = _sum(w, axis, keepdims)  # NumPy's: length-1 axes where the weights broadcast
        if np.any(_plain(scl) == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _sum(a * w, axis, keepdims) / scl
    if returned:
        if shape(scl) != shape(avg):
            scl = broadcast_to(scl, shape(avg))
        return avg, scl
    return avg


@export()
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """nansum(a, axis=None, keepdims=False): the sum with NaN entries counted as zero.

    >>> float(nansum(np.array([1.0, np.nan, 2.0])))
    3.0
    """
    _refuse("nansum", out, dtype)
    mask = _left_out(a, where)
    total = _sum(_where(mask, 0.0, a), axis, keepdims)
    return total if initial is None else total + initial


@export()
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """nanmean(a, axis=None, keepdims=False): the mean of the entries that are not NaN.

    >>> float(nanmean(np.array([1.0, np.nan, 2.0])))
    1.5
    """
    _refuse("nanmean", out, dtype)
    mask = _left_out(a, where)
    count = np.sum(~mask, axis=axis, keepdims=keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _sum(_where(mask, 0.0, a), axis, keepdims) / np.asarray(count, _plain(a).dtype)


def _nan_extreme(name, reduce, fill):
    def func(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _refuse(name, out)
        if initial is not None or (where is not None and where is not True):
            raise NotImplementedError(f"numpy.{name} with initial= or where= has no derivative rule "
                                      f"in duals; select the entries with np.where first")
        v = _plain(a)
        mask = np.isnan(v)
        if not mask.any():
            return reduce(a, axis, keepdims)
        out = reduce(_where(mask, np.asarray(fill, v.dtype), a), axis, keepdims)
        empty = np.all(mask, axis=axis, keepdims=keepdims)
        return _where(empty, np.asarray(np.nan, v.dtype), out) if empty.any() else out
    func.__name__ = func.__qualname__ = name
    return func


def _left_out(a, where):
    """The entries a nan-reduction skips: the NaNs of ``a``, and those ``where=`` leaves out."""
    mask = np.isnan(_plain(a))
    if where is not None and where is not True:
        mask = mask | ~np.asarray(where, bool)
    return mask


def _where(mask, value, x):
    return where(mask, value, x) if np.any(mask) else x


nanmax = export("nanmax")(_nan_extreme("nanmax", _max, -np.inf))
nanmax.__doc__ = """nanmax(a, axis=None, keepdims=False): the largest entry that is not NaN (ties split evenly).

    >>> float(nanmax(np.array([1.0, np.nan, 2.0])))
    2.0
    """
nanmin = export("nanmin")(_nan_extreme("nanmin", _min, np.inf))
nanmin.__doc__ = """nanmin(a, axis=None, keepdims=False): the smallest entry that is not NaN (ties split evenly).

    >>> float(nanmin(np.array([1.0, np.nan, 2.0])))
    1.0
    """
