"""Weighted and NaN-ignoring statistics: ``average`` (weights plain or traced), ``nansum``,
``nanmean``, ``nanvar``, ``nanstd``, ``nanprod``, ``nanmax`` and ``nanmin``, composed from
``where`` and the reductions; ``ptp``,
``cov`` and ``corrcoef``, composed from the reductions and products (NumPy's formulas).

A NaN entry is replaced by a constant (0, 1 for ``nanprod``, -inf / +inf for ``nanmax``/``nanmin``) before
reducing, so it has derivative zero; the other entries keep theirs. ``median`` and
``percentile`` live in :mod:`duals.ops.sorting`.

>>> import duals
>>> duals.grad(lambda x: np.nansum(x * x))(np.array([1.0, np.nan, 2.0])).tolist()
[2.0, 0.0, 4.0]
"""
import warnings

import numpy as np

from ..core import Tracer
from . import export, innermost, ndim_of as ndim, normalize_axis, shape_of as shape
from . import lists_as_arrays
from .assembly import operand
from .complex_parts import conj, squared_modulus
from .elementwise import clip, sqrt, where
from .linalg import matmul
from .reductions import max as _max, mean as _mean, min as _min, prod as _prod, sum as _sum
from .reductions import refuse_out_and_integer_dtype
from .shape import broadcast_to, concatenate, diagonal, reshape, squeeze


def _plain(x):
    return np.asarray(innermost(x))


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
@lists_as_arrays
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """nansum(a, axis=None, keepdims=False): the sum with NaN entries counted as zero.

    >>> float(nansum(np.array([1.0, np.nan, 2.0])))
    3.0
    """
    refuse_out_and_integer_dtype("nansum", out, dtype)
    mask = _left_out(a, where)
    total = _sum(_where(mask, 0.0, a), axis, keepdims)
    return total if initial is None else total + initial


