"""The backward walk of the tape (:mod:`duals.reverse`): cotangents from the outputs to the leaves.

Nodes are visited in reverse order of recording, each after every consumer, from a heap that a
node enters when it first receives a cotangent; leaves come last. A node's rules are, in order of
preference, the 0-d rules evaluated with ``math``, a group of element-wise nodes below it run as
one kernel (:mod:`duals.ops.fused_groups`), the fused rules on plain arrays
(:mod:`duals.ops.fused_vjp`), then the primitive's own rules, which pass on the marks of
structural zeros (branches not taken). Cotangents are summed and buffers reused by
:class:`duals.cotangents.Cotangents`.
"""
import heapq

import numpy as np

from . import core as _core
from . import cotangents as _cotangents
from .cotangents import OWNED, SHARED, Cotangents, Scaled
from .float_warnings import ERROR_STATE, error_state, reporting_state
from .ops import all_of_copies, is_complex, shape_of
from .ops import fused_groups
from .ops.fused_vjp import RULES, SCALAR_RULES
from .reverse import Node, takes_marks as _takes_marks


def walk(seeds, retain_graph, accumulate):
    """The walk: nodes in reverse order of recording (each after every consumer), leaves last.

    A node enters the queue when it first receives a cotangent, so branches that receive none are
    never visited.
    """
    add = _add()
    store = Cotangents(add, recycle=not retain_graph)
    values, owned = store.values, store.owned
    unreached = {}  # id(target) -> entries of its cotangent that are zero by structure
    queue = []      # (-seq, node): the latest recorded node first
    pending = {}    # id(leaf) -> leaf Var with a cotangent

    def put(target, gi, kind, z):
        t = type(gi)
        if t is not float and t is not np.float64 and t is not Scaled and (
                t is not np.ndarray or gi.dtype.kind == "c"):
            gi, kind = _on_real_line(target, gi, kind)
        key = id(target)
        if key in values:
            store.accumulate(key, gi, kind)
            if unreached:
                before = unreached.pop(key, None)
                if before is not None and z is not None:
                    unreached[key] = before & z
            return
        values[key] = gi    # the first cotangent of target: it joins the queue
        if kind is OWNED:
            owned.add(key)
        if type(target) is Node:
            heapq.heappush(queue, (-target.seq, target))
        else:
            pending[key] = target
        if z is not None:
            unreached[key] = z

    for var, g in seeds:
        put(var.grad_fn if var.grad_fn is not None else var, g, SHARED, None)
    anomaly = _core.ANOMALY
    # fused rules (duals.ops.fused_vjp); detect_anomaly checks every rule's result instead
    fused, on_scalars = (RULES, SCALAR_RULES) if anomaly is None else ({}, {})
    pool_from = _cotangents.POOL_FROM   # smaller arrays are not worth keeping for reuse
    errors = error_state()   # a node's rules run under NumPy's error state when it was recorded
    first = None   # the token of the first change of it, which restores the caller's
    reporting = {}   # a recorded state -> the same reported at the user's line
    try:
        while queue:
            node = heapq.heappop(queue)[1]
            if node.errors is not errors and node.errors is not None:
                errors = node.errors
                state = reporting.get(errors)
                if state is None:
                    state = reporting[errors] = reporting_state(errors)
                token = ERROR_STATE.set(state)
                first = token if first is None else first
            key = id(node)
            g = values.pop(key)     # store.take, written out: the loop runs once per node
            g_free = key in owned
            if g_free:
                owned.discard(key)
            mask = unreached.pop(key, None) if unreached else None
            if anomaly is not None:
                anomaly.now("cotangent", node)   # this node's VJP rules run
            if node.freed or node.version or node.versions is not None or _changed(node.inputs):
                _check(node)
            rule = fused.get(prim := node.prim)
            if type(g) is Scaled and (node.retained is not None or not getattr(rule, "scaled", False)):
                g, g_free = store.plain(g, g_free)   # a cotangent still to be multiplied: the product
            if node.retained is not None:
                owner = node.retained()
                if owner is not None:
                    mine = g if g_free or type(g) is not np.ndarray else g.copy()
                    owner.grad = mine if owner.grad is None else add(owner.grad, g)
                    g_free = False
            every = None
            if type(node.out) is not np.ndarray:   # a number: the 0-d rules, evaluated with math
                if type(g) is Scaled:
                    g, g_free = store.plain(g, g_free)
                on_numbers = on_scalars.get(prim) if mask is None else None
                cotangents = None if on_numbers is None else on_numbers(node, g)
                if cotangents is not None:
                    for target, gi in zip(node.inputs, cotangents):
                        if gi is not None:
                            put(target, gi, SHARED, None)
                    every = True
            if every is None and mask is None and anomaly is None and type(node.out) is np.ndarray \
                    and node.out.size >= pool_from:   # a group of element-wise nodes as one pass
                grouped = fused_groups.run(node, g, g_free, store, values, not retain_graph)
                if grouped is not None:
                    read = g.g if type(g) is Scaled else g
                    if g_free and all(r[1] is not read for r in grouped):
                        store.release(read)
                    for target, r, kind in grouped:
                        put(target, r, kind, None)
                    every = True
            if rule is not None and every is None and (rule.small or type(node.out) is not np.ndarray
                                                       or node.out.size >= pool_from):
                marks = None if mask is None or not mask.any() else mask
                every = rule(node, g, g_free, store, marks)
                if every is None and type(g) is Scaled:   # declined: the rule's other paths take the product
                    g, g_free = store.plain(g, g_free)
                    every = rule(node, g, g_free, store, marks)
                if every is not None:
                    read = g.g if type(g) is Scaled else g
                    if g_free and read.size >= pool_from and _unused(read, every):
                        store.release(read)   # read for the last time: its buffer serves the next nodes
                    if mask is None and prim.unreached is None:   # no structural zeros to pass on
                        for target, r in zip(node.inputs, every):
                            if r is not None:
                                put(target, r[0], r[1], None)
                        every = True
            if every is not True:
                if every is None and type(g) is Scaled:
                    g, g_free = store.plain(g, g_free)
                _by_rules(node, g, mask, every, anomaly, put)
            every = None
            if not retain_graph:
                if type(node.out) is np.ndarray and node.out.size >= pool_from:
                    store.free(node)    # its value may serve as a buffer
                else:
                    node.free()
            if type(g) is np.ndarray and g.size >= pool_from:
                store.done(g)
    finally:
        if first is not None:
            ERROR_STATE.reset(first)

    leaves = {}
    for key, leaf in pending.items():
        g, g_owned = store.take(key)
        if type(g) is Scaled:
            g = g.product()
        elif type(g) is np.ndarray and not g_owned:
            # the caller's seed, or one array that reached several leaves (through add): each
            # leaf gets its own, so that changing one gradient in place changes nothing else
            g = g.copy()
        if accumulate and is_complex(leaf._value) and not is_complex(g):
            g = _add()(g, np.zeros((), dtype=leaf._value.dtype))   # .grad of a complex leaf: complex
        elif accumulate and type(g) is np.ndarray and type(leaf._value) is np.ndarray \
                and g.dtype != leaf._value.dtype and g.dtype.kind == leaf._value.dtype.kind == "f":
            g = g.astype(leaf._value.dtype)   # .grad has the leaf's precision (float32 stays)
        if accumulate:
            leaf.grad = g if leaf.grad is None else add(leaf.grad, g)
        leaves[key] = g
    return leaves


