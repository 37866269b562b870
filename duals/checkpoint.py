"""checkpoint: trade compute for memory in reverse mode.

``checkpoint(f)`` is ``f`` as one primitive. Reverse mode records a single node holding
``f``'s arguments and output, not the intermediates of ``f``; the backward walk reruns
``f`` under a fresh tape to pull the cotangent back (the VJP rule), and forward mode
pushes tangents through ``f`` directly (the JVP rule). Both rules run ``f`` on traced
values, so checkpointed functions nest in every transformation (a Hessian by forward over
reverse goes through the recomputation on dual numbers).
"""
import functools

import numpy as np

from . import tree
from .core import Primitive, Tracer, new_level
from .forward import Dual, JVPTrace
from .ops import lead_of, shape_of
from .ops.shape import reshape
from .random_states import Replayed
from .reverse import ReverseTrace, Var, _own, backward

__all__ = ["checkpoint"]


def _impl(*args, fun):
    out = fun(*args)
    leaves, treedef = tree.flatten(out)
    if treedef is not None:
        raise TypeError(f"checkpoint: {_name(fun)} returned a {type(out).__name__}; a checkpointed "
                        f"function returns one array (checkpoint each output separately)")
    if isinstance(out, Tracer):
        raise TypeError(
            f"checkpoint: {_name(fun)} used a value being differentiated that it did not receive "
            f"as an argument (a closure over a traced value); pass every differentiated value "
            f"as an argument: checkpoint(f)(x, params)")
    a = np.asarray(out)
    return a if a.ndim else a[()]


def _name(fun):
    while hasattr(fun, "func"):      # a partial (keyword arguments), a Replayed
        fun = fun.func
    return getattr(fun, "__name__", "the function")


checkpoint_p = Primitive("checkpoint", _impl)


def _jvp_all(tangents, out, *args, fun):
    """Push every tangent through ``fun`` at once on a fresh forward trace."""
    lead = next(shape_of(t)[:lead_of(t, x)] for t, x in zip(tangents, args) if t is not None)
    lanes = int(np.prod(lead))
    trace = JVPTrace(new_level(), lanes=lanes)
    call = [a if t is None else Dual._new(a, reshape(t, (lanes,) + shape_of(a)), trace)
            for a, t in zip(args, tangents)]
    y = fun(*call)
    if type(y) is Dual and y._trace is trace:
        return reshape(y._tangent, lead + shape_of(out))
    return np.zeros(lead + shape_of(out), dtype=np.result_type(_plain(out)))


def _recompute(g, needed, out, args, fun):
    """Cotangents of the needed arguments: ``fun`` rerun on a fresh tape, ``g`` pulled back through it."""
    trace = ReverseTrace(new_level())
    leaves = [Var._leaf(a, trace) if wanted else a for a, wanted in zip(args, needed)]
    y = fun(*leaves)
    again = y._value if type(y) is Var and y._trace is trace else y
    if not _same_value(_plain(again), _plain(out)):
        raise RuntimeError(
            f"checkpoint: rerunning {_name(fun)} in the backward pass gave a different value than "
            f"the first run, so something it reads but does not receive as an argument changed in "
            f"between: an array (a closure or global: pass it as an argument, or change it after "
            f"the backward pass) or a numpy.random.Generator it draws from without receiving it "
            f"(pass it as an argument: the generators among the arguments and np.random's global "
            f"state are replayed for the rerun)")
    if not (type(y) is Var and y._trace is trace):
        return [None] * len(args)
    grads = backward([(y, g)], retain_graph=False)
    return [grads.get(id(v)) if wanted else None for v, wanted in zip(leaves, needed)]


def _same_value(a, b):
    """Equal up to rounding: the first run may take a fused kernel where the rerun takes NumPy."""
    dtype = np.result_type(a, b)
    eps = np.finfo(dtype).eps if dtype.kind == "f" else 0.0
    return bool(np.allclose(a, b, rtol=64 * eps, atol=np.finfo(np.float64).tiny, equal_nan=True))


def _plain(x):
    while isinstance(x, Tracer):
        x = x.primal if hasattr(x, "primal") else x._value
    return x


def _sparsity(sets, out, *args, fun):
    """``fun`` rerun on the arguments' index sets (a fresh detection seeded with them)."""
    from .dependencies import Dependent, DependencyTrace
    from .index_sets import IndexSets, empty
    trace = DependencyTrace(new_level())
    y = fun(*[a if s is None else Dependent(a, s, trace) for a, s in zip(args, sets)])
    if type(y) is Dependent and y._trace is trace:
        s = y._sets
        return IndexSets(s.shape, s.n, s.indptr, s.indices, s.by_value or trace.by_value)
    result = empty(shape_of(out), next(s.n for s in sets if s is not None))
    result.by_value = trace.by_value
    return result


checkpoint_p.jvp_all = _jvp_all
checkpoint_p.def_sparsity(_sparsity)
checkpoint_p.vjp_all = lambda g, needed, out, *args, fun: _recompute(g, needed, out, args, fun)


def _held(value):
    """``value`` (a keyword argument, any container) with the tape's own copy of each array its
    owner could still change."""
    leaves, treedef = tree.flatten(value)
    return tree.unflatten(treedef, [_own(leaf) for leaf in leaves])


def checkpoint(f):
    """checkpoint(f) -> ``f`` whose intermediates are recomputed in the backward walk instead of stored.

    ``f`` takes arrays (keyword arguments are held constant, as they are at the call) and
    returns one array. Under reverse mode only its arguments and output are kept on the tape;
    the backward walk reruns ``f`` to differentiate it. Values are unchanged; gradients are
    equal. ``f`` must compute from its arguments alone: a value being differentiated that it
    reads from a closure is refused (pass it as an argument), and an array it reads from a
    closure or a global must not change before the backward walk (the rerun's value is compared
    with the first run's, which catches most such changes, not every one). Draws from
    ``np.random``'s global generator and from generators passed as arguments are replayed: the
    rerun sees the first run's noise.

    >>> import numpy as np, duals
    >>> g = checkpoint(lambda x: np.sin(np.cos(x)))
    >>> bool(np.isclose(duals.grad(g)(0.3), duals.grad(lambda x: np.sin(np.cos(x)))(0.3)))
    True
    """
    if not callable(f):
        raise TypeError(f"checkpoint(f) takes a function, got {type(f).__name__}")

    @functools.wraps(f)
    def checkpointed(*args, **kwargs):
        for k, a in enumerate(args):
            if isinstance(a, (tuple, list, dict)) and any(isinstance(v, Tracer) for v in tree.flatten(a)[0]):
                raise TypeError(f"checkpoint: argument {k} is a {type(a).__name__} holding values being "
                                f"differentiated; a checkpointed function takes arrays: pass them as "
                                f"separate arguments (checkpoint(f)(p['a'], p['b']))")
        traced = [k for k, v in kwargs.items() if any(isinstance(a, Tracer) for a in tree.flatten(v)[0])]
        if traced:
            raise TypeError(f"checkpoint: the keyword argument {traced[0]}= is a value being "
                            f"differentiated, but keyword arguments are held constant; pass it "
                            f"positionally: checkpoint(f)(x, {traced[0]})")
        # held constant: the values of this call, also when the rerun comes later
        fun = functools.partial(f, **{k: _held(v) for k, v in kwargs.items()}) if kwargs else f
        return checkpoint_p(*args, fun=Replayed(fun))    # reruns draw the first run's noise

    return checkpointed
