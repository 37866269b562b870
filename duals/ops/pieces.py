"""Arrays cut into pieces, and arrays chosen piece by piece: ``split``, ``array_split``,
``hsplit``/``vsplit``/``dsplit``, ``unstack``, ``broadcast_arrays``, ``select``, ``piecewise`` and
``apply_along_axis``;
NumPy 2's cumulative and ``linalg`` spellings (``cumulative_sum``, ``vecdot``, ``matvec``,
``linalg.matrix_norm`` ...), a few other shapes of existing functions (``rollaxis``,
``diagflat``, ``resize``) and ``unwrap``.

All are composed from the shape primitives and ``where`` (``piecewise`` evaluates each function on
its own entries only, as NumPy does, and gathers the pieces), so every mode and order is exact.
Split points, conditions and axes are plain: they must not depend on the differentiated inputs.

>>> import duals
>>> duals.grad(lambda x: np.sum(np.split(x, 2)[1] ** 2))(np.arange(4.0)).tolist()
[0.0, 0.0, 4.0, 6.0]
"""
import numpy as np

from ..core import Tracer
from . import export, ndim_of as ndim, normalize_axis, shape_of as shape
from .assembly import float_only, operand, traced
from .elementwise import where
from .linalg import matmul
from .queries import plain
from .calculus import cumprod
from .reductions import cumsum, sum as _sum
from .shape import (broadcast_to, concatenate, diag, expand_dims, getitem, moveaxis, reshape,
                    scatter_add, transpose)


