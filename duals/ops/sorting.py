"""Sorting and order statistics: ``sort``, ``unique``, ``median``, ``percentile``/``quantile`` and ``interp``,
composed from ``getitem`` (a gather by indices computed on the plain value), with the
value-only ``argsort`` and ``searchsorted``.

The indices come from NumPy on the value (``np.argsort(..., kind="stable")``,
``np.searchsorted``) and are constants of the computation, so each derivative is that of the
entries gathered: sort, median and percentile are piecewise linear, with derivative 1 (or the
interpolation weights) on the entries they pick, and 0 elsewhere.

Policy at ties (the same in every mode and order, tested): the derivative follows NumPy's
*stable* ordering. ``sort`` passes to output position ``k`` the derivative of the entry that
``np.argsort(x, kind="stable")`` puts there, so among equal entries the one earlier in ``x``
comes first; ``median``, ``percentile`` and ``quantile`` read the same sorted entries, so at a tie
the derivative goes to one of the tied entries, not split between them (unlike ``max``/``min``,
which split it evenly). NaN sorts last, as in NumPy; ``median`` and ``percentile`` of a slice with
a NaN are NaN. ``unique`` passes to each distinct value the derivative of its first occurrence
(NumPy's ``return_index``), the same stable choice; its index, inverse and count outputs are plain.

``interp(x, xp, fp)`` takes traced ``x``, ``xp`` and/or ``fp`` (plain ``xp`` with ``period``). Its
derivative with respect to ``x`` is the slope of the segment ``x`` lies in; at a knot ``xp[j]`` that
of the segment to its right (at the last knot, the segment to its left; none at a repeated last
knot, whose value is ``fp[-1]``), and outside ``[xp[0], xp[-1]]`` zero (the value is
``left``/``right``).

>>> import duals
>>> duals.grad(lambda x: np.median(x))(np.array([3.0, 1.0, 2.0])).tolist()
[0.0, 0.0, 1.0]
"""
import math

import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import _ranges, collect, gather_rule, positions, take
from . import dtype_of, export, innermost, ndim_of as ndim, normalize_axis, shape_of as shape
from .assembly import operand, take as take_entries, take_along_axis
from .elementwise import where
from .quantile_methods import fractions, interpolate, positions as positions_of_method
from .shape import concatenate, getitem, moveaxis, reshape, transpose


def _plain(x):
    return np.asarray(innermost(x))


def _traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


def _float_dtype(x):
    d = np.dtype(dtype_of(x))
    return d if d.kind == "f" else np.dtype(np.float64)


def _stable(stable):
    """NumPy's ``stable=`` keyword only when given (NumPy 1.x has none)."""
    return {} if stable is None else {"stable": stable}


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}(..., out=...) cannot write a traced value into an array; drop out= "
                        f"and use the returned value")

# ---------------------------------------------------------------- sort and the value-only queries


class Permutation:
    """A plain reordering along one axis (counted from the right): the gather by ``order`` (what
    NumPy's ``take_along_axis`` does) or, ``inverse=True``, the scatter to ``order`` that undoes it."""

    __slots__ = ("order", "axis", "inverse")

    def __init__(self, order, axis, inverse=False):
        self.order, self.axis, self.inverse = order, axis, inverse

    def inverted(self):
        return Permutation(self.order, self.axis, not self.inverse)

    def apply(self, x):
        """``x`` (lane axes in front allowed) reordered along the axis."""
        order = self.order
        lead = x.ndim - order.ndim
        if order.ndim == 1:
            index = (Ellipsis, order) + (slice(None),) * (-self.axis - 1)
            if not self.inverse:
                return x[index]
            out = np.empty_like(x)
            out[index] = x
            return out
        order = order.reshape((1,) * lead + order.shape) if lead else order
        if not self.inverse:
            return np.take_along_axis(x, order, self.axis)
        out = np.empty_like(x)
        np.put_along_axis(out, order, x, self.axis)
        return out


def _permute_impl(x, *, perm):
    return perm.apply(x)


