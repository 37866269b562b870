"""Calling a user's Numba dispatcher on duals: checks, dual arrays, promotion, results.

The entry points of compiled forward mode (:mod:`duals.jit.api`) and reverse mode
(:mod:`duals.jit.reverse`) run the user's own dispatcher through :func:`call_on_duals`, which
turns Numba's failures into errors that name the problem, and read its results back here.

>>> import numba, numpy as np
>>> y = call_on_duals(numba.njit(lambda x: 2.0 * x), [dual_array(np.ones(2), np.ones((1, 2)))], "jvp")
>>> _parts(y)[1].tolist()   # (entries, lanes)
[[2.0], [2.0]]
"""
import os
import threading
import weakref

import numpy as np
from numba.core import errors as nb_errors
from numba.core.registry import CPUDispatcher

from .. import tree
from ..core import Tracer
from ..forward import Dual
from ..arguments import as_input as _as_input, is_compiled as _is_compiled
from ..random_states import before_call
from ._types import _typeof_dual, dtype_of_type
from .errors import MARK, needed_integers, plain_failure, reraise
from . import promotion_notes
from .running import TRACED_ARGUMENT, counted
from .promotion import dual_type_of, promoted_arguments, promoted_call
from .vectorized import entry, is_vectorized
from .seeding import as_duals, dual_buffer, float_dtype



def _check_dispatcher(f, who):
    """The dispatcher to call for ``f`` (``@vectorize`` functions get one), or a clear error."""
    if type(f) is CPUDispatcher:
        return f
    if is_vectorized(f):
        dispatcher = entry(f)
        _PROMOTING[dispatcher] = True  # a ufunc runs on duals only through its kernel
        return dispatcher
    if not _is_compiled(f):
        import duals
        name = who.replace("compiled_", "")
        other = (f", or use duals.{name} on a plain Python function" if callable(getattr(duals, name, None))
                 else " (it works on compiled code only)")
        raise TypeError(f"{who}: expected a Numba dispatcher (a function decorated with "
                        f"@numba.njit), got {type(f).__name__}; decorate it with @numba.njit{other}")
    return f


def _input(x, who, what):
    """``_as_input`` with a fast path for the common float and float-array arguments."""
    if type(x) is float or (type(x) is np.ndarray and x.ndim and x.dtype.kind == "f"):
        return x
    if isinstance(x, Tracer):
        raise TypeError(f"{who} of a Numba dispatcher: {what} {TRACED_ARGUMENT}")
    return _as_input(x, who, what)


_REUSED = threading.local()


def _reused(key, make, *args):
    """A per-thread object for ``key``, made once by ``make(*args)`` (seeded buffers, reused by calls)."""
    store = getattr(_REUSED, "store", None)
    if store is None:
        store = _REUSED.store = {}
    found = store.get(key)
    if found is None:
        if len(store) > 256:
            store.clear()
        found = store[key] = make(*args)
    return found


