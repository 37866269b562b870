"""Compiled drivers of reverse mode: adjoint inputs, the recording and the sweep in one call.

The counterpart of :mod:`duals.jit.driver` for ``grad``/``value_and_grad`` of a dispatcher and
for the one-pullback ``vjp`` the adjoint ODE solver calls at every step
(:func:`duals.jit.reverse.pull_once`): once a layout of arguments has run twice by the general
path, one ``@njit`` driver makes the adjoint inputs (nodes ``1..n`` of the thread's tape),
calls the user's function, sweeps the tape from the output's cotangent and returns the
gradient blocks. Python only starts the tape (so its buffer holds the inputs) and checks it. The
adjoints live in ``scratch`` (the tape's, kept from call to call) where it is large enough: a
fresh array of one float per node would be page-faulted in on every call.

>>> import numba, numpy as np
>>> from duals.jit.tape import Tape
>>> tape = Tape(np.float64)
>>> drive = grad_driver(numba.njit(lambda x, c: c * np.sum(x * x)), 2, (0,))
>>> tape.start(3)
>>> value, failed, grads = drive(tape.header, tape.pointer, tape.scratch, np.array([1.0, 2.0, 3.0]), 2.0)
>>> value, failed, grads[0].tolist()
(28.0, 0, [4.0, 8.0, 12.0])
"""
import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._overloads import overload
from ._types import make
from .adjoint import AdjointType
from .sweeps import UNTOUCHED, sweep
from .tape import BUFFER, COUNT, FAILED, TapeRef

__all__ = ["grad_driver", "pull_driver", "ADJOINT"]

ADJOINT = AdjointType(types.float64)
WORDS = 3   # a node over floats is 24 bytes: two 32-bit parents, then two float64 partials



def grad_driver(fn, arity, nums):
    """grad_driver(fn, arity, nums) -> ``driver(header, address, scratch, *args)`` returning ``(value,
    failed, gradients)`` of scalar ``fn`` with respect to the arguments at ``nums``, recorded on
    the tape whose header is ``header`` (at ``address``), started for their entries."""
    return _generate("grad", fn, arity, nums)


def pull_driver(fn, arity, nums):
    """pull_driver(fn, arity, nums) -> ``driver(header, address, scratch, cotangent, *args)`` returning
    ``(value, failed, cotangents of the arguments at nums)`` for ``fn``'s one array result."""
    return _generate("pull", fn, arity, nums)


def _generate(kind, fn, arity, nums):
    key = (kind, arity, tuple(nums))
    made = fn.__dict__.setdefault("_duals_drivers", {})  # lives and dies with fn
    found = made.get(key)
    if found is not None:
        return found
    names = [f"a{i}" for i in range(arity)]
    head = "header, address, scratch, cotangent" if kind == "pull" else "header, address, scratch"
    lines = [f"def driver({head}, {', '.join(names)}):", "    node = 1"]
    call = list(names)
    for i in nums:
        lines.append(f"    d{i}, node = _adjoints(a{i}, node, address)")
        call[i] = f"d{i}"
    lines.append(f"    out = fn({', '.join(call)})")
    seed = "_seed_vector(out, cotangent, adj)" if kind == "pull" else "_seed_scalar(out, adj)"
    lines += ["    if header[FAILED] != 0:",
              "        return _value(out), 1, (" + "".join(f"_zeros(a{i}), " for i in nums) + ")",
              "    adj = _zeroed(scratch, header[COUNT])",
              f"    {seed}",
              "    _sweep(header, node, adj)",
              "    offset = 1"]
    for i in nums:
        lines.append(f"    g{i}, offset = _gradient(a{i}, adj, offset)")
    lines.append("    return _value(out), 0, (" + "".join(f"g{i}, " for i in nums) + ")")
    namespace = {"np": np, "fn": fn, "FAILED": FAILED, "COUNT": COUNT, "_adjoints": _adjoints,
                 "_value": _value, "_zeros": _zeros, "_seed_scalar": _seed_scalar,
                 "_seed_vector": _seed_vector, "_sweep": _sweep, "_gradient": _gradient,
                 "_zeroed": _zeroed}
    exec("\n".join(lines), namespace)
    found = made[key] = numba.njit(namespace["driver"])
    return found


@numba.njit(inline="always")
def _zeroed(scratch, count):
    """``count`` untouched adjoints (:data:`~duals.jit.sweeps.UNTOUCHED`): the front of ``scratch``
    when it is long enough."""
    if count <= scratch.shape[0]:
        adj = scratch[:count]
        adj[:] = UNTOUCHED
        return adj
    return np.full(count, UNTOUCHED)


# ---------------------------------------------------------------- inputs

