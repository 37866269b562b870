"""Shape and indexing primitives: ``reshape``, ``broadcast_to``, ``transpose``, ``getitem``,
``scatter_add`` and ``concatenate``; everything else here is composed from them.

All of them are linear, so each JVP is the primitive itself applied to the tangent (with
its lane axes kept in front) and each VJP is the transposed primitive.
"""
import math

import numpy as np

from ..core import Primitive, Tracer, views
from ..index_sets import broadcast as broadcast_sets, collect, gather_rule, positions
from . import NAMESPACE, VALUE_ONLY, all_of_copies, export, lead_of, ndim_of as ndim, normalize_axis, shape_of as shape

# ---------------------------------------------------------------- reshape / broadcast_to


def _reshape_impl(x, *, shape):
    return np.reshape(x, shape)


reshape_p = Primitive("reshape", _reshape_impl)
reshape_p.def_jvp(0, lambda t, out, x, *, shape: reshape_p(t, shape=_shape(t)[:lead_of(t, x)] + shape))
reshape_p.def_vjp(0, lambda g, out, x, *, shape: reshape_p(g, shape=_shape(g)[:lead_of(g, out)] + _shape(x)))
_shape = shape
reshape_p.unreached = lambda i, mask, out, x, *, shape: (
    None if mask is None else np.reshape(np.broadcast_to(mask, shape), _shape(x)))
reshape_p.def_sparsity(gather_rule(_reshape_impl))
# on a plain value with plain tangent lanes: NumPy's reshape of both, without the rule's bind
reshape_p.fused_jvp = lambda primals, tangents, *, shape: (
    np.reshape(primals[0], shape), tangents[0].reshape(tangents[0].shape[:1] + shape))


