"""Forward mode of compiled code: ``jvp``, ``jacfwd`` and ``hessian`` of a Numba dispatcher.

The differentiated float arguments become duals (an array of dual dtype for an array, one
``np.void`` element of such an array for a scalar; the others pass through unchanged), the
user's own dispatcher is called (Numba compiles, and with ``cache=True`` caches, a
specialisation for the dual types) and the results are unpacked into the shapes of the
NumPy path. The dual arguments live in buffers kept per argument layout and per thread
(:mod:`duals.jit.seeding`), so a call writes primals and seeds instead of building arrays;
results are always copied out of them.

``jacfwd`` pushes all directions together as lanes, ``chunk_size`` at a time (every chunk
has the same lane count, the last one padded, so there is one compilation). ``hessian`` is
forward over forward: duals of duals, the two levels being distinct types.

>>> import numba, numpy as np
>>> f = numba.njit(lambda x: x[0] * x[1] ** 2)
>>> compiled_jacfwd(f)(np.array([1.0, 2.0])).tolist()
[4.0, 4.0]
"""
import threading

import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher

from .. import tree
from ..arguments import in_dtype, output as _output, split_aux as _split_aux
from ..arguments import COMPILED_HESSIAN_LANES, COMPILED_LANES, chunk_lanes as _chunk_lanes
from ..random_states import each_from_one_state
from .python_reach import may_reach_python
from ._types import DualType
from .driver import drivable, hot, jacfwd_driver, jvp_driver, kept_on
from .running import transformation
from .promotion import promoting_copy
from .seeding import SeededArguments, driven_entry, float_dtype, layout_key, layout_key_at
from .calling import (_PROMOTING, _as_struct, _check_dispatcher, _is_dual_array, _leaves,
                      _parts, _plain, _rebuild, _reused, _shape, call_on_duals, dual_array)
from .entry_arguments import _checked_pair, _inputs, _refuse_half, _size, check_aliases, positional

__all__ = ["compiled_jvp", "compiled_jacfwd", "compiled_hessian", "dual_array", "call_on_duals", "MAX_LANES"]

MAX_LANES = COMPILED_LANES  # default lanes per pass of jacfwd; wider inputs are chunked
REUSE_DIRECTIONS = 64  # up to this many directions, seeded buffers are kept between calls


@transformation("jvp", first=1)
def compiled_jvp(f, primals, tangents):
    """compiled_jvp(f, primals, tangents) -> (f(*primals), J·tangents) for a Numba dispatcher ``f``.

    A tangent ``None`` marks a constant argument, passed through unchanged.

    >>> import numba, math
    >>> compiled_jvp(numba.njit(lambda x, n: n * math.sin(x)), (0.0, 3), (1.0, None))
    (0.0, 3.0)
    """
    if type(f) is not CPUDispatcher:
        f = _check_dispatcher(f, "jvp")
    if len(primals) > 1:
        check_aliases(f, primals, [i for i, t in enumerate(tangents) if t is not None], "jvp")
    pattern = _driver_pattern(primals, tangents)
    table = f.__dict__.get("_duals_hot")
    state = table.get(("jvp", len(primals), pattern)) if table is not None and pattern is not None else None
    if state is not None and state.driver is not None:
        found = state.run(*primals, *(tangents if not pattern else [t for t in tangents if t is not None]))
        if found is not None:
            value, tangent = found
            if type(value) is np.ndarray and value.ndim:
                return found
            return _output(value), _output(tangent)
    state = hot(f, ("jvp", len(primals), _none_pattern(tangents) if pattern is None else pattern))
    args, nums, ps, ts = list(primals), [], [], []
    for i, t in enumerate(tangents):
        if t is None:
            continue
        p = primals[i]
        if not ((type(p) is float and type(t) in (float, int))
                or (type(p) is np.ndarray and type(t) is np.ndarray and p.shape == t.shape
                    and p.ndim and p.dtype.kind == "f" and t.dtype.kind in "fiu")):
            p, t = _checked_pair(p, t, i)
        _refuse_half(p, "jvp", f"primal {i}")
        nums.append(i)
        ps.append(p)
        ts.append(t)
    seeded = _reused(("jvp", layout_key(ps)), SeededArguments, ps, (1,), 0)
    for i, dual in zip(nums, seeded.write(ps, ts)):
        args[i] = dual
    out = call_on_duals(f, args, "jvp")
    if state.calls is not None and pattern is not None:
        target = _target(f, JVP_TYPE)
        state.note(lambda: jvp_driver(target, JVP_TYPE, len(primals), nums),
                   drivable(target, primals, out))
    if _is_dual_array(out) and out.ndim:
        return out["primal"].copy(), out["tangent"][..., 0].copy()  # the common case, directly
    leaves, treedef = _leaves(out)
    values, tans = [], []
    for y in leaves:
        parts = _parts(y)
        if parts is None:
            y = _plain(y, "jvp")
            values.append(_output(y))
            tans.append(_output(np.zeros(_shape(y), dtype=float_dtype(y))))
        else:
            values.append(_output(_copy(parts[0])))
            tans.append(_output(parts[1][..., 0].copy()))
    return _rebuild(treedef, values), _rebuild(treedef, tans)


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


