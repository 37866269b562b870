"""Reverse-mode rules of element-wise primitives and of slicing as one pass on plain float64 arrays.

The tape's rules are written with the library's primitives so that they can be differentiated
again; on plain arrays that costs a temporary per operation of the formula (``2.0 * x``, then
``* g``, then ``+ prev``). For a first-order walk over large float64 arrays the walk asks
:data:`RULES` instead: one Numba pass (generated from :mod:`duals.derivatives` by
:func:`duals.kernels.vjp_kernel`) computes ``partial * g`` for every differentiated argument and
writes it into a buffer or adds it into the argument's running cotangent, which the walk owns
(see :mod:`duals.cotangents`). Partials ``1`` and ``-1`` (``add``, ``sub``, ``neg``) pass ``g``
on, negate it or add it in place, with no kernel. A basic slice adds its cotangent into the
slice of the running one instead of scattering it into zeros first.

A rule here has the signature ``rule(node, g, g_free, store, mask)``: ``g`` is the node's
cotangent, ``g_free`` says that the walk owns it and nothing reads it after this node (so its
buffer may hold a result), ``store`` is the walk's :class:`~duals.cotangents.Cotangents` (running
cotangents to add into, buffers), ``mask`` marks entries that are zero by structure. It returns one
``(cotangent, kind)`` per argument (``None`` where none is needed), ``kind`` being ``ADDED`` (added
into the running cotangent), ``OWNED`` (a new array nobody else holds) or ``SHARED``, or ``None`` to
decline: the primitive's own rules then run. The products are those of the rules (``partial * g``,
then ``prev + product``) in the same order, so for formulas of ``+ - * /`` the cotangents are bit for
bit the rules'. Formulas that call ``exp`` or ``log`` keep the rules on arrays: NumPy's vectorised
exp and log beat the scalar calls of a Numba loop (benchmarks K1). On 0-d values the formulas are
evaluated with Python's ``math`` (:mod:`duals._vocabulary`), as forward mode does.
"""
import re

import numpy as np

from .. import _vocabulary, derivatives, kernels
from ..core import Tracer
from .. import cotangents
from ..cotangents import ADDED, OWNED, SHARED

# below this many entries NumPy's calls through the rules cost as little, and nothing compiles
FUSED_FROM = 4096
RULES = {}           # primitive -> rule on arrays
SCALAR_RULES = {}    # primitive -> rule on 0-d float64 values

_F64 = np.dtype(np.float64)
_NUMPY_FASTER = re.compile(r"\b(exp|log)\(")
_SCALARS = (float, np.float64)
_DUMMY = np.zeros(1)
_DUMMY_MASK = np.zeros(1, dtype=bool)


def _flat(a, n):
    """A float64 operand as a 1-d array of length ``n`` or 1 (broadcast), or None if it is neither."""
    if type(a) in _SCALARS:
        return np.full(1, a)
    if type(a) is not np.ndarray or a.dtype != _F64:
        return None
    if a.size == n:
        return a.reshape(-1)
    return a.reshape(1) if a.size == 1 else None


def _flat_g(g):
    if g.flags.c_contiguous:
        return g.reshape(-1)
    if not any(g.strides):          # a broadcast scalar (the cotangent of a sum)
        return np.full(1, g.flat[0])
    return np.ascontiguousarray(g).reshape(-1)


_NUMBERS = frozenset((float, np.float64, int))


def on_scalars(name, partials):
    """on_scalars(name, partials) -> rule(node, g) for 0-d float64 values, or None.

    The rule returns the cotangent of each argument (None where none is needed), the table's
    formulas times ``g`` evaluated with Python's ``math`` on the node's own numbers (NumPy scalars
    warn where NumPy would), or None when a value is not a float64 number or ``math`` refuses it.
    """
    from .elementwise import SCALAR
    from ..float_warnings import RULE_FILE
    arity = len(partials)
    names = ("x", "y")[:arity]
    formulas = "; ".join(p for p in partials if p not in ("0.0", "1.0", "-1.0"))
    variants = []
    for code in range(1, 1 << arity):     # bit i: argument i wants a cotangent
        terms = ["None" if not code >> i & 1 or p == "0.0" else "g" if p == "1.0" else "-g"
                 if p == "-1.0" else f"({p}) * g" for i, p in enumerate(partials)]
        source = f"lambda g, {', '.join(names)}, out: ({', '.join(terms)},)"
        variants.append(eval(compile(source, f"{RULE_FILE}{formulas or partials[0]}>", "eval"),  # noqa: S307
                             SCALAR))
    variants = tuple(variants)

    def rule(node, g, _numbers=_NUMBERS):
        t = type(g)
        if t not in _numbers and not (t is np.ndarray and g.ndim == 0 and g.dtype == _F64):
            return None
        args = node.args
        code = 0
        for i, a in enumerate(args):
            t = type(a)
            if t not in _numbers and not (t is np.ndarray and a.ndim == 0 and a.dtype == _F64):
                return None
            if node.inputs[i] is not None:
                code |= 1 << i
        try:
            return variants[code - 1](g, *args, node.out)
        except _vocabulary.FALLBACK:
            return None

    return rule


