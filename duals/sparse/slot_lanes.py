"""Sparsity detection of ``@numba.njit`` code in one run: index sets as a few slots of input numbers.

:mod:`duals.sparse.index_lanes` holds a set as bits, 64 inputs per word, so a run costs
``n / 64`` word operations per operation and more than 1024 inputs take several runs. Where
every value depends on a few inputs (a stencil, a reaction network), a set fits in ``K`` slots
of 32-bit input numbers whatever ``n`` is: :class:`IndexSlots` holds ``input + 1`` in its first
slots and 0 in the empty ones (so the zero constant is the empty set), one ``<K x i32>`` vector.
A union adds each input of the second set that the first lacks (one vector comparison per
input); a union that would need more than ``K`` slots gives the *overflowed* set (every slot
``0xFFFFFFFF``), which every later union keeps. :func:`detect_slots` runs ``f`` once on arrays of
:func:`slot_dtype` and returns the pairs, or None when an output's set overflowed (the caller
then detects with bits): a pattern found here is exact, never truncated.

>>> import numba
>>> f = numba.njit(lambda x: x[1:] * x[:-1])
>>> indptr, indices = detect_slots(f, [np.ones(3)], 0)
>>> indptr.tolist(), indices.tolist()
([0, 2, 4], [0, 1, 1, 2])
"""
import functools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.extending import box, intrinsic, register_model, unbox

from .._overloads import overload
from ..jit import _types as dual_types
from ..jit.lanes import ladd, laxpy, lneg, lscale, lsub, lzero
from .index_lanes import DIGEST as lanes_digest, _refused, unbox_element

__all__ = ["IndexSlots", "SlotDualType", "slot_dtype", "detect_slots", "slot_rows", "SLOTS"]

SLOTS = 8            # inputs a set holds before it overflows
OVERFLOWED = 0xFFFFFFFF
FIELDS = ("primal", "inputs")


class IndexSlots(types.Type):
    """IndexSlots(slots): a set of at most ``slots`` inputs, as input numbers plus one (0: empty)."""

    union_lanes = True   # a selecting rule keeps both operands' sets (duals.jit.lanes.lpick)

    def __init__(self, slots):
        self.slots = int(slots)
        super().__init__(name=f"IndexSlots[{self.slots}]")

    @property
    def key(self):
        return self.slots

    @property
    def dual_type(self):
        return SlotDualType(self.slots)


