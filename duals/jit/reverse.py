"""Reverse mode of compiled code: vjp, grad and jacrev of a Numba dispatcher.

The differentiated float arguments become adjoints (:mod:`duals.jit.adjoint`): input ``k``
(counting entries of every differentiated argument in order) is node ``k + 1`` of a tape
(:mod:`duals.jit.tape`). The user's own dispatcher runs on them, compiled by Numba for the
adjoint type (with ``cache=True``, cached), and records every operation's partial derivatives
on the tape; a compiled sweep then pulls cotangents back to the inputs. One recording serves
any number of sweeps: ``jacrev`` pulls back ``chunk_size`` output directions per sweep.

Second order (``hvp``, ``hessian``) is forward over reverse on the same recording, taken over
dual numbers: :mod:`duals.jit.reverse_second_order`.

Arguments that are not differentiated pass through unchanged; so do integer arguments of
``vjp`` (step counts), whose cotangent is ``0.0``. Values are computed in float64 (a float32
input's derivative comes back as float32).

>>> import numba, numpy as np
>>> f = numba.njit(lambda x: x[0] * x[1] ** 2)
>>> compiled_grad(f)(np.array([1.0, 2.0])).tolist()
[4.0, 4.0]
"""
import math
import threading

import numpy as np

from .. import tree
from ..arguments import chunk_lanes, in_dtype, is_whole_number, output, split_aux, zero_cotangent
from ..forward import Dual
from ..validation import check_float_output
from .running import transformation
from .adjoint import AdjointScalar, adjoint_dtype, is_adjoint_dtype
from .api import _resolve_workers, _target
from .calling import call_on_duals, _check_dispatcher, _input, _leaves, _rebuild, _shape
from .entry_arguments import _inputs, _size, check_aliases, positional
from .driver import REVERSE_SAVING_S, hot, plain_arguments
from .reverse_driver import ADJOINT, grad_driver, pull_driver
from .seeding import driven_entry, layout_key_at
from .sweeps import positive_zeros, untouched
from .tape import CAPACITY, COUNT, FAILED, Tape, push_scaled
from .._numba_cache import cached_njit

__all__ = ["compiled_vjp", "compiled_grad", "compiled_value_and_grad", "compiled_jacrev"]

KEEP_TAPE_BYTES = 1 << 26  # a thread keeps its tape's memory between calls up to this size,
KEEP_LOOP_BYTES = 1 << 30  # and up to this one while consecutive calls need that much (see _release)

_TAPES = threading.local()


def _thread_tape(base):
    """The calling thread's tape over ``base`` (reused from call to call)."""
    tapes = getattr(_TAPES, "tapes", None)
    if tapes is None:
        tapes = _TAPES.tapes = {}
    tape = tapes.get(base)
    if tape is None:
        tape = tapes[base] = Tape(base)
        tape.layouts = {}  # the input arrays per layout of arguments (see _Inputs)
        tape.large_before = False   # whether the last recording was larger than KEEP_TAPE_BYTES
    return tape


def _release(tape):
    """After a call: free the tape's memory unless the next call is likely to want it. Up to
    ``KEEP_TAPE_BYTES`` it is always kept. A larger tape is freed after a single large recording
    (one gradient of a long simulation does not hold its memory) but kept from the second in a
    row, up to ``KEEP_LOOP_BYTES``: a loop of such gradients would otherwise fault the whole tape
    in afresh at every call (about 3x the call, measured on a 70 MB tape). A smaller recording
    after them frees it."""
    held = tape.nbytes
    if held <= KEEP_TAPE_BYTES:   # (the common case: a small tape, always kept)
        tape.large_before = False
        return
    large = tape.recorded * tape.dtype.itemsize > KEEP_TAPE_BYTES
    if not (large and tape.large_before and held <= KEEP_LOOP_BYTES):   # (not a loop of large ones)
        tape.close()
    tape.large_before = large


