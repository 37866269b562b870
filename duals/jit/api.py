"""Forward mode of compiled code: ``jvp``, ``jacfwd`` and ``hessian`` of a Numba dispatcher.

The differentiated float arguments become duals (a :class:`duals.Dual` for a scalar, an
array of dual dtype for an array; the others pass through unchanged), the user's own
dispatcher is called (Numba compiles, and with ``cache=True`` caches, a specialisation for
the dual types) and the results are unpacked into the shapes of the NumPy path.

``jacfwd`` pushes all directions together as lanes, ``chunk_size`` at a time (every chunk
has the same lane count, the last one padded, so there is one compilation). ``hessian`` is
forward over forward: duals of duals, the two levels being distinct types.

>>> import numba, numpy as np
>>> f = numba.njit(lambda x: x[0] * x[1] ** 2)
>>> compiled_jacfwd(f)(np.array([1.0, 2.0])).tolist()
[4.0, 4.0]
"""
import numpy as np
from numba.core import errors as nb_errors

from .. import tree
from ..forward import Dual
from ..transforms import _argnums, _as_input, _is_compiled, _output, _split_aux
from ._types import _from_tuple, _trace, _to_tuple, _typeof_dual, dtype_of_type, dual_dtype
from .errors import reraise

__all__ = ["compiled_jvp", "compiled_jacfwd", "compiled_hessian", "dual_array", "MAX_LANES"]

MAX_LANES = 16  # default lanes per pass of jacfwd; wider inputs are chunked


def _check_dispatcher(f, who):
    if not _is_compiled(f):
        raise TypeError(f"{who}: expected a Numba dispatcher (a function decorated with "
                        f"@numba.njit), got {type(f).__name__}; decorate it with @numba.njit, or "
                        f"use duals.{who.replace('compiled_', '')} on a plain Python function")


def _float_dtype(p):
    dt = np.asarray(p).dtype
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _lanes_last(t):
    """``np.moveaxis(t, 0, -1)`` without its argument checking (a few µs per call here)."""
    return t.transpose(tuple(range(1, t.ndim)) + (0,))


