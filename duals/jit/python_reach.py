"""Whether compiled code can reach Python's or NumPy's global random generators.

A derivative that takes several passes holds the random states fixed across them
(:mod:`duals.random_states`). Code compiled in nopython mode draws from Numba's own generators
(``np.random.*`` and ``random.*`` in @njit code use a state of Numba's), so its passes need to
hold only those, unless the code escapes to the interpreter (``numba.objmode``) or calls
something whose code duals cannot see. Holding NumPy's legacy state costs about 0.2 ms a call
(NumPy copies its 624 words one by one, to read it and to set it), which a small compiled
function's Jacobian in chunks paid on every call. The answer is conservative: anything not
known to be compiled code of the function's own (a user module, a plain Python function, an
object argument) counts as reaching Python.

>>> import numba, numpy as np
>>> may_reach_python(numba.njit(lambda x: np.sin(x) * 2.0), (np.ones(2),))
False
"""
import types
import weakref

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

__all__ = ["may_reach_python"]

_KNOWN = weakref.WeakKeyDictionary()   # dispatcher -> whether its code may reach Python
_COMPILED_MODULES = ("numpy", "math", "cmath", "numba", "duals")
_PLAIN_VALUES = (int, float, complex, bool, str, bytes, type(None), np.number, np.bool_, np.ndarray,
                 np.random.Generator, np.random.RandomState)


def may_reach_python(f, args=()):
    """may_reach_python(f, args=()) -> False when dispatcher ``f`` called on ``args`` can only run
    compiled code (its own, the dispatchers it calls or is given, Numba's and NumPy's): no
    ``objmode``, nothing it calls that duals cannot see into."""
    for a in args:
        if isinstance(a, Dispatcher):
            if may_reach_python(a):
                return True
        elif not _plain_value(a):
            return True
    found = _KNOWN.get(f)
    if found is None:
        found = _KNOWN[f] = _reaches(f, set())
    return found


def _plain_value(a):
    if isinstance(a, (tuple, list)):
        return all(_plain_value(v) for v in a)
    return isinstance(a, _PLAIN_VALUES)


def _reaches(dispatcher, seen):
    if id(dispatcher) in seen:
        return False
    seen.add(id(dispatcher))
    options = getattr(dispatcher, "targetoptions", None)
    py = getattr(dispatcher, "py_func", None)
    if py is None or options is None:   # (a @vectorize function: not looked into)
        return True
    if options.get("forceobj") or not options.get("nopython", True):
        return True
    names = py.__globals__
    for code in _codes(py.__code__):
        for name in code.co_names:
            if "objmode" in name:
                return True
            if name in names and _reaches_through(names[name], seen):
                return True
    cells = [c.cell_contents for c in (py.__closure__ or ()) if _filled(c)]
    return any(_reaches_through(v, seen) for v in cells + list(py.__defaults__ or ()))


def _reaches_through(obj, seen):
    """Whether a global, a closure cell or a default of compiled code may reach Python."""
    if isinstance(obj, Dispatcher):
        return _reaches(obj, seen)
    if isinstance(obj, type(numba.objmode)):   # (under another name: from numba import objmode as om)
        return True
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] not in _COMPILED_MODULES
    if _plain_value(obj):
        return False
    module = (getattr(obj, "__module__", None) or "").split(".")[0]
    return module not in _COMPILED_MODULES + ("builtins",)


def _codes(code):
    """``code`` and the code objects nested in it (inner functions, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:   # an empty cell
        return False
    return True
