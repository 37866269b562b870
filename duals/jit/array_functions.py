"""NumPy functions of dual arrays in @njit code that are not element-wise arithmetic.

* reductions (``np.max``, ``np.mean`` ... over an axis, ``np.cumsum``, ``np.nan*``):
  :mod:`.reductions`; sorting (``np.sort``, ``x.sort()``, ``np.argsort``, ``np.median``):
  :mod:`.sorting`, with the NumPy path's policy at ties;
* ``np.where(condition, a, b)`` with dual branches: the tangent of the branch taken, so the
  other contributes exactly zero even where its derivative is inf or NaN;
* ``np.interp(x, xp, fp)`` with duals in ``x``, ``xp`` or ``fp``: at a knot the slope of the
  segment to its right (at the last knot, to its left), outside the knots zero;
* ``np.cross`` of 3-vectors (1-d, or rows of 2-d arrays) and ``np.linalg.matrix_power``, with
  the plain call's formula and sequence of products; ``np.convolve`` in every mode (the value
  by Numba's own call on the real parts, each lane by two more; adjoints: the sums written out)
  and ``np.correlate``, the convolution with the second sequence reversed;
* ``duals.jit.fn.<name>`` of every table entry (``fn.erf``, ``fn.expit`` ...) on arrays, of
  floats and of duals; ``np.floor``/``np.rint``/``np.round`` ... and ``np.isnan`` ... on dual
  arrays give plain arrays from the real parts (derivative zero), and so do the index and rank
  queries ``np.searchsorted``, ``np.digitize`` and ``np.linalg.matrix_rank``;
* ``np.sinc`` of real duals and dual arrays: NumPy's value, and near 0 the derivatives of every
  order of the Taylor polynomial of sin(u)/u (the quotient loses them to cancellation there);
* ``np.bincount(x, weights=w)`` with dual weights: the sums per bin in NumPy's order (a
  scatter-add; Numba has no ``np.add.at``).

NumPy functions that compiled code cannot differentiate yet (``np.percentile``, ``np.nanvar``,
``np.linalg.eig`` ...) raise a short error naming the function and what to do instead.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.max(x)))(np.array([1.0, 3.0, 3.0])).tolist()
[0.0, 0.5, 0.5]
"""
import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from . import extras, reductions, rules, sorting
from ._types import DualType, _is_complex
from .arrays import _at, _binary_impl, _register, _unary_impl
from . import errors as _errors
from .errors import MARK
from .parts import is_dual_array, join, level_of, real_values, split


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _dual(t):
    return is_dual_array(t) or isinstance(t, DualType)


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
    arrays = [name for name, t in zip("cxy", operands) if isinstance(t, types.Array) and t.ndim > 0]
    # on scalars a choice of one operand, which the tape (adjoints) records as it is
    T = level_of("np.where", x, y, scalar_operations=not arrays)
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


# ---------------------------------------------------------------- interp

