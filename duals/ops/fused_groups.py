"""Groups of element-wise reverse rules run as one generated pass (the walk's fusion).

The walk runs a node's reverse rule as one kernel (:mod:`duals.ops.fused_vjp`), which writes the
cotangent of each argument into an array that the next node's kernel reads again. For a chain of
element-wise operations on large float64 arrays (``100 * (x1 - x0**2)**2 + (1 - x0)**2``) those
intermediate cotangents are passes over memory that nothing else needs. Here, when the walk takes
such a node, :func:`run` gathers the *group* below it: the element-wise nodes whose every recorded
use lies inside the group (so their cotangent comes from it alone) and that received nothing from
anywhere else. One kernel, generated from the table's partial formulas for the group's structure,
then carries the cotangent through the whole group in registers, entry by entry, and writes (or
adds into a running cotangent the walk owns) the cotangent of each value entering the group.

The kernel computes what the nodes' own kernels would (the same partial formulas of the same saved
operands, the same products), only without the arrays in between; sums of several contributions
may round in another order. A structure is compiled (and cached on disk, like every kernel) once
the walk has met it :data:`FUSE_AFTER` times and carried :data:`FUSE_ENTRIES` entries through it,
so a gradient taken a few times compiles nothing and one taken in a loop is fused after its
first calls. Groups stop at anything else: nodes whose partials call ``exp`` or ``log`` (NumPy's vectorised
calls are faster than a Numba loop's), broadcasting, non-float64 values, parameters, structural
zeros, values changed in place, retained gradients, and values seeded as outputs.

>>> import numpy as np, duals
>>> f = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
>>> x = np.linspace(-1.0, 1.0, 5000)
>>> g = duals.grad(f)    # in a loop of calls, the sum's whole chain becomes one group
>>> bool(np.allclose(g(x), duals.jacfwd(f)(x)))
True
"""
import heapq
import threading

import numpy as np

from .. import derivatives, kernels
from ..cotangents import ADDED, OWNED, Scaled
from . import FUSED_FROM, flat_cotangent
from .fused_vjp import operands_read

# A structure's kernel is compiled (~0.4 s, then cached on disk) once the walk has met it
# FUSE_AFTER times and carried FUSE_ENTRIES entries through it: a gradient taken a few times
# compiles nothing, one taken in a loop is fused after its first calls (20 at 10⁵ entries).
FUSE_AFTER = 2
FUSE_ENTRIES = 2_000_000
MOST_NODES = 32      # a group's size, which bounds the generated kernel's
MOST_STRUCTURES = 4096   # structures counted at once
ENABLED = True       # tests compare against the walk without groups

_F64 = np.dtype(np.float64)
_NUMBERS = (float, np.float64, int)
_PARTIALS = {}       # primitive -> the table's partial formulas (entries with first-order kernels)
_READS = {}          # primitive -> per partial, the operands it reads ("out", "x", "y")
_SEEN = {}           # structure -> how often met, then its compiled kernel
_COMPILING = threading.Lock()


def _import_reverse():
    global Node, takes_marks
    from ..reverse import Node, takes_marks


# duals.reverse.Node and takes_marks, set on first use (reverse imports the walk, which imports this)
Node = takes_marks = None


def run(root, g, g_free, store, values, recycle):
    """run(root, g, g_free, store, values, recycle) -> [(target, cotangent, kind)] or None.

    The cotangents of the values entering the group below ``root`` (whose cotangent is ``g``,
    plain or :class:`~duals.cotangents.Scaled`), or None where no group of two nodes or more
    forms, or its kernel is not compiled yet. ``values`` holds the walk's running cotangents
    (a node with one was seeded, and stays out of the group); the group's inner nodes are freed
    when ``recycle`` (the walk keeps no graph).
    """
    scale = 1.0
    if type(g) is Scaled:
        g, scale = g.g, g.scale
    out = root.out
    if (not ENABLED or root.counted or type(g) is not np.ndarray or type(out) is not np.ndarray
            or out.size < FUSED_FROM or g.dtype != _F64 or g.shape != out.shape or not _joins(root, out.shape)):
        return None
    if Node is None:
        _import_reverse()
    members, uses = _group(root, out.shape, values)
    if len(members) < 2:
        return None
    plan = _Plan(members, uses, store, values)
    kernel = _kernel_for(plan.key, out.size)
    if kernel is None:   # counted: its nodes take their own rules, and form no smaller groups
        for node in members:
            node.counted = True
        return None
    gflat = flat_cotangent(g)
    reusable = g_free and g.flags.c_contiguous and g.flags.writeable and all(g.strides)
    results, outputs = plan.outputs(store, g if reusable else None)
    kernel(gflat, scale, *plan.streams, *outputs)
    if recycle:
        for node in plan.done:
            store.free(node)
    return results


