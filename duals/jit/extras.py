"""Dual overloads that are not lines of the derivative table, composed from those that are.

* piecewise-constant functions (``math.floor``, ``round``, ``np.rint`` ...) apply to the real
  part: their derivative is zero and the result is a plain number, as in the NumPy path;
* ``bool(x)`` (``if x:``) tests the real part; ``divmod(x, y)`` is ``(x // y, x % y)``;
* ``min``/``max`` of three to eight arguments, ``math.log(x, base)`` (on duals only: Numba's
  plain call lacks it) and scalar ``np.clip`` are built from the table's entries, so they follow
  its policy at non-differentiable points (a tie splits evenly, ``np.clip`` at a bound too);
* ``math.degrees``/``math.radians`` and NumPy's ``degrees``/``radians``/``rad2deg``/``deg2rad``
  (of duals and of dual arrays) are products by their constant.

>>> import numba, math, duals
>>> numba.njit(lambda x: math.log(x, 2.0))(duals.Dual(8.0, 1.0)).primal
3.0
"""
import builtins
import math

import numpy as np
from numba.core import types

from .. import _vocabulary_njit
from .._overloads import overload, register_jitable
from ._types import DualType, _is_complex

VALUE_ONLY = (math.floor, math.ceil, math.trunc, np.floor, np.ceil, np.trunc, np.rint, np.signbit)
COMPOSED = (builtins.round, np.round, np.around, builtins.bool, builtins.divmod, np.divmod, math.log,
            np.clip, builtins.min, builtins.max, np.fmin, np.fmax, math.degrees, math.radians, np.degrees,
            np.radians, np.rad2deg, np.deg2rad)


def _is_dual(*ts):
    return any(isinstance(t, DualType) for t in ts)


def _real(x):
    """_real(x) -> the plain float under every dual layer of ``x`` (``x`` itself for a float)."""
    return x


_REAL_BY_DEPTH = {}


@overload(_real)
def _ov_real(x):
    if isinstance(x, DualType):  # x._re._re ... written out: recursion through overloads fails to link
        if x.tag not in _REAL_BY_DEPTH:
            namespace = {}
            exec(f"def real(x):\n    return x{'._re' * x.tag}\n", namespace)
            _REAL_BY_DEPTH[x.tag] = namespace["real"]
        return _REAL_BY_DEPTH[x.tag]
    if isinstance(x, (types.Number, types.Boolean)):
        return lambda x: x


def floor_divide(x, y):
    """floor_divide(x, y): the table's vocabulary word, for duals a plain float (piecewise constant)."""
    return x // y


def mod(x, y):
    """mod(x, y): the table's vocabulary word, ``x - y * floor_divide(x, y)`` for duals."""
    return x % y


def maximum(x, y):
    """maximum(x, y): the table's vocabulary word; of duals (the value in a rule of nested duals,
    second order) the entry itself, so that a tie splits the inner derivatives too."""
    return _vocabulary_njit.maximum(x, y)


def minimum(x, y):
    """minimum(x, y): as :func:`maximum`."""
    return _vocabulary_njit.minimum(x, y)


def table_maximum(x, y):
    """table_maximum(x, y): the table's ``maximum`` (``np.maximum``'s NaN), a spelling of that entry
    that only duals' own code calls: the generated rules register themselves on it."""
    return _vocabulary_njit.maximum(x, y)


def table_minimum(x, y):
    """table_minimum(x, y): as :func:`table_maximum`."""
    return _vocabulary_njit.minimum(x, y)


@overload(maximum)
def _ov_maximum(x, y):
    if _is_dual(x, y):   # (the vocabulary's x if x >= y else y took one side whole at a tie)
        return lambda x, y: table_maximum(x, y)
    return lambda x, y: _vocabulary_njit.maximum(x, y)


@overload(minimum)
def _ov_minimum(x, y):
    if _is_dual(x, y):
        return lambda x, y: table_minimum(x, y)
    return lambda x, y: _vocabulary_njit.minimum(x, y)


