"""Numba's ``overload`` family for implementations that only compiled code calls.

With every overload implementation Numba also compiles a C-callable wrapper (a ``cfunc``),
which nothing calls when the implementation is only ever reached from compiled code, as all of
duals' are. Leaving it out shortens the first call of a compiled derivative (the Lorenz RK4 of
``benchmarks/bench_jit.py`` in a fresh process with empty caches, process CPU time, 4 alternating
pairs: ``jvp`` 1.07-1.18 s with the wrappers, 0.82-1.04 s without; the 6-lane ``jacfwd`` after
it 1.04-1.29 s and 1.03-1.10 s). These are ``numba.extending``'s functions with that option set.

>>> import numba
>>> def twice(x):
...     return 2 * x
>>> _ = register_jitable(twice)
>>> numba.njit(lambda x: twice(x))(1.5)
3.0
"""
from numba import extending

__all__ = ["overload", "overload_method", "overload_attribute", "register_jitable"]

_OPTIONS = {"no_cfunc_wrapper": True}


def _options(given):
    return {**_OPTIONS, **(given or {})}


def overload(func, jit_options=None, **kwargs):
    """overload(func, jit_options=None, **kwargs): ``numba.extending.overload`` without the
    C-callable wrapper."""
    return extending.overload(func, jit_options=_options(jit_options), **kwargs)


def overload_method(typ, attr, jit_options=None, **kwargs):
    """overload_method(typ, attr, jit_options=None, **kwargs): ``numba.extending.overload_method``
    without the C-callable wrapper."""
    return extending.overload_method(typ, attr, jit_options=_options(jit_options), **kwargs)


def overload_attribute(typ, attr, jit_options=None, **kwargs):
    """overload_attribute(typ, attr, jit_options=None, **kwargs):
    ``numba.extending.overload_attribute`` without the C-callable wrapper."""
    return extending.overload_attribute(typ, attr, jit_options=_options(jit_options), **kwargs)


def register_jitable(fn=None, **options):
    """register_jitable(fn) or register_jitable(**options)(fn): ``numba.extending.register_jitable``
    without the C-callable wrapper."""
    wrap = extending.register_jitable(**_options(options))
    return wrap if fn is None else wrap(fn)
