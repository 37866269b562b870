"""NumPy functions of dual arrays in @njit code written with the scalar dual arithmetic they are
made of, so forward lanes and the tape (compiled reverse mode) both differentiate them.

* ``np.vdot(a, b)``: the flattened products summed in order (``a`` conjugated when complex);
* ``np.vander(x, N=None, increasing=False)``: the powers as running products, as NumPy forms them;
* ``np.nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None)``: finite entries pass through
  with their derivatives; a NaN or infinite entry becomes its replacement, a constant;
* ``np.unwrap(p, discont=None, axis=-1, period=2π)`` of 1-d arrays: NumPy's correction (whole
  periods, piecewise constant) computed from the real parts and added, so the derivative passes
  through unchanged;
* ``np.asarray(t)`` and ``np.array(t)`` of a dual number ``t``: a 0-d array of it.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.vander(x, 3)[:, 0]))(np.array([1.0, 2.0])).tolist()
[[2.0, 0.0], [0.0, 4.0]]
"""
import math

import numpy as np
from numba.core import errors, types

from .._overloads import overload
from ._types import DualType
from .array_functions import _has_dual
from .errors import MARK
from .extras import _real

TWO_PI = 2.0 * math.pi


def _complex(t):
    e = t.dtype if isinstance(t, types.Array) else t
    return isinstance(getattr(e, "float", None), types.Complex) or isinstance(e, types.Complex)


def _vdot(a, b):
    if not _has_dual(a, b):
        return None
    if not all(isinstance(t, types.Array) for t in (a, b)):
        raise errors.TypingError(f"{MARK}np.vdot takes two arrays")

    def vdot(a, b):
        x, y = np.ravel(a), np.ravel(b)
        if x.size != y.size:
            raise ValueError("np.vdot: the two arrays have different sizes")
        if x.size == 0:
            return np.sum(x * y)
        total = np.conj(x[0]) * y[0]
        for i in range(1, x.size):
            total = total + np.conj(x[i]) * y[i]
        return total
    return vdot


def _vander(x, N=None, increasing=False):
    if not _has_dual(x):
        return None
    if not (isinstance(x, types.Array) and x.ndim == 1):
        raise errors.TypingError(f"{MARK}np.vander takes a 1-d array")
    T = x.dtype

    def vander(x, N=None, increasing=False):
        columns = x.shape[0] if N is None else N
        if columns < 0:
            raise ValueError("np.vander: N must be nonnegative")
        out = np.empty((x.shape[0], columns), T)
        for i in range(x.shape[0]):
            power = x[i] ** 0     # the constant one of x's level
            for k in range(columns):
                out[i, k if increasing else columns - 1 - k] = power
                power = power * x[i]
        return out
    return vander


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not _has_dual(x):
        return None
    if _complex(x):
        raise errors.TypingError(f"{MARK}np.nan_to_num of complex dual numbers is not supported in "
                                 f"compiled code; replace the entries with np.where")
    if isinstance(x, DualType):
        T = x

        def scalar(x, copy=True, nan=0.0, posinf=None, neginf=None):
            out = np.empty(1, T)
            out[0] = x
            return np.nan_to_num(out, False, nan, posinf, neginf)[0]
        return scalar
    largest = np.finfo(np.dtype(str(x.dtype.float))).max

    def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
        top = largest if posinf is None else posinf
        bottom = -largest if neginf is None else neginf
        out = x.copy() if copy else x
        for idx in np.ndindex(out.shape):
            value = _real(out[idx])
            if np.isnan(value):
                out[idx] = nan
            elif np.isinf(value):
                out[idx] = top if value > 0 else bottom
        return out
    return nan_to_num


def _unwrap(p, discont=None, axis=-1, period=TWO_PI):
    if not _has_dual(p):
        return None
    if not (isinstance(p, types.Array) and p.ndim == 1) or _complex(p):
        raise errors.TypingError(f"{MARK}np.unwrap of duals takes a 1-d array of real duals")

    def unwrap(p, discont=None, axis=-1, period=TWO_PI):
        if axis != -1 and axis != 0:
            raise ValueError("np.unwrap: axis out of bounds for a 1-d array")
        half = period / 2.0
        threshold = half if discont is None else discont
        out = p.copy()
        correction = 0.0
        for i in range(1, p.shape[0]):
            step = _real(p[i]) - _real(p[i - 1])
            wrapped = np.mod(step + half, period) - half
            if wrapped == -half and step > 0:
                wrapped = half
            if abs(step) >= threshold:
                correction += wrapped - step
            out[i] = p[i] + correction
        return out
    return unwrap


def _zero_dimensional(a, dtype=None):
    """np.asarray(x) and np.array(x) of a dual number: a 0-d array of it, as of a float (code
    reads ``np.asarray(t).dtype`` to make a buffer of a scalar input's type)."""
    if not isinstance(a, DualType):
        return None
    if not (dtype is None or isinstance(dtype, (types.NoneType, types.Omitted))):
        raise errors.TypingError(f"{MARK}np.asarray(x, dtype) of a dual number: leave the dtype "
                                 f"out (the array holds the dual; its .dtype is the dual's)")
    T = a

    def make(a, dtype=None):
        out = np.empty((), T)
        out[()] = a
        return out
    return make


def _typed_asarray(a, dtype=None):
    """np.asarray(x, dtype=np.float64) of an array of duals (a defensive first line of a model):
    ``x`` itself where the duals are over that float, as NumPy returns the array itself (Numba's
    own calls ``x.astype``, which it cannot type for duals); another float refuses by name."""
    if not (isinstance(a, types.Array) and isinstance(a.dtype, DualType)):
        return None
    if dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        return None
    wanted = getattr(dtype, "dtype", getattr(dtype, "instance_type", None))
    if not isinstance(wanted, types.Float):
        return None
    if wanted != a.dtype.float:
        raise errors.TypingError(f"{MARK}np.asarray(x, dtype={wanted}) of duals over {a.dtype.float}: "
                                 f"compiled duals keep the float type of the inputs; drop dtype= (or "
                                 f"give the function {wanted} inputs)")
    return lambda a, dtype=None: a


def _install():
    for func, ov in ((np.vdot, _vdot), (np.vander, _vander), (np.nan_to_num, _nan_to_num),
                     (np.unwrap, _unwrap), (np.asarray, _zero_dimensional), (np.array, _zero_dimensional),
                     (np.asarray, _typed_asarray)):
        overload(func, target="cpu")(ov)


_install()