def _on_real_line(target, g, kind):
    """A complex cotangent reaching a real value becomes its real part: for a real tangent ``t``
    the functional ``t -> Re(c t)`` is ``Re(c) t`` (JAX's convention, docs/complex.md)."""
    if not is_complex(g):
        return g, kind
    value = target.out if type(target) is Node else target._value
    if is_complex(value):
        return g, kind
    return (g.real if type(g) is np.ndarray else _real()(g)), SHARED


def _real():
    from .ops.complex_parts import real
    return real


def _changed(inputs):
    """Whether a recorded argument's value was changed in place (counts are 0 when recorded)."""
    for target in inputs:
        if target is not None and target.version:
            return True
    return False


def _unused(g, every):
    """Whether no cotangent a fused rule gave is ``g`` itself."""
    for r in every:
        if r is not None and (r[0] is g or type(r[0]) is Scaled and r[0].g is g):
            return False
    return True


def _check(node):
    """Refuse to walk a node whose saved values are gone or were changed in place."""
    if node.freed:
        raise RuntimeError(
            f"trying to walk {node.name} a second time, but its saved values were "
            f"freed by the previous backward(); pass retain_graph=True to the first "
            f"backward() call if you need to walk the graph again")
    if node.version != 0:
        raise RuntimeError(
            f"the value computed by {node.name} was modified in place after it was recorded "
            f"(through .value or an in-place operation), and the backward pass needs it; "
            f"change a copy instead (y.value.copy()), or do the update after backward()")
    versions = node.versions
    for i, target in enumerate(node.inputs):
        if target is not None:
            now = target.version   # the count of the node that made the value, or the leaf's
            if now != (0 if versions is None else versions[i]):
                raise RuntimeError(
                    f"a value saved by {node.name} for the backward pass was modified by an "
                    f"in-place operation (an in-place operator, a write into .value, or an "
                    f"assignment to .value, which writes into the same array; version {now}, expected "
                    f"{0 if versions is None else versions[i]}); compute on a copy, or do the "
                    f"update after backward()")


