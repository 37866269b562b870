"""Primitives, ``bind`` and the tag stack that keeps nested transformations apart.

Every differentiable operation is a :class:`Primitive`. Calling one goes through
:func:`bind`, which looks at the arguments, finds the innermost transformation among
them (the traced value whose trace has the highest level) and lets that trace
interpret the primitive. Values of outer traces are constants to inner ones, which is
what prevents perturbation confusion. Plain NumPy values reach ``prim.impl``.

Derivative rules follow two conventions used throughout the library:

* A tangent or cotangent carries *leading lane axes* in front of the shape of the value
  it belongs to (``lead = ndim(t) - ndim(x)``): forward mode pushes many directions at
  once, reverse mode pulls many cotangents at once, and nesting stacks these axes.
* ``None`` is the symbolic zero: a rule is never called for an input whose tangent or
  cotangent is zero, and a rule may return ``None`` for a zero result.
"""
import itertools

import numpy as np

__all__ = ["Primitive", "bind", "Trace", "Tracer", "REGISTRY", "new_level", "escaped"]

REGISTRY = {}
_levels = itertools.count(10)
# the checker of duals.anomaly.detect_anomaly() while it is active; None costs one lookup
ANOMALY = None


def new_level():
    """new_level() -> int: a level above every trace created so far (inner = higher)."""
    return next(_levels)


class Primitive:
    """Primitive(name, impl, *, linear=False): a named operation with derivative rules.

    ``impl(*arrays, **params)`` computes on plain NumPy values. JVP rules are registered
    per argument with :meth:`def_jvp` and VJP rules with :meth:`def_vjp`; each rule is
    written with the library's own primitives so that it is differentiable itself.

    >>> p = Primitive("twice_demo", lambda x: 2 * x)
    >>> p(3.0)
    6.0
    """

    __slots__ = ("name", "impl", "jvps", "vjps", "jvp_all", "vjp_all", "fused_jvp", "nondiff", "elementwise",
                 "unreached", "sparsity", "holomorphic", "ufunc", "viewing", "__weakref__")

    def __init__(self, name, impl, nondiff=(), registry=None):
        if registry is None:
            registry = REGISTRY
            if name in REGISTRY:
                raise ValueError(f"a primitive named {name!r} is already registered")
        self.name = name
        self.impl = impl
        self.jvps = {}
        self.vjps = {}
        self.jvp_all = None     # optional rule(tangents, out, *args) taking every tangent at once
        # optional rule(g, needed, out, *args) -> one cotangent (or None) per argument at once;
        # ``needed[i]`` says whether argument i wants one (any number of arguments, one pass)
        self.vjp_all = None
        # optional fast path on plain arrays: (primals, tangents) -> (out, tangent), or None to
        # decline (the rules then apply)
        self.fused_jvp = None
        # NumPy's ufunc that ``impl`` is on float64 arrays of one shape, which the tape's forward
        # pass may then run into a reused buffer (duals.reverse); None for anything else
        self.ufunc = None
        # positions of arguments that are never differentiated (masks, conditions)
        self.nondiff = frozenset(nondiff)
        # element k of the output depends on element k of each (broadcast) input only; the
        # VJP rules then take ``unreached=`` (see duals.reverse: branches not taken)
        self.elementwise = False
        # optional unreached(argnum, mask, out, *args, **params) -> boolean array or None: the
        # entries of that argument's cotangent that are zero by structure (a branch not taken)
        self.unreached = None
        # rule(sets, out, *args, **params) -> IndexSets of out (duals.index_sets): which inputs each
        # entry of the output depends on, from ``sets`` (one per argument, None for a constant);
        # the sparsity interpreter (duals.dependencies) runs it
        self.sparsity = None
        # complex-differentiable: the rules' linear maps are complex-linear on complex values, so
        # the primitive may run under holomorphic=True (False: abs, real, conj, real-only ops)
        self.holomorphic = True
        self.viewing = False   # its result may be a view of an argument (see views())
        registry[name] = self

    def __call__(self, *args, **params):
        # bind(): the innermost trace among the arguments interprets the primitive
        prim = self   # duals.float_warnings names the primitive at work from a local ``prim``
        top = None
        level = -1
        foreign = None
        for a in args:
            if isinstance(a, Tracer):
                if a._family is not None and a._family.changed:
                    raise RuntimeError(STALE)
                t = a._trace
                if t.level > level:
                    top = t
                    level = t.level
            elif type(a) not in _PLAIN_OPERANDS:
                foreign = a
        if top is None:
            if ANOMALY is not None:
                return ANOMALY.impl(prim, args, params)
            return prim.impl(*args, **params)
        if foreign is not None:
            _refuse_foreign(prim, foreign)
        out = top.process(prim, args, params)
        if prim.viewing and isinstance(out, Tracer):
            _link_views(out, args)
        return out

    def def_jvp(self, argnum, rule):
        """Register ``rule(tangent, out, *args, **params) -> tangent of out`` for one argument."""
        self.jvps[argnum] = rule
        return self

    def def_vjp(self, argnum, rule):
        """Register ``rule(cotangent, out, *args, **params) -> cotangent of the argument``."""
        self.vjps[argnum] = rule
        return self

    def def_sparsity(self, rule):
        """Register ``rule(sets, out, *args, **params) -> IndexSets`` (see :mod:`duals.index_sets`)."""
        self.sparsity = rule
        return self

    def __repr__(self):
        return f"<duals primitive {self.name}>"

    def __getattr__(self, name):
        # dnp.add.reduce, dnp.multiply.outer ...: NumPy's ufunc methods, which take traced values
        # (or refuse them, np.add.at, with the way out) through __array_ufunc__
        if name in UFUNC_METHODS:     # (never self.<slot> here: an unset slot would come back)
            ufunc = Primitive.ufunc.__get__(self)
            if ufunc is not None:
                return getattr(ufunc, name)
        raise AttributeError(name)


UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")


class Trace:
    """One active transformation. Its ``level`` orders it against the others (inner = higher);
    ``closed`` once the call of the transformation that made it has returned."""

    __slots__ = ("level", "closed")

    def process(self, prim, args, params):  # pragma: no cover - interface
        raise NotImplementedError


def escaped():
    """The error for a value traced by a transformation's call that is used after that call
    returned (kept in a list, a global or an attribute while the function ran): its derivative
    belonged to the finished call, and combining it with later ones would give a wrong number."""
    return RuntimeError(
        "a value traced inside an earlier call of a duals transformation (jvp, grad, jacfwd, "
        "vjp, ...) was kept (in a list, a global or an attribute) and is used after that call "
        "returned; its derivative belonged to that call. Return it from the differentiated "
        "function instead (has_aux=True returns extra values), or keep duals.stop_gradient(x) "
        "of it if only its value is wanted")


class Tracer:
    """Base class of traced values (forward ``Dual`` and reverse ``Var``).

    ``_family`` is None, or the :class:`Family` shared with the values that are one array for
    NumPy (views: ``a[0]``, ``a.T``, ``a.reshape(...)``)."""

    __slots__ = ("_family", "_square")   # _square: see duals.ops.complex_parts.square_is
    __array_priority__ = 1000

    # copy.copy / copy.deepcopy of a value of a running transformation: a traced copy, as
    # NumPy's copy of an array (a copy of the object would carry the trace's state but not the
    # recording: a silent zero derivative); pickling one is refused. A user's own Dual and an
    # imperative Var outlive any transformation and copy and pickle as objects.
    def __copy__(self):
        if self._outlives_transformations():
            return _object_copy(self, None)
        from .ops import NAMESPACE
        return NAMESPACE["copy"](self)

    def __deepcopy__(self, memo):
        if self._outlives_transformations():
            return _object_copy(self, memo)
        from .ops import NAMESPACE
        return NAMESPACE["copy"](self)

    def __reduce_ex__(self, protocol):
        if not self._outlives_transformations():
            raise TypeError("a traced value cannot be pickled: its derivative lives in the running "
                            "transformation (grad, jacfwd ...); pickle plain values, outside it")
        return object.__reduce_ex__(self, protocol)

    def _outlives_transformations(self):
        return False


