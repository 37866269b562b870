"""``math.lgamma`` and ``math.gamma`` of duals in compiled code.

Their derivatives need the digamma function ψ = Γ'/Γ, which NumPy lacks (so it is not a word of
the derivative table; ``duals.special.gammaln`` takes SciPy's on the NumPy path). Here ψ is
computed by ordinary Numba code (reflection below zero, the recurrence ψ(x) = ψ(x + 1) - 1/x up
to x ≥ 10, then the asymptotic series to the 14th power): within 1.2e-14 relative of mpmath's
40-digit values over [-4.7, 30] (the worst just beside ψ's root at 1.46, where ψ tends to 0).
duals differentiate that code again for second and higher order, as any other @njit code:
``duals.hessian`` of a negative-binomial likelihood needs ψ'.

At the poles (0, -1, -2, ...) the value is ``inf`` and every derivative NaN.

>>> import numba, math, duals
>>> round(numba.njit(lambda x: math.lgamma(x))(duals.Dual(1.0, 1.0)).tangent, 12)   # ψ(1) = -γ
-0.577215664902
"""
import math

from .._overloads import overload, register_jitable
from ._types import make
from .extras import _is_dual, _real
from .lanes import lscale

FUNCTIONS = (math.lgamma, math.gamma)

# B_2k / (2k) of the asymptotic series ψ(x) ~ log x - 1/(2x) - Σ B_2k / (2k x^2k), k = 1..7
_SERIES = (1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0, 1.0 / 132.0,
           -691.0 / 32760.0, 1.0 / 12.0)


@register_jitable
def digamma(x):
    """digamma(x) -> ψ(x) = d/dx log Γ(x), for a float or a dual (NaN at the poles 0, -1, ...)."""
    result = 0.0 * x
    if _real(x) <= 0.0:
        if _real(x) == math.floor(_real(x)):
            return result + math.nan
        # ψ(1 - x) - ψ(x) = π cot(πx); cot has period 1, so take πr with r = x - nearest
        # integer, exact, instead of the rounded product πx
        r = x - math.floor(_real(x) + 0.5)
        result = result - math.pi / math.tan(math.pi * r)
        x = 1.0 - x
    while _real(x) < 10.0:
        result = result - 1.0 / x
        x = x + 1.0
    inverse_square = 1.0 / (x * x)
    series = 0.0 * x
    for k in range(6, -1, -1):
        series = (series + _SERIES[k]) * inverse_square
    return result + math.log(x) - 0.5 / x - series


@overload(math.lgamma)
def _ov_lgamma(x):
    if _is_dual(x):
        return lambda x: make(math.lgamma(x._re), lscale(x._du, digamma(x._re)))


@overload(math.gamma)
def _ov_gamma(x):
    if _is_dual(x):
        def impl(x):
            value = math.gamma(x._re)
            return make(value, lscale(x._du, value * digamma(x._re)))
        return impl
