"""Index sets: for every entry of a value, the inputs it depends on (what sparsity detection carries).

The sparsity interpreter (:mod:`duals.dependencies`) pushes an :class:`IndexSets` through each
primitive where forward mode pushes a tangent. Entry ``k`` (C order) of a value of ``shape``
depends on the input positions ``indices[indptr[k]:indptr[k + 1]]``, sorted and without
repeats: one row of the Jacobian's sparsity pattern per entry (compressed-row form, NumPy only).

Every primitive family states its rule ``rule(sets, out, *args, **params) -> IndexSets`` (or
``None``: nothing depends on an input) next to its JVP and VJP rules, with the operations here:

* :func:`take`: entry ``k`` of the result is entry ``source[k]`` of the argument (a gather;
  ``-1`` for an entry that depends on nothing): reshapes, transposes, indexing, broadcasting;
* :func:`collect`: entry ``dst[p]`` depends on entry ``src[p]``, for pairs ``p``: sums,
  stencils, products (any linear map given by its non-zeros);
* :func:`union` of several results of one shape: element-wise functions of several arguments;

and the rule makers :func:`elementwise_rule`, :func:`gather_rule`, :func:`reduce_rule`,
:func:`axis_rule` and :func:`per_matrix_rule` built from them. A rule that decides by the values
at the point (which entry is the larger in ``maximum``, the order in ``sort``) marks its result
``by_value``, so the pattern is known to hold at that point only.

>>> s = seed((3,))
>>> take(s, np.array([2, -1, 0])).to_lists()
[[2], [], [0]]
"""
import math

import numpy as np

__all__ = ["IndexSets", "seed", "empty", "positions", "take", "collect", "union", "broadcast",
           "reduced", "along_axis", "elementwise_rule", "gather_rule", "reduce_rule", "axis_rule",
           "per_matrix_rule", "UnlessConstantZero", "TooDense"]

# at most this many (entry, input) pairs in one step: beyond it the pattern is no longer sparse
MAX_PAIRS = 1 << 26


class TooDense(MemoryError):
    """Raised when a pattern gets too dense for sparse detection to make sense."""


class IndexSets:
    """IndexSets(shape, n, indptr, indices, by_value=False): the inputs each entry depends on.

    ``n`` is the number of inputs (the Jacobian's columns); ``by_value`` marks sets that a rule
    chose by the values at the point.

    >>> IndexSets((2,), 3, np.array([0, 1, 3]), np.array([0, 1, 2])).to_lists()
    [[0], [1, 2]]
    """

    __slots__ = ("shape", "n", "indptr", "indices", "by_value")

    def __init__(self, shape, n, indptr, indices, by_value=False):
        self.shape = tuple(shape)
        self.n = int(n)
        self.indptr = indptr
        self.indices = indices
        self.by_value = by_value

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def nnz(self):
        return int(self.indptr[-1])

    def lengths(self):
        return np.diff(self.indptr)

    def rows(self):
        """The entry each stored index belongs to."""
        return np.repeat(np.arange(self.size, dtype=np.int64), self.lengths())

    def reshaped(self, shape):
        return IndexSets(shape, self.n, self.indptr, self.indices, self.by_value)

    def to_lists(self):
        """The sets as lists of ints, entry by entry (for small examples and tests)."""
        return [self.indices[a:b].tolist() for a, b in zip(self.indptr[:-1], self.indptr[1:])]

    def __repr__(self):
        return f"IndexSets(shape={self.shape}, n={self.n}, nnz={self.nnz})"