def refuse_complex(args, nums, who):
    """Raise the TypeError for a complex argument given to compiled reverse mode (the tape holds
    real numbers) or to the Hessian of a dispatcher."""
    for i in nums:
        a = args[i]
        if type(a) is not float and np.asarray(a).dtype.kind == "c":
            raise TypeError(
                f"{who} of a Numba dispatcher: argument {i} is complex ({np.asarray(a).dtype}); "
                f"compiled {who} differentiates real inputs only. For a real function of it, pass "
                f"its real and imaginary parts as two real arguments (z = x + 1j * y inside), or "
                f"take {who} of a plain Python function on the NumPy path (JAX's convention for "
                f"complex inputs); duals.jvp of the dispatcher takes complex tangents, and "
                f"duals.jacfwd(..., holomorphic=True) differentiates a holomorphic function (a "
                f"complex output)")


class _Inputs:
    """The adjoint arrays handed to ``f`` for one layout of arguments: entry ``k`` of the
    differentiated arguments (in order) is node ``k + 1`` of ``tape``. Kept by a thread's tape
    and rewritten by each call (nodes included: the code may have stored into its inputs)."""

    def __init__(self, args, nums, tape, base, who="grad"):
        refuse_complex(args, nums, who)
        self.shapes = [_shape(args[i]) for i in nums]
        self.sizes = [_size(args[i]) for i in nums]
        self.total = total = sum(self.sizes)
        self.buf = np.zeros(max(total, 1), adjoint_dtype(base))
        self.nodes = np.arange(1, total + 1)
        self.one = _one(self.buf.dtype["scale"])
        self.pointer = tape.pointer
        self.primal = self.buf["primal"] if seeds_free(base) else self.buf["primal"]["primal"]
        self.views, offset = [], 0
        for i, n in zip(nums, self.sizes):
            self.views.append(self.buf[offset:offset + n].reshape(args[i].shape)
                              if isinstance(args[i], np.ndarray) else None)
            offset += n

    def write(self, args, nums, seeds=None):
        """The call's arguments, with the differentiated ones as adjoints holding their values."""
        buf, call, offset = self.buf, list(args), 0
        # every field, every call: the code may have stored a constant (node 0, no tape) into
        # an input, and this buffer serves the next call of any function with the same layout
        buf["node"][:self.total] = self.nodes
        buf["tape"][:self.total] = self.pointer
        buf["scale"][:self.total] = self.one
        for i, n, view in zip(nums, self.sizes, self.views):
            if view is None:
                self.primal[offset] = args[i]
                call[i] = buf[offset]
            else:
                self.primal[offset:offset + n] = args[i].reshape(-1)
                call[i] = view
            offset += n
        if seeds is not None:
            buf["primal"]["tangent"][:self.total] = seeds
        return call


def _one(dtype):
    """The constant one of a float or (nested) dual dtype: real part 1, lanes 0."""
    one = np.zeros((), dtype)
    inner = one
    while inner.dtype.names is not None:
        inner = inner["primal"]
    inner[...] = 1
    return one


def _unscaled(nodes, scales, tape):
    """Nodes that stand for the results exactly: a reference is ``scale · node``, so a result
    whose scale is not one gets a node of its own (appended to ``tape``) for its cotangent."""
    nodes = np.array(nodes, np.int64)
    scales = np.asarray(scales)
    moved = nodes != 0
    if scales.dtype.names is None:
        moved &= scales != 1.0
    if moved.any():
        nodes[moved] = _push_nodes(nodes[moved], np.ascontiguousarray(scales[moved]), tape.pointer)
        tape.check("compiled reverse mode")
    return nodes


@cached_njit()
def _push_nodes(nodes, scales, address):
    out = np.empty_like(nodes)
    for k in range(nodes.size):
        out[k] = push_scaled(nodes[k], address, scales[k])
    return out


def seeds_free(base):
    return np.dtype(base).names is None


