"""Hessian sparsity of unchanged ``@numba.njit`` code: nested index duals that note nonlinear pairs.

Forward over forward computes a Hessian with duals over duals: every generated rule makes
``make(f(x), lscale(x._du, f'(x)))``, the partial ``f'(x)`` computed by the level below. Here the
level below is an index dual (:mod:`duals.sparse.index_lanes`): the partial carries the set of
inputs it depends on, so a nonlinearity shows in the partial itself. The outer "tangent"
(:class:`PairSets`) is the set ``G(v)`` of inputs the value depends on and the address of a table
of pairs; the six lane operations keep ``G`` as unions (as on index lanes) and, for each product
``t · s`` of a tangent and a partial, note the pairs ``G(t) × G(s)`` in the table:

    d²(s · t) = ds · dt + s · d²t,  so the pattern of the second derivatives is
    H(out) ⊆ H(t) ∪ G(t) × G(s)   (chain rule, summed over the terms of the rule).

``G(s)`` is empty for a constant partial (``+``, ``-``, a scaling by a constant, the 0/1 partials of
``maximum``/``abs``), so linear and piecewise-linear operations note nothing. The table is one for
the whole run (a pair ``(i, j)``, a bit of row ``i``): the Hessian pattern is the union of every pair
noted, symmetrised. That is the pattern of ``grad(f)``'s Jacobian that the NumPy path detects, except
that it is conservative where a noted value never reaches the output (a value computed and not
used, or used only through a zero derivative such as ``floor``, ``sign`` or a comparison).

Branches the code takes on values give the pattern at the given point (checked at later calls of
``sparsity="auto"`` by one extra lane, as for Jacobians). The same construction over sets of a
few input numbers (:mod:`duals.sparse.pair_slots`) runs first, once whatever ``n`` is; these bits
serve where a set that a product needs holds more than 8 inputs.

>>> import numba
>>> f = numba.njit(lambda x: np.sum(x[1:] * x[:-1]) + np.sin(x[0]))
>>> detect_hessian(f, [np.ones(3)], 0, "natural").pattern.toarray().astype(int).tolist()
[[1, 1, 0], [1, 0, 1], [0, 1, 0]]
"""
import functools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.extending import box, intrinsic, make_attribute_wrapper, register_model, unbox

from .._overloads import overload, register_jitable
from ..jit import _types as dual_types
from ..jit.lanes import ladd, laxpy, lneg, lscale, lsub, lzero
from .index_lanes import (DIGEST as lanes_digest, WORDS, IndexBits, IndexDualType, _empty, _lowest,
                          _refused, _union, _without_lowest, bit_pairs, index_dtype, seed_bits,
                          unbox_element)
from .patterns import Sparsity

__all__ = ["PairSets", "PairDualType", "pair_dtype", "detect_hessian"]

FIELDS = ("primal", "sets", "table")


class PairSets(types.Type):
    """PairSets(words): the outer tangent: a set of inputs (``words`` 64-bit words) and the table's address."""

    union_lanes = True   # a selecting rule keeps both operands' sets (duals.jit.lanes.lpick)

    def __init__(self, words):
        self.words = int(words)
        super().__init__(name=f"PairSets[{self.words} words]")

    @property
    def key(self):
        return self.words

    @property
    def dual_type(self):
        return PairDualType(self.words)


@register_model(PairSets)
class PairSetsModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("bits", IndexBits(fe_type.words)), ("table", types.uint64)])


make_attribute_wrapper(PairSets, "bits", "bits")
make_attribute_wrapper(PairSets, "table", "table")


class PairDualType(dual_types.DualType):
    """PairDualType(words): an index dual (value and first-order set) and its :class:`PairSets`."""

    lanes_refusal = ("duals.jit: {name} works on the float tangent lanes of dual arrays, and "
                     "Hessian sparsity detection runs the code on index sets instead")

    def __init__(self, words):
        self.base = IndexDualType(words)
        self.words = int(words)
        self.lanes = 1     # in memory: the base, then one slot of the base's size (sets, table)
        self.tag = 2
        self.float = types.float64
        self.digest = lanes_digest
        types.Type.__init__(self, name=f"PairDual[{self.words} words]")

    @property
    def key(self):
        return ("pair sets", self.words, self.digest)

    @property
    def lanes_type(self):
        return PairSets(self.words)

    def with_base(self, base):
        return self

    def numpy_dtype(self):
        return pair_dtype(self.words)


@register_model(PairDualType)
class PairDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


