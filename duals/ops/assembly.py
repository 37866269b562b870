"""Arrays assembled from others: stacking (``vstack``, ``hstack``, ``column_stack``, ``dstack``,
``append``, ``block``), ``atleast_2d``/``atleast_3d``, tiling and repeating (``tile``, ``repeat``),
``roll``, ``pad``, taking by indices (``take``, ``take_along_axis``) and the flips
``flipud``/``fliplr``/``rot90`` (grids are in :mod:`duals.ops.grids`).

All are composed from the shape primitives (``reshape``, ``broadcast_to``, ``transpose``,
``getitem``, ``concatenate``), so they are linear in the traced values and every mode and order
is exact. Indices and repeat counts are plain: they must not depend on the
differentiated inputs.

>>> import duals
>>> duals.grad(lambda x: np.sum(np.tile(x, 3)))(np.ones(2)).tolist()
[3.0, 3.0]
"""
import numpy as np

from ..core import Tracer
from . import dtype_of, export, innermost, list_as_array, ndim_of as ndim, normalize_axis, shape_of as shape
from .shape import atleast_1d, broadcast_to, concatenate, flip, getitem, reshape, transpose


def traced(*xs):
    return any(isinstance(x, Tracer) or (isinstance(x, (list, tuple)) and traced(*x)) for x in xs)


def operand(x):
    """operand(x): a traced value as it is, anything else (lists, floats) as a NumPy array."""
    return x if isinstance(x, Tracer) else np.asarray(x)