class _Recording:
    """One run of ``f`` on adjoints: the outputs' values and nodes, and where the inputs lie.

    ``seeds`` (for a dual ``base``) holds the tangent lanes of the inputs, one row per entry.
    """

    def __init__(self, f, args, nums, who, tape, base=np.float64, seeds=None):
        layouts = getattr(tape, "layouts", None)
        if layouts is None:   # a tape of its own (vjp): arrays of its own
            inputs = _Inputs(args, nums, tape, base, who)
        else:                 # the thread's tape: arrays kept per layout
            key = (base, tuple(nums), tuple((a.shape, a.dtype.char) if type(a) is np.ndarray
                                            else type(a) for a in (args[i] for i in nums)))
            inputs = layouts.get(key)
            if inputs is None:
                if len(layouts) > 64:
                    layouts.clear()
                inputs = layouts[key] = _Inputs(args, nums, tape, base, who)
        self.shapes, self.sizes, self.total = inputs.shapes, inputs.sizes, inputs.total
        self.tape = tape
        tape.start(self.total)
        self.result = call_on_duals(f, inputs.write(args, nums, seeds), who)
        tape.check(who)

    def outputs(self, who, has_aux=False):
        """(values, nodes, treedef, aux) of the result's leaves (with ``has_aux``, of its first
        part, the second being ``aux`` as plain values); nodes 0 where a leaf is a constant."""
        result, aux = self.result, None
        if has_aux:
            result, aux = split_aux(result, who)
            aux = _strip_aux(aux)
        leaves, treedef = _leaves(result)
        values, nodes = [], []
        for y in leaves:
            if isinstance(y, AdjointScalar):
                values.append(_innermost(y.primal))
                nodes.append(np.array(y.node))
            elif type(y) is np.ndarray and is_adjoint_dtype(y.dtype):
                values.append(_innermost(y["primal"]))
                nodes.append(_unscaled(y["node"], y["scale"], self.tape))
            elif isinstance(y, (float, int, np.number, bool, np.bool_)) or (
                    type(y) is np.ndarray and y.dtype.kind in "fiub"):
                values.append(y)
                nodes.append(np.zeros(np.shape(y), np.int64))
            else:
                raise TypeError(f"{who}: the compiled function returned a {type(y).__name__}; "
                                f"return floats, arrays or tuples of them")
        return values, nodes, treedef, aux

    def sweep(self, adj):
        """Pull ``adj`` (one adjoint per node; ``(nodes, lanes)`` for lanes) back to the inputs."""
        self.tape.sweep(self.total + 1, adj)
        # (a copy: a view would keep every node's adjoint alive)
        return positive_zeros(adj[1:self.total + 1].copy())

    def split(self, flat, args, nums, lead=()):
        """Cut ``flat`` (``lead + (total,)``) into one block per argument, shaped ``lead + in.shape``."""
        return split_inputs(flat, args, nums, lead, self.shapes, self.sizes)


def split_inputs(flat, args, nums, lead=(), shapes=None, sizes=None):
    """Cut ``flat`` (``lead + (total,)``) into one block per differentiated argument, shaped
    ``lead + in.shape``, in the argument's float dtype (``shapes``, ``sizes``: the arguments')."""
    if shapes is None:
        shapes, sizes = [_shape(args[i]) for i in nums], [_size(args[i]) for i in nums]
    blocks, offset = [], 0
    for i, shape, n in zip(nums, shapes, sizes):
        part = np.ascontiguousarray(flat[..., offset:offset + n]).reshape(lead + shape)
        blocks.append(output(in_dtype(part, args[i])))
        offset += n
    return blocks


def _innermost(v):
    """The plain value under any dual layer (forward over reverse records duals)."""
    if isinstance(v, Dual):
        return _innermost(v.primal)
    if isinstance(v, np.ndarray) and v.dtype.names is not None:
        return _innermost(v["primal"])
    return v.copy() if isinstance(v, np.ndarray) else v


def _strip_aux(aux):
    leaves, treedef = tree.flatten(aux)
    out = []
    for a in leaves:
        if isinstance(a, AdjointScalar):
            a = _innermost(a.primal)
        elif type(a) is np.ndarray and a.dtype.names is not None:
            a = _innermost(a)
        out.append(output(a))
    return tree.unflatten(treedef, out)


class NotScalarOutput(TypeError):
    """The function did not return one scalar where a gradient needs one."""


def _scalar_node(values, nodes, who):
    if len(values) != 1 or np.shape(values[0]) != ():
        got = f"shape {np.shape(values[0])}" if len(values) == 1 else f"a tuple of {len(values)} values"
        raise NotScalarOutput(f"{who} requires a scalar output, got {got}; use jacrev or vjp for "
                              f"vector outputs (has_aux=True returns (value, aux))")
    return int(nodes[0]), output(values[0])