JVP_TYPE = DualType(types.float64, 1)


def _driver_pattern(primals, tangents):
    """The constant positions as a bit mask (bit ``i``: tangent ``i`` is None) when every
    differentiated primal is a float or a float64 array with a float64 tangent of its shape
    (what the drivers take); None when the call must go the general way."""
    mask, bit = 0, 1
    for p, t in zip(primals, tangents):
        if t is None:
            mask |= bit
        elif type(p) is _NDARRAY:
            if (type(t) is not _NDARRAY or p.dtype is not _F64 or t.dtype is not _F64
                    or p.shape != t.shape or not p.ndim):
                return None
        elif type(p) is not float or type(t) is not float:
            return None
        bit += bit
    return mask


def _none_pattern(tangents):
    return sum(1 << i for i, t in enumerate(tangents) if t is None)


_F64 = np.dtype(np.float64)  # NumPy's float64 arrays share this dtype object (the fast check)
_NDARRAY = np.ndarray


def _target(f, dual_type):
    """The dispatcher a call of ``f`` on duals of ``dual_type`` runs: ``f`` or its promoting
    copy; None when its arguments themselves had to be promoted."""
    mode = _PROMOTING.get(f)
    if not mode and not f.targetoptions.get("parallel"):
        return f
    return promoting_copy(f, dual_type) if mode is True else None


