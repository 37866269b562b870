"""``@numba.vectorize`` functions on duals: the scalar kernel, compiled for duals, applied element-wise.

A NumPy ufunc's loops take NumPy dtypes only, so a ``@vectorize`` function cannot run on a dual
as it is. Its scalar kernel is ordinary Python compiled by Numba, though: in the promoting
specialisation (:mod:`duals.jit.promotion`) every call of a ``@vectorize`` function becomes a
call of :func:`elementwise` for it: the kernel compiled for the operands' element types and
mapped over their broadcast shape (scalars give a scalar). ``duals.jacfwd(ufunc)`` goes through
:func:`entry`, a small ``@njit`` function calling the ufunc.

``@guvectorize`` functions are refused with an error that says so.

>>> import math, numba, numpy as np, duals
>>> @numba.vectorize
... def bump(x, a):
...     return a * math.exp(-x * x)
>>> duals.jacfwd(bump)(np.array([0.5, 1.0]), 2.0).diagonal().round(6).tolist()
[-1.557602, -1.471518]
"""
import functools

import numba
import numpy as np
from numba.core import errors, types
from numba.core.registry import cpu_target
from numba.extending import overload
from numba.np.ufunc.dufunc import DUFunc
from numba.np.ufunc.gufunc import GUFunc

from .compat import install_new_overloads
from .errors import MARK


def is_vectorized(obj):
    """is_vectorized(obj) -> whether ``obj`` is a ``@numba.vectorize`` or ``@guvectorize`` function."""
    return isinstance(obj, (DUFunc, GUFunc))


def _refuse_gufunc(ufunc, mark="duals: "):
    return TypeError(
        f"{mark}@guvectorize function {ufunc.__name__!r} cannot run on duals: give its kernel to "
        f"duals as a plain @numba.njit function (allocate the output inside and return it)")


@functools.lru_cache(maxsize=None)
def entry(ufunc):
    """entry(ufunc) -> an @njit function ``f(*args) = ufunc(*args)`` for the entry points."""
    if isinstance(ufunc, GUFunc):
        raise _refuse_gufunc(ufunc)
    params = ", ".join(f"x{i}" for i in range(ufunc.nin))
    scope = {"ufunc": ufunc}
    exec(f"def vectorized_{ufunc.__name__}({params}):\n    return ufunc({params})\n", scope)
    return numba.njit(scope[f"vectorized_{ufunc.__name__}"])


def elementwise(ufunc, compile_kernel):
    """elementwise(ufunc, compile_kernel) -> a function for compiled code that applies the
    kernel of ``ufunc``, compiled by ``compile_kernel(njit_kernel)``, element by element."""
    if isinstance(ufunc, GUFunc):
        raise errors.TypingError(str(_refuse_gufunc(ufunc, MARK)))
    kernel = compile_kernel(numba.njit(ufunc._dispatcher.py_func))
    params = [f"x{i}" for i in range(ufunc.nin)]

    def stub(*args):
        raise NotImplementedError("duals: a compiled-mode placeholder, called from Python")
    stub.__name__ = f"duals_elementwise_{ufunc.__name__}"

    def typer(*args):
        arrays = [i for i, a in enumerate(args) if isinstance(a, types.Array)]
        if not arrays:
            return _generated(params, f"    return kernel({', '.join(params)})", {"kernel": kernel})
        elements = tuple(a.dtype if isinstance(a, types.Array) else a for a in args)
        context = cpu_target.typing_context
        found = context.resolve_function_type(context.resolve_value_type(kernel), elements, {})
        if found is None:
            raise errors.TypingError(f"{MARK}@vectorize function {ufunc.__name__!r} does not "
                                     f"compile for {', '.join(map(str, elements))}")
        shapes = " + ".join(f"(x{i}.shape,)" for i in arrays)
        spread = [f"np.broadcast_to(x{i}, shape)" if i in arrays else f"x{i}"
                  for i in range(len(args))]
        picks = ", ".join(f"b{i}[idx]" if i in arrays else f"b{i}" for i in range(len(args)))
        body = [f"    shape = np.broadcast_shapes(*({shapes}))"]
        body += [f"    b{i} = {s}" for i, s in enumerate(spread)]
        body += ["    out = np.empty(shape, element)",
                 "    for idx in np.ndindex(shape):",
                 f"        out[idx] = kernel({picks})",
                 "    return out"]
        return _generated(params, "\n".join(body), {"kernel": kernel, "element": found.return_type})

    overload(stub)(_with_params(typer, params))
    install_new_overloads()  # made while the caller's code is being rewritten
    return stub


def _generated(params, body, scope):
    scope = dict(scope, np=np)
    exec(f"def impl({', '.join(params)}):\n{body}\n", scope)
    return scope["impl"]


def _with_params(typer, params):
    """``typer`` with named parameters (Numba matches a typer's parameters to the call's)."""
    scope = {"typer": typer}
    exec(f"def named({', '.join(params)}):\n    return typer({', '.join(params)})\n", scope)
    return scope["named"]
