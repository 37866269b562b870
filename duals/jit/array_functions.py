"""NumPy functions of dual arrays in @njit code that are not element-wise arithmetic.

* running and axis reductions: ``np.cumsum``, ``np.cumprod``, ``np.var``, ``np.std``, and
  ``np.mean``/``np.prod``/``np.max``/``np.min`` with ``axis=`` (``np.sum`` over an axis is
  Numba's own); ``np.max``/``np.min`` (and ``np.amax``, ``np.ptp``, the methods) split the
  derivative evenly among tied entries, as on the NumPy path;
* ``np.where(condition, a, b)`` with dual branches: the tangent of the branch taken, so the
  other contributes exactly zero even where its derivative is inf or NaN;
* ``np.sort`` follows NumPy's *stable* order (among equal entries the earlier one comes first,
  the NumPy path's policy); ``np.argsort`` and ``np.argmax``/``np.argmin`` are those of the real
  parts, the very indices the plain call computes;
* ``np.interp(x, xp, fp)`` with duals in ``x``, ``xp`` or ``fp``: at a knot the slope of the
  segment to its right (at the last knot, to its left), outside the knots zero;
* ``duals.jit.fn.<name>`` of every table entry (``fn.erf``, ``fn.expit`` ...) on arrays, of
  floats and of duals; ``np.floor``/``np.rint``/``np.round`` ... and ``np.isnan`` ... on dual
  arrays give plain arrays from the real parts (derivative zero).

NumPy functions that compiled code cannot differentiate yet (``np.median``, ``np.nan*``,
``np.linalg.eig`` ...) raise a short error naming the function and what to do instead.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.max(x)))(np.array([1.0, 3.0, 3.0])).tolist()
[0.0, 0.5, 0.5]
"""
import math

import numpy as np
from llvmlite import ir
from numba.core import errors, types
from numba.extending import intrinsic, overload, register_jitable

from . import extras, rules
from ._types import DualType
from .arrays import _at, _binary_impl, _register, _unary_impl
from . import errors as _errors
from .compat import array_method
from .errors import MARK
from .parts import is_dual_array, level_of


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _dual(t):
    return is_dual_array(t) or isinstance(t, DualType)


# ---------------------------------------------------------------- real parts as floats

def real_values(x):
    """real_values(x) -> the plain floats under every dual layer of a dual array (a copy)."""


@overload(real_values)
def _ov_real_values(x):
    if not is_dual_array(x):
        return lambda x: x
    floats = x.dtype.float
    width = _floats_per_element(x.dtype)

    def impl(x):
        c = np.ascontiguousarray(x)
        return np.ascontiguousarray(c.view(floats).reshape(x.shape + (width,))[..., 0])
    return impl


def _floats_per_element(t):
    """How many floats one dual of type ``t`` holds (its first one is the innermost real part)."""
    if isinstance(t, DualType) and t.lanes is None:  # an adjoint: its base, then node and tape
        return _floats_per_element(t.base) + 2
    if isinstance(t, DualType):
        return (1 + t.lanes) * _floats_per_element(t.base)
    return 1


# ---------------------------------------------------------------- reductions over a whole array

@register_jitable
def _check_size(n, what):
    if n == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")


@register_jitable
def _extreme(a, largest):
    """The largest (smallest) entry; tied entries share its derivative evenly, and the value is
    exactly the entry's (``best + Σ (e - best) / k``, each ``e - best`` having real part 0)."""
    _check_size(a.size, "max")
    first = True
    best = a.flat[0]
    for e in a.flat:
        if math.isnan(e):
            return e
        if first or (e > best if largest else e < best):
            best = e
            first = False
    acc = best - best
    count = 0
    for e in a.flat:
        if e == best:
            acc = acc + (e - best)
            count += 1
    return best + acc / count


@register_jitable
def _largest(a):
    return _extreme(a, True)


@register_jitable
def _smallest(a):
    return _extreme(a, False)


@register_jitable
def _total(a):
    acc = 0.0
    for e in a.flat:
        acc = acc + e
    return acc


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
    """The reduction of ``kernel`` (of a 1-d slice) over one axis of a dual array of type ``T``."""
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


def _reduction(label, kernel):
    """``np.<label>(a, axis=None)`` of a dual array: ``kernel`` of the whole array, or of every
    slice along ``axis`` (an integer; a 1-d array gives a dual, as NumPy gives a scalar).
    Numba has no ``axis`` for these, so float arrays over an axis are served here too: the
    plain call of the same code must run."""
    def ov(a, axis=None):
        if not is_dual_array(a):
            if not (isinstance(a, types.Array) and isinstance(a.dtype, types.Float)) or _none(axis):
                return None
        elif _none(axis):
            return lambda a, axis=None: kernel(a)
        if not isinstance(axis, types.Integer):
            raise errors.TypingError(f"{MARK}np.{label} of a dual array takes one integer axis, "
                                     f"got {axis}; reduce one axis at a time")
        if a.ndim == 1:
            def vector(a, axis=None):
                if axis != 0 and axis != -1:
                    raise ValueError("duals.jit: axis out of bounds for a 1-d array:", axis)
                return kernel(a)
            return vector
        reduce = _axis_reducer(kernel, a.dtype)
        return lambda a, axis=None: reduce(a, axis)
    return ov


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


