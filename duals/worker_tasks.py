"""The tasks that ``workers=`` runs for the transformations of Python code, and their assembly.

Each task computes, for its block of units, exactly what the serial loop of
:mod:`duals.forward_transforms` and :mod:`duals.reverse_transforms` compute for them, by the same
functions: :func:`forward_passes` runs ``_forward_pass`` (one chunk of forward lanes) per chunk
start, and :func:`reverse_rows` records ``f`` once and runs ``_pull_rows`` (one backward sweep of a
chunk of output rows) per chunk. Functions here are pickled by reference, so they live at
module level.
"""
import math

from . import tree
from . import workers as _workers
from .arguments import as_input, chunk_lanes, split_aux
from .random_states import each_from_one_state, untouched_call
from .reverse import Var
from .forward_transforms import _forward_pass
from .reverse_transforms import _pull_rows, _reverse_call, _value_of
from ._transform_support import _check_leaf, _shape, _strip

__all__ = ["forward_passes", "jacrev_spread", "reverse_rows"]


def forward_passes(f, args, kwargs, nums, sizes, total, chunk, has_aux, holomorphic, starts):
    """A worker's task under ``jacfwd(workers=)``: one forward pass per chunk start of ``starts``."""
    return each_from_one_state(
        lambda start: _forward_pass(f, args, kwargs, nums, sizes, total, chunk, has_aux, holomorphic, start),
        starts, tuple(args) + tuple(kwargs.values()))


def jacrev_spread(pool, f, args, kwargs, nums, has_aux, chunk_size):
    """jacrev under ``workers=``: the serial loop's chunks of output rows, spread over tasks that
    each record ``f`` once; one plain evaluation here tells the outputs' shapes.

    Returns (outputs of that evaluation, their treedef, the swept rows per output as the serial
    loop has them, aux, the inputs), or None when there is no row to spread.
    """
    args = list(args)
    for i in nums:
        args[i] = as_input(args[i], "jacrev", f"argument {i}")
    _workers.check_untraced(args, kwargs, "jacrev")
    out = untouched_call(f, args, kwargs)   # (the tasks start from the arguments as given)
    if has_aux:
        out = split_aux(out, "jacrev")[0]
    outs, treedef = tree.flatten(out)
    units = []
    for j, y in enumerate(outs):
        _check_leaf(y, "jacrev")
        m = math.prod(_shape(y))
        chunk = chunk_lanes(chunk_size, m, "jacrev", size=m) if m else 1
        units.extend((j, start, min(chunk, m - start)) for start in range(0, m, chunk))
    if not units:
        return None
    results = pool.run(reverse_rows, (f, args, kwargs, nums, has_aux, units[0]), units,
                       describe=_describe_rows, per_worker=1)
    rows = [[] for _ in outs]
    for (j, _, _), (pulled, _) in zip(units, results):
        if pulled is not None:
            rows[j].append(pulled)
    return outs, treedef, rows, results[0][1], [args[i] for i in nums]


def _describe_rows(block):
    (j0, s0, _), (j1, s1, n1) = block[0], block[-1]
    return f"rows {s0} of output {j0} to {s1 + n1 - 1} of output {j1}"


def reverse_rows(f, args, kwargs, nums, has_aux, first, units):
    """A worker's task under ``jacrev(workers=)``: one recording of ``f``, then one backward sweep
    per unit ``(output, start, lanes)`` -> [(the rows, or None for an output that does not
    depend on the inputs; aux for the first unit of all, else None)]."""
    trace, leaves, out = _reverse_call(f, args, nums, "jacrev", kwargs)
    aux = None
    if has_aux:
        out, aux = split_aux(out, "jacrev")
        aux = _strip(aux, lambda a: type(a) is Var and a._trace is trace) if first in units else None
    outs = tree.flatten(out)[0]
    results = []
    for unit in units:
        j, start, lanes = unit
        y = outs[j]
        ours = type(y) is Var and y._trace is trace
        pulled = _pull_rows(y, _value_of(y, trace), leaves, start, lanes) if ours else None
        results.append((pulled, aux if unit == first else None))
    return results
