"""Compiled drivers: seeding, the call and the result's lanes in one dispatcher call.

Once a compiled ``jvp`` or single-pass ``jacfwd`` of a dispatcher has run often enough with the
same layout of arguments, its Python work per call (building dual arguments, unpacking the
result) is replaced by one call of a small ``@njit`` driver that takes the plain arguments,
makes the dual ones inside compiled code, calls the user's function (passed as a first-class
dispatcher, so Numba compiles and links its dual specialisation exactly as a direct call
would: the same staleness rules as Numba's) and returns the result's value and lanes.

"Often enough" is the ski-rental rule: a driver costs a compilation (the last column of
``benchmarks/bench_jit.py``'s table: 2.5 s for the Lorenz RK4's ``jvp`` driver, the first in its
process, and 3 s for its ``jacfwd`` driver, at Numba's default optimisation level: LLVM
optimises the user's function again inside the driver, so this grows with the function) and saves
the general path's Python work at every call (about 15 µs forward, 40 µs reverse), so it is
built once the calls made without it would have paid for it: the total is then never more
than about twice the better of the two choices, and a few interactive calls never stall on a
compilation. A caller that knows how many calls are coming (the adjoint solver) says so with
:meth:`Hot.expect`.

A driver is generated per user function, dual type, number of arguments and differentiated
positions; Numba specialises it per argument types. Results with more than one
leaf, ``has_aux``, functions given other dispatchers as arguments, and arguments promoted to
hold duals keep the general path.

>>> import numba, numpy as np
>>> from duals.jit._types import DualType
>>> from numba.core import types
>>> drive = jvp_driver(numba.njit(lambda x, c: c * x * x), DualType(types.float64, 1), 2, (0,))
>>> drive(3.0, 2.0, 1.0)
(18.0, 12.0)
"""
import contextlib
import threading

import numba
import numpy as np
from numba.core import errors, types
from numba.core.dispatcher import Dispatcher

from .._overloads import overload
from ._types import make
from .lanes import as_lanes
from .parts import _base_dtype, join_scalar

__all__ = ["jvp_driver", "jacfwd_driver", "Hot", "hot", "drivable", "plain_arguments", "drivers_now"]

WARM_CALLS = 2               # general-path calls before a layout may get its driver
DRIVER_COMPILE_S = 2.5       # what a driver's compilation costs, in seconds (see above)
FORWARD_SAVING_S = 15e-6     # what a driver saves per call: forward (jvp, jacfwd)
REVERSE_SAVING_S = 40e-6     # and reverse (grad, the adjoint solver's pullback)
MOST_REFUSALS = 3            # calls a driver cannot compile for (a wrong argument) before it is dropped


class Hot:
    """Hot(): one layout of calls (a function, its arity and differentiated positions): counts
    the calls the general path makes and the work a driver would have saved them, and holds the
    driver once that work reaches the driver's cost.

    ``calls`` is None once the layout is known not to suit a driver.
    """

    __slots__ = ("calls", "driver", "total", "saved", "refusals")

    def __init__(self):
        self.calls = 0
        self.driver = None
        self.total = 0   # what the caller needs to remember of the layout (reverse: tape inputs)
        self.saved = 0.0
        self.refusals = 0

    def expect(self, calls, saving):
        """Count ``calls`` coming calls (each saving ``saving`` seconds with a driver) as made: a
        caller that knows its loop is long gets the driver at its next general-path call."""
        if self.calls is not None:
            self.saved += calls * saving

    def note(self, build, suits, saving=FORWARD_SAVING_S):
        """After a general-path call: count it and, when it is due, make the driver by
        ``build()`` (``suits``: whether this call's target, arguments and result allow one;
        ``saving``: what a driver would save this kind of call)."""
        if self.calls is None:
            return
        self.calls += 1
        self.saved += saving
        if not getattr(_NOW, "on", False) and (self.calls < WARM_CALLS or self.saved < DRIVER_COMPILE_S):
            return
        if not suits:
            self.calls = None
            return
        self.driver = build()

    def run(self, *args):
        """The driver's result, or None when it cannot compile for these arguments (the general
        path serves this call, and raises the user's error if the call is wrong); errors raised by
        the user's code propagate. After ``MOST_REFUSALS`` such calls the general path serves the
        layout from then on (each refusal costs a failed compilation)."""
        try:
            return self.driver(*args)
        except errors.NumbaError:
            self.refusals += 1
            if self.refusals >= MOST_REFUSALS:
                self.driver, self.calls = None, None
            return None