# ---------------------------------------------------------------- where

def _where(condition, x, y):
    if _none(x) or _none(y):
        return None
    operands = (condition, x, y)
    if not any(_dual(t) for t in (x, y)):
        if _dual(condition):
            raise errors.TypingError(f"{MARK}np.where with a dual condition: compare it first "
                                     f"(np.where(x > 0.0, a, b))")
        return None
    T = level_of("np.where", x, y)
    arrays = [name for name, t in zip("cxy", operands) if isinstance(t, types.Array) and t.ndim > 0]
    if not arrays:
        return lambda condition, x, y: x if condition else y
    shape = ", ".join(f"{n}.shape" for n in arrays)
    spread = {n: (f"np.broadcast_to({n}, shape)" if n in arrays
                  else f"{n}[()]" if isinstance(t, types.Array) else n)
              for n, t in zip("cxy", operands)}
    source = (f"def where(condition, x, y):\n"
              f"    c = condition\n"
              f"    shape = np.broadcast_shapes({shape})\n" if len(arrays) > 1 else
              f"def where(condition, x, y):\n"
              f"    c = condition\n"
              f"    shape = {arrays[0]}.shape\n")
    source += (f"    cs, xs, ys = {spread['c']}, {spread['x']}, {spread['y']}\n"
               f"    out = np.empty(shape, T)\n"
               f"    for idx in np.ndindex(shape):\n"
               f"        if _at(cs, idx):\n"
               f"            out[idx] = _at(xs, idx)\n"
               f"        else:\n"
               f"            out[idx] = _at(ys, idx)\n"
               f"    return out\n")
    namespace = {"np": np, "T": T, "_at": _at}
    exec(source, namespace)
    return namespace["where"]


# ---------------------------------------------------------------- sorting

