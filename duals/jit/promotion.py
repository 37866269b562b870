"""Arrays that compiled code makes for itself hold duals: parameter sensitivities of unchanged code.

A simulation differentiated only with respect to its parameters makes its buffers from plain
inputs (``s = state.copy()``, ``np.empty_like(state)``, ``np.zeros(n)``, ``np.array([...])``)
and then stores dual values into them. When Numba cannot type the dual specialisation of a
function for that reason, the entry points (:mod:`duals.jit.api`) compile a *promoting*
specialisation instead: a copy of the user's function compiled by Numba's own pipeline plus
one rewrite before typing, by which

* ``np.empty``, ``np.zeros``, ``np.ones``, ``np.full`` and their ``*_like`` forms, ``np.eye``,
  ``np.identity``, ``np.array``, ``np.asarray`` of sequences, ``np.copy``, ``x.copy()`` and
  ``x.astype`` to the same float
  type make arrays of duals (zero tangents) wherever they would make float arrays; other dtypes
  are unchanged, and ``x.astype`` of duals to an integer type takes their values;
* ``np.concatenate``, ``np.stack``, ``np.hstack``, ``np.vstack`` and ``np.column_stack`` of
  float and dual arrays together promote the float ones;
* every ``@njit`` function it calls (global, closure variable, argument or default argument) is compiled the
  same way, and every ``@vectorize`` function is applied element-wise by its kernel compiled
  the same way (:mod:`duals.jit.vectorized`).

A ``parallel=True`` function always gets the promoting copy, compiled without
``parallel`` (its ``prange`` loops run serially in the dual specialisation; its plain calls
stay parallel), since Numba's parallel loops cannot carry the dual type yet.

The user's own dispatcher is not touched: its plain calls, and dual calls that type without
promotion, are exactly Numba's. The cost of promotion is that of the zero tangents the
promoted buffers carry (see ``benchmarks/bench_jit.py``). Arrays that come from elsewhere
(arguments, ``np.arange``, ``np.linspace``, ``np.random``) stay float arrays.

>>> import numba, numpy as np, duals
>>> @numba.njit
... def decay(y0, k, n):
...     y = np.zeros(n)
...     y[0] = y0
...     for i in range(1, n):
...         y[i] = y[i - 1] * (1.0 - k)
...     return y[n - 1]
>>> round(float(duals.jacfwd(decay, argnums=1)(1.0, 0.5, 3)), 12)    # d/dk (1-k)^2 = -2(1-k)
-1.0
"""
import functools
import hashlib
import types as pytypes

import numba
import numpy as np
from numba.core import errors, types
from numba.core.dispatcher import Dispatcher
from numba.np import numpy_support

from .._overloads import overload
from .._numba_cache import use_locked_cache
from ._types import DualType, _is_complex, _typeof_dual, dtype_of_type as _dtype_of, type_of_dtype
from .arrays import _is_none
from .compat import rewriting_compiler
from .errors import MARK
from .vectorized import elementwise, is_vectorized
from ..forward import Dual


def dual_type_of(args):
    """dual_type_of(args) -> the DualType of the highest level among ``args``, or None."""
    found = None
    for a in args:
        t = None
        if isinstance(a, (np.ndarray, np.void)) and a.dtype.names is not None:
            t = _DUAL_TYPES.get(a.dtype)
            if t is None:
                t = _DUAL_TYPES[a.dtype] = type_of_dtype(a.dtype)
        elif isinstance(a, Dual):
            t = _typeof_dual(a, None)
        if t is not None and (found is None or t.tag > found.tag):
            found = t
    return found


_DUAL_TYPES = {}  # dtype -> DualType: making a Numba type costs microseconds


def promoted_call(f, args):
    """promoted_call(f, args) -> ``f(*args)`` by the promoting specialisation of dispatcher ``f``."""
    promotion = _promotion(dual_type_of(args))
    args = [promotion.clone(a) if _is_user_dispatcher(a) else a for a in args]
    return promotion.clone(f)(*args)


def promoting_copy(f, dual_type):
    """promoting_copy(f, dual_type) -> the promoting copy of dispatcher ``f`` for duals of ``dual_type``."""
    return _promotion(dual_type).clone(f)