def positions(shape):
    """positions(shape) -> the flat position of every entry of an array of ``shape``.

    >>> positions((2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def seed(shape, n=None, offset=0):
    """seed(shape, n=None, offset=0) -> entry ``k`` depends on input ``offset + k`` (an input's own sets)."""
    size = math.prod(shape)
    return IndexSets(shape, size if n is None else n, np.arange(size + 1, dtype=np.int64),
                     np.arange(offset, offset + size, dtype=np.int64))


def empty(shape, n):
    """empty(shape, n) -> no entry depends on anything."""
    return IndexSets(shape, n, np.zeros(math.prod(shape) + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))


def _ranges(starts, lengths, total):
    """The concatenation of ``range(s, s + l)`` for each start and length (all vectorised)."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - ends + lengths, lengths) + np.arange(total, dtype=np.int64)


def _check_budget(total):
    if total > MAX_PAIRS:
        raise TooDense(f"sparsity detection: one step relates {total} (entry, input) pairs, more "
                       f"than {MAX_PAIRS}; this Jacobian is not sparse. Use the dense duals.jacfwd / "
                       f"jacrev (no sparsity=), or pass sparsity= a pattern you know")


def take(sets, source):
    """take(sets, source) -> entry ``k`` of the result has the set of entry ``source[k]`` (-1: none).

    The result has the shape of ``source``.

    >>> take(seed((2,)), np.array([[1, 1], [0, -1]])).to_lists()
    [[1], [1], [0], []]
    """
    source = np.asarray(source, dtype=np.int64)
    flat = source.reshape(-1)
    size = sets.size
    if flat.size == size and size and flat[0] == 0 and np.array_equal(flat, np.arange(size)):
        return sets.reshaped(source.shape)
    valid = flat >= 0
    safe = np.where(valid, flat, 0)
    lengths = np.where(valid, sets.indptr[safe + 1] - sets.indptr[safe], 0)
    indptr = np.zeros(flat.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    total = int(indptr[-1])
    _check_budget(total)
    indices = sets.indices[_ranges(sets.indptr[safe], lengths, total)] if total else indptr[:0]
    return IndexSets(source.shape, sets.n, indptr, indices, sets.by_value)


def _from_pairs(rows, cols, shape, n, by_value=False):
    """Sets from (entry, input) pairs in any order, repeats allowed."""
    size = math.prod(shape)
    if rows.size == 0:
        result = empty(shape, n)
        result.by_value = by_value
        return result
    keys = rows * max(n, 1) + cols
    keys.sort(kind="stable")   # pieces that are sorted already merge in linear time
    distinct = np.empty(keys.size, dtype=bool)
    distinct[0] = True
    np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
    rows, cols = np.divmod(keys[distinct], max(n, 1))
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=size), out=indptr[1:])
    return IndexSets(shape, n, indptr, cols, by_value)


def collect(sets, src, dst, shape):
    """collect(sets, src, dst, shape) -> entry ``dst[p]`` depends on everything entry ``src[p]`` does.

    The general step: any linear map given by its non-zeros (``src``, ``dst`` flat positions).

    >>> collect(seed((3,)), np.array([0, 1, 2]), np.array([0, 0, 1]), (2,)).to_lists()
    [[0, 1], [2]]
    """
    src = np.asarray(src, dtype=np.int64).reshape(-1)
    dst = np.asarray(dst, dtype=np.int64).reshape(-1)
    keep = (src >= 0) & (dst >= 0)
    if not keep.all():
        src, dst = src[keep], dst[keep]
    lengths = sets.indptr[src + 1] - sets.indptr[src]
    total = int(lengths.sum())
    _check_budget(total)
    rows = np.repeat(dst, lengths)
    cols = sets.indices[_ranges(sets.indptr[src], lengths, total)]
    return _from_pairs(rows, cols, shape, sets.n, sets.by_value)


def union(parts, shape=None):
    """union(parts, shape=None) -> entry by entry, the union of several sets of one shape (None skipped).

    >>> union([seed((2,)), take(seed((2,)), np.array([1, 0]))]).to_lists()
    [[0, 1], [0, 1]]
    """
    parts = [p for p in parts if p is not None]
    by_value = any(p.by_value for p in parts)
    if not parts:
        return None
    shape = parts[0].shape if shape is None else tuple(shape)
    stored = [p for p in parts if p.nnz]
    if len(stored) <= 1:
        chosen = stored[0] if stored else parts[0]
        return IndexSets(shape, chosen.n, chosen.indptr, chosen.indices, by_value)
    first = stored[0]
    if all(p.indices is first.indices or (np.array_equal(p.indptr, first.indptr)
                                          and np.array_equal(p.indices, first.indices))
           for p in stored[1:]):
        return IndexSets(shape, first.n, first.indptr, first.indices, by_value)
    merged = first
    for part in stored[1:]:
        merged = _merged(merged, part)
    return IndexSets(shape, first.n, merged.indptr, merged.indices, by_value)


def _merged(a, b):
    """The entry-by-entry union of two sets of one size, by one compiled linear merge of their
    sorted runs (:mod:`duals.index_merge`)."""
    from .index_merge import merge
    total = a.nnz + b.nnz
    _check_budget(total)
    indptr = np.zeros(a.size + 1, dtype=np.int64)
    out = np.empty(total, dtype=np.int64)
    count = merge(*(np.ascontiguousarray(v, dtype=np.int64) for v in (a.indptr, a.indices, b.indptr, b.indices)),
                  indptr, out)
    return IndexSets(a.shape, a.n, indptr, out[:count] if 2 * count > total else out[:count].copy())


def broadcast(sets, shape):
    """broadcast(sets, shape) -> the sets of a value broadcast to ``shape`` (NumPy's rules)."""
    shape = tuple(shape)
    if sets.shape == shape:
        return sets
    return take(sets, np.broadcast_to(positions(sets.shape), shape))


def _shape_of(x):
    from .ops import innermost
    return np.shape(innermost(x))


def _inputs(sets):
    return next(s.n for s in sets if s is not None)

# ---------------------------------------------------------------- rule makers


class UnlessConstantZero:
    """UnlessConstantZero(other): the kind of an argument whose partial derivative is argument
    ``other`` itself (``x * y``): an entry does not depend on it where ``other`` is a constant
    zero (no input reaches that entry of it, and its value there is 0; not perturbed by an
    enclosing transformation either). A constant that depends on nothing is the same wherever
    the pattern is used (a constant chosen by a value, as a
    ``where`` picking its ``0.0``, has already marked the detection as this point's), so the
    result is not marked ``by_value``: cut-off pair potentials (``where(r < rc, v(r), 0.0) * d``)
    keep only the pairs inside the cut-off."""

    def __init__(self, other):
        self.other = other

    def constant_zeros(self, sets, args, shape):
        from .core import Tracer
        if isinstance(args[self.other], Tracer):   # perturbed by an enclosing transformation
            return np.zeros(shape, dtype=bool)
        value = np.broadcast_to(np.asarray(args[self.other]) == 0, shape)
        if not value.any() or sets[self.other] is None:
            return value
        other = broadcast(sets[self.other], shape)
        empty = (other.indptr[1:] == other.indptr[:-1]).reshape(shape)
        return value & empty


def elementwise_rule(*kinds):
    """elementwise_rule(*kinds) -> the rule of an element-wise primitive (arguments broadcast).

    ``kinds[i]`` says whether an output entry depends on argument ``i``'s entry: ``True``
    (always), ``False`` (never: a zero derivative, a mask), an :class:`UnlessConstantZero`, or
    a function ``(out, *args, **params) -> boolean array``, where it does at this point
    (``maximum``: where that argument is the larger one); the result is then marked ``by_value``.
    """
    def rule(sets, out, *args, **params):
        shape = _shape_of(out)
        parts, by_value = [], False
        for s, kind in zip(sets, kinds):
            if s is None or kind is False:
                continue
            part = broadcast(s, shape)
            if isinstance(kind, UnlessConstantZero):
                zeros = kind.constant_zeros(sets, args, shape)
                if zeros.any():
                    part = take(part, np.where(zeros, -1, positions(shape)))
            elif callable(kind):
                where = np.broadcast_to(np.asarray(kind(out, *args, **params), dtype=bool), shape)
                part = take(part, np.where(where, positions(shape), -1))
                by_value = True
            parts.append(part)
        result = union(parts, shape)
        if result is not None and by_value:
            result.by_value = True
        return result
    return rule


def stacked(sets, args):
    """The sets of several arguments one after the other (constants: none), and the flat position
    of each argument's entries in that stack (``-1`` for a constant's)."""
    shapes = [_shape_of(a) for a in args]
    n = _inputs(sets)
    parts, where, offset = [], [], 0
    for s, shape in zip(sets, shapes):
        if s is None:
            where.append(np.full(shape, -1, dtype=np.int64))
            continue
        where.append(positions(shape) + offset)
        parts.append(s)
        offset += s.size
    if len(parts) == 1:   # one argument carries entries: its own sets, stacked with nothing
        return parts[0].reshaped((offset,)), where
    indptr = [np.zeros(1, dtype=np.int64)]
    base = 0
    for p in parts:
        indptr.append(p.indptr[1:] + base)
        base += p.nnz
    joined = IndexSets((offset,), n, np.concatenate(indptr), np.concatenate([p.indices for p in parts]),
                       any(p.by_value for p in parts))
    return joined, where


def gather_rule(impl, data=None):
    """gather_rule(impl, data=None) -> the rule of a primitive each of whose output entries is a copy
    of one input entry (or a constant): ``impl`` run on the positions of the entries says which.

    ``data`` lists the arguments that carry entries (all by default); the others (a condition,
    an index) reach ``impl`` as their values.
    """
    def rule(sets, out, *args, **params):
        chosen = range(len(args)) if data is None else data
        joined, where = stacked([sets[i] for i in chosen], [args[i] for i in chosen])
        call = list(args)
        for i, w in zip(chosen, where):
            call[i] = w
        return take(joined, impl(*call, **params))
    return rule


def reduce_rule(axis_of=lambda params: params["axis"], where=None):
    """reduce_rule(axis_of=..., where=None) -> the rule of a reduction over axes: each output entry
    depends on the entries it reduces (``where(out, x, **params)``: only those, at this point)."""
    def rule(sets, out, x, **params):
        return reduced(sets[0], axis_of(params), _shape_of(out),
                       None if where is None else where(out, x, **params))
    return rule


def reduced(sets, axis, out_shape, where=None):
    """Entries reduced over ``axis`` (a tuple) into ``out_shape`` (with or without kept axes)."""
    axis = tuple(a % len(sets.shape) for a in axis)
    kept = tuple(1 if a in axis else n for a, n in enumerate(sets.shape))
    dst = np.broadcast_to(positions(kept), sets.shape)
    if where is not None:
        dst = np.where(np.broadcast_to(where, sets.shape), dst, -1)
    result = collect(sets, positions(sets.shape), dst, out_shape)
    result.by_value = result.by_value or where is not None
    return result


def axis_rule(local):
    """axis_rule(local) -> the rule of a primitive acting along one axis, the same way on every line.

    ``local(m, out, x, **params) -> (dst, src)``: along a line of ``m`` entries, output entry
    ``dst[p]`` depends on input entry ``src[p]``; ``params["axis"]`` names the axis (negative
    values count from the right) and the other axes of the output and the input must agree.
    """
    def rule(sets, out, x, **params):
        s = sets[0]
        axis = params.get("axis", -1) % len(s.shape)
        dst, src = local(s.shape[axis], out, x, **params)
        return along_axis(s, axis, _shape_of(out), dst, src)
    return rule


def along_axis(sets, axis, out_shape, dst, src):
    """Output entry ``dst[p]`` along ``axis`` depends on input entry ``src[p]`` on every line."""
    inputs = np.moveaxis(positions(sets.shape), axis, -1)
    outputs = np.moveaxis(positions(out_shape), axis, -1)
    dst, src = np.asarray(dst, dtype=np.int64), np.asarray(src, dtype=np.int64)
    return collect(sets, inputs[..., src], outputs[..., dst], out_shape)


def per_matrix_rule(core=2):
    """per_matrix_rule(core=2) -> the rule of a matrix function (a decomposition, a solve) on
    stacks: every output entry of matrix ``b`` of the stack depends on every entry of the
    arguments' matrix ``b`` (the last ``core`` axes of each argument; leading axes broadcast)."""
    def rule(sets, out, *args, **params):
        shapes = [_shape_of(a) for a in args]
        batch = np.broadcast_shapes(*[s[:len(s) - core] for s in shapes])
        out_shape = _shape_of(out)
        parts = []
        for s in sets:
            if s is None:
                continue
            axes = tuple(range(len(s.shape) - core, len(s.shape)))
            per = reduced(s, axes, s.shape[:len(s.shape) - core])
            parts.append(broadcast(per, batch))
        joined = union(parts, batch)
        stack = positions(batch).reshape(batch + (1,) * (len(out_shape) - len(batch)))
        return take(joined, np.broadcast_to(stack, out_shape))
    return rule
