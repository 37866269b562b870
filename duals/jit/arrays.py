"""Whole-array NumPy expressions on dual arrays in @njit code: ``x * 2.0``, ``np.sin(x)``, ``x.sum()``.

Every unary and binary entry of ``duals/derivatives.py`` is typed on arrays under each of its
spellings that NumPy applies element by element (:func:`array_spellings`: the operators and
their in-place forms, ``abs``, ``pow``, the ``np.*`` ufuncs), and so are the comparisons,
when an operand is an array and an element is a dual. The result is a new array of the
scalar rule's result type (the higher level where duals of two levels meet); operands
broadcast as in NumPy.

Typing compiles nothing. Numba then fuses most such expressions into one loop (its
array-expression rewrite, whose element code is the scalar dual rules of :mod:`.rules`);
what it leaves (in-place operators, dual scalar operands, ``operator.add(x, y)`` calls) is
compiled from the loops here. The reductions ``np.sum``, ``np.prod``, ``np.mean`` (and their
methods) reduce a whole dual array to a dual; ``np.sum`` over an axis is Numba's own, the
others over an axis are in :mod:`.array_functions`, products in :mod:`.linalg`. All are registered for the CPU target, so Numba tries them before
its own array templates (which do not know the dual dtype); they answer None for other arrays.

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.sum(np.sin(x) * 2.0)))(np.zeros(2)).tolist()
[2.0, 2.0]
"""
import builtins
import operator

import numpy as np
from numba.core import types, utils
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import (AbstractTemplate, AttributeTemplate, infer_getattr,
                                         infer_global, signature)

from .._overloads import overload, register_jitable
from .. import derivatives
from ._types import DualType, _other_float
from .compat import array_methods, compile_numpy_subroutine, keep_out_of_fused_loops, nan_aware
from .rules import COMPARISONS, binary_choice, spellings


def _is_operator(f):
    return f is not None and getattr(operator, getattr(f, "__name__", ""), None) is f


def _is_inplace(f):
    """Whether ``f`` is an in-place operator (``operator.iadd`` ...: ``i`` + another operator)."""
    name = f.__name__ if _is_operator(f) else ""
    return name[:1] == "i" and _is_operator(getattr(operator, name[1:], None))


def _element(t):
    """The element type of an operand (an array's dtype, or a scalar type), None if unsupported."""
    e = t.dtype if isinstance(t, types.Array) else t
    return e if isinstance(e, (types.Number, types.Boolean, DualType)) else None


def _is_dual_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, DualType)


def _is_none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _operands(context, name, f, *args):
    """The type of ``f`` on the elements of ``args`` when the call is ours (an array among them
    and a dual among their elements), else None; same-level duals of different lanes raise."""
    elements = [_element(a) for a in args]
    if (None in elements or not any(isinstance(a, types.Array) for a in args)
            or not any(isinstance(e, DualType) for e in elements)):
        return None
    if len(elements) == 2 and not _other_float(*elements):   # (float32 with float64: widened)
        binary_choice(name, elements[0], elements[1], f, f, f)  # raises for mixed lanes
    sig = context.resolve_function_type(context.resolve_value_type(f), tuple(elements), {})
    return None if sig is None else sig.return_type


# ---------------------------------------------------------------- broadcasting helpers

def _spread(x, y, shape):
    """_spread(x, y, shape) -> operand ``x`` (partner ``y``) to index at every index of ``shape``:
    broadcast where both have shapes, else as it is (a scalar, the element of a 0-d array)."""


def _at(x, idx):
    """_at(x, idx) -> ``x[idx]`` of a spread operand (a scalar is the same at every index)."""


def _shape_of(x, y):
    """_shape_of(x, y) -> the broadcast shape of two operands (``()`` for two scalars)."""


def _readable(x, y):
    """_readable(x, y) -> ``y`` to index at every index of ``x`` (written in place): broadcast
    to its shape, not copied where it overlaps ``x`` (elements are updated in order, as in
    Numba's in-place loops on floats; NumPy would buffer), a scalar as it is."""


def _has_shape(t):
    return isinstance(t, types.Array) and t.ndim > 0


@overload(_spread)
def _ov_spread(x, y, shape):
    if not isinstance(x, types.Array):
        return lambda x, y, shape: x
    if x.ndim == 0:
        return lambda x, y, shape: x[()]
    if not _has_shape(y):
        return lambda x, y, shape: x
    return lambda x, y, shape: np.broadcast_to(x, shape)


@overload(_at)
def _ov_at(x, idx):
    if isinstance(x, types.Array):
        return lambda x, idx: x[idx]
    return lambda x, idx: x