def dual_array(primal, tangents, inner=None):
    """dual_array(primal, tangents, inner=None) -> an array of dual dtype (0-d for a scalar).

    ``tangents`` has shape ``(lanes,) + primal.shape``. With ``inner=(inner_tangents,)`` the
    result is a nested dual whose real part carries ``inner_tangents`` and whose outer lanes
    are ``tangents`` (the seeds of forward over forward).

    >>> dual_array(np.array([1.0, 2.0]), np.eye(2))["tangent"].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    p = np.asarray(primal)
    base = _float_dtype(p)
    tangents = np.asarray(tangents, dtype=base)
    if inner is None:
        lanes = tangents.shape[0]
        buf = np.empty(p.shape + (lanes + 1,), dtype=base)
        buf[..., 0] = p
        if lanes == 1:
            buf[..., 1] = tangents[0]
        else:
            buf[..., 1:] = _lanes_last(tangents)
        return buf.view(dual_dtype(lanes, base))[..., 0]
    (inner_t,) = inner
    inner_dt = dual_dtype(inner_t.shape[0], base)
    arr = np.zeros(p.shape, dual_dtype(tangents.shape[0], inner_dt))
    arr["primal"]["primal"] = p
    arr["primal"]["tangent"] = _lanes_last(np.asarray(inner_t, dtype=base))
    arr["tangent"]["primal"] = _lanes_last(tangents)
    return arr


def _argument(p, tangents, inner=None):
    """The dual for one argument: a duals.Dual for a scalar, else an array of dual dtype."""
    if inner is None and type(p) in (float, np.float64):
        t = np.asarray(tangents, dtype=np.float64)
        return Dual._new(float(p), t.reshape(t.shape[0]), _trace(t.shape[0]))
    arr = dual_array(p, tangents, inner)
    if np.ndim(p) == 0:
        return _from_tuple(_to_tuple(arr[()]))
    return arr


def _as_struct(y):
    """A result leaf as an array of dual dtype, or None when it carries no dual."""
    if isinstance(y, Dual) and not isinstance(y.primal, np.ndarray):
        arr = np.zeros((), dtype=dtype_of_type(_typeof_dual(y, None)))
        _fill(arr, y)
        return arr
    if isinstance(y, np.ndarray) and y.dtype.names == ("primal", "tangent"):
        return y
    return None


def _fill(view, y):
    if isinstance(y.primal, Dual):
        _fill(view["primal"], y.primal)
    else:
        view["primal"] = y.primal
    view["tangent"] = y._tangent


def _plain(y, who):
    if isinstance(y, (float, int, np.number, np.ndarray, bool, np.bool_)):
        return y
    raise TypeError(f"{who}: the compiled function returned a {type(y).__name__}; return floats, "
                    f"arrays or tuples of them")


def _call(f, args, who):
    try:
        return f(*args)
    except nb_errors.TypingError as exc:
        reraise(exc, who)


def _shape(x):
    return x.shape if isinstance(x, np.ndarray) else np.shape(x)


def compiled_jvp(f, primals, tangents):
    """compiled_jvp(f, primals, tangents) -> (f(*primals), J·tangents) for a Numba dispatcher ``f``.

    A tangent ``None`` marks a constant argument, passed through unchanged.

    >>> import numba, math
    >>> compiled_jvp(numba.njit(lambda x, n: n * math.sin(x)), (0.0, 3), (1.0, None))
    (0.0, 3.0)
    """
    _check_dispatcher(f, "jvp")
    args = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if t is None:
            args.append(p)
            continue
        p = _as_input(p, "jvp", f"primal {i}")
        t = np.asarray(t)
        if t.dtype.kind not in "fiu":
            raise TypeError(f"jvp: tangent {i} has dtype {t.dtype}; give a float tangent")
        if t.shape != _shape(p):
            raise ValueError(f"jvp: tangent {i} has shape {t.shape} but primal {i} has shape "
                             f"{_shape(p)}; they must match")
        args.append(_argument(p, t[None]))
    out = _call(f, args, "jvp")
    leaves, treedef = tree.flatten(out)
    values, tans = [], []
    for y in leaves:
        s = _as_struct(y)
        if s is None:
            y = _plain(y, "jvp")
            values.append(_output(y))
            tans.append(_output(np.zeros(_shape(y), dtype=_float_dtype(y))))
        else:
            values.append(_output(s["primal"].copy()))
            tans.append(_output(s["tangent"][..., 0].copy()))
    return tree.unflatten(treedef, values), tree.unflatten(treedef, tans)


def _inputs(args, argnums, who):
    nums, single = _argnums(argnums, len(args), who)
    args = list(args)
    for i in nums:
        args[i] = _as_input(args[i], who, f"argument {i}")
    sizes = [args[i].size if isinstance(args[i], np.ndarray) else 1 for i in nums]
    return args, nums, single, sizes


def _seeds(args, nums, sizes, start, lanes):
    """Per differentiated argument: tangents (lanes,) + shape, lane k = direction start + k."""
    total = sum(sizes)
    block = np.zeros((lanes, total))
    k = np.arange(min(lanes, total - start))
    block[k, start + k] = 1.0
    out, offset = [], 0
    for i, n in zip(nums, sizes):
        seed = block[:, offset:offset + n]
        out.append(seed.reshape((lanes,) + _shape(args[i])))
        offset += n
    return out


def _split_blocks(full, nums, sizes, args, lead, single):
    """Split the last axis (all directions) of ``full`` into one block per argument."""
    blocks, offset = [], 0
    for i, n in zip(nums, sizes):
        part = full[..., offset:offset + n]
        blocks.append(_output(np.ascontiguousarray(part).reshape(lead + _shape(args[i]))))
        offset += n
    return blocks[0] if single else tuple(blocks)


def compiled_jacfwd(f, argnums=0, has_aux=False, chunk_size=None):
    """compiled_jacfwd(f, argnums=0, has_aux=False, chunk_size=None) -> function returning ∂f/∂x.

    Shape ``out.shape + in.shape``; a tuple of blocks when ``argnums`` is a tuple.

    >>> import numba, numpy as np
    >>> compiled_jacfwd(numba.njit(lambda x: x * x))(3.0)
    6.0
    """
    _check_dispatcher(f, "jacfwd")

    def jacobian(*args):
        args, nums, single, sizes = _inputs(args, argnums, "jacfwd")
        total = sum(sizes)
        chunk = int(chunk_size) if chunk_size else min(max(total, 1), MAX_LANES)
        if chunk < 1:
            raise ValueError(f"jacfwd: chunk_size must be a positive integer, got {chunk_size}")
        chunk = min(chunk, max(total, 1))
        columns, first, aux = None, None, None
        for start in range(0, max(total, 1), chunk):
            seeds = _seeds(args, nums, sizes, start, chunk)
            call = list(args)
            for i, seed in zip(nums, seeds):
                call[i] = _argument(args[i], seed)
            result = _call(f, call, "jacfwd")
            if has_aux:
                result, aux_now = _split_aux(result, "jacfwd")
                if aux is None:
                    aux = _strip(aux_now)
            leaves, treedef = tree.flatten(result)
            if columns is None:
                columns, first = [[] for _ in leaves], (leaves, treedef)
            valid = min(chunk, total - start)
            for k, y in enumerate(leaves):
                s = _as_struct(y)
                if s is None:
                    y = _plain(y, "jacfwd")
                    columns[k].append(np.zeros(_shape(y) + (valid,), dtype=_float_dtype(y)))
                else:
                    columns[k].append(s["tangent"][..., :valid])
        leaves, treedef = first
        jacobians = []
        for k, y in enumerate(leaves):
            full = np.concatenate(columns[k], axis=-1)[..., :total]
            out_shape = full.shape[:-1]
            jacobians.append(_split_blocks(full, nums, sizes, args, out_shape, single))
        result = tree.unflatten(treedef, jacobians)
        return (result, aux) if has_aux else result

    return jacobian


def _strip(aux):
    leaves, treedef = tree.flatten(aux)
    out = []
    for a in leaves:
        s = _as_struct(a)
        while s is not None and s.dtype.names == ("primal", "tangent"):
            s = s["primal"]
        out.append(_output(a if s is None else s.copy()))
    return tree.unflatten(treedef, out)


def compiled_hessian(f, argnums=0, chunk_size=None):
    """compiled_hessian(f, argnums=0, chunk_size=None) -> function returning the Hessian, forward over forward.

    Shape ``out.shape + in.shape + in.shape`` (``in.shape + in.shape`` for a scalar ``f``);
    nested tuples of blocks when ``argnums`` is a tuple.

    >>> import numba, numpy as np
    >>> compiled_hessian(numba.njit(lambda x: x[0] ** 2 * x[1]))(np.array([1.0, 2.0])).tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    _check_dispatcher(f, "hessian")

    def hess(*args):
        args, nums, single, sizes = _inputs(args, argnums, "hessian")
        total = sum(sizes)
        chunk = int(chunk_size) if chunk_size else min(max(total, 1), 8)
        chunk = min(chunk, max(total, 1))
        rows, first = {}, None
        for a in range(0, max(total, 1), chunk):
            inner = _seeds(args, nums, sizes, a, chunk)
            for b in range(0, max(total, 1), chunk):
                outer = _seeds(args, nums, sizes, b, chunk)
                call = list(args)
                for i, si, so in zip(nums, inner, outer):
                    call[i] = _argument(args[i], so, inner=(si,))
                leaves, treedef = tree.flatten(_call(f, call, "hessian"))
                first = first or (leaves, treedef)
                for k, y in enumerate(leaves):
                    s = _as_struct(y)
                    if s is None or s.dtype["primal"].names is None:
                        y = _plain(y if s is None else s["primal"], "hessian")
                        block = np.zeros(_shape(y) + (chunk, chunk))
                    else:
                        block = s["tangent"]["tangent"]  # out + (outer lane, inner lane)
                    rows[k, a, b] = block
        leaves, treedef = first
        results = []
        for k in range(len(leaves)):
            out_shape = rows[k, 0, 0].shape[:-2]
            full = np.zeros(out_shape + (total, total))
            for (kk, a, b), block in rows.items():
                if kk == k:
                    na, nb = min(chunk, total - a), min(chunk, total - b)
                    full[..., b:b + nb, a:a + na] = block[..., :nb, :na]
            results.append(_blocks2(full, nums, sizes, args, out_shape, single))
        return tree.unflatten(treedef, results)

    return hess


def _blocks2(full, nums, sizes, args, out_shape, single):
    offsets = np.cumsum([0] + sizes)
    grid = []
    for r, (i, n) in enumerate(zip(nums, sizes)):
        row = []
        for c, (j, m) in enumerate(zip(nums, sizes)):
            part = np.ascontiguousarray(full[..., offsets[r]:offsets[r] + n, offsets[c]:offsets[c] + m])
            row.append(_output(part.reshape(out_shape + _shape(args[i]) + _shape(args[j]))))
        grid.append(tuple(row))
    return grid[0][0] if single else tuple(grid)
