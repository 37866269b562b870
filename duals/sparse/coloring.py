"""Colourings of sparsity patterns: which columns (or rows) can share one evaluation.

* :func:`column_colors` (forward mode): columns of one colour share no row, so the sum of
  their columns is read back entry by entry (a distance-2 colouring of the bipartite graph, done
  as a distance-1 colouring of the column intersection graph ``PᵀP``);
* :func:`row_colors` (reverse mode): the same for rows;
* :func:`star_colors` (symmetric Hessians): adjacent vertices differ and every path on four
  vertices uses three colours, so each entry is read directly from one column of ``H S`` (the
  star property; Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM Review
  2005, section 4).

All are greedy colourings in an order chosen by a heuristic: ``"smallest_last"`` (the default;
Matula and Beck's degeneracy order, usually the fewest colours on meshes and stencils),
``"largest_first"`` (by degree) or ``"natural"`` (index order). The greedy loops are compiled
by Numba on first use and cached on disk.

NetworkX and rustworkx colour graphs greedily with these orderings too, but neither builds the
intersection graph, colours for star recovery, or decompresses; building a Python graph object
for ten thousand columns also costs more than the colouring here.

>>> import scipy.sparse
>>> P = scipy.sparse.csr_array(np.array([[1, 1, 0], [0, 1, 1]], dtype=bool))
>>> column_colors(P).tolist()
[0, 1, 0]
"""
import numpy as np

__all__ = ["column_colors", "row_colors", "star_colors", "ORDERS", "intersection_graph"]

ORDERS = ("smallest_last", "largest_first", "natural")

# above this many (row, column, column) triples the intersection graph is not built: the
# colouring gives every column its own colour (the Jacobian is nearly dense anyway)
MAX_WORK = 1 << 26

_KERNELS = {}


def _kernels():
    """The greedy loops compiled by Numba on first use (``import duals`` imports no Numba)."""
    if not _KERNELS:
        from .._numba_cache import cached_njit
        for name in ("_greedy", "_smallest_last", "_star"):
            _KERNELS[name] = cached_njit(nogil=True)(globals()[name])
    return _KERNELS


def _check_order(order):
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(map(repr, ORDERS))}, got {order!r}")


def intersection_graph(pattern):
    """intersection_graph(pattern) -> (indptr, indices) of the graph joining columns that share a row.

    Returns None when the graph would be too large to build (see :data:`MAX_WORK`).
    """
    import scipy.sparse
    P = scipy.sparse.csr_array(pattern, dtype=bool)
    lengths = np.diff(P.indptr).astype(np.int64)
    if int((lengths * lengths).sum()) > MAX_WORK:
        return None
    unit = scipy.sparse.csr_array((np.ones(P.nnz, dtype=np.int32), P.indices, P.indptr), shape=P.shape)
    G = (unit.T @ unit).tocsr()
    G.setdiag(0)
    G.eliminate_zeros()
    G.sort_indices()
    return G.indptr.astype(np.int64), G.indices.astype(np.int64)


def _graph_colors(graph, n, order, star=False):
    _check_order(order)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if graph is None:
        return np.arange(n, dtype=np.int64)
    indptr, indices = graph
    kernels = _kernels()
    if order == "natural":
        sequence = np.arange(n, dtype=np.int64)
    elif order == "largest_first":
        sequence = np.argsort(-np.diff(indptr), kind="stable").astype(np.int64)
    else:
        sequence = kernels["_smallest_last"](indptr, indices)
    if star:
        return kernels["_star"](indptr, indices, sequence)
    return kernels["_greedy"](indptr, indices, sequence)


def column_colors(pattern, order="smallest_last"):
    """column_colors(pattern, order="smallest_last") -> one colour per column; columns of a colour share no row.

    ``pattern`` is a boolean matrix (NumPy or SciPy sparse) of shape ``(m, n)``.

    >>> column_colors(np.eye(3, dtype=bool)).tolist()
    [0, 0, 0]
    """
    n = np.shape(pattern)[1]
    return _graph_colors(intersection_graph(pattern), n, order)


def row_colors(pattern, order="smallest_last"):
    """row_colors(pattern, order="smallest_last") -> one colour per row; rows of a colour share no column.

    >>> row_colors(np.array([[1, 1], [0, 1]], dtype=bool)).tolist()
    [0, 1]
    """
    import scipy.sparse
    return column_colors(scipy.sparse.csr_array(pattern, dtype=bool).T, order)


