"""Whether a compiled transformation is running, so a ``duals.Dual`` made by the user's own
compiled code can refuse to meet the transformation's duals.

Inside ``@njit`` code, ``Dual(1.0, 1.0)`` has the type of a one-lane dual, which is also the
type of ``duals.jvp``'s own duals (and of ``jacfwd``'s with one input): the two perturbations
would be added together, a wrong number (``x * d/dy (x + y)`` would come out 2 instead of 1).
So every compiled entry point counts itself in a process-wide counter while it runs
(:func:`transformation`), and the compiled constructor raises while the counter is not zero
(:func:`transformations_running`). The count is the length of a list (one item per running
transformation: appending and popping take no lock), which compiled code reads where the
interpreter keeps it, through a named symbol, so code cached on disk finds it in every
process. It counts every thread's transformations (compiled code has no cheap view of Python's
threads), so another thread's plain call that makes a Dual while a transformation runs raises
too: conservative, never wrong.

>>> transformations_running_now()
False
"""
import ctypes
import functools
import threading

import llvmlite.binding as llvm
import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

__all__ = ["transformation", "counted", "transformations_running", "transformations_running_now",
           "refuse_user_duals", "NESTED_DUAL", "TRACED_ARGUMENT"]

_SYMBOL = "duals_compiled_transformations_running"
# One item per running transformation: list.append and list.pop are atomic (under the GIL and in
# free-threaded builds), so entering and leaving take no lock; compiled code reads the list's
# length where CPython keeps it, found below (a lock-guarded C counter where it is not found).
_RUNNING = []


def _length_field(probe):
    """The address of ``probe``'s length in the list object, or None (offsets within the
    object's header: 16 in CPython, 32 in its free-threaded build)."""
    for offset in range(8, 40, 8):
        field = ctypes.c_ssize_t.from_address(id(probe) + offset)
        sizes = []
        for n in (0, 3, 1, 0):
            del probe[:]
            probe.extend([None] * n)
            sizes.append(field.value)
        if sizes == [0, 3, 1, 0]:
            return id(probe) + offset
    return None


class _CountedList(list):
    """A list that also keeps its length in a C counter, for an interpreter that keeps a list's
    length where :func:`_length_field` does not find it."""
    count = ctypes.c_int64(0)
    lock = threading.Lock()

    def append(self, item):
        with self.lock:
            list.append(self, item)
            self.count.value = len(self)

    def pop(self):
        with self.lock:
            list.pop(self)
            self.count.value = len(self)


_LENGTH = _length_field(_RUNNING)
if _LENGTH is None:
    _RUNNING = _CountedList()
    _LENGTH = ctypes.addressof(_CountedList.count)
llvm.add_symbol(_SYMBOL, _LENGTH)

NESTED_DUAL = ("duals.Dual(...) made inside @njit code while a compiled transformation (jvp, "
               "jacfwd, grad, hessian ...) runs, of that code or in another thread (compiled code "
               "cannot tell threads apart, so the check is process-wide; a first call counts while "
               "it compiles): inside the transformation its derivative would be mixed with the "
               "transformation's own. Derivatives nested inside compiled code are not supported; "
               "write the inner derivative by hand (g'(y) as a formula), or the function in Python, "
               "where duals nests transformations to any depth; in another thread, make such calls "
               "when no compiled transformation runs")