def _resolve(newshape, size):
    newshape = tuple(int(s) for s in (newshape if isinstance(newshape, (tuple, list)) else (newshape,)))
    if -1 in newshape:
        known = math.prod([s for s in newshape if s != -1])
        newshape = tuple(size // known if s == -1 and known else s for s in newshape)
    if math.prod(newshape) != size:
        raise ValueError(f"cannot reshape an array of size {size} into shape {newshape}")
    return newshape


@export()
def reshape(x, newshape, order="C"):
    """reshape(x, newshape, order="C"): the same entries in a new shape, read and placed in C (row)
    or F (column) order; "A" follows the memory layout, which a traced value does not keep.

    >>> reshape(np.arange(6.0), (2, 3), order="F").tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    s = _shape(x)
    newshape = _resolve(newshape, math.prod(s))
    if order == "A" and len(s) <= 1:
        order = "C"
    if order == "F":   # (the transpose read in C order is x read in F order, and back)
        return transpose(reshape(transpose(x), newshape[::-1]))
    if order != "C":
        raise ValueError(f"reshape: order must be 'C' or 'F' (got {order!r}): 'A' follows the memory "
                         f"layout, which a traced value does not keep")
    if newshape == s:
        return x
    return reshape_p(x, shape=newshape)


def _broadcast_impl(x, *, shape):
    return np.broadcast_to(x, shape)


broadcast_p = Primitive("broadcast_to", _broadcast_impl)


def _broadcast_jvp(t, out, x, *, shape):
    from .elementwise import align
    lead = lead_of(t, x)
    return broadcast_p(align(t, x, out), shape=_shape(t)[:lead] + shape)


def _broadcast_vjp(g, out, x, *, shape):
    from .reductions import unbroadcast
    return unbroadcast(g, out, _shape(x))


broadcast_p.def_jvp(0, _broadcast_jvp)
broadcast_p.def_vjp(0, _broadcast_vjp)
broadcast_p.unreached = lambda i, mask, out, x, *, shape: (
    None if mask is None else all_of_copies(mask, shape, _shape(x)))
broadcast_p.def_sparsity(gather_rule(_broadcast_impl))


@export()
def broadcast_to(x, shape):
    """broadcast_to(x, shape): ``x`` repeated along new or length-1 axes.

    >>> broadcast_to(1.0, (2, 2)).shape
    (2, 2)
    """
    shape = tuple(shape)
    if _shape(x) == shape:
        return x
    np.broadcast_shapes(_shape(x), shape)  # raises NumPy's clear error on mismatch
    return broadcast_p(x, shape=shape)

# ---------------------------------------------------------------- transpose


def _transpose_impl(x, *, axes):
    return np.transpose(x, axes)


transpose_p = Primitive("transpose", _transpose_impl)


def _lanes_then(axes, lead):
    return tuple(range(lead)) + tuple(a + lead for a in axes)


transpose_p.def_jvp(0, lambda t, out, x, *, axes: transpose_p(t, axes=_lanes_then(axes, lead_of(t, x))))
transpose_p.def_vjp(0, lambda g, out, x, *, axes: transpose_p(
    g, axes=_lanes_then(tuple(np.argsort(axes)), lead_of(g, out))))
transpose_p.unreached = lambda i, mask, out, x, *, axes: (
    None if mask is None else np.transpose(np.broadcast_to(mask, _shape(out)), np.argsort(axes)))
transpose_p.def_sparsity(gather_rule(_transpose_impl))


@export()
def transpose(x, axes=None):
    """transpose(x, axes=None): axes permuted (reversed by default).

    >>> transpose(np.zeros((2, 3))).shape
    (3, 2)
    """
    nd = ndim(x)
    axes = tuple(reversed(range(nd))) if axes is None else tuple(a % nd for a in axes)
    if axes == tuple(range(nd)):
        return x
    return transpose_p(x, axes=axes)


@export()
def swapaxes(x, axis1, axis2):
    """swapaxes(x, axis1, axis2): two axes exchanged."""
    nd = ndim(x)
    axes = list(range(nd))
    axes[axis1 % nd], axes[axis2 % nd] = axes[axis2 % nd], axes[axis1 % nd]
    return transpose(x, axes)


@export()
def moveaxis(x, source, destination):
    """moveaxis(x, source, destination): axes moved to new positions, the others keep their order."""
    nd = ndim(x)
    source = [s % nd for s in np.atleast_1d(source)]
    destination = [d % nd for d in np.atleast_1d(destination)]
    order = [a for a in range(nd) if a not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return transpose(x, order)


def _lanes_last(t, lead):
    nd = ndim(t)
    return t if lead == 0 else transpose_p(t, axes=tuple(range(lead, nd)) + tuple(range(lead)))


def _lanes_first(t, lead):
    nd = ndim(t)
    return t if lead == 0 else transpose_p(t, axes=tuple(range(nd - lead, nd)) + tuple(range(nd - lead)))

# ---------------------------------------------------------------- indexing


def _is_basic(index):
    return all(isinstance(i, (int, np.integer, slice, type(None))) or i is Ellipsis for i in index)


def _explicit(index, nd):
    """``index`` with its ``...`` spelled out for a value of ``nd`` axes (so lanes can sit behind it)."""
    if not any(i is Ellipsis for i in index):
        return index
    consumed = 0
    for i in index:
        if isinstance(i, np.ndarray) and i.dtype == bool:
            consumed += i.ndim
        elif i is not None and i is not Ellipsis:
            consumed += 1
    k = next(n for n, i in enumerate(index) if i is Ellipsis)
    return index[:k] + (slice(None),) * (nd - consumed) + index[k + 1:]


def _index_lanes(t, lead, index, apply):
    """Apply ``apply(array, index)`` to the value axes of ``t`` (its first ``lead`` axes are lanes)."""
    if lead == 0:
        return apply(t, index)
    if _is_basic(index):
        return apply(t, (slice(None),) * lead + index)
    index = _explicit(index, ndim(t) - lead)
    return _lanes_first(apply(_lanes_last(t, lead), index), lead)


def _getitem_impl(x, *, index):
    return x[index]


getitem_p = Primitive("getitem", _getitem_impl)
views(reshape_p, broadcast_p, transpose_p, getitem_p)   # NumPy may answer with a view


def _scatter_impl(g, *, index, shape):
    if _is_basic(index):
        out = np.empty(shape, dtype=np.result_type(g))
        zero_outside(out, index)
        out[index] = g  # a basic index names each entry at most once
    else:
        out = np.zeros(shape, dtype=np.result_type(g))
        np.add.at(out, index, g)
    return out


def zero_outside(out, index):
    """zero_outside(out, index): the entries of ``out`` outside the basic ``index`` set to 0, those
    inside left to be written next (the cotangent of ``x[index]``). When the index is a box of
    ranges (integers and slices of step 1) only the box's complement is written, instead of the
    whole array and then the box again.

    >>> out = np.ones(4); zero_outside(out, (slice(1, 3),)); out.tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    if len(index) > out.ndim or not all(type(i) is slice and i.step in (None, 1)
                                        or type(i) is int or isinstance(i, np.integer) for i in index):
        out.fill(0)
        return
    for axis, i in enumerate(index):
        n = out.shape[axis]
        if type(i) is slice:
            start, stop, _ = i.indices(n)
        else:
            start = int(i) % n if n else 0
            stop = start + 1
        before = (slice(None),) * axis
        out[before + (slice(0, start),)] = 0
        out[before + (slice(max(start, stop), n),)] = 0


scatter_add_p = Primitive("scatter_add", _scatter_impl)


def _getitem_jvp(t, out, x, *, index):
    return _index_lanes(t, lead_of(t, x), index, lambda a, i: getitem_p(a, index=i))


def _getitem_vjp(g, out, x, *, index):
    lead = lead_of(g, out)
    xs = _shape(x)
    if lead == 0:
        return scatter_add_p(g, index=index, shape=xs)
    lanes = _shape(g)[:lead]
    if _is_basic(index):
        return scatter_add_p(g, index=(slice(None),) * lead + index, shape=lanes + xs)
    index = _explicit(index, len(xs))
    return _lanes_first(scatter_add_p(_lanes_last(g, lead), index=index, shape=xs + lanes), lead)


def _scatter_jvp(t, out, g, *, index, shape):
    lead = lead_of(t, g)
    lanes = _shape(t)[:lead]
    if lead == 0:
        return scatter_add_p(t, index=index, shape=shape)
    if _is_basic(index):
        return scatter_add_p(t, index=(slice(None),) * lead + index, shape=lanes + shape)
    index = _explicit(index, len(shape))
    return _lanes_first(scatter_add_p(_lanes_last(t, lead), index=index, shape=shape + lanes), lead)


def _scatter_vjp(h, out, g, *, index, shape):
    return _index_lanes(h, lead_of(h, out), index, lambda a, i: getitem_p(a, index=i))


getitem_p.def_jvp(0, _getitem_jvp)
getitem_p.def_vjp(0, _getitem_vjp)


def _getitem_unreached(argnum, mask, out, x, *, index):
    """Entries of ``x`` that the index does not select, and selected entries all of whose
    selections have cotangents that are zero by structure (``mask``)."""
    unreached = np.ones(_shape(x), dtype=bool)
    if mask is not None and _is_basic(index):
        unreached[index] = mask
        return unreached
    unreached[index] = False
    if mask is not None:   # an entry an advanced index selects twice is reached through either
        reached = np.zeros(_shape(x), dtype=bool)
        np.logical_or.at(reached, index, ~np.broadcast_to(mask, _shape(out)))
        unreached |= ~reached
    return unreached


getitem_p.unreached = _getitem_unreached
getitem_p.def_sparsity(gather_rule(_getitem_impl))
scatter_add_p.def_jvp(0, _scatter_jvp)
scatter_add_p.def_vjp(0, _scatter_vjp)


def _scatter_sparsity(sets, out, g, *, index, shape):
    """Each entry of ``g`` lands on one entry of the result (repeated indices: several add up)."""
    destination = positions(shape)[index]
    spread = broadcast_sets(sets[0], np.shape(destination))
    return collect(spread, positions(np.shape(destination)), destination, shape)


scatter_add_p.def_sparsity(_scatter_sparsity)


def normalize_index(index):
    """normalize_index(index) -> tuple: a static index (lists become arrays; traced indices are refused)."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for i in index:
        if isinstance(i, Tracer):
            raise TypeError("an index cannot be a traced value; indices must not depend on the "
                            "differentiated inputs (use dnp.where to select by value)")
        if isinstance(i, (list, np.ndarray)):
            i = np.asarray(i)
            if i.dtype.kind not in "biu":
                raise IndexError(f"arrays used as indices must be of integer or boolean type, got {i.dtype}")
        out.append(i)
    return tuple(out)


def getitem(x, index):
    """getitem(x, index): ``x[index]`` for ints, slices, ``None``, ``...``, integer and boolean arrays."""
    return getitem_p(x, index=normalize_index(index))


def scatter_add(g, index, shape):
    """scatter_add(g, index, shape): zeros of ``shape`` with ``g`` added at ``index`` (repeats add up)."""
    return scatter_add_p(g, index=normalize_index(index), shape=tuple(shape))

# ---------------------------------------------------------------- concatenate


def _concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


concatenate_p = Primitive("concatenate", _concatenate_impl)


def _concatenate_jvp_all(tangents, out, *xs, axis):
    lead_shape = next(_shape(t)[:lead_of(t, x)] for t, x in zip(tangents, xs) if t is not None)
    dtype = np.result_type(*[_plain_dtype(x) for x in xs])
    parts = [t if t is not None else np.zeros(lead_shape + _shape(x), dtype) for t, x in zip(tangents, xs)]
    return concatenate_p(*parts, axis=axis % ndim(out) - ndim(out))


def _plain_dtype(x):
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.result_type(x)


def _joined_slices(out, xs, axis):
    """The index of each joined array's part of ``out`` (from the end, so that a cotangent's
    leading lanes come along)."""
    axis = axis % ndim(out)
    start = 0
    for x in xs:
        stop = start + _shape(x)[axis]
        yield (Ellipsis, slice(start, stop)) + (slice(None),) * (ndim(out) - axis - 1)
        start = stop


def _concatenate_vjp_all(g, needed, out, *xs, axis):
    """The cotangent of each joined array: its slice of ``g`` along the axis."""
    return [getitem_p(g, index=index) if wanted else None
            for index, wanted in zip(_joined_slices(out, xs, axis), needed)]


def _concatenate_unreached(argnum, mask, out, *xs, axis):
    """The entries of joined array ``argnum`` whose cotangent is zero by structure: its slice of
    the output's (an index after np.stack / dnp.array that skips an entry)."""
    if mask is None:
        return None
    index = list(_joined_slices(out, xs, axis))[argnum]
    return np.broadcast_to(mask, _shape(out))[index]