def _cut(x, bounds, axis):
    index = (slice(None),) * axis
    return [getitem(x, index + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


@export()
def array_split(ary, indices_or_sections, axis=0):
    """array_split(ary, indices_or_sections, axis=0): pieces along ``axis``; sections need not divide it.

    >>> [p.tolist() for p in array_split(np.arange(5.0), 2)]
    [[0.0, 1.0, 2.0], [3.0, 4.0]]
    """
    if not isinstance(ary, Tracer):
        return np.array_split(ary, indices_or_sections, axis)
    axis = normalize_axis(axis, ndim(ary))[0]
    n = shape(ary)[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
    else:
        bounds = np.concatenate([[0], np.asarray(indices_or_sections, dtype=int), [n]])
        bounds = np.clip(np.where(bounds < 0, bounds + n, bounds), 0, n)
    return _cut(ary, [int(b) for b in bounds], axis)


@export()
def split(ary, indices_or_sections, axis=0):
    """split(ary, indices_or_sections, axis=0): equal pieces (or pieces at the given indices).

    >>> [p.tolist() for p in split(np.arange(4.0), [1])]
    [[0.0], [1.0, 2.0, 3.0]]
    """
    if not isinstance(ary, Tracer):
        return np.split(ary, indices_or_sections, axis)
    if np.ndim(indices_or_sections) == 0 and shape(ary)[normalize_axis(axis, ndim(ary))[0]] % int(
            indices_or_sections):
        raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def _split_along(name, axis, least):
    def split_at(ary, indices_or_sections):
        if not isinstance(ary, Tracer):
            return getattr(np, name)(ary, indices_or_sections)
        if ndim(ary) < least:
            raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
        return split(ary, indices_or_sections, 1 if (name == "hsplit" and ndim(ary) > 1) else axis)
    split_at.__name__ = split_at.__qualname__ = name
    split_at.__doc__ = f"{name}(ary, indices_or_sections): :func:`split` along NumPy's axis for {name}."
    return export(name)(split_at)


hsplit = _split_along("hsplit", 0, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


@export()
def unstack(x, /, *, axis=0):
    """unstack(x, axis=0): the slices of ``x`` along ``axis``, as a tuple.

    >>> [p.tolist() for p in unstack(np.eye(2))]
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if not isinstance(x, Tracer):
        return np.unstack(x, axis=axis)
    axis = normalize_axis(axis, ndim(x))[0]
    return tuple(getitem(x, (slice(None),) * axis + (i,)) for i in range(shape(x)[axis]))


@export()
def broadcast_arrays(*args, subok=False):
    """broadcast_arrays(*args): the arrays broadcast to their common shape.

    >>> [a.shape for a in broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    if not traced(*args):
        return np.broadcast_arrays(*args, subok=subok)
    common = np.broadcast_shapes(*[shape(operand(a)) for a in args])
    return tuple(broadcast_to(operand(a), common) for a in args)


@export()
def select(condlist, choicelist, default=0):
    """select(condlist, choicelist, default=0): per entry, the choice of the first condition that holds.

    >>> select([np.array([True, False]), np.array([True, True])], [1.0, 2.0], 0.0).tolist()
    [1.0, 2.0]
    """
    if not traced(choicelist, default):
        return np.select(plain(condlist), choicelist, default)
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    result = default
    for condition, choice in zip(reversed(condlist), reversed(choicelist)):
        if isinstance(condition, Tracer) or np.asarray(condition).dtype != bool:
            raise TypeError("select: every condition must be a boolean array (compare the values "
                            "first: x > 0 gives one)")
        result = where(condition, choice, result)
    return result


@export()
def piecewise(x, condlist, funclist, *args, **kw):
    """piecewise(x, condlist, funclist, *args, **kw): each function (or constant) evaluated on the
    entries of ``x`` where its condition holds, later conditions winning; zero elsewhere, or the
    extra last function's value where no condition holds.

    >>> piecewise(np.array([-1.0, 2.0]), [np.array([True, False])], [lambda v: -v, lambda v: v * v]).tolist()
    [1.0, 4.0]
    """
    if not traced(x):
        return np.piecewise(x, plain(condlist), funclist, *args, **kw)
    x = operand(x)
    if isinstance(condlist, Tracer):
        raise TypeError("piecewise: the conditions must be boolean arrays, not traced values")
    conditions = plain(condlist)
    if isinstance(conditions, np.ndarray) and conditions.ndim == ndim(x) and conditions.dtype == bool:
        conditions = [conditions]
    conditions = [np.broadcast_to(np.asarray(c, dtype=bool), shape(x)) for c in conditions]
    if len(funclist) == len(conditions) + 1:
        conditions.append(~np.any(conditions, axis=0) if conditions else np.ones(shape(x), bool))
    elif len(funclist) != len(conditions):
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                         f"{len(conditions) + 1} functions are expected")
    result, taken = None, np.zeros(shape(x), bool)
    for k in range(len(conditions) - 1, -1, -1):      # a later condition wins: take it first
        kept = conditions[k] & ~taken
        taken |= kept
        if not kept.any():
            continue
        func = funclist[k]
        if callable(func):
            values = func(getitem(x, conditions[k]), *args, **kw)
            values = getitem(broadcast_to(operand(values), (int(conditions[k].sum()),)), kept[conditions[k]])
        else:
            values = np.full(int(kept.sum()), func, dtype=x.dtype)   # NumPy casts into x's dtype
        if not isinstance(values, Tracer):
            values = np.asarray(values)
        piece = scatter_add(values, kept, shape(x)) if isinstance(values, Tracer) else _placed(values, kept)
        result = piece if result is None else result + piece
    if result is None:    # no condition holds anywhere: NumPy's zeros
        return np.zeros(shape(x), x.dtype)
    return result


def _placed(values, mask):
    out = np.zeros(mask.shape, values.dtype)
    out[mask] = values
    return out


@export()
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """apply_along_axis(func1d, axis, arr, *args, **kwargs): ``func1d`` applied to every 1-D slice
    along ``axis``, its results put where that axis was (NumPy's layout).

    >>> apply_along_axis(lambda v: v[::-1], 1, np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[2.0, 1.0], [4.0, 3.0]]
    """
    if not traced(arr):
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    arr = operand(arr)
    nd = ndim(arr)
    axis = normalize_axis(axis, nd)[0]
    moved = moveaxis(arr, axis, -1)
    lead = shape(moved)[:-1]
    if 0 in lead:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [func1d(getitem(moved, index + (slice(None),)), *args, **kwargs) for index in np.ndindex(*lead)]
    if not any(isinstance(r, Tracer) for r in results):
        out = np.asarray(results)
        return np.moveaxis(out.reshape(lead + out.shape[1:]), range(len(lead), out.ndim), range(axis, axis + out.ndim - 1))
    from .shape import stack
    out = stack(results)
    inner = ndim(out) - 1
    out = reshape(out, lead + shape(out)[1:])
    order = list(range(axis)) + list(range(len(lead), len(lead) + inner)) + list(range(axis, len(lead)))
    return transpose(out, order)


# ---------------------------------------------------------------- NumPy 2's spellings, other shapes

@export()
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumulative_sum(x, axis=None, include_initial=False): ``cumsum``, optionally starting with 0.

    >>> cumulative_sum(np.array([1.0, 2.0]), include_initial=True).tolist()
    [0.0, 1.0, 3.0]
    """
    return _cumulative(cumsum, "cumulative_sum", 0.0, x, axis, dtype, include_initial)


@export()
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumulative_prod(x, axis=None, include_initial=False): ``cumprod``, optionally starting with 1.

    >>> cumulative_prod(np.array([2.0, 3.0])).tolist()
    [2.0, 6.0]
    """
    return _cumulative(cumprod, "cumulative_prod", 1.0, x, axis, dtype, include_initial)


def _cumulative(scan, name, start, x, axis, dtype, include_initial):
    if not isinstance(x, Tracer):
        return getattr(np, name)(x, axis=axis, dtype=dtype, include_initial=include_initial)
    float_only(name, dtype)
    if axis is None:
        if ndim(x) > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one dimension")
        axis = 0
    axis = normalize_axis(axis, ndim(x))[0]
    out = scan(x, axis=axis)
    if not include_initial:
        return out
    first = np.full(shape(x)[:axis] + (1,) + shape(x)[axis + 1:], start, dtype=x.dtype)
    return concatenate([first, out], axis=axis)


@export()
def resize(a, new_shape):
    """resize(a, new_shape): the entries of ``a`` (flattened) repeated cyclically to fill ``new_shape``.

    >>> resize(np.array([1.0, 2.0, 3.0]), (2, 2)).tolist()
    [[1.0, 2.0], [3.0, 1.0]]
    """
    if not isinstance(a, Tracer):
        return np.resize(a, new_shape)
    new_shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(n) for n in new_shape)
    if any(n < 0 for n in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat, total = reshape(a, (-1,)), int(np.prod(new_shape))
    n = shape(flat)[0]
    if n == 0 or total == 0:
        return np.zeros(new_shape, a.dtype)
    copies = -(-total // n)
    filled = concatenate([flat] * copies) if copies > 1 else flat
    return reshape(getitem(filled, slice(0, total)), new_shape)


@export()
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """unwrap(p, discont=None, axis=-1, period=2π): NumPy's unwrapped phases; the jumps it removes
    are whole periods, constant where they occur, so the derivative is the phases' own.

    >>> unwrap(np.array([0.0, 3.0, -3.0])).round(3).tolist()
    [0.0, 3.0, 3.283]
    """
    if not any(isinstance(v, Tracer) for v in (p, discont, period)):
        return np.unwrap(p, discont, axis, period=period)
    from .elementwise import stop_gradient
    values, step = plain(p), plain(period)
    unwrapped = np.unwrap(values, plain(discont) if discont is not None else None, axis, period=step)
    out = stop_gradient(unwrapped)   # NumPy's value; where it jumps is decided by value (discont's slope 0)
    if isinstance(p, Tracer):
        out = out + (p - stop_gradient(p))
    if isinstance(period, Tracer):   # k whole periods added: slope k in the period
        out = out + np.round((unwrapped - values) / step) * (period - stop_gradient(period))
    return out


@export()
def rollaxis(a, axis, start=0):
    """rollaxis(a, axis, start=0): ``axis`` moved to just before ``start`` (NumPy's older spelling).

    >>> rollaxis(np.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    if not isinstance(a, Tracer):
        return np.rollaxis(a, axis, start)
    nd = ndim(a)
    sizes = np.lib.stride_tricks.as_strided(np.zeros(1), shape=tuple(range(1, nd + 1)), strides=(0,) * nd)
    return transpose(a, [s - 1 for s in np.rollaxis(sizes, axis, start).shape])


@export()
def diagflat(v, k=0):
    """diagflat(v, k=0): a matrix with the flattened ``v`` on its ``k``-th diagonal.

    >>> diagflat(np.array([[1.0, 2.0]])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if not isinstance(v, Tracer):
        return np.diagflat(v, k)
    return diag(reshape(v, (-1,)), k)


@export("vecdot", "linalg.vecdot")
def vecdot(x1, x2, /, *, axis=-1):
    """vecdot(x1, x2, axis=-1): ``Σ conj(x1) · x2`` along ``axis``, broadcasting the rest.

    >>> float(vecdot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    if not traced(x1, x2):
        return np.vecdot(x1, x2, axis=axis)
    from .complex_parts import conj   # a real x1 is returned as it is
    return _sum(conj(operand(x1)) * operand(x2), axis=axis)


@export()
def matvec(x1, x2, /):
    """matvec(x1, x2): matrix-vector products over the last axes, broadcasting the rest.

    >>> matvec(np.eye(2) * 2.0, np.array([1.0, 3.0])).tolist()
    [2.0, 6.0]
    """
    if not traced(x1, x2):
        return np.matvec(x1, x2)
    return getitem(matmul(operand(x1), expand_dims(operand(x2), -1)), (Ellipsis, 0))


@export()
def vecmat(x1, x2, /):
    """vecmat(x1, x2): vector-matrix products ``conj(x1) @ x2`` over the last axes.

    >>> vecmat(np.array([1.0, 3.0]), np.eye(2) * 2.0).tolist()
    [2.0, 6.0]
    """
    if not traced(x1, x2):
        return np.vecmat(x1, x2)
    from .complex_parts import conj   # a real x1 is returned as it is
    return getitem(matmul(expand_dims(conj(operand(x1)), -2), operand(x2)), (Ellipsis, 0, slice(None)))


def _linalg_spellings():
    from .norms import norm
    from .products import cross
    from .shape import diagonal, trace
    from .linalg import outer

    @export("linalg.matrix_norm")
    def matrix_norm(x, /, *, keepdims=False, ord="fro"):
        """matrix_norm(x, keepdims=False, ord="fro"): ``norm`` over the last two axes."""
        return norm(x, ord, axis=(-2, -1), keepdims=keepdims)

    @export("linalg.vector_norm")
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
        """vector_norm(x, axis=None, keepdims=False, ord=2): a vector norm of all entries or along ``axis``."""
        if axis is None:
            flat = norm(reshape(operand(x), (-1,)), ord)
            return reshape(flat, (1,) * ndim(x)) if keepdims else flat
        return norm(x, ord, axis=axis, keepdims=keepdims)

    @export("linalg.outer")
    def linalg_outer(x1, x2, /):
        """outer(x1, x2): the outer product of two vectors (``linalg``'s spelling: 1-d only)."""
        if ndim(x1) != 1 or ndim(x2) != 1:
            raise ValueError("linalg.outer: x1 and x2 must be 1-dimensional")
        return outer(x1, x2)

    @export("linalg.trace")
    def linalg_trace(x, /, *, offset=0, dtype=None):
        """trace(x, offset=0): the trace over the last two axes (``linalg``'s spelling)."""
        return trace(x, offset, -2, -1)

    @export("linalg.diagonal")
    def linalg_diagonal(x, /, *, offset=0):
        """diagonal(x, offset=0): the diagonal of the last two axes (``linalg``'s spelling)."""
        return diagonal(x, offset, -2, -1)

    @export("linalg.cross")
    def linalg_cross(x1, x2, /, *, axis=-1):
        """cross(x1, x2, axis=-1): the cross product of 3-vectors along ``axis``."""
        return cross(x1, x2, axis=axis)

    export("linalg.matmul")(matmul)


_linalg_spellings()