def _by_rules(node, g, mask, every, anomaly, put):
    """The primitive's own VJP rules for every argument that needs a cotangent (or the cotangents
    ``every`` a fused rule gave), with the marks of structural zeros passed on."""
    prim = node.prim
    if every is None and prim.vjp_all is not None:
        needed = tuple(t is not None for t in node.inputs)
        every = [(c, SHARED) for c in prim.vjp_all(g, needed, node.out, *node.args, **node.params)]
    for i, target in enumerate(node.inputs):
        if target is None:
            continue
        rule = prim.vjps.get(i)
        if rule is None and every is None:
            raise NotImplementedError(
                f"primitive {prim.name!r} has no VJP rule for argument {i}; "
                f"reverse mode cannot differentiate through it")
        kind = SHARED
        # z: the entries of this argument's cotangent that are zero by structure
        marks = prim.unreached is not None and _takes_marks(target)
        if prim.elementwise and prim.vjp_all is None:
            z = mask
            if marks:
                z = _union(z, prim.unreached(i, mask, node.out, *node.args, **node.params))
            if every is not None:
                gi, kind = every[i] or (None, SHARED)
            elif z is None:
                gi = rule(g, node.out, *node.args, **node.params)
            else:  # the masked entries may compute 0 * inf before they are zeroed
                with np.errstate(divide="ignore", invalid="ignore"):
                    gi = rule(g, node.out, *node.args, unreached=z, **node.params)
            if z is not None:
                z = _reduced(z, node.out, node.args[i]) if _takes_marks(target) else None
        else:
            if every is None and mask is not None and getattr(rule, "takes_unreached", False):
                gi = rule(g, node.out, *node.args, unreached=mask, **node.params)   # (matmul's)
            elif every is None:
                gi = rule(g, node.out, *node.args, **node.params)
            else:
                gi, kind = every[i] or (None, SHARED)
            z = prim.unreached(i, mask, node.out, *node.args, **node.params) if marks else None
        if anomaly is not None:
            anomaly.cotangent(node, i, gi)
        if gi is not None:
            put(target, gi, kind, z)


def _add():
    global _add_p
    if _add_p is None:
        from .ops.elementwise import add as _add_p
    return _add_p


_add_p = None


def _union(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def _reduced(mask, out, arg):
    """The entries of ``arg`` all of whose broadcast copies in ``out`` are marked in ``mask``."""
    return all_of_copies(mask, shape_of(out), shape_of(arg))   # (shapes only: reading a value would
    # tell a sparsity detection running this walk that its pattern was decided by values)
