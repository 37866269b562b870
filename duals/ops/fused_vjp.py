"""Reverse-mode rules of element-wise primitives and of slicing as one pass on plain float64 arrays.

The tape's rules are written with the library's primitives so that they can be differentiated
again; on plain arrays that costs a temporary per operation of the formula (``2.0 * x``, then
``* g``, then ``+ prev``). For a first-order walk over large float64 arrays the walk asks
:data:`RULES` instead: one Numba pass (generated from :mod:`duals.derivatives` by
:func:`duals.kernels.vjp_kernel`) computes ``partial * g`` for every differentiated argument and
writes it into a buffer or adds it into the argument's running cotangent, which the walk owns
(see :mod:`duals.cotangents`). Partials ``1`` and ``-1`` (``add``, ``sub``, ``neg``) and partials
that are one number (``100 * x``, ``x / 4``) pass ``g`` on with that number as a scale
(:class:`~duals.cotangents.Scaled`), which the next kernel multiplies in as it reads ``g``: no pass
of their own. A sum's cotangent, one number for all entries, stays one number through partials of
numbers. A basic slice adds its cotangent into the slice of the running one instead of scattering
it into zeros first.

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
import ast
import re

import numpy as np

from .. import _vocabulary, derivatives, kernels
from ..core import Tracer
from ..forward import Dual
from . import FUSED_FROM, every_entry, flat_cotangent, is_complex, negative_into  # noqa: F401  (tests set FUSED_FROM)
from .. import cotangents
from ..cotangents import ADDED, OWNED, SHARED, Scaled, add_scaled

RULES = {}           # primitive -> rule on arrays
SCALAR_RULES = {}    # primitive -> rule on 0-d float64 values
# primitive -> reads(inputs): the operands ("x", "y", "out") that its reverse rules read when the
# arguments with a node or leaf in ``inputs`` are differentiated; the tape keeps only those (the
# rest as shells with their shape and dtype), so a value no rule reads is freed as soon as the
# forward pass is done with it, as in f itself
READS = {}
_OPERANDS = re.compile(r"\b(x|y|out)\b")

_F64 = np.dtype(np.float64)
_NUMPY_FASTER = re.compile(r"\b(exp|log)\(")
_SCALARS = (float, np.float64)
_DUMMY = np.zeros(1)
_DUMMY_MASK = np.zeros(1, dtype=bool)
_ONE = np.ones(1)


def _flat(a, n):
    """A float64 operand as a 1-d array of length ``n`` or 1 (broadcast), or None if it is neither."""
    if type(a) in _SCALARS:
        return np.array((a,))
    if type(a) is not np.ndarray or a.dtype != _F64:
        return None
    if a.size == n:
        return a.reshape(-1)
    return a.reshape(1) if a.size == 1 else None


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


_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide",
           ast.Pow: "power", ast.Eq: "equal", ast.Lt: "less", ast.Gt: "greater", ast.LtE: "less_equal",
           ast.GtE: "greater_equal", ast.NotEq: "not_equal"}


def _reuse(t):
    """A temporary of the formula that a later operation may overwrite: a float64 array of ours."""
    return t if type(t) is np.ndarray and t.dtype == _F64 else None


def _first(alloc, shape, *operands):
    """The buffer of an operation on the arguments themselves: reused when an operand is an array."""
    for a in operands:
        if type(a) is np.ndarray:
            return alloc(shape)
    return None


def in_place(expr, argnames):
    """in_place(expr, argnames) -> f(alloc, shape, g, *args): ``expr * g`` on float64 arrays of one shape.

    The formula's NumPy operations are those of the rules, in the same order, but each one writes
    into its operand's temporary when it has one (``exp(-(x * x))``: one buffer, four passes over
    it, instead of four new arrays); the first takes a buffer from ``alloc``.
    """
    from .elementwise import PLAIN, _numpy_impl
    from ..float_warnings import RULE_FILE
    lines, names = [], iter(range(1 << 30))

    def emit(node):
        if isinstance(node, ast.Constant) or isinstance(node, ast.Name):
            return ast.unparse(node), False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return op("np.negative", [emit(node.operand)])
        if isinstance(node, ast.BinOp) and type(node.op) in _UFUNCS:
            return op(f"np.{_UFUNCS[type(node.op)]}", [emit(node.left), emit(node.right)])
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _UFUNCS:
            t = f"t{next(names)}"    # a boolean array of its own
            operands = [emit(node.left), emit(node.comparators[0])]
            lines.append(f"{t} = np.{_UFUNCS[type(node.ops[0])]}({', '.join(a for a, _ in operands)})")
            return t, False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            operands = [emit(a) for a in node.args]
            ufunc = _numpy_impl(node.func.id)
            if ufunc is not None:
                return op(f"np.{ufunc.__name__}", operands)
            t = f"t{next(names)}"    # NumPy has no ufunc for it: the primitive's implementation
            lines.append(f"{t} = _plain[{node.func.id!r}]({', '.join(a for a, _ in operands)})")
            return t, True
        raise ValueError(f"in_place: cannot evaluate {ast.unparse(node)!r} in place")

    def op(ufunc, operands):
        t = f"t{next(names)}"
        mine = [a for a, fresh in operands if fresh]
        into = f"_reuse({mine[0]})" if mine else f"_first(alloc, shape, {', '.join(a for a, _ in operands)})"
        lines.append(f"{t} = {ufunc}({', '.join(a for a, _ in operands)}, out={into})")
        return t, True

    result, fresh = emit(ast.parse(expr, mode="eval").body)
    into = f"_reuse({result}) if _reuse({result}) is not None else alloc(shape)" if fresh else "alloc(shape)"
    lines.append(f"return np.multiply({result}, g, out={into})")
    source = f"def partial_times_g(alloc, shape, g, {', '.join(argnames)}):\n" + "".join(
        f"    {line}\n" for line in lines)
    namespace = {"np": np, "_reuse": _reuse, "_first": _first, "_plain": PLAIN,
                 **derivatives.CONSTANTS}
    exec(compile(source, f"{RULE_FILE}{expr}>", "exec"), namespace)  # noqa: S102 - the table is ours
    return namespace["partial_times_g"]


def elementwise(name, partials):
    """elementwise(name, partials) -> rule for the table entry ``name`` (None if it keeps its rules).

    Large float64 arrays take the generated kernel; other large plain arrays (float32, with lanes,
    or a formula NumPy computes faster) evaluate the formula with NumPy, in place where they can;
    small arrays keep the rules, whose partials also run on the implementations directly.
    """
    if name in derivatives.SELECTING:
        return None
    real_only = name not in derivatives.HOLOMORPHIC
    # a complex value with a real operand: formulas with log take the rules, which evaluate them on
    # the complex plane (duals.ops.elementwise._on_complex_plane)
    complex_plane = not real_only and any("log(" in p for p in partials)
    kinds = tuple("zero" if p == "0.0" else "one" if p == "1.0" else "minus" if p == "-1.0"
                  else "formula" for p in partials)
    # the operands each partial reads: a partial that reads numbers only, times a cotangent that
    # is one number for all entries (a sum's), is one number too
    operand_reads = tuple(frozenset(_OPERANDS.findall(p)) for p in partials)
    on_arrays = not any(_NUMPY_FASTER.search(p) for p in partials)
    if on_arrays:
        kernels.VJP_NAMES.append(name)
    letters = "xy"[:len(partials)]
    from .elementwise import PLAIN, _formula
    argnames = ("x", "y")[:len(partials)] + ("out",)
    plain = tuple(_formula(p, argnames, PLAIN) for p in partials)
    into = tuple(in_place(p, argnames) if k == "formula" else None for p, k in zip(partials, kinds))

    def rule(node, g, g_free, store, mask):
        out = node.out
        scale = 1.0
        if type(g) is Scaled:     # the cotangent scale * g: the kernels multiply it in as they read
            g, scale = g.g, g.scale
        if type(out) is not np.ndarray or type(g) is not np.ndarray or out.size < cotangents.POOL_FROM:
            return None   # small: the rules (with the implementations, duals.ops.elementwise) cost less
        if complex_plane and out.dtype.kind == "c":
            return None
        args = node.args
        inputs = node.inputs
        wanted = [i for i, t in enumerate(inputs) if t is not None and kinds[i] != "zero"]
        for i, a in enumerate(args):
            if isinstance(a, Tracer) or (real_only and is_complex(a)):
                return None   # nested, or complex values for a real-only rule (which refuses them)
            if i in wanted and getattr(a, "shape", ()) != out.shape:
                return None   # a differentiated argument that was broadcast: the rules reduce it
        if (on_arrays and out.size >= FUSED_FROM and out.dtype == _F64 and g.dtype == _F64
                and g.shape == out.shape):
            return by_kernel(node, g, scale, g_free, store, mask, wanted)
        if scale != 1.0 or mask is not None or g.shape[g.ndim - out.ndim:] != out.shape:
            return None   # (a scaled cotangent: the walk forms the product and asks again)
        results = [None] * len(args)
        sharers = [i for i in wanted if kinds[i] == "one"]
        for i in wanted:
            if kinds[i] == "minus":
                alone = g_free and len(wanted) == 1 and g.flags.writeable
                results[i] = (negative_into(g, g) if alone else -g, OWNED)
            elif kinds[i] == "formula":
                if (g.dtype == out.dtype == _F64 and g.shape == out.shape
                        and all(_plain_operand(a, g) for a in args)):
                    # large: the formula in place, in buffers the walk reuses
                    results[i] = (into[i](store.alloc, g.shape, g, *args, out), OWNED)
                else:
                    results[i] = (plain[i](*args, out) * g, OWNED)
        for i in sharers:   # partial 1: the cotangent is g itself, owned if only one takes it
            results[i] = (g, OWNED if g_free and len(sharers) == 1 and g.flags.writeable else SHARED)
        return results

    def by_kernel(node, g, scale, g_free, store, mask, wanted):
        """The cotangents of ``scale * g`` for float64 arrays: one kernel pass for the formulas;
        partials 1 and -1, and formulas of numbers only, hand ``g`` on with a scale."""
        out = node.out
        args = node.args
        n = out.size
        if mask is not None and any(kinds[i] != "formula" for i in wanted):
            return None
        for a in args:
            if type(a) is np.ndarray:
                if a.shape != out.shape and a.size != 1:
                    return None   # a constant broadcast along some axes only
            elif type(a) not in _NUMBERS and np.size(a) != 1:
                return None
        formulas = [i for i in wanted if kinds[i] == "formula"]
        flats = None
        if formulas:
            flats = [_flat(a, n) for a in args]
            if any(f is None for f in flats):
                return None
        into = [store.accumulator(id(t), out.shape) if t is not None else False for t in node.inputs]
        if mask is None and not any(g.strides):   # one number for all entries (a sum's cotangent)
            if all(_reads_numbers(operand_reads[i], flats) for i in formulas):
                if scale != 1.0:
                    g = every_entry(scale * g.flat[0], g.shape)
                return uniform(node, g, flats, into, wanted, formulas)
        elif mask is None and scale == 1.0 and formulas and all(
                _reads_numbers(operand_reads[i], flats) for i in formulas):
            return scaled(node, g, g_free, flats, into, wanted, formulas)
        results = [None] * len(args)
        # g's buffer may hold one result when nothing else reads g after the kernel
        reuse = g_free and g.flags.c_contiguous and len(wanted) == len(formulas)
        if formulas:
            gflat = flat_cotangent(g)
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
            kernels.vjp_kernel(name, variant)(*flats, out.reshape(-1), gflat, *outputs, scale, m)
        # partials 1 and -1: g itself with its scale (negated), no pass over it
        passed = [i for i in wanted if kinds[i] != "formula" and into[i] is True]
        alone = g_free and len(passed) == 1 and g.flags.writeable
        for i in wanted:
            if kinds[i] == "formula":
                continue
            s = scale if kinds[i] == "one" else -scale
            target = into[i]
            if target is not True:
                add_scaled(target, g, s)
                results[i] = (target, ADDED)
            else:
                results[i] = (g if s == 1.0 else Scaled(g, s), OWNED if alone else SHARED)
        return results

    def scaled(node, g, g_free, flats, into, wanted, formulas):
        """The cotangents when every partial is one number ``p`` (``100 * x``, ``x / 2``): ``g``
        handed on with the scale ``p``, the product left to the next rule."""
        numbers = on_one_entry(node, flats, formulas, _ONE)    # partial * 1: the partials
        results = [None] * len(node.args)
        handed = [i for i in wanted if into[i] is True]
        alone = g_free and len(handed) == 1 and g.flags.writeable
        for i in wanted:
            kind = kinds[i]
            p = numbers[i][0] if kind == "formula" else 1.0 if kind == "one" else -1.0
            target = into[i]
            if target is not True:
                add_scaled(target, g, p)
                results[i] = (target, ADDED)
            else:
                results[i] = (g if kind == "one" else Scaled(g, p), OWNED if alone else SHARED)
        return results

    def on_one_entry(node, flats, formulas, g):
        """The kernel on the first entry only, ``g`` a one-entry array: per argument, its
        product ``partial * g`` as a one-entry array (a formula's) or a dummy."""
        outputs = [_DUMMY] * len(node.args)
        if formulas:
            for i in formulas:
                outputs[i] = np.empty(1)
            kernels.vjp_kernel(name, "".join(letters[i] + "=" for i in formulas))(
                *[f if f is not None else _DUMMY for f in flats], node.out.reshape(-1)[:1], g,
                *outputs, 1.0, _DUMMY_MASK)
        return outputs

    def uniform(node, g, flats, into, wanted, formulas):
        """The cotangents when ``g`` and every operand a partial reads are one number for all
        entries: the kernel runs on that one entry, and its result stands for every entry as a
        read-only broadcast (added into a running cotangent where the walk owns one)."""
        out = node.out
        results = [None] * len(node.args)
        outputs = on_one_entry(node, flats, formulas, flat_cotangent(g))
        for i in wanted:
            kind = kinds[i]
            value = outputs[i] if kind == "formula" else g if kind == "one" else None
            target = into[i]
            if target is not True:
                (np.subtract if value is None else np.add)(target, g if value is None else value,
                                                           out=target)
                results[i] = (target, ADDED)
            elif kind == "one":
                results[i] = (g, SHARED)
            else:
                results[i] = (every_entry(-g.flat[0] if value is None else value, out.shape), SHARED)
        return results

    rule.scaled = True   # takes a Scaled cotangent (declining, without side effects, where it cannot)
    rule.small = False   # arrays below cotangents.POOL_FROM entries keep the rules
    return rule


def _reads_numbers(names, flats):
    """Whether a partial reading operands ``names`` is one number: it reads no ``out`` and only
    operands that are one number (flat length 1)."""
    for v in names:
        if v == "out":
            return False
        f = flats["xy".index(v)]
        if f is None or f.shape[0] != 1:
            return False
    return True


def _plain_operand(a, g):
    """An operand that the in-place formula may meet: a number, or a float64 array shaped like ``g``."""
    if type(a) is np.ndarray:
        return a.dtype == _F64 and (a.shape == g.shape or a.ndim == 0)
    return type(a) in _NUMBERS


def slicing(node, g, g_free, store, mask):
    """The cotangent of ``x[index]`` for a basic index: added into the slice of the running one
    (``scale * g`` for a :class:`~duals.cotangents.Scaled` one, the product formed there)."""
    x = node.args[0]
    index = node.params["index"]
    target = node.inputs[0]
    if type(g) is Dual:
        return None if target is None or not _is_basic(index) else _slicing_duals(node, g, store)
    scale = 1.0
    if type(g) is Scaled:
        g, scale = g.g, g.scale
    if (target is None or type(x) is not np.ndarray or x.dtype != _F64 or type(g) is not np.ndarray
            or g.dtype != _F64 or g.shape != np.shape(node.out) or not _is_basic(index)):
        return None
    acc = store.accumulator(id(target), x.shape)
    if acc is not True:
        view = acc[index]
        if type(view) is not np.ndarray:        # one entry
            acc[index] = view + (g if scale == 1.0 else scale * g)
        elif scale == 1.0 or not view.flags.c_contiguous:
            np.add(view, g if scale == 1.0 else np.multiply(scale, g), out=view)
        else:
            add_scaled(view, g, scale)
        return [(acc, ADDED)]
    buf = store.alloc(x.shape)
    zero_outside(buf, index)
    view = buf[index]
    if scale == 1.0 or type(view) is not np.ndarray:
        buf[index] = g if scale == 1.0 else scale * g
    else:
        np.multiply(scale, g, out=view)
    return [(buf, OWNED)]


slicing.scaled = True
slicing.small = True


def _plain_shape(a):
    """The shape of a float64 array or of a dual of one (None for anything else)."""
    if type(a) is Dual:
        a = a.primal
    return a.shape if type(a) is np.ndarray and a.dtype == _F64 else None


def _slicing_duals(node, g, store):
    """:func:`slicing` when the walk runs under forward mode (``hvp``: forward over reverse) and
    the cotangent is a dual of plain float64 arrays: both parts are added into the slices of a
    running dual cotangent that the walk owns, instead of two scatters into zeros and a sum."""
    shape, out_shape = _plain_shape(node.args[0]), _plain_shape(node.out)
    target = node.inputs[0]
    p, t = g.primal, g._tangent
    if (shape is None or out_shape is None or type(p) is not np.ndarray or type(t) is not np.ndarray
            or p.dtype != _F64 or t.dtype != _F64 or t.shape[1:] != p.shape
            or p.shape[p.ndim - len(out_shape):] != out_shape):
        return None
    lead = p.ndim - len(out_shape)   # the rows of jacrev (hessian): one cotangent each
    index = (slice(None),) * lead + node.params["index"]
    shape = p.shape[:lead] + shape
    lanes = (slice(None),) + index
    acc = store.dual_accumulator(id(target), g, shape)
    if acc is not None:
        for whole, where, part in ((acc.primal, index, p), (acc._tangent, lanes, t)):
            view = whole[where]
            if type(view) is np.ndarray:
                np.add(view, part, out=view)
            else:   # one entry
                whole[where] = view + part
        return [(acc, ADDED)]
    primal, tangent = store.alloc(shape), np.empty(t.shape[:1] + shape)
    for whole, where, part in ((primal, index, p), (tangent, lanes, t)):
        zero_outside(whole, where)
        whole[where] = part
    return [(Dual._new(primal, tangent, g._trace), OWNED)]


def operands_read(partials):
    """operands_read(partials) -> per partial formula of the table, the operands it reads.

    >>> operands_read(("y", "1.0"))
    (frozenset({'y'}), frozenset())
    """
    return tuple(frozenset(_OPERANDS.findall(p)) for p in partials)


def _reads(partials):
    names = operands_read(partials)

    def reads(inputs):
        if len(inputs) == 1:
            return names[0] if inputs[0] is not None else frozenset()
        x, y = inputs
        return names[0] | names[1] if x is not None and y is not None else names[0] if x is not None \
            else names[1]
    return reads


def _shapes_only(inputs):
    return frozenset()


def _install():
    global _is_basic, zero_outside
    from .elementwise import PRIMITIVES
    from .reductions import cumsum_p, sum_p
    from .shape import _is_basic, broadcast_p, getitem_p, reshape_p, transpose_p, zero_outside
    for prim in (getitem_p, sum_p, cumsum_p, reshape_p, broadcast_p, transpose_p):
        READS[prim] = _shapes_only     # their rules need the shapes of the operands only
    for name, prim in PRIMITIVES.items():
        partials = derivatives.TABLE[name].partials
        rule = elementwise(name, partials)
        if rule is not None:
            RULES[prim] = rule
        if name not in derivatives.SELECTING:
            SCALAR_RULES[prim] = on_scalars(name, partials)
            READS[prim] = _reads(partials)
    RULES[getitem_p] = slicing


_install()