def elementwise(name, partials):
    """elementwise(name, partials) -> rule for the table entry ``name`` (None if it keeps its rules).

    Large float64 arrays take the generated kernel; other plain arrays (smaller, float32, with
    lanes, or a formula NumPy computes faster) evaluate the formula with the primitives'
    implementations, the rules' very operations without their layers.
    """
    if name in derivatives.SELECTING:
        return None
    kinds = tuple("zero" if p == "0.0" else "one" if p == "1.0" else "minus" if p == "-1.0"
                  else "formula" for p in partials)
    on_arrays = not any(_NUMPY_FASTER.search(p) for p in partials)
    if on_arrays:
        kernels.VJP_NAMES.append(name)
    letters = "xy"[:len(partials)]
    from .elementwise import PLAIN, _formula
    plain = tuple(_formula(p, ("x", "y")[:len(partials)] + ("out",), PLAIN) for p in partials)

    def rule(node, g, g_free, store, mask):
        out = node.out
        if type(out) is not np.ndarray or type(g) is not np.ndarray or out.ndim == 0:
            return None
        args = node.args
        inputs = node.inputs
        wanted = [i for i, t in enumerate(inputs) if t is not None and kinds[i] != "zero"]
        for i, a in enumerate(args):
            if isinstance(a, Tracer):
                return None
            if i in wanted and getattr(a, "shape", ()) != out.shape:
                return None   # a differentiated argument that was broadcast: the rules reduce it
        if (on_arrays and out.size >= FUSED_FROM and out.dtype == _F64 and g.dtype == _F64
                and g.shape == out.shape):
            return by_kernel(node, g, g_free, store, mask, wanted)
        if mask is not None or g.shape[g.ndim - out.ndim:] != out.shape:
            return None
        results = [None] * len(args)
        sharers = [i for i in wanted if kinds[i] == "one"]
        for i in wanted:
            if kinds[i] == "minus":
                alone = g_free and len(wanted) == 1 and g.flags.writeable
                results[i] = (np.negative(g, out=g) if alone else -g, OWNED)
            elif kinds[i] == "formula":
                d = plain[i](*args, out)
                if (type(d) is np.ndarray and d.shape == g.shape and d.dtype == g.dtype == _F64
                        and g.size >= cotangents.POOL_FROM):   # into a reused buffer: no fresh pages
                    results[i] = (np.multiply(d, g, out=store.alloc(g.shape)), OWNED)
                else:
                    results[i] = (d * g, OWNED)
        for i in sharers:   # partial 1: the cotangent is g itself, owned if only one takes it
            results[i] = (g, OWNED if g_free and len(sharers) == 1 and g.flags.writeable else SHARED)
        return results

    def by_kernel(node, g, g_free, store, mask, wanted):
        out = node.out
        args = node.args
        n = out.size
        if mask is not None and any(kinds[i] != "formula" for i in wanted):
            return None
        for a in args:
            if getattr(a, "shape", ()) != out.shape and np.size(a) != 1:
                return None   # a constant broadcast along some axes only
        into = [store.accumulator(id(t), out.shape) if t is not None else False for t in node.inputs]
        results = [None] * len(args)
        formulas = [i for i in wanted if kinds[i] == "formula"]
        # g's buffer may hold one result when nothing else reads g after the kernel
        reuse = g_free and g.flags.c_contiguous and len(wanted) == len(formulas)
        if formulas:
            flats = [_flat(a, n) for a in args]
            if any(f is None for f in flats):
                return None
            gflat = _flat_g(g)
            outputs = [_DUMMY] * len(args)
            variant = ""
            for i in formulas:
                target = into[i]
                if target is not True:
                    outputs[i] = target.reshape(-1)
                    results[i] = (target, ADDED)
                    variant += letters[i] + "+"
                    continue
                if reuse:
                    buf, reuse = g, False
                else:
                    buf = store.alloc(out.shape)
                outputs[i] = buf.reshape(-1)
                results[i] = (buf, OWNED)
                variant += letters[i] + "="
            m = _DUMMY_MASK if mask is None else np.broadcast_to(mask, out.shape).reshape(-1)
            kernels.vjp_kernel(name, variant)(*flats, out.reshape(-1), gflat, *outputs, m)
        sharers = [i for i in wanted if kinds[i] != "formula" and into[i] is True]
        for i in wanted:
            if kinds[i] == "formula":
                continue
            target = into[i]
            if target is not True:
                (np.add if kinds[i] == "one" else np.subtract)(target, g, out=target)
                results[i] = (target, ADDED)
            elif kinds[i] == "minus":
                alone = g_free and len(wanted) == 1 and g.flags.writeable
                buf = g if alone else store.alloc(out.shape)
                results[i] = (np.negative(g, out=buf), OWNED)
                sharers.remove(i)
        for i in sharers:   # partial 1: the cotangent is g itself, owned if only one takes it
            results[i] = (g, OWNED if g_free and len(sharers) == 1 and g.flags.writeable else SHARED)
        return results

    return rule


def slicing(node, g, g_free, store, mask):
    """The cotangent of ``x[index]`` for a basic index: added into the slice of the running one."""
    x = node.args[0]
    index = node.params["index"]
    target = node.inputs[0]
    if (target is None or type(x) is not np.ndarray or x.dtype != _F64 or type(g) is not np.ndarray
            or g.shape != np.shape(node.out) or not _is_basic(index)):
        return None
    acc = store.accumulator(id(target), x.shape)
    if acc is not True:
        view = acc[index]
        if type(view) is np.ndarray:
            np.add(view, g, out=view)
        else:          # one entry
            acc[index] = view + g
        return [(acc, ADDED)]
    buf = store.alloc(x.shape)
    buf.fill(0.0)
    buf[index] = g
    return [(buf, OWNED)]


def _install():
    global _is_basic
    from .elementwise import PRIMITIVES
    from .shape import _is_basic, getitem_p
    for name, prim in PRIMITIVES.items():
        partials = derivatives.TABLE[name].partials
        rule = elementwise(name, partials)
        if rule is not None:
            RULES[prim] = rule
        if name not in derivatives.SELECTING:
            SCALAR_RULES[prim] = on_scalars(name, partials)
    RULES[getitem_p] = slicing


_install()
