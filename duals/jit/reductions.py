"""Reductions of dual arrays in @njit code: over the whole array, over one axis, and running.

* ``np.sum`` over an axis (and ``x.sum(axis=...)``); ``np.mean``/``np.prod``/``np.max``/``np.min``
  (``np.amax``, ``np.amin``) with ``axis=``; ``np.var``, ``np.std``, ``np.ptp`` and the methods;
  ``np.cumsum``/``np.cumprod`` of the flattened array. The whole-array ``np.sum``/``np.prod``/
  ``np.mean`` are in :mod:`.arrays`; those of one dual number (as Numba's of a float) are the number.
* ``np.max``/``np.min`` split the derivative evenly among tied entries, as on the NumPy path;
  a NaN entry makes the result that entry.
* ``np.nansum``/``np.nanmean`` leave NaN entries out (their derivative is zero), and
  ``np.nanmax``/``np.nanmin`` take the extreme of the others, as the NumPy path does (it
  reads a NaN as ``-inf`` for ``nanmax``, ``+inf`` for ``nanmin``, so at those values the tie
  is split with it); an all-NaN array gives NaN with derivative zero.

Numba has no ``axis`` for ``mean``, ``prod``, ``max``, ``min`` and no ``nan*`` over an axis,
so those over an axis are served here for float arrays too: the plain call of the same code
must run. ``np.sum`` over an axis of a float array stays Numba's own.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.nanmax(x)))(np.array([1.0, np.nan, 3.0])).tolist()
[0.0, 0.0, 1.0]
"""
import math

import numpy as np
from llvmlite import ir
from numba.core import errors, types
from numba.extending import intrinsic

from .._overloads import overload, register_jitable
from ._types import DualType
from .arrays import _sum, dual_array_method
from .compat import array_method
from .errors import MARK
from .extras import _real
from .parts import is_dual_array


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


# ---------------------------------------------------------------- over the whole array

@register_jitable
def _check_size(n):
    if n == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")


@register_jitable
def _extreme(a, largest, fill):
    """The largest (smallest) entry, NaN entries read as ``fill`` when it is not NaN (the nan*
    functions), else returned (max, min). Tied entries share the derivative evenly; the value is
    exactly the entry's: ``best + Σ (e - best) / k``, each ``e - best`` having real part 0 (at
    an infinite ``best``, where that is NaN, ``Σ e / k`` instead)."""
    _check_size(a.size)
    skip = not math.isnan(fill)
    first = True
    best = a.flat[0]
    for e in a.flat:
        if math.isnan(e):
            if not skip:
                return e
        elif first or (e > best if largest else e < best):
            best = e
            first = False
    if first:  # only NaNs: NaN, derivative zero (NumPy warns "All-NaN slice")
        return 0.0 + math.nan
    filled = skip and (_real(best) == fill)  # NaNs read as fill tie with best
    infinite = math.isinf(_real(best))
    acc = 0.0
    count = 0
    for e in a.flat:
        if math.isnan(e):
            if filled:  # then best is infinite
                acc = acc + fill
                count += 1
        elif e == best:
            acc = acc + (e if infinite else e - best)
            count += 1
    if infinite:
        return acc / count
    return best + acc / count


@register_jitable
def _largest(a):
    return _extreme(a, True, math.nan)


@register_jitable
def _smallest(a):
    return _extreme(a, False, math.nan)


@register_jitable
def _nan_largest(a):
    return _extreme(a, True, -math.inf)


@register_jitable
def _nan_smallest(a):
    return _extreme(a, False, math.inf)


@register_jitable
def _total(a):
    acc = 0.0
    for e in a.flat:
        acc = acc + e
    return acc


@register_jitable
def _nan_total(a):
    acc = 0.0
    for e in a.flat:
        if not math.isnan(e):
            acc = acc + e
    return acc


@register_jitable
def _nan_average(a):
    acc = 0.0
    count = 0
    for e in a.flat:
        if not math.isnan(e):
            acc = acc + e
            count += 1
    return acc / count if count else acc + math.nan


@register_jitable
def _product(a):
    acc = 1.0
    for e in a.flat:
        acc = acc * e
    return acc


@register_jitable
def _average(a):
    return _total(a) / a.size


@register_jitable
def _variance(a):
    m = _average(a)
    acc = 0.0
    for e in a.flat:
        d = e - m
        acc = acc + d * d
    return acc / a.size


@register_jitable
def _deviation(a):
    return np.sqrt(_variance(a))


@register_jitable
def _spread(a):
    return _largest(a) - _smallest(a)


# ---------------------------------------------------------------- of one dual number
# Numba reduces a plain number as a one-entry array (np.sum(x[0] * x[1]) compiles); a dual
# number does the same: the sum, product, mean, extreme of one entry is that entry.

def _reduce_one(func):
    @overload(func)
    def one_entry(a):
        if isinstance(a, DualType):
            return lambda a: a
    return one_entry


for _func in (np.sum, np.prod, np.mean, np.average, np.amax, np.amin, np.max, np.min,
              np.nanmax, np.nanmin):
    _reduce_one(_func)


# ---------------------------------------------------------------- over one axis

@intrinsic
def _without(typingctx, shape, axis):
    """_without(shape, axis) -> ``shape`` with entry ``axis`` removed (axis a runtime integer)."""
    if not isinstance(shape, types.UniTuple) or not isinstance(axis, types.Integer):
        return None
    n = shape.count
    ret = types.UniTuple(types.intp, n - 1)

    def codegen(context, builder, sig, args):
        tup, at = args
        at = context.cast(builder, at, sig.args[1], types.intp)
        out = context.get_constant_undef(ret)
        for i in range(n - 1):
            keep = builder.icmp_signed("<", ir.Constant(at.type, i), at)
            value = builder.select(keep, builder.extract_value(tup, i), builder.extract_value(tup, i + 1))
            out = builder.insert_value(out, value, i)
        return out
    return ret(shape, axis), codegen