def _joins(node, shape):
    """Whether ``node`` is an element-wise node of float64 arrays of ``shape`` a kernel can read."""
    if node.prim not in _PARTIALS or node.params or node.prim.unreached is not None:
        return False
    out = node.out
    if type(out) is not np.ndarray or out.dtype != _F64 or out.shape != shape:
        return False
    for a, target in zip(node.args, node.inputs):
        if type(a) is np.ndarray:
            if a.dtype != _F64 or a.shape != shape:
                return False
        elif target is not None or type(a) not in _NUMBERS:
            return False    # a differentiated number was broadcast: its cotangent is a sum
    return True


def _group(root, shape, values):
    """The root, then (latest recorded first) every node whose uses all lie in the group; and
    the uses by the group of every node it reads (id -> count)."""
    members = [root]
    uses = {}      # id(node) -> its uses by members so far
    queue = []

    def enter(node):
        for target in node.inputs:
            if type(target) is Node:
                key = id(target)
                if key in uses:
                    uses[key] += 1
                else:
                    uses[key] = 1
                    heapq.heappush(queue, (-target.seq, target))

    enter(root)
    while queue and len(members) < MOST_NODES:
        node = heapq.heappop(queue)[1]
        # every consumer recorded after ``node`` has been decided: its count is final here
        if (uses[id(node)] == node.uses and id(node) not in values and _untouched(node)
                and _joins(node, shape)):
            members.append(node)
            enter(node)
    return members, uses


def _untouched(node):
    """Whether the walk may run ``node``'s rules inside a group: no retained gradient, its saved
    values there and unchanged (else the walk takes it alone, and refuses it as it should)."""
    if node.retained is not None or node.freed or node.version or node.versions is not None:
        return False
    for target in node.inputs:
        if target is not None and target.version:
            return False
    return True


class _Plan:
    """What a group's kernel reads and where its results go, and the structure that names it.

    A value entering the group gets an output of the group's shape: its running cotangent where
    the walk owns one (added into), else a new buffer. Unit-step slices of a 1-D value (``x[1:]``,
    ``x[:-1]``) whose uses all lie in the group share one output per slice, written straight into
    that slice of the sliced value's cotangent (one slice per value: slices of one array may
    overlap, and a loop writing overlapping arrays does not vectorise); their slicing nodes are
    done with the group.
    """

    __slots__ = ("key", "streams", "outputs_to", "shape", "done")

    def __init__(self, members, uses, store, values):
        index = {id(m): k for k, m in enumerate(members)}
        self.shape = members[0].out.shape
        self.done = members[1:]     # nodes whose rules the kernel runs, besides the root
        self.streams = []
        self.outputs_to = []        # per output: [target, ...] sharing it, then where it goes
        stream_of = {}              # id(value) -> its position among the streams
        boundary = {}               # a target's (or a slice's) key -> its output's position
        slices = {}                 # id(target) -> its slice's key, or None
        described = []
        for node in members:
            prim = node.prim
            partials = _PARTIALS[prim]
            wires = []
            reads = set()
            for target, partial, names in zip(node.inputs, partials, _READS[prim]):
                if target is None or partial == "0.0":
                    wires.append(None)
                    continue
                reads.update(names)
                inner = index.get(id(target))
                if inner is not None:
                    wires.append(("a", inner))
                    continue
                key = slices[id(target)] = _slice_of(target, uses, values)
                if key is None:
                    key = id(target)
                position = boundary.get(key)
                if position is None:
                    position = boundary[key] = len(self.outputs_to)
                    self.outputs_to.append([target])
                elif target not in self.outputs_to[position]:
                    self.outputs_to[position].append(target)
                wires.append(("b", position))
            loads = []
            for name in sorted(reads):
                value = node.out if name == "out" else node.args["xy".index(name)]
                position = stream_of.get(id(value))
                if position is None:
                    position = stream_of[id(value)] = len(self.streams)
                    self.streams.append(float(value) if type(value) is not np.ndarray
                                        else value.reshape(-1))
                loads.append((name, position))
            described.append((partials, tuple(wires), tuple(loads)))
        adds = []
        placed = set()
        for targets in self.outputs_to:
            first = targets[0]
            key = slices[id(first)]
            if key is not None and key[1] not in placed:   # into the slice
                placed.add(key[1])
                sliced = first.inputs[0]
                acc = store.accumulator(id(sliced), first.args[0].shape)
                targets.append(("slice", sliced, first.params["index"], acc, first.args[0].shape))
                self.done.extend(targets[:-1])
            else:
                acc = store.accumulator(id(first), self.shape)
                targets.append(("whole", first, None, acc, self.shape))
                self.done.extend(targets[1:-1])   # the other slicing nodes of the same slice
            adds.append(acc is not True)
        self.key = (tuple(described), tuple(type(s) is float for s in self.streams), tuple(adds))

    def outputs(self, store, reusable):
        """The results to put and the flat arrays the kernel writes (``reusable``, the root's
        cotangent, may hold the first new buffer of the group's shape)."""
        results, flat = [], []
        for targets in self.outputs_to:
            how, target, index, acc, shape = targets[-1]
            if acc is not True:
                results.append((target, acc, ADDED))
            elif how == "slice":    # the slice written, the entries outside zeroed
                acc = store.alloc(shape)
                zero_outside(acc, index)
                results.append((target, acc, OWNED))
            else:
                if reusable is not None:
                    acc, reusable = reusable, None
                else:
                    acc = store.alloc(shape)
                results.append((target, acc, OWNED))
            flat.append(acc[index] if how == "slice" else acc.reshape(-1))
        return results, flat


