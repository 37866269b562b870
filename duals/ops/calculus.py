"""Discrete calculus: ``diff`` (with ``n``, ``prepend``/``append``), ``gradient`` (central
differences, one-sided at the edges), ``cumprod`` and trapezoidal integration (``trapezoid``, and
``trapz`` where NumPy still has it), and the running extremes ``np.maximum.accumulate`` and
``np.minimum.accumulate``.

The linear ones on the common path are primitives paired with their transposes: the first
difference, the uniform-step gradient with first-order edges, the trapezoidal rule with a
plain scalar step (each a NumPy expression, so the reverse rule is one pass, not slices and
scatters). Traced or non-uniform spacings, second-order edges and sample points ``x`` are
composed from ``getitem``, ``concatenate``, ``sum`` and multiplication. ``cumprod`` is a primitive (NumPy's value) whose derivatives are linear
recurrences, ``dp_k = x_k dp_{k-1} + p_{k-1} dx_k`` forward and its transpose backward (one
pass each, a primitive of its own): exact, zeros included, where a quotient ``cumprod / x``
would divide by an entry.

>>> import duals
>>> duals.grad(lambda x: np.trapezoid(x ** 2))(np.array([0.0, 1.0, 2.0])).tolist()
[0.0, 2.0, 2.0]
"""
from types import SimpleNamespace

import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import along_axis, axis_rule, broadcast as broadcast_sets, reduced, union
from . import dtype_of, export, innermost, ndim_of as ndim, negative_into, normalize_axis, shape_of as shape
from . import list_as_array, lists_as_arrays
from .reductions import refuse_out_and_integer_dtype, sum as _sum, unbroadcast
from .assembly import operand
from .elementwise import align, where
from .fused_vjp import READS
from .shape import broadcast_to, concatenate, getitem, moveaxis, reshape

_ABSENT = object()