def float_only(name, dtype):
    """Refuse a non-float ``dtype=`` (it would truncate the derivative), naming ``name``."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"{name}(..., dtype={np.dtype(dtype)}) of traced values would drop the "
                        f"derivative; keep a float dtype (round the result afterwards if needed)")


def _plain_index(indices, name):
    if isinstance(indices, Tracer):
        raise TypeError(f"{name}: the indices cannot be a traced value; indices must not depend on "
                        f"the differentiated inputs (compute them from the plain value, or use np.where)")
    return np.asarray(indices)


def _one_or_tuple(results):
    return results[0] if len(results) == 1 else tuple(results)


def _along(axis, index):
    return (slice(None),) * axis + (index,)

# ---------------------------------------------------------------- stacking


@export()
def atleast_2d(*arys):
    """atleast_2d(*arys): each input viewed with at least two axes (new ones in front).

    >>> atleast_2d(np.ones(3)).shape
    (1, 3)
    """
    arys = [operand(a) for a in arys]
    return _one_or_tuple([reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a for a in arys])


@export()
def atleast_3d(*arys):
    """atleast_3d(*arys): each input viewed with at least three axes, NumPy's layout ((n,) -> (1, n, 1)).

    >>> atleast_3d(np.ones((2, 3))).shape
    (2, 3, 1)
    """
    def three(a):
        s = shape(a)
        return a if len(s) >= 3 else reshape(a, {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)])
    return _one_or_tuple([three(operand(a)) for a in arys])


@export()
def vstack(tup, *, dtype=None, casting="same_kind"):
    """vstack(tup): arrays stacked as rows (1-D inputs become rows).

    >>> vstack([np.ones(2), np.zeros(2)]).shape
    (2, 2)
    """
    float_only("vstack", dtype)
    return concatenate([atleast_2d(a) for a in tup], axis=0)


@export()
def hstack(tup, *, dtype=None, casting="same_kind"):
    """hstack(tup): arrays joined along their second axis (the first for 1-D inputs).

    >>> hstack([np.ones(2), np.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    float_only("hstack", dtype)
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, axis=0 if arrays and ndim(arrays[0]) == 1 else 1)


@export()
def dstack(tup):
    """dstack(tup): arrays stacked along a third axis.

    >>> dstack([np.ones(2), np.zeros(2)]).shape
    (1, 2, 2)
    """
    return concatenate([atleast_3d(a) for a in tup], axis=2)


@export()
def column_stack(tup):
    """column_stack(tup): 1-D arrays as the columns of a 2-D array (2-D ones joined as they are).

    >>> column_stack([np.ones(3), np.zeros(3)]).shape
    (3, 2)
    """
    tup = [operand(v) for v in tup]
    return concatenate([reshape(v, (-1, 1)) if ndim(v) < 2 else v for v in tup], axis=1)


@export()
def block(arrays):
    """block(arrays): an array assembled from nested lists of blocks, as NumPy's ``np.block``: the
    innermost lists join along the last axis, the next ones along the one before, and so on.

    >>> block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.full((1, 1), 5.0)]]).shape
    (3, 3)
    """
    if not traced(arrays):
        return np.block(arrays)
    depth, most = _block_depth(arrays, ())
    rank = max(depth, most)

    def joined(x, level):
        if isinstance(x, list):
            return concatenate([joined(part, level + 1) for part in x], axis=level - depth)
        x = operand(x)
        return reshape(x, (1,) * (rank - ndim(x)) + shape(x))
    return joined(arrays, 0)


def _block_depth(x, index):
    """(nesting depth of the lists, the largest ndim of a block); NumPy's errors for tuples, empty
    lists and uneven nesting."""
    if isinstance(x, tuple):
        raise TypeError(f"arrays{''.join(f'[{i}]' for i in index)} is a tuple. Only lists can be used "
                        f"to arrange blocks, and np.block does not allow implicit conversion from "
                        f"tuple to ndarray.")
    if not isinstance(x, list):
        return 0, ndim(x)
    if not x:
        raise ValueError(f"List at arrays{''.join(f'[{i}]' for i in index)} cannot be empty")
    found = [_block_depth(part, index + (i,)) for i, part in enumerate(x)]
    if len({d for d, _ in found}) > 1:
        raise ValueError("List depths are mismatched in np.block: every block must sit at the same "
                         "depth of nesting")
    return found[0][0] + 1, max(m for _, m in found)


@export()
def append(arr, values, axis=None):
    """append(arr, values, axis=None): ``values`` joined at the end (both flattened when ``axis`` is None).

    >>> append(np.ones(2), 0.0).tolist()
    [1.0, 1.0, 0.0]
    """
    arr, values = operand(arr), operand(values)
    if axis is None:
        return concatenate([reshape(arr, (-1,)), reshape(values, (-1,))], axis=0)
    return concatenate([arr, values], axis=axis)

# ---------------------------------------------------------------- tiling and repeating


def interleave(a, b):
    """interleave(a, b) -> (a[0], b[0], a[1], b[1], ...)."""
    return tuple(v for pair in zip(a, b) for v in pair)


@export()
def tile(A, reps):
    """tile(A, reps): ``A`` repeated ``reps`` times along each axis (a broadcast: copies share the derivative).

    >>> tile(np.array([1.0, 2.0]), (2, 2)).tolist()
    [[1.0, 2.0, 1.0, 2.0], [1.0, 2.0, 1.0, 2.0]]
    """
    A = operand(A)
    reps = tuple(int(r) for r in np.atleast_1d(_plain_index(reps, "tile")))
    s = shape(A)
    d = max(len(reps), len(s))
    s = (1,) * (d - len(s)) + s
    reps = (1,) * (d - len(reps)) + reps
    spread = broadcast_to(reshape(A, interleave((1,) * d, s)), interleave(reps, s))
    return reshape(spread, tuple(r * n for r, n in zip(reps, s)))


@export()
def repeat(a, repeats, axis=None):
    """repeat(a, repeats, axis=None): each entry repeated ``repeats`` times (flattened when ``axis`` is None).

    >>> repeat(np.array([1.0, 2.0]), 2).tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    a, repeats = operand(a), _plain_index(repeats, "repeat")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axis(axis, ndim(a))[0]
    return getitem(a, _along(axis, np.repeat(np.arange(shape(a)[axis]), repeats)))


# ---------------------------------------------------------------- rolling and padding


@export()
def roll(a, shift, axis=None):
    """roll(a, shift, axis=None): entries shifted cyclically along ``axis`` (flattened when None).

    >>> roll(np.array([1.0, 2.0, 3.0]), 1).tolist()
    [3.0, 1.0, 2.0]
    """
    a = operand(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), shape(a))
    nd = ndim(a)
    shifts = {}
    for sh, ax in np.broadcast(_plain_index(shift, "roll"), axis):
        ax = normalize_axis(int(ax), nd)[0]
        shifts[ax] = shifts.get(ax, 0) + int(sh)
    for ax, sh in shifts.items():
        n = shape(a)[ax]
        k = sh % n if n else 0
        if k:
            a = concatenate([getitem(a, _along(ax, slice(n - k, n))), getitem(a, _along(ax, slice(0, n - k)))],
                            axis=ax)
    return a


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


@export()
def pad(array, pad_width, mode="constant", **kwargs):
    """pad(array, pad_width, mode="constant", **kwargs): ``array`` with borders added on each axis.

    Modes ``constant`` (``constant_values`` plain or traced: a scalar, a pair, one pair per
    axis), ``edge``, ``reflect``, ``symmetric`` (also ``reflect_type="odd"``) and ``wrap``; border
    entries copy the derivative of the entries they repeat (odd reflections: ``2 edge - x``).
    ``pad_width`` as NumPy takes it, a dict ``{axis: width}`` too.

    >>> pad(np.array([1.0, 2.0]), 1, mode="edge").tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    if not traced(array, kwargs.get("constant_values")) and not _holds_traced(kwargs.get("constant_values")):
        return np.pad(array, pad_width, mode=mode, **kwargs)
    array = operand(array)
    widths = _pad_widths(pad_width, ndim(array))
    if mode == "constant":
        extra = set(kwargs) - {"constant_values"}
        if not extra:
            return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    elif mode in _INDEX_MODES:
        extra = set(kwargs) - ({"reflect_type"} if mode in ("reflect", "symmetric") else set())
        if not extra:
            odd = kwargs.get("reflect_type", "even") == "odd"
            for ax, (before, after) in enumerate(widths):
                if before or after:
                    array = (_pad_odd if odd else _pad_by_index)(array, ax, before, after, mode, kwargs)
            return array
    else:
        extra = ()
    if extra:
        raise TypeError(f"pad: unsupported keyword(s) {sorted(extra)} for mode={mode!r}")
    raise NotImplementedError(
        f"numpy.pad with mode={mode!r} has no derivative rule in duals on traced values; supported "
        f"modes are 'constant', {', '.join(repr(m) for m in _INDEX_MODES)}. Build the border with "
        f"np.concatenate of computed slices instead")


def _holds_traced(values):
    return isinstance(values, (tuple, list)) and any(
        isinstance(v, Tracer) or _holds_traced(v) for v in values)


def _pad_widths(pad_width, nd):
    """NumPy's ``pad_width`` (an int, a pair, a pair per axis, or a dict {axis: int or pair}) as a
    list of ``[before, after]`` per axis."""
    if isinstance(pad_width, dict):
        widths = [[0, 0] for _ in range(nd)]
        for ax, width in pad_width.items():
            widths[normalize_axis(ax, nd)[0]] = np.broadcast_to(_integral_widths(width), (2,)).tolist()
        return widths
    return np.broadcast_to(_integral_widths(pad_width), (nd, 2)).tolist()


def _integral_widths(width):
    widths = np.asarray(_plain_index(width, "pad"))
    if widths.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    return widths


def _pad_by_index(x, ax, before, after, mode, kwargs):
    index = np.pad(np.arange(shape(x)[ax]), (before, after), mode=mode, **kwargs)
    return getitem(x, _along(ax, index))


def _pad_odd(x, ax, before, after, mode, kwargs):
    """An odd reflection, ``2 edge - x`` at each turn: linear in ``x``, so the border is the
    product with NumPy's own padding of the identity matrix (its border rows)."""
    from .linalg import matmul
    from .shape import moveaxis
    n = shape(x)[ax]
    rows = np.pad(np.eye(n, dtype=dtype_of(x)), ((before, after), (0, 0)), mode=mode, **kwargs)
    moved = moveaxis(x, ax, -1)
    parts = [matmul(moved, rows[:before].T)] if before else []
    parts.append(moved)
    if after:
        parts.append(matmul(moved, rows[before + n:].T))
    return moveaxis(concatenate(parts, axis=-1), -1, ax)


def _pad_constant(x, widths, values):
    dtype = dtype_of(x)
    values = list_as_array(values)   # a pair, or a pair per axis, of numbers (traced or not)
    nd = len(widths)
    if isinstance(values, Tracer):
        values = values if ndim(values) == 0 else broadcast_to(values, (nd, 2))
    else:
        values = np.broadcast_to(np.asarray(values), (nd, 2))
    for ax, (before, after) in enumerate(widths):
        parts = []
        for width, side in ((before, 0), (after, 1)):
            s = list(shape(x))
            s[ax] = width
            if isinstance(values, Tracer):
                value = values if ndim(values) == 0 else getitem(values, (ax, side))
                block = broadcast_to(value, tuple(s))
            else:
                block = np.full(s, values[ax][side], dtype=dtype)
            parts.append(block if width else None)
        if parts[0] is not None or parts[1] is not None:
            x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
    return x

@export("lib.stride_tricks.sliding_window_view")
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """sliding_window_view(x, window_shape, axis=None): NumPy's windows of ``x`` (a convolution's
    im2col), each entry the entry of ``x`` it shows, so its derivative is gathered likewise.

    >>> sliding_window_view(np.arange(4.0), 2).tolist()
    [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    if not isinstance(x, Tracer):
        return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis, subok=subok,
                                                        writeable=writeable)
    if writeable:
        raise ValueError("sliding_window_view(writeable=True) of a traced value: a traced value "
                         "cannot be written through a view; build the new array instead")
    size, dims = int(np.prod(shape(x))), tuple(shape(x))
    positions = np.lib.stride_tricks.sliding_window_view(np.arange(size).reshape(dims), window_shape, axis)
    out = take(reshape(x, (size,)), positions)
    _same_memory(out, x)   # NumPy's windows are a view: a later x += ... shows through them
    return out


def _same_memory(view, x):
    from ..core import Family
    if x._family is None:
        x._family = Family()
    view._family = x._family


# ---------------------------------------------------------------- taking by indices


@export()
def take(a, indices, axis=None, out=None, mode="raise"):
    """take(a, indices, axis=None, mode="raise"): entries at plain ``indices`` along ``axis`` (flattened when None).

    >>> take(np.array([1.0, 2.0, 3.0]), [2, 0]).tolist()
    [3.0, 1.0]
    """
    if out is not None:
        raise TypeError("take(..., out=...) cannot write a traced value into an array; drop out=")
    a, idx = operand(a), _plain_index(indices, "take")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axis(axis, ndim(a))[0]
    n = shape(a)[axis]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    return getitem(a, _along(axis, idx if idx.ndim else int(idx)))


@export()
def take_along_axis(arr, indices, axis=-1):
    """take_along_axis(arr, indices, axis=-1): ``arr`` gathered by plain ``indices`` along one axis.

    >>> take_along_axis(np.array([[1.0, 2.0]]), np.array([[1, 0]]), 1).tolist()
    [[2.0, 1.0]]
    """
    arr, indices = operand(arr), _plain_index(indices, "take_along_axis")
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    nd = ndim(arr)
    if indices.ndim != nd:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis(axis, nd)[0]
    index = tuple(indices if k == axis else
                  np.arange(n).reshape(tuple(-1 if j == k else 1 for j in range(nd)))
                  for k, n in enumerate(shape(arr)))
    return getitem(arr, index)

# ---------------------------------------------------------------- flips


@export()
def flipud(m):
    """flipud(m): rows in reverse order (axis 0).

    >>> flipud(np.array([1.0, 2.0])).tolist()
    [2.0, 1.0]
    """
    m = operand(m)
    if ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


@export()
def fliplr(m):
    """fliplr(m): columns in reverse order (axis 1).

    >>> fliplr(np.array([[1.0, 2.0]])).tolist()
    [[2.0, 1.0]]
    """
    m = operand(m)
    if ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


@export()
def rot90(m, k=1, axes=(0, 1)):
    """rot90(m, k=1, axes=(0, 1)): ``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``.

    >>> rot90(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[2.0, 4.0], [1.0, 3.0]]
    """
    m, axes = operand(m), tuple(axes)
    nd = ndim(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if not (-nd <= axes[0] < nd and -nd <= axes[1] < nd):
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(nd))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    return transpose(flip(m, axes[1]), order) if k == 1 else flip(transpose(m, order), axes[1])



class AxisConcatenator:
    """``r_[...]`` / ``c_[...]``: NumPy's index-expression concatenation, for traced values too.

    Entries are arrays (traced or plain), scalars and slices (``1:10``, ``0:1:5j``); a first
    string entry ``"axis[,ndmin[,trans1d]]"`` sets the axis, the minimum number of axes and
    where a promoted 1-D entry goes, as in NumPy. The matrix directives ``"r"``/``"c"`` make
    ``numpy.matrix`` objects, which duals does not trace.
    """

    def __init__(self, numpy_object, axis, ndmin, trans1d):
        self._numpy, self._axis, self._ndmin, self._trans1d = numpy_object, axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if not traced(*key):
            return self._numpy[key]
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        if isinstance(key[0], str):
            directive, key = key[0], key[1:]
            if directive in ("r", "c"):
                raise NotImplementedError(f"the matrix directive {directive!r} of r_/c_ builds a "
                                          f"numpy.matrix, which cannot hold traced values")
            try:
                numbers = [int(v) for v in directive.split(",")]
            except ValueError:
                raise ValueError(f"unknown special directive {directive!r}") from None
            axis, ndmin, trans1d = (numbers + [ndmin, trans1d][len(numbers) - 1:])[:3]
        parts = [self._promote(item, ndmin, trans1d) for item in key]
        if any(isinstance(item, str) for item in key):
            raise ValueError("special directives must be the first entry.")
        return concatenate(parts, axis=axis)

    @staticmethod
    def _promote(item, ndmin, trans1d):
        if isinstance(item, slice):
            start, stop, step = item.start or 0, item.stop, 1 if item.step is None else item.step
            item = (np.linspace(start, stop, num=int(abs(step))) if isinstance(step, complex)
                    else np.arange(start, stop, step))
            if ndmin > 1:
                item = np.array(item, ndmin=ndmin)
                return np.swapaxes(item, -1, trans1d) if trans1d != -1 else item
            return item
        item = operand(item)
        item_ndim = ndim(item)
        if item_ndim >= ndmin:
            return item
        item = reshape(item, (1,) * (ndmin - item_ndim) + shape(item))
        if trans1d != -1 and item_ndim:
            k2, k1 = ndmin - item_ndim, trans1d
            if k1 < 0:
                k1 += k2 + 1
            axes = list(range(ndmin))
            item = transpose(item, axes[:k1] + axes[k2:] + axes[k1:k2])
        return item


r_ = export("r_")(AxisConcatenator(np.r_, 0, 1, -1))
r_.__doc__ = """r_[...]: entries joined along the first axis (NumPy's ``np.r_``), traced ones too.

    >>> r_[np.array([1.0, 2.0]), 3.0, 0:2].tolist()
    [1.0, 2.0, 3.0, 0.0, 1.0]
    """
c_ = export("c_")(AxisConcatenator(np.c_, -1, 2, 0))
c_.__doc__ = """c_[...]: entries joined along the last axis, 1-D ones as columns (NumPy's ``np.c_``).

    >>> c_[np.array([1.0, 2.0]), np.array([3.0, 4.0])].tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
