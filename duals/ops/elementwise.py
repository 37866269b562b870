"""Element-wise primitives, generated from the derivative table, plus ``where`` and ``clip``
(``power`` and ``sinc`` are in :mod:`duals.ops.powers`).

For each line of :mod:`duals.derivatives` this module makes a primitive whose

* ``impl`` is NumPy's ufunc of the same name (or the generated value kernel),
* JVP and VJP rules evaluate the table's formula with the library's own primitives,
* ``fused_jvp`` runs the generated Numba kernel when everything is a plain array of at least
  :data:`~duals.ops.FUSED_FROM` values and tangent entries (below, NumPy's calls through the rules
  are a few microseconds slower a call, and nothing compiles: a kernel's specialisation costs
  about a second, and a 10-variable Hessian's first call compiled nine).
"""
import math

import numpy as np

from .. import _vocabulary, derivatives, kernels
from ..float_warnings import RULE_FILE
from ..core import Primitive, Tracer
from ..index_sets import UnlessConstantZero, elementwise_rule, gather_rule
from . import (FUSED_FROM, dtype_of, every_entry, export, innermost, is_complex, lead_of,
               ndim_of as ndim, one_number, shape_of as shape)
from . import dual_vjp
from .reductions import unbroadcast
from .shape import broadcast_to, reshape

# the formula vocabulary, spelled with primitives; filled in at the bottom of this module
TRACED = dict(derivatives.CONSTANTS)
# ... and with Python's math module, for 0-d float64 operands
SCALAR = dict(derivatives.CONSTANTS, **{k: getattr(_vocabulary, k) for k in derivatives.VOCABULARY})
_FLOAT64 = (float, np.float64)


# ... and with the primitives' own implementations, for plain operands: the same NumPy (or math)
# operations as the primitives would run on them, without binding each one
PLAIN = dict(derivatives.CONSTANTS)


def _formula(expr, argnames, namespace=TRACED):
    """A Python function evaluating a formula with the library's primitives (or ``namespace``),
    compiled under the file name ``<duals rule EXPR>``: a NumPy warning it raises names it."""
    source = f"lambda {', '.join(argnames)}: {expr}"
    return eval(compile(source, f"{RULE_FILE}{expr}>", "eval"), namespace)  # noqa: S307 - table is ours


def _partial(expr, argnames):
    """A partial derivative of the table: with the primitives on traced operands (differentiable
    again), with their implementations on plain ones (the same numbers, a bind less per operation)."""
    traced = _formula(expr, argnames)
    plain = _formula(expr, argnames, PLAIN)

    def partial(*args):
        formula = plain
        for a in args:
            if isinstance(a, Tracer):
                formula = traced
                break
        try:
            return formula(*args)
        except _vocabulary.FALLBACK:   # Python numbers (1.0 / 0.0): again as NumPy's, inf or nan
            return formula(*(np.float64(a) if type(a) in (float, int) else a for a in args))
    return partial


def _times(d, t):
    if isinstance(d, float):
        if d == 1.0:
            return t
        if d == -1.0:
            return every_entry(-t.flat[0], t.shape) if one_number(t) else -t
        if one_number(t):      # a sum's cotangent: the product is one number for all entries too
            return every_entry(d * t.flat[0], t.shape)
    return d * t


def _zero_like(x):
    return np.zeros((), dtype=dtype_of(x))


def masked(product, unreached):
    """masked(product, unreached): ``product`` with exact zeros where ``unreached`` holds.

    ``unreached`` marks cotangent entries that are zero by structure (a branch not taken), so
    that ``0 * inf`` there gives ``0``, not NaN. ``None`` means no such entries.
    """
    if unreached is None or _all_finite(product):
        return product   # finite partials times the zero cotangent are zeros already
    return select(unreached, _zero_like(product), product)


def picked(d, t):
    """``d * t`` for a selecting partial (``maximum``): exactly zero wherever ``d`` is zero."""
    with np.errstate(invalid="ignore"):
        product = d * t
    if _all_finite(product):
        return product
    return select(np.asarray(innermost(d)) == 0.0, _zero_like(t), product)


def _all_finite(x):
    """Whether ``x`` is a plain array or float without inf or NaN (one cheap pass)."""
    return type(x) in (np.ndarray, np.float64, float) and bool(np.isfinite(x).all())


def align(t, x, out):
    """align(t, x, out): a tangent of ``x`` reshaped so it broadcasts against ``out`` behind its lanes."""
    missing = ndim(out) - ndim(x)
    if missing <= 0:
        return t
    lead = lead_of(t, x)
    s = shape(t)
    return reshape(t, s[:lead] + (1,) * missing + s[lead:])