_NOW = threading.local()


@contextlib.contextmanager
def drivers_now():
    """with drivers_now(): a layout's driver is made at its first general-path call, whatever the
    calls so far would have saved (``Transformed.compile``: the caller knows a long loop comes)."""
    before = getattr(_NOW, "on", False)
    _NOW.on = True
    try:
        yield
    finally:
        _NOW.on = before


def kept_on(f, name):
    """kept_on(f, name) -> the dict ``name`` kept on dispatcher ``f`` (made empty on first use), so
    what it holds lives and dies with ``f`` and every transformation of ``f`` shares it."""
    table = f.__dict__.get(name)
    if table is None:
        table = f.__dict__[name] = {}
    return table


def hot(f, key):
    """hot(f, key) -> the :class:`Hot` of dispatcher ``f`` for ``key`` (kept on the dispatcher,
    so it lives and dies with it)."""
    table = kept_on(f, "_duals_hot")
    found = table.get(key)
    if found is None:
        if len(table) > 64:
            table.clear()
        found = table[key] = Hot()
    return found


def plain_arguments(args):
    """Float64 arguments and no dispatcher among them (the promoting path would copy it)."""
    for a in args:
        if isinstance(a, Dispatcher):
            return False
        if type(a) is np.ndarray and a.dtype.kind == "f" and a.dtype != np.float64:
            return False
    return True


def drivable(target, args, result):
    """A call a forward driver can serve: a known target, plain arguments and one result leaf
    (a float, a float64 array or a first-order dual)."""
    if target is None or not plain_arguments(args):
        return False
    if type(result) is float:
        return True
    if type(result) is np.ndarray:
        dt = result.dtype
        return dt == np.float64 or (dt.names == ("primal", "tangent") and dt["primal"] == np.float64)
    return type(result).__name__ == "Dual" and type(result.primal) is float


def _generate(kind, fn, T, arity, nums):
    key = (kind, T, arity, tuple(nums))
    made = fn.__dict__.setdefault("_duals_drivers", {})  # lives and dies with fn
    found = made.get(key)
    if found is not None:
        return found
    names = [f"a{i}" for i in range(arity)]
    tangents = [f"t{i}" for i in nums]
    lines = [f"def driver({', '.join(names + (tangents if kind == 'jvp' else []))}):"]
    call = list(names)
    if kind == "jvp":
        for i in nums:
            lines.append(f"    d{i} = _with_tangent(a{i}, t{i}, T)")
            call[i] = f"d{i}"
        lines.append(f"    return _value_and_tangent(fn({', '.join(call)}), T)")
    else:
        lines.append("    o = 0")
        for i in nums:
            lines.append(f"    d{i}, o = _seeded(a{i}, o, T)")
            call[i] = f"d{i}"
        lines.append(f"    value, lanes = _value_and_lanes(fn({', '.join(call)}), T)")
        lines.append("    return np.ascontiguousarray(lanes[..., :o])")
    namespace = {"np": np, "_with_tangent": _with_tangent, "_seeded": _seeded,
                 "_value_and_lanes": _value_and_lanes, "_value_and_tangent": _value_and_tangent,
                 "fn": fn, "T": T}
    exec("\n".join(lines), namespace)
    found = made[key] = numba.njit(namespace["driver"])
    return found


def jvp_driver(fn, T, arity, nums):
    """jvp_driver(fn, T, arity, nums) -> ``driver(*args, *tangents)`` returning ``(value, tangent)``
    of ``fn``'s one result (the tangent of the value's shape), the arguments at ``nums`` made
    duals of type ``T`` (one lane)."""
    return _generate("jvp", fn, T, arity, nums)


def jacfwd_driver(fn, T, arity, nums):
    """jacfwd_driver(fn, T, arity, nums) -> ``driver(*args)`` returning the lanes
    ``out.shape + (directions,)`` of ``fn``'s one result, every entry of the arguments at
    ``nums`` seeded as its own lane of ``T`` (which has at least that many)."""
    return _generate("jacfwd", fn, T, arity, nums)


