"""The state a function may read and change, held fixed across the passes of one derivative.

A derivative computed in several passes (``jacfwd`` in chunks of lanes, a compiled Hessian in
blocks of columns) calls the function once per pass. A function that draws from a global
generator (``np.random.normal`` in ``@njit`` code or in NumPy's legacy global state, Python's
``random``) would draw other numbers in each pass, and one that changes an array argument (an
``order`` it reverses at each call, a counter, a scratch buffer) or draws from a generator it is
given would start each pass from another state: the columns of one Jacobian would belong to
different calls. So every pass starts from the random states, argument arrays and argument
generators (``np.random.Generator``, ``RandomState``) the first started from, and the last leaves
them where one plain call leaves them. (Arrays and generators the function reaches other than
through its arguments are not rewound.)

>>> import numpy as np
>>> np.random.seed(0)
>>> first, second, third = each_from_one_state(lambda k: np.random.uniform(), range(3))
>>> first == second == third == 0.5488135039273248
True
"""
import contextlib
import copy
import ctypes
import functools
import random
import sys
import threading

import numpy as np

__all__ = ["each_from_one_state", "from_one_state", "Replayed", "one_state", "before_call", "own_copies",
           "untouched_call", "random_states", "start_from", "snapshot", "restore"]


def _captured(python=True):
    """[(setter, state)] of NumPy's and Python's global generators (unless ``python`` is False:
    compiled code that cannot reach them), and Numba's for this thread when Numba is imported."""
    saved = [(np.random.set_state, np.random.get_state()), (random.setstate, random.getstate())] \
        if python else []
    if "numba._helperlib" in sys.modules:
        for pointer in _numba_state_pointers():
            saved.append((functools.partial(_set_numba_state, pointer),
                          ctypes.string_at(pointer, _NUMBA_STATE_BYTES)))
    return saved


class _NumbaState(ctypes.Structure):
    """The layout of a Numba generator's state (``rnd_state_t`` in Numba's ``_random.c``)."""
    _fields_ = [("index", ctypes.c_int), ("mt", ctypes.c_uint * 624), ("has_gauss", ctypes.c_int),
                ("gauss", ctypes.c_double), ("is_initialized", ctypes.c_int)]


_NUMBA_STATE_BYTES = ctypes.sizeof(_NumbaState)


@functools.cache
def _numba_state_getters():
    from numba import _helperlib
    getter = ctypes.CFUNCTYPE(ctypes.c_void_p)
    return tuple(getter(_helperlib.c_helpers[name]) for name in ("get_np_random_state", "get_py_random_state"))


def _numba_state_pointers():
    """The addresses of this thread's Numba states for ``np.random`` and ``random``, seeded
    first if they were not yet: copied whole, since Numba's own ``rnd_get_state`` drops the
    cached second normal of ``np.random.normal`` (a pass restored by it drew other noise), and
    an unseeded state copied back would be seeded afresh by the next pass's first draw."""
    return [getter() for getter in _numba_state_getters()]


def _set_numba_state(pointer, state):
    ctypes.memmove(pointer, state, _NUMBA_STATE_BYTES)


def _argument_states(args, arrays=True):
    """[(setter, state)] of the writable NumPy arrays (unless ``arrays`` is False) and the
    generators (``np.random.Generator``, ``RandomState``) among ``args``, in tuples, lists and
    dict values too."""
    found = []
    for a in args:
        if arrays and type(a) is np.ndarray and a.flags.writeable:
            found.append((functools.partial(np.copyto, a), a.copy()))
        elif isinstance(a, np.random.Generator):
            found.append((functools.partial(setattr, a.bit_generator, "state"), a.bit_generator.state))
        elif isinstance(a, np.random.RandomState):
            found.append((a.set_state, a.get_state()))
        elif isinstance(a, (tuple, list)):
            found += _argument_states(a, arrays)
        elif isinstance(a, dict):
            found += _argument_states(a.values(), arrays)
    return found


def snapshot(args, python=True):
    """snapshot(args, python=True) -> [(setter, state)] of the global random states (NumPy's and
    Python's only with ``python``) and of the arrays and generators among ``args``: what
    :func:`restore` rewinds to."""
    return _captured(python() if callable(python) else python) + _argument_states(args)