def fill_to(t, lead_shape, out):
    """fill_to(t, lead_shape, out): broadcast a tangent to ``lead_shape + out.shape`` if it is smaller."""
    target = tuple(lead_shape) + shape(out)
    return t if shape(t) == target else broadcast_to(t, target)


def _numpy_impl(name):
    for spelling in derivatives.NUMPY_NAMES.get(name, (name,)):
        func = getattr(np, spelling, None)
        if isinstance(func, np.ufunc):
            return func
    return None


def _operand(a, t, n, out_shape):
    """An operand of a binary kernel: :func:`_flat`, except that an array of one number repeated
    (a sum's cotangent) is passed as that number (which the kernel holds in a register) when its
    tangent ``t`` (lanes first) is absent or repeated too."""
    if (one_number(a) and a.size > 1 and a.dtype.kind == "f"
            and (t is None or not any(t.strides[1:]))):
        return a[(0,) * a.ndim].reshape(1)
    return _flat(a, n, out_shape)


def _flat(a, n, out_shape=None):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    if a.size == 1:
        return a.reshape(1)
    if out_shape is not None and a.shape != out_shape:
        a = np.broadcast_to(a, out_shape)
    return a.reshape(n)


def _flat_tangent(t, a, out_shape, n):
    lanes = t.shape[0]
    if np.size(a) == 1:
        return t.reshape(lanes, 1)
    if np.shape(a) != out_shape:
        t = np.broadcast_to(t.reshape((lanes,) + (1,) * (len(out_shape) - np.ndim(a)) + np.shape(a)),
                            (lanes,) + out_shape)
    return t.reshape(lanes, n)


def _as(a, dtype):
    """``a`` in ``dtype`` and in C order: a kernel's arrays share one float type and one layout,
    so that mixes of float32 and float64 operands and tangents, and strided or broadcast views,
    do not each compile a specialisation of their own (a copy of a view costs far less than a
    compile, and the loop over C-ordered arrays is the one the compiler vectorises)."""
    return np.ascontiguousarray(a, dtype)


def _fused(n, lanes):
    """Whether the fused kernel runs for ``n`` values with ``lanes`` tangent lanes (the module's
    docstring says why not below ``FUSED_FROM`` values and tangent entries)."""
    return n * (1 + lanes) >= FUSED_FROM


def _result(out):
    return out if out.ndim else out[()]


def _make_unary(name, value, deriv):
    numpy_impl = _numpy_impl(name)
    if numpy_impl is None:
        def impl(x):
            x = np.asarray(x)
            if x.dtype.kind == "c":
                raise TypeError(f"duals' {name} is computed for real numbers only (its kernel is "
                                f"float64) and got complex values; scipy.special.{name} itself "
                                f"computes complex values, without a derivative")
            dtype = x.dtype if x.dtype.kind == "f" else np.float64
            out = np.empty(x.shape, dtype)
            kernels.kernel(name, "value")(_as(_flat(x, x.size), dtype), out.reshape(-1))
            return _result(out)
    else:
        impl = _scalar_first(numpy_impl, _formula(value, ("x",), SCALAR))
    prim = Primitive(name, impl)
    prim.ufunc = numpy_impl
    prim.elementwise = True
    prim.def_sparsity(elementwise_rule(deriv != "0.0"))
    if deriv == "0.0":
        prim.def_jvp(0, lambda t, out, x: None)
        prim.def_vjp(0, lambda g, out, x, unreached=None: None)
        return _real_only(prim)
    d = _partial(deriv, ("x", "out"))
    prim.def_jvp(0, lambda t, out, x: _times(d(x, out), t))
    prim.def_vjp(0, dual_vjp.preferred(name, 0, lambda g, out, x, unreached=None: masked(
        _times(d(x, out), g), unreached)))
    scalar_value = _formula(value, ("x",), SCALAR)
    scalar_deriv = _formula(deriv, ("x", "out"), SCALAR)

    def fused_jvp(primals, tangents):
        x = primals[0]
        t = tangents[0]
        if type(x) in _FLOAT64 and numpy_impl is not None:
            try:
                out = scalar_value(x)
                return np.float64(out), t * scalar_deriv(x, out)
            except _vocabulary.FALLBACK:
                pass
        x = np.asarray(x)
        if x.dtype.kind == "c":
            return None   # the kernels are float64: complex values take the rules
        n = x.size
        lanes = t.shape[0]
        if numpy_impl is not None and (kernels.prefer_numpy(name, n) or not _fused(n, lanes)):
            out = numpy_impl(x)
            return out, _times(d(x, out), t)
        dtype = x.dtype if x.dtype.kind == "f" else np.float64
        out = np.empty(x.shape, dtype)
        tout = np.empty((lanes,) + x.shape, dtype)
        kernels.kernel(name, "jvp")(_as(_flat(x, n), dtype), _as(t.reshape(lanes, n), dtype),
                                    out.reshape(n), tout.reshape(lanes, n))
        return _result(out), tout

    prim.fused_jvp = fused_jvp
    return _real_only(prim)