@overload(_shape_of)
def _ov_shape_of(x, y):
    if _has_shape(x) and _has_shape(y):
        return lambda x, y: np.broadcast_shapes(x.shape, y.shape)
    if _has_shape(x):
        return lambda x, y: x.shape
    if _has_shape(y):
        return lambda x, y: y.shape
    return lambda x, y: ()


@register_jitable
def _check_into(xs, ys):
    """Raise unless shape ``ys`` broadcasts to ``xs`` (np.broadcast_to's own errors are obscure)."""
    fits = len(ys) <= len(xs)
    for i in range(1, min(len(xs), len(ys)) + 1):
        fits = fits and ys[len(ys) - i] in (1, xs[len(xs) - i])
    if not fits:
        raise ValueError("duals.jit: in an in-place operation the right operand must broadcast to "
                         "the shape of the left one, which cannot grow; shapes:", xs, ys)


@overload(_readable)
def _ov_readable(x, y):
    if isinstance(y, types.Array) and y.ndim == 0:
        return lambda x, y: y[()]
    if not _has_shape(y):
        return lambda x, y: y

    def impl(x, y):
        _check_into(x.shape, y.shape)
        return np.broadcast_to(y, x.shape)
    return impl


# ---------------------------------------------------------------- element-wise operations

def _unary_impl(f, rt):
    def impl(x):
        out = np.empty(x.shape, rt)
        for idx in np.ndindex(x.shape):
            out[idx] = f(x[idx])
        return out
    return impl


def _binary_impl(f, rt):
    def impl(x, y):
        shape = _shape_of(x, y)
        out = np.empty(shape, rt)
        xs, ys = _spread(x, y, shape), _spread(y, x, shape)
        for idx in np.ndindex(shape):
            out[idx] = f(_at(xs, idx), _at(ys, idx))
        return out
    return impl


def _scalar_impl(f, arity):
    """``f`` of 0-d arrays (and scalars): a scalar, as Numba's own ufuncs give on 0-d arrays
    (``np.where`` of scalars is one; ``total += 2.0 * np.where(c, x, 0.0)`` then adds a number)."""
    def unary(x):
        return f(x[()])

    def binary(x, y):
        return f(_spread(x, y, ()), _spread(y, x, ()))
    return unary if arity == 1 else binary


def _inplace_impl(f, rt):
    def impl(x, y):
        ys = _readable(x, y)
        for idx in np.ndindex(x.shape):
            x[idx] = f(x[idx], _at(ys, idx))  # a dual into a float array: errors.py says so
        return x
    return impl


def _register(make_impl, name, f):
    """Type ``f`` on arrays of duals (cheaply: no compilation) and lower it with ``make_impl``.

    Numba fuses most such calls into one loop over the whole expression (its array-expression
    rewrite, which compiles the scalar code of the elements: the dual rules); the calls it
    leaves (in-place operators, dual scalar operands) are compiled from ``make_impl``'s loop.
    """
    def lowering_key(*args):
        """The key of the lowering below (unique to this registration)."""

    class ArrayTemplate(AbstractTemplate):
        key = f
        metadata = {"target": "cpu"}  # tried before Numba's array templates

        def generic(self, args, kws):
            rt = None if kws else _operands(self.context, name, f, *args)
            if rt is None:
                return None
            if make_impl is _inplace_impl:
                return signature(args[0], *args) if isinstance(args[0], types.Array) else None
            ndim = max(a.ndim for a in args if isinstance(a, types.Array))
            return signature(types.Array(rt, ndim, "C") if ndim else rt, *args)

        def get_impl_key(self, sig):
            return lowering_key

    @lower_builtin(lowering_key, types.VarArg(types.Any))
    def lower(context, builder, sig, args):
        rt = sig.return_type
        impl = make_impl(f, rt.dtype) if isinstance(rt, types.Array) else _scalar_impl(f, len(sig.args))
        return compile_numpy_subroutine(context, builder, impl, sig, args)

    infer_global(f, types.Function(ArrayTemplate))


def _not_fusable(rewrite, expr):
    """Numba's fused loops take arrays and plain numbers only: calls that have a dual scalar
    operand (``np.hypot(x, d)``) are left to the loops here instead; and a generalized ufunc
    (``np.matmul``, overloaded in :mod:`.linalg`) is not element-wise, though a ufunc."""
    if expr.op == "call":
        key = getattr(rewrite.typemap.get(expr.func.name), "typing_key", None)
        if isinstance(key, np.ufunc) and key.signature is not None:
            return True
    return any(isinstance(rewrite.typemap.get(v.name), DualType) for v in expr.list_vars())


# ---------------------------------------------------------------- reductions

