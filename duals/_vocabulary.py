"""Plain-Python spellings of the formula vocabulary, for 0-d float64 operands.

A NumPy call on a 0-d value costs about a microsecond and a Numba dispatch a little
more; ``math`` costs tens of nanoseconds. Forward mode on scalars therefore evaluates
the table's formulas with these functions first. Python raises where NumPy returns
nan or inf (``math.log(-1)``, ``1 / 0``, overflow) and ``(-8) ** 0.5`` is complex:
callers catch :data:`FALLBACK` and use the array path instead, so results never differ
in kind from NumPy's.
"""
import math

FALLBACK = (ValueError, ZeroDivisionError, OverflowError, TypeError)

# the vocabulary words that are plain math functions, shared with the Numba spellings
MATH_SPELLINGS = {
    "sqrt": math.sqrt,
    "exp": math.exp,
    "expm1": math.expm1,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "log1p": math.log1p,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "arcsin": math.asin,
    "arccos": math.acos,
    "arctan": math.atan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "arcsinh": math.asinh,
    "arccosh": math.acosh,
    "arctanh": math.atanh,
    "arctan2": math.atan2,
    "hypot": math.hypot,
    "erf": math.erf,
    "erfc": math.erfc,
    "copysign": math.copysign,
}
globals().update(MATH_SPELLINGS)
abs = abs  # noqa: A001  (the builtin, re-exported for formulas)


def cbrt(x):
    raise TypeError("cbrt: NumPy's correctly rounded cbrt is used instead")


def exp2(x):
    return 2.0 ** x


def sign(x):
    return 1.0 if x > 0 else -1.0 if x < 0 else x * 0.0


def floor_divide(x, y):
    return x // y


def mod(x, y):
    return x % y


def fmod(x, y):
    return math.fmod(x, y)


def where(condition, a, b):
    return a if condition else b


def maximum(x, y):
    if x != x or y != y:
        return x + y
    return x if x >= y else y


def minimum(x, y):
    if x != x or y != y:
        return x + y
    return x if x <= y else y


def expit(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def logaddexp(x, y):
    if x == y:   # (halves of both, not x alone: on nested duals y's derivative counts too)
        return 0.5 * x + 0.5 * y + math.log(2.0)
    m = x if x > y else y
    return m + math.log1p(math.exp(-abs(x - y)))