# ---------------------------------------------------------------- the pieces, overloaded by type
# Written with loops over a float view: the whole-array slicing of parts.join/split costs
# seconds of compilation, these a fraction of one.

def _floats(a, level):
    """A dual array of ``level`` with ``a``'s shape, and its floats as ``(size, 1 + lanes)``."""


@overload(_floats)
def _ov_floats(a, level):
    width = 1 + level.instance_type.lanes
    element = level.instance_type

    def impl(a, level):
        out = np.empty(a.shape, element)
        return out, out.view(_base_dtype(out)).reshape((a.size, width))
    return impl


def _with_tangent(a, t, T):
    """The dual of type ``T`` with value ``a`` and tangent ``t`` in its one lane."""


@overload(_with_tangent)
def _ov_with_tangent(a, t, T):
    if isinstance(a, types.Array):
        def array(a, t, T):
            if t.shape != a.shape:
                raise ValueError("jvp: a tangent's shape differs from its primal's")
            out, w = _floats(a, T)
            values, slopes = np.ascontiguousarray(a).reshape(a.size), np.ascontiguousarray(t).reshape(a.size)
            for j in range(a.size):
                w[j, 0] = values[j]
                w[j, 1] = slopes[j]
            return out
        return array
    return lambda a, t, T: make(a, as_lanes((np.float64(t),)))   # T: one lane over float64


def _seeded(a, offset, T):
    """(the dual of type ``T`` whose entries of ``a`` are lanes ``offset``, ``offset + 1``, ...,
    the next free lane)."""


@overload(_seeded)
def _ov_seeded(a, offset, T):
    lanes = T.instance_type.lanes
    if isinstance(a, types.Array):
        def array(a, offset, T):
            if offset + a.size > lanes:
                raise ValueError("duals.jit: internal: more directions than lanes")
            out, w = _floats(a, T)
            values = np.ascontiguousarray(a).reshape(a.size)
            for j in range(a.size):
                w[j, 0] = values[j]
                for k in range(lanes):
                    w[j, 1 + k] = 0.0
                w[j, 1 + offset + j] = 1.0
            return out, offset + a.size
        return array

    def scalar(a, offset, T):
        du = np.zeros(lanes)
        du[offset] = 1.0
        return join_scalar(a, du, T), offset + 1
    return scalar


def _value_and_lanes(y, T):
    """(value, lanes ``y.shape + (L,)``) of a result: zero lanes for a plain one."""


@overload(_value_and_lanes)
def _ov_value_and_lanes(y, T):
    level = T.instance_type
    lanes = level.lanes
    width = 1 + lanes
    if isinstance(y, types.Array) and y.dtype == level:
        def array(y, T):
            c = np.ascontiguousarray(y)
            w = c.view(_base_dtype(c)).reshape((y.size, width))
            value, du = np.empty(y.size), np.empty((y.size, lanes))
            for j in range(y.size):
                value[j] = w[j, 0]
                for k in range(lanes):
                    du[j, k] = w[j, 1 + k]
            return value.reshape(y.shape), du.reshape(y.shape + (lanes,))
        return array
    if y == level:
        def dual(y, T):
            box = np.empty(1, level)
            box[0] = y
            w = box.view(_base_dtype(box))
            return w[0], w[1:].copy()
        return dual
    if isinstance(y, types.Array) and isinstance(y.dtype, (types.Float, types.Integer)):
        return lambda y, T: (y.astype(np.float64), np.zeros(y.shape + (lanes,)))
    if isinstance(y, (types.Float, types.Integer)):
        return lambda y, T: (float(y), np.zeros(lanes))


def _value_and_tangent(y, T):
    """(value, tangent of the value's shape) of a one-lane result: a float's tangent is a float."""


@overload(_value_and_tangent)
def _ov_value_and_tangent(y, T):
    if isinstance(y, types.Array):
        def array(y, T):
            value, lanes = _value_and_lanes(y, T)
            return value, lanes.reshape(value.shape)
        return array

    def scalar(y, T):
        value, lanes = _value_and_lanes(y, T)
        return value, lanes[0]
    return scalar