# ---------------------------------------------------------------- first order

def compiled_value_and_grad(f, argnums=0, has_aux=False):
    """compiled_value_and_grad(f, argnums=0, has_aux=False) -> function returning ``(f(x), ∇f(x))``.

    One recording and one compiled sweep, whatever the number of inputs.

    >>> import numba, math
    >>> compiled_value_and_grad(numba.njit(lambda x: math.sin(x) * x))(0.0)
    (0.0, 0.0)
    """
    f = _check_dispatcher(f, "grad")
    known = {}
    driven = {}   # layouts (as layout_key_at) whose calls a compiled driver serves

    @transformation("grad")
    def value_and_gradient(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "grad")
        if driven:   # a driver's layout: float arguments as they are, no conversions to make
            state, found = driven_entry(driven, known, args)
            if state is not None and state.driver is not None:
                check_aliases(f, args, found[0], "grad")
                done = _drive(state, _thread_tape(np.float64), "grad", args)
                if done is not None:
                    return done[0], (done[1][0] if found[1] else tuple(done[1]))
        args, nums, single = _inputs(f, args, argnums, "grad", known)
        tape = _thread_tape(np.float64)
        state = None
        if not has_aux:
            layout = layout_key_at(args, nums)
            state = hot(f, ("grad", tuple(nums)) + layout)
            if state.driver is not None:
                if len(driven) > 64:
                    driven.clear()
                driven[layout] = state
                found = _drive(state, tape, "grad", args)
                if found is not None:
                    value, grads = found
                    return value, (grads[0] if single else tuple(grads))
        try:
            rec = _Recording(f, args, nums, "grad", tape)
            values, nodes, _, aux = rec.outputs("grad", has_aux)
            node, value = _scalar_node(values, nodes, "grad")
            check_float_output(value, "grad")
            adj = untouched(tape.recorded)
            adj[node] = 1.0
            grads = rec.split(rec.sweep(adj), args, nums)
        finally:
            _release(tape)
        if state is not None and state.calls is not None:
            target, state.total = _target(f, ADJOINT), rec.total
            state.note(lambda: grad_driver(target, len(args), nums), target is not None
                       and plain_arguments(args) and isinstance(rec.result, (AdjointScalar, float)),
                       REVERSE_SAVING_S)
        g = grads[0] if single else tuple(grads)
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_gradient


def compiled_grad(f, argnums=0, has_aux=False):
    """compiled_grad(f, argnums=0, has_aux=False) -> function returning ∂f/∂x (``f`` scalar).

    >>> import numba
    >>> compiled_grad(numba.njit(lambda x, y: x * y), argnums=(0, 1))(2.0, 3.0)
    (3.0, 2.0)
    """
    vg = compiled_value_and_grad(f, argnums, has_aux)

    def gradient(*args, **kwargs):
        res, g = vg(*args, **kwargs)
        return (g, res[1]) if has_aux else g

    return gradient