def dual_array(primal, tangents, inner=None):
    """dual_array(primal, tangents, inner=None) -> an array of dual dtype (0-d for a scalar).

    ``tangents`` has shape ``(lanes,) + primal.shape``. With ``inner=(inner_tangents,)`` the
    result is a nested dual whose real part carries ``inner_tangents`` and whose outer lanes
    are ``tangents`` (the seeds of forward over forward).

    >>> dual_array(np.array([1.0, 2.0]), np.eye(2))["tangent"].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    p = np.asarray(primal)
    arr = p.reshape(-1)
    tangents = np.asarray(tangents, dtype=float_dtype(p)).reshape(-1, arr.size)
    if inner is None:
        lanes = (tangents.shape[0],)
        buf = dual_buffer(arr, lanes)
        buf[:, 1:] = tangents.T
    else:
        inner_t = np.asarray(inner[0], dtype=float_dtype(p)).reshape(-1, arr.size)
        lanes = (tangents.shape[0], inner_t.shape[0])
        buf = dual_buffer(arr, lanes)
        buf[:, 0, 1:] = inner_t.T
        buf[:, 1:, 0] = tangents.T
    return as_duals(buf, arr, lanes).reshape(p.shape)


def _plain(y, who):
    if isinstance(y, (float, int, np.number, np.ndarray, bool, np.bool_)):
        return y
    raise TypeError(f"{who}: the compiled function returned a {type(y).__name__}; return floats, "
                    f"arrays or tuples of them")


def _is_dual_array(y):
    return type(y) is np.ndarray and y.dtype.names == ("primal", "tangent")


def _parts(y):
    """(primal, tangent lanes ``out + (lanes,)``) of a first-order dual result, or None."""
    if type(y) is np.ndarray:
        return (y["primal"], y["tangent"]) if _is_dual_array(y) else None
    if isinstance(y, Dual) and not isinstance(y.primal, (np.ndarray, Dual)):
        return y.primal, y._tangent
    return None


def _as_struct(y):
    """A result leaf as an array of dual dtype, or None when it carries no dual."""
    if isinstance(y, Dual) and not isinstance(y.primal, np.ndarray):
        arr = np.zeros((), dtype=dtype_of_type(_typeof_dual(y, None)))
        _fill(arr, y)
        return arr
    if _is_dual_array(y):
        return y
    return None


def _fill(view, y):
    if isinstance(y.primal, Dual):
        _fill(view["primal"], y.primal)
    else:
        view["primal"] = y.primal
    view["tangent"] = y._tangent


_UFUNC_OPERAND = "unsupported type for input operand"
_PROMOTING = weakref.WeakKeyDictionary()  # dispatcher -> False (its own dual code), True (the
                                          # promoting copy), "arguments" (and promoted arguments)


def call_on_duals(f, args, who):
    """``f(*args)``, counted as a running transformation (:mod:`.running`); by the promoting
    specialisation (:mod:`.promotion`) when the dual one does not type because the function
    stores duals into arrays it makes itself, and always for ``parallel=True`` functions (whose
    promoting copy runs serially). The decision is kept for the process, and on disk for a
    function cached on disk (:mod:`.promotion_notes`)."""
    before_call()
    return counted(_call_on_duals, f, args, who)


def _call_on_duals(f, args, who):
    mode = _PROMOTING.get(f)   # None: not called yet; False: its own specialisation served
    if not mode and not f.targetoptions.get("parallel"):
        if mode is None:
            noted = promotion_notes.recall(f, _dual_positions(args))
            if noted is not None:
                _PROMOTING[f] = noted
                try:
                    return _promoting_call(f, args, who)
                except TypeError as exc:
                    if not hasattr(exc, "numba_error"):
                        raise
                    promotion_notes.forget(f, _dual_positions(args))   # a callee changed: decide again
                    del _PROMOTING[f]
        try:
            out = f(*args)
        except (nb_errors.NumbaError, TypeError) as exc:  # did not compile (older Numba raise
            _refuse_wrong_arity(f, exc, who)  # TypeError for some): the promoting copy is tried
        except NotImplementedError as exc:
            # a lazy @vectorize function alone: Numba's ufunc machinery typed it for duals and
            # cannot lower it; the promoting copy applies its kernel (duals.jit.vectorized)
            if not str(exc).startswith(_UFUNC_OPERAND):
                raise
        else:
            if mode is None:
                _PROMOTING[f] = False
            return out
        out = _promoting_call(f, args, who)
        promotion_notes.remember(f, _dual_positions(args), _PROMOTING[f])
        return out
    return _promoting_call(f, args, who)


def _refuse_wrong_arity(f, exc, who):
    """Raise Numba's "not enough / too many arguments" as the entry point's own error, naming the
    signature (rather than compiling the promoting copy only to fail the same way)."""
    wrong = ("not enough arguments", "too many arguments")
    if isinstance(exc, TypeError) and str(exc).startswith(wrong):
        import inspect
        signature = inspect.signature(f.py_func)
        raise TypeError(f"{who}: {exc} ({getattr(f, '__name__', 'f')}{signature})") from None


def _dual_positions(args):
    return tuple(i for i, a in enumerate(args) if dual_type_of([a]) is not None)


def _promoting_call(f, args, who):
    """``f(*args)`` by the promoting copy (with promoted arguments where that is what it takes);
    records in ``_PROMOTING`` which one did it."""
    mode = _PROMOTING.get(f)
    if mode != "arguments":
        try:
            out = promoted_call(f, args)
            _PROMOTING[f] = True
            return out
        except np.exceptions.DTypePromotionError as exc:   # raised by typing, not a NumbaError
            raise _no_common_dtype(exc, who) from None
        except nb_errors.NumbaError as exc:  # compiling failed (errors inside the code pass through)
            # (also when the copy served before: with other arguments differentiated, a plain
            # array the code stores into may be one it was given, which only promotion serves)
            if not any(_is_float_array(a) for a in args):
                _uncompiled(f, args, exc, who)
            first = exc
    try:  # a plain array argument rebound to hold duals (x = x0, then x = step(x, p)): promote it
        out = promoted_call(f, promoted_arguments(args))
    except nb_errors.NumbaError as again:
        _uncompiled(f, args, first if mode != "arguments" else again, who)
    _PROMOTING[f] = "arguments"
    return out


def _no_common_dtype(exc, who):
    """The error for a function of Numba's NumPy support that asks NumPy for a common dtype of a
    dual array's (a structured dtype: there is none), naming the function being typed and the
    call's line, both read from the traceback's typing frames."""
    name, where, tb = None, "", exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        this = frame.f_locals.get("self")
        key = getattr(this, "key", None)    # a typing template: the function it types
        if name is None and callable(key) and getattr(key, "__module__", "").startswith("numpy"):
            name = f"{key.__module__}.{key.__name__}"   # (the outermost: the one the code calls)
        loc = getattr(this, "loc", None)    # a call constraint: the call's place in the code
        if getattr(loc, "filename", None) and not name:
            where = f" (in {loc.filename}, line {loc.line})"
        if name is None and f"{os.sep}numba{os.sep}np{os.sep}" in frame.f_code.co_filename:
            name = frame.f_code.co_name
        tb = tb.tb_next
    return TypeError(f"{who}: Numba's implementation of {name or 'a NumPy function'} cannot take "
                     f"arrays of duals (it asks NumPy for a common dtype, which a dual array has "
                     f"not); write that computation with loops and arithmetic, or differentiate it "
                     f"on the Python path (duals.numpy){where}")


def _uncompiled(f, args, exc, who):
    """Raise the compile error ``exc`` of ``f`` on duals as the entry point's own (duals' own
    message where it has one), or the plain values' error when ``f`` does not compile for those
    either (the function has a bug)."""
    plain = None if MARK in str(exc) else plain_failure(f, args)
    name = getattr(f, "__name__", None)
    counts = needed_integers(f, args) if plain is not None else ()
    if counts:
        them = "it" if len(counts) == 1 else "them"
        raise TypeError(f"{who}: {name} needs integers in {_numbered(counts)}, which "
                        f"{'holds' if len(counts) == 1 else 'hold'} whole numbers differentiated as "
                        f"floats (a count, an index array); leave {them} out of argnums (in jvp, give "
                        f"{them} the tangent None), and so a loop count (range(n)) too") from None
    reraise(exc if plain is None else plain, who, name, plain_too=plain is not None)


def _numbered(positions):
    """``argument 1``, ``arguments 1 and 2``, ``arguments 1, 2 and 3``."""
    words = [str(p) for p in positions]
    if len(words) == 1:
        return f"argument {words[0]}"
    return f"arguments {', '.join(words[:-1])} and {words[-1]}"


def _is_float_array(a):
    return type(a) is np.ndarray and a.dtype.kind in "fc"


def _shape(x):
    if isinstance(x, np.ndarray):
        return x.shape
    return () if isinstance(x, (float, int, np.generic)) else np.shape(x)


def _leaves(out):
    """Results as leaves: a lone array or float is not walked as a tree."""
    if type(out) is np.ndarray or isinstance(out, (Dual, float)):
        return [out], None
    return tree.flatten(out)


def _rebuild(treedef, leaves):
    return leaves[0] if treedef is None else tree.unflatten(treedef, leaves)