def _nan_passing_choice(func, name, table, either=False):
    """``func(a, b)`` of duals that passes over a NaN ``b`` (and, ``either``, a NaN ``a``):
    the builtin ``min``/``max`` with Python's choice (``a`` unless ``b`` is smaller, larger), so
    an eikonal sweep's ``T = min(T, t_new)`` passes over a candidate ``inf - inf`` as the plain
    call does, and ``np.fmin``/``np.fmax`` (``either``); elsewhere the table's entry, whose NaN
    and tie (split evenly) are np.minimum's."""
    @overload(func)
    def ov(a, b):
        if not _is_dual(a, b):
            return None
        from . import complex_rules
        from .rules import as_dual
        if _is_complex(a) or _is_complex(b):
            return complex_rules.binary(name, func, a, b)
        if isinstance(a, DualType) and (not isinstance(b, DualType) or a.tag >= b.tag):
            result = a
        else:
            result = b

        def impl(a, b):
            if _real(b) != _real(b) and _real(a) == _real(a):
                return as_dual(a, result)
            if either and _real(a) != _real(a) and _real(b) == _real(b):
                return as_dual(b, result)
            return table(a, b)
        return impl


_nan_passing_choice(builtins.min, "minimum", table_minimum)
_nan_passing_choice(builtins.max, "maximum", table_maximum)
_nan_passing_choice(np.fmin, "minimum", table_minimum, either=True)
_nan_passing_choice(np.fmax, "maximum", table_maximum, either=True)


# The generated rules use these instead of duals._vocabulary_njit's: there ``mod`` of nested duals would
# call the rule that calls ``mod`` again, a recursion through one dispatcher that fails to link.
@overload(floor_divide)
def _ov_floor_divide(x, y):
    if _is_dual(x, y):
        return lambda x, y: _real(x) // _real(y)
    return lambda x, y: x // y


