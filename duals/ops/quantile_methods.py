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


def positions(method, n, q_plain, q=None, dtype=np.float64):
    """positions(method, n, q_plain, q=None, dtype=float64) -> (lo, hi, t): the sorted positions
    (intp) and the weight of ``hi`` (``dtype``; traced when ``q`` is traced and the method is
    continuous) of ``method`` for samples of ``n`` entries (an int, or an array broadcasting
    against ``q_plain``: one count per slice)."""
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {', '.join(METHODS)}")
    last = np.maximum(np.asarray(n) - 1, 0)
    if method in DISCRETE:
        index = np.minimum(_discrete(method, n, q_plain), last)
        return index, index, np.zeros(index.shape, dtype)
    virtual = _virtual(method, n, q_plain)
    lo = np.clip(np.floor(virtual), 0, last).astype(np.intp)
    hi = np.where(virtual < 0, 0, np.minimum(lo + 1, last))     # before the first: the first
    if method in FIXED_WEIGHT:
        fraction = virtual - np.floor(virtual)
        if method == "averaged_inverted_cdf":
            t = np.where(fraction == 0, 0.5, 1.0)
        else:
            t = np.where(virtual % 1 == 0, 0.0, 0.5)
        return lo, hi, t.astype(dtype)
    if isinstance(q, Tracer):
        return lo, hi, _virtual(method, n, q) - lo.astype(dtype)
    return lo, hi, np.asarray(virtual - lo).astype(dtype)