def _real_only(prim):
    """A table primitive that is not holomorphic refuses complex values in its rules (NumPy may
    compute it for them, ``sign`` or ``maximum``, but it has no complex derivative)."""
    if prim.name in derivatives.HOLOMORPHIC:
        return prim
    return real_only(prim, "it is defined on real numbers only")


def real_only(prim, why):
    """real_only(prim, why): ``prim``'s rules refuse complex operands (TypeError saying ``why``);
    for primitives whose rules hold for real values only."""
    prim.holomorphic = False
    for rules in (prim.jvps, prim.vjps):
        for i, rule in list(rules.items()):
            rules[i] = _refusing_complex(prim.name, rule, why)
    return prim


def _refusing_complex(name, rule, why):
    def checked(t, out, *args, **params):
        if _complex_operand(out, args):
            raise TypeError(
                f"{name} has no complex derivative in duals: {why}, and got a complex argument. "
                f"Differentiate a real function of the parts instead (np.real(z), np.imag(z), "
                f"np.abs(z)); docs/complex.md lists what takes complex values")
        return rule(t, out, *args, **params)
    return checked


def _complex_operand(out, args):
    if is_complex(out):
        return True
    for a in args:
        if is_complex(a):
            return True
    return False


def _scalar_first(numpy_impl, scalar_value):
    """An impl that computes 0-d float64 operands with ``math`` and the rest with NumPy."""
    def impl(*args):
        for a in args:
            if type(a) not in _FLOAT64:
                return numpy_impl(*args)
        try:
            out = scalar_value(*args)
        except _vocabulary.FALLBACK:
            return numpy_impl(*args)
        return np.float64(out) if isinstance(out, float) else numpy_impl(*args)
    impl.__name__ = numpy_impl.__name__
    return impl


