"""Arrays that compiled code makes for itself hold duals: parameter sensitivities of unchanged code.

A simulation differentiated only with respect to its parameters makes its buffers from plain
inputs (``s = state.copy()``, ``np.empty_like(state)``, ``np.zeros(n)``, ``np.array([...])``)
and then stores dual values into them. When Numba cannot type the dual specialisation of a
function for that reason, the entry points (:mod:`duals.jit.api`) compile a *promoting*
specialisation instead: a copy of the user's function compiled by Numba's own pipeline plus
one rewrite before typing, by which

* ``np.empty``, ``np.zeros``, ``np.ones``, ``np.full`` and their ``*_like`` forms, ``np.eye``,
  ``np.identity``, ``np.array``, ``np.asarray`` of sequences, ``np.copy``, ``x.copy()`` and
  ``x.astype`` to the same float type (or the complex type of its precision, a hand-written
  FFT's work buffer) make arrays of duals (zero tangents) wherever they would make float arrays;
  other dtypes are unchanged, and ``x.astype`` of duals to an integer type takes their values;
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
from ._types import DualType, _typeof_dual, dtype_of_type as _dtype_of, type_of_dtype
from .arrays import _is_none
from .compat import rewriting_compiler
from .errors import MARK
from .promotion_makers import (_cast_target, _converter, _copier, _filler, _float_of, _highest,
                               _is_float_array, _natural_float, _over, _sequence_element,
                               _sequence_impl, _stub_like, _unit_matrix, _values_as)
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
        typers[np.polynomial.polynomial.polyval] = _polyval_typer
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
        if _same_precision_complex(target, number) and (dual or _is_float_array(a)):
            copy = _copier(_over(a.dtype if dual else self.dual, target))   # complex duals
            return lambda a, dtype: copy(a)
        if not dual:
            return keep
        if isinstance(target, (types.Integer, types.Boolean)):
            values = _values_as(target)
            return lambda a, dtype: values(a)
        raise errors.TypingError(
            f"{MARK}x.astype({target}) of an array of duals over {number}: only casts to "
            f"{number} itself or to the complex type of its precision (a copy) and to integer or "
            f"boolean types (the values) are supported; leave this one out (x.copy() copies the "
            f"duals)")

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
def _promotion(dual_type):
    return Promotion(dual_type)


def _same_precision_complex(target, number):
    """Whether ``target`` is the complex type of float type ``number``'s precision (or of a
    complex ``number``: itself)."""
    if not isinstance(target, types.Complex):
        return False
    return target == number or target.underlying_float == number


def _polyval_typer(x, c, tensor=True):
    """``numpy.polynomial.polynomial.polyval``: of duals by Horner's rule, else Numba's own."""
    from .extras import polyval_of_duals, polyval_takes
    if polyval_takes(x, c):
        return lambda x, c, tensor=True: polyval_of_duals(x, c)
    return lambda x, c, tensor=True: np.polynomial.polynomial.polyval(x, c, tensor)
