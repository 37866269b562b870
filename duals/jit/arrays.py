"""Whole-array NumPy expressions on arrays of duals in @njit code: ``x * 2.0``, ``np.sin(x)``, ``x.sum()``.

Every overload here is an element-by-element loop over the operands that calls the scalar
dual overloads of :mod:`duals.jit.rules`, so the derivatives come from the same table
(``duals/derivatives.py``). They are generated from the table too: each unary and binary
entry is overloaded under every spelling of it that means element by element on arrays
(the operators ``+ - * / **``, their in-place forms, unary ``-``, ``abs`` and the ``np.*``
ufuncs); the comparisons give arrays of booleans. An overload applies when an operand is
an array and an element is a dual; the result is a new array whose dtype is the scalar
result's type (the higher level when duals of two levels meet). Operands broadcast as in
NumPy. Reductions (``np.sum``, ``np.prod``, ``np.mean``, their methods, and ``np.dot`` of
two vectors) reduce the whole array to a dual scalar.

The overloads are registered for the CPU target, so Numba tries them before its own array
templates, which do not know the dual dtype (they answer ``None`` for every other array).

>>> import numba, numpy as np, duals
>>> duals.jacfwd(numba.njit(lambda x: np.sum(np.sin(x) * 2.0)))(np.zeros(2)).tolist()
[2.0, 2.0]
"""
import builtins
import inspect
import operator

import numpy as np
from numba.core import errors, types
from numba.core.registry import cpu_target
from numba.extending import overload, register_jitable
from numba.np import arraymath

from .. import derivatives
from ._types import DualType
from .errors import MARK
from .rules import COMPARISONS, _binary_choice, spellings

# spellings (of rules.spellings) that mean element by element on arrays; the others
# (math.*, min, max, builtins.pow) are scalar functions or reductions in NumPy
_ELEMENTWISE = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                operator.neg, builtins.abs)
_INPLACE = (operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow)


def _element(t):
    """The element type of an operand (an array's dtype, or a scalar type), None if unsupported."""
    e = t.dtype if isinstance(t, types.Array) else t
    return e if isinstance(e, (types.Number, types.Boolean, DualType)) else None


def _is_dual_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, DualType)


def _is_none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _result_type(f, *elements):
    """The type of ``f(*elements)`` on scalars (what the rules' overloads return), or None."""
    ctx = cpu_target.typing_context
    sig = ctx.resolve_function_type(ctx.resolve_value_type(f), elements, {})
    return None if sig is None else sig.return_type


def _operands(name, f, *args):
    """The element type of ``f`` over ``args`` when it is ours to implement (an array among
    them and a dual among their elements), else None; same-level duals of different lanes raise."""
    elements = [_element(a) for a in args]
    if (None in elements or not any(isinstance(a, types.Array) for a in args)
            or not any(isinstance(e, DualType) for e in elements)):
        return None
    if len(elements) == 2:
        _binary_choice(name, elements[0], elements[1], f, f, f)
    return _result_type(f, *elements)


# ---------------------------------------------------------------- broadcasting helpers

def _spread(x, shape):
    """_spread(x, shape) -> ``x`` broadcast to ``shape`` (a view), or the scalar ``x`` itself."""


def _at(x, idx):
    """_at(x, idx) -> ``x[idx]`` of a spread operand (a scalar is the same at every index)."""


def _shape_of(x, y):
    """_shape_of(x, y) -> the broadcast shape of two operands (``()`` for two scalars)."""


def _readable(x, y):
    """_readable(x, y) -> ``y``, copied when it overlaps ``x`` (the array written in place)."""


def _has_shape(t):
    return isinstance(t, types.Array) and t.ndim > 0


@overload(_spread)
def _ov_spread(x, shape):
    if not isinstance(x, types.Array):
        return lambda x, shape: x
    if x.ndim == 0:
        return lambda x, shape: x[()]
    return lambda x, shape: np.broadcast_to(x, shape)


@overload(_at)
def _ov_at(x, idx):
    if isinstance(x, types.Array):
        return lambda x, idx: x[idx]
    return lambda x, idx: x


@register_jitable
def _broadcast(xs, ys):
    for i in range(1, min(len(xs), len(ys)) + 1):
        a, b = xs[len(xs) - i], ys[len(ys) - i]
        if a != b and a != 1 and b != 1:
            raise ValueError("duals.jit: operands could not be broadcast together (each trailing "
                             "axis must have equal lengths or length 1); shapes:", xs, ys)
    return np.broadcast_shapes(xs, ys)


@overload(_shape_of)
def _ov_shape_of(x, y):
    if _has_shape(x) and _has_shape(y):
        return lambda x, y: _broadcast(x.shape, y.shape)
    if _has_shape(x):
        return lambda x, y: x.shape
    if _has_shape(y):
        return lambda x, y: y.shape
    return lambda x, y: ()