@register_jitable
def _sum(a):
    acc = 0.0  # unifies with the duals into a dual accumulator
    for idx in np.ndindex(a.shape):
        acc = acc + a[idx]
    return acc


@register_jitable
def _prod(a):
    acc = 1.0
    for idx in np.ndindex(a.shape):
        acc = acc * a[idx]
    return acc


@register_jitable
def _mean(a):
    return _sum(a) / a.size


def _reduction_typer(label, reduce):
    """``np.sum``, ``np.prod``, ``np.mean`` of a dual array (and ``x.sum()``): the whole array
    here; over an axis, Numba's own ``np.sum`` (it works on duals) or :mod:`.array_functions`."""
    def ov(a, axis=None, dtype=None):
        if not _is_dual_array(a):
            return None
        if _is_none(axis) and _is_none(dtype):
            return lambda a, axis=None, dtype=None: reduce(a)
        return None  # over an axis: Numba's own np.sum, the others in array_functions.py
    return ov


def _method_typer(reduce):
    """``x.prod()``, ``x.mean()``: Numba's own methods take no arguments, so these neither."""
    return lambda a: (lambda a: reduce(a)) if _is_dual_array(a) else None


# ---------------------------------------------------------------- methods of dual arrays

_METHODS = {}  # name -> the method template of dual arrays


def dual_array_method(name, stub):
    """dual_array_method(name, stub): ``x.<name>(args)`` of a dual array is ``stub(x, args)`` (a
    function with an ``@overload``); every other array keeps Numba's own method.

    (An ``@overload_method`` would take the name for every array: Numba resolves a method by
    its name before it types the call.)
    """
    params = list(utils.pysignature(stub).parameters.values())[1:]
    pysig = utils.pysignature(stub).replace(parameters=params)

    def lowering_key(*args):
        """The key of the lowering below (unique to this method)."""

    class MethodTemplate(AbstractTemplate):
        key = lowering_key

        def generic(self, args, kws):
            fnty = self.context.resolve_value_type(stub)
            sig = self.context.resolve_function_type(fnty, (self.this,) + tuple(args), kws)
            if sig is None:
                return None
            return signature(sig.return_type, *sig.args[1:], recvr=self.this).replace(pysig=pysig)

    @lower_builtin(lowering_key, types.Any, types.VarArg(types.Any))
    def lower(context, builder, sig, args):
        fnty = context.typing_context.resolve_value_type(stub)
        found = context.typing_context.resolve_function_type(fnty, sig.args, {})
        return context.get_function(fnty, found)(builder, args)

    _METHODS[name] = MethodTemplate


@infer_getattr
class _DualArrayMethods(AttributeTemplate):
    key = types.Array
    metadata = {"target": "cpu"}  # tried before Numba's array attributes, which it falls back to

    def generic_resolve(self, ary, attr):
        if _is_dual_array(ary) and attr in _METHODS:
            return types.BoundFunction(_METHODS[attr], ary)
        return None


def array_spellings(name):
    """array_spellings(name) -> the spellings of table entry ``name`` overloaded here for arrays:
    those of :func:`duals.jit.rules.spellings` that NumPy applies element by element to arrays
    (operators, in-place ones too, ``abs``, ``pow`` and ufuncs; not ``math.*``, ``min``, ``max``).

    >>> [f.__name__ for f in array_spellings("div")]
    ['truediv', 'itruediv', 'divide']
    >>> [f.__name__ for f in array_spellings("pow")]
    ['pow', 'ipow', 'pow', 'power', 'float_power']
    """
    return [f for f in spellings(name)
            if isinstance(f, np.ufunc) or _is_operator(f) or f is builtins.abs or f is builtins.pow]


def _install():
    for name in derivatives.UNARY:
        for f in array_spellings(name):
            _register(_unary_impl, name, f)
    for name in derivatives.BINARY:
        for f in array_spellings(name):
            _register(_inplace_impl if _is_inplace(f) else _binary_impl, name, f)
    for name in COMPARISONS:
        _register(_binary_impl, name, getattr(operator, name))
    for name, f in (("minimum", np.fmin), ("maximum", np.fmax)):   # (their scalars: .extras)
        _register(_binary_impl, name, f)
    keep_out_of_fused_loops(_not_fusable)
    nan_aware(lambda dtype: isinstance(dtype, DualType))
    # a method call x.sum() resolves to Numba's own overload function: overloaded here too
    methods = array_methods()
    for label, reduce in (("sum", _sum), ("prod", _prod), ("mean", _mean)):
        method = methods[label]
        typer = _reduction_typer(f"np.{label}", reduce)
        overload(getattr(np, label), target="cpu")(typer)
        overload(method, target="cpu")(typer if reduce is _sum else _method_typer(reduce))


_install()