def compiled_jacfwd(f, argnums=0, has_aux=False, chunk_size=None, workers=None, holomorphic=False):
    """compiled_jacfwd(f, argnums=0, has_aux=False, chunk_size=None, workers=None, holomorphic=False) -> function returning ∂f/∂x.

    Shape ``out.shape + in.shape``; a tuple of blocks when ``argnums`` is a tuple. Every
    direction travels as one lane of a single call when there are at most ``MAX_LANES`` of
    them; more are pushed ``chunk_size`` at a time (all chunks with the same lane count).
    ``workers=`` (see :mod:`duals.workers`) runs the chunks elsewhere, the same chunks.
    ``holomorphic=True``: complex inputs and outputs, the complex derivative ``df/dz``
    (:mod:`duals.jit.complex_entry`); without it complex inputs raise, as in JAX.

    >>> import numba, numpy as np
    >>> compiled_jacfwd(numba.njit(lambda x: x * x))(3.0)
    6.0
    """
    if holomorphic:
        if workers is not None:
            raise NotImplementedError("jacfwd(holomorphic=True) of a Numba dispatcher runs serially; "
                                      "drop workers=")
        from .complex_entry import holomorphic_jacfwd
        return holomorphic_jacfwd(f, argnums, has_aux, chunk_size)
    f = _check_dispatcher(f, "jacfwd")
    pool = _resolve_workers(workers, "jacfwd")
    known = {}
    # the plans live on f, shared by every jacfwd(f): duals.jacfwd(f)(x) made afresh at each call
    # of a Newton loop finds its seeded directions (70 us of a 100 us call to make again)
    plans = kept_on(f, "_duals_jacfwd_plans")
    driven = {}   # (arity,) + layout of the differentiated arguments -> a plan with a driver

    @transformation("jacfwd")
    def jacobian(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "jacfwd")
        if driven:   # the driver's layouts first: no per-argument Python work at all
            plan, found = driven_entry(driven, known, args)
            if plan is not None and plan.hot.driver is not None:
                check_aliases(f, args, found[0], "jacfwd")   # (else _inputs checks below)
                block = plan.hot.run(*args)
                if block is not None:   # the driver's own array: no copy
                    return block if plan.as_is else plan.split(block, fresh=True)
        args, nums, single = _inputs(f, args, argnums, "jacfwd", known, lanes=True)
        layout = layout_key_at(args, nums)
        key = (threading.get_ident(), chunk_size, tuple(nums), single) + layout
        plan = plans.get(key)
        if plan is None:
            if len(plans) > 64:
                plans.clear()
            plan = plans[key] = _JacobianPlan(args, nums, single, chunk_size)
            if plan.drivable:
                plan.hot = hot(f, ("jacfwd", plan.chunk, tuple(nums)) + layout)
        if plan.hot is not None and plan.hot.driver is not None and pool is None and not has_aux:
            block = plan.hot.run(*args)
            if block is not None:
                return plan.split(block)
        if pool is None:
            primals = [args[i] for i in nums]
            passes = each_from_one_state(lambda index: _forward_chunk(
                f, args, nums, plan, index, has_aux, primals), range(len(plan.starts)), args,
                python=lambda: may_reach_python(f, args))
        else:
            from .worker_tasks import forward_chunks
            passes = pool.run(forward_chunks, (f, args, nums, single, chunk_size, has_aux),
                              range(len(plan.starts)), describe=plan.describe)
        blocks, treedef, aux = passes[0]
        if plan.hot is not None and pool is None and not has_aux and plan.hot.calls is not None:
            target = _target(f, plan.dual_type)
            plan.hot.note(lambda: jacfwd_driver(target, plan.dual_type, len(args), nums),
                          drivable(target, args, blocks[0] if treedef is None else None))
            if plan.hot.driver is not None:
                if len(driven) > 64:
                    driven.clear()
                driven[layout] = plan
        jacobians = []
        for k, block in enumerate(blocks):
            if len(passes) > 1:
                block = np.concatenate([p[0][k] for p in passes], axis=-1)
            jacobians.append(plan.split(block))
        result = _rebuild(treedef, jacobians)
        return (result, aux) if has_aux else result

    return jacobian


def _resolve_workers(workers, who):
    if workers is None:
        return None
    from ..workers import resolve
    return resolve(workers, who)


def _forward_chunk(f, args, nums, plan, index, has_aux, primals):
    """One compiled pass of jacfwd: chunk ``index`` of ``plan`` -> (the tangents of every output
    leaf, ``out.shape + (directions,)``, the outputs' treedef, aux (first chunk only)).
    ``args`` (the call's own list) gets the chunk's duals in place of ``primals``."""
    start = plan.starts[index]
    duals = (plan.seeded[index].fill(primals) if plan.seeded is not None
             else SeededArguments(primals, plan.lanes, start, reusable=False).duals)
    for i, dual in zip(nums, duals):
        args[i] = dual
    result = call_on_duals(f, args, "jacfwd")
    aux = None
    if has_aux:
        result, aux = _split_aux(result, "jacfwd")
        aux = _strip(aux) if index == 0 else None
    leaves, treedef = _leaves(result)
    valid = min(plan.chunk, plan.total - start)
    blocks = []
    for y in leaves:
        parts = _parts(y)
        if parts is None:
            y = _plain(y, "jacfwd")
            block = np.zeros(_shape(y) + (valid,), dtype=float_dtype(y))
        else:
            block = parts[1]
        blocks.append(block[..., :valid])
    return blocks, treedef, aux


