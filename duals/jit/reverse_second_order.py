"""Second order of compiled code: ``hvp`` and ``hessian`` of a Numba dispatcher, forward over reverse.

The differentiated inputs become adjoints over dual numbers (``AdjointType(DualType)``): the
recorded partials and the swept adjoints carry tangent lanes, so one recording seeded with the
directions ``V`` plus one sweep gives the gradient and ``H·V`` for every lane at once.
:func:`compiled_hessian_auto`, what ``duals.hessian`` gives a dispatcher, takes this for a scalar
output and forward over forward (:func:`duals.jit.compiled_hessian`) otherwise.

>>> import numba, numpy as np
>>> compiled_hvp(numba.njit(lambda x: x[0] ** 3), np.array([2.0]), np.array([1.0])).tolist()
[12.0]
"""
import numpy as np

from ..arguments import chunk_lanes
from ..random_states import each_from_one_state, restore, snapshot
from ..validation import check_float_output
from ._types import dual_dtype
from .api import compiled_hessian, _resolve_workers
from .calling import _check_dispatcher, _shape
from .entry_arguments import _inputs, _size, positional
from .python_reach import may_reach_python
from .reverse import NotScalarOutput, _Recording, _release, _scalar_node, _thread_tape, split_inputs
from .running import transformation
from .sweeps import untouched

__all__ = ["compiled_hvp", "compiled_hessian_rev", "compiled_hessian_auto", "REVERSE_HESSIAN_LANES"]

REVERSE_HESSIAN_LANES = 8  # directions per forward-over-reverse pass of hessian


def _dual_sweep(f, args, nums, who, seeds, has_aux=False):
    """Record ``f`` on adjoints over duals whose lanes are ``seeds`` (entries × lanes) and sweep
    from its scalar output: (recording, value, gradient, directional derivatives of the gradient
    (entries × lanes), aux as plain values or None)."""
    lanes = seeds.shape[1]
    base = dual_dtype(lanes)
    tape = _thread_tape(base)
    try:
        rec = _Recording(f, args, nums, who, tape, base=base, seeds=seeds)
        values, nodes, _, aux = rec.outputs(who, has_aux)
        node, value = _scalar_node(values, nodes, who)
        adj = untouched(tape.recorded, base)
        adj["primal"][node] = 1.0
        swept = rec.sweep(adj)
        return rec, value, swept["primal"].copy(), swept["tangent"].copy(), aux
    finally:
        _release(tape)


@transformation("hvp", first=1)
def compiled_hvp(f, x, v, *args):
    """compiled_hvp(f, x, v, *args) -> ``H(x)·v`` of a scalar compiled ``f(x, *args)`` (``args``
    held constant): one recording over duals of one lane (seeded with ``v``) and one sweep.

    >>> import numba, numpy as np
    >>> compiled_hvp(numba.njit(lambda x: x[0] ** 2 * x[1]), np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [4.0, 2.0]
    """
    f = _check_dispatcher(f, "hvp")
    call, nums, _ = _inputs(f, (x,) + args, 0, "hvp")
    x = call[0]
    v = np.asarray(v, dtype=np.float64)
    if v.shape != _shape(x):
        raise ValueError(f"hvp: v has shape {v.shape} but x has shape {_shape(x)}; they must match")
    rec, value, _, tangents, _ = _dual_sweep(f, call, nums, "hvp", v.reshape(-1, 1))
    check_float_output(value, "hvp")
    return rec.split(tangents[:, 0], call, nums)[0]