def promoted_arguments(args):
    """promoted_arguments(args) -> ``args`` with every plain float array as an array of the
    highest dual type among them (zero tangents: constants at that level), for a function that
    rebinds a plain argument to hold duals (``x = x0`` and then ``x = step(x, p)``) or stores
    duals into one; the caller's arrays are not written."""
    element = dual_type_of(args)
    out, promoted = [], {}  # one promoted array per argument object: aliases stay aliases
    for a in args:
        if type(a) is np.ndarray and a.dtype.kind in "fc":
            if id(a) not in promoted:
                dual = np.zeros(a.shape, _dtype_of(_over(element, numpy_support.from_dtype(a.dtype))))
                innermost = dual
                while innermost.dtype.names is not None:
                    innermost = innermost["primal"]
                innermost[...] = a
                promoted[id(a)] = dual
            a = promoted[id(a)]
        out.append(a)
    return out


def _is_user_dispatcher(obj):
    return isinstance(obj, Dispatcher) and not (getattr(obj.py_func, "__module__", None) or "").startswith("duals.")


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


class Promotion:
    """Promotion(dual_type): the promoting functions and the compiled copies for one dual type.

    ``replacement(obj)`` is what the rewrite puts in place of a NumPy function or a user
    dispatcher; ``method(name)`` is what replaces ``x.name(...)``.
    """

    def __init__(self, dual_type):
        self.dual = dual_type
        self.clones = {}
        self.vectorized = {}
        self.compiler = rewriting_compiler(self._rewrite)
        self.functions = {id(numpy_fn): self._make(numpy_fn, typer)
                          for numpy_fn, typer in self._typers().items()}
        self.methods = {"copy": self._make(np.copy, self._copy_method_typer, name="copy_method")[0],
                        "astype": self._make(np.copy, self._astype_method_typer, name="astype_method")[0]}

    def _rewrite(self, calls):
        rows = calls.nested_lists_as_tuples(lambda obj: obj is np.array or obj is np.asarray)
        return calls.replace(self.replacement, self.methods.get) or rows

    def replacement(self, obj):
        found = self.functions.get(id(obj))
        if found is not None and found[1] is obj:
            return found[0]
        if _is_user_dispatcher(obj):
            return self.clone(obj)
        if is_vectorized(obj):
            found = self.vectorized.get(obj)
            if found is None:
                found = self.vectorized[obj] = elementwise(obj, self.clone)
            return found
        return None

    def clone(self, dispatcher):
        """clone(dispatcher) -> the promoting copy of a user dispatcher (made once)."""
        found = self.clones.get(dispatcher)
        if found is None:
            found = self.clones[dispatcher] = self._clone(dispatcher)
        return found

    def _clone(self, dispatcher):
        py = dispatcher.py_func
        # a callee given as a default argument (def loss(p, sim=simulate)) is promoted too
        defaults = None if py.__defaults__ is None else tuple(self._promoted(d) for d in py.__defaults__)
        fn = pytypes.FunctionType(py.__code__, py.__globals__, py.__name__, defaults, py.__closure__)
        fn.__kwdefaults__ = None if py.__kwdefaults__ is None else {
            k: self._promoted(d) for k, d in py.__kwdefaults__.items()}
        fn.__module__ = py.__module__
        # the cache files of the copy are its own, per dual type and library version
        key = hashlib.sha256(repr(self.dual.key).encode()).hexdigest()[:10]
        fn.__qualname__ = f"{py.__qualname__}__duals_promoted_{key}"
        # Numba's parallel loops pass scalars to their workers in memory form, which differs
        # from a dual's register form (vector lanes): the copy runs its prange loops serially
        options = {k: v for k, v in dispatcher.targetoptions.items()
                   if k not in ("nopython", "cache", "parallel")}
        clone = numba.njit(pipeline_class=self.compiler, **options)(fn)
        if type(dispatcher._cache).__name__ != "NullCache":
            try:
                use_locked_cache(clone)
            except RuntimeError:  # no cache locator for this source: compile in memory
                pass
        return clone

    def _promoted(self, obj):
        return self.clone(obj) if _is_user_dispatcher(obj) else obj

    def _make(self, numpy_fn, typer, name=None):
        stub = _stub_like(numpy_fn, name)
        overload(stub)(typer)
        return stub, numpy_fn

    # each typer: the promoted implementation, or NumPy's own function unchanged

    def _element(self, dtype):
        f = _float_of(dtype)
        return None if f is None else _over(self.dual, f)

    def _typers(self):
        typers = {}
        for numpy_fn, fill in ((np.empty, None), (np.zeros, 0.0), (np.ones, 1.0)):
            typers[numpy_fn] = self._creation_typer(numpy_fn, fill)
            typers[getattr(np, numpy_fn.__name__ + "_like")] = self._like_typer(numpy_fn, fill)
        typers[np.full] = self._full_typer()
        typers[np.full_like] = self._full_like_typer()
        typers[np.eye], typers[np.identity] = self._eye_typers()
        typers[np.copy] = self._copy_typer()
        typers[np.array] = self._array_typer(np.array)
        typers[np.asarray] = self._array_typer(np.asarray)
        for joiner in (np.concatenate, np.stack):
            typers[joiner] = self._joiner_typer(joiner, with_axis=True)
        for joiner in (np.hstack, np.vstack, np.column_stack):
            typers[joiner] = self._joiner_typer(joiner, with_axis=False)
        return typers

    def _creation_typer(self, numpy_fn, fill):
        def typer(shape, dtype=None):
            element = self._element(dtype)
            if element is None:
                return lambda shape, dtype=None: numpy_fn(shape, dtype)
            if fill is None:
                return lambda shape, dtype=None: np.empty(shape, element)
            make = _filler(element)
            return lambda shape, dtype=None: make(shape, fill)
        return typer

    def _like_typer(self, numpy_fn, fill):
        like = getattr(np, numpy_fn.__name__ + "_like")

        def typer(a, dtype=None):
            plain = _is_none(dtype)
            if plain and not _is_float_array(a):
                return lambda a, dtype=None: like(a)
            element = self._element(a.dtype if plain else dtype)
            if element is None:
                return lambda a, dtype=None: like(a, dtype)
            if fill is None:
                return lambda a, dtype=None: np.empty(a.shape, element)
            make = _filler(element)
            return lambda a, dtype=None: make(a.shape, fill)
        return typer

    def _full_typer(self):
        def typer(shape, fill_value, dtype=None):
            element = self._element(dtype)
            if element is None:
                return lambda shape, fill_value, dtype=None: np.full(shape, fill_value, dtype)
            make = _filler(_highest(element, fill_value))
            return lambda shape, fill_value, dtype=None: make(shape, fill_value)
        return typer

    def _full_like_typer(self):
        def typer(a, fill_value, dtype=None):
            plain = _is_none(dtype)
            if plain and not (_is_float_array(a) or isinstance(fill_value, DualType)):
                return lambda a, fill_value, dtype=None: np.full_like(a, fill_value)
            element = self._element((a.dtype if _is_float_array(a) else None) if plain else dtype)
            if element is None:
                return lambda a, fill_value, dtype=None: np.full_like(a, fill_value, dtype)
            make = _filler(_highest(element, fill_value))
            return lambda a, fill_value, dtype=None: make(a.shape, fill_value)
        return typer

    def _unit_element(self, dtype):
        """The element of a unit matrix: a dual dtype as it is (``np.eye(n, dtype=x.dtype)`` of a
        differentiated ``x``, which Numba's ``np.eye`` cannot fill with ones), a float promoted."""
        if isinstance(dtype, types.DType) and isinstance(dtype.dtype, DualType):
            return dtype.dtype
        return self._element(dtype)

    def _eye_typers(self):
        """``np.eye(N, M, k)`` and ``np.identity(n)``: the unit matrix (``A = np.eye(n) * c``, then
        ``A[i, j] += x[i]`` builds a matrix from parameters)."""
        def eye(N, M=None, k=0, dtype=None):
            element = self._unit_element(dtype)
            if element is None:
                return lambda N, M=None, k=0, dtype=None: np.eye(N, M, k, dtype)
            make = _unit_matrix(element)
            if _is_none(M):
                return lambda N, M=None, k=0, dtype=None: make(N, N, k)
            return lambda N, M=None, k=0, dtype=None: make(N, M, k)

        def identity(n, dtype=None):
            element = self._unit_element(dtype)
            if element is None:
                return lambda n, dtype=None: np.identity(n, dtype)
            make = _unit_matrix(element)
            return lambda n, dtype=None: make(n, n, 0)
        return eye, identity

    def _copy_typer(self):
        def typer(a):
            if _is_float_array(a):
                copy = _copier(_over(self.dual, a.dtype))
                return lambda a: copy(a)
            return lambda a: np.copy(a)
        return typer

    def _copy_method_typer(self, a):
        if _is_float_array(a):
            copy = _copier(_over(self.dual, a.dtype))
            return lambda a: copy(a)
        return lambda a: a.copy()

    def _astype_method_typer(self, a, dtype):
        """``x.astype(dtype)``: to ``x``'s own float type it copies as ``x.copy()`` does (duals
        kept, a float array promoted); to an integer or boolean type the values of duals (a step
        function: derivative 0, as ``int(x)``); any other cast of duals is refused."""
        keep = lambda a, dtype: a.astype(dtype)   # noqa: E731  (Numba's own, for plain arrays)
        if not isinstance(a, types.Array):
            return keep
        target = _cast_target(dtype)
        dual = isinstance(a.dtype, DualType)
        number = a.dtype.float if dual else a.dtype   # the innermost number of a dual
        same_float = isinstance(target, types.Float) and target == number
        if same_float and (dual or _is_float_array(a)):
            copy = _copier(a.dtype if dual else _over(self.dual, a.dtype))
            return lambda a, dtype: copy(a)
        if not dual:
            return keep
        if isinstance(target, (types.Integer, types.Boolean)):
            values = _values_as(target)
            return lambda a, dtype: values(a)
        way_out = ("for complex values write x + 0j, which makes complex duals"
                   if isinstance(target, types.Complex) else "leave this one out (x.copy() copies the duals)")
        raise errors.TypingError(
            f"{MARK}x.astype({target}) of an array of duals over {number}: only casts "
            f"to {number} itself (a copy) and to integer or boolean types (the values) "
            f"are supported; {way_out}")

    def _array_typer(self, numpy_fn):
        def typer(obj, dtype=None):
            plain = _is_none(dtype)
            keep = ((lambda obj, dtype=None: numpy_fn(obj)) if plain
                    else (lambda obj, dtype=None: numpy_fn(obj, dtype)))
            if isinstance(obj, types.Array):
                if numpy_fn is np.asarray or not _is_float_array(obj):
                    return keep
                element = self._element(obj.dtype if plain else dtype)
                if element is None:
                    return keep
                copy = _copier(element)
                return lambda obj, dtype=None: copy(obj)
            base = self._element(_natural_float(obj) if plain else dtype)
            element = None if base is None else _sequence_element(obj, base)
            impl = None if element is None else _sequence_impl(obj, element)
            return keep if impl is None else impl
        return typer

    def _joiner_typer(self, joiner, with_axis):
        """Joining float and dual arrays: the float ones are promoted first."""
        params = "arrays, axis=0" if with_axis else "arrays"

        def impl_for(arrays):
            if not isinstance(arrays, types.BaseTuple) or not all(
                    isinstance(t, types.Array) for t in arrays.types):
                return None
            elements = [t.dtype for t in arrays.types]
            duals = [t for t in elements if isinstance(t, DualType)]
            joined = "arrays"
            if duals and any(t != elements[0] for t in elements):
                joined = "(" + "".join(f"_as(arrays[{i}]), " for i in range(len(elements))) + ")"
            call = f"joiner({joined}{', axis' if with_axis else ''})"
            scope = {"joiner": joiner, "_as": _converter(_highest(duals[0], *duals)) if duals else None}
            exec(f"def impl({params}):\n    return {call}\n", scope)
            return scope["impl"]

        if with_axis:
            return lambda arrays, axis=0: impl_for(arrays)
        return lambda arrays: impl_for(arrays)


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


@functools.lru_cache(maxsize=None)
def _promotion(dual_type):
    return Promotion(dual_type)