class _JacobianPlan:
    """What one layout of arguments needs, worked out on its first call: the directions, the
    chunks with their seeded buffers, and where each argument's block lies in the tangents."""

    def __init__(self, args, nums, single, chunk_size):
        primals = [args[i] for i in nums]
        if any(type(p) is not float and np.asarray(p).dtype.kind == "c" for p in primals):
            from .complex_entry import refuse_complex_inputs
            refuse_complex_inputs(args, nums)
        sizes = [_size(p) for p in primals]
        # float32 in, float32 out (the duals compute in float64), as on the NumPy path
        self.narrow = [np.dtype(p.dtype) if isinstance(p, (np.ndarray, np.floating)) and p.dtype.kind == "f"
                       and p.dtype != np.float64 else None for p in primals]
        self.total = sum(sizes)
        self.chunk = _chunk_lanes(chunk_size, self.total, "jacfwd", most=MAX_LANES)
        self.lanes = (self.chunk,)
        self.starts = list(range(0, max(self.total, 1), self.chunk))
        self.seeded = None
        # one pass over float64 inputs: from its third call a compiled driver does the work
        self.hot = None
        self.drivable = len(self.starts) == 1 and all(
            type(p) is float or p.dtype == np.float64 for p in primals)
        if self.drivable:
            self.dual_type = DualType(types.float64, self.chunk)
        if self.total <= REUSE_DIRECTIONS:
            self.seeded = [SeededArguments(primals, self.lanes, start) for start in self.starts]
        self.single = single
        # one vector argument: a driver's block out.shape + (n,) is already the Jacobian
        self.as_is = single and type(primals[0]) is np.ndarray and primals[0].ndim == 1
        self.cuts, offset = [], 0
        for p, n in zip(primals, sizes):
            self.cuts.append((offset, offset + n, p.shape) if isinstance(p, np.ndarray) else (offset,))
            offset += n

    def describe(self, indices):
        """The directions of chunks ``indices`` in words (for errors of ``workers=``)."""
        last = min(self.starts[indices[-1]] + self.chunk, self.total) - 1
        return f"directions {self.starts[indices[0]]}..{last}"

    def split(self, full, fresh=False):
        """Cut the last axis (all directions) of ``full`` into one block per argument; ``fresh``:
        ``full`` is the caller's own (a driver's result), so the blocks are views of it, not
        copies (disjoint ones: writing into one leaves the others as they are)."""
        lead = full.shape[:-1]
        if fresh and self.single and len(self.cuts[0]) == 3 and full.shape[-1] == self.total:
            shape = lead + self.cuts[0][2]
            if shape:
                return full.reshape(shape)
        blocks = []
        for cut in self.cuts:
            if len(cut) == 1:
                part = full[..., cut[0]]
                blocks.append(_output(part) if not part.ndim else part if fresh else part.copy())
            else:
                part = full[..., cut[0]:cut[1]]
                part = (part if fresh else part.copy()).reshape(lead + cut[2])
                blocks.append(part if part.ndim else _output(part))
        if any(self.narrow):
            blocks = [b if d is None else in_dtype(b, np.empty(0, d)) for b, d in zip(blocks, self.narrow)]
        return blocks[0] if self.single else tuple(blocks)


def _strip(aux):
    leaves, treedef = tree.flatten(aux)
    out = []
    for a in leaves:
        s = _as_struct(a)
        while s is not None and s.dtype.names == ("primal", "tangent"):
            s = s["primal"]
        out.append(_output(a if s is None else s.copy()))
    return tree.unflatten(treedef, out)