# entries reordered by a plain Permutation (axis counted from the right); its transpose is the
# inverse permutation, so the primitive is closed under differentiation
permute_p = Primitive("permute", _permute_impl)
permute_p.def_jvp(0, lambda t, out, x, *, perm: permute_p(t, perm=perm))
permute_p.def_vjp(0, lambda g, out, x, *, perm: permute_p(g, perm=perm.inverted()))
permute_p.def_sparsity(gather_rule(_permute_impl))
permute_p.unreached = lambda i, mask, out, x, *, perm: (
    None if mask is None else perm.inverted().apply(np.broadcast_to(mask, shape(out))))


def _sort_impl(x, *, axis):
    return np.sort(x, axis=axis)


sort_p = Primitive("sort", _sort_impl)


def _tied(s, axis):
    """Whether sorted entries ``s`` hold a tie along ``axis`` (equal neighbours, or two NaNs,
    which sort last and compare unequal)."""
    n = s.shape[axis]
    first, rest = (s[(slice(None),) * axis + (k,)] for k in (slice(0, n - 1), slice(1, n)))
    return bool(np.any(first == rest) or np.any(np.isnan(first) & np.isnan(rest)))


def _sorting_permutation(out, x, axis):
    """The Permutation of NumPy's stable sort of the plain ``x`` along ``axis``: from the faster
    default sort when the sorted entries ``out`` have no ties (the permutation is then unique)."""
    v = _plain(x)
    order = np.argsort(v, axis=axis, kind="stable" if _tied(_plain(out), axis) else None)
    return Permutation(order, axis - v.ndim)


def _sort_fused_jvp(primals, tangents, *, axis):
    """One default argsort for the value and the tangent, where no entries tie (the sorted
    entries are then NumPy's sort bit for bit); at a tie, decline (the rules use the stable sort)."""
    x, t = np.asarray(primals[0]), tangents[0]
    perm = Permutation(np.argsort(x, axis=axis), axis - x.ndim)
    out = perm.apply(x)
    if _tied(out, axis):
        return None
    return out, perm.apply(t)


def _sort_jvp(t, out, x, *, axis):
    return permute_p(t, perm=_sorting_permutation(out, x, axis))


def _sort_vjp(g, out, x, *, axis):
    return permute_p(g, perm=_sorting_permutation(out, x, axis).inverted())


sort_p.def_jvp(0, _sort_jvp)
sort_p.def_vjp(0, _sort_vjp)
sort_p.unreached = lambda i, mask, out, x, *, axis: (
    None if mask is None
    else _sorting_permutation(out, x, axis).inverted().apply(np.broadcast_to(mask, shape(out))))
sort_p.fused_jvp = _sort_fused_jvp


def _sort_sparsity(sets, out, x, *, axis):
    """Sorted entry ``k`` is the entry the sort puts there at this point; tied entries (which the
    derivative may take in either order) are all depended on by each of their places."""
    v = _plain(x)
    axis = axis % v.ndim
    order = np.argsort(v, axis=axis, kind="stable")
    source = np.moveaxis(np.take_along_axis(positions(v.shape), order, axis), axis, -1)
    ordered = np.moveaxis(np.take_along_axis(v, order, axis), axis, -1)
    same = (ordered[..., 1:] == ordered[..., :-1]) | (np.isnan(ordered[..., 1:]) & np.isnan(ordered[..., :-1]))
    if not same.any():
        result = take(sets[0], np.moveaxis(source, -1, axis))
    else:
        starts = np.concatenate([np.ones(same.shape[:-1] + (1,), dtype=bool), ~same], axis=-1).reshape(-1)
        group = np.cumsum(starts) - 1
        first = np.flatnonzero(starts)
        sizes = np.diff(np.append(first, starts.size))
        lengths = sizes[group]
        places = np.moveaxis(positions(np.shape(_plain(out))), axis, -1).reshape(-1)
        tied = source.reshape(-1)[_ranges(first[group], lengths, int(lengths.sum()))]
        result = collect(sets[0], tied, np.repeat(places, lengths), np.shape(_plain(out)))
    result.by_value = True
    return result


sort_p.def_sparsity(_sort_sparsity)


@export()
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """sort(a, axis=-1): the entries in increasing order; each derivative follows its entry.

    >>> sort(np.array([3.0, 1.0, 2.0])).tolist()
    [1.0, 2.0, 3.0]
    """
    if order is not None:
        raise NotImplementedError("sort(..., order=...) sorts structured arrays, which have no "
                                  "derivative; sort a float array")
    if not _traced(a):
        return np.sort(a, axis=axis, kind=kind, **_stable(stable))
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    return sort_p(a, axis=normalize_axis(axis, ndim(a))[0])


