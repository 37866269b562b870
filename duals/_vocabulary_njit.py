"""The formula vocabulary compiled for Numba (used by the generated kernels and dual rules).

``duals.derivatives`` writes its formulas with NumPy's names. The words are written once, in
plain Python, in :mod:`duals._vocabulary`; this module compiles each of them with
``numba.njit`` so that the same formula string also compiles into a kernel.
"""
import numba
import numpy as np

from ._overloads import register_jitable
from . import _vocabulary
from ._numba_cache import cached_njit
from ._vocabulary import MATH_SPELLINGS

_jit = cached_njit(error_model="numpy")

globals().update(MATH_SPELLINGS)  # sqrt, exp, arcsin -> math.asin, ... (Numba knows math)

for _name in ("exp2", "sign", "floor_divide", "mod", "where", "maximum", "minimum", "expit",
              "logaddexp"):
    globals()[_name] = _jit(getattr(_vocabulary, _name))


@register_jitable
def cbrt(x):
    # the Python spelling refuses, so that 0-d values take NumPy's correctly rounded cbrt.
    # Not a dispatcher: np.cbrt of a nested dual calls cbrt of the level below, and a dispatcher
    # calling itself with another type fails to link (an overload compiles each type apart)
    return np.cbrt(x)


@register_jitable
def fmod(x, y):
    return np.fmod(x, y)    # Numba has no math.fmod
