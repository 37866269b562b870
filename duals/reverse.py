"""Reverse mode: the tape as a second interpreter of the same primitives.

Every primitive applied to a :class:`Var` of a :class:`ReverseTrace` records a
:class:`Node` holding what its VJP rules need. :func:`backward` visits the nodes that lead
to the requested outputs once each, in reverse topological order, after all their
consumers, summing the cotangents of values used on several paths.

The graph refers to nodes and leaves only, never to intermediate ``Var`` objects, so an
intermediate value is freed as soon as the user drops it and no rule needs it.
"""
import contextlib
import itertools
import math
import weakref

import numpy as np

from . import core as _core
from . import cotangents as _cotangents
from .core import Trace, Tracer, bind, changed_in_place, refuse_stale
from ._operators import ARRAY_ONLY, refuse_array_only
from .float_warnings import call_at_user_line, error_state
from .ops.fused_vjp import READS

_F64 = np.dtype(np.float64)

# operands from this size on (4 MiB of float64, where NumPy asks for huge pages) may be shells;
# smaller ones are kept: freeing them early returns memory that the walk then faults back in
# (W1 at n = 10^5: 1.4 -> 2.4 ms with shells from 4096 entries), while for large arrays the
# saving is real (W6 at 10^6: 228 -> 137 MB at peak, 144 -> 108 ms)
SHELL_FROM = 1 << 19

_no_grad_depth = 0


@contextlib.contextmanager
def no_grad():
    """no_grad(): inside this context the imperative tape records nothing.

    >>> x = Var(2.0)
    >>> with no_grad():
    ...     y = x * 3.0
    >>> y.grad_fn is None
    True
    """
    global _no_grad_depth
    _no_grad_depth += 1
    try:
        yield
    finally:
        _no_grad_depth -= 1