@export()
@lists_as_arrays
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """nanmean(a, axis=None, keepdims=False): the mean of the entries that are not NaN.

    >>> float(nanmean(np.array([1.0, np.nan, 2.0])))
    1.5
    """
    refuse_out_and_integer_dtype("nanmean", out, dtype)
    mask = _left_out(a, where)
    count = np.sum(~mask, axis=axis, keepdims=keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _sum(_where(mask, 0.0, a), axis, keepdims) / np.asarray(count, _plain(a).dtype)


@export()
@lists_as_arrays
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """nanvar(a, axis=None, ddof=0, keepdims=False): the variance of the entries that are not NaN.

    >>> float(nanvar(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    refuse_out_and_integer_dtype("nanvar", out, dtype)
    if mean is not None:
        raise NotImplementedError("numpy.nanvar with mean= has no derivative rule in duals; drop "
                                  "mean= (the mean is computed again)")
    ddof = ddof if correction is None else correction
    mask = _left_out(a, where)
    count = np.sum(~mask, axis=axis, keepdims=keepdims)
    centred = _where(mask, 0.0, a - nanmean(a, axis, keepdims=True, where=where))
    squares = squared_modulus(centred)
    dof = np.maximum(count - ddof, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _sum(squares, axis, keepdims) / np.asarray(dof, np.real(_plain(a)).dtype)


@export()
@lists_as_arrays
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """nanstd(a, axis=None, ddof=0, keepdims=False): the standard deviation of the entries that are not NaN.

    >>> float(nanstd(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


@export()
@lists_as_arrays
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """nanprod(a, axis=None, keepdims=False): the product with NaN entries counted as one.

    >>> float(nanprod(np.array([2.0, np.nan, 3.0])))
    6.0
    """
    refuse_out_and_integer_dtype("nanprod", out, dtype)
    total = _prod(_where(_left_out(a, where), 1.0, a), axis, keepdims)
    return total if initial is None else total * initial


def _nan_extreme(name, reduce, fill):
    def func(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        refuse_out_and_integer_dtype(name, out)
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


nanmax = export("nanmax")(lists_as_arrays(_nan_extreme("nanmax", _max, -np.inf)))
nanmax.__doc__ = """nanmax(a, axis=None, keepdims=False): the largest entry that is not NaN (ties split evenly).

    >>> float(nanmax(np.array([1.0, np.nan, 2.0])))
    2.0
    """
nanmin = export("nanmin")(lists_as_arrays(_nan_extreme("nanmin", _min, np.inf)))
nanmin.__doc__ = """nanmin(a, axis=None, keepdims=False): the smallest entry that is not NaN (ties split evenly).

    >>> float(nanmin(np.array([1.0, np.nan, 2.0])))
    1.0
    """


@export()
def ptp(a, axis=None, out=None, keepdims=False):
    """ptp(a, axis=None, keepdims=False): the range ``max - min`` (each extreme's derivative is
    ``max``'s and ``min``'s, ties included).

    >>> float(ptp(np.array([3.0, -1.0, 2.0])))
    4.0
    """
    if not isinstance(a, Tracer):
        return np.ptp(a, axis=axis, out=out, keepdims=keepdims)
    refuse_out_and_integer_dtype("ptp", out)
    return _max(a, axis, keepdims) - _min(a, axis, keepdims)


def _rows(v, rowvar):
    """``v`` as 2-d observations-in-columns (NumPy's ``cov``: ``ndmin=2``, transposed if not ``rowvar``)."""
    v = operand(v)
    if ndim(v) > 2:
        raise ValueError("m has more than 2 dimensions")
    if ndim(v) < 2:
        v = reshape(v, (1, -1))
    if not rowvar and shape(v)[0] != 1:
        v = v.T
    return v


@export()
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None): the covariance
    matrix, NumPy's formula; ``m``, ``y`` and ``aweights`` may be traced, ``fweights`` are counts.

    >>> round(cov(np.array([1.0, 2.0, 4.0])).item(), 12)
    2.333333333333
    """
    if not any(isinstance(v, Tracer) for v in (m, y, aweights)):
        return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    refuse_out_and_integer_dtype("cov", dtype=dtype)
    if isinstance(fweights, Tracer):
        raise TypeError("cov: fweights are integer repeat counts and have no derivative; pass them "
                        "plain, or pass real-valued weights as aweights")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    X = _rows(m, rowvar)
    if y is not None:
        X = concatenate([X, _rows(y, rowvar)], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = shape(X)[1]
    w = None
    if fweights is not None:
        w = np.asarray(fweights)
        if w.ndim > 1 or w.shape[0] != n or np.any(w < 0) or not np.all(w == np.around(w)):
            _bad_weights(X, fweights=fweights)
        w = w.astype(float)
    if aweights is not None:
        aw = operand(aweights)
        if ndim(aw) > 1 or shape(aw)[0] != n or np.any(_plain(aw) < 0):
            _bad_weights(X, aweights=_plain(aw))
        w = aw if w is None else aw * w
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact = n - ddof
    elif ddof == 0:
        fact = _first(w_sum)
    elif aweights is None:
        fact = _first(w_sum) - ddof
    else:
        fact = _first(w_sum) - ddof * _sum(w * operand(aweights)) / _first(w_sum)
    if float(np.real(_plain(fact))) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - reshape(avg, (-1, 1))
    X_w = X if w is None else X * w
    c = matmul(X, conj(X_w).T) / fact
    return squeeze(c)


def _bad_weights(X, **weights):
    """Raise NumPy's own error for weights ``cov`` cannot take (or ours, should NumPy accept them)."""
    np.cov(_plain(X), **weights)
    raise ValueError(f"cov: {', '.join(weights)} must be one non-negative weight per observation")


def _first(v):
    """The first entry of a (traced or plain) 1-d value."""
    return v[0] if ndim(v) else v


@export()
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """corrcoef(x, y=None, rowvar=True): Pearson correlation coefficients (``cov`` scaled by the
    standard deviations, real parts clipped to [-1, 1] as NumPy clips them).

    >>> round(float(corrcoef(np.array([1.0, 2.0, 4.0]), np.array([2.0, 4.0, 8.0]))[0, 1]), 12)
    1.0
    """
    if not isinstance(x, Tracer) and not isinstance(y, Tracer):
        return np.corrcoef(x, y, rowvar, dtype=dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if np.iscomplexobj(_plain(c)):
        raise TypeError("corrcoef of complex values is not supported by duals; compute cov and "
                        "scale it by the standard deviations yourself")
    if ndim(c) == 0:
        return c / c
    stddev = sqrt(diagonal(c))
    c = c / reshape(stddev, (-1, 1))
    c = c / reshape(stddev, (1, -1))
    return clip(c, -1.0, 1.0)