def _object_copy(obj, memo):
    """A copy of the object ``obj`` by its slots (deep when ``memo`` is a dict): its trace shared,
    no family (a copy is an array of its own)."""
    import copy
    twin = object.__new__(type(obj))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name in ("__weakref__", "_square") or not hasattr(obj, name):
                continue
            value = getattr(obj, name)
            if name == "_family":
                value = None
            elif memo is not None and name not in ("_trace", "grad_fn"):
                value = copy.deepcopy(value, memo)
            setattr(twin, name, value)
    return twin


class Family:
    """The traced values that NumPy would hold as one piece of memory: a value and its views.

    A traced value cannot change in place, so ``a += b`` makes a new value and rebinds ``a``;
    ``changed`` then marks every other name for the old one (an alias, a view, the argument of a
    function that changed it in place) as stale: using one raises, where NumPy would have seen
    the change."""

    __slots__ = ("changed",)

    def __init__(self):
        self.changed = False


STALE = ("a traced value was used after it was changed in place (a += ..., a *= ...) through "
         "another name for it: a function that changes its argument in place, b = a before "
         "b += ..., or a view (row = a[0]) before either is changed. NumPy changes every name for "
         "one array; a traced value cannot change in place. Write a = a + ... and use or return "
         "the new value (h = add_bias(h, b))")


def changed_in_place(t):
    """Mark ``t`` and every view of it as stale (``t`` was changed in place: rebound to a new
    value); nothing for a number (a NumPy scalar or a float is immutable: ``s += 1`` rebinds ``s``
    in NumPy too, other names keep the old value)."""
    if not isinstance(_plain_under(t), np.ndarray):
        return
    family = t._family
    if family is None:
        family = t._family = Family()
    family.changed = True


def refuse_stale(values):
    """Raise where one of ``values`` (traced values among plain ones) is stale."""
    for v in values:
        if isinstance(v, Tracer) and v._family is not None and v._family.changed:
            raise RuntimeError(STALE)


def views(*primitives):
    """views(*primitives): mark primitives whose result may be a view of an argument (NumPy's
    basic indexing, reshape ...): their results join the argument's Family."""
    for p in primitives:
        p.viewing = True


def _plain_under(t):
    while isinstance(t, Tracer):
        t = t._under()
    return t


def _link_views(out, args):
    """Put ``out`` in the family of the argument whose memory its value shares."""
    plain = _plain_under(out)
    if type(plain) is not np.ndarray or plain.base is None:
        return
    for a in args:
        if isinstance(a, Tracer):
            under = _plain_under(a)
            if type(under) is np.ndarray and np.may_share_memory(plain, under):
                family = a._family
                if family is None:
                    family = a._family = Family()
                out._family = family
                return


# argument types a primitive takes beside traced values without a look (anything else is looked at)
_PLAIN_OPERANDS = frozenset((np.ndarray, float, int, bool, complex, np.float64, np.float32, np.int64,
                             np.bool_, np.complex128, type(None), tuple, str))


def _refuse_foreign(prim, a):
    """A scipy.sparse matrix beside a traced value in a primitive (``k * L``) is refused: its class
    would hold the traced value as an opaque scalar and the derivative would be lost. (The
    products that differentiate through a sparse matrix, ``L @ x``, take it as a parameter.)"""
    from .ops.sparse_products import is_sparse_matrix   # (ops imports core)
    if is_sparse_matrix(a):
        raise TypeError(
            f"{prim.name} of a traced value and a scipy.sparse matrix ({type(a).__name__}) is not "
            f"differentiated: SciPy's sparse classes do not carry derivatives, so the result would "
            f"be silently wrong. Apply the matrix to an array instead: k * (L @ u) for a plain "
            f"u, dnp.matmul(L, x) for a traced x (import duals.numpy as dnp), or make it dense, "
            f"L.toarray(), for a traced matrix such as I - dt * k * L (then np.linalg.solve)")


def bind(prim, *args, **params):
    """bind(prim, *args, **params): apply ``prim``, letting the innermost trace interpret it.

    The innermost transformation among the arguments (the traced value whose trace has the
    highest level) interprets the primitive; plain values reach ``prim.impl``. It is what calling
    the primitive does (:meth:`Primitive.__call__`, which holds the one copy of this logic).

    >>> from duals.core import REGISTRY
    >>> float(bind(REGISTRY["sin"], 0.0))
    0.0
    """
    return prim(*args, **params)
