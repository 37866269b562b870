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
from .reverse import ReverseTrace, Var, backward

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
    fun = getattr(fun, "func", fun)
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


class _Pullback(dict):
    """VJP rules for any number of arguments; one recomputation serves all of them."""

    def __init__(self):
        super().__init__()
        self._last = None

    def __bool__(self):
        return True

    def get(self, i, default=None):
        return self[i]

    def __missing__(self, i):
        def rule(g, out, *args, fun):
            key = (g, args)
            last = self._last
            if last is None or last[0][0] is not g or len(last[0][1]) != len(args) or any(
                    a is not b for a, b in zip(last[0][1], args)):
                self._last = last = (key, _recompute(g, out, args, fun))
            cot = last[1][i]
            if i == len(args) - 1:
                self._last = None   # the walk asks for the arguments in order: done with this node
            return cot
        self[i] = rule
        return rule


def _recompute(g, out, args, fun):
    """Cotangents of every argument: ``fun`` rerun on a fresh tape, ``g`` pulled back through it."""
    trace = ReverseTrace(new_level())
    leaves = [Var._leaf(a, trace) for a in args]
    y = fun(*leaves)
    again = y._value if type(y) is Var and y._trace is trace else y
    if not _same_value(_plain(again), _plain(out)):
        raise RuntimeError(
            f"checkpoint: rerunning {_name(fun)} in the backward pass gave a different value than "
            f"the first run, so an array it reads but does not receive as an argument (a closure "
            f"or global) was changed in between; pass that array as an argument, or change it "
            f"after the backward pass")
    if not (type(y) is Var and y._trace is trace):
        return [None] * len(args)
    grads = backward([(y, g)], retain_graph=False)
    return [grads.get(id(v)) for v in leaves]


def _same_value(a, b):
    """Equal up to rounding: the first run may take a fused kernel where the rerun takes NumPy."""
    dtype = np.result_type(a, b)
    eps = np.finfo(dtype).eps if dtype.kind == "f" else 0.0
    return bool(np.allclose(a, b, rtol=64 * eps, atol=np.finfo(np.float64).tiny, equal_nan=True))


def _plain(x):
    while isinstance(x, Tracer):
        x = x.primal if hasattr(x, "primal") else x._value
    return x


checkpoint_p.jvp_all = _jvp_all
checkpoint_p.vjps = _Pullback()


def checkpoint(f):
    """checkpoint(f) -> ``f`` whose intermediates are recomputed in the backward walk instead of stored.

    ``f`` takes arrays (keyword arguments are held constant) and returns one array. Under
    reverse mode only its arguments and output are kept on the tape; the backward walk
    reruns ``f`` to differentiate it. Values are unchanged; gradients are equal.

    >>> import numpy as np, duals
    >>> g = checkpoint(lambda x: np.sin(np.cos(x)))
    >>> bool(np.isclose(duals.grad(g)(0.3), duals.grad(lambda x: np.sin(np.cos(x)))(0.3)))
    True
    """
    if not callable(f):
        raise TypeError(f"checkpoint(f) takes a function, got {type(f).__name__}")

    @functools.wraps(f)
    def checkpointed(*args, **kwargs):
        fun = functools.partial(f, **kwargs) if kwargs else f
        return checkpoint_p(*args, fun=fun)

    return checkpointed