concatenate_p.jvp_all = _concatenate_jvp_all
concatenate_p.vjp_all = _concatenate_vjp_all
concatenate_p.unreached = _concatenate_unreached
concatenate_p.def_sparsity(gather_rule(_concatenate_impl))


@export()
def concatenate(arrays, axis=0):
    """concatenate(arrays, axis=0): arrays joined along an existing axis.

    >>> concatenate([np.ones(2), np.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    if not any(isinstance(a, Tracer) for a in arrays):
        return np.concatenate(arrays, axis=axis)
    arrays = [a if isinstance(a, Tracer) else np.asarray(a) for a in arrays]
    return concatenate_p(*arrays, axis=normalize_axis(axis, ndim(arrays[0]))[0])


@export()
def stack(arrays, axis=0):
    """stack(arrays, axis=0): arrays (or traced scalars and floats, mixed) joined along a new axis.

    >>> stack([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    arrays = list(arrays)
    if not any(isinstance(a, Tracer) for a in arrays):
        return np.stack(arrays, axis=axis)
    # Python numbers are weak, as in NumPy's promotion rules: they take the traced values' dtype
    dtype = np.result_type(*[a.dtype for a in arrays if isinstance(a, Tracer)])
    arrays = [np.asarray(a, dtype=dtype) if isinstance(a, (int, float)) else a for a in arrays]
    nd = ndim(arrays[0]) + 1
    axis = axis % nd
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis)


@export("array")
def array(obj, dtype=None, *, copy=True):
    """array(obj, dtype=None): an array from nested lists that may mix traced scalars and floats
    (a traced value: a copy, as NumPy's, converted to ``dtype``).

    >>> array([[1.0, 2.0], [3.0, 4.0]]).shape
    (2, 2)
    """
    if isinstance(obj, Tracer):
        return obj.astype(obj.dtype if dtype is None else dtype, copy=bool(copy))
    if isinstance(obj, (list, tuple)) and _contains_tracer(obj):
        stacked = stack([array(o) if isinstance(o, (list, tuple)) else o for o in obj])
        return stacked if dtype is None else stacked.astype(dtype, copy=False)
    return np.array(obj, dtype=dtype, copy=copy)


@export("asarray", "asanyarray")
def asarray(obj, dtype=None):
    """asarray(obj, dtype=None): :func:`array` without a copy of a traced value of that dtype.

    >>> asarray([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    return array(obj, dtype, copy=False if isinstance(obj, Tracer) else None)


@export("ascontiguousarray", "asfortranarray")
def ascontiguousarray(a, dtype=None, *, like=None):
    """ascontiguousarray(a, dtype=None): ``a`` with at least one axis (a traced value keeps no
    memory layout, so C and Fortran order are the same array).

    >>> ascontiguousarray(2.0).shape
    (1,)
    """
    out = asarray(a, dtype)
    return reshape(out, (1,)) if _shape(out) == () else out


def _contains_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False

# ---------------------------------------------------------------- composed shape functions


@export()
def expand_dims(x, axis):
    """expand_dims(x, axis): a new length-1 axis at ``axis``."""
    s = list(_shape(x))
    axes = sorted(a % (len(s) + len(np.atleast_1d(axis))) for a in np.atleast_1d(axis))
    for a in axes:
        s.insert(a, 1)
    return reshape(x, tuple(s))


@export()
def squeeze(x, axis=None):
    """squeeze(x, axis=None): length-1 axes removed."""
    s = _shape(x)
    axes = [i for i, n in enumerate(s) if n == 1] if axis is None else normalize_axis(axis, len(s))
    for a in axes:
        if s[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of length {s[a]}")
    return reshape(x, tuple(n for i, n in enumerate(s) if i not in axes))


@export("ravel")
def ravel(x, order="C"):
    """ravel(x, order="C"): the entries as a 1-D array, in C (row) or F (column) order. "A" and
    "K" follow the memory layout, which a traced value does not keep: refused for 2 axes or more."""
    if order in ("A", "K"):
        if ndim(x) > 1:
            raise NotImplementedError(f"ravel(order={order!r}) follows the memory layout, which a "
                                      f"traced value does not keep; pass order='C' or 'F'")
        order = "C"
    if order not in ("C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return reshape(x, (-1,), order=order)


@export()
def flip(x, axis=None):
    """flip(x, axis=None): entries in reverse order along ``axis`` (all axes by default)."""
    nd = ndim(x)
    axes = normalize_axis(axis, nd)
    index = tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(nd))
    return getitem_p(x, index=index)


@export()
def diagonal(x, offset=0, axis1=0, axis2=1):
    """diagonal(x, offset=0, axis1=0, axis2=1): the diagonal, as a last axis (NumPy's layout)."""
    nd = ndim(x)
    a1, a2 = axis1 % nd, axis2 % nd
    rest = [a for a in range(nd) if a not in (a1, a2)]
    x = transpose(x, rest + [a1, a2])
    n1, n2 = _shape(x)[-2:]
    rows = np.arange(max(0, -offset), min(n1, n2 - offset))
    return getitem_p(x, index=(Ellipsis, rows, rows + offset))


@export()
def diag(v, k=0):
    """diag(v, k=0): the k-th diagonal of a matrix, or a matrix with ``v`` on its k-th diagonal."""
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise ValueError("diag: input must be 1-D or 2-D")
    n = _shape(v)[0] + abs(k)
    i = np.arange(_shape(v)[0])
    rows, cols = (i, i + k) if k >= 0 else (i - k, i)
    return scatter_add(v, (rows, cols), (n, n))


@export()
def trace(x, offset=0, axis1=0, axis2=1):
    """trace(x, offset=0): the sum of a diagonal."""
    from .reductions import sum
    return sum(diagonal(x, offset, axis1, axis2), axis=-1)


def _triangle(x, k, lower):
    from .elementwise import where
    n, m = _shape(x)[-2:]
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return where(mask, x, 0.0)


@export()
def triu(x, k=0):
    """triu(x, k=0): the upper triangle, zeros below the k-th diagonal."""
    return _triangle(x, k, lower=False)


@export()
def tril(x, k=0):
    """tril(x, k=0): the lower triangle, zeros above the k-th diagonal."""
    return _triangle(x, k, lower=True)


@export()
def atleast_1d(*arys):
    """atleast_1d(*arys): each input with at least one axis (a scalar becomes shape ``(1,)``).

    >>> atleast_1d(2.0).shape
    (1,)
    """
    out = [reshape(a, (1,)) if ndim(a) == 0 else a for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


NAMESPACE["shape"] = _shape
NAMESPACE["ndim"] = ndim
NAMESPACE["size"] = lambda x: math.prod(_shape(x))
VALUE_ONLY.update(("shape", "ndim", "size"))
