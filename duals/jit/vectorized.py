"""``@numba.vectorize`` and ``@guvectorize`` functions on duals: the kernel, compiled for duals, looped.

A NumPy ufunc's loops take NumPy dtypes only, so a ``@vectorize`` or ``@guvectorize`` function
cannot run on a dual as it is. Its kernel is ordinary Python compiled by Numba, though: in the
promoting specialisation (:mod:`duals.jit.promotion`) every call of such a function becomes a
call of :func:`elementwise` for it, the kernel compiled the same way for the operands' types:

* ``@vectorize``: the kernel mapped over the operands' broadcast shape (scalars give a scalar);
* ``@guvectorize`` (layout ``"(n),()->(n)"``): the kernel called on the core slices of the
  inputs and outputs at every index of the loop dimensions (the inputs' broadcast shape), the
  outputs written in place, as Numba does. Compiled code passes the outputs, as Numba asks;
  an output made with ``np.empty``/``np.empty_like`` holds duals there.

``duals.jacfwd(ufunc)`` goes through :func:`entry`, a small ``@njit`` function calling it (for a
``@guvectorize`` function it makes the outputs first, as float64 arrays whose core dimensions the
inputs give).

>>> import math, numba, numpy as np, duals
>>> @numba.vectorize
... def bump(x, a):
...     return a * math.exp(-x * x)
>>> duals.jacfwd(bump)(np.array([0.5, 1.0]), 2.0).diagonal().round(6).tolist()
[-1.557602, -1.471518]
"""
import functools
import re

import numba
import numpy as np
from numba.core import errors, types
from numba.core.registry import cpu_target
from numba.np.ufunc.dufunc import DUFunc
from numba.np.ufunc.gufunc import GUFunc

from .._overloads import overload, register_jitable
from .compat import gufunc_argument_types, install_new_overloads
from .errors import MARK


def is_vectorized(obj):
    """is_vectorized(obj) -> whether ``obj`` is a ``@numba.vectorize`` or ``@guvectorize`` function."""
    return isinstance(obj, (DUFunc, GUFunc))


def _layout(gufunc):
    """(input core dimensions, output core dimensions) of a ``@guvectorize`` layout, as tuples of
    names: ``"(m,n),()->(n)"`` gives ``([("m", "n"), ()], [("n",)])``."""
    inputs, outputs = gufunc.signature.replace(" ", "").split("->")
    parse = lambda side: [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([^)]*)\)", side)]
    return parse(inputs), parse(outputs)


@functools.lru_cache(maxsize=None)
def entry(ufunc):
    """entry(ufunc) -> an @njit function ``f(*inputs) = ufunc(*inputs)`` for the entry points."""
    params = ", ".join(f"x{i}" for i in range(ufunc.nin))
    scope = {"ufunc": ufunc, "np": np}
    name = f"vectorized_{ufunc.__name__}"
    if isinstance(ufunc, GUFunc):
        outs = [f"out{k}" for k in range(ufunc.nout)]
        body = "".join(f"    {o} = np.empty(shape_{k}({params}))\n" for k, o in enumerate(outs))
        body += f"    ufunc({params}, {', '.join(outs)})\n"
        body += f"    return {outs[0] if len(outs) == 1 else '(' + ', '.join(outs) + ',)'}\n"
        for k in range(ufunc.nout):
            scope[f"shape_{k}"] = _output_shape(ufunc, k)
        exec(f"def {name}({params}):\n{body}", scope)
    else:
        exec(f"def {name}({params}):\n    return ufunc({params})\n", scope)
    return numba.njit(scope[name])


def elementwise(ufunc, compile_kernel):
    """elementwise(ufunc, compile_kernel) -> a function for compiled code that applies the
    kernel of ``ufunc``, compiled by ``compile_kernel(njit_kernel)``, element by element (over
    the loop dimensions for a ``@guvectorize`` function)."""
    if isinstance(ufunc, GUFunc):
        return _generalized(ufunc, compile_kernel)
    kernel = compile_kernel(numba.njit(ufunc._dispatcher.py_func))
    params = [f"x{i}" for i in range(ufunc.nin)]

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

    return _stub(ufunc, params, typer)


# ---------------------------------------------------------------- @guvectorize

@register_jitable
def _check_output(loops, shape):
    if loops != shape:
        raise ValueError("duals.jit: a @guvectorize output's loop dimensions differ from the "
                         "inputs' broadcast shape:", loops, shape)


