"""Shared plumbing of the transformations: shapes, lazy imports, output checks, containers."""
import numpy as np

from . import tree
from .arguments import Containers, argnums as _argnums, output as _output
from .core import Tracer, escaped, refuse_stale
from .forward import Dual

def _shape(x):
    return x.shape if hasattr(x, "shape") else ()


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


_JIT = []


def _jit():
    """The compiled forward mode (duals.jit), imported on first use: it loads Numba extensions."""
    if not _JIT:
        from . import jit
        _JIT.append(jit)
    return _JIT[0]


def _sparse():
    """duals.sparse (patterns, colourings, compressed evaluation), imported on first use: it needs SciPy."""
    from . import sparse
    return sparse


def _zeros(shape, like):
    return np.zeros(shape, dtype=_dtype(like) if np.dtype(_dtype(like)).kind in "fc" else np.float64)


def _compiled(entry, holomorphic, who):
    """The keywords for a compiled entry point: ``holomorphic=True`` only where it takes it."""
    if not holomorphic:
        return {}
    import inspect
    if "holomorphic" not in inspect.signature(entry).parameters:
        raise NotImplementedError(f"{who}(holomorphic=True) of a Numba-compiled function is not "
                                  f"supported (compiled reverse mode records real numbers); "
                                  f"duals.jacfwd(f, holomorphic=True) of the dispatcher gives the "
                                  f"complex derivative df/dz in compiled forward mode, or "
                                  f"differentiate the Python function")
    return {"holomorphic": True}


def _check_leaf(y, who, trace=None):
    """An output leaf must be a number, an array, or a traced value that is not left over from
    an earlier call (``trace``: the call's own, which has just closed)."""
    if isinstance(y, Tracer):
        if y._trace.closed and y._trace is not trace:
            raise escaped()
    elif not isinstance(y, (np.ndarray, float, int, np.number, np.bool_)):
        raise TypeError(f"{who}: the function returned a {type(y).__name__}; return floats, "
                        f"arrays or tuples/lists/dicts of them")


def _closing(trace, call, /, *args, **kwargs):
    """``call(*args, **kwargs)``, after which values of ``trace`` refuse to be used (a value kept
    from the call would otherwise take part in later arithmetic as a constant, silently)."""
    from ._operators import last_scipy_refusal, refusal_swallowed
    before = last_scipy_refusal()
    try:
        out = call(*args, **kwargs)
    except Exception as exc:
        refusal = refusal_swallowed(exc, before)
        if refusal is None:
            raise
        raise refusal from exc
    finally:
        trace.closed = True
    refuse_stale(tree.flatten(out)[0])   # returned after a change in place through another name
    return out

def _on_containers(transform, f, argnums, who, **options):
    """``transform(f, argnums, group=..., **options)``, with container arguments flattened to leaves."""
    plain = transform(f, argnums, **options)

    def transformed(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), who)
        if not Containers.present(args, nums):
            return plain(*args, **kwargs)
        c = Containers(args, nums, single)
        flat = transform(_OnLeaves(f, c, kwargs), c.argnums, group=c.group, **options)
        try:
            return flat(*c.flat_args)
        except TypeError as exc:
            numbers = [i for i in nums if _list_of_numbers(args[i])]
            if not numbers:
                raise
            raise TypeError(f"{exc}\n(argument {numbers[0]} is a {type(args[numbers[0]]).__name__}, which "
                            f"{who} takes as a container "
                            f"of {len(args[numbers[0]])} separate numbers, as JAX does; to differentiate "
                            f"it as one array, pass np.array(...) of it)") from exc

    return transformed


def _list_of_numbers(a):
    return type(a) in (list, tuple) and len(a) > 0 and all(
        isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in a)


class _OnLeaves:
    """``f`` called on container arguments rebuilt from their leaves (a class, not a lambda, so
    that ``workers=`` can pickle it)."""

    def __init__(self, function, containers, kwargs):
        self.function, self.containers, self.kwargs = function, containers, kwargs

    def __call__(self, *leaves):
        return self.function(*self.containers.rebuild(leaves), **self.kwargs)


def _strip(aux, is_ours, own=None):
    """aux with the values traced by the finished transformation replaced by their primals (by
    ``own(primal)`` when given)."""
    leaves, treedef = tree.flatten(aux)
    out = []
    for a in leaves:
        if is_ours(a):
            a = a.primal if type(a) is Dual else a._value
            if own is not None:
                a = own(a)
        out.append(_output(a))
    return tree.unflatten(treedef, out)

