"""The tape of compiled reverse mode: a linear "lanes" type whose arithmetic records nodes.

Compiled forward mode computes ``make(f(x), lscale(x.du, f'(x)))`` for every operation (the
rules generated from :mod:`duals.derivatives`); the tangent ``du`` only has to support the six
linear operations of :mod:`duals.jit.lanes`. A :class:`TapeRef` is such a tangent that stands
for *a multiple of a node of a tape*, ``scale · node``: ``lscale(t, s)`` only multiplies the
scale (a chain of one-argument operations records nothing), ``laxpy(t1, s1, t2, s2)`` appends the
node ``(t1, t2, s1 · scale1, s2 · scale2)`` and returns a reference to it with scale 1. So the very same generated rules
record the linearised computation (JAX's "linearize, then transpose"), and the reverse sweep
(:func:`duals.jit.sweeps.sweep`) walks the nodes backwards accumulating
``adj[parent] += partial * adj[node]``.

Node 0 is the constant: a reference to it (the all-zero ``TapeRef``, what a float promoted to
an adjoint gets) records nothing, and the sweep's writes to it are ignored. A result's cotangent
seeds its node times its scale. Nodes ``1..n`` are
the inputs. A node is ``(p1, p2, d1, d2)``: two parents and two partials of the base type
(floats, or duals for forward over reverse), 24 bytes over floats (the parents are 32-bit node
indices: a tape holds at most 2³¹ - 1 nodes); unary nodes have ``p2 = 0``.

The nodes live in one buffer from the C allocator (``malloc``/``realloc``), grown by doubling
from compiled code; its header (count, capacity, buffer, a failure flag) is a small int64
NumPy array that every :class:`TapeRef` points to, so threads and nested calls each record on
their own tape, and nothing holds a Python object.

>>> tape = Tape(np.float64)
>>> tape.start(2); tape.recorded
3
"""
import ctypes
import ctypes.util
import threading
import weakref
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.extending import intrinsic, make_attribute_wrapper, register_model

from .._overloads import overload
from .lanes import ladd, laxpy, lneg, lscale, lsub, lzero
from .sweeps import sweep, sweep_duals, sweep_lanes

__all__ = ["TapeRef", "Tape", "node_dtype", "emit_push", "push_scaled", "unit", "RecordingSize",
           "last_recording"]

# header slots (int64)
COUNT, CAPACITY, BUFFER, FAILED = 0, 1, 2, 3
FIRST_CAPACITY = 1 << 12
MOST_NODES = (1 << 31) - 1  # parents are stored as 32-bit node indices


class TapeRef(types.Type):
    """TapeRef(base): the tangent of an adjoint of ``base``: a node index and the tape's header."""

    def __init__(self, base):
        self.base = base
        super().__init__(name=f"TapeRef[{base}]")

    @property
    def key(self):
        return self.base


@register_model(TapeRef)
class TapeRefModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("node", types.int64), ("tape", types.voidptr),
                                        ("scale", fe_type.base)])


make_attribute_wrapper(TapeRef, "node", "node")
make_attribute_wrapper(TapeRef, "scale", "scale")


def unit(context, builder, typ):
    """The constant one of a float or (nested) dual type: real part 1, lanes 0."""
    from ._types import DualType
    if not isinstance(typ, DualType):
        return context.get_constant(typ, 1.0)
    st = cgutils.create_struct_proxy(typ)(context, builder)
    st.re = unit(context, builder, typ.base)
    st.du = context.get_constant_null(typ.lanes_type)
    return st._getvalue()


# ---------------------------------------------------------------- recording a node

def _node_type(context, base):
    """The LLVM layout of one node: parents, then partials (packed, as :func:`node_dtype`)."""
    data = context.data_model_manager[base].get_data_type()
    i32 = ir.IntType(32)
    return ir.LiteralStructType([i32, i32, data, data], packed=True)


