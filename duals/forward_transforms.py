"""Forward mode on the NumPy path: jvp and jacfwd (a dispatcher goes to duals.jit)."""
import math

import numpy as np

from . import tree
from .arguments import Containers, argnums as _argnums, as_input as _as_input, in_dtype
from .arguments import chunk_lanes as _chunk_lanes, is_compiled as _is_compiled, output as _output, split_aux as _split_aux
from .core import Tracer, new_level
from .float_warnings import call_at_user_line, reported_at_user_line
from .validation import check_numeric_dtype, check_real_tangent
from .random_states import each_from_one_state
from .forward import Dual, JVPTrace
from .holomorphic import HolomorphicJVPTrace, complex_like, real_sparse, refuse_complex, require_complex
from .ops import is_complex
from .ops.shape import concatenate, getitem, moveaxis, reshape
from .transformed import returns_transformed
from . import workers as _workers
from ._transform_support import (_check_leaf, _closing, _compiled, _dtype, _jit, _on_containers, _shape,
                                 _sparse, _strip, _zeros)

__all__ = ["jvp", "jacfwd"]

# ---------------------------------------------------------------- forward mode


def jvp(f, primals, tangents, has_aux=False):
    """jvp(f, primals, tangents, has_aux=False) -> (f(*primals), J·tangents).

    ``primals`` and ``tangents`` are tuples of equal length; a tangent ``None`` marks a
    constant argument (integers, step counts). With ``has_aux``, ``f`` returns ``(output, aux)``
    and the result is ``(output, J·tangents, aux)``, as JAX's.

    >>> import numpy as np
    >>> jvp(np.sin, (0.0,), (2.0,))
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents must be tuples, "
                        "for example jvp(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents; "
                         f"give one tangent per primal (None for a constant)")
    if _is_compiled(f):
        result = _jit().compiled_jvp(f, primals, tangents)
        if not has_aux:
            return result
        (out, aux), (tangent, _) = _split_aux(result[0], "jvp"), _split_aux(result[1], "jvp")
        return out, tangent, aux
    selected = tuple(i for i, t in enumerate(tangents) if t is not None)
    if Containers.present(primals, selected):
        if any(tree.flatten(primals[i])[1] != tree.flatten(tangents[i])[1] for i in selected):
            raise ValueError("jvp: each tangent must have the structure of its primal (the same "
                             "nesting of tuples, lists and dicts)")
        c = Containers(primals, selected, False)
        flat_tangents = Containers(tangents, selected, False).flat_args
        return jvp(lambda *leaves: f(*c.rebuild(leaves)), tuple(c.flat_args), tuple(flat_tangents),
                   has_aux=has_aux)
    trace = JVPTrace(new_level(), lanes=1)
    args = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if t is None:
            args.append(p)
            continue
        p = _as_input(p, "jvp", f"primal {i}")
        if not isinstance(t, Tracer):
            t = np.asarray(t)
            check_numeric_dtype(t, f"jvp: tangent {i}")
            check_real_tangent(p, t, f"jvp: tangent {i}")
            t = t.astype(_dtype(p), copy=False)
        if _shape(t) != _shape(p):
            raise ValueError(f"jvp: tangent {i} has shape {_shape(t)} but primal {i} has shape "
                             f"{_shape(p)}; they must match")
        t = reshape(t, (1,) + _shape(p)) if isinstance(t, Tracer) else np.asarray(t)[None]
        args.append(Dual._new(p, t, trace))
    out = _closing(trace, call_at_user_line, f, *args)
    if has_aux:
        out, aux = _split_aux(out, "jvp")
        aux = _strip(aux, lambda a: type(a) is Dual and a._trace is trace)
    leaves, treedef = tree.flatten(out)
    primals_out, tangents_out = [], []
    for y in leaves:
        _check_leaf(y, "jvp", trace)
        if type(y) is Dual and y._trace is trace:
            primals_out.append(_output(y.primal))
            t = y._tangent
            tangents_out.append(_output(complex_like(getitem(t, 0) if isinstance(t, Tracer) else t[0],
                                                      y.primal)))
        else:
            primals_out.append(_output(y))
            tangents_out.append(_output(_zeros(_shape(y), y)))
    result = tree.unflatten(treedef, primals_out), tree.unflatten(treedef, tangents_out)
    return result + (aux,) if has_aux else result


@returns_transformed
def jacfwd(f, argnums=0, has_aux=False, chunk_size=None, sparsity=None, workers=None, holomorphic=False):
    """jacfwd(f, argnums=0, has_aux=False, chunk_size=None, sparsity=None, workers=None, holomorphic=False) -> function returning ∂f/∂x by forward mode.

    The Jacobian has shape ``out.shape + in.shape``. All input directions travel together
    as lanes, ``chunk_size`` at a time (the default keeps each intermediate near 64 MB).

    Args:
        f: the function (Python code duals traces, or a Numba dispatcher: compiled lanes).
        argnums: which positional arguments to differentiate (an int or a tuple of ints).
        has_aux: ``f`` returns ``(output, aux)``; the result is then ``(jacobian, aux)``.
        chunk_size: directions per pass (default: within 64 MB per intermediate on the NumPy
            path, 16 lanes for a dispatcher).
        sparsity: ``"auto"``, a boolean or ``scipy.sparse`` pattern, or a :func:`sparsity`
            result: a ``scipy.sparse.csr_array`` of shape ``(out.size, in.size)``, one lane per
            column colour (see the sparse derivatives page of the docs).
        workers: where the chunks run (``docs/workers.md``): ``None`` here; an int (a pool
            of that many processes), a ``concurrent.futures.Executor``, a
            ``dask.distributed.Client`` or a map-like callable. The chunks are those of the
            serial call, so the result is the same bits.
        holomorphic: the inputs are complex and ``f`` is holomorphic: the result is the complex
            derivative ``df/dz`` (complex inputs raise without it; see docs/complex.md).

    >>> import numpy as np
    >>> jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> jacfwd(lambda x: x ** 2, sparsity="auto")(np.array([1.0, 2.0])).toarray().tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> jacfwd(lambda x: x ** 2, chunk_size=1, workers=map)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if sparsity is not None:
        if holomorphic:
            raise NotImplementedError("jacfwd: sparsity= with holomorphic=True is not supported; "
                                      "drop one of them")
        return real_sparse(_sparse().sparse_jacobian(f, argnums, has_aux, chunk_size, sparsity,
                                                      mode="fwd", workers=workers), argnums, "jacfwd")
    if _is_compiled(f):
        entry = _jit().compiled_jacfwd
        return entry(f, argnums=argnums, has_aux=has_aux, chunk_size=chunk_size, workers=workers,
                     **_compiled(entry, holomorphic, "jacfwd"))
    return _on_containers(_jacfwd, f, argnums, "jacfwd", has_aux=has_aux, chunk_size=chunk_size,
                          workers=workers, holomorphic=holomorphic)