@intrinsic
def _tape_ref(typingctx, node, address):
    """The reference to node ``node`` of the tape whose header is at ``address``."""
    ref = TapeRef(types.float64)

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ref)(context, builder)
        st.node = context.cast(builder, args[0], sig.args[0], types.int64)
        st.tape = builder.inttoptr(context.cast(builder, args[1], sig.args[1], types.int64),
                                   ir.IntType(8).as_pointer())
        st.scale = context.get_constant(types.float64, 1.0)
        return st._getvalue()
    return ref(node, address), codegen


def _adjoints(a, node, address):
    """(``a`` as adjoints, its entries nodes ``node, node + 1, ...``; the next free node)."""


@overload(_adjoints)
def _ov_adjoints(a, node, address):
    if isinstance(a, types.Array):
        def array(a, node, address):
            out = np.empty(a.shape, ADJOINT)
            flat, values = out.reshape(a.size), np.ascontiguousarray(a).reshape(a.size)
            for j in range(a.size):
                flat[j] = make(values[j], _tape_ref(node + j, address))
            return out, node + a.size
        return array
    return lambda a, node, address: (make(float(a), _tape_ref(node, address)), node + 1)


# ---------------------------------------------------------------- results

def _value(y):
    """The plain value of a result (adjoints' values, floats as they are)."""


@overload(_value)
def _ov_value(y):
    if y == ADJOINT:
        return lambda y: y._re
    if isinstance(y, types.Array) and y.dtype == ADJOINT:
        def array(y):
            flat = np.ascontiguousarray(y).reshape(y.size)
            out = np.empty(y.size)
            for j in range(y.size):
                out[j] = flat[j]._re
            return out.reshape(y.shape)
        return array
    if isinstance(y, types.Array):
        return lambda y: y.astype(np.float64)
    return lambda y: float(y)


def _seed_scalar(y, adj):
    """``adj[node of y] += 1`` (nothing for a constant result)."""


@overload(_seed_scalar)
def _ov_seed_scalar(y, adj):
    if y == ADJOINT:
        def seed(y, adj):
            adj[y._du.node] += y._du.scale
            adj[0] = UNTOUCHED
        return seed
    if isinstance(y, (types.Float, types.Integer)):
        return lambda y, adj: None


def _seed_vector(y, cotangent, adj):
    """``adj[node of y[k]] += cotangent[k]`` for every entry (the shapes must agree)."""


@overload(_seed_vector)
def _ov_seed_vector(y, cotangent, adj):
    if isinstance(y, types.Array) and y.dtype == ADJOINT:
        def seed(y, cotangent, adj):
            if cotangent.shape != y.shape:
                raise ValueError("vjp: the cotangent's shape differs from the output's")
            flat, c = np.ascontiguousarray(y).reshape(y.size), np.ascontiguousarray(cotangent).reshape(y.size)
            for k in range(y.size):
                if c[k] != 0.0:   # a zero cotangent adds nothing, even through an infinite scale
                    adj[flat[k]._du.node] += flat[k]._du.scale * c[k]
            adj[0] = UNTOUCHED
        return seed
    if isinstance(y, types.Array):
        def constant(y, cotangent, adj):
            if cotangent.shape != y.shape:
                raise ValueError("vjp: the cotangent's shape differs from the output's")
        return constant


@intrinsic
def _pointer(typingctx, address):
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
    return types.voidptr(types.int64), codegen


def _sweep(header, first, adj):
    """Sweep the recorded nodes from the last down to ``first`` (inputs stop it)."""


@overload(_sweep)
def _ov_sweep(header, first, adj):
    def impl(header, first, adj):
        count = header[COUNT]
        partials = numba.carray(_pointer(header[BUFFER]), (count, WORDS), np.float64)
        parents = numba.carray(_pointer(header[BUFFER]), (count, 2 * WORDS), np.uint32)
        sweep(parents, partials, first, adj)
    return impl


def _gradient(a, adj, offset):
    """(the gradient block of argument ``a``, whose entries are nodes ``offset...``; the next)."""


@overload(_gradient)
def _ov_gradient(a, adj, offset):
    if isinstance(a, types.Array):
        return lambda a, adj, offset: ((adj[offset:offset + a.size] + 0.0).reshape(a.shape),
                                       offset + a.size)   # (+ 0.0: untouched zeros as 0.0)
    return lambda a, adj, offset: (adj[offset] + 0.0, offset + 1)


def _zeros(a):
    """A zero gradient block shaped like ``a``."""


@overload(_zeros)
def _ov_zeros(a):
    if isinstance(a, types.Array):
        return lambda a: np.zeros(a.shape)
    return lambda a: 0.0
