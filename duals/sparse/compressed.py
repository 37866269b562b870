"""Compressed evaluation: colours travel as lanes, then each entry is read back from its lane.

Forward mode pushes one lane per column colour (the seed of a lane is the indicator of its
colour's columns) and gets ``J S``; reverse mode pulls one cotangent per row colour and gets
``Sᵀ J``; a Hessian is ``H S``, forward over reverse. Since columns of a colour share no row, the
entry ``(i, j)`` of the Jacobian is lane ``colour(j)`` at row ``i``; a star colouring gives each
Hessian entry from one of its two columns. A :class:`Layout`, built once per pattern and kept
on its :class:`~duals.sparse.Sparsity`, holds what reading the entries back needs, and the
compiled loops of :mod:`duals.sparse.gather` read them in one pass straight into the data of
the ``csr_array`` (whose index arrays are copies of the layout's).

A lane that holds an inf or a NaN may have mixed a non-finite value of one column into the
entries of the others (``0 · inf``): its colour is evaluated again one column per lane, and those
columns are read exactly (non-finite values outside the pattern are kept too, so the result is
the dense one's). A pattern that the library did not detect at this very point gets one more
lane in a fixed pseudo-random direction ``r``, and ``J r`` is compared with the decompressed
``J`` times ``r``: a missing entry larger than about ``sqrt(eps)`` of its row's scale raises.
"""
import copy
import functools

import numpy as np

__all__ = ["columns", "rows", "symmetric", "check_direction", "Check", "Lanes", "Layout", "layout",
           "PatternMismatch"]


class PatternMismatch(ValueError):
    """The check lane disagrees with the decompressed matrix: the pattern misses an entry."""


def _gather():
    from . import gather   # Numba, loaded with the first compressed evaluation
    return gather


def _csr(values, P, shape=None):
    import scipy.sparse
    return scipy.sparse.csr_array((values, P.indices.copy(), P.indptr.copy()), shape=shape or P.shape)


def _entry_rows(P):
    return np.repeat(np.arange(P.shape[0], dtype=np.int64), np.diff(P.indptr))


