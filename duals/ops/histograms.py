"""Histograms: ``histogram`` of traced data, traced weights and traced bin edges; ``bincount`` of
traced weights.

Which bin an entry falls in is piecewise constant, so it comes from NumPy on the plain values
and the counts of unweighted data are plain. What carries a derivative:

* the **bin edges** of ``bins=<int or estimator name>`` without ``range``: NumPy places them with
  ``linspace(a.min(), a.max(), n + 1)``, so they move with the smallest and largest entry (ties
  split as ``min``/``max`` split them; the number of bins an estimator picks is constant);
  edges given as an array carry their own derivative;
* the **weighted counts**: with equal bins a sum per bin (:data:`bin_sum_p`, NumPy's ``bincount``
  in its blocks of 65536 entries, so the values are NumPy's bit for bit), with edges given as an
  array NumPy's own differences of cumulative sums, composed from ``getitem``, ``cumsum`` and
  ``diff``;
* ``density=True``: ``counts / widths / counts.sum()``, NumPy's expression.

``np.bincount(x, weights=w)`` is the same sum per bin, the bins being the integers of ``x``: the
differentiable spelling of a scatter-add (``np.add.at(out, x, w)`` adds in place into a plain
array, which cannot hold a traced value).

An entry on an edge belongs to the bin on its right (the last bin also holds its right edge), as
in NumPy; its derivative there is that bin's. ``range`` is plain (pass traced edges as ``bins``).

>>> import duals
>>> duals.grad(lambda w: np.histogram(np.array([0.1, 0.7, 0.8]), 2, (0.0, 1.0), weights=w)[0][1])(
...     np.ones(3)).tolist()
[0.0, 1.0, 1.0]
"""
import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import collect, take
from . import dtype_of, export, innermost, shape_of
from .assembly import traced
from .calculus import diff
from .grids import linspace
from .reductions import cumsum, max as _max, min as _min, sum as _sum
from .shape import concatenate, getitem, reshape

BLOCK = 65536    # NumPy's block of entries per bincount: the sums are NumPy's only in its order


def _plain(x):
    return None if x is None else np.asarray(innermost(x))


def _bin_sum_impl(w, *, index, bins, block=BLOCK):
    """``out[..., k] = sum of w[..., i] over index[i] == k`` (``index`` -1: dropped), summed in
    ``block``s of entries as NumPy's histogram does (None: in one pass, as ``bincount``)."""
    if w.ndim == 1:      # NumPy's blocks, so that the sums are its sums
        size = block or max(w.shape[0], 1)
        out = np.zeros(bins, w.dtype)
        for start in range(0, w.shape[0], size):
            part = index[start:start + size]
            kept = part >= 0
            out += np.bincount(part[kept], w[start:start + size][kept], minlength=bins).astype(w.dtype)
        return out
    lead = w.shape[:-1]
    rows = w.reshape((-1, w.shape[-1]))
    kept = index >= 0
    flat = (np.arange(rows.shape[0])[:, None] * bins + index[kept]).ravel()
    sums = np.bincount(flat, rows[:, kept].ravel(), minlength=rows.shape[0] * bins)
    return sums.astype(w.dtype).reshape(lead + (bins,))


def _bin_read_impl(g, *, index, bins):
    """The transpose of the sum per bin: ``out[..., i] = g[..., index[i]]`` (0 where dropped)."""
    out = np.zeros(g.shape[:-1] + index.shape, g.dtype)
    kept = index >= 0
    out[..., kept] = g[..., index[kept]]
    return out


# the sum of the entries per bin (``index`` computed on the plain data) and its transpose
bin_sum_p = Primitive("bin_sum", _bin_sum_impl)
bin_read_p = Primitive("bin_read", _bin_read_impl)
bin_sum_p.def_jvp(0, lambda t, out, w, *, index, bins, block=BLOCK: bin_sum_p(
    t, index=index, bins=bins, block=block))
bin_sum_p.def_vjp(0, lambda g, out, w, *, index, bins, block=BLOCK: bin_read_p(g, index=index, bins=bins))
bin_read_p.def_jvp(0, lambda t, out, g, *, index, bins: bin_read_p(t, index=index, bins=bins))
bin_read_p.def_vjp(0, lambda h, out, g, *, index, bins: bin_sum_p(h, index=index, bins=bins))
bin_sum_p.def_sparsity(lambda sets, out, w, *, index, bins, block=BLOCK: collect(
    sets[0], np.flatnonzero(index >= 0), index[index >= 0], (bins,)))
bin_read_p.def_sparsity(lambda sets, out, g, *, index, bins: take(sets[0], index))