def _slice_of(target, uses, values):
    """``("slice", id(sliced value), start, stop)`` when ``target`` is a unit-step slice of a
    1-D float64 value that the group may write into the sliced value's cotangent (every use of
    it lies in the group, and nothing else needs the slicing node), else None."""
    if (type(target) is not Node or target.prim is not _getitem or uses.get(id(target)) != target.uses
            or id(target) in values or not _untouched(target)):
        return None
    sliced, source = target.inputs[0], target.args[0]
    index = target.params["index"]
    if (sliced is None or sliced.version or type(source) is not np.ndarray or source.ndim != 1
            or source.dtype != _F64 or len(index) != 1 or type(index[0]) is not slice
            or index[0].step not in (None, 1) or takes_marks(sliced)):
        return None
    start, stop, _ = index[0].indices(source.shape[0])
    return ("slice", id(sliced), start, stop)


def _kernel_for(key, size):
    """The compiled kernel of a structure met with arrays of ``size`` entries, or None while it
    has been met fewer than :data:`FUSE_AFTER` times or with fewer than :data:`FUSE_ENTRIES`."""
    met = _SEEN.get(key, (0, 0))
    if type(met) is not tuple:
        return met
    times, entries = met[0] + 1, met[1] + size
    if times < FUSE_AFTER or entries < FUSE_ENTRIES:
        if len(_SEEN) >= MOST_STRUCTURES and key not in _SEEN:   # forget the counts, keep the kernels
            for counted in [k for k, v in _SEEN.items() if type(v) is tuple]:
                del _SEEN[counted]
        _SEEN[key] = (times, entries)
        return None
    with _COMPILING:
        found = _SEEN.get(key)
        if found is None or type(found) is tuple:
            found = _SEEN[key] = kernels.load_generated("duals_fused_group", generate_source(key)).fused
    return found


def generate_source(key):
    """generate_source(key) -> the Python source of the kernel of the group structure ``key``.

    Per entry: ``a0`` is the root's cotangent; each node in turn (every consumer before what
    it consumes) adds ``partial * a_k`` into the cotangent of each argument, a register for a node
    of the group (``a``) or for a value entering it (``b``), which is then written or added into
    its output array.
    """
    described, numbers, adds = key
    body = []
    assigned = set()
    for k, (partials, wires, loads) in enumerate(described):
        if f"a{k}" not in assigned and k:
            body.append(f"a{k} = 0.0")   # every use of it has a zero partial
        assigned.add(f"a{k}")
        for name, position in loads:
            body.append(f"{name} = s{position}" + ("" if numbers[position] else "[i]"))
        for partial, wire in zip(partials, wires):
            if wire is None:
                continue
            register = f"{wire[0]}{wire[1]}"
            body.append(f"{register} {'+=' if register in assigned else '='} ({partial}) * a{k}")
            assigned.add(register)
    for position, add in enumerate(adds):
        body.append(f"o{position}[i] {'+=' if add else '='} b{position}")
    streams = "".join(f", s{p}" for p in range(len(numbers)))
    outputs = "".join(f", o{p}" for p in range(len(adds)))
    pad = "\n" + " " * 12
    return (kernels._HEADER + f"# vocabulary {kernels._vocabulary_digest()}\n" + f"""
@_kernel
def fused(gs, scale{streams}{outputs}):
    n = o0.shape[0]
    if gs.shape[0] == n:
        for i in range(n):
            a0 = scale * gs[i]{pad}{pad.join(body)}
    else:
        g = scale * gs[0]   # one cotangent for all entries (a sum's): in a register
        for i in range(n):
            a0 = g{pad}{pad.join(body)}
""")


def _install():
    """The element-wise primitives whose reverse rules may join a group: the table's entries with a
    first-order kernel (:data:`duals.kernels.VJP_NAMES`)."""
    global _getitem, zero_outside
    from .elementwise import PRIMITIVES
    from .shape import getitem_p as _getitem, zero_outside
    for name in kernels.VJP_NAMES:
        prim = PRIMITIVES.get(name)
        if prim is not None:
            _PARTIALS[prim] = derivatives.TABLE[name].partials
            _READS[prim] = operands_read(_PARTIALS[prim])


_install()