class ReverseTrace(Trace):
    """ReverseTrace(level, imperative=False): one tape. ``no_grad`` pauses imperative tapes only."""

    __slots__ = ("imperative", "borrowed")

    def __init__(self, level, imperative=False):
        self.level = level
        self.imperative = imperative
        self.closed = False
        # id(leaf) -> weak reference to it: leaves holding a caller's array, copied when needed
        self.borrowed = None

    def borrow(self, leaf):
        """borrow(leaf): ``leaf`` holds the caller's own array, which may change after the call.

        It is copied (:meth:`settle`) as soon as anything could keep or change its data: a
        primitive whose reverse rules read it or whose value shares its memory, an output, a
        ``.value`` view. Until then primitives record a shell of it (shape and dtype), so no
        pullback can read the caller's later changes; plain arrays are copied at once where they
        must (:func:`_changeable`); nothing else is borrowed.
        """
        if not _changeable(leaf._value):
            return
        if self.borrowed is None:
            self.borrowed = {}
        self.borrowed[id(leaf)] = weakref.ref(leaf)   # weak: a leaf refers to its trace

    def lends(self, a):
        """Whether ``a`` is a borrowed leaf of this trace."""
        ref = self.borrowed.get(id(a)) if self.borrowed else None
        return ref is not None and ref() is a

    def settle(self, leaf):
        """settle(leaf): the tape's own copy of a borrowed leaf's value from now on."""
        if self.lends(leaf):
            del self.borrowed[id(leaf)]
            leaf._value = leaf._value.copy()

    def process(self, primitive, args, params, reported=False):
        if self.closed:
            raise _core.escaped()
        # (not named ``prim``: duals.float_warnings names the step after the frame holding ``prim``,
        # and a warning of the value computed here is the primal's, as from ``bind``)
        if _core.ANOMALY is not None and not reported:  # tell detect_anomaly what runs
            return _core.ANOMALY.within("record", primitive, None, self.process, primitive, args, params, True)
        values = []
        inputs = []
        constant_array = nested = changed = False
        for a in args:
            if type(a) is Var and a._trace is self:
                v = a._value
                values.append(v)
                # a cotangent goes to the node that made the value, or to the leaf itself, which
                # also count the value's in-place changes
                target = a if a.grad_fn is None else a.grad_fn
                if target is not a:
                    target.uses += 1
                if target.exposed is not None:
                    recount(target)
                inputs.append(target)
                changed = changed or target.version != 0
                if not nested and isinstance(v, Tracer):
                    nested = True
            else:
                values.append(a)
                inputs.append(None)
                if isinstance(a, Tracer):
                    nested = True
                elif not constant_array and isinstance(a, np.ndarray):
                    constant_array = True
        lent = self._lend(primitive, args, values, inputs, nested) if self.borrowed else None
        # plain values go straight to the implementation; traced ones to the next trace
        out = bind(primitive, *values, **params) if nested or _core.ANOMALY is not None \
            else _computed(primitive, values, params)
        if lent:
            out = self._shells_of_lent(primitive, args, values, params, lent, out)
        if self.imperative and _no_grad_depth:
            return Var._new(out, None, self)  # a fresh leaf: nothing before it is recorded
        saved = out
        first = values[0] if values else None
        if ((type(out) is np.ndarray and out.size >= SHELL_FROM)
                or (type(first) is np.ndarray and first.size >= SHELL_FROM)) \
                and not nested and primitive in READS and _core.ANOMALY is None:
            # keep what the rules read; large operands they do not read become shells
            names = READS[primitive](inputs)
            values = [a if name in names else _shell(a) for a, name in zip(values, ("x", "y"))]
            if "out" not in names:
                saved = _shell(out)
        if constant_array:
            reads = None if nested or _core.ANOMALY is not None else READS.get(primitive)
            if reads is None:
                values = [_own(a) if i is None else a for a, i in zip(values, inputs)]
            else:   # only a constant that a rule reads is copied (add's rules read neither operand)
                names = reads(inputs)
                values = [_own(a) if i is None and name in names else a
                          for a, i, name in zip(values, inputs, ("x", "y"))]
        if params:
            params = _owned_params(params)
        # the versions of the traced arguments when recorded, kept only when one is not 0
        versions = [None if i is None else i.version for i in inputs] if changed else None
        return Var._new(out, Node(primitive, values, params, inputs, versions, saved), self)

    def _lend(self, primitive, args, values, inputs, nested):
        """The positions of borrowed leaves that ``primitive`` may use without a copy (no
        reverse rule reads them); every other borrowed leaf among ``args`` is settled first."""
        reads = None if nested or _core.ANOMALY is not None else READS.get(primitive)
        names = reads(inputs) if reads is not None else None
        lent, settled = [], []
        for k, a in enumerate(args):
            if type(a) is not Var or not self.lends(a):
                continue
            if names is None or k > 1 or ("x", "y")[k] in names \
                    or a._value.dtype.itemsize > _NOTHING.nbytes:   # (a shell holds 16 bytes)
                settled.append(a)
            else:
                lent.append(k)
        for a in settled:
            self.settle(a)
        if settled:   # a leaf in two places, one of them read: every place reads the copy
            for k, a in enumerate(args):
                if type(a) is Var and a._trace is self:
                    values[k] = a._value
        return [k for k in lent if self.lends(args[k])]

    def _shells_of_lent(self, primitive, args, values, params, lent, out):
        """``out`` of ``primitive`` on borrowed leaves at ``lent``: computed again from copies if it
        shares their memory (a view), else with the leaves recorded as shells."""
        if any(_shares(out, values[k]) for k in lent):
            for k in lent:
                self.settle(args[k])
                values[k] = args[k]._value
            return primitive.impl(*values, **params)
        for k in lent:
            values[k] = _shell(values[k], 0)
        return out