def _make_binary(name, value, dx, dy):
    numpy_impl = _numpy_impl(name)
    prim = Primitive(name, _scalar_first(numpy_impl, _formula(value, ("x", "y"), SCALAR)))
    prim.ufunc = numpy_impl
    prim.elementwise = True
    selecting = name in derivatives.SELECTING
    chain = picked if selecting else _times
    partials = {}
    for argnum, deriv in ((0, dx), (1, dy)):
        if deriv == "0.0":
            prim.def_jvp(argnum, lambda t, out, x, y: None)
            prim.def_vjp(argnum, lambda g, out, x, y, unreached=None: None)
            continue
        d = partials[argnum] = _partial(deriv, ("x", "y", "out"))
        if name in derivatives.HOLOMORPHIC and "log(" in deriv:
            d = _on_complex_plane(d)
        operand = (lambda x, y: x) if argnum == 0 else (lambda x, y: y)

        def jvp(t, out, x, y, d=d, operand=operand):
            a = operand(x, y)
            lead = lead_of(t, a)
            return fill_to(chain(d(x, y, out), align(t, a, out)), shape(t)[:lead], out)

        def vjp(g, out, x, y, d=d, operand=operand, unreached=None):
            return unbroadcast(masked(chain(d(x, y, out), g), unreached), out, shape(operand(x, y)))

        prim.def_jvp(argnum, jvp)
        prim.def_vjp(argnum, dual_vjp.preferred(name, argnum, vjp))
    if selecting:
        prim.unreached = lambda argnum, mask, out, x, y: np.asarray(
            innermost(partials[argnum](x, y, out))) == 0.0
    # an entry depends on an argument whose partial is not the symbolic zero; for a selecting
    # function (maximum) only where that argument is the one selected at this point
    # (x * y: not where the other factor is a constant zero)
    prim.def_sparsity(elementwise_rule(*(
        False if d == "0.0" else _selected(partials[i]) if selecting
        else UnlessConstantZero(1 - i) if d == "yx"[i] else True
        for i, d in enumerate((dx, dy)))))

    sign = {"1.0": 1, "-1.0": -1}
    constant = dx == "0.0" and dy == "0.0"
    passes = (sign.get(dx, 0), sign.get(dy, 0)) if numpy_impl is not None else None
    scalar_value = _formula(value, ("x", "y"), SCALAR)
    scalar_dx = _formula(dx, ("x", "y", "out"), SCALAR)
    scalar_dy = _formula(dy, ("x", "y", "out"), SCALAR)
    scalar_chain = _scalar_picked if selecting else (lambda d, t: t * d)

    def fused_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        if selecting and not all(t is None or np.isfinite(t).all() for t in tangents):
            return None   # the kernel would give 0 * inf = NaN; the rules pick exact zeros
        if type(x) in _FLOAT64 and type(y) in _FLOAT64:
            try:
                out = scalar_value(x, y)
                if isinstance(out, float):
                    tout = None if tx is None else scalar_chain(scalar_dx(x, y, out), tx)
                    if ty is not None:
                        c = scalar_chain(scalar_dy(x, y, out), ty)
                        tout = c if tout is None else tout + c
                    return np.float64(out), tout
            except _vocabulary.FALLBACK:
                pass
        sx, sy = np.shape(x), np.shape(y)
        out_shape = sx if sx == sy or not sy else sy if not sx else np.broadcast_shapes(sx, sy)
        if passes is not None and (tx is None) != (ty is None):
            # d/dx = +-1 and one traced operand of the output's shape: the tangent passes on
            t, shape_t, sign = (tx, sx, passes[0]) if ty is None else (ty, sy, passes[1])
            if sign and shape_t == out_shape:
                out = numpy_impl(x, y)
                if np.result_type(out) == t.dtype:
                    return out, (t if sign > 0 else -t)
        n = math.prod(out_shape)
        lanes = (tx if tx is not None else ty).shape[0]
        dtype = np.result_type(x, y)
        if dtype.kind != "f":
            if dtype.kind == "c":
                return None   # the kernels are float64: complex values take the rules
            dtype = np.dtype(np.float64)
        if numpy_impl is not None and not _fused(n, lanes):
            if constant:   # (floor_divide) a zero tangent, as the kernel gives, not the rules' none
                return _result(np.asarray(numpy_impl(x, y), dtype)), np.zeros((lanes,) + out_shape, dtype)
            return None    # the rules (NumPy): a few µs slower a call here, and nothing compiles
        out = np.empty(out_shape, dtype)
        tout = np.empty((lanes,) + out_shape, dtype)
        kernels.kernel(name, "jvp")(
            _as(_operand(x, tx, n, out_shape), dtype), _as(_operand(y, ty, n, out_shape), dtype),
            None if tx is None else _as(_flat_tangent(tx, x, out_shape, n), dtype),
            None if ty is None else _as(_flat_tangent(ty, y, out_shape, n), dtype),
            out.reshape(n), tout.reshape(lanes, n))
        return _result(out), tout

    prim.fused_jvp = fused_jvp
    return _real_only(prim)


def _on_complex_plane(partial):
    """A binary partial evaluated on the complex plane when the value is complex: there a real
    operand is that complex number (``log(-2)`` is ``log 2 + iπ``, NaN on the real line), as in
    NumPy's ``(-2.0) ** (0.5 + 1j)``."""
    def promoted(x, y, out):
        if is_complex(out):
            x = x if is_complex(x) else x + 0j
            y = y if is_complex(y) else y + 0j
        return partial(x, y, out)
    return promoted


def _selected(partial):
    return lambda out, x, y: np.asarray(innermost(partial(x, y, out))) != 0.0


def _scalar_picked(d, t):
    return np.where(d == 0.0, 0.0, t * d)


def _publish(prim):
    numpy_names = derivatives.NUMPY_NAMES.get(prim.name, (prim.name,))
    sub = derivatives.SUBMODULE.get(prim.name)
    names = [f"{sub}.{n}" for n in numpy_names] if sub else list(numpy_names)
    export(*names)(prim)
    TRACED[prim.name] = prim
    PLAIN[prim.name] = prim.impl
    for n in numpy_names:
        TRACED[n] = prim
        PLAIN[n] = prim.impl


PRIMITIVES = {}
for _name, (_value, _deriv) in derivatives.UNARY.items():
    PRIMITIVES[_name] = _make_unary(_name, _value, _deriv)
for _name, (_value, _dx, _dy) in derivatives.BINARY.items():
    PRIMITIVES[_name] = _make_binary(_name, _value, _dx, _dy)
for _prim in PRIMITIVES.values():
    _publish(_prim)