def _along(axis, nd, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (nd - axis - 1)


def _difference_impl(x, *, axis):
    return np.diff(x, axis=axis)


def _difference_transpose_impl(g, *, axis):
    """``-g[0], g[0] - g[1], ..., g[-2] - g[-1], g[-1]`` along ``axis`` (counted from the right):
    the transpose of ``diff``."""
    axis = axis - g.ndim if axis >= 0 else axis

    def at(index):
        return (Ellipsis, index) + (slice(None),) * (-axis - 1)
    shape = list(g.shape)
    shape[axis] += 1
    out = np.empty(shape, g.dtype)
    negative_into(g[at(slice(None, 1))], out[at(slice(None, 1))])
    np.subtract(g[at(slice(None, -1))], g[at(slice(1, None))], out=out[at(slice(1, -1))])
    out[at(slice(-1, None))] = g[at(slice(-1, None))]
    return out


def _difference_fused_jvp(primals, tangents, *, axis):
    """The differences of the value and of the tangent lanes, without the rule's second bind."""
    return _difference_impl(primals[0], axis=axis), _difference_impl(tangents[0], axis=axis)


# the first difference along ``axis`` (counted from the right, so lanes sit in front) and its
# transpose: each is the other's reverse rule and its own forward rule
difference_p = Primitive("difference", _difference_impl)
difference_transpose_p = Primitive("difference_transpose", _difference_transpose_impl)
difference_p.def_jvp(0, lambda t, out, x, *, axis: difference_p(t, axis=axis))
difference_p.fused_jvp = _difference_fused_jvp
difference_p.def_vjp(0, lambda g, out, x, *, axis: difference_transpose_p(g, axis=axis)
                     if shape(x)[axis] > 1 else None)   # no differences: nothing depends on x
difference_transpose_p.def_jvp(0, lambda t, out, g, *, axis: difference_transpose_p(t, axis=axis))
difference_transpose_p.def_vjp(0, lambda h, out, g, *, axis: difference_p(h, axis=axis))


def _neighbours(m, *rest, **params):
    """Difference ``k`` reads entries ``k`` and ``k + 1``: (output entries, input entries)."""
    k = np.arange(m - 1)
    return np.concatenate([k, k]), np.concatenate([k, k + 1])


def _swapped(local):
    """The local pattern of the transpose: the same pairs read the other way."""
    def transposed(m, out, g, **params):
        axis = params["axis"]
        dst, src = local(np.shape(innermost(out))[axis], out, g, **params)
        return src, dst
    return transposed


difference_p.def_sparsity(axis_rule(_neighbours))
difference_transpose_p.def_sparsity(axis_rule(_swapped(_neighbours)))


@export()
def diff(a, n=1, axis=-1, prepend=_ABSENT, append=_ABSENT):
    """diff(a, n=1, axis=-1, prepend=, append=): the ``n``-th forward difference along ``axis``.

    >>> diff(np.array([1.0, 4.0, 9.0])).tolist()
    [3.0, 5.0]
    """
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = operand(a)
    nd = ndim(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, nd)[0]
    parts = []
    for extra in (prepend, append):
        if extra is _ABSENT:
            parts.append(None)
            continue
        extra = list_as_array(extra)   # (append=[1.0, 2.0] is an array of two entries)
        if ndim(extra) == 0:
            s = list(shape(a))
            s[axis] = 1
            extra = broadcast_to(extra, tuple(s))
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        a = difference_p(a, axis=axis - nd)
    return a


def _linear_recurrence_rows(a, b, out, reverse, restart):
    n = out.shape[1]
    for r in range(out.shape[0]):
        y = 0.0
        for i in range(n):
            k = n - 1 - i if reverse else i
            y = b[r, k] if restart and a[r, k] == 0.0 else a[r, k] * y + b[r, k]
            out[r, k] = y


_COMPILED = []


def _compiled_rows():
    """_linear_recurrence_rows compiled by Numba on first use (``import duals`` imports no Numba)."""
    if not _COMPILED:
        from .._numba_cache import cached_njit
        _COMPILED.append(cached_njit(nogil=True)(_linear_recurrence_rows))
    return _COMPILED[0]


def _linear_recurrence_impl(a, b, *, reverse, restart=False):
    dtype = np.result_type(a, b)
    batch = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    n = a.shape[-1]
    a2, b2 = (np.ascontiguousarray(np.broadcast_to(v, batch + (n,)), dtype).reshape(-1, n) for v in (a, b))
    out = np.empty(a2.shape, dtype)
    _compiled_rows()(a2, b2, out, reverse, restart)
    return out.reshape(batch + (n,))


# y_k = a_k y_{k-1} + b_k along the last axis from y_{-1} = 0, or with ``reverse`` y_k = a_k y_{k+1}
# + b_k from y_n = 0 (leading axes of a and b broadcast): the tangent and the cotangent of a
# running product, and of itself, without dividing by an entry. With ``restart`` a zero factor
# selects (y_k = b_k, even where y_{k-1} is inf or NaN): a branch not taken, for the running extremes
linear_recurrence_p = Primitive("linear_recurrence", _linear_recurrence_impl)


def _shifted(y, fill, reverse=False):
    """``y`` moved one entry along the last axis, towards the end (``reverse``: towards the front),
    with ``fill`` in the entry left empty."""
    s = shape(y)
    gap = np.full(s[:-1] + (1,), fill, dtype=dtype_of(y))
    if reverse:
        return concatenate([getitem(y, (Ellipsis, slice(1, s[-1]))), gap], axis=-1)
    return concatenate([gap, getitem(y, (Ellipsis, slice(0, s[-1] - 1)))], axis=-1)


def _transposed_recurrence(a, g, reverse, restart=False):
    """The transpose of the recurrence with factors ``a``: z_k = g_k + a_{k+1} z_{k+1} (from the
    end), or for a ``reverse`` one z_k = g_k + a_{k-1} z_{k-1}."""
    return linear_recurrence_p(_shifted(a, 0.0, not reverse), g, reverse=not reverse, restart=restart)


def _recurrence_jvp_factors(t, out, a, b, *, reverse, restart=False):
    if restart:
        raise NotImplementedError("linear_recurrence: restart=True takes plain factors")
    return linear_recurrence_p(a, align(t, a, out) * _shifted(out, 0.0, reverse), reverse=reverse)


def _recurrence_vjp(g, wanted, out, a, b, *, reverse, restart=False):
    z = _transposed_recurrence(a, g, reverse, restart)
    full = SimpleNamespace(shape=shape(out))
    return [unbroadcast(z * _shifted(out, 0.0, reverse), full, shape(a)) if wanted[0] else None,
            unbroadcast(z, full, shape(b)) if wanted[1] else None]


linear_recurrence_p.def_jvp(0, _recurrence_jvp_factors)
linear_recurrence_p.def_jvp(1, lambda t, out, a, b, *, reverse, restart=False: linear_recurrence_p(
    a, align(t, b, out), reverse=reverse, restart=restart))
linear_recurrence_p.vjp_all = _recurrence_vjp


def _recurrence_sparsity(sets, out, a, b, *, reverse, restart=False):
    """y_k depends on the factors and terms up to k (from k on, for a ``reverse`` recurrence)."""
    s = np.shape(innermost(out))
    dst, src = np.tril_indices(s[-1])
    if reverse:
        dst, src = s[-1] - 1 - dst, s[-1] - 1 - src
    return union([along_axis(broadcast_sets(p, s), len(s) - 1, s, dst, src)
                  for p in sets if p is not None], s)


linear_recurrence_p.def_sparsity(_recurrence_sparsity)


def _cumprod_impl(x):
    return np.cumprod(x, axis=-1)


# running products along the last axis (NumPy's value); the derivatives are linear recurrences
# (dp_k = x_k dp_{k-1} + p_{k-1} dx_k), exact where an entry is zero
cumprod_p = Primitive("cumprod", _cumprod_impl)
cumprod_p.def_jvp(0, lambda t, out, x: linear_recurrence_p(x, t * _shifted(out, 1.0), reverse=False))
cumprod_p.def_vjp(0, lambda g, out, x: _transposed_recurrence(x, g, False) * _shifted(out, 1.0))
cumprod_p.def_sparsity(axis_rule(lambda m, *rest: np.tril_indices(m)))


@export()
@lists_as_arrays
def cumprod(a, axis=None, dtype=None, out=None):
    """cumprod(a, axis=None): running products along ``axis`` (flattened when ``None``).

    >>> cumprod(np.array([1.0, 2.0, 3.0, 4.0])).tolist()
    [1.0, 2.0, 6.0, 24.0]
    """
    refuse_out_and_integer_dtype("cumprod", out, dtype)
    if not isinstance(a, Tracer):
        return np.cumprod(a, axis=axis, dtype=dtype)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    nd = ndim(a)
    axis = normalize_axis(axis, nd)[0]
    if shape(a)[axis] == 0:
        return a
    if axis == nd - 1:
        return cumprod_p(a)
    return moveaxis(cumprod_p(moveaxis(a, axis, -1)), -1, axis)


def _running_extreme_impl(x, *, largest):
    return (np.maximum if largest else np.minimum).accumulate(x, axis=-1)


def _extreme_factors(out, x, largest):
    """(a, b), plain: the derivatives of ``maximum(previous, x_k)`` (``minimum``) in the running
    extreme before ``k`` and in ``x_k``, by the table's rule (a tie splits evenly, NaN gives 0)."""
    out, x = innermost(out), innermost(x)
    previous, current = out[..., :-1], x[..., 1:]
    wins = np.greater if largest else np.less
    a = np.where(wins(previous, current), 1.0, np.where(previous == current, 0.5, 0.0))
    b = np.where(wins(current, previous), 1.0, np.where(previous == current, 0.5, 0.0))
    edge = np.zeros(x.shape[:-1] + (1,))
    return (np.concatenate([edge, a], axis=-1).astype(x.dtype),
            np.concatenate([edge + 1.0, b], axis=-1).astype(x.dtype))


def _selected(b, t):
    """``b * t`` with an exact zero where ``b`` is (the entry that does not win contributes
    nothing, even an inf or NaN of its own)."""
    return where(b != 0.0, t * b, 0.0)


def _running_extreme_jvp(t, out, x, *, largest):
    a, b = _extreme_factors(out, x, largest)
    return linear_recurrence_p(a, _selected(b, t), reverse=False, restart=True)


def _running_extreme_vjp(g, out, x, *, largest):
    a, b = _extreme_factors(out, x, largest)
    return _selected(b, _transposed_recurrence(a, g, False, restart=True))


# running maxima (``largest``) or minima along the last axis: NumPy's maximum.accumulate, whose
# derivative is the chain of maximum's rule, a linear recurrence whose zero factors select
running_extreme_p = Primitive("running_extreme", _running_extreme_impl)
running_extreme_p.def_jvp(0, _running_extreme_jvp)
running_extreme_p.def_vjp(0, _running_extreme_vjp)
running_extreme_p.def_sparsity(axis_rule(lambda m, *rest, **params: np.tril_indices(m)))


def running_extreme(x, axis=0, dtype=None, *, largest):
    """running_extreme(x, axis=0, *, largest): ``np.maximum.accumulate(x, axis)`` (``largest``) or
    ``np.minimum.accumulate``, of a traced ``x`` (a tie splits the derivative as ``maximum``'s rule
    does; ``out=`` is refused before, as for every ufunc).

    >>> running_extreme(np.array([1.0, 3.0, 2.0]), largest=True).tolist()
    [1.0, 3.0, 3.0]
    """
    name = f"numpy.{'maximum' if largest else 'minimum'}.accumulate"
    x = operand(x)
    if dtype is not None and np.dtype(dtype) != dtype_of(x):
        raise TypeError(f"{name}(..., dtype={np.dtype(dtype)}) of traced values: cast the input instead")
    if dtype_of(x).kind == "c":
        raise TypeError(f"{name} of complex values: NumPy orders them lexicographically, which has "
                        f"no derivative; take the real part or the modulus first")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    nd = ndim(x)
    if nd == 0:
        raise ValueError(f"{name}: cannot accumulate on a scalar")
    axis = normalize_axis(axis, nd)[0]
    if shape(x)[axis] == 0:
        return x
    if axis == nd - 1:
        return running_extreme_p(x, largest=largest)
    return moveaxis(running_extreme_p(moveaxis(x, axis, -1), largest=largest), -1, axis)


def _trapezoid_impl(y, *, dx, axis):
    n = y.shape[axis]
    upper = y[(Ellipsis, slice(1, n)) + (slice(None),) * (-axis - 1)]
    lower = y[(Ellipsis, slice(0, n - 1)) + (slice(None),) * (-axis - 1)]
    return np.sum(dx * (upper + lower) / 2.0, axis=axis)


def _trapezoid_vjp(g, out, y, *, dx, axis):
    """``g`` times the weights ``dx/2, dx, ..., dx, dx/2`` along the axis: bit for bit the
    cotangent of the composition (a halving is exact, and so is the sum of two equal halves)."""
    n = shape(y)[axis]
    weights = np.full(n, dx, dtype=np.result_type(dtype_of(y), dx))
    weights[[0, -1]] = weights[[0, -1]] / 2.0 if n > 1 else 0.0
    gs = shape(g)
    k = len(gs) + 1 + axis
    return reshape(g, gs[:k] + (1,) + gs[k:]) * weights.reshape((n,) + (1,) * (-axis - 1))


# the trapezoidal rule with a plain scalar step along ``axis`` (counted from the right)
trapezoid_p = Primitive("trapezoid", _trapezoid_impl)
trapezoid_p.def_jvp(0, lambda t, out, y, *, dx, axis: trapezoid_p(t, dx=dx, axis=axis))
trapezoid_p.def_vjp(0, _trapezoid_vjp)
trapezoid_p.def_sparsity(lambda sets, out, y, *, dx, axis: reduced(sets[0], (axis,), np.shape(innermost(out))))


@export()
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """trapezoid(y, x=None, dx=1.0, axis=-1): the integral of samples ``y`` by the trapezoidal rule.

    ``y``, ``x`` and ``dx`` may all be traced (moving sample points have a derivative too).

    >>> float(trapezoid(np.array([0.0, 1.0, 2.0]), dx=0.5))
    1.0
    """
    y = operand(y)
    nd = ndim(y)
    axis = normalize_axis(axis, nd)[0]
    if x is None and not isinstance(dx, Tracer) and np.ndim(dx) == 0:
        return trapezoid_p(y, dx=dx, axis=axis - nd)
    if x is None:
        d = dx
    elif ndim(operand(x)) == 1:
        d = diff(x)
        s = [1] * nd
        s[axis] = shape(d)[0]
        d = reshape(d, tuple(s))
    else:
        d = diff(x, axis=axis)
    upper = getitem(y, _along(axis, nd, slice(1, None)))
    lower = getitem(y, _along(axis, nd, slice(None, -1)))
    return _sum(d * (upper + lower) / 2.0, axis)



def _edge_first_gradient_impl(f, *, h, axis):
    f = np.moveaxis(f, axis, -1)
    first = (f[..., 1:2] - f[..., 0:1]) / h
    interior = (f[..., 2:] - f[..., :-2]) / (2.0 * h)
    last = (f[..., -1:] - f[..., -2:-1]) / h
    return np.moveaxis(np.concatenate([first, interior, last], axis=-1), -1, axis)


def _edge_first_gradient_transpose_impl(g, *, h, axis):
    g = np.moveaxis(g, axis, -1)
    half = g[..., 1:-1] / (2.0 * h)
    first, last = g[..., :1] / h, g[..., -1:] / h
    out = np.zeros(g.shape, np.result_type(half, first))
    out[..., 2:] += half
    out[..., :-2] -= half
    out[..., 1:2] += first
    out[..., :1] -= first
    out[..., -1:] += last
    out[..., -2:-1] -= last
    return np.moveaxis(out, -1, axis)


# NumPy's gradient along ``axis`` (counted from the right) for a plain uniform step ``h`` and
# first-order edges, and its transpose: each is the other's reverse rule and its own forward rule
edge_first_gradient_p = Primitive("edge_first_gradient", _edge_first_gradient_impl)
edge_first_gradient_transpose_p = Primitive("edge_first_gradient_transpose", _edge_first_gradient_transpose_impl)
edge_first_gradient_p.def_jvp(0, lambda t, out, f, *, h, axis: edge_first_gradient_p(t, h=h, axis=axis))
edge_first_gradient_p.def_vjp(0, lambda g, out, f, *, h, axis: edge_first_gradient_transpose_p(g, h=h, axis=axis))
edge_first_gradient_transpose_p.def_jvp(0, lambda t, out, g, *, h, axis: edge_first_gradient_transpose_p(
    t, h=h, axis=axis))
edge_first_gradient_transpose_p.def_vjp(0, lambda k, out, g, *, h, axis: edge_first_gradient_p(k, h=h, axis=axis))
for _linear in (difference_p, difference_transpose_p, trapezoid_p, edge_first_gradient_p,
                edge_first_gradient_transpose_p):   # their reverse rules read shapes only
    READS[_linear] = lambda inputs: frozenset()


def _gradient_stencil(m, *rest, **params):
    """Entry 0 reads 0 and 1, entry k reads k - 1 and k + 1, the last reads the last two."""
    k = np.arange(1, m - 1)
    return (np.concatenate([[0, 0], k, k, [m - 1, m - 1]]),
            np.concatenate([[0, 1], k - 1, k + 1, [m - 2, m - 1]]))


edge_first_gradient_p.def_sparsity(axis_rule(_gradient_stencil))
edge_first_gradient_transpose_p.def_sparsity(axis_rule(_swapped(_gradient_stencil)))


def _spacing(h, n, who):
    """A scalar step, or (for coordinates) the steps between them; uniform coordinates -> a scalar."""
    h = operand(h)
    if ndim(h) == 0:
        return h, True
    if ndim(h) != 1:
        raise ValueError(f"{who}: distances must be either scalars or 1d")
    if shape(h)[0] != n:
        raise ValueError(f"{who}: when 1d, distances must match the length of the corresponding dimension")
    steps = diff(h)
    plain = np.asarray(innermost(steps))
    if not isinstance(steps, Tracer) and np.all(plain == plain[0]):
        return steps[0], True
    return steps, False


def _one_axis(f, h, uniform, axis, nd, edge_order):
    def at(index):
        return getitem(f, _along(axis, nd, index))

    def column(x):   # coefficients along the axis, broadcast against the other axes
        s = [1] * nd
        s[axis] = shape(x)[0]
        return reshape(x, tuple(s))

    if uniform and edge_order == 1 and not isinstance(h, Tracer):
        return edge_first_gradient_p(f, h=h, axis=axis - nd)
    if uniform:
        interior = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * h)
        if edge_order == 1:
            first = (at(slice(1, 2)) - at(slice(0, 1))) / h
            last = (at(slice(-1, None)) - at(slice(-2, -1))) / h
        else:
            first = (-1.5 * at(slice(0, 1)) + 2.0 * at(slice(1, 2)) - 0.5 * at(slice(2, 3))) / h
            last = (0.5 * at(slice(-3, -2)) - 2.0 * at(slice(-2, -1)) + 1.5 * at(slice(-1, None))) / h
        return concatenate([first, interior, last], axis=axis)
    d1, d2 = column(getitem(h, slice(None, -1))), column(getitem(h, slice(1, None)))
    interior = (-d2 / (d1 * (d1 + d2)) * at(slice(None, -2)) + (d2 - d1) / (d1 * d2) * at(slice(1, -1))
                + d1 / (d2 * (d1 + d2)) * at(slice(2, None)))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / getitem(h, slice(0, 1))
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / getitem(h, slice(-1, None))
    else:
        a, b = getitem(h, slice(0, 1)), getitem(h, slice(1, 2))
        first = (-(2.0 * a + b) / (a * (a + b)) * at(slice(0, 1)) + (a + b) / (a * b) * at(slice(1, 2))
                 - a / (b * (a + b)) * at(slice(2, 3)))
        a, b = getitem(h, slice(-2, -1)), getitem(h, slice(-1, None))
        last = (b / (a * (a + b)) * at(slice(-3, -2)) - (a + b) / (a * b) * at(slice(-2, -1))
                + (2.0 * b + a) / (b * (a + b)) * at(slice(-1, None)))
    return concatenate([first, interior, last], axis=axis)