@export()
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """partition(a, kth, axis=-1): the ``kth`` entries in their sorted places, the smaller ones
    before, the larger after: NumPy's values in NumPy's arrangement, each entry carrying the
    derivative of the entry it came from (equal values matched in order of occurrence).

    >>> partition(np.array([3.0, 1.0, 2.0]), 1).tolist()
    [1.0, 2.0, 3.0]
    """
    if order is not None:
        raise NotImplementedError("partition(..., order=...) orders structured arrays, which have no "
                                  "derivative; partition a float array")
    if not _traced(a):
        return np.partition(a, kth, axis=axis, kind=kind)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    values = _plain(a)
    arranged = np.partition(values, kth, axis=axis, kind=kind)
    source = np.empty(values.shape, np.intp)   # arranged = values[source] along axis
    np.put_along_axis(source, np.argsort(arranged, axis=axis, kind="stable"),
                      np.argsort(values, axis=axis, kind="stable"), axis)
    return take_along_axis(a, source, axis)


@export()
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kwargs):
    """unique(ar, ...): NumPy's distinct values (rows with ``axis``), each carrying the derivative
    of its first occurrence; the optional index, inverse and count outputs are plain.

    >>> unique(np.array([2.0, 1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    if not _traced(ar):
        return np.unique(ar, return_index, return_inverse, return_counts, axis, **kwargs)
    found = np.unique(_plain(ar), True, return_inverse, return_counts, axis, **kwargs)
    first = found[1]
    if axis is None:
        values = getitem(reshape(ar, (-1,)), first)
    else:
        values = take_entries(ar, first, axis=axis)
    extra = ([first] if return_index else []) + list(found[2:])
    return tuple([values] + extra) if extra else values


@export(value_only=True)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """argsort(a, axis=-1): NumPy's sorting indices of the plain value (value-only, no derivative).

    >>> argsort(np.array([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    return np.argsort(_plain(a), axis=axis, kind=kind, order=order, **_stable(stable))


@export(value_only=True)
def searchsorted(a, v, side="left", sorter=None):
    """searchsorted(a, v, side="left"): insertion indices of ``v`` into sorted ``a`` (value-only).

    >>> int(searchsorted(np.array([1.0, 2.0, 3.0]), 2.5))
    2
    """
    return np.searchsorted(_plain(a), _plain(v), side=side,
                           sorter=None if sorter is None else _plain(sorter))

# ---------------------------------------------------------------- median, percentile, quantile


def _to_last(a, axis):
    """``a`` with the reduced axes moved to the end and merged into one; (that, kept shape, n)."""
    nd = ndim(a)
    axes = normalize_axis(axis, nd)
    rest = tuple(k for k in range(nd) if k not in axes)
    moved = transpose(a, rest + axes) if rest + axes != tuple(range(nd)) else a
    kept = shape(moved)[:len(rest)]
    n = math.prod(shape(moved)[len(rest):])
    if n == 0:
        raise ValueError("cannot take an order statistic of an empty array (NumPy gives NaN)")
    return reshape(moved, kept + (n,)), kept, n, axes


def _keep_dims(out, lead, shape_a, axes):
    """``out`` (``lead + kept``) with length-1 axes where the reduced ones were."""
    full = list(shape_a)
    for ax in axes:
        full[ax] = 1
    return reshape(out, lead + tuple(full))


def _nan_slices(y):
    """Where a slice of ``y`` (last axis reduced) holds a NaN, or None when none does."""
    mask = np.isnan(_plain(y)).any(axis=-1)
    return mask if mask.any() else None


def _sorted_entries(y, positions):
    """The entries of ``y`` at ``positions`` (plain ints) of its stable sort along the last axis,
    shaped ``kept + (len(positions),)``.

    Selected with ``np.argpartition`` when none of them is tied with another entry (the entry at
    each sorted position is then the only candidate); otherwise read from :func:`sort`, whose
    stable order decides among the tied entries.
    """
    v = _plain(y)
    positions = np.asarray(positions, dtype=np.intp)
    if positions.size <= _FEW_POSITIONS:
        picked = np.take(np.argpartition(v, np.unique(positions), axis=-1), positions, axis=-1)
        values = np.take_along_axis(v, picked, -1)
        if not any(np.any(np.count_nonzero(v == values[..., k:k + 1], axis=-1) > 1)
                   for k in range(positions.size)):
            return take_along_axis(y, picked, -1)
    return getitem(sort(y, axis=-1), (Ellipsis, positions))


# above this many sorted positions, counting the ties of each costs more than a sort
_FEW_POSITIONS = 8


def _order_statistic(a, q, axis, keepdims, method, weak):
    q_plain = fractions(q)
    a = operand(a)
    y, kept, n, axes = _to_last(a, axis)
    dtype = _float_dtype(a)
    qs = q_plain.shape
    lo, hi, t = positions_of_method(method, n, q_plain, q)
    # the entries below and above each virtual index, shaped q's shape + the kept shape
    count = lo.size
    entries = _sorted_entries(y, np.concatenate([lo.reshape(-1), hi.reshape(-1)]))
    below, above = (reshape(moveaxis(getitem(entries, (Ellipsis, part)), -1, 0), qs + kept)
                    for part in (slice(0, count), slice(count, 2 * count)))
    if kept and ndim(t):
        t = reshape(t, qs + (1,) * len(kept))
    out = interpolate(below, above, t, weak, dtype)
    nan = _nan_slices(y)
    if nan is not None:
        out = where(nan, np.asarray(np.nan, dtype), out)
    if keepdims:
        out = _keep_dims(out, qs, shape(a), axes)
    return out


@export()
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    """quantile(a, q, axis=None, keepdims=False): the ``q``-th quantiles (``0 <= q <= 1``), any of NumPy's methods.

    ``q`` may be traced too (the derivative is the slope between the two entries).

    >>> float(quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5))
    2.5
    """
    _no_out("quantile", out)
    method = _method_of(method, interpolation)
    if not _traced(a, q):
        return np.quantile(a, q, axis=axis, method=method, keepdims=keepdims,
                           weights=plain_weights(weights))
    _no_weights("quantile", weights)
    return _order_statistic(a, q, axis, keepdims, method, type(q) in (int, float))


@export()
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """percentile(a, q, axis=None, keepdims=False): the ``q``-th percentiles (``0 <= q <= 100``), any of NumPy's methods.

    >>> float(percentile(np.array([1.0, 2.0, 3.0, 4.0]), 25))
    1.75
    """
    _no_out("percentile", out)
    method = _method_of(method, interpolation)
    if not _traced(a, q):
        return np.percentile(a, q, axis=axis, method=method, keepdims=keepdims,
                             weights=plain_weights(weights))
    _no_weights("percentile", weights)
    return _order_statistic(a, fraction_of_percent(q), axis, keepdims, method, type(q) in (int, float))


def fraction_of_percent(q):
    """``q / 100`` (traced or plain), checked to lie in [0, 100] as NumPy checks percentiles."""
    q = q / 100.0 if isinstance(q, Tracer) else np.true_divide(np.asarray(q), 100)
    if not (np.all(_plain(q) >= 0) and np.all(_plain(q) <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return q


def _method_of(method, interpolation):
    """The method asked for: ``interpolation=`` is NumPy's former name of ``method=``."""
    return method if interpolation is None else interpolation


def plain_weights(weights):
    """Traced ``weights`` of plain data as their values: NumPy's weighted quantiles
    (``inverted_cdf``) pick an entry of the data, which small changes of the weights keep, so
    the derivative in them is 0 (as a sort's in its keys)."""
    return innermost(weights) if isinstance(weights, Tracer) else weights


def _no_weights(name, weights):
    if weights is not None:
        raise NotImplementedError(
            f"numpy.{name} with weights= has no derivative rule in duals on traced values; call "
            f"it without weights, or compose the statistic from np.sort(x) and indexing")


@export()
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median(a, axis=None, keepdims=False): the middle entry, or the mean of the two middle ones.

    >>> float(median(np.array([4.0, 1.0, 3.0, 2.0])))
    2.5
    """
    _no_out("median", out)
    if not _traced(a):
        return np.median(a, axis=axis, keepdims=keepdims)
    y, kept, n, axes = _to_last(a, axis)
    k = n // 2
    if n % 2:
        out = getitem(_sorted_entries(y, [k]), (Ellipsis, 0))
    else:
        pair = _sorted_entries(y, [k - 1, k])
        out = (getitem(pair, (Ellipsis, 0)) + getitem(pair, (Ellipsis, 1))) / 2.0
    nan = _nan_slices(y)
    if nan is not None:
        out = where(nan, np.asarray(np.nan, _float_dtype(a)), out)
    if keepdims:
        out = _keep_dims(out, (), shape(a), axes)
    return out

# ---------------------------------------------------------------- interp


def _as_data(fp):
    """``fp`` as it is when traced, else a float64 array (complex128 for complex data)."""
    if isinstance(fp, Tracer):
        return fp
    fp = np.asarray(fp)
    return fp.astype(np.result_type(fp, np.float64))


def _one_period(x, xp, fp, period):
    """``np.interp``'s reduction of a periodic table: ``x`` and ``xp`` taken modulo the period, the
    knots sorted, and the last and first knots repeated one period before and after (the
    wrap-around segment). ``x mod period`` has derivative 1 in ``x``; ``fp`` is only rearranged."""
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = abs(period)
    xp = np.asarray(xp, dtype=np.float64)
    fp = _as_data(fp)
    if xp.ndim != 1 or ndim(fp) != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xp.shape[0] != shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length")
    order = np.argsort(xp % period)
    xp, fp = (xp % period)[order], getitem(fp, order)
    xp = np.concatenate((xp[-1:] - period, xp, xp[:1] + period))
    fp = concatenate((getitem(fp, slice(-1, None)), fp, getitem(fp, slice(0, 1))))
    return x % period, xp, fp


@export()
def interp(x, xp, fp, left=None, right=None, period=None):
    """interp(x, xp, fp, left=None, right=None, period=None): piecewise-linear interpolation of ``(xp, fp)`` at ``x``.

    ``xp`` must be increasing (any order with ``period``, as NumPy); ``x``, ``xp``, ``fp``,
    ``left`` and ``right`` may be traced (``xp`` not with ``period``). The segment of each point is
    found on the values; at a knot the value and derivative are those of the segment to its right
    (at the last knot, to its left), and outside the knots ``left``/``right``'s.

    >>> float(interp(1.5, [1.0, 2.0], [10.0, 20.0]))
    15.0
    """
    if period is not None:
        if isinstance(xp, Tracer):
            raise TypeError("numpy.interp: traced sample points xp with period= are not supported; "
                            "pass plain xp (x and fp may be traced)")
        x, xp, fp = _one_period(x, xp, fp, period)
        left = right = None
    if not _traced(x, xp, fp, left, right):
        return np.interp(x, xp, fp, left, right)
    knots = np.asarray(_plain(xp), dtype=np.float64)
    xp = xp if isinstance(xp, Tracer) else knots
    fp = _as_data(fp)
    if knots.ndim != 1 or shape(fp) != knots.shape:
        raise ValueError("fp and xp are not of the same length." if knots.ndim == 1 else
                         "object too deep for desired array")
    n = knots.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    xv = _plain(x)
    first, last = getitem(fp, 0), getitem(fp, n - 1)
    left = first if left is None else left
    right = last if right is None else right
    if n == 1:
        inner = first
    else:
        j = np.clip(np.searchsorted(knots, xv, side="right") - 1, 0, n - 2)
        f0, f1 = getitem(fp, j), getitem(fp, j + 1)
        x0, x1 = getitem(xp, j), getitem(xp, j + 1)
        # the search takes the last of equal knots, so a segment of no width is only met at a
        # repeated last knot (a grid with its end appended): there the value is fp[-1], no slope
        flat = knots[j + 1] == knots[j]
        slope = where(flat, 0.0, (f1 - f0) / where(flat, 1.0, x1 - x0))
        # at the last knot, anchor at it, so that the value is fp[-1] exactly (NumPy's)
        inner = where(xv == knots[-1], f1 + slope * (x - x1), f0 + slope * (x - x0))
    return where(xv < knots[0], left, where(xv > knots[-1], right, inner))
