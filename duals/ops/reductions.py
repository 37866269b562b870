"""Reductions: ``sum``, ``max``/``min`` and ``cumsum`` are primitives; the rest is composed.

A cotangent or tangent carries lane axes in front of the value's axes, so the rules address
the value's axes from the right (negative axis numbers) and leave the lanes alone.
"""
import math

import numpy as np

from ..core import Primitive
from ..index_sets import axis_rule, reduce_rule
from . import lists_as_arrays
from . import (dtype_of, every_entry, export, innermost, is_complex, lead_of, ndim_of as ndim, normalize_axis,
               shape_of as shape)
from .shape import broadcast_to, concatenate, getitem, reshape


def _negative(axes, nd):
    """Axes counted from the right, so they still name the value's axes behind any lanes."""
    return tuple(a % nd - nd for a in axes)


def _sum_impl(x, *, axis, keepdims):
    if type(x) is np.ndarray:   # the same reduction as np.sum, without its Python dispatch
        return x.sum(axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


sum_p = Primitive("sum", _sum_impl)


def _sum_jvp(t, out, x, *, axis, keepdims):
    return sum_p(t, axis=_negative(axis, ndim(x)), keepdims=keepdims)


def _expand_back(g, out, x, axis, keepdims):
    """Cotangent of a reduction output broadcast back over the input's shape."""
    lead = lead_of(g, out)
    if type(g) is np.ndarray or type(g) is np.float64:   # plain: NumPy's view, as the primitives make
        if np.ndim(g) == 0:
            return every_entry(g, shape(x))
        s = np.shape(g)
        if not keepdims:
            kept = list(shape(x))
            for a in axis:
                kept[a] = 1
            s = s[:lead] + tuple(kept)
        return np.broadcast_to(np.reshape(g, s), s[:lead] + shape(x))
    if not keepdims:
        kept = list(shape(x))
        for a in axis:
            kept[a] = 1
        g = reshape(g, shape(g)[:lead] + tuple(kept))
    return broadcast_to(g, shape(g)[:lead] + shape(x))


def _reduced_unreached(mask, out, x, axis, keepdims):
    """The entries of a reduction's input whose output entry's cotangent is zero by structure
    (``mask``, broadcastable to the output): dropped rows of ``np.sum(a, axis=1)[ok]`` never
    multiply a NaN partial of theirs into the gradient."""
    if mask is None:
        return None
    return _expand_back(np.broadcast_to(mask, shape(out)), out, x, axis, keepdims)


sum_p.def_jvp(0, _sum_jvp)
sum_p.def_vjp(0, lambda g, out, x, *, axis, keepdims: _expand_back(g, out, x, axis, keepdims))
sum_p.unreached = lambda i, mask, out, x, *, axis, keepdims: _reduced_unreached(mask, out, x, axis, keepdims)
sum_p.def_sparsity(reduce_rule())


@export()
@lists_as_arrays
def sum(x, axis=None, keepdims=False, dtype=None, *, out=None, initial=None, where=None):  # noqa: A001
    """sum(x, axis=None, keepdims=False, dtype=None, initial=None, where=None): the sum over ``axis``.

    ``where=mask`` sums only the entries where ``mask`` holds (the others get derivative zero);
    ``initial`` is added to the result, as in NumPy.

    >>> float(sum(np.ones(3)))
    3.0
    >>> float(sum(np.arange(4.0), where=np.arange(4) % 2 == 1))
    4.0
    """
    refuse_out_and_integer_dtype("sum", out, dtype)
    if dtype is not None and np.dtype(dtype) != dtype_of(x):
        x = x.astype(dtype)    # summed in that precision, as NumPy does
    if _masks(where):
        x = _masked_out(x, where, "sum")
    total = sum_p(x, axis=normalize_axis(axis, ndim(x)), keepdims=bool(keepdims))
    return total if initial is None else total + initial


def _masked_out(x, where, name, fill=0.0):
    """``x`` with ``fill`` (the reduction's identity) where the plain boolean ``where`` is false
    (broadcast to ``x``'s shape): the entries left out get derivative zero."""
    from .elementwise import where as select
    if not isinstance(where, (bool, np.bool_, np.ndarray, list, tuple)):
        raise TypeError(f"{name}(..., where=...) takes a plain boolean mask, not a traced value; "
                        f"compare values first (x > 0 compares primals)")
    mask = np.broadcast_to(np.asarray(where, dtype=bool), shape(x))
    return select(mask, x, np.full((), fill, dtype=dtype_of(x)))


def refuse_out_and_integer_dtype(name, out=None, dtype=None):
    """Refuse ``out=`` (an array cannot hold a traced value) and a non-float ``dtype=`` (it would
    truncate the derivative), naming the function ``name``."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"{name}: dtype={np.dtype(dtype)} would truncate the derivative; use a float dtype")
    if out is not None:
        raise TypeError(f"{name}(..., out=...) cannot write a traced value into an array; drop out= "
                        f"and use the returned value")


def _masks(where):
    return where is not None and where is not True


def _where_count(x, where, axis, keepdims):
    """How many entries of ``x`` the mask ``where`` keeps, per reduced position."""
    return np.sum(np.broadcast_to(np.asarray(where, dtype=bool), shape(x)), axis=axis, keepdims=keepdims)


def unbroadcast(g, out, target_shape):
    """unbroadcast(g, out, target_shape): cotangent ``g`` of ``out`` reduced to an input of ``target_shape``."""
    target_shape = tuple(target_shape)
    out_shape = shape(out)
    if out_shape == target_shape:
        return g
    lead = lead_of(g, out)
    extra = len(out_shape) - len(target_shape)
    axes = list(range(lead, lead + extra))
    for i, size in enumerate(target_shape):
        if size == 1 and out_shape[extra + i] != 1:
            axes.append(lead + extra + i)
    if axes:
        g = sum_p(g, axis=tuple(axes), keepdims=False)
    return reshape(g, shape(g)[:lead] + target_shape)


def _mean_count(x, axis):
    s = shape(x)
    return int(np.prod([s[a] for a in normalize_axis(axis, len(s))]))


@export()
@lists_as_arrays
def mean(x, axis=None, keepdims=False, dtype=None, *, out=None, where=None):
    """mean(x, axis=None, keepdims=False, where=None): the arithmetic mean over ``axis``.

    ``where=mask`` averages only the entries where ``mask`` holds.

    >>> float(mean(np.arange(4.0)))
    1.5
    """
    if _masks(where):
        count = _where_count(x, where, axis, keepdims)
        total = sum(x, axis, keepdims, dtype, out=out, where=where)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / np.asarray(count, dtype=dtype_of(total))
    return sum(x, axis, keepdims, dtype, out=out) / _mean_count(x, axis)


@export()
@lists_as_arrays
def var(x, axis=None, keepdims=False, ddof=0, *, where=None):
    """var(x, axis=None, keepdims=False, ddof=0, where=None): the variance, NumPy's convention for ``ddof``.

    ``where=mask`` takes the variance of the entries where ``mask`` holds.

    >>> float(var(np.array([1.0, 3.0])))
    1.0
    """
    centred = x - mean(x, axis, keepdims=True, where=where)
    if is_complex(centred):   # NumPy's variance of complex values: the mean of |x - mean|²
        from .complex_parts import squared_modulus
        squares = squared_modulus(centred)
    else:
        squares = centred * centred
    if not _masks(where):
        return sum(squares, axis, keepdims) / (_mean_count(x, axis) - ddof)
    count = _where_count(x, where, axis, keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sum(squares, axis, keepdims, where=where) / np.asarray(count - ddof, dtype=dtype_of(squares))


@export()
@lists_as_arrays
def std(x, axis=None, keepdims=False, ddof=0, *, where=None):
    """std(x, axis=None, keepdims=False, ddof=0, where=None): the standard deviation (derivative inf at 0).

    >>> float(std(np.array([1.0, 3.0])))
    1.0
    """
    from .elementwise import sqrt
    return sqrt(var(x, axis, keepdims, ddof, where=where))


def _extreme(name, np_func):
    def impl(x, *, axis, keepdims):
        return np_func(x, axis=axis, keepdims=keepdims)

    prim = Primitive(name, impl)

    def weights(out, x, axis):
        """Ties split evenly: each maximal entry gets 1 / (number of maximal entries)."""
        kept = np_func(_plain(x), axis=axis, keepdims=True)
        hits = (_plain(x) == kept).astype(np.result_type(_plain(x)))
        return hits / np.sum(hits, axis=axis, keepdims=True)

    def jvp(t, out, x, *, axis, keepdims):
        # entries that are not extreme contribute exactly zero, even with an infinite tangent
        from .elementwise import picked  # elementwise imports this module
        _real_only(x)
        return sum_p(picked(weights(out, x, axis), t), axis=_negative(axis, ndim(x)), keepdims=keepdims)

    def vjp(g, out, x, *, axis, keepdims):
        from .elementwise import picked
        _real_only(x)
        return picked(weights(out, x, axis), _expand_back(g, out, x, axis, keepdims))

    def unreached(argnum, mask, out, x, *, axis, keepdims):
        skipped = np.broadcast_to(weights(out, x, axis) == 0.0, shape(x))
        behind = _reduced_unreached(mask, out, x, axis, keepdims)
        return skipped if behind is None else skipped | behind

    def extreme_entries(out, x, *, axis, keepdims):
        """At this point: the entries equal to the extreme (all of them when it is NaN)."""
        kept = np_func(_plain(x), axis=axis, keepdims=True)
        return (_plain(x) == kept) | np.isnan(kept)

    def _real_only(x):
        if is_complex(x):
            raise TypeError(f"{name} has no complex derivative: complex numbers are not ordered "
                            f"(NumPy compares them lexicographically); take the {name} of a real "
                            f"quantity (np.abs(z), np.real(z))")

    prim.def_jvp(0, jvp)
    prim.def_vjp(0, vjp)
    prim.holomorphic = False
    prim.unreached = unreached
    prim.def_sparsity(reduce_rule(where=extreme_entries))
    return prim


def _plain(x):
    return np.asarray(innermost(x))


max_p = _extreme("max", np.max)
min_p = _extreme("min", np.min)


_NO_INITIAL = np._NoValue   # NumPy's own "not given", which its functions pass on unchanged


def _bounded(prim, name, x, axis, keepdims, initial, where, identity):
    """``max``/``min`` with NumPy's ``initial`` (a bound the result takes when it is beyond every
    entry) and ``where`` (a mask, which needs ``initial``)."""
    if _masks(where):
        if initial is _NO_INITIAL:
            raise ValueError(f"reduction operation '{name}imum' does not have an identity, so to "
                             f"use a where mask one has to specify 'initial'")
        x = _masked_out(x, where, name, identity)
    out = prim(x, axis=normalize_axis(axis, ndim(x)), keepdims=bool(keepdims))
    if initial is _NO_INITIAL:
        return out
    from .elementwise import maximum, minimum   # ties with the bound split evenly, as maximum's
    return (maximum if name == "max" else minimum)(out, initial)


@export("max", "amax")
@lists_as_arrays
def max(x, axis=None, keepdims=False, *, initial=_NO_INITIAL, where=None):  # noqa: A001
    """max(x, axis=None, keepdims=False, initial=<none>, where=None): the largest entry; tied entries share the derivative.

    >>> float(max(np.array([1.0, 3.0, 2.0])))
    3.0
    """
    return _bounded(max_p, "max", x, axis, keepdims, initial, where, -np.inf)


@export("min", "amin")
@lists_as_arrays
def min(x, axis=None, keepdims=False, *, initial=_NO_INITIAL, where=None):  # noqa: A001
    """min(x, axis=None, keepdims=False, initial=<none>, where=None): the smallest entry; tied entries share the derivative.

    >>> float(min(np.array([1.0, 3.0, 2.0])))
    1.0
    """
    return _bounded(min_p, "min", x, axis, keepdims, initial, where, np.inf)


@export()
@lists_as_arrays
def prod(x, axis=None, keepdims=False, *, initial=None, where=None):
    """prod(x, axis=None, keepdims=False, initial=None, where=None): the product, as a tree of multiplications.

    Composed from primitives, so every derivative order is exact, zeros included; ``where=mask``
    multiplies the entries where ``mask`` holds, ``initial`` multiplies the result.

    >>> float(prod(np.array([2.0, 3.0, 4.0])))
    24.0
    """
    if _masks(where):
        x = _masked_out(x, where, "prod", 1.0)
    y = _product(x, axis, keepdims)
    return y if initial is None else y * initial


def _product(x, axis, keepdims):
    nd = ndim(x)
    axes = normalize_axis(axis, nd)
    rest = tuple(a for a in range(nd) if a not in axes)
    from .shape import transpose
    moved = transpose(x, rest + axes)
    s = shape(moved)
    n = math.prod(s[len(rest):])
    y = reshape(moved, s[:len(rest)] + (n,))
    if n == 0:
        y = sum(y, -1) * 0.0 + 1.0
    while n > 1:
        if n % 2:
            y = concatenate([y, np.ones(shape(y)[:-1] + (1,), dtype=dtype_of(y))], axis=-1)
            n += 1
        half = n // 2
        y = getitem(y, (Ellipsis, slice(0, half))) * getitem(y, (Ellipsis, slice(half, n)))
        n = half
    if n == 1:
        y = reshape(y, shape(y)[:-1])
    if keepdims:
        full = list(shape(x))
        for a in axes:
            full[a] = 1
        y = reshape(y, tuple(full))
    return y


def _cumsum_impl(x, *, axis):
    return np.cumsum(x, axis=axis)


cumsum_p = Primitive("cumsum", _cumsum_impl)
cumsum_p.def_jvp(0, lambda t, out, x, *, axis: cumsum_p(t, axis=axis % ndim(x) - ndim(x)))


def _cumsum_vjp(g, out, x, *, axis):
    from .shape import flip
    a = axis % ndim(x) - ndim(x)
    return flip(cumsum_p(flip(g, a), axis=a), a)


cumsum_p.def_vjp(0, _cumsum_vjp)


def _cumsum_unreached(i, mask, out, x, *, axis):
    """Entry ``j`` reaches the running sums from ``j`` on: unreached when all of theirs are."""
    if mask is None:
        return None
    line = np.flip(np.broadcast_to(mask, shape(out)), axis)
    return np.flip(np.logical_and.accumulate(line, axis=axis), axis)


cumsum_p.unreached = _cumsum_unreached


def prefix(m, *rest, **params):
    """Along a line of ``m`` entries, entry ``i`` depends on entries ``0..i`` (running sums, products)."""
    return np.tril_indices(m)


cumsum_p.def_sparsity(axis_rule(prefix))


@export()
@lists_as_arrays
def cumsum(x, axis=None, dtype=None, out=None):
    """cumsum(x, axis=None, dtype=None): running sums along ``axis`` (flattened when ``None``),
    in the float ``dtype`` if given.

    >>> cumsum(np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0, 6.0]
    """
    refuse_out_and_integer_dtype("cumsum", out, dtype)
    if dtype is not None and np.dtype(dtype) != dtype_of(x):
        x = x.astype(dtype)
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    return cumsum_p(x, axis=normalize_axis(axis, ndim(x))[0])