@functools.lru_cache(maxsize=None)
def pair_dtype(words):
    """pair_dtype(words) -> the dtype of an array of pair duals: an index dual, its set again, the table's address.

    >>> pair_dtype(1).itemsize
    32
    """
    return np.dtype([("primal", index_dtype(words)), ("sets", np.uint64, (int(words),)),
                     ("table", np.uint64)])


def _type_of_dtype(dt):
    base = dual_types.type_of_dtype(dt.fields["primal"][0])
    if not isinstance(base, IndexDualType) or dt != pair_dtype(base.words):
        return None
    return PairDualType(base.words)


dual_types.DTYPE_KINDS[FIELDS] = _type_of_dtype

# ---------------------------------------------------------------- noting pairs in the table


@intrinsic
def _pairs(typingctx, bits, table):
    if not isinstance(bits, IndexBits):
        return None
    ret = PairSets(bits.words)

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ret)(context, builder)
        st.bits = args[0]
        st.table = args[1]
        return st._getvalue()
    return ret(bits, types.uint64), codegen


@intrinsic
def _word(typingctx, bits, i):
    """Word ``i`` of a set."""
    if not isinstance(bits, IndexBits):
        return None

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], builder.trunc(args[1], ir.IntType(32)))
    return types.uint64(bits, types.intp), codegen


@intrinsic
def _any(typingctx, bits):
    """Whether a set holds an input."""
    if not isinstance(bits, IndexBits):
        return None

    def codegen(context, builder, sig, args):
        acc = builder.extract_element(args[0], ir.IntType(32)(0))
        for i in range(1, bits.words):
            acc = builder.or_(acc, builder.extract_element(args[0], ir.IntType(32)(i)))
        return builder.icmp_unsigned("!=", acc, ir.IntType(64)(0))
    return types.boolean(bits), codegen


