"""The compiled loop of :func:`duals.index_sets.union`: two sets per entry merged in one pass.

Both arguments hold, for every entry, a sorted run of input indices without repeats (the
invariant of :class:`~duals.index_sets.IndexSets`), so their union, entry by entry, is one
linear merge: no sort of (entry, input) keys, which is what an element-wise operation of two
traced values costs in sparsity detection otherwise. Compiled on first use, cached on disk.

>>> import numpy as np
>>> indptr, out = np.zeros(3, np.int64), np.empty(5, np.int64)
>>> total = merge(np.array([0, 2, 3]), np.array([0, 3, 1]), np.array([0, 1, 2]), np.array([3, 2]), indptr, out)
>>> indptr.tolist(), out[:total].tolist()
([0, 2, 4], [0, 3, 1, 2])
"""
from ._numba_cache import cached_njit

__all__ = ["merge"]


@cached_njit(nogil=True)
def merge(a_indptr, a_indices, b_indptr, b_indices, indptr, out):
    """merge(a_indptr, a_indices, b_indptr, b_indices, indptr, out) -> the number of indices
    written: entry ``k``'s union of ``a``'s and ``b``'s runs goes to ``out`` from ``indptr[k]``
    (``indptr[0]`` must be 0; ``out`` holds at least both sizes together)."""
    p = 0
    for k in range(indptr.size - 1):
        i, i_end = a_indptr[k], a_indptr[k + 1]
        j, j_end = b_indptr[k], b_indptr[k + 1]
        while i < i_end and j < j_end:
            x, y = a_indices[i], b_indices[j]
            if x <= y:
                out[p] = x
                i += 1
                if x == y:
                    j += 1
            else:
                out[p] = y
                j += 1
            p += 1
        while i < i_end:
            out[p] = a_indices[i]
            i += 1
            p += 1
        while j < j_end:
            out[p] = b_indices[j]
            j += 1
            p += 1
        indptr[k + 1] = p
    return p
