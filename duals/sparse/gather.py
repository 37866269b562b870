"""The compiled loops of compressed evaluation: seed the lanes, read the entries back, check.

:mod:`duals.sparse.compressed` says what the lanes mean; these loops do the per-entry work on
plain arrays (Numba, compiled on first use and cached on disk under the file lock). The lanes are read where they
lie: lane ``c`` of line ``i`` is one element of a flat array at an offset the layout computed
once, so reading the entries back is one pass over the entries.

* :func:`seed` writes a compiled dual argument's float buffer ``(n, 1 + lanes)`` straight from
  the colours: the primal, lane ``colour(j)`` of column ``j`` set to one, the check lane last;
* :func:`any_nonfinite` says whether an inf or a NaN lies anywhere in a flat array (the lanes
  that hold one are then found by NumPy: it is rare);
* :func:`take` copies the entries into the matrix's data, ``data[q] = flat[source[q]]``;
* :func:`check_lines` compares each line of the check lane with the decompressed line times
  the direction (see :func:`mismatch`), and :func:`mismatches` does so for a matrix assembled
  otherwise (Hessians, repaired lanes).

>>> import numpy as np
>>> flat = np.array([2.0, 5.0, 3.0, 7.0])   # line 0: lanes (2, 5), line 1: (3, 7); lane 1 checks
>>> data, wrong = np.zeros(2), np.zeros(2, dtype=bool)
>>> take(flat, np.array([0, 2]), data)
>>> check_lines(data, np.zeros(0, np.int64), np.array([0, 1, 2]), np.array([2.5, 2.0]), np.array([2.5, 2.0]),
...             flat, 1, 2, 1e-8, 1e-300, wrong)
>>> data.tolist(), wrong.tolist()
([2.0, 3.0], [False, True])
"""
import numpy as np

from .._numba_cache import cached_njit

__all__ = ["seed", "any_nonfinite", "take", "check_lines", "mismatch", "mismatches"]


@cached_njit(nogil=True)
def seed(x, colors, direction, buf):
    """Fill ``buf (n, 1 + lanes)``: primal ``x``, ones at lane ``colors[j]``, ``direction`` in the
    last lane when it is not empty."""
    width = buf.shape[1]
    checked = direction.size > 0
    for j in range(x.size):
        buf[j, 0] = x[j]
        for lane in range(1, width):
            buf[j, lane] = 0
        buf[j, 1 + colors[j]] = 1
        if checked:
            buf[j, width - 1] = direction[j]


@cached_njit(nogil=True)
def any_nonfinite(flat):
    """Whether ``flat`` holds an inf or a NaN (``v - v`` is zero exactly for the finite ones)."""
    bad = False
    for q in range(flat.size):
        v = flat[q]
        bad |= (v - v) != 0
    return bad


@cached_njit(nogil=True)
def take(flat, source, data):
    """``data[q] = flat[source[q]]``."""
    for q in range(source.size):
        data[q] = flat[source[q]]


@cached_njit(nogil=True)
def mismatch(expected, scale, lane, tol, tiny):
    """Whether the check lane's ``lane`` differs from the matrix's line times the direction,
    ``expected``, by more than ``tol * scale + tiny`` (or one of the two is finite and the other not)."""
    finite, lane_finite = np.isfinite(expected), np.isfinite(lane)
    if finite and lane_finite:
        return abs(expected - lane) > tol * scale + tiny
    return finite != lane_finite


@cached_njit(nogil=True)
def mismatches(expected, scale, lane, tol, tiny, wrong):
    """:func:`mismatch` line by line (``scale`` holds ``|J| |direction|``, without the lane's size)."""
    for i in range(expected.size):
        wrong[i] = mismatch(expected[i], scale[i] + abs(lane[i]), lane[i], tol, tiny)


@cached_njit(nogil=True)
def check_lines(values, where, indptr, weights, sizes, flat, lane_start, lane_step, tol, tiny, wrong):
    """The check lane against the entries, line by line: line ``i`` has the entries
    ``indptr[i]:indptr[i + 1]``, valued ``values[p]`` (``values[where[p]]`` when ``where`` is not
    empty), whose columns have the direction's ``weights[p]`` (of size ``sizes[p]``); its check lane
    is ``flat[lane_start + i * lane_step]``. The sizes are summed only for a line whose difference
    is not already within ``tol`` of ``|expected| + |lane|`` (which is at most the sum of sizes)."""
    moved = where.size > 0
    for i in range(indptr.size - 1):
        expected = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            expected += values[where[p] if moved else p] * weights[p]
        lane = flat[lane_start + i * lane_step]
        bound = tol * (abs(expected) + abs(lane)) + tiny
        if abs(expected - lane) <= bound and np.isfinite(bound):
            continue
        scale = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            scale += abs(values[where[p] if moved else p]) * sizes[p]
        wrong[i] = mismatch(expected, scale + abs(lane), lane, tol, tiny)