def _grow_function(module):
    """``void duals_tape_grow_once(i64* header, i64 node_bytes)``: doubles the buffer, or sets the
    failure flag when the allocator refuses (the pushes then record nothing, and later calls
    return at once: a loop of 10⁸ operations would otherwise ask the allocator 10⁸ times)."""
    i64, i8p = ir.IntType(64), ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(module, ir.FunctionType(ir.VoidType(), [i64.as_pointer(), i64]),
                                        "duals_tape_grow_once")
    if not fn.is_declaration:
        return fn
    fn.linkage = "linkonce_odr"
    fn.attributes.add("noinline")
    header, size = fn.args
    builder = ir.IRBuilder(fn.append_basic_block())
    with builder.if_then(builder.icmp_signed("!=", builder.load(builder.gep(header, [i64(FAILED)])), i64(0)),
                         likely=False):
        builder.ret_void()
    realloc = cgutils.get_or_insert_function(module, ir.FunctionType(i8p, [i8p, i64]), "realloc")
    cap_ptr = builder.gep(header, [i64(CAPACITY)])
    buf_ptr = builder.bitcast(builder.gep(header, [i64(BUFFER)]), i8p.as_pointer())
    cap = builder.load(cap_ptr)
    new_cap = builder.select(builder.icmp_signed(">", cap, i64(MOST_NODES // 2)), i64(MOST_NODES),
                             builder.mul(cap, i64(2)))
    at_most = builder.icmp_signed(">=", cap, i64(MOST_NODES))  # node indices are 32-bit
    grown = builder.select(at_most, i8p(None),
                           builder.call(realloc, [builder.load(buf_ptr), builder.mul(new_cap, size)]))
    with builder.if_else(cgutils.is_null(builder, grown), likely=False) as (refused, done):
        with refused:
            builder.store(i64(1), builder.gep(header, [i64(FAILED)]))
        with done:
            builder.store(grown, buf_ptr)
            builder.store(new_cap, cap_ptr)
    builder.ret_void()
    return fn


def _tbaa(module, what):
    """TBAA access tags that tell LLVM a tape's header and its nodes never overlap, so the count
    can stay in a register across consecutive pushes instead of a store and reload per node."""
    root = module.add_metadata([ir.MetaDataString(module, "duals tape")])
    kind = module.add_metadata([ir.MetaDataString(module, f"duals tape {what}"), root, ir.IntType(64)(0)])
    return module.add_metadata([kind, kind, ir.IntType(64)(0)])


def emit_push(context, builder, ref_type, tape, p1, p2, d1, d2):
    """Append node ``(p1, p2, d1, d2)`` to ``tape``; the TapeRef of the new node (node 0, the
    constant, when the allocator refused or the tape holds ``MOST_NODES``)."""
    i64 = ir.IntType(64)
    node_ty = _node_type(context, ref_type.base)
    size = context.get_abi_sizeof(node_ty)
    header = builder.bitcast(tape, i64.as_pointer())
    count_ptr = builder.gep(header, [i64(COUNT)])
    cap_ptr = builder.gep(header, [i64(CAPACITY)])
    head_tag, node_tag = _tbaa(builder.module, "header"), _tbaa(builder.module, "node")

    def load(ptr):
        value = builder.load(ptr)
        value.set_metadata("tbaa", head_tag)
        return value
    n = load(count_ptr)
    with builder.if_then(builder.icmp_signed(">=", n, load(cap_ptr)), likely=False):
        builder.call(_grow_function(builder.module), [header, i64(size)])
    node = cgutils.alloca_once_value(builder, i64(0))
    with builder.if_then(builder.icmp_signed("<", n, load(cap_ptr)), likely=True):
        buf_ptr = builder.bitcast(builder.gep(header, [i64(BUFFER)]), node_ty.as_pointer().as_pointer())
        slot = builder.gep(load(buf_ptr), [n])
        model = context.data_model_manager[ref_type.base]
        i32 = ir.IntType(32)
        parents = (builder.trunc(p1, i32), builder.trunc(p2, i32))
        for k, value in enumerate(parents + (model.as_data(builder, d1), model.as_data(builder, d2))):
            builder.store(value, builder.gep(slot, [ir.Constant(ir.IntType(32), 0),
                                                    ir.Constant(ir.IntType(32), k)])).set_metadata("tbaa", node_tag)
        builder.store(builder.add(n, i64(1)), count_ptr).set_metadata("tbaa", head_tag)
        builder.store(n, node)
    ref = cgutils.create_struct_proxy(ref_type)(context, builder)
    ref.node = builder.load(node)
    ref.tape = tape
    ref.scale = unit(context, builder, ref_type.base)
    return ref._getvalue()


@intrinsic
def _push2(typingctx, t1, s1, t2, s2):
    """_push2(t1, s1, t2, s2) -> a reference to the new node ``s1 · t1 + s2 · t2`` (the
    partials as given: the callers fold the references' scales in)."""
    if not isinstance(t1, TapeRef) or t1 != t2:
        return None

    def codegen(context, builder, sig, args):
        r1 = cgutils.create_struct_proxy(t1)(context, builder, value=args[0])
        r2 = cgutils.create_struct_proxy(t1)(context, builder, value=args[2])
        d1 = context.cast(builder, args[1], s1, t1.base)
        d2 = context.cast(builder, args[3], s2, t1.base)
        return emit_push(context, builder, t1, r1.tape, r1.node, r2.node, d1, d2)
    return t1(t1, s1, t2, s2), codegen


@intrinsic
def _scaled(typingctx, t, s):
    """_scaled(t, s) -> the reference ``s · t``: the same node, its scale times ``s``."""
    if not isinstance(t, TapeRef):
        return None

    def codegen(context, builder, sig, args):
        ref = cgutils.create_struct_proxy(t)(context, builder, value=args[0])
        ref.scale = context.cast(builder, args[1], s, t.base)
        return ref._getvalue()
    return t(t, s), codegen


@intrinsic
def _constant_ref(typingctx, t):
    """_constant_ref(t) -> the reference to node 0 (no derivative)."""
    def codegen(context, builder, sig, args):
        return context.get_constant_null(t)
    return t(t), codegen


# ---------------------------------------------------------------- the six lane operations
# A reference is ``scale · node``: a scaling records nothing (chains of one-argument operations
# cost no node); only a sum of two references appends one, with the scales folded into its
# partials.

def _is_ref(*ts):
    return isinstance(ts[0], TapeRef)


@overload(lscale)
def _ov_lscale(t, s):
    if _is_ref(t):
        def impl(t, s):
            if t.node == 0:
                return t
            return _scaled(t, t.scale * s)
        return impl


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if _is_ref(t1):
        def impl(t1, s1, t2, s2):
            if t1.node == 0:
                return t2 if t2.node == 0 else _scaled(t2, t2.scale * s2)
            if t2.node == 0:
                return _scaled(t1, t1.scale * s1)
            return _push2(t1, t1.scale * s1, t2, t2.scale * s2)
        return impl


@overload(ladd)
def _ov_ladd(t1, t2):
    if _is_ref(t1):
        def impl(t1, t2):
            if t1.node == 0:
                return t2
            if t2.node == 0:
                return t1
            return _push2(t1, t1.scale, t2, t2.scale)
        return impl


@overload(lsub)
def _ov_lsub(t1, t2):
    if _is_ref(t1):
        def impl(t1, t2):
            if t2.node == 0:
                return t1
            if t1.node == 0:
                return _scaled(t2, -t2.scale)
            return _push2(t1, t1.scale, t2, -t2.scale)
        return impl


@overload(lneg)
def _ov_lneg(t):
    if _is_ref(t):
        def impl(t):
            if t.node == 0:
                return t
            return _scaled(t, -t.scale)
        return impl


@intrinsic
def push_scaled(typingctx, node, tape, scale):
    """push_scaled(node, tape, scale) -> the node ``scale · node`` appended to the tape at
    ``tape`` (an address): how a scaled result becomes one node that a cotangent can seed."""
    ref_type = TapeRef(scale)

    def codegen(context, builder, sig, args):
        pointer = builder.inttoptr(args[1], ir.IntType(8).as_pointer())
        zero = context.get_constant_null(scale)
        ref = emit_push(context, builder, ref_type, pointer, args[0], ir.IntType(64)(0), args[2], zero)
        return cgutils.create_struct_proxy(ref_type)(context, builder, value=ref).node
    return types.int64(types.int64, types.int64, scale), codegen


@overload(lzero)
def _ov_lzero(t):
    if _is_ref(t):
        return lambda t: _constant_ref(t)


# ---------------------------------------------------------------- the tape's memory, from Python

_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None)
_LIBC.malloc.restype = ctypes.c_void_p
_LIBC.malloc.argtypes = [ctypes.c_size_t]
_LIBC.free.restype = None
_LIBC.free.argtypes = [ctypes.c_void_p]


def node_dtype(base_dtype):
    """node_dtype(base_dtype) -> the NumPy layout of one node: ``p1, p2, d1, d2`` (packed)."""
    base = np.dtype(base_dtype)
    return np.dtype([("p1", np.int32), ("p2", np.int32), ("d1", base), ("d2", base)])


class Tape:
    """Tape(base_dtype): a node buffer and its header, for recordings over ``base_dtype``.

    ``start(inputs)`` empties it for a recording with ``inputs`` input nodes; ``pointer`` is
    what each input's TapeRef holds; ``nodes()`` views the recorded nodes (valid until the next
    recording). The buffer is freed when the tape is garbage-collected (or by ``close``).
    ``scratch`` is room for one adjoint per node that a compiled driver sweeps in
    (:mod:`duals.jit.reverse_driver`), kept from call to call.
    """

    def __init__(self, base_dtype):
        self.dtype = node_dtype(base_dtype)
        self.header = np.zeros(4, np.int64)
        self.pointer = self.header.ctypes.data
        self.scratch = _NO_SCRATCH
        self._reserve(FIRST_CAPACITY)
        weakref.finalize(self, _free_buffer, self.header)

    def keep_scratch(self):
        """Make ``scratch`` hold one adjoint per node of the last recording (for the next call)."""
        if self.scratch.shape[0] < self.recorded:
            self.scratch = np.empty(self.recorded)

    def _reserve(self, capacity):
        old = int(self.header[BUFFER])
        if old and capacity <= self.header[CAPACITY]:
            return
        buf = _LIBC.malloc(capacity * self.dtype.itemsize)
        if not buf:
            raise MemoryError(f"compiled reverse mode: could not allocate a tape of {capacity} nodes")
        if old:
            _LIBC.free(old)
        self.header[CAPACITY] = capacity
        self.header[BUFFER] = buf

    def start(self, inputs, expected=0):
        """Empty the tape for a recording with ``inputs`` input nodes (room for ``expected``)."""
        self._reserve(max(inputs + 1, expected))
        self.header[COUNT] = inputs + 1
        self.header[FAILED] = 0
        self.inputs = inputs
        self.noted()

    def noted(self):
        """Make this tape's recording the one :func:`last_recording` reports on this thread."""
        _LAST.header, _LAST.node_bytes = self.header, self.dtype.itemsize

    @property
    def recorded(self):
        """The number of nodes, the constant and the inputs included."""
        return int(self.header[COUNT])

    @property
    def nbytes(self):
        """Bytes of node memory held (the capacity, not only what is recorded)."""
        return int(self.header[CAPACITY]) * self.dtype.itemsize

    def check(self, who):
        if self.header[FAILED]:
            raise MemoryError(f"{who}: the tape of compiled reverse mode outgrew memory at "
                              f"{self.recorded} recorded operations ({self.nbytes / 2**30:.2f} GiB); "
                              f"differentiate a shorter segment, or use duals.jacfwd (no tape)")

    def nodes(self):
        """The recorded nodes as a structured array (a view of the tape's buffer, valid until
        the next recording)."""
        n = self.recorded
        raw = (ctypes.c_char * (n * self.dtype.itemsize)).from_address(int(self.header[BUFFER]))
        return np.frombuffer(raw, dtype=self.dtype, count=n)

    def sweep(self, first, adj):
        """Pull ``adj`` (one adjoint per node, ``(nodes, lanes)`` for lanes, duals for forward
        over reverse) back through the nodes from the last down to ``first``, in place."""
        nodes = self.nodes()
        words = self.dtype.itemsize // 8   # 8-byte words: the two 32-bit parents, then partials
        parents = nodes.view(np.uint32).reshape(-1, 2 * words)   # unsigned: no wraparound test per index
        partials = nodes.view(np.float64).reshape(-1, words)
        if adj.dtype.names is not None:    # duals over floats: (real part, lanes) per adjoint
            width = adj.dtype.itemsize // 8
            sweep_duals(parents, partials, width, first, adj.view(np.float64).reshape(-1, width))
        else:
            (sweep_lanes if adj.ndim == 2 else sweep)(parents, partials, first, adj)

    def close(self):
        """Free the node buffer and the scratch now (a later ``start`` allocates a new one)."""
        _free_buffer(self.header)
        self.scratch = _NO_SCRATCH


_NO_SCRATCH = np.zeros(0)
_LAST = threading.local()   # the header (not the tape: it may own a large buffer) and node size


class RecordingSize(NamedTuple):
    """The size of a compiled reverse-mode recording (see :func:`last_recording`)."""
    nodes: int            # recorded nodes: the constant node and the inputs included
    bytes_per_node: int   # 24 over floats; 24 + 16 * lanes for forward over reverse
    nbytes: int           # nodes * bytes_per_node: the tape's memory at its end


def last_recording():
    """last_recording() -> RecordingSize of the calling thread's last compiled reverse-mode
    recording (``duals.grad``, ``vjp``, ``jacrev``, ``hvp`` or ``hessian`` of a Numba dispatcher;
    of ``loop_value_and_grad``, its first segment: it records one at a time), or None before
    the first. Recordings made on other threads (``workers=``) are theirs.

    >>> import numba, duals
    >>> g = duals.grad(numba.njit(lambda x, y: x * y + x))(2.0, 3.0)
    >>> duals.jit.last_recording()
    RecordingSize(nodes=4, bytes_per_node=24, nbytes=96)
    """
    header = getattr(_LAST, "header", None)
    if header is None:
        return None
    nodes = int(header[COUNT])
    return RecordingSize(nodes, _LAST.node_bytes, nodes * _LAST.node_bytes)


def _free_buffer(header, free=_LIBC.free):
    buf = int(header[2])
    header[1:3] = 0
    if buf:
        free(buf)