@transformation("vjp", first=1)
def compiled_vjp(f, *primals, has_aux=False, only=None):
    """compiled_vjp(f, *primals, has_aux=False) -> ``(f(*primals), vjp_fn)``; with ``has_aux`` also ``aux``.

    ``vjp_fn(cotangent)`` returns one cotangent per primal (zero for an integer or boolean scalar
    or array, which passes through unchanged: an index, a count, a mask) and may be called any
    number of times: the recording is kept, on a tape of its own, until ``vjp_fn`` is dropped.
    ``only`` (for duals' own callers): the positions to differentiate; the others pass through
    unchanged with a zero cotangent (an index table).

    >>> import numba, numpy as np
    >>> y, pullback = compiled_vjp(numba.njit(lambda x, n: x * n), np.array([1.0, 2.0]), 3)
    >>> pullback(np.array([1.0, 10.0]))
    (array([ 3., 30.]), 0.0)
    """
    f = _check_dispatcher(f, "vjp")
    args = list(primals)
    nums = [i for i, a in enumerate(args) if not is_whole_number(a) and (only is None or i in only)]
    check_aliases(f, args, nums, "vjp")
    for i in nums:
        args[i] = _input(args[i], "vjp", f"primal {i}")
    tape = Tape(np.float64)
    rec = _Recording(f, args, nums, "vjp", tape)
    values, nodes, treedef, aux = rec.outputs("vjp", has_aux)
    value = _rebuild(treedef, [output(v) for v in values])

    def vjp_fn(cotangent):
        cots = [cotangent] if treedef is None else tree.flatten(cotangent)[0]
        if len(cots) != len(nodes):
            raise ValueError(f"vjp: the cotangent has {len(cots)} leaves but the output has {len(nodes)}")
        adj = untouched(tape.recorded)
        for k, (c, node) in enumerate(zip(cots, nodes)):
            c = np.asarray(c, dtype=np.float64)
            if c.shape != node.shape:
                raise ValueError(f"vjp: cotangent {k} has shape {c.shape} but the output has shape "
                                 f"{node.shape}; they must match")
            seed(adj, node, c)
        grads = iter(rec.split(rec.sweep(adj), args, nums))
        return tuple(next(grads) if i in nums else zero_cotangent(args[i]) for i in range(len(args)))

    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _drive(state, tape, who, args, cotangent=None):
    """(value, gradient blocks) by ``state``'s compiled driver on the thread's tape, or None
    when it cannot serve these arguments (the general path then does)."""
    header = tape.header
    if state.total + 1 <= header[CAPACITY]:   # tape.start, without growing the buffer
        header[COUNT], header[FAILED] = state.total + 1, 0
        tape.noted()
    else:
        tape.start(state.total)
    try:
        if cotangent is None:
            found = state.run(tape.header, tape.pointer, tape.scratch, *args)
        else:
            found = state.run(tape.header, tape.pointer, tape.scratch, cotangent, *args)
        if found is not None and found[1]:
            tape.check(who)
        tape.keep_scratch()
    finally:
        _release(tape)
    if found is None:
        return None
    return output(found[0]), [output(g) for g in found[2]]


def compiled_jacrev(f, argnums=0, has_aux=False, chunk_size=None, workers=None):
    """compiled_jacrev(f, argnums=0, has_aux=False, chunk_size=None, workers=None) -> function returning ∂f/∂x.

    One recording; the output's entries are pulled back ``chunk_size`` at a time (by default
    as many as keep the sweep's adjoints within the lane budget). Shape ``out.shape + in.shape``.
    ``workers=`` splits the output's entries into one block per worker, each recorded once
    (:mod:`duals.jit.worker_tasks`).

    >>> import numba, numpy as np
    >>> compiled_jacrev(numba.njit(lambda x: x * x[0]))(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [2.0, 1.0]]
    """
    f = _check_dispatcher(f, "jacrev")
    pool = _resolve_workers(workers, "jacrev")
    known = {}

    @transformation("jacrev")
    def jacobian(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "jacrev")
        args, nums, single = _inputs(f, args, argnums, "jacrev", known)
        if pool is not None:
            from .worker_tasks import jacrev_rows
            return jacrev_rows(pool, f, args, nums, single, has_aux, chunk_size)
        tape = _thread_tape(np.float64)
        try:
            rec, nodes, treedef, aux, flat = record_outputs(f, args, nums, "jacrev", tape, has_aux)
            rows = pull_rows(rec, flat, chunk_size)
        finally:
            _release(tape)
        jac = jacobian_blocks(rows, [n.shape for n in nodes], treedef, args, nums, single,
                              rec.shapes, rec.sizes)
        return (jac, aux) if has_aux else jac

    return jacobian


def record_outputs(f, args, nums, who, tape, has_aux):
    """One recording of ``f`` on ``tape`` -> (the recording, the output leaves' nodes, their
    treedef, aux, all output nodes in one flat array)."""
    rec = _Recording(f, args, nums, who, tape)
    _, nodes, treedef, aux = rec.outputs(who, has_aux)
    flat = np.concatenate([n.ravel() for n in nodes]) if nodes else np.zeros(0, np.int64)
    return rec, nodes, treedef, aux, flat