def _computed(primitive, values, params):
    """``primitive.impl(*values)``; a large float64 result of a ufunc in a buffer of the thread's
    pool (duals.cotangents), where the last walk left the values it freed."""
    ufunc = primitive.ufunc
    if ufunc is not None and not params:
        shape = None
        for a in values:
            if type(a) is np.ndarray:
                if a.dtype != _F64 or (shape is not None and a.shape != shape):
                    return primitive.impl(*values, **params)
                shape = a.shape
            elif type(a) is not float and type(a) is not np.float64:
                return primitive.impl(*values, **params)
        if shape and math.prod(shape) >= _cotangents.POOL_FROM:
            buf = _cotangents.take_buffer(shape)
            if buf is not None:
                return ufunc(*values, out=buf)
    return primitive.impl(*values, **params)


def _shares(out, a):
    if isinstance(out, (tuple, list)):
        return any(_shares(o, a) for o in out)
    return isinstance(out, np.ndarray) and np.may_share_memory(out, a)


_NOTHING = np.zeros(2)   # the memory of every shell: 16 zero bytes


def _shell(a, smallest=None):
    """An array's stand-in on the tape from ``smallest`` (SHELL_FROM) entries on: its shape and
    dtype, no memory (a read-only zero-stride view of zeros), for an operand that no rule reads."""
    if type(a) is not np.ndarray or a.size < (SHELL_FROM if smallest is None else smallest):
        return a
    shell = np.ndarray(a.shape, a.dtype, _NOTHING, 0, (0,) * a.ndim)
    shell.flags.writeable = False
    return shell


def _own(a):
    """The tape's own copy of a plain array operand that its owner could still change in place.

    A recorded rule reads its operands in the backward walk, so a constant that the user's
    code changes afterwards (a reused work buffer, ``c *= 0.9``) must not be read by
    reference. Read-only arrays without a writable base and NumPy scalars are kept as they
    are (a 0-d array is an array: ``buf *= 7`` changes it).
    """
    return a.copy() if _changeable(a) else a


def _owned_params(params):
    """``params`` with the tape's own copy of each array in them (an index array or a mask that
    the user's code reuses and changes, as :func:`_own` does for operands); ``params`` itself
    when none is changeable."""
    if not any(_changeable(v) or (type(v) is tuple and any(map(_changeable, v))) for v in params.values()):
        return params
    return {k: (tuple(map(_own, v)) if type(v) is tuple else _own(v)) for k, v in params.items()}


def _changeable(a):
    """Whether ``a`` is an array whose owner could change it in place (see :func:`_own`)."""
    return isinstance(a, np.ndarray) and (a.flags.writeable or a.base is not None)


TAPE = ReverseTrace(level=1, imperative=True)


_recorded = itertools.count()


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


class Node:
    """A recorded primitive application; ``name`` tells the operation (``MulBackward``)."""

    __slots__ = ("prim", "args", "params", "out", "inputs", "versions", "version", "freed",
                 "retained", "seq", "uses", "counted", "exposed", "errors", "__weakref__")

    def __init__(self, prim, args, params, inputs, versions, out):
        # the order of recording is a topological order: every input was recorded before its use
        self.seq = next(_recorded)
        self.prim = prim
        self.args = args
        self.params = params
        self.out = out
        self.inputs = inputs        # per argument: the producing Node, a leaf Var, or None
        # per argument, the version of its value when recorded; None: every one was 0
        self.versions = versions
        # how often the value ``out`` was changed in place since it was recorded (through the Var
        # holding it: Var.value or an in-place operation); a leaf Var counts its own
        self.version = 0
        self.freed = False
        self.retained = None
        self.uses = 0               # how many recorded arguments the value is (the walk's fusion)
        self.counted = False        # in a group the walk counted, whose kernel is not compiled yet
        self.exposed = None         # (value, snapshot) once .value handed out a view (see _expose)
        # NumPy's error state when recorded: the rules run under it (np.errstate around the operation)
        self.errors = error_state()
        if _core.ANOMALY is not None:
            _core.ANOMALY.record(self)

    @property
    def name(self):
        return _camel(self.prim.name) + "Backward"

    @property
    def next_functions(self):
        """The nodes (or leaf ``Var``s) this node sends cotangents to."""
        return tuple(i for i in self.inputs if i is not None)

    def __repr__(self):
        return f"<{self.name}>"

    def free(self):
        self.args = self.out = self.params = self.exposed = None
        self.freed = True


