"""Python operators, array methods and the NumPy protocols for every traced value.

Defined once on :class:`~duals.core.Tracer`, so ``Dual`` and ``Var`` behave alike: an
operator calls the ``duals.numpy`` function of the same meaning, a comparison compares
primal values, and ``np.sin(x)`` or ``np.sum(x)`` reach the library through
``__array_ufunc__`` / ``__array_function__`` (:mod:`duals._array_protocols`).

Methods that would leave the array world keep the derivative instead of dropping it:
``x.item()`` is the entry as a traced 0-d value and ``x.tolist()`` nested lists of them (so
``if x.item() > tol`` and ``sum(x.tolist())`` work and differentiate); only a real conversion to a
Python number (``float(x)``, ``math.exp(x)``) is refused, with the error that says why. Value-only
methods (``argmax``, ``argsort``, ``any``, ``nonzero``, ``round``, ...) and ``int(x)`` (a step
function: derivative 0) return plain results, ``f"{x:.3f}"`` formats the value, ``x.real``,
``x.imag`` and ``x.conj()`` are ``np.real(x)``, ... (docs/complex.md) and ``x.sort()``, which
would sort in place, raises: write ``x = np.sort(x)``.
"""
import sys
import threading

import numpy as np

from .core import Tracer, changed_in_place
from .ops import NAMESPACE as N
from .ops import innermost
from .ops.shape import getitem
from ._array_protocols import array_function, array_ufunc, new_array
from ._refusals import (STORED_INTO_PLAIN, STORED_INTO_PLAIN_COMPLEX, _INSIDE_NUMPY_HINTS, _PLAIN_HINT,
                        _at_user_line, _conversion_cause, _instead_of_math, _library_caller, _numpy_caller,
                        _refused, _solver_refused, _source_line, _stores_an_item, _undispatched,
                        integrator_refused)


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
            return new_array(out, (self, other))
        return out
    method.__name__ = name
    return method


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
        raise _noted_in_scipy(_refused(_solver_refused(library)))
    if library is not None and library.startswith("scipy.integrate"):
        raise _noted_in_scipy(_refused(integrator_refused(library)))
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


def _no_array(self, dtype=None, copy=None):
    error = _refused("a traced value cannot become a plain NumPy array without losing its "
                     "derivative: " + _conversion_cause())
    if _library_caller(sys._getframe(1), ("scipy",))[0] is not None:
        _noted_in_scipy(error)
    raise error


def _noted_in_scipy(error):
    """``error``, kept as the last refusal inside SciPy: SciPy's compiled code may catch it and
    raise its own (see :func:`refusal_swallowed`)."""
    _REFUSED_IN_SCIPY.error = error
    return error


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
    an error raised in SciPy's code (``scipy.signal.lfilter``'s C loop says "could not convert b,
    a, and x to a common type", MINPACK's fsolve "Result from function call is not a proper
    array of floats", brentq a SystemError); None otherwise."""
    from .float_warnings import _SCIPY_SPARSE, _raised_in, _raising_frame
    error = last_scipy_refusal()
    if error is None or error is before or error is exc:
        return None
    if _raised_in(exc, _SCIPY_SPARSE):   # (its own hint: call_at_user_line's)
        return None
    if exc.__cause__ is error or exc.__context__ is error:   # (SciPy's C code chained it: brentq's)
        return error
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
    T.__array_ufunc__ = array_ufunc
    T.__array_function__ = array_function
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
