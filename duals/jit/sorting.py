"""Sorting dual arrays in @njit code, with the NumPy path's policy at ties.

Where entries tie, a sort is not differentiable; duals' policy (the NumPy path's, see
``duals/ops/sorting.py``) gives each output position the derivative of the entry that NumPy's
*stable* sort puts there (among equal entries, the earlier one first):

* ``np.sort(x)`` and the in-place ``x.sort()`` sort the rows along the last axis in that order;
* ``np.median(x)`` takes the middle entries of that order (the mean of the two middle ones for
  an even size), and is NaN with derivative zero when ``x`` holds a NaN;
* ``np.argsort(x, kind="mergesort")`` and ``x.argsort(kind="mergesort")`` are that order. A
  quicksort (the default kind) orders equal entries arbitrarily, and differently in NumPy and
  Numba, so derivatives through its indices would depend on the implementation: without ties
  the order is the same for every kind; at a tie a quicksort argsort of a dual array raises
  ``ValueError`` saying to pass ``kind="mergesort"``;
* ``np.argmax``/``np.argmin`` are those of the real parts (the first extreme entry, everywhere).

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.median(x)))(np.array([3.0, 1.0, 2.0, 5.0])).tolist()
[0.5, 0.0, 0.5, 0.0]
"""
import math

import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from .arrays import dual_array_method
from .errors import MARK
from .parts import is_dual_array, real_values


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _kind(kind):
    """'mergesort', 'quicksort' (also for the default), or None for a kind Numba does not know."""
    if _none(kind):
        return "quicksort"
    if isinstance(kind, types.StringLiteral) and kind.literal_value in ("quicksort", "mergesort", "stable"):
        return "quicksort" if kind.literal_value == "quicksort" else "mergesort"
    return None


@register_jitable
def _stable_order(keys):
    return np.argsort(keys, kind="mergesort")


@register_jitable
def _check_no_ties(keys, order):
    for i in range(1, order.shape[0]):
        a, b = keys[order[i - 1]], keys[order[i]]
        if a == b or (math.isnan(a) and math.isnan(b)):
            raise ValueError("duals.jit: np.argsort of a dual array with equal entries: a quicksort "
                             "(the default kind) orders them arbitrarily, so derivatives through "
                             "these indices are not defined; pass kind='mergesort' (NumPy's stable "
                             "order, duals' policy at ties)")


# ---------------------------------------------------------------- sort

@register_jitable
def _sorted_rows(a):
    """A copy of ``a`` sorted along its last axis in stable order (C-contiguous)."""
    c = np.ascontiguousarray(a)
    n = c.shape[-1] if c.ndim else 1
    rows = c.reshape((c.size // max(n, 1), n))
    out = np.empty_like(rows)
    keys = real_values(rows)
    for r in range(rows.shape[0]):
        out[r] = rows[r][_stable_order(keys[r])]
    return out.reshape(c.shape)


def _sort(a):
    if is_dual_array(a):
        return lambda a: _sorted_rows(a)


def _sort_in_place(a, kind=None):
    """``x.sort()`` of a dual array, of any kind: the values are those of every kind, the
    derivatives those of the stable order."""
    if not is_dual_array(a) or _kind(kind) is None:
        return None

    def impl(a, kind=None):
        s = _sorted_rows(a)
        for idx in np.ndindex(a.shape):
            a[idx] = s[idx]
    return impl


# ---------------------------------------------------------------- argsort, argmax, argmin

def _argsort(a, kind=None):
    if not is_dual_array(a):
        return None
    which = _kind(kind)
    if which is None:
        return None  # Numba's own error for a kind it does not know
    if a.ndim != 1:
        raise errors.TypingError(f"{MARK}np.argsort of a dual array takes a 1-d array (as Numba's "
                                 f"for floats), got {a.ndim}-d")
    if which == "mergesort":
        return lambda a, kind=None: _stable_order(real_values(a))

    def quicksort(a, kind=None):
        keys = real_values(a)
        order = _stable_order(keys)
        _check_no_ties(keys, order)  # without ties, every kind gives this order
        return order
    return quicksort


def _arg_extreme(func):
    def ov(a, axis=None):
        if not is_dual_array(a):
            return None
        if _none(axis):
            return lambda a, axis=None: func(real_values(a))
        return lambda a, axis=None: func(real_values(a), axis)
    return ov


# ---------------------------------------------------------------- median

def _median(a, axis=None):
    if not is_dual_array(a):
        return None
    if not _none(axis):
        raise errors.TypingError(f"{MARK}np.median of a dual array takes the whole array (as "
                                 f"Numba's for floats); for one axis, loop over the other")
    T = a.dtype

    def impl(a, axis=None):
        n = a.size
        if n == 0:
            raise ValueError("duals.jit: np.median of an empty array")
        flat = np.ascontiguousarray(a).reshape(n)
        keys = real_values(flat)
        out = np.empty(1, T)
        if np.isnan(keys).any():  # NumPy gives NaN; its derivative is zero on the NumPy path
            out[0] = math.nan
            return out[0]
        order = _stable_order(keys)
        k = n // 2
        if n % 2:
            out[0] = flat[order[k]]
        else:
            out[0] = (flat[order[k - 1]] + flat[order[k]]) / 2.0
        return out[0]
    return impl


def _sort_method(a, kind=None):
    """_sort_method(a, kind=None): ``a.sort()`` of a dual array."""


def _argsort_method(a, kind=None):
    """_argsort_method(a, kind=None) -> ``a.argsort()`` of a dual array."""


def install():
    overload(np.sort, target="cpu")(_sort)
    overload(_sort_method)(_sort_in_place)
    dual_array_method("sort", _sort_method)
    overload(np.argsort, target="cpu")(_argsort)
    overload(_argsort_method)(_argsort)
    dual_array_method("argsort", _argsort_method)
    overload(np.argmax, target="cpu")(_arg_extreme(np.argmax))
    overload(np.argmin, target="cpu")(_arg_extreme(np.argmin))
    overload(np.median, target="cpu")(_median)