def takes_marks(target):
    """Whether the producer of a value (a node, or a leaf) uses marks of structural zeros on its
    cotangent (the walk passes them on; a group's placement into a slice does not)."""
    return type(target) is Node and (target.prim.elementwise or target.prim.unreached is not None)


# ---------------------------------------------------------------- values the user holds a view of
#
# The counter sees writes through ``.value``'s view by indexing, ``fill`` and ufuncs with
# ``out=``; NumPy has other writers (np.copyto, np.put, a.sort(), np.asarray(view)[i] = ...) that
# it cannot see. So a value handed out by ``.value`` keeps a snapshot: before it is recorded
# again, and when a walk starts, a value that differs from its snapshot counts as changed.
# Before its first ``.value`` no one but the tape holds the array, so the first snapshot shows
# what every earlier recording saw.

_EXPOSED = weakref.WeakSet()    # the holders (leaf Vars, Nodes) with a snapshot


def _expose(holder, value):
    if holder.exposed is None:     # (a later .value: the snapshot stays what was last checked)
        holder.exposed = (value, value.copy())
        _EXPOSED.add(holder)


def recount(holder):
    """Count a change of an exposed value that the counter did not see (compared with the
    snapshot, bit for bit), and take a new snapshot."""
    value, seen = holder.exposed
    if value.shape != seen.shape or not np.array_equal(
            np.ascontiguousarray(value).reshape(-1).view(np.uint8), seen.reshape(-1).view(np.uint8)):
        holder.version += 1
        holder.exposed = (value, value.copy())


def recount_exposed():
    """:func:`recount` every exposed value (a walk starts)."""
    for holder in list(_EXPOSED):
        if holder.exposed is not None:
            recount(holder)


class _VersionedArray(np.ndarray):
    """A view of a ``Var``'s value whose in-place writes bump the ``Var``'s version counter."""

    def __array_finalize__(self, obj):
        # views share the Var's memory and its counter; a copy (.copy(), astype) is the user's own
        box = getattr(obj, "_box", None)
        self._box = box if box is not None and np.may_share_memory(self, obj) else None

    def _bump(self):
        if self._box is not None:
            self._box.version += 1

    def __repr__(self):   # shown as the array it is (``y.value`` in a notebook)
        return repr(self.view(np.ndarray))

    def __setitem__(self, index, value):
        self._bump()
        super().__setitem__(index, value)

    def fill(self, value):
        self._bump()
        super().fill(value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            for o in out:
                if isinstance(o, _VersionedArray):
                    o._bump()
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _VersionedArray) else o
                                  for o in out)
        inputs = [i.view(np.ndarray) if isinstance(i, _VersionedArray) else i for i in inputs]
        return getattr(ufunc, method)(*inputs, **kwargs)


