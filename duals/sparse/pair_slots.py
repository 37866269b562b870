"""Hessian sparsity of ``@numba.njit`` code in one run: pair duals over sets of a few input numbers.

The same construction as :mod:`duals.sparse.pair_lanes` (a product of a tangent ``t`` and a
partial ``s`` notes the pairs ``G(t) × G(s)``), with the sets held as slots of input numbers
(:mod:`duals.sparse.slot_lanes`) instead of bits, so the code runs once whatever ``n`` is. The
pairs go to a list (a header of int64 — count, capacity, failure, the list's address — and the
list of ``i << 32 | j``): a note past the capacity only counts, so the caller knows how much room a
second run needs. A set that overflowed its slots cannot be listed: the note marks the run failed,
and the caller detects with bits.

>>> import numba
>>> f = numba.njit(lambda x: x[0] * x[1] + np.sin(x[2]))
>>> indptr, indices, value = detect_pair_slots(f, [np.ones(3)], 0)
>>> indptr.tolist(), indices.tolist()
([0, 1, 2, 3], [1, 0, 2])
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
from .index_lanes import DIGEST as lanes_digest, _refused, unbox_element
from .slot_lanes import OVERFLOWED, SLOTS, IndexSlots, SlotDualType, _empty, _union, slot_dtype

__all__ = ["PairSlots", "PairSlotDualType", "pair_slot_dtype", "detect_pair_slots", "symmetric_rows"]

FIELDS = ("primal", "inputs", "table")
COUNT, CAPACITY, FAILED, LIST = range(4)
FIRST_LIST = 1 << 21    # pairs the first run has room for (16 MB) at most


class PairSlots(types.Type):
    """PairSlots(slots): the outer tangent: a set of at most ``slots`` inputs and the pair list's header."""

    union_lanes = True   # a selecting rule keeps both operands' sets (duals.jit.lanes.lpick)

    def __init__(self, slots):
        self.slots = int(slots)
        super().__init__(name=f"PairSlots[{self.slots}]")

    @property
    def key(self):
        return self.slots

    @property
    def dual_type(self):
        return PairSlotDualType(self.slots)


@register_model(PairSlots)
class PairSlotsModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("sets", IndexSlots(fe_type.slots)), ("table", types.uint64)])


make_attribute_wrapper(PairSlots, "sets", "sets")
make_attribute_wrapper(PairSlots, "table", "table")


class PairSlotDualType(dual_types.DualType):
    """PairSlotDualType(slots): a slot dual (value and first-order set) and its :class:`PairSlots`."""

    lanes_refusal = ("duals.jit: {name} works on the float tangent lanes of dual arrays, and "
                     "Hessian sparsity detection runs the code on index sets instead")

    def __init__(self, slots):
        self.base = SlotDualType(slots)
        self.slots = int(slots)
        self.lanes = 1     # in memory: the base, then one slot of the base's size (sets, table)
        self.tag = 2
        self.float = types.float64
        self.digest = lanes_digest
        types.Type.__init__(self, name=f"PairSlotDual[{self.slots}]")

    @property
    def key(self):
        return ("pair slots", self.slots, self.digest)

    @property
    def lanes_type(self):
        return PairSlots(self.slots)

    def with_base(self, base):
        return self

    def numpy_dtype(self):
        return pair_slot_dtype(self.slots)


@register_model(PairSlotDualType)
class PairSlotDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


@functools.lru_cache(maxsize=None)
def pair_slot_dtype(slots=SLOTS):
    """pair_slot_dtype(slots=8) -> the dtype of an array of pair slot duals.

    >>> pair_slot_dtype(8).itemsize
    80
    """
    return np.dtype([("primal", slot_dtype(slots)), ("inputs", np.uint32, (int(slots),)),
                     ("table", np.uint64)])


def _type_of_dtype(dt):
    base = dual_types.type_of_dtype(dt.fields["primal"][0])
    if not isinstance(base, SlotDualType) or dt != pair_slot_dtype(base.slots):
        return None
    return PairSlotDualType(base.slots)


dual_types.DTYPE_KINDS[FIELDS] = _type_of_dtype

# ---------------------------------------------------------------- noting pairs in the list