def compiled_hessian_rev(f, argnums=0, chunk_size=None, workers=None, has_aux=False):
    """compiled_hessian_rev(f, argnums=0, chunk_size=None, workers=None, has_aux=False) -> function returning the Hessian of a
    scalar compiled ``f``, forward over reverse: ``chunk_size`` columns (default
    :data:`REVERSE_HESSIAN_LANES`) per recording and sweep, so ``n`` inputs cost about ``n /
    chunk_size`` gradients. Nested tuples of blocks when ``argnums`` is a tuple. ``workers=``
    runs the chunks of columns elsewhere (:mod:`duals.workers`). With ``has_aux`` ``f``
    returns ``(value, aux)`` and the result is ``(hessian, aux)``.

    >>> import numba, numpy as np
    >>> compiled_hessian_rev(numba.njit(lambda x: x[0] ** 2 * x[1]))(np.array([1.0, 2.0])).tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    f = _check_dispatcher(f, "hessian")
    pool = _resolve_workers(workers, "hessian")
    known = {}

    @transformation("hessian")
    def hess(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "hessian")
        args, nums, single = _inputs(f, args, argnums, "hessian", known)
        total = sum(_size(args[i]) for i in nums)
        lanes = chunk_lanes(chunk_size, total, "hessian", most=REVERSE_HESSIAN_LANES)
        starts = range(0, max(total, 1), lanes)
        if pool is None:
            columns = each_from_one_state(lambda start: hessian_columns(f, args, nums, total, lanes, start,
                                                                        has_aux), starts, args,
                                          python=lambda: may_reach_python(f, args))
        else:
            from .worker_tasks import hessian_column_chunks
            columns = pool.run(hessian_column_chunks, (f, args, nums, total, lanes, has_aux), starts,
                               describe=lambda block: f"columns {block[0]}..{min(block[-1] + lanes, total) - 1}")
        full = np.zeros((total, total))
        for start, (block, _) in zip(starts, columns):
            full[:, start:start + block.shape[1]] = block
        grid, offset = [], 0
        for i in nums:
            shape, n = _shape(args[i]), _size(args[i])
            grid.append(tuple(split_inputs(full[offset:offset + n].reshape(shape + (total,)), args, nums,
                                           lead=shape)))
            offset += n
        hessian = grid[0][0] if single else tuple(grid)
        return (hessian, columns[0][1]) if has_aux else hessian

    return hess


def hessian_columns(f, args, nums, total, lanes, start, has_aux=False):
    """Hessian columns ``start`` to ``start + lanes`` (fewer at the end): one recording over duals
    seeded with those directions and one sweep -> (``(total, count)``, aux or None)."""
    count = min(lanes, total - start)
    seeds = np.zeros((total, lanes))
    seeds[start + np.arange(count), np.arange(count)] = 1.0
    _, _, _, tangents, aux = _dual_sweep(f, args, nums, "hessian", seeds, has_aux)
    return tangents[:, :count], aux


def compiled_hessian_auto(f, argnums=0, chunk_size=None, workers=None, has_aux=False):
    """compiled_hessian_auto(f, argnums=0, chunk_size=None, workers=None, has_aux=False) -> the Hessian function ``duals.hessian`` gives a
    dispatcher: forward over reverse (:func:`compiled_hessian_rev`) for a scalar output, forward
    over forward (:func:`duals.jit.compiled_hessian`) for a non-scalar output or complex
    intermediates (the tape holds real numbers); ``chunk_size`` and ``workers`` go to the one taken.

    Forward over reverse is taken at every size: nested duals compile every operation over a
    dual base, 2-4x longer than one recording over duals for array and linear-algebra code, and
    run slower too, even at 3 inputs (``benchmarks/hessian_modes.py``), except for factorisations
    of larger matrices (a Cholesky of n beyond a few dozen), whose every scalar operation the
    tape records (docs/compiled.md): ``duals.jit.compiled_hessian`` there.

    >>> import numba, numpy as np
    >>> float(compiled_hessian_auto(numba.njit(lambda x: np.sum(x ** 3)))(np.ones(12)).trace())
    72.0
    """
    forward = compiled_hessian(f, argnums=argnums, chunk_size=chunk_size, workers=workers, has_aux=has_aux)
    reverse = compiled_hessian_rev(f, argnums=argnums, chunk_size=chunk_size, workers=workers, has_aux=has_aux)
    known = {}

    @transformation("hessian")
    def hess(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "hessian")
        args = _inputs(f, args, argnums, "hessian", known)[0]
        if not known.get("forward"):
            # the attempt runs f (draws its noise, changes its arrays) before it can fail
            start = snapshot(args, python=lambda: may_reach_python(f, args))
            try:
                return reverse(*args)
            except NotScalarOutput:
                restore(start)
            except TypeError as exc:   # complex intermediates: forward over forward only
                from .complex_rules import FORWARD_ONLY
                if FORWARD_ONLY not in str(exc):
                    raise
                restore(start)
            known["forward"] = True
        return forward(*args)

    return hess