@export()
def bincount(x, weights=None, minlength=0):
    """bincount(x, weights=None, minlength=0) -> NumPy's counts; with traced ``weights`` the sum of
    the weights per bin, whose derivative sends each bin's cotangent to the weights in it.

    >>> import duals
    >>> duals.grad(lambda w: bincount(np.array([0, 2, 2]), weights=w * w)[2])(np.ones(3)).tolist()
    [0.0, 2.0, 2.0]
    """
    plain_x = _plain(x)
    if weights is None or not isinstance(weights, Tracer):
        return np.bincount(plain_x, _plain(weights), minlength)
    dtype = dtype_of(weights)
    if dtype.kind == "c":
        raise TypeError("bincount: traced complex weights are not supported; count the real and "
                        "imaginary parts separately")
    # NumPy's checks of x and the weights' shape and dtype: their values are not read, so a
    # sparsity pattern does not count them as a decision by value
    counts = np.bincount(plain_x, np.zeros(shape_of(weights), dtype), minlength)
    w = weights if dtype == np.float64 else weights.astype(np.float64)
    return bin_sum_p(w, index=np.asarray(plain_x, np.intp), bins=counts.size, block=None)


def _inclusive_positions(sorted_values, edges):
    """Where each edge falls in sorted data, the last edge counting the entries equal to it."""
    return np.concatenate((sorted_values.searchsorted(edges[:-1], "left"),
                           sorted_values.searchsorted(edges[-1:], "right")))


@export()
def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 (NumPy's name)
    """histogram(a, bins=10, range=None, density=None, weights=None) -> (counts, edges), NumPy's
    values; the edges follow the extreme entries or traced ``bins``, weighted counts their weights.

    >>> counts, edges = histogram(np.array([0.0, 0.2, 1.0]), bins=2)
    >>> counts.tolist(), edges.tolist()
    ([2, 1], [0.0, 0.5, 1.0])
    """
    if isinstance(range, Tracer) or (range is not None and traced(*range)):
        raise TypeError("histogram: range cannot be traced; pass the edges as bins, e.g. "
                        "bins=np.linspace(lo, hi, n + 1) with traced lo and hi")
    if not traced(a, bins, weights):
        return np.histogram(a, bins, range, density, weights)
    if isinstance(bins, Tracer) and np.ndim(_plain(bins)) == 0:
        raise TypeError("histogram: a number of bins cannot be traced; pass traced edges as bins "
                        "(a 1-d array), e.g. np.linspace(lo, hi, n + 1)")
    values, plain_weights = _plain(a).ravel(), _plain(weights)
    if plain_weights is not None:
        if plain_weights.shape != _plain(a).shape:
            raise ValueError("weights should have the same shape as a.")
        plain_weights = plain_weights.ravel()
        if isinstance(weights, Tracer) and np.iscomplexobj(plain_weights):
            raise TypeError("histogram: traced complex weights are not supported; histogram the "
                            "real and imaginary parts separately")
    given_edges = np.ndim(_plain(bins)) == 1
    counts, plain_edges = np.histogram(values, _plain(bins) if given_edges else bins, range,
                                       weights=plain_weights)
    edges = _edges(a, bins, range, plain_edges, given_edges)
    if isinstance(weights, Tracer):
        w = reshape(weights, (-1,))
        counts = (_sorted_sums(values, w, plain_edges) if given_edges
                  else bin_sum_p(w, index=_bin_index(values, plain_edges), bins=plain_edges.size - 1))
    if density:
        widths = diff(edges)
        widths = widths.astype(float) if isinstance(widths, Tracer) else np.array(widths, float)
        return counts / widths / _sum(counts), edges
    return counts, edges


def _edges(a, bins, range, plain_edges, given_edges):
    """The edges as NumPy computed them, traced where they depend on traced values."""
    if given_edges:
        return bins
    if range is not None or not isinstance(a, Tracer) or _plain(a).size == 0:
        return plain_edges
    flat = reshape(a, (-1,))
    first, last = _min(flat), _max(flat)
    if _plain(first) == _plain(last):
        first, last = first - 0.5, last + 0.5
    edges = linspace(first, last, plain_edges.size, dtype=plain_edges.dtype)
    if not np.array_equal(_plain(edges), plain_edges):   # the same formula: never reached
        raise RuntimeError("duals: histogram edges differ from NumPy's; please report this")
    return edges


def _bin_index(values, edges):
    """The bin of each entry (-1 outside the edges), the last bin closed on the right."""
    index = np.searchsorted(edges, values, side="right") - 1
    index[values == edges[-1]] = edges.size - 2
    index[(values < edges[0]) | (values > edges[-1]) | np.isnan(values)] = -1
    return index


def _sorted_sums(values, w, edges):
    """NumPy's weighted counts for given edges: differences of cumulative sums of the weights
    sorted by value, block by block."""
    total = None
    for start in range(0, values.size, BLOCK):
        block = values[start:start + BLOCK]
        order = np.argsort(block)
        sorted_w = getitem(getitem(w, slice(start, start + BLOCK)), order)
        running = concatenate([np.zeros(1, _plain(w).dtype), cumsum(sorted_w)])
        part = getitem(running, _inclusive_positions(block[order], edges))
        total = part if total is None else total + part
    return diff(total)