@intrinsic
def _pairs(typingctx, sets, table):
    if not isinstance(sets, IndexSlots):
        return None
    ret = PairSlots(sets.slots)

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ret)(context, builder)
        st.sets = args[0]
        st.table = args[1]
        return st._getvalue()
    return ret(sets, types.uint64), codegen


@intrinsic
def _slot(typingctx, sets, i):
    """Slot ``i`` of a set (input number plus one; 0 empty)."""
    if not isinstance(sets, IndexSlots):
        return None

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], builder.trunc(args[1], ir.IntType(32)))
    return types.uint32(sets, types.intp), codegen


@intrinsic
def _append(typingctx, table, pair):
    """Append ``pair`` to the list whose header is at ``table`` (the count grows past the capacity)."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        header = builder.inttoptr(args[0], i64.as_pointer())
        at = builder.atomic_rmw("add", builder.gep(header, [i64(COUNT)]), i64(1), "monotonic")
        room = builder.icmp_signed("<", at, builder.load(builder.gep(header, [i64(CAPACITY)])))
        with builder.if_then(room, likely=True):
            items = builder.inttoptr(builder.load(builder.gep(header, [i64(LIST)])), i64.as_pointer())
            builder.store(args[1], builder.gep(items, [at]))
        return context.get_dummy_value()
    return types.void(types.uint64, types.uint64), codegen


@intrinsic
def _fail(typingctx, table):
    """Mark the run failed: a set overflowed its slots."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        header = builder.inttoptr(args[0], i64.as_pointer())
        builder.store(i64(1), builder.gep(header, [i64(FAILED)]))
        return context.get_dummy_value()
    return types.void(types.uint64), codegen


def _slots_of(sets):
    """The number of slots of a set (a compile-time constant)."""


@overload(_slots_of)
def _ov_slots_of(sets):
    if isinstance(sets, IndexSlots):
        k = sets.slots
        return lambda sets: k


@register_jitable
def _note_sets(table, rows, cols):
    """Pairs ``rows × cols`` to the list (or the run marked failed where a set overflowed)."""
    if table == 0 or _slot(cols, 0) == 0:
        return
    k = _slots_of(rows)
    for a in range(k):
        i = _slot(rows, a)
        if i == 0:
            break
        for b in range(k):
            j = _slot(cols, b)
            if j == 0:
                break
            if i == OVERFLOWED or j == OVERFLOWED:
                _fail(table)
                return
            _append(table, (np.uint64(i - 1) << np.uint64(32)) | np.uint64(j - 1))


def _note(t, s):
    """Note the pairs of the product of tangent ``t`` and partial ``s``."""


@overload(_note)
def _ov_note(t, s):
    if not isinstance(t, PairSlots):
        return None
    if isinstance(s, SlotDualType) and s.slots == t.slots:
        return lambda t, s: _note_sets(t.table, t.sets, s._du)
    if isinstance(s, (types.Number, types.Boolean)):
        return lambda t, s: None
    raise errors.TypingError(f"Hessian sparsity detection: a partial of type {s} in compiled code; "
                             f"expected an index dual or a constant")

# ---------------------------------------------------------------- the six lane operations


@overload(lscale)
def _ov_lscale(t, s):
    if isinstance(t, PairSlots):
        def impl(t, s):
            _note(t, s)
            return t
        return impl


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if isinstance(t1, PairSlots):
        def impl(t1, s1, t2, s2):
            _note(t1, s1)
            _note(t2, s2)
            return _pairs(_union(t1.sets, t2.sets), t1.table | t2.table)
        return impl


@overload(ladd)
def _ov_ladd(t1, t2):
    if isinstance(t1, PairSlots):
        return lambda t1, t2: _pairs(_union(t1.sets, t2.sets), t1.table | t2.table)


@overload(lsub)
def _ov_lsub(t1, t2):
    if isinstance(t1, PairSlots):
        return lambda t1, t2: _pairs(_union(t1.sets, t2.sets), t1.table | t2.table)


@overload(lneg)
def _ov_lneg(t):
    if isinstance(t, PairSlots):
        return lambda t: t


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, PairSlots):
        return lambda t: _pairs(_empty(t.sets), np.uint64(0))


unbox(PairSlotDualType)(unbox_element)


@box(PairSlotDualType)
def _box_pair_slot_dual(typ, val, c):
    """A scalar result comes back as its float value (detection reads the list, not the result)."""
    outer = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    inner = cgutils.create_struct_proxy(typ.base)(c.context, c.builder, value=outer.re)
    return c.box(types.float64, inner.re)