def _sort(a):
    if not is_dual_array(a):
        return None

    def impl(a):
        c = np.ascontiguousarray(a)
        n = c.shape[-1] if c.ndim else 1
        rows = c.reshape((c.size // max(n, 1), n))
        out = np.empty_like(rows)
        keys = real_values(rows)
        for r in range(rows.shape[0]):
            out[r] = rows[r][np.argsort(keys[r], kind="mergesort")]
        return out.reshape(c.shape)
    return impl


def _argsort(a, kind=None):
    if not is_dual_array(a):
        return None
    if _none(kind):
        return lambda a, kind=None: np.argsort(real_values(a))
    if isinstance(kind, types.StringLiteral) and kind.literal_value in ("quicksort", "mergesort"):
        if kind.literal_value == "mergesort":
            return lambda a, kind=None: np.argsort(real_values(a), kind="mergesort")
        return lambda a, kind=None: np.argsort(real_values(a), kind="quicksort")
    return None


def _arg_extreme(func):
    def ov(a, axis=None):
        if not is_dual_array(a):
            return None
        if _none(axis):
            return lambda a, axis=None: func(real_values(a))
        return lambda a, axis=None: func(real_values(a), axis)
    return ov


# ---------------------------------------------------------------- interp

def _interp(x, xp, fp):
    if not any(_dual(t) for t in (x, xp, fp)):
        return None
    if not (isinstance(xp, types.Array) and xp.ndim == 1 and isinstance(fp, types.Array)
            and fp.ndim == 1):
        raise errors.TypingError(f"{MARK}np.interp of duals takes 1-d arrays xp and fp")
    T = level_of("np.interp", x, xp, fp)

    @register_jitable
    def at(v, xp, fp, keys):
        """interp at one point: the segment search on the real parts, the value in dual
        arithmetic, so x, xp and fp all carry their derivatives."""
        n = keys.shape[0]
        t = extras._real(v)
        if t < keys[0]:
            return fp[0]
        if t > keys[n - 1] or n == 1:
            return fp[n - 1]
        j = np.searchsorted(keys, t, side="right") - 1
        j = min(max(j, 0), n - 2)
        slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
        if t == keys[n - 1]:  # anchored at the last knot, the value is fp[-1] exactly, as NumPy's
            return fp[j + 1] + slope * (v - xp[j + 1])
        return fp[j] + slope * (v - xp[j])

    if isinstance(x, types.Array):
        def array(x, xp, fp):
            if xp.shape[0] != fp.shape[0]:
                raise ValueError("fp and xp are not of the same size.")
            if xp.shape[0] == 0:
                raise ValueError("array of sample points is empty")
            keys = real_values(xp)
            out = np.empty(x.shape, T)
            for idx in np.ndindex(x.shape):
                out[idx] = at(x[idx], xp, fp, keys)
            return out
        return array

    def scalar(x, xp, fp):
        if xp.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same size.")
        if xp.shape[0] == 0:
            raise ValueError("array of sample points is empty")
        out = np.empty(1, T)
        out[0] = at(x, xp, fp, real_values(xp))
        return out[0]
    return scalar


# ---------------------------------------------------------------- fn.<name> on arrays

def _fn_on_arrays(stub, arity):
    from numba.core.registry import cpu_target

    def result_type(*args):
        elements = [a.dtype if isinstance(a, types.Array) else a for a in args]
        if not all(isinstance(e, (types.Number, types.Boolean, DualType)) for e in elements):
            return None
        context = cpu_target.typing_context
        sig = context.resolve_function_type(context.resolve_value_type(stub), tuple(elements), {})
        return None if sig is None else sig.return_type

    if arity == 1:
        def ov(x):  # the names of the loops' arguments
            if isinstance(x, types.Array):
                rt = result_type(x)
                if rt is not None:
                    return _unary_impl(stub, rt)
    else:
        def ov(x, y):
            if isinstance(x, types.Array) or isinstance(y, types.Array):
                rt = result_type(x, y)
                if rt is not None:
                    return _binary_impl(stub, rt)
    overload(stub)(ov)


# ---------------------------------------------------------------- value-only functions on arrays

def _round(a, decimals=0, out=None):
    if is_dual_array(a) and _none(out):
        return lambda a, decimals=0, out=None: np.round(real_values(a), decimals)


# ---------------------------------------------------------------- clear errors for the rest

MARK_MODULE = _errors.__name__
UNSUPPORTED = {
    "sort it first (np.sort follows the derivative policy) and index the middle entries":
        ("median", "percentile", "quantile"),
    "replace the NaNs first (np.where(np.isnan(x), 0.0, x)) and use the plain function":
        ("nanmedian", "nanpercentile", "nanquantile", "nanmax", "nanmin", "nansum", "nanprod",
         "nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod", "nanargmax", "nanargmin"),
    "write it as a loop over the entries, or differentiate it on the Python path (duals.numpy)":
        ("cross", "convolve", "correlate", "polyval", "cov", "corrcoef", "histogram", "unique",
         "searchsorted", "linspace", "digitize", "bincount"),
}
UNSUPPORTED_LINALG = ("eig", "eigh", "eigvals", "eigvalsh", "svd", "qr", "pinv", "matrix_power",
                      "matrix_rank", "cond")


def _refuse(label, advice):
    def ov(*args, **kws):
        if any(_dual(t) for t in list(args) + list(kws.values())):
            raise errors.TypingError(f"{MARK}{label} of dual numbers is not supported in compiled "
                                     f"code; {advice}")
    ov.__module__ = MARK_MODULE  # a refusal, like those of duals.jit.errors (docs/supported.md reads it)
    return ov


def _install():
    fn = rules.install()
    for label, kernel, numpy_functions, method in (
            ("max", _largest, (np.max, np.amax), "npy_max"),
            ("min", _smallest, (np.min, np.amin), "npy_min"),
            ("mean", _average, (np.mean,), None),
            ("prod", _product, (np.prod,), None)):
        for f in numpy_functions:
            overload(f, target="cpu")(_reduction(label, kernel))
        if method is not None and array_method(method) is not None:
            overload(array_method(method), target="cpu")(_whole(kernel))
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
    overload(np.where, target="cpu")(_where)
    overload(np.sort, target="cpu")(_sort)
    overload(np.argsort, target="cpu")(_argsort)
    overload(np.argmax, target="cpu")(_arg_extreme(np.argmax))
    overload(np.argmin, target="cpu")(_arg_extreme(np.argmin))
    overload(np.interp, target="cpu")(_interp)
    for name in rules.derivatives.UNARY:
        _fn_on_arrays(getattr(fn, name), 1)
    for name in rules.derivatives.BINARY:
        _fn_on_arrays(getattr(fn, name), 2)
    for f in extras.VALUE_ONLY + (np.isnan, np.isinf, np.isfinite):
        if isinstance(f, np.ufunc):
            _register(_unary_impl, f.__name__, f)
    for f in (np.round, np.around):
        overload(f, target="cpu")(_round)
    for advice, names in UNSUPPORTED.items():
        for name in names:
            if hasattr(np, name):
                overload(getattr(np, name), target="cpu")(_refuse(f"np.{name}", advice))
    for name in UNSUPPORTED_LINALG:
        overload(getattr(np.linalg, name), target="cpu")(_refuse(
            f"np.linalg.{name}", "differentiate it on the Python path (duals.jacfwd of a plain "
                                 "Python function using duals.numpy)"))


_install()