add, sub, mul, div = (PRIMITIVES[n] for n in ("add", "sub", "mul", "div"))
neg, square, sqrt, exp, log = (PRIMITIVES[n] for n in ("neg", "square", "sqrt", "exp", "log"))
maximum, minimum = PRIMITIVES["maximum"], PRIMITIVES["minimum"]


def _select_impl(condition, x, y):
    return np.where(condition, x, y)


select = Primitive("select", _select_impl, nondiff=(0,))
select.elementwise = True
select.unreached = lambda argnum, mask, out, condition, x, y: (
    ~condition if argnum == 1 else condition)
select.def_sparsity(gather_rule(_select_impl, data=(1, 2)))


def _everywhere(condition, argnum):
    """Whether branch ``argnum`` of ``select`` is taken at every entry (its derivative then passes
    on unchanged, without a select)."""
    c = np.asarray(condition)
    return bool(c.all() if argnum == 1 else not c.any())


def _select_jvp(argnum):
    def rule(t, out, condition, x, y):
        a = (x, y)[argnum - 1]
        lead = lead_of(t, a)
        if _everywhere(condition, argnum):
            return fill_to(align(t, a, out), shape(t)[:lead], out)
        zero = _zero_like(out)
        branch = (align(t, a, out), zero) if argnum == 1 else (zero, align(t, a, out))
        return fill_to(select(condition, *branch), shape(t)[:lead], out)
    return rule


def _select_vjp(argnum):
    def rule(g, out, condition, x, y, unreached=None):  # exact zeros already: no product
        if not _everywhere(condition, argnum):
            zero = _zero_like(out)
            g = select(condition, *((g, zero) if argnum == 1 else (zero, g)))
        return unbroadcast(g, out, shape((x, y)[argnum - 1]))
    return rule


for _i in (1, 2):
    select.def_jvp(_i, _select_jvp(_i))
    select.def_vjp(_i, _select_vjp(_i))


@export()
def where(condition, x, y):
    """where(condition, x, y): ``x`` where ``condition`` holds, else ``y``; derivatives follow the branch.

    >>> float(where(True, 1.0, 2.0))
    1.0
    """
    if isinstance(condition, Tracer):
        raise TypeError("where: the condition must be a boolean array, not a traced value; "
                        "compare values first (x > 0 compares primals)")
    return select(np.asarray(condition, dtype=bool), x, y)


TRACED["where"] = where
PLAIN["where"] = lambda condition, x, y: _select_impl(np.asarray(condition, dtype=bool), x, y)


@export()
def clip(x, a_min=None, a_max=None):
    """clip(x, a_min, a_max): ``x`` limited to ``[a_min, a_max]``; at a bound the derivative splits evenly.

    Where ``x == a_min == a_max`` the result has no derivative: it follows ``a_max`` alone, ``x``
    alone, or ``a_min`` alone, depending on the direction. The rule takes the element of that
    generalised gradient (partials ``≥ 0`` that sum to 1) that gives ``x`` nothing and the bounds ½
    each: shifting all three shifts the result as much (a limiter's constant region), a band
    ``±m`` opening from 0 leaves it alone, and so does ``x`` (a friction limit ``±mu Fn`` of a
    contact at rest with no normal force). ``maximum`` then ``minimum``, splitting each tie, gave
    ``(¼, ¼, ½)``.

    >>> float(clip(5.0, 0.0, 1.0))
    1.0
    >>> import duals
    >>> duals.grad(lambda f: clip(f, -0.0 * f, 0.0 * f))(0.0)
    0.0
    """
    bounded = x
    if a_min is not None:
        bounded = maximum(bounded, a_min)
    if a_max is not None:
        bounded = minimum(bounded, a_max)
        if a_min is not None:
            values = [np.asarray(innermost(v)) for v in (x, a_min, a_max)]
            pinned = (values[0] == values[1]) & (values[1] == values[2])
            if np.any(pinned):   # a_max's value, half the bounds' derivatives each
                moves = (a_min - stop_gradient(a_min)) + (a_max - stop_gradient(a_max))
                bounded = where(pinned, stop_gradient(a_max) + 0.5 * moves, bounded)
    return bounded


def stop_gradient(x):
    """stop_gradient(x): the plain value of ``x`` (a copy of it), a constant for every mode and
    every level, so that code which needs plain numbers (a neighbour search, ``cdist``, a SciPy
    solver) can take it.

    >>> import duals
    >>> duals.grad(lambda x: x * stop_gradient(x))(3.0)
    3.0
    """
    if not isinstance(x, Tracer):
        return x
    value = innermost(x)
    return value.copy() if isinstance(value, np.ndarray) else value