@overload(_readable)
def _ov_readable(x, y):
    if not _has_shape(y):
        return lambda x, y: y

    def impl(x, y):
        if _broadcast(x.shape, y.shape) != x.shape:
            raise ValueError("duals.jit: an in-place operation cannot grow its left operand; the "
                             "right one must broadcast to its shape; shapes:", x.shape, y.shape)
        if np.shares_memory(x, y):
            return np.broadcast_to(y.copy(), x.shape)
        return np.broadcast_to(y, x.shape)
    return impl


# ---------------------------------------------------------------- element-wise overloads

def _unary_typer(name, f):
    def ov(x):
        rt = _operands(name, f, x)
        if rt is None:
            return None

        def impl(x):
            out = np.empty(x.shape, rt)
            for idx in np.ndindex(x.shape):
                out[idx] = f(x[idx])
            return out
        return impl
    return ov


def _binary_typer(name, f):
    def ov(x, y):
        rt = _operands(name, f, x, y)
        if rt is None:
            return None

        def impl(x, y):
            shape = _shape_of(x, y)
            out = np.empty(shape, rt)
            xs, ys = _spread(x, shape), _spread(y, shape)
            for idx in np.ndindex(shape):
                out[idx] = f(_at(xs, idx), _at(ys, idx))
            return out
        return impl
    return ov


def _inplace_typer(name, f):
    def ov(x, y):
        rt = _operands(name, f, x, y)
        if rt is None or not isinstance(x, types.Array):
            return None
        if rt != x.dtype:
            raise errors.TypingError(
                f"{MARK}in-place {name} of an array of {x.dtype} with {y} gives {rt}, which the "
                f"array cannot hold (the derivative would be lost); write x = x {_SYMBOLS[name]} y "
                f"(a new array), or create x from a dual input (np.zeros_like(y))")

        def impl(x, y):
            ys = _spread(_readable(x, y), x.shape)
            for idx in np.ndindex(x.shape):
                x[idx] = f(x[idx], _at(ys, idx))
            return x
        return impl
    return ov


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}


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


def _reduction_typer(label, reduce, axis_arguments):
    """The overload of a full reduction; without ``axis_arguments`` it takes ``a`` alone (the
    signature of Numba's own methods ``x.prod()`` and ``x.mean()``, which it must match)."""
    def check(a, axis, dtype):
        if not _is_dual_array(a):
            return False
        if not (_is_none(axis) and _is_none(dtype)):
            raise errors.TypingError(
                f"{MARK}{label}(x, axis=..., dtype=...) with x an array of duals: only full "
                f"reductions of dual arrays are supported ({label}(x)); write a loop over the axis")
        return True

    if not axis_arguments:
        return lambda a: (lambda a: reduce(a)) if check(a, None, None) else None

    def ov(a, axis=None, dtype=None):
        if check(a, axis, dtype):
            return lambda a, axis=None, dtype=None: reduce(a)
    return ov


def _dot_typer(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    if _operands("mul", operator.mul, a, b) is None:
        return None
    if a.ndim != 1 or b.ndim != 1:
        raise errors.TypingError(
            f"{MARK}np.dot of dual arrays supports two 1-d arrays (an inner product), got "
            f"{a.ndim}-d and {b.ndim}-d; write the products as a loop")

    def impl(a, b):
        if a.shape[0] != b.shape[0]:
            raise ValueError("duals.jit: np.dot of two vectors of different lengths:",
                             a.shape[0], b.shape[0])
        acc = 0.0
        for i in range(a.shape[0]):
            acc = acc + a[i] * b[i]
        return acc
    return impl


def _install():
    for name in derivatives.UNARY:
        for f in spellings(name):
            if isinstance(f, np.ufunc) or f in _ELEMENTWISE:
                overload(f, target="cpu")(_unary_typer(name, f))
    for name in derivatives.BINARY:
        for f in spellings(name):
            if f in _INPLACE:
                overload(f, target="cpu")(_inplace_typer(name, f))
            elif isinstance(f, np.ufunc) or f in _ELEMENTWISE:
                overload(f, target="cpu")(_binary_typer(name, f))
    for name in COMPARISONS:
        overload(getattr(operator, name), target="cpu")(_binary_typer(name, getattr(operator, name)))
    # a method call x.sum() resolves to Numba's own overload function: overloaded here too
    for label, reduce, method in (("np.sum", _sum, arraymath.array_sum),
                                  ("np.prod", _prod, arraymath.array_prod),
                                  ("np.mean", _mean, arraymath.array_mean)):
        overload(getattr(np, label[3:]), target="cpu")(_reduction_typer(label, reduce, True))
        takes_axis = "axis" in inspect.signature(method).parameters
        overload(method, target="cpu")(_reduction_typer(label, reduce, takes_axis))
    overload(np.dot, target="cpu")(_dot_typer)


_install()
