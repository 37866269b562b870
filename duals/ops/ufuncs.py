"""More NumPy ufuncs, composed from the element-wise primitives: ``fmax``/``fmin``,
``heaviside``, the angle conversions ``deg2rad``/``radians``/``rad2deg``/``degrees``,
``nan_to_num``, the binary exponent pair ``frexp``/``ldexp``, ``modf`` and ``divmod``.

Policy: ``fmax``/``fmin`` are ``maximum``/``minimum`` that ignore a NaN operand (the derivative
then comes from the other operand; ties split evenly, as for ``maximum``). ``heaviside`` is
piecewise constant: its derivative with respect to ``x1`` is zero, and its result is plain unless
the value at zero, ``x2``, is traced (then entries where ``x1 == 0`` carry ``x2``'s derivative).
``nan_to_num`` gives replaced entries a zero derivative. ``frexp(x)`` returns the mantissa
``x / 2**e`` (derivative ``dx / 2**e``: piecewise linear, on the piece ``[2**(e-1), 2**e)`` that
holds ``x``, so at a power of two the piece to its right) and the exponent ``e`` as a plain
integer array; at ``x = 0`` (``frexp(0) = (0, 0)``) the same formula gives ``dx``, so
``ldexp(*frexp(x))`` differentiates to ``dx`` everywhere (for a subnormal ``x`` the derivative
``2**-e`` is beyond the float range: inf, with the exact mantissa). ``ldexp(x, e)`` is ``x * 2**e`` for a
plain integer ``e``. ``modf(x)`` returns the fractional part with derivative ``dx`` (as ``mod``: the
one-sided derivative on both sides of a jump, 0 at ±inf) and the integral part as a plain array
(piecewise constant); ``divmod(x1, x2)`` is ``(floor_divide(x1, x2), mod(x1, x2))``.
"""
import math

import numpy as np

from ..core import Tracer, changed_in_place
from . import NAMESPACE, export, innermost
from .elementwise import PRIMITIVES, maximum, minimum, where


def _plain(x):
    return np.asarray(innermost(x))


def _nan_safe(name, prim):
    def func(x1, x2):
        x1, x2 = (x if isinstance(x, Tracer) else np.asarray(x) for x in (x1, x2))
        n1, n2 = np.isnan(_plain(x1)), np.isnan(_plain(x2))
        if not (n1.any() or n2.any()):
            return prim(x1, x2)
        # a NaN operand is replaced by the other one: prim(y, y) = y with derivative 1/2 + 1/2
        return prim(where(n1, x2, x1), where(n2, x1, x2))
    func.__name__ = func.__qualname__ = name
    return func


fmax = export("fmax")(_nan_safe("fmax", maximum))
fmax.__doc__ = """fmax(x1, x2): the larger entry, ignoring NaN (NaN only where both are NaN).

    >>> float(fmax(np.nan, 2.0))
    2.0
    """
fmin = export("fmin")(_nan_safe("fmin", minimum))
fmin.__doc__ = """fmin(x1, x2): the smaller entry, ignoring NaN (NaN only where both are NaN).

    >>> float(fmin(1.0, np.nan))
    1.0
    """


@export()
def heaviside(x1, x2):
    """heaviside(x1, x2): 0 for x1 < 0, ``x2`` at 0, 1 for x1 > 0; piecewise constant in ``x1``.

    >>> heaviside(np.array([-1.0, 0.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    v1 = _plain(x1)
    if not isinstance(x2, Tracer):
        return np.heaviside(v1, x2)
    return where(v1 == 0, x2, np.heaviside(v1, 0.0))


_TO_RAD = math.pi / 180.0
_TO_DEG = 180.0 / math.pi


@export("deg2rad", "radians")
def deg2rad(x):
    """deg2rad(x): degrees to radians, ``x * (pi / 180)`` as NumPy computes it.

    >>> round(float(deg2rad(90.0)), 6)
    1.570796
    """
    return x * _TO_RAD


@export("rad2deg", "degrees")
def rad2deg(x):
    """rad2deg(x): radians to degrees, ``x * (180 / pi)`` as NumPy computes it.

    >>> round(float(rad2deg(np.pi)), 12)
    180.0
    """
    return x * _TO_DEG


@export()
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None): NaN and infinities replaced.

    Infinities become the largest finite numbers of the dtype unless given; replaced entries have
    derivative zero, the others keep theirs.

    >>> nan_to_num(np.array([np.nan, 1.0, -np.inf])).tolist()[:2]
    [0.0, 1.0]
    """
    v = _plain(x)
    if not isinstance(x, Tracer):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    info = np.finfo(v.dtype if v.dtype.kind == "f" else np.float64)
    given = x
    for mask, value in ((np.isnan(v), nan), (np.isposinf(v), info.max if posinf is None else posinf),
                        (np.isneginf(v), info.min if neginf is None else neginf)):
        if mask.any():
            x = where(mask, value if isinstance(value, Tracer) else np.asarray(value, info.dtype), x)
    if x is given:      # nothing replaced: NumPy's copy, or x itself with copy=False
        return NAMESPACE["copy"](x) if copy else x
    if not copy:        # "in place": a traced value cannot change, other names for x become stale
        changed_in_place(given)
    return x