@register_model(IndexSlots)
class IndexSlotsModel(models.DataModel):
    """In registers ``<K x i32>`` (a union compares whole vectors); in memory ``[K x i32]``."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type)
        self._vector = ir.VectorType(ir.IntType(32), fe_type.slots)
        self._array = ir.ArrayType(ir.IntType(32), fe_type.slots)

    def get_value_type(self):
        return self._vector

    def get_data_type(self):
        return self._array

    def get_argument_type(self):
        return self._vector

    def get_return_type(self):
        return self._vector

    def as_argument(self, builder, value):
        return value

    def from_argument(self, builder, value):
        return value

    def as_return(self, builder, value):
        return value

    def from_return(self, builder, value):
        return value

    def as_data(self, builder, value):
        out = ir.Constant(self._array, ir.Undefined)
        for i in range(self._fe_type.slots):
            out = builder.insert_value(out, builder.extract_element(value, ir.IntType(32)(i)), i)
        return out

    def from_data(self, builder, value):
        out = ir.Constant(self._vector, ir.Undefined)
        for i in range(self._fe_type.slots):
            out = builder.insert_element(out, builder.extract_value(value, i), ir.IntType(32)(i))
        return out

    def load_from_data_pointer(self, builder, ptr, align=None):
        return self.from_data(builder, builder.load(ptr, align=align))


class SlotDualType(dual_types.DualType):
    """SlotDualType(slots): a float value and the (few) inputs it depends on."""

    lanes_refusal = ("duals.jit: {name} works on the float tangent lanes of dual arrays, and "
                     "sparsity detection runs the code on index sets instead")

    def __init__(self, slots):
        self.base = types.float64
        self.slots = int(slots)
        self.lanes = self.slots // 2   # the slots fill this many 8-byte places after the value
        self.tag = 1
        self.float = types.float64
        self.digest = lanes_digest
        types.Type.__init__(self, name=f"SlotDual[{self.slots}]")

    @property
    def key(self):
        return ("index slots", self.slots, self.digest)

    @property
    def lanes_type(self):
        return IndexSlots(self.slots)

    def with_base(self, base):
        return self

    def numpy_dtype(self):
        return slot_dtype(self.slots)


@register_model(SlotDualType)
class SlotDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


@functools.lru_cache(maxsize=None)
def slot_dtype(slots=SLOTS):
    """slot_dtype(slots=8) -> the dtype of an array of slot duals: a value and ``slots`` uint32.

    >>> slot_dtype(8).itemsize
    40
    """
    return np.dtype([("primal", np.float64), ("inputs", np.uint32, (int(slots),))])


def _type_of_dtype(dt):
    inputs = dt.fields["inputs"][0]
    if (dt.fields["primal"][0] != np.float64 or inputs.subdtype is None
            or inputs.subdtype[0] != np.uint32 or inputs.shape[0] % 2):
        return None
    return SlotDualType(inputs.shape[0])


dual_types.DTYPE_KINDS[FIELDS] = _type_of_dtype

# ---------------------------------------------------------------- the union


def _splat(builder, value, n):
    vec = ir.VectorType(value.type, n)
    v = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.IntType(32)(0))
    return builder.shuffle_vector(v, ir.Constant(vec, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), n), [0] * n))


def _mask(builder, cmp, n):
    """A ``<n x i1>`` comparison as an ``i<n>`` bit mask."""
    return builder.bitcast(cmp, ir.IntType(n))


def _union_slow(builder, a, b, k):
    """Each input of ``b`` (its first ``count(b)`` slots) that ``a`` lacks goes to ``a``'s first
    empty slot, one branch-free step per input; the overflowed set when that passes ``k``."""
    i32, i1 = ir.IntType(32), ir.IntType(1)
    zero = ir.Constant(a.type, None)
    lanes = ir.Constant(a.type, list(range(k)))

    def count(v):
        c = builder.ctpop(_mask(builder, builder.icmp_unsigned("!=", v, zero), k))
        return builder.zext(c, i32) if k < 32 else c

    inputs = count(b)
    res, over, filled = a, i1(0), count(a)
    exits = []
    for i in range(k):
        more = builder.append_basic_block(f"slots.{i}")
        exits.append((builder.block, res, over))
        done = builder.append_basic_block(f"slots.exit.{i}")
        builder.cbranch(builder.icmp_unsigned(">", inputs, i32(i)), more, done)
        builder.position_at_end(done)
        exits[-1] = exits[-1] + (done,)
        builder.position_at_end(more)
        e = builder.extract_element(b, i32(i))
        seen = _mask(builder, builder.icmp_unsigned("==", res, _splat(builder, e, k)), k)
        add = builder.icmp_unsigned("==", seen, ir.IntType(k)(0))
        room = builder.icmp_unsigned("<", filled, i32(k))
        at = builder.select(builder.and_(add, room), filled, i32(k))   # k: no slot
        res = builder.select(builder.icmp_unsigned("==", lanes, _splat(builder, at, k)),
                             _splat(builder, e, k), res)
        over = builder.or_(over, builder.and_(add, builder.not_(room)))
        filled = builder.add(filled, builder.zext(add, i32))
    last = builder.block
    end = builder.append_basic_block("slots.end")
    builder.branch(end)
    for _, _, _, done in exits:
        builder.position_at_end(done)
        builder.branch(end)
    builder.position_at_end(end)
    out_res, out_over = builder.phi(a.type), builder.phi(i1)
    for _, r, o, done in exits:
        out_res.add_incoming(r, done)
        out_over.add_incoming(o, done)
    out_res.add_incoming(res, last)
    out_over.add_incoming(over, last)
    return builder.select(out_over, ir.Constant(a.type, [OVERFLOWED] * k), out_res)


@intrinsic
def _union(typingctx, a, b):
    """The union of two slot sets (overflowed when it needs more than K slots)."""
    if not isinstance(a, IndexSlots) or a != b:
        return None
    k = a.slots

    def codegen(context, builder, sig, args):
        x, y = args
        i32 = ir.IntType(32)
        same = builder.icmp_unsigned("==", _mask(builder, builder.icmp_unsigned("==", x, y), k),
                                     ir.IntType(k)((1 << k) - 1))
        x_empty = builder.icmp_unsigned("==", builder.extract_element(x, i32(0)), i32(0))
        y_empty = builder.icmp_unsigned("==", builder.extract_element(y, i32(0)), i32(0))
        quick = builder.select(x_empty, y, x)
        entry = builder.block
        slow_block = builder.append_basic_block("slots.union")
        end = builder.append_basic_block("slots.done")
        builder.cbranch(builder.or_(builder.or_(same, y_empty), x_empty), end, slow_block)
        builder.position_at_end(slow_block)
        slow = _union_slow(builder, x, y, k)
        slow_end = builder.block
        builder.branch(end)
        builder.position_at_end(end)
        out = builder.phi(x.type)
        out.add_incoming(quick, entry)
        out.add_incoming(slow, slow_end)
        return out
    return a(a, b), codegen


@intrinsic
def _empty(typingctx, a):
    def codegen(context, builder, sig, args):
        return context.get_constant_null(a)
    return a(a), codegen

# ---------------------------------------------------------------- the six lane operations


@overload(lscale)
def _ov_lscale(t, s):
    if isinstance(t, IndexSlots):
        return lambda t, s: t


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if isinstance(t1, IndexSlots):
        return lambda t1, s1, t2, s2: _union(t1, t2)


@overload(ladd)
def _ov_ladd(t1, t2):
    if isinstance(t1, IndexSlots):
        return lambda t1, t2: _union(t1, t2)


@overload(lsub)
def _ov_lsub(t1, t2):
    if isinstance(t1, IndexSlots):
        return lambda t1, t2: _union(t1, t2)


@overload(lneg)
def _ov_lneg(t):
    if isinstance(t, IndexSlots):
        return lambda t: t


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, IndexSlots):
        return lambda t: _empty(t)


unbox(SlotDualType)(unbox_element)


@box(SlotDualType)
def _box_slot_dual(typ, val, c):
    c.pyapi.err_set_string("PyExc_TypeError", "sparsity detection of compiled code: the function "
                                              "returned a scalar; return an array")
    return cgutils.get_null_value(c.pyapi.pyobj)

# ---------------------------------------------------------------- detection


def _slot_rows(slots):
    m, k = slots.shape
    indptr = np.zeros(m + 1, np.int64)
    for r in range(m):
        count = 0
        for s in range(k):
            v = slots[r, s]
            if v == OVERFLOWED:
                return indptr, np.zeros(0, np.int64), True
            count += v != 0
        indptr[r + 1] = indptr[r] + count
    indices = np.empty(indptr[m], np.int64)
    for r in range(m):
        start = indptr[r]
        end = start
        for s in range(k):
            v = slots[r, s]
            if v != 0:
                col = np.int64(v) - 1
                at = end                           # insertion sort: a row holds at most k inputs
                while at > start and indices[at - 1] > col:
                    indices[at] = indices[at - 1]
                    at -= 1
                indices[at] = col
                end += 1
    return indptr, indices, False


_kernels = {}


def slot_rows(slots):
    """slot_rows(slots) -> (indptr, indices, overflowed): the sets ``slots`` (m, K) uint32 as
    compressed rows, each sorted.

    >>> slot_rows(np.array([[3, 1], [0, 0]], np.uint32))
    (array([0, 2, 2]), array([0, 2]), False)
    """
    if not _kernels:
        from .._numba_cache import cached_njit
        _kernels["rows"] = cached_njit(nogil=True)(_slot_rows)
    return _kernels["rows"](slots)


def detect_slots(f, args, argnum, slots=SLOTS):
    """detect_slots(f, args, argnum, slots=8) -> (indptr, indices): the Jacobian's pattern at ``args``
    as compressed rows (sorted), or None when an output depends on more than ``slots`` inputs
    (detect with bits then).

    ``f`` is a dispatcher (checked by the caller) and ``args[argnum]`` an array.
    """
    from ..jit.calling import call_on_duals
    x = args[argnum]
    if x.size >= OVERFLOWED - 1:          # input numbers plus one must stay below the marker
        return None
    seeded = np.zeros(x.shape, slot_dtype(slots))
    flat = seeded.reshape(-1)
    flat["primal"] = x.reshape(-1)
    flat["inputs"][:, 0] = np.arange(1, x.size + 1, dtype=np.uint32)
    call = list(args)
    call[argnum] = seeded
    try:
        y = call_on_duals(f, call, "sparsity")
    except (TypeError, errors.NumbaError) as exc:   # duals.jit says why, as a TypeError
        raise _refused(f, f"cannot run it on index sets ({exc})") from exc
    if not (isinstance(y, np.ndarray) and y.dtype.names == FIELDS):
        if isinstance(y, np.ndarray) and y.dtype.kind == "f":   # nothing depends on x
            return np.zeros(y.size + 1, np.int64), np.zeros(0, np.int64)
        raise _refused(f, f"returned a {type(y).__name__}; it needs one array output")
    indptr, indices, overflowed = slot_rows(y.reshape(-1)["inputs"])
    return None if overflowed else (indptr, indices)
