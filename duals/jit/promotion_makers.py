"""The element types and array makers of promotion (:mod:`duals.jit.promotion`).

A promoted ``np.zeros(n)`` or ``np.array([a, b])`` in the user's code becomes a call of one of
these functions, overloaded for compiled code: the dual type that an array of floats becomes
(:func:`_over`, the highest of several with :func:`_highest`), a copy of an array as an array of
that type (:func:`_copier`, :func:`_converter`), an array filled with a value (:func:`_filler`),
a unit matrix (:func:`_unit_matrix`), and the array of a sequence of numbers and arrays, nested
(:func:`_sequence_impl`).

>>> _float_of(types.NumberClass(types.float32)), _float_of(None)   # np.zeros(n, np.float32), np.zeros(n)
(float32, float64)
"""
import functools

import numba
import numpy as np
from numba.core import errors, types
from numba.np import numpy_support

from .._overloads import overload
from ._types import DualType, _is_complex
from .errors import MARK

# ---------------------------------------------------------------- element types

def _float_of(dtype):
    """The float type a dtype argument asks for (float64 when omitted); None for other dtypes."""
    if dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        return types.float64
    if isinstance(dtype, (types.Float, types.Complex)):
        return dtype
    if isinstance(dtype, types.NumberClass):
        t = dtype.instance_type
    elif isinstance(dtype, types.DType):
        t = dtype.dtype
    elif isinstance(dtype, types.StringLiteral):
        t = numpy_support.from_dtype(np.dtype(dtype.literal_value))
    else:
        return None
    return t if isinstance(t, (types.Float, types.Complex)) else None


def _over(dual, float_type):
    """``dual`` with its innermost float replaced by ``float_type``; an adjoint as it is for a
    float (compiled reverse mode computes in float64, so a float32 buffer, ``np.zeros(n,
    np.float32)``, holds the same adjoints as one of the inputs' dtype)."""
    from .adjoint import AdjointType
    if isinstance(dual, AdjointType) and isinstance(float_type, types.Float):
        return dual
    if isinstance(float_type, types.Complex):
        _check_complex_kind(dual)
    inner = _over(dual.base, float_type) if isinstance(dual.base, DualType) else float_type
    return dual.with_base(inner)


def _check_complex_kind(dual):
    """Refuse a complex buffer of adjoints (compiled reverse mode) or index sets by the typing
    error on which ``duals.grad`` of a dispatcher falls back to forward mode."""
    from .complex_rules import check_kinds
    check_kinds(dual)


def _highest(element, *others):
    """The dual type of the highest level among ``element`` and ``others``, complex when any of
    them is complex (a complex value among real duals makes a complex dual, as Numba promotes)."""
    complex_ = False
    for t in others:
        complex_ = complex_ or _is_complex(t)
        if isinstance(t, DualType) and t.tag > element.tag:
            element = t
    if complex_ and not _is_complex(element):
        from .complex_types import complex_of
        _check_complex_kind(element)
        element = complex_of(element)
    return element


def _scalar(t):
    return isinstance(t, (types.Number, types.Boolean, DualType))


def _is_float_array(t):
    """Whether ``t`` is an array of floats (or complex numbers): what promotion makes hold duals."""
    return isinstance(t, types.Array) and isinstance(t.dtype, (types.Float, types.Complex))


# ---------------------------------------------------------------- the promoting functions

@functools.lru_cache(maxsize=None)
def _copier(element):
    """A jitted ``copy(a)``: a fresh array of ``element`` holding the values of array ``a``."""
    @numba.njit
    def copy(a):
        out = np.empty(a.shape, element)
        for idx in np.ndindex(a.shape):
            out[idx] = a[idx]
        return out
    return copy


def _cast_target(dtype):
    """The Numba type an ``astype`` argument names (None when it names none)."""
    from numba.core.typing.npydecl import parse_dtype
    try:
        return parse_dtype(dtype)
    except errors.TypingError:
        return None


@functools.lru_cache(maxsize=None)
def _values_as(element):
    """A jitted ``values(a)``: the real parts of dual array ``a`` cast to ``element`` (as ``int()``
    of each entry: truncation toward zero, derivative 0)."""
    from .arrays import _unary_impl
    from .extras import _real
    return numba.njit(_unary_impl(_real, element))


@functools.lru_cache(maxsize=None)
def _filler(element):
    """A jitted ``make(shape, value)``: a new array of ``element`` set to ``value``."""
    @numba.njit
    def make(shape, value):
        out = np.empty(shape, element)
        flat = out.reshape(out.size)
        for i in range(flat.size):
            flat[i] = value
        return out
    return make