@functools.lru_cache(maxsize=16)
def _direction(n, dtype):
    rng = np.random.default_rng(20240917)
    direction = (rng.uniform(1.0, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)
    direction.setflags(write=False)
    return direction


def check_direction(n, dtype):
    """The fixed pseudo-random direction of the check lane: entries ±[1, 2) (none near zero),
    read-only (one array per size and dtype, made once)."""
    return _direction(int(n), np.dtype(dtype))


@functools.lru_cache(maxsize=16)
def _tolerance(dtype):
    """``(sqrt(eps), tiny)`` of the check's comparison for lanes of ``dtype``."""
    return (float(np.sqrt(np.finfo(np.result_type(dtype, np.float32)).eps)),
            float(np.finfo(dtype).tiny))


class Check:
    """Check(who, explain, lines="rows"): the verdict on a check lane.

    Calling it with ``(J, direction, lane)`` raises :class:`PatternMismatch` where ``J @ direction``
    differs from ``lane`` (the lane computed along ``direction``); :meth:`fail` raises for rows
    found otherwise. ``explain(bad)`` returns the text that says which entries are missing
    (``bad`` are rows of ``J``, which ``lines`` names).
    """

    def __init__(self, who, explain, lines="rows"):
        self.who, self.explain, self.lines = who, explain, lines

    def __call__(self, J, direction, lane):
        tol, tiny = _tolerance(lane.dtype)
        wrong = np.zeros(lane.size, dtype=bool)
        _gather().mismatches(J @ direction, abs(J) @ np.abs(direction), lane, tol, tiny, wrong)
        if wrong.any():
            self.fail(np.flatnonzero(wrong))

    def fail(self, bad):
        raise PatternMismatch(f"{self.who}: the sparsity pattern misses entries that are not zero at "
                              f"this point (in {self.lines} {bad[:8].tolist()}"
                              f"{' ...' if bad.size > 8 else ''}); {self.explain(bad)}")


class Lanes:
    """Lanes(flat, start, row, lane, lines, count): ``count`` lanes over ``lines`` lines, where lane
    ``c`` of line ``i`` is ``flat[start + i * row + c * lane]`` (a 1-D array: the lanes are read
    where they lie, in a compiled function's output or in an array of stacked lanes)."""

    def __init__(self, flat, start, row, lane, lines, count):
        self.flat, self.start, self.row, self.lane = flat, start, row, lane
        self.lines, self.count = lines, count

    @classmethod
    def stacked(cls, lanes):
        """The lanes of an array ``(count, lines)``, one lane per row."""
        lanes = np.ascontiguousarray(lanes)
        count, lines = lanes.shape
        return cls(lanes.reshape(-1), 0, 1, lines, lines, count)

    @property
    def dtype(self):
        return self.flat.dtype

    def array(self):
        """The lanes as a new array ``(count, lines)``."""
        size = self.flat.itemsize
        view = np.lib.stride_tricks.as_strided(self.flat[self.start:], shape=(self.count, self.lines),
                                               strides=(self.lane * size, self.row * size), writeable=False)
        return np.array(view)


class Layout:
    """Layout(P, colors, transposed=False): how lanes are read back into a matrix of pattern ``P``.

    The lanes hold the rows of ``P`` (forward mode) or, ``transposed``, its columns (reverse mode:
    the lanes hold ``Pᵀ``'s rows, and each entry goes to its place in ``P``'s order). ``colors``
    colour the lanes' pattern's columns. Where each entry lies for a given placement of the lanes
    (:class:`Lanes`), and the check direction at each entry, are computed once each and kept. The
    matrices made share no array with the layout.
    """

    def __init__(self, P, colors, transposed=False):
        import scipy.sparse
        self.transposed = transposed
        lanes_pattern, self.dest = P, np.zeros(0, dtype=np.int64)
        if transposed:
            positions = scipy.sparse.csr_array((np.arange(P.nnz, dtype=np.int64), P.indices, P.indptr),
                                               shape=P.shape)
            positions = scipy.sparse.csr_array(positions.T)
            positions.sort_indices()
            lanes_pattern = scipy.sparse.csr_array((np.ones(P.nnz, bool), positions.indices,
                                                    positions.indptr), shape=positions.shape)
            self.dest = positions.data.astype(np.int64)   # entry p of Pᵀ is entry dest[p] of P
            self.order = np.argsort(self.dest)             # entry q of P is entry order[q] of Pᵀ
        self.lanes_pattern = lanes_pattern
        self.lines = lanes_pattern.shape[0]
        self.indptr = lanes_pattern.indptr.astype(np.int64)
        self.indices = lanes_pattern.indices.astype(np.int64)
        self.colors = np.ascontiguousarray(colors, dtype=np.int64)
        self.k = int(self.colors.max()) + 1 if self.colors.size else 0
        self.shape = P.shape
        self._template = scipy.sparse.csr_array((np.zeros(P.nnz), P.indices.copy(), P.indptr.copy()),
                                                shape=P.shape)   # checked once, in SciPy's index dtype
        self._template.has_canonical_format = True                # the pattern's rows: sorted, no repeats
        self._sources, self._weights = {}, {}

    def source(self, lanes):
        """Where each entry of the matrix (in its order) lies in ``lanes.flat``."""
        key = (lanes.start, lanes.row, lanes.lane)
        found = self._sources.get(key)
        if found is None:
            line = np.repeat(np.arange(self.lines, dtype=np.int64), np.diff(self.indptr))
            found = lanes.start + line * lanes.row + self.colors[self.indices] * lanes.lane
            if self.transposed:
                found = found[self.order]
            if len(self._sources) >= 4:
                self._sources.clear()
            self._sources[key] = found
        return found

    def weights(self, direction):
        """``(direction, |direction|)`` at each entry's column, in the lanes' order."""
        key = direction.dtype
        found = self._weights.get(key)
        if found is None:
            weights = np.ascontiguousarray(direction[self.indices])
            found = self._weights[key] = (weights, np.abs(weights))
        return found

    def matrix(self, data):
        """The ``csr_array`` of the layout's pattern with entries ``data`` in its order: a shallow
        copy of the checked template that gets ``data`` and copies of the index arrays (building
        it anew would check the same arrays again, which costs more than one compiled evaluation)."""
        J = copy.copy(self._template)
        J.data, J.indices, J.indptr = data, self._template.indices.copy(), self._template.indptr.copy()
        return J


def layout(S, transposed=False):
    """The :class:`Layout` of the Sparsity ``S`` (its column colours, or its row colours when
    ``transposed``), made on first use and kept on ``S``."""
    key = "rows" if transposed else "columns"
    found = S._layouts.get(key)
    if found is None:
        found = S._layouts[key] = Layout(S.pattern, S.row_colors if transposed else S.colors, transposed)
    return found


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


def columns(S, push, dtype, check=None, run=None):
    """The Jacobian with the pattern of ``S`` from forward lanes: ``push(seeds (k, n)) -> (k, m)``
    gives ``seeds @ Jᵀ``. ``run(colors, k, direction) -> Lanes``, when given, seeds and pushes the
    colour lanes (and the check lane, last) in one go instead (compiled code).

    ``check`` (a :class:`Check`, or None) validates the pattern with one extra lane.
    """
    return _evaluate(layout(S), push, dtype, check, run)


def rows(S, pull, dtype, check=None):
    """The Jacobian with the pattern of ``S`` from cotangents: ``pull(seeds (k, m)) -> (k, n)`` gives
    ``seeds @ J`` (the check sees ``Jᵀ``: its rows are ``J``'s columns)."""
    return _evaluate(layout(S, transposed=True), pull, dtype, check, None)


def _evaluate(lay, push, dtype, check, run):
    """The lanes (by ``run``, else by ``push`` of the seeds), read back along ``lay`` and checked."""
    n = lay.lanes_pattern.shape[1]
    direction = check_direction(n, dtype) if check is not None else None
    if run is not None:
        lanes = run(lay.colors, lay.k, direction)
    elif lay.k or direction is not None:
        lanes = Lanes.stacked(push(_seeds(lay.colors, lay.k, n, dtype, direction)))
    else:
        lanes = Lanes.stacked(np.zeros((0, lay.lines), dtype))
    if (lanes.lines, lanes.count) != (lay.lines, lay.k + (direction is not None)):   # the loops trust them
        raise ValueError(f"compressed evaluation: {lanes.count} lanes of {lanes.lines} lines for a "
                         f"pattern of {lay.lines} lines and {lay.k} colours")
    kernels = _gather()
    if kernels.any_nonfinite(lanes.flat):
        broken = ~np.isfinite(lanes.array()[:lay.k]).all(axis=1)
        if broken.any():
            return _repaired(lay, lanes.array(), broken, push, dtype, check, direction)
    source = lay.source(lanes)
    data = np.empty(source.size, dtype=lanes.dtype)
    kernels.take(lanes.flat, source, data)
    if direction is not None:
        wrong = np.zeros(lay.lines, dtype=bool)
        tol, tiny = _tolerance(lanes.dtype)
        kernels.check_lines(data, lay.dest, lay.indptr, *lay.weights(direction), lanes.flat,
                            lanes.start + lay.k * lanes.lane, lanes.row, tol, tiny, wrong)
        if wrong.any():
            check.fail(np.flatnonzero(wrong))
    return lay.matrix(data)


def _repaired(lay, lanes, broken, push, dtype, check, direction):
    """The matrix where some colour lanes hold an inf or a NaN: those colours again one column per lane."""
    import scipy.sparse
    P, colors, k = lay.lanes_pattern, lay.colors, lay.k
    m, n = P.shape
    compressed = lanes[:k]
    rows = _entry_rows(P)
    values = compressed[colors[P.indices], rows] if P.nnz else np.zeros(0, dtype=lanes.dtype)
    wanted = np.flatnonzero(np.isin(colors, np.flatnonzero(broken)))
    exact = _exact(push, wanted, n, dtype)
    slot = np.full(n, -1, dtype=np.int64)
    slot[wanted] = np.arange(wanted.size)
    redo = slot[P.indices] >= 0
    values[redo] = exact[slot[P.indices[redo]], rows[redo]]
    inside = np.zeros((wanted.size, m), dtype=bool)
    inside[slot[P.indices[redo]], rows[redo]] = True
    which, row = np.nonzero(~np.isfinite(exact) & ~inside)
    J = _with_extra(_csr(values, P), row, wanted[which], exact[which, row])
    if check is not None:
        check(J, direction, lanes[-1])
    if lay.transposed:
        J = scipy.sparse.csr_array(J.T)
        J.sort_indices()
    return J


def symmetric(S, push, dtype, check=None):
    """The symmetric matrix with the symmetric pattern of ``S`` from ``push(seeds) -> seeds @ H``
    (star colours: each entry read from the one of its two columns where it is alone in its row)."""
    P, colors = S.pattern, S.colors
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
        # a pair not finite: each entry its own column's, as the dense matrix has it (a NaN row of
        # the gradient, a coincident pair's, leaves the finite entries of its column), read exactly
        # (a broken colour's column) or alone in its row of its colour's lane
        own, known = ~np.isfinite(values), slot[j] >= 0
        exactly, lone = own & known, own & ~known & alone[i * k + colors[j]]
        values[exactly] = exact[slot[j[exactly]], i[exactly]]
        values[lone] = read(i[lone], j[lone])
        inside = np.zeros((wanted.size, n), dtype=bool)
        inside[slot[j[known]], i[known]] = True
        which, row = np.nonzero(~np.isfinite(exact) & ~inside)
        extra = (row, wanted[which], exact[which, row])
    H = _with_extra(_csr(values, P), *extra)
    if check is not None:
        check(H, direction, lanes[-1])
    return H