def own_copies(value, copies=None):
    """own_copies(value) -> ``value`` (tuples, lists and dicts rebuilt) with a copy of each
    writable NumPy array and generator in it, one that appears twice copied once: what a task
    that runs in the caller's process changes instead of the caller's arguments."""
    copies = {} if copies is None else copies
    if (type(value) is np.ndarray and value.flags.writeable) or isinstance(
            value, (np.random.Generator, np.random.RandomState)):
        if id(value) not in copies:
            copies[id(value)] = copy.deepcopy(value)
        return copies[id(value)]
    if type(value) in (tuple, list):
        return type(value)(own_copies(v, copies) for v in value)
    if type(value) is dict:
        return {k: own_copies(v, copies) for k, v in value.items()}
    return value


def untouched_call(f, args, kwargs):
    """untouched_call(f, args, kwargs) -> ``f(*args, **kwargs)`` on copies of the arrays and
    generators among the arguments, the global random states left as they were: a look at the
    output (its shapes) that leaves the state every pass starts from as it is."""
    saved = _captured()
    try:
        args, kwargs = own_copies((tuple(args), dict(kwargs)))
        return f(*args, **kwargs)
    finally:
        restore(saved)


def random_states():
    """random_states() -> NumPy's legacy global state, Python's and this thread's Numba states, as
    plain data that can travel to another process (:func:`start_from` sets them there)."""
    return [state for _, state in _captured()]


def start_from(states):
    """start_from(states) -> what :func:`restore` takes to undo it: sets the global random
    states to ``states`` (from :func:`random_states`, maybe in another process)."""
    saved = _captured()
    for (setter, _), state in zip(saved, states):
        setter(state)
    return saved


def each_from_one_state(run, items, args=(), python=True):
    """each_from_one_state(run, items, args=(), python=True) -> ``[run(item) for item in items]``,
    every run from the random states and the contents of the arrays among ``args`` that the first
    began with. ``python=False``: the runs are compiled code that cannot reach NumPy's and
    Python's global generators (:func:`duals.jit.python_reach.may_reach_python`), so only
    Numba's are held (NumPy's costs ~0.2 ms to read and set); a function returning that answer
    is asked only when there are two runs or more (a single pass holds nothing)."""
    items = list(items)
    if len(items) < 2:
        return [run(item) for item in items]
    saved = snapshot(args, python)
    results = []
    for k, item in enumerate(items):
        if k:
            restore(saved)
        results.append(run(item))
    return results


def from_one_state(*runs, args=(), python=True):
    """from_one_state(*runs, args=(), python=True) -> ``[run() for run in runs]``, each from the
    state the first began with (:func:`each_from_one_state`): the several calls of ``f`` that
    make one answer (a value, then a derivative) belong to one realisation of its noise.

    >>> np.random.seed(0)
    >>> from_one_state(np.random.uniform, np.random.uniform) == [0.5488135039273248] * 2
    True
    """
    return each_from_one_state(lambda run: run(), runs, args, python)


_HELD = threading.local()


@contextlib.contextmanager
def one_state(args):
    """with one_state(args): every call of the user's function that announces itself with
    :func:`before_call` starts from the random states and the contents of the arrays among
    ``args`` that the first began with (a sparse Jacobian's detection, passes and checks)."""
    previous = getattr(_HELD, "state", None)
    _HELD.state = [args, None]
    try:
        yield
    finally:
        _HELD.state = previous


def before_call():
    """before_call(): inside :func:`one_state`, rewind to where its first call began (or note that)."""
    held = getattr(_HELD, "state", None)
    if held is None:
        return
    if held[1] is None:
        held[1] = snapshot(held[0])
    else:
        restore(held[1])


def restore(saved):
    """restore(saved): set the states ``saved`` holds (as :func:`_captured` or :func:`start_from` returned them)."""
    for setter, state in saved:
        setter(state)


class Replayed:
    """Replayed(fun): ``fun`` whose later calls start from the random states its first call
    began with (and leave the states as they found them): ``duals.checkpoint`` reruns a stage
    that draws noise (dropout) in the backward walk, and must draw the same numbers. The
    global generators are held, and the generators among the arguments (``np.random.Generator``,
    ``RandomState``).

    >>> np.random.seed(1)
    >>> noisy = Replayed(lambda: np.random.uniform())
    >>> noisy() == noisy()
    True
    """

    def __init__(self, fun):
        self.func, self.states = fun, None

    def __call__(self, *args, **kwargs):
        if self.states is None:
            self.states = _captured() + _argument_states((args, kwargs), arrays=False)
            return self.func(*args, **kwargs)
        now = _captured() + _argument_states((args, kwargs), arrays=False)
        restore(self.states)
        try:
            return self.func(*args, **kwargs)
        finally:
            restore(now)
