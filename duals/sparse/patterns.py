"""Sparsity patterns with their colourings: detected ones and the user's, checked.

A :class:`Sparsity` holds a boolean ``scipy.sparse.csr_array`` pattern (a Jacobian's, shape
``(out.size, in.size)``, or a Hessian's, ``(n, n)`` and symmetric) and computes the colourings
that the compressed evaluations need on first use (and keeps the layouts with which they read
the entries back, :func:`duals.sparse.compressed.layout`).
"""
import numpy as np

from .coloring import ORDERS, column_colors, row_colors, star_colors

__all__ = ["Sparsity", "as_sparsity", "from_index_sets"]

KINDS = ("jacobian", "hessian")


def _scipy_sparse():
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError("sparse derivatives return scipy.sparse matrices and need SciPy: "
                          "pip install 'duals[sparse]' (or pip install scipy)") from None
    return scipy.sparse


class Sparsity:
    """Sparsity(pattern, kind="jacobian", order="smallest_last", depends_on_values=False): a pattern and its colourings.

    ``pattern`` is a boolean matrix (NumPy or ``scipy.sparse``); for ``kind="hessian"`` it is
    made symmetric. ``colors`` are the column colours of a Jacobian (forward mode; columns of a
    colour share no row) or the star colours of a Hessian; ``row_colors`` the row colours of a
    Jacobian (reverse mode). ``depends_on_values`` is True when detection decided the pattern by
    values at its point (a comparison, ``maximum``, ``sort``, ...): it may differ elsewhere.

    >>> s = Sparsity(np.eye(3, dtype=bool))
    >>> s.n_colors, s.colors.tolist(), s.pattern.shape
    (1, [0, 0, 0], (3, 3))
    """

    def __init__(self, pattern, kind="jacobian", order="smallest_last", depends_on_values=False):
        if kind not in KINDS:
            raise ValueError(f"Sparsity: kind must be 'jacobian' or 'hessian', got {kind!r}")
        if order not in ORDERS:
            raise ValueError(f"Sparsity: order must be one of {', '.join(map(repr, ORDERS))}, got {order!r}")
        sp = _scipy_sparse()
        if sp.issparse(pattern):
            P = sp.csr_array(pattern)
            P.data = P.data != 0
            P = sp.csr_array(P, dtype=bool)
        else:
            dense = np.asarray(pattern)
            if dense.ndim != 2:
                raise ValueError(f"a sparsity pattern is a 2-D boolean matrix (outputs x inputs), "
                                 f"got an array of shape {dense.shape}")
            P = sp.csr_array(dense != 0)
        P.eliminate_zeros()
        if kind == "hessian":
            if P.shape[0] != P.shape[1]:
                raise ValueError(f"a Hessian pattern is square (inputs x inputs), got shape {P.shape}")
            P = sp.csr_array(P + P.T, dtype=bool)
        P.sum_duplicates()
        P.sort_indices()
        self.pattern = P
        self.kind = kind
        self.order = order
        self.depends_on_values = bool(depends_on_values)
        self._colors = None
        self._row_colors = None
        self._layouts = {}   # how compressed evaluations read entries back (duals.sparse.compressed)

    @classmethod
    def trusted(cls, pattern, kind, order, depends_on_values=False):
        """Sparsity.trusted(pattern, kind, order, depends_on_values=False): a detection's own
        pattern, a boolean ``csr_array`` of sorted rows without repeats (symmetric for a Hessian),
        taken as it is."""
        self = cls.__new__(cls)
        self.pattern, self.kind, self.order = pattern, kind, order
        self.depends_on_values = bool(depends_on_values)
        self._colors = self._row_colors = None
        self._layouts = {}
        return self

    def __getstate__(self):   # the layouts are derived data, and large: made again where needed
        return {name: value for name, value in self.__dict__.items() if name != "_layouts"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._layouts = {}

    @property
    def shape(self):
        return self.pattern.shape

    @property
    def nnz(self):
        """The number of entries of the pattern."""
        return int(self.pattern.nnz)

    @property
    def colors(self):
        """Column colours (Jacobian, forward mode) or star colours (Hessian), one per column."""
        if self._colors is None:
            color = star_colors if self.kind == "hessian" else column_colors
            self._colors = color(self.pattern, self.order)
        return self._colors

    @property
    def n_colors(self):
        """How many lanes a compressed forward (or Hessian) evaluation pushes."""
        return int(self.colors.max()) + 1 if self.colors.size else 0

    @property
    def row_colors(self):
        """Row colours of a Jacobian (reverse mode): rows of a colour share no column."""
        if self.kind == "hessian":
            raise AttributeError("a Hessian is symmetric: its star colouring (.colors) serves both sides")
        if self._row_colors is None:
            self._row_colors = row_colors(self.pattern, self.order)
        return self._row_colors

    @property
    def n_row_colors(self):
        """How many cotangents a compressed reverse evaluation pulls back."""
        return int(self.row_colors.max()) + 1 if self.row_colors.size else 0

    def contains(self, other):
        """Whether every entry of ``other`` (a Sparsity of the same shape) is in this pattern."""
        if other.shape != self.shape:
            return False
        both = self.pattern.multiply(other.pattern)
        return both.nnz == other.pattern.nnz

    def __or__(self, other):
        """The union of two patterns of one shape and kind (for a function evaluated at several points)."""
        if not isinstance(other, Sparsity) or other.kind != self.kind or other.shape != self.shape:
            return NotImplemented
        union = _scipy_sparse().csr_array(self.pattern + other.pattern, dtype=bool)
        return Sparsity(union, self.kind, self.order, self.depends_on_values or other.depends_on_values)

    def __repr__(self):
        m, n = self.shape
        values = ", decided by values at its point" if self.depends_on_values else ""
        return (f"Sparsity({self.kind} {m}x{n}, {self.nnz} entries, {self.n_colors} colours"
                f"{values})")


def from_index_sets(sets, n, kind="jacobian", order="smallest_last", by_value=False):
    """A Sparsity from the index sets of a detection (rows = the output's entries in C order)."""
    sp = _scipy_sparse()
    m = sets.size
    data = np.ones(sets.nnz, dtype=bool)
    pattern = sp.csr_array((data, sets.indices.astype(np.int64), sets.indptr.astype(np.int64)), shape=(m, n))
    if kind == "jacobian" and order in ORDERS and pattern.has_canonical_format:   # sorted, no repeats
        return Sparsity.trusted(pattern, kind, order, by_value)
    return Sparsity(pattern, kind, order, by_value)


def as_sparsity(given, kind, n, who):
    """The user's ``sparsity=`` (a Sparsity, a boolean array or a SciPy sparse matrix) as a
    Sparsity of ``kind`` with ``n`` columns; raises naming the problem otherwise."""
    if isinstance(given, Sparsity):
        if given.kind != kind:
            raise ValueError(f"{who}: sparsity= is a {given.kind} pattern, but a {kind} pattern is "
                             f"needed; use duals.sparsity(f, x{', hessian=True' if kind == 'hessian' else ''})")
        s = given
    elif isinstance(given, str):
        raise ValueError(f"{who}: sparsity must be 'auto', a boolean matrix, a scipy.sparse "
                         f"matrix or a duals Sparsity, got the string {given!r}")
    else:
        sp = _scipy_sparse()
        if not (sp.issparse(given) or isinstance(given, (np.ndarray, list, tuple))):
            raise TypeError(f"{who}: sparsity must be 'auto', a boolean matrix, a scipy.sparse "
                            f"matrix or a duals Sparsity, got {type(given).__name__}")
        s = Sparsity(given, kind)
    if s.shape[1] != n:
        raise ValueError(f"{who}: the sparsity pattern has {s.shape[1]} columns but the input has "
                         f"{n} entries; the pattern's shape is (output entries, input entries)"
                         + (", square for a Hessian" if kind == "hessian" else ""))
    return s