def _generalized(gufunc, compile_kernel):
    """The ``elementwise`` of a ``@guvectorize`` function: see the module docstring."""
    inputs, outputs = _layout(gufunc)
    cores, nin, name = inputs + outputs, len(inputs), gufunc.__name__
    declared = gufunc_argument_types(gufunc)
    kernel = compile_kernel(numba.njit(gufunc.gufunc_builder.py_func))
    params = [f"x{i}" for i in range(len(cores))]

    def typer(*args):
        if len(args) != len(cores):
            raise errors.TypingError(
                f"{MARK}@guvectorize function {name!r} takes its {len(inputs)} inputs and "
                f"{len(outputs)} outputs in compiled code, got {len(args)} arguments; pass the "
                f"outputs (out = np.empty(...)) as Numba asks")
        loops = [f"x{i}.shape[:{t.ndim - len(cores[i])}]" for i, t in enumerate(args[:nin])
                 if isinstance(t, types.Array)]
        body = [f"    shape = np.broadcast_shapes({', '.join(loops)})" if loops else "    shape = ()"]
        picks = []
        for i, (t, core) in enumerate(zip(args, cores)):
            one = not core and (i >= nin if declared is None else isinstance(declared[i], types.Array))
            if not isinstance(t, types.Array):
                if i >= nin or one:
                    raise errors.TypingError(f"{MARK}@guvectorize function {name!r}: argument {i} "
                                             f"must be an array, got {t}")
                body.append(f"    b{i} = x{i}")
                picks.append(f"b{i}")
                continue
            lead = t.ndim - len(core)
            if lead < 0:
                raise errors.TypingError(f"{MARK}@guvectorize function {name!r}: argument {i} has "
                                         f"{t.ndim} dimensions, its layout {len(core)} core ones")
            if i >= nin:  # an output: written in place, its loop dimensions those of the inputs
                body.append(f"    _check_output(x{i}.shape[:{lead}], shape)")
                body.append(f"    b{i} = x{i}.reshape(x{i}.shape + (1,))" if one else f"    b{i} = x{i}")
            elif one:  # a () input the kernel takes as a one-element array
                body.append(f"    b{i} = np.broadcast_to(np.ascontiguousarray(x{i}).reshape("
                            f"x{i}.shape + (1,)), shape + (1,))")
            else:
                body.append(f"    b{i} = np.broadcast_to(x{i}, shape + x{i}.shape[{lead}:])")
            picks.append(f"b{i}[idx]")
        body += ["    for idx in np.ndindex(shape):", f"        kernel({', '.join(picks)})"]
        return _generated(params, "\n".join(body), {"kernel": kernel, "_check_output": _check_output})

    return _stub(gufunc, params, typer)


def _output_shape(gufunc, k):
    """A jitted ``shape(*inputs)`` of output ``k`` of a ``@guvectorize`` function: the inputs'
    broadcast loop dimensions and the output's core dimensions, each given by an input."""
    inputs, outputs = _layout(gufunc)
    params = [f"x{i}" for i in range(len(inputs))]

    def stub(*args):
        raise NotImplementedError("duals: a compiled-mode placeholder, called from Python")

    def typer(*args):
        arrays = {i: t for i, t in enumerate(args) if isinstance(t, types.Array)}
        loops = [f"x{i}.shape[:{t.ndim - len(inputs[i])}]" for i, t in arrays.items()]
        sizes = []
        for dim in outputs[k]:
            found = [(i, inputs[i].index(dim)) for i in arrays if dim in inputs[i]]
            if not found:
                raise errors.TypingError(
                    f"{MARK}@guvectorize function {gufunc.__name__!r}: the size of output "
                    f"dimension {dim!r} is given by no input; call it inside your @njit code "
                    f"with the output passed")
            i, p = found[0]
            sizes.append(f"x{i}.shape[{arrays[i].ndim - len(inputs[i]) + p}]")
        shape = f"np.broadcast_shapes({', '.join(loops)})" if loops else "()"
        core = f"({', '.join(sizes)},)" if sizes else "()"
        return _generated(params, f"    return {shape} + {core}", {})

    overload(stub)(_with_params(typer, params))
    return stub


def _stub(ufunc, params, typer):
    def stub(*args):
        raise NotImplementedError("duals: a compiled-mode placeholder, called from Python")
    stub.__name__ = f"duals_elementwise_{ufunc.__name__}"
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