def seed(adj, nodes, cotangent):
    """``adj[nodes] += cotangent`` for the nonzero entries: a zero cotangent leaves its output's
    adjoint untouched, so it adds nothing even through an infinite partial (the exact 0 of an
    output the cotangent does not select)."""
    nodes, cotangent = np.ravel(nodes), np.ravel(cotangent)
    given = cotangent != 0.0
    np.add.at(adj, nodes[given], cotangent[given])


def pull_rows(rec, flat, chunk_size):
    """The Jacobian's rows for the output nodes ``flat`` of a recording: ``(flat.size, inputs)``,
    ``chunk_size`` cotangent lanes per sweep. Every lane is swept on its own, so the rows are
    the same bits whatever the lanes per sweep."""
    rows = np.empty((flat.size, rec.total))
    lanes = chunk_lanes(chunk_size, flat.size, "jacrev", size=rec.tape.recorded)
    for start in range(0, flat.size, lanes):
        count = min(lanes, flat.size - start)
        adj = untouched((rec.tape.recorded, count))
        np.add.at(adj, (flat[start:start + count], np.arange(count)), 1.0)
        rows[start:start + count] = rec.sweep(adj).T
    return rows


def jacobian_blocks(rows, out_shapes, treedef, args, nums, single, shapes=None, sizes=None):
    """The Jacobian from its rows (all outputs' entries in order): one block per output leaf and
    differentiated argument (``shapes``, ``sizes``: the arguments', when known)."""
    blocks, offset = [], 0
    for shape in out_shapes:
        size = math.prod(shape)
        part = rows[offset:offset + size].reshape(shape + (rows.shape[1],))
        offset += size
        split = split_inputs(part, args, nums, shape, shapes, sizes)
        blocks.append(split[0] if single else tuple(split))
    return _rebuild(treedef, blocks)


def _pull_state(f, args, nums):
    return hot(f, ("pull", tuple(nums)) + layout_key_at(args, nums))


def expect_pulls(f, args, nums, calls):
    """expect_pulls(f, args, nums, calls): about ``calls`` calls of :func:`pull_once` with this
    layout of arguments are coming (the adjoint solver's backward solve), so its driver is built
    at the next call when they will pay for its compilation."""
    _pull_state(f, args, nums).expect(calls, REVERSE_SAVING_S)


def pull_once(f, args, nums, cotangent):
    """pull_once(f, args, nums, cotangent) -> (value, cotangents of ``args[i]`` for ``i`` in ``nums``):
    a ``vjp`` whose one pullback is applied at once, on the calling thread's tape (no tape or
    arrays of its own: what the adjoint ODE solver calls at every step).

    >>> import numba, numpy as np
    >>> pull_once(numba.njit(lambda x, k: k * x * x), [np.array([1.0, 2.0]), 3.0], [0, 1], np.ones(2))[1]
    [array([ 6., 12.]), 5.0]
    """
    tape = _thread_tape(np.float64)
    state = _pull_state(f, args, nums)
    if state.driver is not None and type(cotangent) is np.ndarray and cotangent.dtype == np.float64:
        found = _drive(state, tape, "vjp", args, cotangent)
        if found is not None:
            return found
    try:
        rec = _Recording(f, args, nums, "vjp", tape)
        if state.calls is not None:
            target, state.total, y = _target(f, ADJOINT), rec.total, rec.result
            state.note(lambda: pull_driver(target, len(args), nums), target is not None
                       and plain_arguments(args) and type(y) is np.ndarray
                       and (is_adjoint_dtype(y.dtype) or y.dtype == np.float64), REVERSE_SAVING_S)
        values, nodes, _, _ = rec.outputs("vjp")
        adj = untouched(tape.recorded)
        node, c = nodes[0], np.asarray(cotangent, dtype=np.float64)
        if len(nodes) != 1 or c.shape != node.shape:
            raise ValueError(f"vjp: the cotangent has shape {c.shape} but the output has shape "
                             f"{node.shape if len(nodes) == 1 else len(nodes)}; they must match")
        seed(adj, node, c)
        return values[0], rec.split(rec.sweep(adj), args, nums)
    finally:
        _release(tape)
