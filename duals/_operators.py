"""Python operators, array methods and the NumPy protocols for every traced value.

Defined once on :class:`~duals.core.Tracer`, so ``Dual`` and ``Var`` behave alike: an
operator calls the ``duals.numpy`` function of the same meaning, a comparison compares
primal values, and ``np.sin(x)`` or ``np.sum(x)`` reach the library through
``__array_ufunc__`` / ``__array_function__``.

Methods that would leave the array world keep the derivative instead of dropping it:
``x.item()`` is the entry as a traced 0-d value and ``x.tolist()`` nested lists of them (so
``if x.item() > tol`` and ``sum(x.tolist())`` work and differentiate); only a real conversion to a
Python number (``float(x)``, ``math.exp(x)``) is refused, with the error that says why. Value-only
methods (``argmax``, ``argsort``, ``any``, ``nonzero``, ``round``, ...) and ``int(x)`` (a step
function: derivative 0) return plain results, ``f"{x:.3f}"``
formats the value, ``x.real``, ``x.imag`` and ``x.conj()`` are ``np.real(x)``, ... (docs/complex.md) and ``x.sort()``, which would
sort in place, raises: write ``x = np.sort(x)``.
"""
import os
import sys
import threading

import numpy as np

from .core import Tracer, changed_in_place
from .ops import NAMESPACE as N
from .ops import VALUE_ONLY, innermost
from .ops.shape import getitem
from ._refusals import (STORED_INTO_PLAIN, STORED_INTO_PLAIN_COMPLEX, _INSIDE_NUMPY_HINTS, _PLAIN_HINT,
                        _SPELLED_WITH, _WRITERS, _conversion_cause, _copyto_refused, _instead_of_math,
                        _library_caller, _numpy_caller, _solver_refused, _source_line, _stores_an_item,
                        _undispatched, _writer_refused, integrator_refused)


_primal = innermost


def _layout(x):
    """The plain value under traced layers, for its shape and dtype only: unlike ``innermost`` this
    is not a read of the value (sparsity detection counts those, see duals.dependencies)."""
    while isinstance(x, Tracer):
        inner = getattr(x, "_val", _layout)
        x = inner if inner is not _layout else x.primal if hasattr(x, "primal") else x._value
    return x