def star_colors(pattern, order="smallest_last"):
    """star_colors(pattern, order="smallest_last") -> a star colouring of a symmetric pattern's graph.

    Adjacent vertices (``pattern[i, j]``, ``i != j``) get different colours, and no path on four
    vertices has only two colours, so every entry of a symmetric matrix with this pattern is
    recovered directly from the products with the colour indicators.

    >>> path = np.eye(4, dtype=bool) | np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)
    >>> int(star_colors(path).max()) + 1   # two colours would make the path itself two-coloured
    3
    """
    import scipy.sparse
    P = scipy.sparse.csr_array(pattern, dtype=bool)
    n = P.shape[0]
    if P.shape != (n, n):
        raise ValueError(f"star_colors: a Hessian pattern is square, got shape {P.shape}")
    G = (P + P.T).tocsr()
    G.setdiag(False)
    G.eliminate_zeros()
    G.sort_indices()
    degrees = np.diff(G.indptr).astype(np.int64)
    graph = None if int((degrees * degrees).sum()) > MAX_WORK else (
        G.indptr.astype(np.int64), G.indices.astype(np.int64))
    return _graph_colors(graph, n, order, star=True)

# ---------------------------------------------------------------- compiled loops (plain Python for Numba)


def _greedy(indptr, indices, sequence):
    """Distance-1 greedy colouring: each vertex takes the smallest colour no neighbour has."""
    n = indptr.shape[0] - 1
    colors = np.full(n, -1, dtype=np.int64)
    forbidden = np.full(n + 1, -1, dtype=np.int64)
    for v in sequence:
        for p in range(indptr[v], indptr[v + 1]):
            c = colors[indices[p]]
            if c >= 0:
                forbidden[c] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        colors[v] = c
    return colors


def _smallest_last(indptr, indices):
    """Matula-Beck order: repeatedly remove a vertex of least remaining degree; colour in reverse."""
    n = indptr.shape[0] - 1
    degree = np.empty(n, dtype=np.int64)
    for v in range(n):
        degree[v] = indptr[v + 1] - indptr[v]
    top = 0
    for v in range(n):
        top = max(top, degree[v])
    head = np.full(top + 1, -1, dtype=np.int64)
    after = np.full(n, -1, dtype=np.int64)
    before = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        d = degree[v]
        after[v] = head[d]
        if head[d] >= 0:
            before[head[d]] = v
        head[d] = v
    removed = np.zeros(n, dtype=np.bool_)
    sequence = np.empty(n, dtype=np.int64)
    low = 0
    for k in range(n - 1, -1, -1):
        while head[low] < 0:
            low += 1
        v = head[low]
        head[low] = after[v]
        if after[v] >= 0:
            before[after[v]] = -1
        removed[v] = True
        sequence[k] = v
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            if removed[w]:
                continue
            d = degree[w]
            if before[w] >= 0:                    # unlink w from bucket d
                after[before[w]] = after[w]
            else:
                head[d] = after[w]
            if after[w] >= 0:
                before[after[w]] = before[w]
            degree[w] = d - 1                     # and push it on bucket d - 1
            before[w] = -1
            after[w] = head[d - 1]
            if head[d - 1] >= 0:
                before[head[d - 1]] = w
            head[d - 1] = w
        low = max(low - 1, 0)
    return sequence


def _star(indptr, indices, sequence):
    """Greedy star colouring. Colouring ``v`` with ``c`` must not close a two-coloured path on four
    vertices: with ``v`` at an end (v-w-x-y, colours c b c b: forbid x's colour when x has a
    neighbour besides w coloured like w) or inside (w-v-x-y, colours a c a c: when two neighbours
    of v share a colour, forbid the colours of their other neighbours)."""
    n = indptr.shape[0] - 1
    colors = np.full(n, -1, dtype=np.int64)
    forbidden = np.full(n + 1, -1, dtype=np.int64)
    width = 8
    count = np.zeros((n, width), dtype=np.int64)   # count[x, b]: coloured neighbours of x with colour b
    seen = np.full(n + 1, -1, dtype=np.int64)
    shared = np.zeros(n + 1, dtype=np.int64)
    for v in sequence:
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            b = colors[w]
            if b < 0:
                continue
            forbidden[b] = v
            if seen[b] != v:
                seen[b] = v
                shared[b] = 0
            shared[b] += 1
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            b = colors[w]
            if b < 0:
                continue
            for q in range(indptr[w], indptr[w + 1]):
                x = indices[q]
                a = colors[x]
                if x != v and a >= 0 and count[x, b] >= 2:
                    forbidden[a] = v                       # v at an end
            if shared[b] >= 2:
                for q in range(indptr[w], indptr[w + 1]):
                    y = indices[q]
                    if y != v and colors[y] >= 0:
                        forbidden[colors[y]] = v           # v inside
        c = 0
        while forbidden[c] == v:
            c += 1
        colors[v] = c
        if c >= width:
            grown = np.zeros((n, 2 * width), dtype=np.int64)
            grown[:, :width] = count
            count = grown
            width *= 2
        for p in range(indptr[v], indptr[v + 1]):
            count[indices[p], c] += 1
    return colors
