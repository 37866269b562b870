"""Compressed evaluation: colours travel as lanes, then each entry is read back from its lane.

Forward mode pushes one lane per column colour (the seed of a lane is the indicator of its
colour's columns) and gets ``J S``; reverse mode pulls one cotangent per row colour and gets
``Sᵀ J``; a Hessian is ``H S``, forward over reverse. Since columns of a colour share no row, the
entry ``(i, j)`` of the Jacobian is lane ``colour(j)`` at row ``i``; a star colouring gives each
Hessian entry from one of its two columns.

A lane that holds an inf or a NaN may have mixed a non-finite value of one column into the
entries of the others (``0 · inf``): its colour is evaluated again one column per lane, and those
columns are read exactly (non-finite values outside the pattern are kept too, so the result is
the dense one's). A pattern that the library did not detect at this very point gets one more
lane in a fixed pseudo-random direction ``r``, and ``J r`` is compared with the decompressed
``J`` times ``r``: a missing entry larger than about ``sqrt(eps)`` of its row's scale raises.
"""
import numpy as np

__all__ = ["columns", "rows", "symmetric", "check_direction", "verify", "PatternMismatch"]


class PatternMismatch(ValueError):
    """The check lane disagrees with the decompressed matrix: the pattern misses an entry."""


def _csr(values, P, shape=None):
    import scipy.sparse
    return scipy.sparse.csr_array((values, P.indices.copy(), P.indptr.copy()), shape=shape or P.shape)


def _entry_rows(P):
    return np.repeat(np.arange(P.shape[0], dtype=np.int64), np.diff(P.indptr))


def check_direction(n, dtype):
    """The fixed pseudo-random direction of the check lane: entries ±[1, 2) (none near zero)."""
    rng = np.random.default_rng(20240917)
    return (rng.uniform(1.0, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)


def _seeds(colors, k, n, dtype, direction=None):
    seeds = np.zeros((k + (direction is not None), n), dtype=dtype)
    seeds[colors, np.arange(n)] = 1.0
    if direction is not None:
        seeds[-1] = direction
    return seeds


def _exact(push, wanted, n, dtype):
    """Columns ``wanted`` evaluated one per lane: an array (len(wanted), rows)."""
    seeds = np.zeros((wanted.size, n), dtype=dtype)
    seeds[np.arange(wanted.size), wanted] = 1.0
    return push(seeds)


def _with_extra(J, rows, cols, values):
    """``J`` with entries added outside its pattern (non-finite values the lanes produced there)."""
    import scipy.sparse
    if not rows.size:
        return J
    coo = J.tocoo()
    joined = scipy.sparse.coo_array((np.concatenate([coo.data, values]),
                                     (np.concatenate([coo.row, rows]), np.concatenate([coo.col, cols]))),
                                    shape=J.shape)
    J = joined.tocsr()
    J.sort_indices()
    return J


def columns(P, colors, push, dtype, check=None):
    """The matrix with pattern ``P`` from lanes: ``push(seeds (k, n)) -> (k, m)`` gives ``seeds @ Jᵀ``.

    ``check(J, direction, lane)`` (or None) validates the pattern with one extra lane.
    """
    m, n = P.shape
    k = int(colors.max()) + 1 if n else 0
    direction = check_direction(n, dtype) if check is not None else None
    lanes = push(_seeds(colors, k, n, dtype, direction)) if k or direction is not None else np.zeros((0, m), dtype)
    compressed = lanes[:k]
    rows = _entry_rows(P)
    values = compressed[colors[P.indices], rows] if P.nnz else np.zeros(0, dtype=lanes.dtype)
    extra = (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0, dtype=lanes.dtype),)
    broken = np.flatnonzero(~np.isfinite(compressed).all(axis=1))
    if broken.size:
        wanted = np.flatnonzero(np.isin(colors, broken))
        exact = _exact(push, wanted, n, dtype)
        slot = np.full(n, -1, dtype=np.int64)
        slot[wanted] = np.arange(wanted.size)
        redo = slot[P.indices] >= 0
        values[redo] = exact[slot[P.indices[redo]], rows[redo]]
        inside = np.zeros((wanted.size, m), dtype=bool)
        inside[slot[P.indices[redo]], rows[redo]] = True
        which, row = np.nonzero(~np.isfinite(exact) & ~inside)
        extra = (row, wanted[which], exact[which, row])
    J = _with_extra(_csr(values, P), *extra)
    if check is not None:
        check(J, direction, lanes[-1])
    return J