@export()
def frexp(x, /, *args, **kwargs):
    """frexp(x) -> (mantissa, exponent): ``x = mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1``.

    The mantissa carries the derivative ``dx / 2**exponent``; the exponent is a plain int array.

    >>> m, e = frexp(np.array([8.0, 0.75]))
    >>> m.tolist(), e.tolist()
    ([0.5, 0.75], [4, 0])
    """
    _no_out("frexp", args, kwargs)
    if not isinstance(x, Tracer):
        return np.frexp(x, **kwargs)
    v = _plain(x)
    _, exponent = np.frexp(v, **kwargs)
    one = np.ones((), v.dtype)
    if np.all(-exponent < np.finfo(v.dtype).maxexp):
        return x * np.ldexp(one, -exponent), exponent
    half = -exponent // 2   # subnormal x: 2**-e overflows, its halves do not (the value stays exact)
    return (x * np.ldexp(one, half)) * np.ldexp(one, -exponent - half), exponent


def _no_out(name, args, kwargs):
    """Refuse an ``out`` (positional or keyword) of a two-output ufunc; drop ``out=None``."""
    if args or kwargs.get("out") is not None:
        raise TypeError(f"{name}(..., out=...) cannot write traced values into arrays; drop out=")
    kwargs.pop("out", None)


@export()
def ldexp(x1, x2, /, **kwargs):
    """ldexp(x1, x2): ``x1 * 2**x2`` for integer exponents ``x2`` (plain: they have no derivative).

    >>> ldexp(np.array([0.75]), 2).tolist()
    [3.0]
    """
    if isinstance(x2, Tracer):
        raise TypeError("ldexp: the exponent x2 is an integer and cannot be a traced value; "
                        "multiply by 2.0 ** x2 (np.exp2(x2)) for a differentiable exponent")
    if not isinstance(x1, Tracer):
        return np.ldexp(x1, x2, **kwargs)
    if kwargs:
        raise TypeError(f"ldexp on a traced value accepts no keywords, got {sorted(kwargs)}")
    return x1 * np.ldexp(np.ones((), _plain(x1).dtype), np.asarray(x2))


@export()
def modf(x, /, *args, **kwargs):
    """modf(x) -> (fractional part, integral part), both with the sign of ``x``; the fractional
    part carries ``dx``, the integral part is plain.

    >>> f, i = modf(np.array([2.5, -1.25]))
    >>> f.tolist(), i.tolist()
    ([0.5, -0.25], [2.0, -1.0])
    """
    _no_out("modf", args, kwargs)
    if not isinstance(x, Tracer):
        return np.modf(x, **kwargs)
    v = _plain(x)
    fraction, whole = np.modf(v, **kwargs)
    finite = np.isfinite(v)
    whole_finite = np.where(finite, whole, 0).astype(v.dtype)
    # x - whole is exact; on the negative side -(whole - x) keeps NumPy's -0.0 at the integers
    shifted = where(np.signbit(v), -(whole_finite - x), x - whole_finite)
    return where(finite, shifted, fraction), whole


@export()
def divmod(x1, x2, /, *args, **kwargs):
    """divmod(x1, x2) -> (floor_divide(x1, x2), mod(x1, x2)), NumPy's values; the quotient is
    piecewise constant, the remainder has derivatives ``1`` and ``-floor_divide(x1, x2)``.

    >>> q, r = divmod(np.array([7.5]), 2.0)
    >>> q.tolist(), r.tolist()
    ([3.0], [1.5])
    """
    if args or kwargs.get("out") is not None:
        raise TypeError("divmod(..., out=...) cannot write traced values into arrays; drop out=")
    kwargs.pop("out", None)
    if not isinstance(x1, Tracer) and not isinstance(x2, Tracer):
        return np.divmod(x1, x2, **kwargs)
    if kwargs:
        raise TypeError(f"divmod on a traced value accepts no keywords, got {sorted(kwargs)}")
    return PRIMITIVES["floor_divide"](x1, x2), PRIMITIVES["mod"](x1, x2)