@intrinsic
def _or_into(typingctx, table, index, value):
    """``table[index] |= value`` (an atomic or, only where a bit is new: code run in threads is safe)."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ptr = builder.gep(builder.inttoptr(args[0], i64.as_pointer()), [args[1]])
        value = args[2]
        new = builder.icmp_unsigned("!=", builder.and_(builder.load(ptr), value), value)
        with builder.if_then(new, likely=False):
            builder.atomic_rmw("or", ptr, value, "monotonic")
        return context.get_dummy_value()
    return types.void(types.uint64, types.intp, types.uint64), codegen


def _words_of(bits):
    """The number of words of a set (a compile-time constant)."""


@overload(_words_of)
def _ov_words_of(bits):
    if isinstance(bits, IndexBits):
        w = bits.words
        return lambda bits: w


@register_jitable
def _note_sets(table, rows, cols):
    """Pairs ``rows × cols``: row ``i`` of the table (``W`` words) gets ``cols`` for each ``i`` in ``rows``."""
    if table == 0 or not _any(cols):
        return
    words = _words_of(rows)
    for i in range(words):
        w = _word(rows, i)
        while w != 0:
            row = (i * 64 + _lowest(w)) * words
            for k in range(words):
                v = _word(cols, k)
                if v != 0:
                    _or_into(table, row + k, v)
            w = _without_lowest(w)


def _note(t, s):
    """Note the pairs of the product of tangent ``t`` and partial ``s``."""


@overload(_note)
def _ov_note(t, s):
    if not isinstance(t, PairSets):
        return None
    if isinstance(s, IndexDualType) and s.words == t.words:
        return lambda t, s: _note_sets(t.table, t.bits, s._du)
    if isinstance(s, (types.Number, types.Boolean)):
        return lambda t, s: None
    raise errors.TypingError(f"Hessian sparsity detection: a partial of type {s} in compiled code; "
                             f"expected an index dual or a constant")


# ---------------------------------------------------------------- the six lane operations


@overload(lscale)
def _ov_lscale(t, s):
    if isinstance(t, PairSets):
        def impl(t, s):
            _note(t, s)
            return t
        return impl


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if isinstance(t1, PairSets):
        def impl(t1, s1, t2, s2):
            _note(t1, s1)
            _note(t2, s2)
            return _pairs(_union(t1.bits, t2.bits), t1.table | t2.table)
        return impl


@overload(ladd)
def _ov_ladd(t1, t2):
    if isinstance(t1, PairSets):
        return lambda t1, t2: _pairs(_union(t1.bits, t2.bits), t1.table | t2.table)


@overload(lsub)
def _ov_lsub(t1, t2):
    if isinstance(t1, PairSets):
        return lambda t1, t2: _pairs(_union(t1.bits, t2.bits), t1.table | t2.table)


@overload(lneg)
def _ov_lneg(t):
    if isinstance(t, PairSets):
        return lambda t: t


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, PairSets):
        return lambda t: _pairs(_empty(t.bits), np.uint64(0))


unbox(PairDualType)(unbox_element)


@box(PairDualType)
def _box_pair_dual(typ, val, c):
    """A scalar result comes back as its float value (detection reads the table, not the result)."""
    outer = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    inner = cgutils.create_struct_proxy(typ.base)(c.context, c.builder, value=outer.re)
    return c.box(types.float64, inner.re)

# ---------------------------------------------------------------- detection


def _passes(n):
    """``(words, [inputs of each pass])``: all inputs in one pass where ``64 · words`` hold them,
    otherwise every pair of half-size blocks (a pair of inputs meets in some pass)."""
    words = next((w for w in WORDS if 64 * w >= n), None)
    if words is not None:
        return words, [np.arange(n)]
    words = WORDS[-1]
    half = 32 * words
    blocks = [np.arange(a, min(a + half, n)) for a in range(0, n, half)]
    return words, [np.concatenate([blocks[a], blocks[b]])
                   for a in range(len(blocks)) for b in range(a + 1, len(blocks))]


def _seeded(x, inputs, words, table):
    """``x`` as pair duals: input ``inputs[l]`` gets bit ``l`` at both levels."""
    seeded = np.zeros(x.shape, pair_dtype(words))
    flat = seeded.reshape(-1)
    flat["primal"]["primal"] = x.reshape(-1)
    seed_bits(flat["primal"]["sets"], inputs)
    seed_bits(flat["sets"], inputs)
    flat["table"] = table.ctypes.data
    return seeded


def _table_pairs(table, inputs):
    """The pairs ``(i, j)`` of inputs whose bits the table holds."""
    row, col = bit_pairs(table)
    return inputs[row], inputs[col]


def detect_hessian(f, args, argnum, order):
    """detect_hessian(f, args, argnum, order) -> the Hessian's Sparsity of dispatcher ``f`` at ``args``.

    ``f`` returns a scalar (or one-entry array). It runs once on sets of at most 8 input numbers
    (:mod:`duals.sparse.pair_slots`); where a set that a product needs overflowed, on bits: once
    when ``64 · 16`` bits hold the inputs, otherwise once per pair of blocks of 512 inputs.
    """
    from ..jit.calling import call_on_duals, _check_dispatcher
    f = _check_dispatcher(f, "sparsity")
    x = args[argnum]
    if not isinstance(x, np.ndarray):
        raise _refused(f, "needs an array argument (here a scalar)")
    n = x.size
    from .pair_slots import detect_pair_slots
    found = detect_pair_slots(f, args, argnum)
    if found is not None:
        import scipy.sparse
        indptr, indices, y = found
        _scalar(f, y)
        pattern = scipy.sparse.csr_array((np.ones(indices.size, dtype=bool), indices, indptr), shape=(n, n))
        pattern.has_canonical_format = True    # symmetric, sorted rows without repeats
        return Sparsity.trusted(pattern, "hessian", order)
    words, passes = _passes(n)
    rows, cols = [], []
    for inputs in passes:
        table = np.zeros((64 * words, words), np.uint64)
        call = list(args)
        call[argnum] = _seeded(x, inputs, words, table)
        try:
            y = call_on_duals(f, call, "sparsity")
        except (TypeError, errors.NumbaError) as exc:   # duals.jit says why, as a TypeError
            raise _refused(f, f"cannot run it on index sets ({exc})") from exc
        _scalar(f, y)
        i, j = _table_pairs(table, inputs)
        rows.append(i)
        cols.append(j)
    return _symmetric(np.concatenate(rows), np.concatenate(cols), n, order)


def _symmetric(row, col, n, order):
    import scipy.sparse
    pattern = scipy.sparse.csr_array((np.ones(row.size, dtype=bool), (row, col)), shape=(n, n))
    return Sparsity(pattern, "hessian", order, depends_on_values=False)


def _scalar(f, y):
    if isinstance(y, np.ndarray) and y.size != 1 or not isinstance(y, (np.ndarray, float, int)):
        raise _refused(f, f"returned {_describe(y)}; a Hessian needs a scalar output")


def _describe(y):
    if isinstance(y, np.ndarray):
        return f"an array of shape {y.shape}"
    return f"a {type(y).__name__}"