def rows(P, row_colors, pull, dtype, check=None):
    """The matrix with pattern ``P`` from cotangents: ``pull(seeds (k, m)) -> (k, n)`` gives ``seeds @ J``."""
    import scipy.sparse
    transposed = scipy.sparse.csr_array(P.T)
    transposed.sort_indices()
    JT = columns(transposed, row_colors, pull, dtype, check)   # check sees Jᵀ: its rows are J's columns
    J = scipy.sparse.csr_array(JT.T)
    J.sort_indices()
    return J


def symmetric(P, colors, push, dtype, check=None):
    """The symmetric matrix with the symmetric pattern ``P`` from ``push(seeds) -> seeds @ H``
    (star colours: each entry read from the one of its two columns where it is alone in its row)."""
    n = P.shape[0]
    k = int(colors.max()) + 1 if n else 0
    direction = check_direction(n, dtype) if check is not None else None
    lanes = push(_seeds(colors, k, n, dtype, direction)) if k or direction is not None else np.zeros((0, n), dtype)
    compressed = lanes[:k]
    i, j = _entry_rows(P), P.indices
    a, b = np.minimum(i, j), np.maximum(i, j)          # read each pair once: exactly symmetric
    alone = np.bincount(i * k + colors[j], minlength=n * k) == 1 if k else np.zeros(0, dtype=bool)
    read = lambda row, col: compressed[colors[col], row]   # noqa: E731
    values = np.where(alone[a * k + colors[b]], read(a, b), read(b, a)) if P.nnz else np.zeros(0, lanes.dtype)
    extra = (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0, dtype=lanes.dtype),)
    broken = np.flatnonzero(~np.isfinite(compressed).all(axis=1))
    if broken.size:
        wanted = np.flatnonzero(np.isin(colors, broken))
        exact = _exact(push, wanted, n, dtype)            # column c of H, exactly
        slot = np.full(n, -1, dtype=np.int64)
        slot[wanted] = np.arange(wanted.size)
        from_b, from_a = slot[b] >= 0, (slot[b] < 0) & (slot[a] >= 0)
        values[from_b] = exact[slot[b[from_b]], a[from_b]]
        values[from_a] = exact[slot[a[from_a]], b[from_a]]
        inside = np.zeros((wanted.size, n), dtype=bool)
        known = slot[j] >= 0
        inside[slot[j[known]], i[known]] = True
        which, row = np.nonzero(~np.isfinite(exact) & ~inside)
        col = wanted[which]
        extra = (np.concatenate([row, col]), np.concatenate([col, row]), np.tile(exact[which, row], 2))
        keep = np.ones(extra[0].size, dtype=bool)
        keep[row.size:] = row != col                     # the diagonal once
        extra = tuple(e[keep] for e in extra)
    H = _with_extra(_csr(values, P), *extra)
    if check is not None:
        check(H, direction, lanes[-1])
    return H


def verify(J, direction, lane, who, explain, lines="rows"):
    """Raise when ``J @ direction`` differs from the lane computed along ``direction``.

    ``explain(bad)`` returns the text that says which entries are missing (``bad`` are rows of
    ``J``, which ``lines`` names).
    """
    expected = J @ direction
    scale = abs(J) @ np.abs(direction) + np.abs(lane)
    finite = np.isfinite(expected) & np.isfinite(lane)
    eps = np.finfo(np.result_type(lane.dtype, np.float32)).eps
    wrong = finite & (np.abs(expected - lane) > np.sqrt(eps) * scale + np.finfo(lane.dtype).tiny)
    wrong |= np.isfinite(expected) != np.isfinite(lane)
    if wrong.any():
        bad = np.flatnonzero(wrong)
        raise PatternMismatch(f"{who}: the sparsity pattern misses entries that are not zero at this "
                         f"point (in {lines} {bad[:8].tolist()}{' ...' if bad.size > 8 else ''}); "
                         f"{explain(bad)}")