def _interp(x, xp, fp):
    if not any(_dual(t) for t in (x, xp, fp)):
        return None
    if not (isinstance(xp, types.Array) and xp.ndim == 1 and isinstance(fp, types.Array)
            and fp.ndim == 1):
        raise errors.TypingError(f"{MARK}np.interp of duals takes 1-d arrays xp and fp")
    if isinstance(fp.dtype, types.Complex) or _is_complex(fp.dtype):
        raise errors.TypingError(f"{MARK}np.interp of complex fp (measured S-parameters) is not "
                                 f"supported on duals; interpolate its parts, np.interp(x, xp, fp.real) "
                                 f"+ 1j * np.interp(x, xp, fp.imag) (the same numbers)")
    T = level_of("np.interp", x, xp, fp, scalar_operations=True)

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
        anchor = j
        if t == keys[n - 1]:  # anchored at the last knot, the value is fp[-1] exactly, as NumPy's
            if keys[j] == keys[j + 1]:   # a repeated last knot: a segment of no width, no slope
                return fp[j + 1]
            anchor = j + 1
        return fp[anchor] + (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (v - xp[anchor])

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


def _trapezoid(y, x=None, dx=1.0):
    """np.trapezoid of a 1-d ``y`` with a dual spacing ``dx``: Numba's sum written out, so the
    value is the plain call's; a dual ``y`` with a plain ``dx``, and a 2-d ``y`` (whose
    ``np.asarray(dx)`` is a 0-d array of duals), stay Numba's."""
    if not _dual(dx) or not _none(x) or not (isinstance(y, types.Array) and y.ndim == 1):
        return None

    def impl(y, x=None, dx=1.0):
        total = 0.0 * dx
        for i in range(y.shape[0] - 1):
            total += dx * ((y[i + 1] + y[i]) / 2.0)
        return total
    return impl


# ---------------------------------------------------------------- cross, matrix_power

@register_jitable
def _check_rows(x, rows):
    if x.ndim == 2 and x.shape[0] != 1 and x.shape[0] != rows:
        raise ValueError("duals.jit: np.cross: the rows of the operands do not broadcast")


def _cross(a, b):
    if not any(_dual(t) for t in (a, b)):
        return None
    if not all(isinstance(t, types.Array) and t.ndim in (1, 2) for t in (a, b)):
        raise errors.TypingError(f"{MARK}np.cross of duals takes two 1-d or 2-d arrays of 3-vectors "
                                 f"(along the last axis); loop over further axes")
    T = level_of("np.cross", a, b, scalar_operations=True)
    vectors = a.ndim == 1 and b.ndim == 1
    row_of_a = (lambda x, r: x) if a.ndim == 1 else (lambda x, r: x[r if x.shape[0] > 1 else 0])
    row_of_b = (lambda x, r: x) if b.ndim == 1 else (lambda x, r: x[r if x.shape[0] > 1 else 0])
    row_a, row_b = register_jitable(row_of_a), register_jitable(row_of_b)

    def impl(a, b):
        if a.shape[-1] != 3 or b.shape[-1] != 3:
            raise ValueError("duals.jit: np.cross of duals takes 3-vectors (a last axis of length 3)")
        rows = 1 if vectors else max(1 if a.ndim == 1 else a.shape[0], 1 if b.ndim == 1 else b.shape[0])
        _check_rows(a, rows)
        _check_rows(b, rows)
        out = np.empty((rows, 3), T)
        for r in range(rows):
            x, y = row_a(a, r), row_b(b, r)
            # NumPy's (and Numba's) formula, so the value is the plain call's bit for bit
            out[r, 0] = x[1] * y[2] - x[2] * y[1]
            out[r, 1] = x[2] * y[0] - x[0] * y[2]
            out[r, 2] = x[0] * y[1] - x[1] * y[0]
        return out[0].copy() if vectors else out
    return impl


def _matrix_power(a, n):
    if not _dual(a):
        return None
    if not (isinstance(a, types.Array) and a.ndim == 2 and isinstance(n, types.Integer)):
        raise errors.TypingError(f"{MARK}np.linalg.matrix_power of duals takes one square matrix "
                                 f"(2-d) and an integer power")
    T = a.dtype

    def impl(a, n):
        if a.shape[0] != a.shape[1]:
            raise ValueError("input must be a square array")
        if n == 0:
            out = np.zeros(a.shape, T)
            for k in range(a.shape[0]):
                out[k, k] = 1.0
            return out
        if n < 0:
            A = np.linalg.inv(a)
            n = -n
        else:
            A = np.ascontiguousarray(a)
        if n == 1:
            return A.copy()
        # Numba's own sequence of products, so the value is the plain call's
        if n == 2:
            return np.dot(A, A)
        if n == 3:
            return np.dot(np.dot(A, A), A)
        acc, result, first = A, A, True
        while n != 0:
            if n & 1:
                result = acc if first else np.dot(result, acc)
                first = False
            acc = np.dot(acc, acc)
            n = n >> 1
        return result
    return impl


# ---------------------------------------------------------------- convolve

@register_jitable
def _convolution_window(la, lv, mode):
    """(start, length) of ``np.convolve(a, v, mode)`` inside the full convolution, as NumPy's."""
    longer, shorter = max(la, lv), min(la, lv)
    if la == 0 or lv == 0:
        raise ValueError("'a' and 'v' cannot be empty")
    if mode == "full":
        return 0, la + lv - 1
    if mode == "same":
        return shorter - 1 - shorter // 2, longer
    if mode == "valid":
        return shorter - 1, longer - shorter + 1
    raise ValueError("Invalid 'mode', valid are 'full', 'same', 'valid'")


def _convolve(a, v, mode="full"):
    if not any(_dual(t) for t in (a, v)):
        return None
    if not all(isinstance(t, types.Array) and t.ndim == 1 for t in (a, v)):
        raise errors.TypingError(f"{MARK}np.convolve of duals takes two 1-d arrays")
    T = level_of("np.convolve", a, v, scalar_operations=True)
    if T.lanes is None:     # adjoints: the sums written out, which the tape records
        def recorded(a, v, mode="full"):
            la, lv = a.shape[0], v.shape[0]
            start, length = _convolution_window(la, lv, mode)
            out = np.empty(length, T)
            for k in range(length):
                full = start + k
                low, high = max(0, full - lv + 1), min(full, la - 1)
                total = a[low] * v[full - low]
                for i in range(low + 1, high + 1):
                    total = total + a[i] * v[full - i]
                out[k] = total
            return out
        return recorded
    a_dual, v_dual = is_dual_array(a) and a.dtype.tag == T.tag, is_dual_array(v) and v.dtype.tag == T.tag
    width = T.lanes

    def lanes(a, v, mode="full"):
        # the value by Numba's own call (the plain call's numbers), every lane in one pass of the
        # sums written out (a Numba call per lane cost 20x the plain call for a short kernel)
        ar, da = split(a, T)
        vr, dv = split(v, T)
        value = np.convolve(ar, vr, mode)
        la, lv = ar.shape[0], vr.shape[0]
        start, length = _convolution_window(la, lv, mode)
        out = np.zeros((length, width), value.dtype)
        for k in range(length):
            full = start + k
            for i in range(max(0, full - lv + 1), min(full, la - 1) + 1):
                if a_dual:
                    weight = vr[full - i]
                    for lane in range(width):
                        out[k, lane] += da[i, lane] * weight
                if v_dual:
                    weight = ar[i]
                    for lane in range(width):
                        out[k, lane] += weight * dv[full - i, lane]
        return join(value, out, T)
    return lanes


def _correlate(a, v, mode="valid"):
    if not any(_dual(t) for t in (a, v)):
        return None
    if not all(isinstance(t, types.Array) and t.ndim == 1 for t in (a, v)):
        raise errors.TypingError(f"{MARK}np.correlate of duals takes two 1-d arrays")
    level_of("np.correlate", a, v, scalar_operations=True)   # (refusals name np.correlate)

    def impl(a, v, mode="valid"):    # the convolution with v reversed, NumPy's window of it
        la, lv = a.shape[0], v.shape[0]
        if la == 0 or lv == 0:
            raise ValueError("'a' and 'v' cannot be empty")
        start, length = _convolution_window(la, lv, mode)
        if mode == "same" and lv > la:   # NumPy centres the longer sequence's window from its end
            start = la - 1 - (la - 1) // 2
        return np.convolve(a, v[::-1])[start:start + length].copy()
    return impl


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


# ---------------------------------------------------------------- sinc

def _sinc(x):
    from ..ops.powers import SINC_SERIES
    series = tuple(SINC_SERIES)
    top = len(series) - 1
    if isinstance(x, DualType) and isinstance(x.float, types.Float):
        def scalar(x):
            u = np.pi * x
            if abs(extras._real(u)) >= 0.5:
                return np.sin(u) / u
            u2 = u * u
            s = series[top] * u2 + series[top - 1]
            for k in range(top - 2, -1, -1):
                s = s * u2 + series[k]
            return s + (np.sinc(extras._real(x)) - extras._real(s))   # NumPy's value (exact: Sterbenz)
        return scalar
    if is_dual_array(x) and isinstance(x.dtype.float, types.Float):
        T = x.dtype

        def array(x):
            out = np.empty(x.shape, T)
            for idx in np.ndindex(x.shape):
                out[idx] = np.sinc(x[idx])
            return out
        return array


# ---------------------------------------------------------------- bincount

def _bincount(a, weights=None, minlength=0):
    if _dual(a):
        raise errors.TypingError(f"{MARK}np.bincount of dual numbers: the bins are integers and "
                                 f"carry no derivative; pass them as an integer array")
    if not is_dual_array(weights):
        return None
    if not (isinstance(a, types.Array) and a.ndim == 1 and isinstance(a.dtype, types.Integer)
            and weights.ndim == 1):
        raise errors.TypingError(f"{MARK}np.bincount takes a 1-d integer array and 1-d weights")
    T = weights.dtype

    def impl(a, weights=None, minlength=0):
        if weights.shape[0] != a.shape[0]:
            raise ValueError("The weights and list don't have the same length.")
        if minlength < 0:
            raise ValueError("'minlength' must not be negative")
        bins = minlength
        for k in a:
            if k < 0:
                raise ValueError("'list' argument must have no negative elements")
            bins = max(bins, k + 1)
        out = np.empty(bins, T)
        for j in range(bins):
            out[j] = 0.0
        for i in range(a.shape[0]):
            out[a[i]] = out[a[i]] + weights[i]
        return out
    return impl


# ---------------------------------------------------------------- value-only functions on arrays

def _round(a, decimals=0, out=None):
    if is_dual_array(a) and _none(out):
        return lambda a, decimals=0, out=None: np.round(real_values(a), decimals)


def _plain(x):
    """The plain value under a dual array or scalar (``x`` itself when plain)."""


@overload(_plain)
def _ov_plain(x):
    if isinstance(x, types.Array):
        return lambda x: real_values(x)
    return lambda x: extras._real(x)


def _has_dual(*ts):
    return any(is_dual_array(t) or isinstance(t, DualType) for t in ts)


def _extract(condition, arr):
    if is_dual_array(arr) and isinstance(condition, types.Array) and not _has_dual(condition):
        return lambda condition, arr: np.ravel(arr)[np.ravel(condition) != 0]   # a gather by mask


def _searchsorted(a, v, side="left"):
    if _has_dual(a, v):
        return lambda a, v, side="left": np.searchsorted(_plain(a), _plain(v), side)


def _digitize(x, bins, right=False):
    if _has_dual(x, bins):
        return lambda x, bins, right=False: np.digitize(_plain(x), _plain(bins), right)


def _nan_position(pick):
    def ov(a):
        if _has_dual(a):
            return lambda a: pick(_plain(a))
    return ov


def _matrix_rank(A, tol=None):
    if _has_dual(A):
        return lambda A, tol=None: np.linalg.matrix_rank(real_values(A), tol)


# NumPy functions whose own Numba implementation runs on arrays of duals as written (it is made of
# indexing, assignment and arithmetic, which duals overloads): no rule of duals' is needed, and
# tests/test_jit_through_numba.py differentiates each against central differences
THROUGH_NUMBA = (
    "append", "array", "array_split", "asarray", "atleast_2d", "average", "broadcast_to",
    "column_stack", "concatenate", "copy", "delete", "diag", "diagflat", "diff", "dstack",
    "expand_dims", "flip", "fliplr", "flipud", "hstack", "insert", "kron", "moveaxis", "outer",
    "partition", "ravel", "repeat", "reshape", "resize", "roll", "rot90", "select", "split",
    "stack", "swapaxes", "take", "take_along_axis", "transpose", "trapezoid", "tril", "triu",
    "vstack",
)

# ---------------------------------------------------------------- clear errors for the rest

MARK_MODULE = _errors.__name__
UNSUPPORTED = {
    "sort it first (np.sort follows the derivative policy) and index the entries":
        ("percentile", "quantile"),
    "drop the NaNs first (x[~np.isnan(x)]) and call the function without nan":
        ("nanpercentile", "nanquantile", "nanprod", "nanvar", "nanstd"),
    "write it as a loop over the entries, or differentiate it on the Python path (duals.numpy)":
        ("cov", "corrcoef", "unique", "linspace"),
    # (a climate trial: the plain call fails too, which the generic advice did not say)
    "Numba has none, not even for plain numbers: write np.polynomial.polynomial.polyval(x, "
    "c[::-1]) (Numba's, differentiated by duals; coefficients lowest degree first) or Horner's "
    "loop, p = c[0], then p = p * x + c[k] for k = 1, 2, ...": ("polyval",),
    # (with edges or range= Numba's own counts them: piecewise constant, derivative 0)
    "with bins a number and no range=, its edges would move with the data; give the edges (an "
    "array) or range=(lo, hi), and the counts are Numba's, with derivative 0": ("histogram",),
    "differentiate it on the Python path (duals.jacfwd of a plain Python function), or find the "
    "root you need by Newton's method in the loop (differentiated as written)": ("roots",),
}
UNSUPPORTED_LINALG = ("eig", "eigvals", "cond")


def _refuse(label, advice):
    def ov(*args, **kws):
        if any(_dual(t) for t in list(args) + list(kws.values())):
            raise errors.TypingError(f"{MARK}{label} of dual numbers is not supported in compiled "
                                     f"code; {advice}")
    ov.__module__ = MARK_MODULE  # a refusal, like those of duals.jit.errors (docs/supported.md reads it)
    return ov


def _install():
    fn = rules.install()
    reductions.install()
    sorting.install()
    overload(np.where, target="cpu")(_where)
    overload(np.interp, target="cpu")(_interp)
    if hasattr(np, "trapezoid"):   # (NumPy 2)
        overload(np.trapezoid, target="cpu")(_trapezoid)
    overload(np.cross, target="cpu")(_cross)
    overload(np.convolve, target="cpu")(_convolve)
    overload(np.correlate, target="cpu")(_correlate)
    overload(np.linalg.matrix_power, target="cpu")(_matrix_power)
    overload(np.bincount, target="cpu")(_bincount)
    overload(np.sinc, target="cpu")(_sinc)
    overload(np.extract, target="cpu")(_extract)
    for name in rules.derivatives.UNARY:
        _fn_on_arrays(getattr(fn, name), 1)
    for name in rules.derivatives.BINARY:
        _fn_on_arrays(getattr(fn, name), 2)
    for f in extras.VALUE_ONLY + (np.isnan, np.isinf, np.isfinite):
        if isinstance(f, np.ufunc):
            _register(_unary_impl, f.__name__, f)
    for f in (np.round, np.around):
        overload(f, target="cpu")(_round)
    for f, value_only in ((np.searchsorted, _searchsorted), (np.digitize, _digitize),
                          (np.nanargmax, _nan_position(np.nanargmax)),
                          (np.nanargmin, _nan_position(np.nanargmin)),
                          (np.linalg.matrix_rank, _matrix_rank)):   # indices, a rank: no derivative
        overload(f, target="cpu")(value_only)
    for advice, names in UNSUPPORTED.items():
        for name in names:
            if hasattr(np, name):
                overload(getattr(np, name), target="cpu")(_refuse(f"np.{name}", advice))
    for name in UNSUPPORTED_LINALG:
        overload(getattr(np.linalg, name), target="cpu")(_refuse(
            f"np.linalg.{name}", "differentiate it on the Python path (duals.jacfwd of a plain "
                                 "Python function using duals.numpy)"))


_install()