def compiled_hessian(f, argnums=0, chunk_size=None, workers=None, has_aux=False):
    """compiled_hessian(f, argnums=0, chunk_size=None, workers=None, has_aux=False) -> function returning the Hessian, forward over forward.

    Shape ``out.shape + in.shape + in.shape`` (``in.shape + in.shape`` for a scalar ``f``);
    nested tuples of blocks when ``argnums`` is a tuple. ``workers=`` runs the passes (pairs of
    chunks) elsewhere. With ``has_aux`` ``f`` returns ``(output, aux)`` and the result is
    ``(hessian, aux)``.

    >>> import numba, numpy as np
    >>> compiled_hessian(numba.njit(lambda x: x[0] ** 2 * x[1]))(np.array([1.0, 2.0])).tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    f = _check_dispatcher(f, "hessian")
    pool = _resolve_workers(workers, "hessian")

    @transformation("hessian")
    def hess(*args, **kwargs):
        if kwargs:
            args = positional(f, args, kwargs, "hessian")
        args, nums, single = _inputs(f, args, argnums, "hessian", lanes=True)
        from .reverse import refuse_complex
        refuse_complex(args, nums, "hessian")
        sizes = [_size(args[i]) for i in nums]
        total = sum(sizes)
        chunk = _chunk_lanes(chunk_size, total, "hessian", most=COMPILED_HESSIAN_LANES)
        pairs = [(a, b) for a in range(0, max(total, 1), chunk) for b in range(0, max(total, 1), chunk)]
        if pool is None:
            passes = each_from_one_state(lambda pair: _hessian_pass(f, args, nums, chunk, pair, has_aux),
                                         pairs, args, python=lambda: may_reach_python(f, args))
        else:
            from .worker_tasks import hessian_passes
            passes = pool.run(hessian_passes, (f, args, nums, chunk, has_aux), pairs, describe=lambda block: (
                f"directions (outer, inner) {block[0]}..{block[-1]}, {chunk} each"))
        rows = {(k, a, b): block for (a, b), (blocks, _, _) in zip(pairs, passes)
                for k, block in enumerate(blocks)}
        treedef, aux = passes[0][1], passes[0][2]
        results = []
        for k in range(len(passes[0][0])):
            out_shape = rows[k, 0, 0].shape[:-2]
            full = np.zeros(out_shape + (total, total), rows[k, 0, 0].dtype)   # complex outputs stay complex
            for (kk, a, b), block in rows.items():
                if kk == k:
                    na, nb = min(chunk, total - a), min(chunk, total - b)
                    full[..., b:b + nb, a:a + na] = block[..., :nb, :na]
            results.append(_blocks2(full, nums, sizes, args, out_shape, single))
        hessian = tree.unflatten(treedef, results)
        return (hessian, aux) if has_aux else hessian

    return hess


def _hessian_pass(f, args, nums, chunk, pair, has_aux=False):
    """One forward-over-forward pass of ``chunk`` × ``chunk`` lanes: outer directions from
    ``pair[0]``, inner from ``pair[1]`` -> (one block ``out + (outer, inner)`` per output leaf,
    treedef, aux as plain values or None)."""
    a, b = pair
    call = list(args)
    primals = [args[i] for i in nums]
    for i, dual in zip(nums, SeededArguments(primals, (chunk, chunk), (b, a), reusable=False).duals):
        call[i] = dual
    result, aux = call_on_duals(f, call, "hessian"), None
    if has_aux:
        result, aux = _split_aux(result, "hessian")
        aux = _strip(aux)
    leaves, treedef = tree.flatten(result)
    blocks = []
    for y in leaves:
        s = _as_struct(y)
        if s is None or s.dtype["primal"].names is None:
            y = _plain(y if s is None else s["primal"], "hessian")
            block = np.zeros(_shape(y) + (chunk, chunk))
        else:
            block = s["tangent"]["tangent"]  # out + (outer lane, inner lane)
        blocks.append(block)
    return blocks, treedef, aux


def _blocks2(full, nums, sizes, args, out_shape, single):
    offsets = np.cumsum([0] + sizes)
    grid = []
    for r, (i, n) in enumerate(zip(nums, sizes)):
        row = []
        for c, (j, m) in enumerate(zip(nums, sizes)):
            part = np.ascontiguousarray(full[..., offsets[r]:offsets[r] + n, offsets[c]:offsets[c] + m])
            row.append(_output(in_dtype(part.reshape(out_shape + _shape(args[i]) + _shape(args[j])), args[j])))
        grid.append(tuple(row))
    return grid[0][0] if single else tuple(grid)
