"""Powers and sinc: ``power`` (a constant exponent takes a cheaper, equally exact primitive,
``integer_pow``, or ``square``, ``sqrt``, ``reciprocal``) and ``sinc``, exact to every order at 0.

>>> import duals
>>> float(duals.grad(lambda x: power(x, 3))(2.0))
12.0
"""
import math

import numpy as np

from ..core import Primitive
from ..index_sets import elementwise_rule
from . import NAMESPACE, dtype_of, export, innermost, shape_of as shape
from .elementwise import PRIMITIVES, TRACED, _times, masked, sqrt, where


def _integer_pow_impl(x, *, n):
    return np.power(x, float(n)) if n < 0 else np.power(x, n)


integer_pow = Primitive("integer_pow", _integer_pow_impl)
integer_pow.elementwise = True
integer_pow.def_sparsity(elementwise_rule(True))


def _integer_pow_derivative(x, n):
    return n * power(x, n - 1)


integer_pow.def_jvp(0, lambda t, out, x, *, n: _times(_integer_pow_derivative(x, n), t))
integer_pow.def_vjp(0, lambda g, out, x, *, n, unreached=None: masked(
    _times(_integer_pow_derivative(x, n), g), unreached))


def power(x, y):
    """power(x, y): ``x ** y``; a constant exponent takes a cheaper, equally exact primitive.

    At ``x = 0`` the derivative follows the limits (see ``duals.derivatives``).

    >>> float(power(2.0, 3))
    8.0
    """
    if isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(x, (int, float)):
        y = float(y)
        if y == 2.0:
            return NAMESPACE["square"](x)   # (smooth at a modulus's 0: complex_parts.square)
        if y == 1.0:
            return x
        if y == 0.5:
            return sqrt(x)
        if y == -1.0:
            return PRIMITIVES["reciprocal"](x)
        if y == 0.0:
            return np.ones(shape(x), dtype=dtype_of(x))[()]
        if y.is_integer() and abs(y) <= 64:
            return integer_pow(x, n=int(y))
    return PRIMITIVES["pow"](x, y)


NAMESPACE["power"] = NAMESPACE["float_power"] = TRACED["power"] = power


# 1/(2k+1)! with alternating signs: sin(u)/u = sum of SINC_SERIES[k] u^(2k); at |u| < 1/2 the
# first term left out (k = 11) is below 1e-27, so every derivative up to the eighth is exact
SINC_SERIES = [(-1.0) ** k / math.factorial(2 * k + 1) for k in range(11)]


@export()
def sinc(x):
    """sinc(x) = sin(πx)/(πx), with NumPy's values (1 at 0).

    Its derivatives of every order near 0 come from the Taylor polynomial of sin(u)/u, which has
    no cancellation (the quotient's second derivative at 1e-9 is 0.0 for -π²/3); elsewhere from
    sin(u)/u.

    >>> import duals
    >>> round(float(duals.hessian(sinc)(0.0)), 12) == round(-np.pi ** 2 / 3, 12)
    True
    """
    px = np.pi * x
    plain = np.asarray(innermost(px))
    near = np.abs(plain) < 0.5
    if not np.any(near):
        return PRIMITIVES["sin"](px) / px
    u = where(near, px, 0.5)                # each branch sees only the values it serves
    u2 = u * u
    series = SINC_SERIES[-1]
    for c in reversed(SINC_SERIES[:-1]):
        series = series * u2 + c
    # the value NumPy gives: the series plus a constant (by Sterbenz's lemma the sum is exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        numpy_value = np.sinc(innermost(x))
    series = series + np.where(near, numpy_value - np.asarray(innermost(series)), 0.0)
    if np.all(near):
        return series
    far = where(near, 1.0, px)
    return where(near, series, PRIMITIVES["sin"](far) / far)
