"""The backward walk's cotangents: sums formed in place, and buffers reused within one walk.

A cotangent that reaches a value along several paths is a sum. :class:`Cotangents` keeps, per
target, the running sum and whether the walk *owns* it: an array the walk made itself (a fused
rule's buffer, or a sum it formed) that nothing else holds. An owned sum takes the next term in
place (``np.add(prev, g, out=prev)``, the same numbers as ``prev + g``), and a fused rule may add
its product straight into it (:mod:`duals.ops.fused_vjp`). Everything else (a seed, ``g`` passed
on by ``add``, a view made by a rule, a traced value in a nested walk) is shared and never written.

A cotangent may also travel as :class:`Scaled`: an array and a number that multiplies it, the
product not yet formed. ``100 * x`` gives ``x`` the cotangent ``100 * g``, ``a - b`` gives ``b``
``-1 * g``; the next fused rule multiplies the number in as it reads ``g`` (the rules' own
products, in their order, so the numbers are bit for bit the same), which saves a pass over the
array for every such operation. Everything else sees the product (:meth:`Cotangents.plain`).

Large temporaries would otherwise be allocated afresh for every node: glibc returns big blocks to
the kernel and page-faults them in again (what :func:`duals.tune_allocator` changes process-wide).
Within one walk this store reuses buffers instead: a node's cotangent once the node is done, and,
when the graph is freed, a node's value if nothing else refers to it any more (its reference count
says so: no ``Var``, view or other node holds it). The pool belongs to the thread and outlives the
walk, up to :data:`KEEP_BYTES`: the next gradient's buffers are then the last one's, instead of
memory that glibc may have handed back to the kernel and must fault in again (a process's history
decides that; it made Rosenbrock's gradient at n = 10⁵ 3.2 ms instead of 0.5 ms on the project's
machine). :func:`release_buffers` empties it.
"""
import sys
import threading

import numpy as np

ADDED, OWNED, SHARED = "added", "owned", "shared"
POOL_FROM = 4096        # smaller buffers are cheap to allocate; not worth keeping
_PER_SHAPE = 8
KEEP_BYTES = 32 << 20   # the most a thread's pool holds between walks
_THREAD = threading.local()
_F64 = np.dtype(np.float64)


def _count(a):
    return sys.getrefcount(a)


def _probe():
    out = np.empty(1)
    return _count(out), _probe_passed(out)


def _probe_passed(a):
    return _count(a)


# the count of an array held by one local variable (or an attribute) of the caller of _count, and
# of one its caller passed on to it, measured through the same calls that test it; on a
# free-threaded build reference counts are not exact, so nothing is recycled there
_EXCLUSIVE, _PASSED = _probe()
RECYCLE = getattr(sys, "_is_gil_enabled", lambda: True)()


class Scaled:
    """Scaled(g, scale): the cotangent ``scale * g`` for a float64 array ``g``, not yet multiplied.

    >>> Scaled(np.ones(2), -1.0).product().tolist()
    [-1.0, -1.0]
    """

    __slots__ = ("g", "scale")

    def __init__(self, g, scale):
        self.g = g
        self.scale = scale

    def product(self, into=None):
        """The array ``scale * g`` (in ``into`` when given)."""
        return np.multiply(self.scale, self.g, out=into)


def _scaled_sum(acc, g, scale):
    """``acc += scale * g`` over 1-d float64 arrays (``g`` of length 1: one number for all)."""
    sg = 1 if g.shape[0] == acc.shape[0] else 0
    for i in range(acc.shape[0]):
        acc[i] += scale * g[i * sg]


_scaled_sum_compiled = None


def add_scaled(acc, g, scale):
    """add_scaled(acc, g, scale): ``acc += scale * g`` in place, without forming the product
    (``acc`` a contiguous float64 array, ``g`` one of its shape or a broadcast number)."""
    global _scaled_sum_compiled
    if scale == 1.0:
        np.add(acc, g, out=acc)
        return
    if scale == -1.0:
        np.subtract(acc, g, out=acc)
        return
    flat = g.reshape(-1) if g.flags.c_contiguous else g.reshape(-1)[:1] if not any(g.strides) else None
    if flat is None or g.dtype != _F64 or acc.dtype != _F64:
        np.add(acc, np.multiply(scale, g), out=acc)
        return
    if _scaled_sum_compiled is None:
        from ._numba_cache import cached_njit
        _scaled_sum_compiled = cached_njit(nogil=True, error_model="numpy")(_scaled_sum)
    _scaled_sum_compiled(acc.reshape(-1), flat, float(scale))


def _poolable(a):
    if type(a) is not np.ndarray or a.base is not None or a.size < POOL_FROM or a.dtype != _F64:
        return False
    flags = a.flags
    return flags.c_contiguous and flags.writeable


def _adds_in_place(acc, term):
    """Whether ``acc + term`` has ``acc``'s shape and dtype, so that it can be formed in ``acc``
    (a plain array: an owned dual cotangent, forward over reverse, is summed by its rules)."""
    if type(acc) is not np.ndarray:
        return False
    if type(term) is np.ndarray:
        if term.shape == acc.shape and term.dtype == acc.dtype:
            return acc.ndim > 0
        shape = term.shape
    elif type(term) in (float, np.float64):
        shape = ()
    else:
        return False
    return (acc.ndim > 0 and np.broadcast_shapes(shape, acc.shape) == acc.shape
            and np.result_type(acc, term) == acc.dtype)


