"""The tasks that ``workers=`` runs for compiled code (Numba dispatchers), and their assembly.

Each task computes what the serial loop computes for its units, by the same functions:

- ``jacfwd``: :func:`forward_chunks` runs ``api._forward_chunk`` for its chunks of lanes (the
  serial call's chunks: same lane count, same padding of the last one);
- ``hessian`` forward over forward: :func:`hessian_passes` runs ``api._hessian_pass`` for its
  pairs of chunks;
- ``hessian`` forward over reverse: :func:`hessian_column_chunks` runs
  ``reverse_second_order.hessian_columns`` (one recording and sweep per chunk of columns);
- ``jacrev``: :func:`jacrev_rows` gives each worker one share of the output's entries; it
  records ``f`` once and sweeps its share by ``reverse.pull_rows``. The compiled sweep
  carries every cotangent lane on its own, so a row is the same bits in any share.

A dispatcher is pickled by Numba itself: its Python function by value, rebuilt once per worker
process, which compiles it there or loads it from Numba's cache (``cache=True``); in a process
forked from the caller it is the caller's own dispatcher, compiled code included.
"""
import numpy as np

from ..random_states import each_from_one_state
from .api import _JacobianPlan, _forward_chunk, _hessian_pass
from .reverse import _release, _thread_tape, jacobian_blocks, pull_rows, record_outputs
from .reverse_second_order import hessian_columns

__all__ = ["forward_chunks", "hessian_passes", "hessian_column_chunks", "jacrev_rows", "jacrev_shares"]


def forward_chunks(f, args, nums, single, chunk_size, has_aux, indices):
    """A worker's task under ``jacfwd(workers=)``: chunks ``indices`` of the plan the serial call
    makes for these arguments."""
    plan = _JacobianPlan(args, nums, single, chunk_size)
    args = list(args)   # a task's own list (threads share theirs)
    primals = [args[i] for i in nums]
    return each_from_one_state(lambda index: _forward_chunk(f, args, nums, plan, index, has_aux, primals),
                               indices, args)


def hessian_passes(f, args, nums, chunk, has_aux, pairs):
    """A worker's task under ``hessian(workers=)``, forward over forward: one pass per pair."""
    return each_from_one_state(lambda pair: _hessian_pass(f, args, nums, chunk, pair, has_aux), pairs, args)


def hessian_column_chunks(f, args, nums, total, lanes, has_aux, starts):
    """A worker's task under ``hessian(workers=)``, forward over reverse: one chunk of columns per start."""
    return each_from_one_state(lambda start: hessian_columns(f, args, nums, total, lanes, start, has_aux),
                               starts, args)


def jacrev_rows(pool, f, args, nums, single, has_aux, chunk_size):
    """``compiled_jacrev`` under ``workers=``: the output's entries in one share per worker, each
    share recorded once and swept ``chunk_size`` lanes at a time; the rows assembled in order."""
    shares = max(1, pool.parallelism)
    results = pool.run(jacrev_shares, (f, args, nums, has_aux, chunk_size, shares), range(shares),
                       describe=lambda block: f"share {block[0] + 1} of {shares} of the output's entries",
                       per_worker=1)
    rows = np.concatenate([r[0] for r in results], axis=0)
    _, shapes, treedef, aux = results[0]
    jac = jacobian_blocks(rows, shapes, treedef, args, nums, single)
    return (jac, aux) if has_aux else jac


def jacrev_shares(f, args, nums, has_aux, chunk_size, shares, indices):
    """A worker's task under ``jacrev(workers=)``: one recording of ``f``, then the rows of shares
    ``indices`` (share ``b`` of ``shares``: entries ``m b // shares`` to ``m (b + 1) // shares``)
    -> [(rows, output shapes, treedef, aux)]."""
    tape = _thread_tape(np.float64)
    try:
        rec, nodes, treedef, aux, flat = record_outputs(f, args, nums, "jacrev", tape, has_aux)
        m = flat.size
        return [(pull_rows(rec, flat[m * b // shares:m * (b + 1) // shares], chunk_size),
                 [n.shape for n in nodes], treedef, aux) for b in indices]
    finally:
        _release(tape)
