"""Sparsity detection: the third interpreter of the primitives, carrying index sets instead of tangents.

A :class:`Dependent` holds a value and, for each of its entries, the set of inputs it depends on
(:class:`duals.index_sets.IndexSets`). The :class:`DependencyTrace` computes each primitive's
value as usual and its sets by the primitive's sparsity rule, stated beside its JVP and VJP
rules. The sets of ``f``'s output are the rows of the Jacobian's sparsity pattern; run on
``grad(f)`` (whose reverse sweep is made of primitives too) they are the Hessian's.

Patterns are structural (an entry depends on the inputs it is computed from, whatever their
values), except where the computation itself chooses by value: a comparison or another read of
a traced value (``if x > 0``, ``where(x > 0, ...)``), ``maximum``/``minimum``/``clip``, the
``max``/``min`` reductions, ``sort``. There the pattern is the one at the given point, and
:attr:`DependencyTrace.by_value` records that it was so decided.

>>> import numpy as np
>>> sets, by_value = detect(lambda x: x[1:] * x[:-1], (np.ones(3),), 0)
>>> sets.to_lists(), by_value
([[0, 1], [1, 2]], False)
"""
import numpy as np

from .float_warnings import call_at_user_line
from .random_states import before_call
from .core import Trace, Tracer, bind, new_level
from .index_sets import IndexSets, seed, union

__all__ = ["Dependent", "DependencyTrace", "detect", "conservative_rule"]


class DependencyTrace(Trace):
    """DependencyTrace(level): one sparsity detection; ``by_value`` tells whether a value was read."""

    __slots__ = ("by_value",)

    def __init__(self, level):
        self.level = level
        self.closed = False
        self.by_value = False

    def process(self, prim, args, params):
        values, sets = [], []
        for a in args:
            if type(a) is Dependent and a._trace is self:
                values.append(a._val)
                sets.append(a._sets)
            else:
                values.append(a)
                sets.append(None)
        out = bind(prim, *values, **params)
        rule = prim.sparsity or conservative_rule
        result = rule(sets, out, *values, **params)
        if result is None or not result.nnz:
            # a result of traced inputs with derivative zero (sign, //, stop_gradient) leaves as a
            # plain value, which a branch may read unseen: the pattern is this point's
            if any(s is not None and s.nnz for s in sets):
                self.by_value = True
            return out
        if result.by_value:
            self.by_value = True
        return Dependent(out, result, self)


def conservative_rule(sets, out, *args, **params):
    """Every output entry depends on everything any argument depends on: the rule of a
    primitive that states none (a custom primitive), always a superset of the truth."""
    from .index_sets import _shape_of, reduced, take
    whole = union([reduced(s, tuple(range(len(s.shape))), ()) for s in sets if s is not None], ())
    return None if whole is None else take(whole, np.zeros(_shape_of(out), dtype=np.int64))


class Dependent(Tracer):
    """Dependent(value, sets, trace): a value and the inputs each of its entries depends on.

    Reading the value (``.primal``, a comparison, ``bool``, NumPy's value-only functions) marks
    the detection as decided by values at this point.
    """

    __slots__ = ("_val", "_sets", "_trace")

    def __init__(self, value, sets, trace):
        self._val = value
        self._sets = sets
        self._trace = trace
        self._family = None

    def _under(self):
        return self._val

    @property
    def primal(self):
        self._trace.by_value = True
        return self._val

    @property
    def shape(self):
        return np.shape(self._val)

    @property
    def ndim(self):
        return np.ndim(self._val)

    @property
    def size(self):
        return int(np.size(self._val))

    @property
    def dtype(self):
        v = self._val
        return v.dtype if isinstance(v, Tracer) else np.result_type(v)

    def __repr__(self):
        return f"Dependent(shape={self.shape}, {self._sets!r})"


def refuse_containers(out, who):
    """Refuse a tuple, list or dict as the output of a function with a sparse Jacobian."""
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(f"{who}: the function returned a {type(out).__name__}; a sparse Jacobian "
                        f"has one output array (its rows): return dnp.stack(outputs) for numbers, "
                        f"dnp.concatenate(outputs) for 1-d arrays (import duals.numpy as dnp)")


def detect(f, args, argnum, kwargs=None):
    """detect(f, args, argnum, kwargs=None) -> (IndexSets of f's output, whether it was decided by value).

    ``args[argnum]`` is the input (any shape, its entries numbered in C order); ``f`` returns
    one array or float. The other arguments are constants.
    """
    from .arguments import as_input
    x = as_input(args[argnum], "sparsity", f"argument {argnum}")
    trace = DependencyTrace(new_level())
    call = list(args)
    call[argnum] = Dependent(x, seed(np.shape(x)), trace)
    before_call()
    out = call_at_user_line(f, *call, **(kwargs or {}))
    refuse_containers(out, "sparsity")
    n = int(np.size(x))
    if type(out) is Dependent and out._trace is trace:
        sets = out._sets
    else:
        if isinstance(out, Tracer) and not isinstance(out, Dependent):
            raise TypeError("sparsity: the function returned a value of another transformation; "
                            "detect the sparsity of the outer function instead")
        sets = IndexSets(np.shape(out), n, np.zeros(int(np.size(out)) + 1, dtype=np.int64),
                         np.zeros(0, dtype=np.int64))
    return sets, trace.by_value