def _binary(name, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = N["array"](other)
        out = N[name](other, self) if reflected else N[name](self, other)
        if out is self or out is other or (isinstance(out, Tracer) and out._family is not None):
            return _new_array(out, (self, other))
        return out
    method.__name__ = name
    return method


def _new_array(result, inputs):
    """``result``, or a copy where a shortcut returned one of the traced ``inputs`` itself, or a
    view of it (``a ** 1``, ``np.tile(a, 1)`` made by a reshape): NumPy's result is a new array
    there, and changing it in place must not make ``a`` stale (duals.core.Family)."""
    if isinstance(result, Tracer):
        family = result._family
        for i in inputs:
            if isinstance(i, Tracer) and (result is i or (family is not None and i._family is family)):
                return N["copy"](result)
    return result


# NumPy functions whose result may be their argument's memory (a view, or the argument itself)
VIEWS = frozenset(("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
                   "atleast_1d", "atleast_2d", "atleast_3d", "asarray", "asanyarray", "ascontiguousarray",
                   "asfortranarray", "real", "imag", "diagonal", "broadcast_to", "flip", "fliplr", "flipud",
                   "rot90", "matrix_transpose", "permute_dims", "diff", "einsum", "squeeze",
                   "sliding_window_view"))


def _compare(op):
    def method(self, other):
        return op(_primal(self), _primal(other))
    return method


def _no_complex(self):
    _no_float(self, complex_number=True)


def _no_float(self, complex_number=False):
    if getattr(self._trace, "imperative", False):
        raise _refused(
            "float() of a Var would drop its derivative from the tape. To log or print it take "
            "v.item() (a Python number, detached, as PyTorch's) or v.value (its NumPy value); in "
            "a computation keep the Var (np.* functions instead of math.*)")
    if getattr(self, "_outlives_transformations", None) is not None and self._outlives_transformations():
        raise _refused(
            "float() of a duals.Dual would drop its derivative: take d.primal (its value) or "
            "d.tangent. A Dual held in a global variable of @numba.njit code cannot be frozen into "
            "the compiled code as a constant: pass it to the function as an argument")
    inside = _numpy_caller()
    if inside is not None:
        raise _refused(_undispatched(inside, "turns it into a Python number"))
    import sys
    library, frame, _ = _library_caller(sys._getframe(1), ("scipy",))
    if library is not None and library.startswith("scipy.optimize"):
        raise _refused(_solver_refused(library))
    if library is not None and library.startswith("scipy.integrate"):
        raise _refused(integrator_refused(library))
    if library is None and _stores_an_item(_source_line(frame)):   # (a complex buffer asks for a number)
        # (compiled code takes complex arithmetic but not complex linear algebra: no @njit advice)
        raise _refused(STORED_INTO_PLAIN_COMPLEX if complex_number else STORED_INTO_PLAIN)
    from .float_warnings import _user_frame   # (float(x), complex(x) through _no_complex, math.sin(x))
    raise _refused(
        "converting a traced value to a Python number would drop its derivative. Keep it "
        f"as an array ({_instead_of_math(_user_frame(sys._getframe(1)))}), or take duals.stop_gradient(x) "
        "explicitly; inside @numba.njit code use duals.jacfwd on the compiled function")


def _round(self, ndigits=None):
    """round(x[, ndigits]): the rounded plain value (a step function: derivative 0), as NumPy's."""
    value = np.asarray(_primal(self))
    return round(value[()], ndigits) if value.ndim == 0 else np.round(value, ndigits or 0)


def _int(self):
    """int(x) truncates the value: a step function, whose derivative is 0 wherever it has one
    (as ``floor``'s), so ``n = int(T / dt)`` works with ``dt`` traced."""
    return int(_primal(self))


def _no_index(self):
    """range(x), a list index, a repeat count: whole numbers that a derivative cannot pass
    through (int(x) truncates on purpose; an index must not be differentiated)."""
    raise TypeError(
        "a traced value was used as a whole number (range(n), a list index, a repeat count); a "
        "count or a setting is not differentiated: keep it out of the differentiated arguments "
        "(argnums), or, in a dict of parameters, pass it as another argument (ints there are "
        "differentiated as floats); int(x) takes the value on purpose")


_SCIPY = os.sep + "scipy" + os.sep
_NUMBA_UFUNCS = os.sep + os.path.join("numba", "np", "ufunc") + os.sep   # (a @vectorize's call)


def _at_user_line():
    """`` (in file, line N)``: the user's line that made the refused call (SciPy's is not theirs)."""
    from .float_warnings import _user_frame, at_line
    return at_line(_user_frame(sys._getframe(1), also=(_SCIPY, _NUMBA_UFUNCS)))


def _refused(message):
    """The TypeError of a refused NumPy call on a traced value, naming the user's line."""
    return TypeError(message + _at_user_line())


def _no_array(self, dtype=None, copy=None):
    error = _refused("a traced value cannot become a plain NumPy array without losing its "
                     "derivative: " + _conversion_cause())
    if _library_caller(sys._getframe(1), ("scipy",))[0] is not None:
        _REFUSED_IN_SCIPY.error = error   # (SciPy's compiled code may catch it and raise its own)
    raise error


_REFUSED_IN_SCIPY = threading.local()


ARRAY_ONLY = ("flags", "strides", "itemsize", "nbytes", "ctypes", "data", "tobytes")


def refuse_array_only(self, name):
    """``x.flags``, ``x.strides``...: an attribute of plain arrays only, which a library may read
    before it converts its argument (``scipy.fftpack.fft`` reads ``x.flags``); an AttributeError
    that says what the library does and what to write instead, as ``__array__``'s refusal."""
    missing = f"{type(self).__name__!r} object has no attribute {name!r}"
    if _library_caller(sys._getframe(1))[0] is None:
        raise AttributeError(f"{missing} (a traced value is not a plain NumPy array)")
    raise AttributeError(f"{missing}: {_conversion_cause()}{_at_user_line()}")


def refusal_swallowed(exc, before):
    """The refusal of a conversion inside SciPy's code (since ``before``, the value of
    :func:`last_scipy_refusal` when the call began) that SciPy caught and replaced by ``exc``,
    a ValueError or TypeError raised in SciPy's code (``scipy.signal.lfilter``'s C loop says
    "could not convert b, a, and x to a common type"); None otherwise."""
    from .float_warnings import _SCIPY_SPARSE, _raised_in, _raising_frame
    error = last_scipy_refusal()
    if error is None or error is before or error is exc or not isinstance(exc, (ValueError, TypeError)):
        return None
    if _raised_in(exc, _SCIPY_SPARSE):   # (its own hint: call_at_user_line's)
        return None
    frame = _raising_frame(exc)
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return error if module.split(".")[0] == "scipy" else None


def last_scipy_refusal():
    return getattr(_REFUSED_IN_SCIPY, "error", None)


def _setitem(self, index, value):
    if getattr(self._trace, "imperative", False):
        raise _refused(
            "item assignment into a Var is not recorded by the tape: build the new array "
            "(dnp.where(mask, new, x), dnp.concatenate of slices), or change a leaf's value "
            "outside the recording: with duals.no_grad(): w.value[i] = ...")
    raise _refused(
        "item assignment into a traced array is not supported: traced values are immutable. "
        "Use dnp.where(mask, new, x) to replace entries, dnp.concatenate of slices to rebuild "
        "the array, or write the loop in a @numba.njit function (compiled code allows "
        "assignment, in forward and reverse mode)")


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return N["reshape"](self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return N["transpose"](self, axes or None)


def _astype(self, dtype, copy=True):
    kind = np.dtype(dtype).kind
    if kind == "c":
        return self if self.dtype.kind == "c" else N["add"](self, np.zeros((), dtype=dtype))
    if kind != "f":
        inside = _numpy_caller()
        if inside is not None:
            raise TypeError(f"numpy.{inside} turns a traced argument into {np.dtype(dtype)} inside NumPy, "
                            f"which would drop its derivative. {_INSIDE_NUMPY_HINTS.get(inside, _PLAIN_HINT)}")
        if kind in "iub":   # truncated values, as int(x): a step function, derivative 0 (an index)
            return np.asarray(_primal(self)).astype(dtype, copy=copy)
        raise TypeError(f"astype({np.dtype(dtype)}) of a traced value would drop its derivative; "
                        f"keep a float dtype")
    if self.dtype.kind == "c":
        raise TypeError(f"astype({np.dtype(dtype)}) of a complex traced value would drop its "
                        f"imaginary part silently; take np.real(z) (or np.abs(z)) explicitly")
    if np.dtype(dtype) != self.dtype:      # another float precision: rounded, as NumPy does
        from .ops.conversions import astype_p
        return astype_p(self, dtype=np.dtype(dtype))
    return N["copy"](self) if copy else self


def _in_place(name):
    """``a op= b`` of a traced value: a new value for the name ``a``, and every other name for the
    old one made stale (duals.core.Family), where NumPy would have changed it."""
    def method(self, other):
        result = N[name](self, other)
        changed_in_place(self)
        return result
    method.__name__ = f"in_place_{name}"
    return method


def _iter(self):
    n = len(self)
    for i in range(n):
        yield self[i]


def _len(self):
    s = self.shape
    if not s:
        raise TypeError("len() of a 0-d traced value")
    return s[0]


_CALLS = {}   # ufunc -> the duals function a plain call of it takes (learnt on first use)


def _bincount_of(index, values, inputs):
    """The np.bincount that sums ``values`` by ``index`` (the advice for a scattered a[idx] += v),
    by real and imaginary parts when an operand is complex: bincount takes real weights only."""
    if any(np.iscomplexobj(_primal(v)) for v in inputs):
        return (f"(np.bincount({index}, weights={values}.real, minlength=a.size) + 1j * "
                f"np.bincount({index}, weights={values}.imag, minlength=a.size))")
    return f"np.bincount({index}, weights={values}, minlength=a.size)"


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    for i in inputs:
        if type(i) is list or type(i) is tuple:   # np.multiply(x, [1.0, 2.0]): an array, as NumPy reads it
            inputs = tuple(N["array"](i) if type(i) in (list, tuple) else i for i in inputs)
            break
    if not kwargs and method == "__call__":
        target = _CALLS.get(ufunc)
        if target is not None:
            out = target(*inputs)
            for i in inputs:
                if out is i:
                    return N["copy"](out)
            return _new_array(out, inputs) if isinstance(out, Tracer) and out._family is not None else out
    out = kwargs.get("out")
    if out is not None and method == "__call__" and ufunc.__name__ in VALUE_ONLY:
        # a comparison, isnan, floor ...: a plain result of the values, which out can hold
        return ufunc(*(_primal(i) for i in inputs), **kwargs)
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if any(isinstance(o, Tracer) for o in outs):
            raise _refused(f"numpy.{ufunc.__name__}(..., out=z) writes into a traced value, which cannot "
                           f"change in place; write z = np.{ufunc.__name__}(...) instead")
        if any(o is i for o in outs for i in inputs):
            scatter = (f"; for an indexed a[idx] += v (assembly) a = a + "
                       f"{_bincount_of('idx', 'v', inputs)} on a 1-d a (np.ravel_multi_index for a "
                       f"tuple of index arrays)" if ufunc is np.add else "")
            raise _refused(
                f"an in-place operator on a plain NumPy array (a += v, a[i] += v: numpy."
                f"{ufunc.__name__} into its own input) cannot store a traced value into it; write "
                f"a = a + v{scatter}, build the array with dnp functions (dnp.where, dnp.stack), or "
                f"write the loop in a @numba.njit function (compiled mode allows it)")
        raise _refused(f"numpy.{ufunc.__name__}(..., out=...) cannot write a traced value into an "
                       f"array; drop out= and use the returned value")
    kwargs.pop("out", None)
    if method == "__call__":
        inputs, kwargs = _call_options(ufunc, inputs, kwargs)
        target = _foreign_ufunc(ufunc)
        if target is None and ufunc.__name__ in N:
            target = N[ufunc.__name__]
        if target is not None:
            if not kwargs:
                _CALLS[ufunc] = target
            return _new_array(target(*inputs, **kwargs), inputs)
    table = {"reduce": _REDUCERS, "accumulate": _ACCUMULATORS}.get(method, {})
    if method == "accumulate" and ufunc in (np.maximum, np.minimum) and len(inputs) == 1:
        from .ops.calculus import running_extreme
        return running_extreme(*inputs, **kwargs, largest=ufunc is np.maximum)
    if ufunc.__name__ in table and len(inputs) == 1:
        name, allowed = table[ufunc.__name__]
        kwargs.setdefault("axis", 0)  # a ufunc reduces along the first axis by default
        extra = {k for k, v in kwargs.items() if k not in allowed and v is not None}
        if not extra:
            return N[name](*inputs, **kwargs)
        raise _refused(f"numpy.{ufunc.__name__}.{method} with {', '.join(sorted(extra))}= is not "
                       f"supported on traced values; call duals.numpy.{name} instead")
    if method == "outer" and len(inputs) == 2 and not kwargs and ufunc.nin == 2 and ufunc.nout == 1:
        a, b = inputs       # every pair of entries: a's axes first, then b's
        a_shape, b_shape = np.shape(a), np.shape(b)
        return _array_ufunc(self, ufunc, "__call__", N["reshape"](a, a_shape + (1,) * len(b_shape)), b)
    if method == "at":
        raise _refused(
            f"numpy.{ufunc.__name__}.at(a, indices, b) changes a in place, which cannot hold a traced "
            f"value; " + (f"write a + {_bincount_of('indices', 'b', inputs)} for a 1-d a "
                          f"(np.ravel_multi_index for a tuple of index arrays), which is "
                          f"differentiable, " if ufunc is np.add else "")
            + "or write the loop in a @numba.njit function (compiled mode allows a[i] += b[k])")
    numpys = getattr(np, ufunc.__name__, None) is ufunc
    home, name = ("numpy", ufunc.__name__) if numpys else _ufunc_home(ufunc)
    if home == "the ufunc" and method == "__call__":
        if _numba_vectorized_caller() is not None:   # (a default-target @vectorize called from Python)
            raise _refused(
                f"the @numba.vectorize function {ufunc.__name__!r} runs its compiled kernel on plain "
                f"numbers when Python code calls it on a traced value. duals differentiates that "
                f"kernel where compiled code runs it: call it inside the @numba.njit function you "
                f"differentiate, or give it to the transformation itself (duals.jacfwd({ufunc.__name__}, "
                f"argnums=...)); else declare a primitive with its own derivative rules "
                f"(duals.extend.elementwise)")
        raise _refused(
            f"the ufunc {ufunc.__name__!r} is neither NumPy's nor SciPy's, and its kernel is hidden "
            f"from duals: a @numba.vectorize with target='parallel' or 'cuda', np.frompyfunc or "
            f"a C extension's. A @numba.vectorize with the default target is differentiated "
            f"through its kernel (drop target=); else declare it as a primitive with its own "
            f"derivative rules (duals.extend.primitive)")
    raise _refused(_unsupported(f"{home}.{name}{'' if method == '__call__' else '.' + method}"))


def _ufunc_home(ufunc):
    """(module, name) of a ufunc that is not NumPy's: SciPy's special functions, also those that
    a public wrapper calls by a private name (``lambertw`` calls ``_lambertw``); else the ufunc."""
    special = sys.modules.get("scipy.special")
    name = ufunc.__name__
    if special is not None and getattr(special, name, None) is ufunc:
        return "scipy.special", name
    if special is not None and name.startswith("_") and callable(getattr(special, name[1:], None)) \
            and getattr(getattr(special, "_ufuncs", None), name, None) is ufunc:
        return "scipy.special", name[1:]
    return "the ufunc", name


def _numba_vectorized_caller():
    """The @numba.vectorize function (a DUFunc) whose call is running, or None."""
    frame = sys._getframe(2)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if type(owner).__name__ == "DUFunc" and type(owner).__module__.startswith("numba"):
            return owner
        frame = frame.f_back
    return None


def _call_options(ufunc, inputs, options):
    """(inputs, options) for a plain call of ``ufunc`` with keyword options: a float ``dtype=``
    (NumPy's histogram passes one) casts the inputs; an option that would change which entries are
    computed, or drop the derivative, raises naming the way out."""
    options = {k: v for k, v in options.items() if v is not None}
    dtype = options.pop("dtype", None)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc":
            raise _refused(f"numpy.{ufunc.__name__}(..., dtype={dtype}) of a traced value would drop "
                           f"its derivative; keep a float dtype")
        inputs = tuple(x.astype(dtype) if isinstance(x, Tracer) else np.asarray(x, dtype) for x in inputs)
    if options.pop("casting", "same_kind") != "same_kind" or options.pop("order", "K") != "K":
        raise _refused(f"numpy.{ufunc.__name__}: casting= and order= are not supported on traced "
                       f"values; call it without them")
    if "where" in options:
        raise _refused(f"numpy.{ufunc.__name__}(..., where=mask) is not supported on traced values; "
                       f"write np.where(mask, numpy.{ufunc.__name__}(...), fallback) instead")
    options.pop("subok", None)
    if options:
        raise _refused(f"numpy.{ufunc.__name__}: {', '.join(sorted(options))}= is not supported on "
                       f"traced values; call it without")
    return inputs, options


_FOREIGN = {}


def _foreign_ufunc(ufunc):
    """The duals function for a ufunc that is not NumPy's own (``scipy.special.erf``), or None."""
    if getattr(np, ufunc.__name__, None) is ufunc:
        return None
    if ufunc not in _FOREIGN:
        from .ops.special import scipy_ufuncs
        _FOREIGN.update(scipy_ufuncs())
        _FOREIGN.setdefault(ufunc, None)
    return _FOREIGN[ufunc]


def _unsupported(name):
    if name in _SPELLED_WITH:
        return (f"{name} has no derivative rule in duals, so it cannot take a traced value without "
                f"losing the derivative. Write {_SPELLED_WITH[name]} instead")
    return (f"{name} has no derivative rule in duals, so it cannot take a traced value without "
            f"losing the derivative. Write the computation with the functions duals.numpy "
            f"supports (see dir(duals.numpy)), or declare it as a primitive with its own "
            f"derivative rules (duals.extend.primitive)")


# ufunc methods: (duals.numpy function, the keywords it accepts)
_REDUCERS = {"add": ("sum", {"axis", "keepdims", "dtype", "initial", "where"}),
             "maximum": ("max", {"axis", "keepdims"}), "minimum": ("min", {"axis", "keepdims"}),
             "multiply": ("prod", {"axis", "keepdims"}),
             "logaddexp": ("special.logsumexp", {"axis", "keepdims"})}
_ACCUMULATORS = {"add": ("cumsum", {"axis"}), "multiply": ("cumprod", {"axis", "dtype"})}
_FUNCTIONS = {}


def _numpy_function(name):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _array_function(self, func, types, args, kwargs):
    if not _FUNCTIONS:
        for name, impl in N.items():
            target = _numpy_function(name)
            if callable(target):
                _FUNCTIONS[target] = impl
    impl = _FUNCTIONS.get(func)
    if impl is None:
        if func is np.copyto:
            raise _refused(_copyto_refused(_numpy_caller()))
        if getattr(np, func.__name__, None) is func and func.__name__ in _WRITERS:
            raise _refused(_writer_refused(func.__name__))
        if _library_caller(sys._getframe(1), ("scipy",))[0] is not None:   # (inside SciPy's code:
            raise _refused(_conversion_cause())                              # name SciPy's function)
        raise _refused(_unsupported(_public_name(func)))
    out = impl(*args, **kwargs)
    return out if func.__name__ in VIEWS else _new_array(out, args)


def _public_name(func):
    """``numpy.fft.fft`` for a function defined in ``numpy.fft._pocketfft`` (private parts dropped)."""
    module = getattr(func, "__module__", None) or "numpy"
    parts = []
    for part in module.split("."):
        if part.startswith("_"):
            break
        parts.append(part)
    module = ".".join(parts) or "numpy"
    if module in ("numpy.lib", "numpy.core"):
        module = "numpy"
    return f"{module}.{func.__name__}"


def _method(name):
    def method(self, *args, **kwargs):
        return N[name](self, *args, **kwargs)
    method.__name__ = name
    return method


def _item(self, *args):
    """x.item(*args): one entry as a traced 0-d value (``float(x.item())`` is what drops the derivative)."""
    if not args:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return N["reshape"](self, ())
    if len(args) == 1 and isinstance(args[0], (int, np.integer)):
        return getitem(N["reshape"](self, (-1,)), int(args[0]))
    return getitem(self, tuple(args[0]) if len(args) == 1 else args)


def _tolist(self):
    """x.tolist(): nested lists of traced 0-d entries (a 0-d value comes back as itself)."""
    if self.ndim == 0:
        return self
    return [_tolist(row) for row in self]


class _Flat:
    """x.flat: the entries of a traced array in row-major order; reading ``x.flat[i]`` is
    ``x.ravel()[i]``, writing raises as item assignment does."""

    def __init__(self, base):
        self.base = base

    def __getitem__(self, index):
        return getitem(N["ravel"](self.base), index)

    def __setitem__(self, index, value):
        _setitem(self.base, index, value)

    def __iter__(self):
        return iter(N["ravel"](self.base))

    def __len__(self):
        return self.base.size


def _no_fill(self, value):
    raise TypeError("x.fill(value) writes in place, but a traced value is immutable; write "
                    "dnp.full_like(x, value) (import duals.numpy as dnp) instead")


def _no_sort(self, *args, **kwargs):
    raise TypeError("x.sort() sorts in place, but a traced value is immutable; write x = np.sort(x) "
                    "(which keeps the derivative) instead")


def _format(self, spec):
    if not spec:
        return str(self)
    value = np.asarray(_primal(self))
    return format(value[()] if value.ndim == 0 else value, spec)


def _value_method(name):
    """A method returning NumPy's value-only answer for the plain value (argmax, nonzero, ...)."""
    def method(self, *args, **kwargs):
        return getattr(np.asarray(_primal(self)), name)(*args, **kwargs)
    method.__name__ = name
    return method


def install():
    """install(): attach operators, methods and protocols to ``Tracer`` (done once on import)."""
    T = Tracer
    for op, name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                     ("truediv", "divide"), ("pow", "power"), ("matmul", "matmul"),
                     ("floordiv", "floor_divide"), ("mod", "mod")):
        setattr(T, f"__{op}__", _binary(name))
        setattr(T, f"__r{op}__", _binary(name, reflected=True))
        setattr(T, f"__i{op}__", _in_place(name))
    T.__divmod__ = lambda self, other: N["divmod"](self, other)
    T.__rdivmod__ = lambda self, other: N["divmod"](other, self)
    T.__neg__ = lambda self: N["negative"](self)
    T.__pos__ = lambda self: N["copy"](self)     # np.positive: a new array
    T.__abs__ = lambda self: N["abs"](self)
    import operator
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(T, f"__{op}__", _compare(getattr(operator, op)))
    T.__hash__ = object.__hash__
    T.__bool__ = lambda self: bool(_primal(self))
    T.__float__ = _no_float
    T.__int__ = _int
    T.__index__ = _no_index
    T.__round__ = _round
    T.__complex__ = _no_complex
    T.__array__ = _no_array
    for name in ARRAY_ONLY:   # (a Var's __getattr__, which Python calls when they raise, does the same)
        setattr(T, name, property(lambda self, name=name: refuse_array_only(self, name)))
    T.__getitem__ = getitem
    T.__setitem__ = _setitem
    T.__len__ = _len
    T.__iter__ = _iter
    T.__array_ufunc__ = _array_ufunc
    T.__array_function__ = _array_function
    T.shape = property(lambda self: np.shape(_layout(self)))
    T.ndim = property(lambda self: np.ndim(_layout(self)))
    T.size = property(lambda self: int(np.size(_layout(self))))
    T.dtype = property(lambda self: np.result_type(_layout(self)))
    T.T = property(lambda self: N["transpose"](self))
    for name in ("sum", "mean", "var", "std", "prod", "max", "min", "cumsum", "ravel", "squeeze",
                 "swapaxes", "clip", "diagonal", "trace", "dot"):
        setattr(T, name, _method(name))
    T.flatten = lambda self, order="C": N["copy"](N["ravel"](self, order))   # always a copy
    T.reshape = _reshape
    T.transpose = _transpose
    T.astype = _astype
    T.copy = lambda self, order="C": N["copy"](self)
    for name in ("cumprod", "repeat", "take", "round", "searchsorted"):
        setattr(T, name, _method(name))
    for name in ("argmax", "argmin", "argsort", "any", "all", "nonzero"):
        setattr(T, name, _value_method(name))
    T.compress = lambda self, condition, axis=None: N["compress"](condition, self, axis)
    T.conj = T.conjugate = lambda self: N["conj"](self) if self.dtype.kind == "c" else self   # (NumPy's a.conj() of real a is a)
    T.real = property(lambda self: N["real"](self))
    T.imag = property(lambda self: N["imag"](self))
    T.item = _item
    T.tolist = _tolist
    T.sort = _no_sort
    T.fill = _no_fill
    T.flat = property(_Flat)
    T.__format__ = _format