def _unit_matrix(element):
    """A jitted ``make(n, m, k)``: an ``n × m`` array of ``element``, ones on diagonal ``k``."""
    @numba.njit
    def make(n, m, k):
        out = np.empty((n, m), element)
        for i in range(n):
            for j in range(m):
                out[i, j] = 1.0 if j - i == k else 0.0
        return out
    return make


# sequences whose items have types of their own: tuples, and lists of mixed types (``[x, 2j]``)
_STATIC = (types.BaseTuple, types.LiteralList)


def _sequence_impl(obj, element, name="obj", extra=", dtype=None"):
    """Code for ``np.array(obj)`` of a 1-d or 2-d sequence (list, tuple) of scalars and duals."""
    def rows(t):
        if isinstance(t, _STATIC) and not isinstance(t, types.UniTuple):
            return list(t.types)
        return None

    def items(t):
        return list(t.types) if isinstance(t, _STATIC) else [t.dtype]

    outer = items(obj)
    if all(_scalar(t) for t in outer):
        if rows(obj) is not None:
            body = [f"    out = np.empty({len(outer)}, element)"]
            body += [f"    out[{i}] = {name}[{i}]" for i in range(len(outer))]
        else:
            body = [f"    out = np.empty(len({name}), element)",
                    f"    for i in range(len({name})):",
                    f"        out[i] = {name}[i]"]
    elif all(isinstance(t, _STATIC + (types.List,)) and all(_scalar(e) for e in items(t))
             for t in outer):
        static_rows = rows(obj)
        widths = {len(t) for t in outer if isinstance(t, _STATIC)}
        if len(widths) > 1:
            raise errors.TypingError(f"{MARK}np.array of rows of different lengths {sorted(widths)}")
        body = [f"    m = len({name}[0])"]
        if static_rows is not None:
            body.append(f"    out = np.empty(({len(outer)}, m), element)")
            for i, t in enumerate(outer):
                body += _row_code(f"{name}[{i}]", str(i), t)
        else:
            body += [f"    out = np.empty((len({name}), m), element)",
                     f"    for i in range(len({name})):"]
            body += ["    " + line for line in _row_code(f"{name}[i]", "i", outer[0])]
    else:
        return None
    source = f"def impl({name}{extra}):\n" + "\n".join(body) + "\n    return out\n"
    scope = {"np": np, "element": element}
    exec(source, scope)
    return scope["impl"]


def _row_code(row, i, t):
    if isinstance(t, _STATIC) and not isinstance(t, types.UniTuple):
        lines = [f"    if len({row}) != m:", "        raise ValueError('np.array: rows of different lengths')"]
        return lines + [f"    out[{i}, {j}] = {row}[{j}]" for j in range(len(t))]
    return [f"    if len({row}) != m:", "        raise ValueError('np.array: rows of different lengths')",
            "    for j in range(m):", f"        out[{i}, j] = {row}[j]"]


def _sequence_leaves(t):
    """The types of the numbers in a (nested) list or tuple type."""
    if isinstance(t, _STATIC):
        return [e for s in t.types for e in _sequence_leaves(s)]
    if isinstance(t, types.List):
        return _sequence_leaves(t.dtype)
    return [t]


def _natural_float(obj):
    """The float type NumPy (and Numba) give ``np.array`` of a sequence without a dtype: float32
    when every number in it is float32 (or a dual over float32), else float64."""
    floats = [getattr(t, "float", t) for t in _sequence_leaves(obj)]
    return types.float32 if all(t == types.float32 for t in floats) else types.float64


def _sequence_element(obj, default):
    """The element type of a sequence holding duals or of plain floats promoted, else None."""
    found = _sequence_leaves(obj) if isinstance(obj, _STATIC + (types.List,)) else []
    if not found or not all(_scalar(t) for t in found):
        return None
    if not any(isinstance(t, (types.Float, types.Complex, DualType)) for t in found):
        return None  # integers stay integers, as in NumPy
    return _highest(default, *found)


@functools.lru_cache(maxsize=None)
def _converter(element):
    """A function for compiled code: array ``a`` as an array of ``element`` (a copy unless it is one)."""
    def convert(a):
        pass

    @overload(convert)
    def typer(a):
        if isinstance(a, types.Array) and a.dtype == element:
            return lambda a: a
        copy = _copier(element)
        return lambda a: copy(a)
    return convert


def _stub_like(numpy_fn, name=None):
    """A fresh Python function to overload in place of ``numpy_fn`` (same name and parameters)."""
    def stub(*args, **kwargs):
        raise NotImplementedError("duals: a compiled-mode placeholder, called from Python")
    stub.__name__ = stub.__qualname__ = f"duals_{name or numpy_fn.__name__}"
    return stub