def _axis_reducer(kernel, T):
    """The reduction of ``kernel`` (of a 1-d slice) over one axis of an array of element type ``T``."""
    @register_jitable
    def reduce(a, axis):
        nd = a.ndim
        if axis < -nd or axis >= nd:
            raise ValueError("duals.jit: axis out of bounds for an array of this dimension:", axis, nd)
        if axis < 0:
            axis += nd
        c = np.ascontiguousarray(a)
        outer, inner = 1, 1
        for i in range(axis):
            outer *= c.shape[i]
        for i in range(axis + 1, nd):
            inner *= c.shape[i]
        n = c.shape[axis]
        v = c.reshape((outer, n, inner))
        out = np.empty((outer, inner), T)
        for o in range(outer):
            for i in range(inner):
                out[o, i] = kernel(v[o, :, i])
        return out.reshape(_without(c.shape, axis))
    return reduce


def _over_axis(label, kernel, a, axis):
    """A jitted ``reduce(a, axis)``: ``kernel`` of the whole array for ``axis`` None, else of every
    slice along ``axis`` (an integer; a 1-d array gives a scalar, as in NumPy)."""
    if _none(axis):
        return register_jitable(lambda a, axis: kernel(a))
    if not isinstance(axis, types.Integer):
        raise errors.TypingError(f"{MARK}np.{label} of a dual array takes one integer axis, "
                                 f"got {axis}; reduce one axis at a time")
    if a.ndim == 1:
        @register_jitable
        def vector(a, axis):
            if axis != 0 and axis != -1:
                raise ValueError("duals.jit: axis out of bounds for a 1-d array:", axis)
            return kernel(a)
        return vector
    return _axis_reducer(kernel, a.dtype)


def _reduction(label, kernel):
    """``np.<label>(a, axis=None)`` of a dual array, and of a float array over an axis (Numba
    has none for these: the plain call of the same code must run)."""
    def ov(a, axis=None):
        if is_dual_array(a) or (isinstance(a, types.Array) and isinstance(a.dtype, types.Float)
                                and not _none(axis)):
            reduce = _over_axis(label, kernel, a, axis)
            return lambda a, axis=None: reduce(a, axis)
    return ov


def _sum_over_axis(a, axis=None, dtype=None):
    """``np.sum(a, axis=k)`` of a dual array (of the whole array: :mod:`.arrays`); Numba
    0.60/0.61's own makes a float array for the result, so it is served here."""
    if is_dual_array(a) and not _none(axis) and _none(dtype):
        reduce = _over_axis("sum", _total, a, axis)
        return lambda a, axis=None, dtype=None: reduce(a, axis)


def _sum_method(a, axis=None, dtype=None):
    """_sum_method(a, axis=None, dtype=None) -> ``a.sum(...)`` of a dual array."""


@overload(_sum_method)
def _ov_sum_method(a, axis=None, dtype=None):
    if _none(axis) and _none(dtype):
        return lambda a, axis=None, dtype=None: _sum(a)
    return _sum_over_axis(a, axis, dtype)


def _whole(kernel):
    """A method or function of a dual array that takes no arguments (``x.max()``, ``np.var(x)``)."""
    def ov(a):
        if is_dual_array(a):
            return lambda a: kernel(a)
    return ov


# ---------------------------------------------------------------- running reductions

def _running_sum(a, axis=None, dtype=None):
    if not is_dual_array(a) or not _none(axis) or not _none(dtype):
        return None  # over an axis: Numba's own np.cumsum works on duals
    T = a.dtype

    def impl(a, axis=None, dtype=None):
        out = np.empty(a.size, T)
        acc = 0.0
        k = 0
        for e in a.flat:
            acc = acc + e
            out[k] = acc
            k += 1
        return out
    return impl


def _running_product(a):
    if not is_dual_array(a):
        return None
    T = a.dtype

    def impl(a):
        out = np.empty(a.size, T)
        acc = 1.0
        k = 0
        for e in a.flat:
            acc = acc * e
            out[k] = acc
            k += 1
        return out
    return impl


def install():
    for label, kernel, numpy_functions, method in (
            ("max", _largest, (np.max, np.amax), "npy_max"),
            ("min", _smallest, (np.min, np.amin), "npy_min"),
            ("mean", _average, (np.mean,), None),
            ("prod", _product, (np.prod,), None),
            ("nanmax", _nan_largest, (np.nanmax,), None),
            ("nanmin", _nan_smallest, (np.nanmin,), None),
            ("nansum", _nan_total, (np.nansum,), None),
            ("nanmean", _nan_average, (np.nanmean,), None)):
        for f in numpy_functions:
            overload(f, target="cpu")(_reduction(label, kernel))
        if method is not None and array_method(method) is not None:
            overload(array_method(method), target="cpu")(_whole(kernel))
    overload(np.sum, target="cpu")(_sum_over_axis)
    dual_array_method("sum", _sum_method)
    for f, kernel, method in ((np.var, _variance, "array_var"), (np.std, _deviation, "array_std")):
        overload(f, target="cpu")(_whole(kernel))
        if array_method(method) is not None:
            overload(array_method(method), target="cpu")(_whole(kernel))
    overload(np.ptp, target="cpu")(_whole(_spread))
    for f, typer, method in ((np.cumsum, _running_sum, "array_cumsum"),
                             (np.cumprod, _running_product, "array_cumprod")):
        overload(f, target="cpu")(typer)
        if array_method(method) is not None:
            overload(array_method(method), target="cpu")(typer)