# ---------------------------------------------------------------- detection


def _run(f, args, argnum, capacity):
    """One run with room for ``capacity`` pairs: (header, list, output)."""
    from ..jit.calling import call_on_duals
    x = args[argnum]
    header = np.zeros(4, np.int64)
    items = np.empty(capacity, np.uint64)
    header[CAPACITY] = capacity
    header[LIST] = items.ctypes.data
    seeded = np.zeros(x.shape, pair_slot_dtype(SLOTS))
    flat = seeded.reshape(-1)
    numbers = np.arange(1, x.size + 1, dtype=np.uint32)
    flat["primal"]["primal"] = x.reshape(-1)
    flat["primal"]["inputs"][:, 0] = numbers
    flat["inputs"][:, 0] = numbers
    flat["table"] = header.ctypes.data
    call = list(args)
    call[argnum] = seeded
    try:
        y = call_on_duals(f, call, "sparsity")
    except (TypeError, errors.NumbaError) as exc:   # duals.jit says why, as a TypeError
        raise _refused(f, f"cannot run it on index sets ({exc})") from exc
    return header, items, y


def _symmetric_rows(items, n):
    """Pairs ``i << 32 | j`` as the compressed rows (sorted, without repeats) of the symmetric
    pattern holding ``(i, j)`` and ``(j, i)``: a count per row, a bucket per row, then each row
    without the repeats (a mark per column) and sorted."""
    low = np.uint64(0xFFFFFFFF)
    counts = np.zeros(n + 1, np.int64)
    for p in items:
        counts[np.int64(p >> np.uint64(32)) + 1] += 1
        counts[np.int64(p & low) + 1] += 1
    for r in range(n):
        counts[r + 1] += counts[r]
    fill = counts[:n].copy()
    bucket = np.empty(counts[n], np.int64)
    for p in items:
        i, j = np.int64(p >> np.uint64(32)), np.int64(p & low)
        bucket[fill[i]] = j
        fill[i] += 1
        bucket[fill[j]] = i
        fill[j] += 1
    seen = np.full(n, -1, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    indices = np.empty(counts[n], np.int64)
    at = 0
    for r in range(n):
        start = at
        for q in range(counts[r], counts[r + 1]):
            c = bucket[q]
            if seen[c] != r:
                seen[c] = r
                k = at                            # insertion sort: rows are short
                while k > start and indices[k - 1] > c:
                    indices[k] = indices[k - 1]
                    k -= 1
                indices[k] = c
                at += 1
        indptr[r + 1] = at
    return indptr, indices[:at].copy()


_kernels = {}


def symmetric_rows(items, n):
    """symmetric_rows(items, n) -> (indptr, indices): the symmetric pattern of the pairs ``items``
    (uint64 ``i << 32 | j``) as sorted compressed rows (compiled on first use).

    >>> symmetric_rows(np.array([1, 1, 2 << 32 | 2], np.uint64), 3)
    (array([0, 1, 2, 3]), array([1, 0, 2]))
    """
    if not _kernels:
        from .._numba_cache import cached_njit
        _kernels["rows"] = cached_njit(nogil=True)(_symmetric_rows)
    return _kernels["rows"](items, n)


def detect_pair_slots(f, args, argnum):
    """detect_pair_slots(f, args, argnum) -> (indptr, indices, f's result): the symmetric pattern of
    the pairs noted in one run as sorted compressed rows, or None where a set overflowed its slots
    (detect with bits).

    ``f`` is a dispatcher (checked by the caller) returning a scalar; ``args[argnum]`` an array.
    """
    if args[argnum].size >= OVERFLOWED - 1:   # input numbers plus one must stay below the marker
        return None
    capacity = min(32 * max(int(args[argnum].size), 64), FIRST_LIST)
    header, items, y = _run(f, args, argnum, capacity)
    if header[FAILED]:
        return None
    if header[COUNT] > capacity:          # the list was short: run again with the room it needs
        header, items, y = _run(f, args, argnum, int(header[COUNT]))
        if header[FAILED] or header[COUNT] > items.size:
            return None
    indptr, indices = symmetric_rows(items[:header[COUNT]], int(args[argnum].size))
    return indptr, indices, y