class _Pool(dict):
    """A thread's free buffers by shape, and their bytes."""

    __slots__ = ("nbytes",)

    def __init__(self):
        super().__init__()
        self.nbytes = 0


def _thread_pool():
    pool = getattr(_THREAD, "pool", None)
    if pool is None:
        pool = _THREAD.pool = _Pool()
    return pool


def take_buffer(shape, pool=None):
    """take_buffer(shape) -> a free float64 buffer of ``shape`` from this thread's pool (or
    ``pool``), or None."""
    if pool is None:
        pool = getattr(_THREAD, "pool", None)
    free = pool.get(shape) if pool is not None else None
    if not free:
        return None
    a = free.pop()
    pool.nbytes -= a.nbytes
    return a


def release_buffers():
    """release_buffers() -> None: let go of the buffers this thread keeps for the next gradient.

    Reverse mode on NumPy code keeps up to 32 MiB per thread of the large float64 buffers a
    backward walk freed, so that the next recording and walk compute into them instead of into
    memory the C allocator may have handed back to the kernel (faulted in again on every call).
    This drops them now; they are dropped when the thread ends anyway.

    >>> release_buffers()
    """
    _THREAD.pool = None


class Cotangents:
    """Cotangents(add, recycle): the running cotangent of every target (keyed by ``id``) of one walk."""

    __slots__ = ("values", "owned", "pool", "add", "recycle")

    def __init__(self, add, recycle):
        self.values = {}
        self.owned = set()
        self.pool = _thread_pool()
        self.add = add                  # the add primitive, for sums the walk cannot form in place
        self.recycle = recycle and RECYCLE

    def take(self, key):
        """take(key) -> (cotangent or None, owned): remove a target's cotangent to run its rules."""
        g = self.values.pop(key, None)
        if key in self.owned:
            self.owned.discard(key)
            return g, True
        return g, False

    def accumulator(self, key, shape):
        """The owned running cotangent of ``key`` if a fused rule may add into it, else True."""
        if key in self.owned:
            acc = self.values[key]
            if (type(acc) is np.ndarray and acc.shape == shape and acc.dtype == _F64
                    and acc.flags.c_contiguous):
                return acc
        return True

    def dual_accumulator(self, key, like, shape):
        """The owned running cotangent of ``key`` if it is a dual of ``like``'s trace over float64
        arrays of ``shape`` that a rule may add into (forward over reverse), else None."""
        if key not in self.owned:
            return None
        acc = self.values[key]
        if (type(acc) is not type(like) or acc._trace is not like._trace or type(acc.primal) is not np.ndarray
                or acc.primal.shape != shape or acc._tangent.shape != like._tangent.shape[:1] + shape):
            return None
        return acc

    def plain(self, g, owned):
        """plain(g, owned) -> (array, owned): a :class:`Scaled` cotangent's product, formed in its
        own array when the walk owns that (``owned``); anything else as it is."""
        if type(g) is not Scaled:
            return g, owned
        a = g.g
        if owned and a.flags.writeable and a.flags.c_contiguous:
            return g.product(a), True
        return g.product(), True

    def accumulate(self, key, term, kind):
        """Add ``term`` (``kind``: ADDED, OWNED or SHARED) into the running cotangent of ``key``."""
        if kind is ADDED:
            return
        values = self.values
        prev = values[key]
        owned = self.owned
        if type(prev) is Scaled:
            prev, mine = self.plain(prev, key in owned)
            values[key] = prev
            if mine:
                owned.add(key)
        if type(term) is Scaled:
            if key in owned and type(prev) is np.ndarray and _adds_in_place(prev, term.g) \
                    and prev.flags.c_contiguous:
                add_scaled(prev, term.g, term.scale)   # prev + scale * g, no product array
                return
            term, _ = self.plain(term, kind is OWNED)
            kind = OWNED
        if key in owned and _adds_in_place(prev, term):
            np.add(prev, term, out=prev)
            if kind is OWNED:
                self.release(term)
            return
        if kind is OWNED and type(prev) is np.ndarray and _adds_in_place(term, prev):
            np.add(prev, term, out=term)
            if key in owned:
                self.release(prev)
            values[key] = term
            owned.add(key)
            return
        total = self.add(prev, term)
        values[key] = total
        if type(total) is np.ndarray and total is not prev and total is not term:
            owned.add(key)   # a new array: NumPy's sum of two plain arrays
        else:
            owned.discard(key)

    def alloc(self, shape):
        """alloc(shape) -> an uninitialised float64 array, a reused buffer where one fits."""
        a = take_buffer(shape, self.pool)
        return np.empty(shape) if a is None else a

    def release(self, a):
        """Give back a buffer that nothing refers to any more (the caller guarantees it)."""
        if _poolable(a):
            pool = self.pool
            free = pool.setdefault(a.shape, [])
            if len(free) < _PER_SHAPE and pool.nbytes + a.nbytes <= KEEP_BYTES:
                free.append(a)
                pool.nbytes += a.nbytes

    def free(self, node):
        """Free ``node``'s saved values; its output becomes a buffer if nothing else refers to it."""
        out = node.out
        node.free()
        if self.recycle and type(out) is np.ndarray and _poolable(out) and _count(out) == _EXCLUSIVE:
            self.release(out)

    def done(self, g):
        """done(g): the walk has read the cotangent ``g`` for the last time; its buffer serves
        again if nothing else refers to it (the walk holds ``g`` in one variable and passes it)."""
        if self.recycle and type(g) is np.ndarray and _poolable(g) and _count(g) == _PASSED:
            self.release(g)