@intrinsic
def transformations_running(typingctx):
    """transformations_running() -> whether a compiled transformation runs (in @njit code)."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        count = builder.module.globals.get(_SYMBOL)
        if count is None:
            count = ir.GlobalVariable(builder.module, i64, _SYMBOL)
            count.linkage = "external"
        return builder.icmp_signed("!=", builder.load(count), i64(0))
    return types.boolean(), codegen


def transformations_running_now():
    """transformations_running_now() -> the same, from Python."""
    return len(_RUNNING) != 0


def transformation(who, first=0):
    """@transformation(who, first=0): the decorated call counts as a running compiled
    transformation ``who`` and refuses a user's ``duals.Dual`` among its arguments after the
    ``first`` (the function itself: :func:`refuse_user_duals`)."""
    def decorate(call):
        @functools.wraps(call)
        def checked(*args, **kwargs):
            refuse_user_duals(args[first:], kwargs, who)
            _RUNNING.append(None)   # (counted() written out: this is every compiled entry's path)
            try:
                return call(*args, **kwargs)
            finally:
                _RUNNING.pop()
        return checked
    return decorate


def counted(call, *args, **kwargs):
    """counted(call, *args) -> ``call(*args)``, counted as a running compiled transformation
    (for duals' own calls of compiled code on duals, whose arguments are duals)."""
    _RUNNING.append(None)
    try:
        return call(*args, **kwargs)
    finally:
        _RUNNING.pop()


def refuse_user_duals(args, kwargs, who):
    """Raise where an argument, or anything inside one (items of tuples, named tuples and lists
    at any depth, a typed List, Dict or set, a jitclass's members), is a ``duals.Dual``, an array
    of duals or an element of one made by the user (its derivative would mix with the
    transformation's lanes), or a value traced by a transformation of Python code (compiled code
    cannot carry it: the way out is named)."""
    for a in args:
        if not _plain(a):
            break
    else:
        if not kwargs or all(map(_plain, kwargs.values())):
            return    # (the common case, checked without a Python loop per item where it can)
    places = [(f"argument {k}", a) for k, a in enumerate(args)]
    places += [(f"argument {name!r}", a) for name, a in kwargs.items()]
    for where, a in places:
        found = _user_dual_in(a)
        if found is not None:
            path, traced = found
            for index in path:
                where = f"item {index} of {where}" if type(index) is int else f"{where} ({index})"
            if traced:
                raise TypeError(f"{who} of a Numba dispatcher: {where} {TRACED_ARGUMENT}")
            raise TypeError(
                f"{who}: {where} is a duals.Dual (or an array of duals): a compiled transformation "
                f"takes plain numbers and arrays, and the Dual's own derivative would be mixed with "
                f"the transformation's. Pass its value (d.primal) and differentiate with respect to "
                f"it too (argnums), or call the transformation inside Python code that makes the "
                f"Dual (duals nests transformations of Python code to any depth)")


TRACED_ARGUMENT = (
    "is a value traced by an enclosing duals transformation of Python code; compiled code runs "
    "on plain arrays only, and a compiled transformation does not nest inside one of Python code. "
    "Differentiate the compiled function itself: duals.jacfwd, grad ... of the dispatcher to first "
    "order, duals.hessian and duals.hvp to second (a derivative of its gradient in u with respect "
    "to theta is the block H[0][1] of duals.hessian(fn, argnums=(0, 1))(u, theta); compiled code "
    "goes no higher: for third derivatives write it in Python); a Python function that calls "
    "compiled code can be decorated with @numba.njit too and differentiated as one. Or, where "
    "fn is written with np.* functions (math.* takes Python numbers only), transform the Python "
    "function behind the dispatcher (duals.grad(fn.py_func)): transformations of Python code nest "
    "to any depth")


_PLAIN_SCALARS = frozenset((type(None), float, int, bool, complex, str, np.float64, np.float32,
                            np.int64, np.int32, np.bool_, np.complex128, np.complex64))


def _plain(a):
    kind = type(a)
    return (kind in _PLAIN_SCALARS or (kind is np.ndarray and a.dtype.names is None)
            or ((kind is tuple or kind is list) and all(map(_plain, a))))


def _user_dual_in(a):
    """``(path, traced)`` for a user's dual (``traced`` False) or a value traced by a duals
    transformation of Python code (True) inside ``a``: the path of item indices to it,
    innermost last (a container that Numba types ends it with its kind in words), ``[]`` for
    ``a`` itself; None when ``a`` holds neither."""
    kind = type(a)
    if kind in _PLAIN_SCALARS:
        return None
    if isinstance(a, (np.ndarray, np.void)):   # (np.void: an element of an array of duals)
        return ([], False) if a.dtype.names == ("primal", "tangent") else None
    if isinstance(a, np.generic):
        return None
    if isinstance(a, (tuple, list)):
        for j, item in enumerate(a):
            inner = _user_dual_in(item)
            if inner is not None:
                return [j] + inner[0], inner[1]
        return None
    if isinstance(a, _Tracer()):
        return [], not (isinstance(a, _Dual()) and a._outlives_transformations())
    if isinstance(a, Dispatcher) or callable(a):
        return None
    try:   # a typed List, Dict or set, a jitclass instance ...: what Numba would see in it
        typ = numba.typeof(a)
    except (ValueError, TypeError):
        return None   # (Numba refuses it itself when the call types its arguments)
    return ([f"a {kind.__name__} holding duals"], False) if _holds_duals(typ) else None


def _Tracer():
    from ..core import Tracer
    return Tracer


def _Dual():
    from ..forward import Dual
    return Dual


def _holds_duals(typ, depth=0):
    """Whether the Numba type ``typ`` is or holds a dual number (or an array of them)."""
    from ._types import DualType
    if isinstance(typ, DualType):
        return True
    if depth > 8:
        return False
    if isinstance(typ, types.Record):
        return [name for name, _ in typ.members] == ["primal", "tangent"]
    if isinstance(typ, types.BaseTuple):
        inner = typ.types
    elif isinstance(typ, (types.Array, types.List, types.Set)):
        inner = (typ.dtype,)
    elif isinstance(typ, types.ListType):
        inner = (typ.item_type,)
    elif isinstance(typ, types.DictType):
        inner = (typ.key_type, typ.value_type)
    elif isinstance(typ, types.ClassInstanceType):
        inner = tuple(typ.struct.values())
    else:
        return False
    return any(_holds_duals(t, depth + 1) for t in inner)
