"""The NumPy protocols of traced values: ``__array_ufunc__`` and ``__array_function__``.

``np.sin(x)``, ``np.add.reduce(x)`` or ``np.linalg.solve(A, b)`` of a traced value reach the
``duals.numpy`` function of the same name (SciPy's special-function ufuncs theirs); a call that
would write into a plain array (``out=``, ``ufunc.at``, ``np.copyto``) or that has no rule raises
naming the user's line and what to write instead. A result is a new array where NumPy's is: never
one of the traced inputs themselves (:func:`new_array`).

>>> import duals, numpy as np
>>> float(duals.grad(lambda x: np.sum(np.multiply.reduce(x)))(np.array([2.0, 3.0]))[0])
3.0
"""
import sys

import numpy as np

from .core import Tracer
from .ops import NAMESPACE as N
from .ops import VALUE_ONLY, innermost
from ._refusals import (_SPELLED_WITH, _WRITERS, _conversion_cause, _copyto_refused, _library_caller,
                        _numpy_caller, _refused, _writer_refused)

_primal = innermost

# NumPy functions whose result may be their argument's memory (a view, or the argument itself)
VIEWS = frozenset(("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
                   "atleast_1d", "atleast_2d", "atleast_3d", "asarray", "asanyarray", "ascontiguousarray",
                   "asfortranarray", "real", "imag", "diagonal", "broadcast_to", "flip", "fliplr", "flipud",
                   "rot90", "matrix_transpose", "permute_dims", "diff", "einsum", "squeeze",
                   "sliding_window_view"))


def new_array(result, inputs):
    """``result``, or a copy where a shortcut returned one of the traced ``inputs`` itself, or a
    view of it (``a ** 1``, ``np.tile(a, 1)`` made by a reshape): NumPy's result is a new array
    there, and changing it in place must not make ``a`` stale (duals.core.Family)."""
    if isinstance(result, Tracer):
        family = result._family
        for i in inputs:
            if isinstance(i, Tracer) and (result is i or (family is not None and i._family is family)):
                return N["copy"](result)
    return result




_CALLS = {}   # ufunc -> the duals function a plain call of it takes (learnt on first use)


def _bincount_of(index, values, inputs):
    """The np.bincount that sums ``values`` by ``index`` (the advice for a scattered a[idx] += v),
    by real and imaginary parts when an operand is complex: bincount takes real weights only."""
    if any(np.iscomplexobj(_primal(v)) for v in inputs):
        return (f"(np.bincount({index}, weights={values}.real, minlength=a.size) + 1j * "
                f"np.bincount({index}, weights={values}.imag, minlength=a.size))")
    return f"np.bincount({index}, weights={values}, minlength=a.size)"


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
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
            return new_array(out, inputs) if isinstance(out, Tracer) and out._family is not None else out
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
            return new_array(target(*inputs, **kwargs), inputs)
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
        return array_ufunc(self, ufunc, "__call__", N["reshape"](a, a_shape + (1,) * len(b_shape)), b)
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


def numpy_function(name):
    """numpy_function("linalg.solve") -> numpy.linalg.solve, or None."""
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def array_function(self, func, types, args, kwargs):
    if not _FUNCTIONS:
        for name, impl in N.items():
            target = numpy_function(name)
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
    return out if func.__name__ in VIEWS else new_array(out, args)


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