def _jacfwd(f, argnums=0, has_aux=False, chunk_size=None, group=None, workers=None, holomorphic=False):
    pool = _workers.resolve(workers, "jacfwd")

    @reported_at_user_line
    def jacobian(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "jacfwd")
        args = list(args)
        for i in nums:
            args[i] = _as_input(args[i], "jacfwd", f"argument {i}")
        (require_complex if holomorphic else refuse_complex)([args[i] for i in nums], "jacfwd", "inputs")
        sizes = [math.prod(_shape(args[i])) for i in nums]
        total = sum(sizes)
        chunk = _chunk_lanes(chunk_size, total, "jacfwd", size=max(sizes + [1]))
        starts = range(0, max(total, 1), chunk)
        fixed = (f, args, kwargs, nums, sizes, total, chunk, has_aux, holomorphic)
        if pool is None:
            passes = each_from_one_state(lambda start: _forward_pass(*fixed, start), starts,
                                         tuple(args) + tuple(kwargs.values()))
        else:
            _workers.check_untraced(args, kwargs, "jacfwd")
            from .worker_tasks import forward_passes
            passes = pool.run(forward_passes, fixed, starts, describe=lambda block: (
                f"directions {block[0]}..{min(block[-1] + chunk, total) - 1}"))
        out_shapes, treedef, aux = passes[0][1:]
        jacobians = []
        for k, out_shape in enumerate(out_shapes):
            tangents = [p[0][k] for p in passes]
            stacked = tangents[0] if len(tangents) == 1 else concatenate(tangents, axis=0)
            if holomorphic and not is_complex(stacked):
                stacked = stacked.astype(np.result_type(stacked, 1j))   # df/dz of a real-valued f
            blocks = []
            offset = 0
            for i, n in zip(nums, sizes):
                if isinstance(stacked, Tracer):
                    part = getitem(stacked, slice(offset, offset + n))
                    part = moveaxis(part, 0, -1) if out_shape else part
                    part = reshape(part, out_shape + _shape(args[i]))
                else:   # plain lanes: NumPy's own views, as the primitives would make them
                    part = stacked[offset:offset + n]
                    part = part.transpose(tuple(range(1, part.ndim)) + (0,)) if out_shape else part
                    part = part.reshape(out_shape + _shape(args[i]))
                offset += n
                blocks.append(_output(in_dtype(part, args[i])))
            jacobians.append(blocks[0] if single else group(blocks) if group else tuple(blocks))
        result = tree.unflatten(treedef, jacobians)
        return (result, aux) if has_aux else result

    return jacobian


def _forward_pass(f, args, kwargs, nums, sizes, total, chunk, has_aux, holomorphic, start):
    """One pass of jacfwd: directions ``start`` to ``start + chunk`` as lanes -> (the tangent
    lanes of every output leaf, the outputs' shapes, their treedef, aux (first pass only))."""
    lanes = min(chunk, total - start) if total else 0
    trace = (HolomorphicJVPTrace(new_level(), lanes, "jacfwd") if holomorphic
             else JVPTrace(new_level(), lanes=lanes))
    call = list(args)
    offset = 0
    for i, n in zip(nums, sizes):
        lo, hi = max(start, offset), min(start + lanes, offset + n)
        if lo < hi:
            seed = np.zeros((lanes, n), dtype=_dtype(args[i]))
            first = (lo - start) * n + (lo - offset)   # lane lo - start seeds entry lo - offset
            seed.reshape(-1)[first:first + (hi - lo) * (n + 1):n + 1] = 1.0
            call[i] = Dual._new(args[i], seed.reshape((lanes,) + _shape(args[i])), trace)
        offset += n
    result = _closing(trace, f, *call, **kwargs)
    aux = None
    if has_aux:
        result, aux = _split_aux(result, "jacfwd")
        aux = _strip(aux, lambda a: type(a) is Dual and a._trace is trace) if start == 0 else None
    leaves, treedef = tree.flatten(result)
    tangents, shapes = [], []
    for y in leaves:
        _check_leaf(y, "jacfwd", trace)
        ours = type(y) is Dual and y._trace is trace
        tangents.append(complex_like(y._tangent, y.primal) if ours else _zeros((lanes,) + _shape(y), y))
        shapes.append(_shape(y.primal if type(y) is Dual else y))
    return tangents, shapes, treedef, aux