@export()
def gradient(f, *varargs, axis=None, edge_order=1):
    """gradient(f, *varargs, axis=None, edge_order=1): NumPy's finite-difference gradient.

    Second-order central differences inside, first- or second-order one-sided differences at
    the edges; the spacing is 1, one scalar, one scalar per axis or coordinate arrays (uniform
    or not), any of them traced. One array for one axis, else a tuple of arrays, as NumPy.

    >>> gradient(np.array([1.0, 4.0, 9.0, 16.0])).tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    if not isinstance(f, Tracer) and not any(isinstance(v, Tracer) for v in varargs):
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = operand(f)
    nd = ndim(f)
    axes = tuple(range(nd)) if axis is None else tuple(
        normalize_axis(a, nd)[0] for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis}")
    if not varargs:
        varargs = (1.0,) * len(axes)
    elif len(varargs) == 1 and ndim(operand(varargs[0])) == 0:
        varargs = varargs * len(axes)
    elif len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported" if edge_order > 2 else
                         "edge_order must be 1 or 2")
    out = []
    for ax, h in zip(axes, varargs):
        if shape(f)[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        step, uniform = _spacing(h, shape(f)[ax], "gradient")
        out.append(_one_axis(f, step, uniform, ax, nd, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


if hasattr(np, "trapz"):  # removed in NumPy 2.4; same rule where it exists
    export("trapz")(trapezoid)