class Var(Tracer):
    """Var(value): a leaf of the imperative tape; every operation that uses it is recorded.

    >>> x = Var(3.0)
    >>> y = x * x
    >>> y.backward()
    >>> float(x.grad)
    6.0
    """

    __slots__ = ("_value", "grad_fn", "_trace", "grad", "version", "exposed", "__weakref__")

    def _outlives_transformations(self):   # a Var of the imperative tape: an object, as PyTorch's
        return self._trace.imperative

    def __getattr__(self, name):   # (only for names that are not there)
        if name in ("primal", "tangent"):
            raise AttributeError(
                f"a Var has no .{name}: a duals.Dual made inside a function under reverse mode (grad, "
                f"vjp, hessian) became part of a traced value, whose .{name} is not traced. Take the "
                f"inner derivative with duals.jvp or duals.jacfwd instead (they nest under grad)")
        if name in ARRAY_ONLY:
            refuse_array_only(self, name)
        raise AttributeError(f"'Var' object has no attribute {name!r}")

    def __init__(self, value):
        if isinstance(value, Tracer):
            raise TypeError("Var(value) takes a float or an array; use .detach() to cut a Var from its tape")
        from .validation import check_numeric_dtype
        check_numeric_dtype(value, "Var value")
        given = np.asarray(value)
        value = np.array(given, dtype=given.dtype if given.dtype.kind in "fc" else np.float64)
        self._value = value
        self.grad_fn = None
        self._trace = TAPE
        self.grad = None
        self.version = 0
        self.exposed = None
        self._family = None

    @classmethod
    def _new(cls, value, node, trace):
        v = object.__new__(cls)
        v._value = value
        v.grad_fn = node
        v._trace = trace
        v.grad = None
        v.version = 0
        v.exposed = None
        v._family = None
        return v

    def _under(self):
        return self._value

    @classmethod
    def _leaf(cls, value, trace):
        return cls._new(value, None, trace)

    @property
    def value(self):
        """The NumPy value (in-place writes to it are tracked for the safety check of ``backward``)."""
        refuse_stale((self,))
        if self._trace.borrowed:
            self._trace.settle(self)   # writes through the view must not reach the caller's array
        v = self._value
        if isinstance(v, np.ndarray):
            holder = self._holder()
            _expose(holder, v)
            view = v.view(_VersionedArray)
            view._box = holder
            return view
        return v

    @value.setter
    def value(self, new):
        """``w.value -= lr * w.grad``: the operator has already written into the view and counted
        it, so taking the same memory back is all that is left; a leaf may also be given a new value
        (same shape), written into its own array, a change recorded uses see."""
        current = self._value
        if isinstance(current, np.ndarray) and isinstance(new, np.ndarray) and new.shape == current.shape \
                and new.strides == current.strides and new.ctypes.data == current.ctypes.data:
            return   # the same memory, already written
        if self.grad_fn is not None or not self._trace.imperative:
            raise AttributeError("only a leaf Var (made by Var(...)) can be given a new value; this one "
                                 "is computed from others: make a new leaf, Var(new_value)")
        if np.shape(new) != np.shape(current):
            raise ValueError(f"Var.value: the new value has shape {np.shape(new)}, the leaf's is "
                             f"{np.shape(current)}; make a new leaf, Var(new_value)")
        if isinstance(current, np.ndarray) and current.ndim:
            self.value[...] = new    # through the counted view (a borrowed array is copied first)
        else:
            self._value = np.asarray(new, dtype=np.result_type(current))[()]
            self.version += 1

    def _holder(self):
        """What counts this value's in-place changes: the node that made it, or the leaf itself."""
        return self if self.grad_fn is None else self.grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def item(self, *args):
        """item(*args) -> a Python number, detached from the tape, as PyTorch's ``.item()``
        (inside a transformation, where the value is traced, the entry as a traced 0-d value)."""
        if self._trace.imperative and not isinstance(self._value, Tracer):
            refuse_stale((self,))
            return np.asarray(self._value).item(*args)
        return Tracer.item(self, *args)

    def backward(self, gradient=None, retain_graph=False, create_graph=False):
        """backward(gradient=None, retain_graph=False): add d(self)/d(leaf) into every leaf's ``.grad``."""
        if create_graph:
            raise NotImplementedError(
                "backward(create_graph=True): the Var tape's gradients are plain arrays, not "
                "recorded; for second derivatives use duals.hessian(f), duals.hvp(f, x, v) or "
                "nest duals.grad, with f written as a function of arrays")
        refuse_stale((self,))
        shape = np.shape(self._value)
        if gradient is None:
            if shape != () and math.prod(shape) != 1:
                raise ValueError(f"backward() without a gradient needs a scalar output, got shape "
                                 f"{shape}; pass gradient= with that shape (a vector-Jacobian product)")
            if np.result_type(self._value).kind == "c":
                raise TypeError("backward() needs a real scalar output, got a complex one; take a "
                                "real number of it (abs(y) ** 2, y.real), or pass gradient= (a "
                                "cotangent c stands for t -> Re(c t), docs/complex.md)")
            gradient = np.ones(shape, dtype=np.result_type(self._value))
        else:
            gradient = gradient._value if isinstance(gradient, Var) else gradient
            if isinstance(gradient, (list, tuple)):   # (PyTorch takes a tensor; a list is its values)
                gradient = np.asarray(gradient)
                gradient = gradient.astype(np.result_type(gradient, self._value), copy=False)
            if np.shape(gradient) != shape:
                raise ValueError(f"backward(gradient=...) got a gradient of shape {np.shape(gradient)} "
                                 f"for an output of shape {shape}; they must match")
        backward([(self, gradient)], retain_graph=retain_graph, accumulate=True)

    def zero_grad(self):
        """zero_grad(): forget the accumulated gradient."""
        self.grad = None

    def retain_grad(self):
        """retain_grad(): keep ``.grad`` on this non-leaf too after ``backward``."""
        if self.grad_fn is not None:
            self.grad_fn.retained = _weak(self)

    def copy(self, order="C"):
        """copy() -> Var: the same value, recorded as a copy (``CopyBackward``)."""
        from .ops.conversions import copy_p
        return copy_p(self)

    def detach(self):
        """detach() -> Var: the same value as a new leaf, cut from the tape."""
        return Var(self._value.copy() if isinstance(self._value, np.ndarray) else self._value)

    def __iadd__(self, other):
        return self._inplace(other, np.add)

    def __isub__(self, other):
        return self._inplace(other, np.subtract)

    def __imul__(self, other):
        return self._inplace(other, np.multiply)

    def __itruediv__(self, other):
        return self._inplace(other, np.true_divide)

    def _inplace(self, other, ufunc):
        if self._trace.imperative and _no_grad_depth:
            other = other._value if isinstance(other, Var) else other
            if isinstance(self._value, np.ndarray) and self._value.ndim:
                ufunc(self._value, other, out=self._value)
            else:
                self._value = np.asarray(ufunc(self._value, other))
            self._holder().version += 1
            return self
        if self.grad_fn is None and self._trace.imperative:
            raise RuntimeError("a leaf Var cannot be modified in place while the tape records; "
                               "update it inside `with duals.no_grad():` or write x = x + ...")
        # a recorded value cannot change: the augmented assignment rebinds the name, and other
        # names for the old value (aliases, views) become stale (duals.core.Family)
        result = {np.add: self.__add__, np.subtract: self.__sub__, np.multiply: self.__mul__,
                  np.true_divide: self.__truediv__}[ufunc](other)
        changed_in_place(self)
        return result

    def __repr__(self):
        fn = f", grad_fn={self.grad_fn!r}" if self.grad_fn is not None else ""
        return f"Var({self._value!r}{fn})"


def _weak(v):
    import weakref
    return weakref.ref(v)


def backward(seeds, retain_graph=False, accumulate=False):
    """backward([(var, cotangent), ...], retain_graph=False, accumulate=False) -> {id(leaf): cotangent}

    Walks the tape from the seeded outputs to the leaves. With ``accumulate`` the leaf
    cotangents are added into ``leaf.grad`` (the ``Var.backward`` behaviour); otherwise
    they are returned keyed by ``id(leaf)``.
    """
    if _EXPOSED:
        recount_exposed()
    if _core.ANOMALY is not None:
        return _core.ANOMALY.within("walk", None, None, call_at_user_line, _walk, seeds,
                                    retain_graph, accumulate)
    return call_at_user_line(_walk, seeds, retain_graph, accumulate)


from .walk import walk as _walk  # noqa: E402  (the walk reads Node, defined above)
