"""Scalar spellings of the formula vocabulary for Numba (used by the generated kernels).

``duals.derivatives`` writes its formulas with NumPy's names; this module gives each name
a nopython-mode scalar meaning, so that the same formula string compiles into a kernel.
"""
import math

import numba
import numpy as np

from ._python_scalar import MATH_SPELLINGS

_jit = numba.njit(cache=True, error_model="numpy")

globals().update(MATH_SPELLINGS)  # sqrt, exp, arcsin -> math.asin, ...


@_jit
def cbrt(x):
    return np.cbrt(x)


@_jit
def exp2(x):
    return 2.0 ** x


@_jit
def sign(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x * 0.0  # 0 stays 0, nan stays nan


@_jit
def floor_divide(x, y):
    return x // y


@_jit
def mod(x, y):
    return x % y


@_jit
def where(condition, a, b):
    return a if condition else b


@_jit
def maximum(x, y):
    if x != x or y != y:
        return x + y  # nan propagates, as in NumPy
    return x if x >= y else y


@_jit
def minimum(x, y):
    if x != x or y != y:
        return x + y
    return x if x <= y else y


@_jit
def expit(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@_jit
def logaddexp(x, y):
    if x == y:  # also both -inf or both +inf
        return x + math.log(2.0)
    m = x if x > y else y
    return m + math.log1p(math.exp(-abs(x - y)))