@overload(mod)
def _ov_mod(x, y):
    if _is_dual(x, y):
        return lambda x, y: x - y * (_real(x) // _real(y))
    return lambda x, y: x % y


def _value_only(func):
    def ov(x):
        if _is_dual(x):
            return lambda x: func(_real(x))
    overload(func)(ov)


for _func in VALUE_ONLY:
    _value_only(_func)


@overload(builtins.round)
def _ov_round(x, ndigits=None):
    if _is_dual(x):
        if ndigits is None or isinstance(ndigits, (types.NoneType, types.Omitted)):
            return lambda x, ndigits=None: round(_real(x))
        return lambda x, ndigits=None: round(_real(x), ndigits)


def _ov_np_round(a, decimals=0, out=None):
    if isinstance(a, DualType):   # (a number: dx -= L * np.round(dx / L), the minimum image)
        return lambda a, decimals=0, out=None: np.round(_real(a), decimals)


for _func in (np.round, np.around):
    overload(_func, target="cpu")(_ov_np_round)


def _ov_divmod(x, y):
    if _is_dual(x, y):   # (x // y, x % y), as Python's floats have it: a GPS week and time of week
        return lambda x, y: (x // y, x % y)


overload(builtins.divmod)(_ov_divmod)
overload(np.divmod)(_ov_divmod)


@overload(builtins.bool)
def _ov_bool(x):
    if _is_dual(x):
        return lambda x: _real(x) != 0.0


@overload(math.log)
def _ov_log_base(x, base):
    if _is_dual(x, base):
        return lambda x, base: math.log(x) / math.log(base)


def _angle_conversion(func, factor):
    def ov(x):
        if _is_dual(x) or (isinstance(x, types.Array) and isinstance(x.dtype, DualType)):
            return lambda x: x * factor
    overload(func)(ov)


for _func, _factor in ((math.degrees, 180.0 / math.pi), (np.degrees, 180.0 / math.pi),
                       (np.rad2deg, 180.0 / math.pi), (math.radians, math.pi / 180.0),
                       (np.radians, math.pi / 180.0), (np.deg2rad, math.pi / 180.0)):
    _angle_conversion(_func, _factor)


@register_jitable
def _clipped(a, a_min, a_max):
    """``min(max(a, a_min), a_max)``; where ``a == a_min == a_max`` ``a_max``'s value with half
    the bounds' derivatives each and none of ``a``'s (the NumPy path's ``clip``, which says why;
    the two ties split gave ``(¼, ¼, ½)``)."""
    out = min(max(a, a_min), a_max)
    if a == a_min and a_min == a_max:
        moves = (a_min - _real(a_min)) + (a_max - _real(a_max))
        return (out - out) + _real(a_max) + 0.5 * moves
    return out


@overload(np.clip, target="cpu")   # (tried before Numba's own np.clip, which splits both ties)
def _ov_clip(a, a_min, a_max):
    if _is_dual(a, a_min, a_max) and not any(isinstance(t, types.Array) for t in (a, a_min, a_max)):
        return lambda a, a_min, a_max: _clipped(a, a_min, a_max)
    scalar_bounds = all(isinstance(t, (types.Number, DualType)) for t in (a_min, a_max))
    if isinstance(a, types.Array) and isinstance(a.dtype, DualType) and scalar_bounds:
        def clipped_array(a, a_min, a_max):
            out = np.empty_like(a)
            flat, into = a.ravel(), out.reshape(-1)
            for i in range(flat.size):
                into[i] = _clipped(flat[i], a_min, a_max)
            return out
        return clipped_array
    bounds_move = any(isinstance(getattr(t, "dtype", t), DualType) for t in (a_min, a_max))
    if bounds_move and not any(isinstance(t, (types.NoneType, types.Omitted)) for t in (a_min, a_max)):
        from .arrays import _at, _spread   # (arrays, through rules, imports this module)

        def clipped_broadcast(a, a_min, a_max):   # arrays, a bound traced
            out = np.minimum(np.maximum(a, a_min), a_max)
            xs, los, his = _spread(a, out, out.shape), _spread(a_min, out, out.shape), \
                _spread(a_max, out, out.shape)
            for i in np.ndindex(out.shape):
                out[i] = _clipped(_at(xs, i), _at(los, i), _at(his, i))
            return out
        return clipped_broadcast


def _n_ary(func, most=8):
    """Overloads of ``func(a, b, c, ...)`` on duals, three to ``most`` arguments: the value (and
    NaN) of the left fold of the two-argument call (the table's ``maximum``/``minimum``), and a
    tie of ``n`` arguments split evenly, ``1/n`` each, as ``np.max`` splits it (the fold gives the
    last of three tied arguments 1/2 and the others 1/4): ``best + Σ (a_tied − best) / n`` adds
    exact zeros to the value."""
    for count in range(3, most + 1):
        names = [f"a{k}" for k in range(count)]
        fold = names[0]
        for name in names[1:]:
            fold = f"func({fold}, {name})"
        body = [f"    best = {fold}", "    r = _real(best)", "    n = 0"]
        body += [f"    if _real({a}) == r:\n        n += 1" for a in names]
        body += ["    if n < 2:", "        return best", "    out = best"]
        body += [f"    if _real({a}) == r:\n        out = out + ({a} - best) / n" for a in names]
        body += ["    return out"]
        namespace = {"func": func, "_is_dual": _is_dual, "_real": _real}
        exec(f"def ov({', '.join(names)}):\n"
             f"    if _is_dual({', '.join(names)}):\n"
             f"        return impl\n"
             f"def impl({', '.join(names)}):\n" + "\n".join(body) + "\n", namespace)
        overload(func)(namespace["ov"])


_n_ary(builtins.min)
_n_ary(builtins.max)


@overload(np.append, target="cpu")   # (Numba's takes array-like values: np.asarray of a dual fails)
def _ov_append(arr, values, axis=None):
    no_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if not (isinstance(values, DualType) and isinstance(arr, types.Array) and no_axis):
        return None
    element = arr.dtype if isinstance(arr.dtype, DualType) else values

    def appended(arr, values, axis=None):   # (np.append(q, q[0]): a periodic grid closed)
        flat = arr.ravel()
        out = np.empty(flat.size + 1, element)
        for i in range(flat.size):
            out[i] = flat[i]
        out[flat.size] = values
        return out
    return appended


@register_jitable
def _horner(c, at):
    value = c[c.size - 1] + 0.0 * at   # (typed as the result whichever operand is dual)
    for k in range(c.size - 2, -1, -1):
        value = value * at + c[k]
    return value


def polyval_of_duals(x, c, tensor=True):
    """``numpy.polynomial.polynomial.polyval`` of duals in compiled code (the promoting copy calls
    it instead: Numba's own asks NumPy for a common dtype, which a dual array has not)."""


def polyval_takes(x, c):
    """Whether :func:`polyval_of_duals` serves ``polyval(x, c)`` of these Numba types."""
    return isinstance(c, types.Array) and c.ndim == 1 and _is_dual(getattr(x, "dtype", x), c.dtype)


@overload(polyval_of_duals)
def _ov_polyval(x, c, tensor=True):
    """By Horner's rule: ``x`` a number or an array, ``c`` one row of coefficients (lowest degree
    first)."""
    if not polyval_takes(x, c):
        return None
    x_type = getattr(x, "dtype", x)
    if not isinstance(x, types.Array):
        return lambda x, c, tensor=True: _horner(c, x)
    element = x_type if isinstance(x_type, DualType) else c.dtype

    def polyval_array(x, c, tensor=True):
        out = np.empty(x.shape, element)
        for i in np.ndindex(x.shape):
            out[i] = _horner(c, x[i])
        return out
    return polyval_array
