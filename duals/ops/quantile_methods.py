"""NumPy's thirteen ``method=`` rules of ``quantile``/``percentile`` as positions and weights.

Every method reads the sorted sample at two neighbouring positions ``lo <= hi`` and
interpolates, ``below + (above - below) t``; the discrete ones have ``lo == hi`` or a weight that
does not depend on ``q``. :func:`positions` computes ``lo``, ``hi`` and ``t`` with NumPy's own
arithmetic (its virtual index, its clamping at the ends, its fixed weights), so values match
NumPy's bit for bit and the derivative is that of the interpolation: ``1 - t`` and ``t`` to the
two entries, and, for a traced ``q`` and a continuous method, the slope between them times the
virtual index's slope in ``q``.

>>> lo, hi, t = positions("hazen", 4, np.array([0.5]))
>>> lo.tolist(), hi.tolist(), t.tolist()
([1], [2], [0.5])
"""
import numpy as np

from ..core import Tracer
from . import innermost
from .elementwise import where

# Hyndman and Fan's continuous methods: the virtual index n q + alpha + q (1 - alpha - beta) - 1
CONTINUOUS = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
              "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
FIXED_WEIGHT = ("averaged_inverted_cdf", "midpoint")
METHODS = ("linear",) + tuple(CONTINUOUS) + DISCRETE + FIXED_WEIGHT


def _virtual(method, n, q):
    """NumPy's virtual index (a float) for the interpolating methods, written as NumPy writes it;
    ``q`` may be traced (the continuous methods' index is then traced too)."""
    if method == "linear":
        return q * (n - 1) if isinstance(q, Tracer) else (n - 1) * q
    if method in CONTINUOUS:
        alpha, beta = CONTINUOUS[method]
        return n * q + (alpha + q * (1 - alpha - beta)) - 1
    if method == "averaged_inverted_cdf":
        return n * q - 1
    return 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))     # midpoint


def _boundary(index, take_previous):
    """NumPy's rounding of a discrete method's index to an order statistic: the one below where
    ``take_previous(fraction, index)``, else the one above; never below the first."""
    previous = np.floor(index)
    chosen = np.where(take_previous(index - previous, index), previous, previous + 1).astype(np.intp)
    return np.maximum(chosen, 0)


def _discrete(method, n, q):
    if method == "inverted_cdf":
        return _boundary(n * q - 1, lambda fraction, _: fraction == 0)
    if method == "closest_observation":
        return _boundary(n * q - 1 - 0.5,
                         lambda fraction, index: (fraction == 0) & (np.floor(index) % 2 == 1))
    if method == "lower":
        return np.floor((n - 1) * q).astype(np.intp)
    if method == "higher":
        return np.ceil((n - 1) * q).astype(np.intp)
    return np.around((n - 1) * q).astype(np.intp)     # nearest


def positions(method, n, q, traced=None):
    """positions(method, n, q, traced=None) -> (lo, hi, t): the sorted positions (intp) and the
    weight of ``hi`` of ``method`` for samples of ``n`` entries (an int, or an array broadcasting
    against ``q``: one count per slice). ``q`` is a plain float array, computed with in its own
    precision as NumPy does (float32 ``q``: float32 positions); ``t`` has that precision, or is
    traced when ``traced`` (``q`` traced) is given and the method is continuous, or is None for
    a discrete method (``lo == hi``, the entry taken as it is)."""
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {', '.join(METHODS)}")
    last = np.maximum(np.asarray(n) - 1, 0)
    if np.ndim(n):     # counts per slice: NumPy takes each as a Python int, which q's precision keeps
        n = np.asarray(n).astype(q.dtype)
    if method in DISCRETE:     # one entry, taken as it is (no weight: the data's precision)
        index = np.minimum(_discrete(method, n, q), last)
        return index, index, None
    virtual = np.asarray(_virtual(method, n, q))
    lo = np.clip(np.floor(virtual), 0, last).astype(np.intp)
    hi = np.where(virtual < 0, 0, np.minimum(lo + 1, last))     # before the first: the first
    if method in FIXED_WEIGHT:
        fraction = virtual - np.floor(virtual)
        if method == "averaged_inverted_cdf":
            t = np.where(fraction == 0, 0.5, 1.0)
        else:
            t = np.where(virtual % 1 == 0, 0.0, 0.5)
        return lo, hi, t.astype(q.dtype)
    if isinstance(traced, Tracer):
        return lo, hi, _virtual(method, n, traced) - lo.astype(q.dtype)
    return lo, hi, np.asarray(virtual - lo).astype(q.dtype)


def fractions(q):
    """fractions(q) -> the plain values of ``q`` as floats of its own precision (integers:
    float64), checked to lie in [0, 1] as NumPy checks them."""
    values = np.asarray(innermost(q))
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    if not (np.all(values >= 0) and np.all(values <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    return values


def interpolate(below, above, t, weak, dtype):
    """NumPy's lerp of the entries at the two positions: ``below + (above - below) t``, and
    ``above - (above - below)(1 - t)`` from ``t >= 0.5`` on. A Python-number ``q`` (``weak``)
    rounds ``t`` and ``1 - t`` to the data's precision ``dtype``, as NumPy's weak promotion does; an
    array ``q`` keeps its own (float32 data, float64 ``q``: a float64 result)."""
    if t is None:        # a discrete method: the entry itself
        return below
    if isinstance(t, Tracer):
        low, high, plain = t, 1.0 - t, innermost(t)
    elif weak:
        low, high, plain = t.astype(dtype), (1.0 - t).astype(dtype), t
    else:
        low, high, plain = t, 1.0 - t, t
    diff = above - below
    return where(plain >= 0.5, above - diff * high, below + diff * low)
