"""Python operators, array methods and the NumPy protocols for every traced value.

Defined once on :class:`~duals.core.Tracer`, so ``Dual`` and ``Var`` behave alike: an
operator calls the ``duals.numpy`` function of the same meaning, a comparison compares
primal values, and ``np.sin(x)`` or ``np.sum(x)`` reach the library through
``__array_ufunc__`` / ``__array_function__``.
"""
import numpy as np

from .core import Tracer
from .ops import NAMESPACE as N
from .ops import innermost
from .ops.shape import getitem


_primal = innermost


def _binary(name, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = N["array"](other)
        return N[name](other, self) if reflected else N[name](self, other)
    method.__name__ = name
    return method


def _compare(op):
    def method(self, other):
        return op(_primal(self), _primal(other))
    return method


def _no_float(self):
    raise TypeError(
        "converting a traced value to a Python number would drop its derivative. Keep it "
        "as an array (use dnp.* / np.* functions instead of math.*), or take duals.stop_gradient(x) "
        "explicitly; inside @numba.njit code use duals.jacfwd on the compiled function")


def _no_array(self, dtype=None, copy=None):
    raise TypeError(
        "a traced value cannot become a plain NumPy array without losing its derivative. "
        "This usually means a NumPy function without a duals rule was called, or a traced "
        "value was stored into a float array; build arrays with dnp.stack / dnp.array or "
        "dnp.where instead")


def _setitem(self, index, value):
    raise TypeError(
        "item assignment into a traced array is not supported: traced values are immutable. "
        "Use dnp.where(mask, new, x) to replace entries, dnp.concatenate of slices to rebuild "
        "the array, or write the loop in a @numba.njit function (compiled forward mode "
        "allows assignment)")


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return N["reshape"](self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return N["transpose"](self, axes or None)


def _astype(self, dtype, copy=True):
    if np.dtype(dtype).kind != "f":
        raise TypeError(f"astype({np.dtype(dtype)}) of a traced value would drop its derivative; "
                        f"keep a float dtype")
    return self


def _iter(self):
    n = len(self)
    for i in range(n):
        yield self[i]


def _len(self):
    s = self.shape
    if not s:
        raise TypeError("len() of a 0-d traced value")
    return s[0]


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if kwargs.get("out") is not None:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=...) cannot write a traced value into an "
                        f"array; drop out= and use the returned value")
    if method == "__call__" and ufunc.__name__ in N:
        return N[ufunc.__name__](*inputs, **kwargs)
    if method == "reduce" and ufunc.__name__ in _REDUCERS:
        return N[_REDUCERS[ufunc.__name__]](*inputs, **kwargs)
    raise TypeError(f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} has no "
                    f"derivative rule in duals; see duals.numpy for the supported functions, or "
                    f"declare a custom primitive")


_REDUCERS = {"add": "sum", "maximum": "max", "minimum": "min", "multiply": "prod"}
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
        module = getattr(func, "__module__", "numpy") or "numpy"
        module = "numpy" if module.startswith("numpy") and "linalg" not in module else module
        raise TypeError(f"{module}.{func.__name__} has no derivative rule in duals; "
                        f"see duals.numpy for the supported functions, or declare a custom primitive")
    return impl(*args, **kwargs)


def _method(name):
    def method(self, *args, **kwargs):
        return N[name](self, *args, **kwargs)
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
    T.__neg__ = lambda self: N["negative"](self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: N["abs"](self)
    import operator
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(T, f"__{op}__", _compare(getattr(operator, op)))
    T.__hash__ = object.__hash__
    T.__bool__ = lambda self: bool(_primal(self))
    T.__float__ = _no_float
    T.__int__ = _no_float
    T.__complex__ = _no_float
    T.__array__ = _no_array
    T.__getitem__ = getitem
    T.__setitem__ = _setitem
    T.__len__ = _len
    T.__iter__ = _iter
    T.__array_ufunc__ = _array_ufunc
    T.__array_function__ = _array_function
    T.shape = property(lambda self: np.shape(_primal(self)))
    T.ndim = property(lambda self: np.ndim(_primal(self)))
    T.size = property(lambda self: int(np.size(_primal(self))))
    T.dtype = property(lambda self: np.result_type(_primal(self)))
    T.T = property(lambda self: N["transpose"](self))
    for name in ("sum", "mean", "var", "std", "prod", "max", "min", "cumsum", "ravel", "squeeze",
                 "swapaxes", "clip", "diagonal", "trace", "dot"):
        setattr(T, name, _method(name))
    T.flatten = _method("ravel")
    T.reshape = _reshape
    T.transpose = _transpose
    T.astype = _astype
    T.copy = lambda self: self
