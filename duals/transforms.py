"""The composable transformations: jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian, hvp.

Each call opens a fresh trace (a new level, compared by identity), wraps the selected
arguments in its traced values, runs ``f`` and unwraps what comes back. Values of other
traces pass through untouched, so every transformation nests inside every other.
"""
import math

import numpy as np

from . import tree
from .arguments import Containers, argnums as _argnums, as_input as _as_input, in_dtype
from .arguments import chunk_lanes as _chunk_lanes, is_compiled as _is_compiled, output as _output, split_aux as _split_aux
from .core import Tracer, escaped, new_level, refuse_stale
from .float_warnings import call_at_user_line, reported_at_user_line
from .validation import check_float_output, check_numeric_dtype, check_real_tangent
from .random_states import each_from_one_state
from .forward import Dual, JVPTrace
from .holomorphic import HolomorphicJVPTrace, HolomorphicReverseTrace, RealOutputs, complex_like
from .holomorphic import real_sparse, refuse_complex, require_complex
from .ops import is_complex
from .ops.shape import concatenate, getitem, moveaxis, reshape
from .reverse import ReverseTrace, Var, backward
from .transformed import returns_transformed
from . import workers as _workers

__all__ = ["jvp", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian", "hessian",
           "hvp", "value_grad_hessian", "sparsity"]



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
                                  f"supported; differentiate the Python function instead")
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
    try:
        out = call(*args, **kwargs)
    finally:
        trace.closed = True
    refuse_stale(tree.flatten(out)[0])   # returned after a change in place through another name
    return out

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

# ---------------------------------------------------------------- reverse mode


def _reverse_call(f, args, nums, who, kwargs, keep_inputs=False, holomorphic=False):
    """Run ``f`` on a new tape; ``keep_inputs``: arrays the caller may change before a pullback
    that outlives the call runs are copied once a recorded rule needs them (ReverseTrace.borrow);
    ``holomorphic`` refuses non-holomorphic primitives (and complex inputs are then required)."""
    trace = HolomorphicReverseTrace(new_level(), who) if holomorphic else ReverseTrace(new_level())
    args = list(args)
    leaves = []
    for i in nums:
        p = _as_input(args[i], who, f"argument {i}")
        if holomorphic:
            require_complex([p], who, "inputs")
        v = Var._leaf(p, trace)
        if keep_inputs:
            trace.borrow(v)
        args[i] = v
        leaves.append(v)
    return trace, leaves, _closing(trace, call_at_user_line, f, *args, **kwargs)


def _value_of(y, trace):
    return y._value if type(y) is Var and y._trace is trace else y


def vjp(f, *primals, has_aux=False):
    """vjp(f, *primals) -> (f(*primals), vjp_fn); ``vjp_fn(cotangent)`` gives one cotangent per primal.

    >>> import numpy as np
    >>> y, pullback = vjp(np.multiply, 2.0, 3.0)
    >>> pullback(1.0)
    (3.0, 2.0)
    """
    if _is_compiled(f):
        return _jit().compiled_vjp(f, *primals, has_aux=has_aux)
    everything = tuple(range(len(primals)))
    if Containers.present(primals, everything):
        c = Containers(primals, everything, False)
        result = vjp(lambda *leaves: f(*c.rebuild(leaves)), *c.flat_args, has_aux=has_aux)
        pullback = result[1]
        grouped = (lambda cotangent: c.group(pullback(cotangent)))
        return (result[0], grouped) + tuple(result[2:])
    trace, leaves, out = _reverse_call(f, primals, everything, "vjp", {}, keep_inputs=True)
    if has_aux:
        out, aux = _split_aux(out, "vjp")
    outs, treedef = tree.flatten(out)
    for y in outs:
        _check_leaf(y, "vjp", trace)
        if type(y) is Var:
            trace.settle(y)   # an input returned as it is: the result is not the caller's array
    values = [_value_of(y, trace) for y in outs]

    def vjp_fn(cotangent):
        cots, cot_def = tree.flatten(cotangent)
        if cot_def != treedef:
            raise ValueError(f"vjp_fn: the cotangent's structure {cot_def} does not match the "
                             f"output's {treedef}")
        seeds = []
        for k, (y, c, v) in enumerate(zip(outs, cots, values)):
            if not isinstance(c, Tracer):
                c = np.asarray(c)
                check_numeric_dtype(c, f"vjp_fn: cotangent {k}")
                if c.dtype.kind == "c" and not is_complex(v):
                    c = c.real   # a real output's cotangent: Re c stands for t -> Re(c t) = Re(c) t
                c = c.astype(_dtype(v) if np.dtype(_dtype(v)).kind in "fc" else np.float64, copy=False)
            if _shape(c) != _shape(v):
                raise ValueError(f"vjp_fn: cotangent {k} has shape {_shape(c)} but the output has "
                                 f"shape {_shape(v)}; they must match")
            if type(y) is Var and y._trace is trace:
                seeds.append((y, c))
        grads = backward(seeds, retain_graph=True) if seeds else {}
        return tuple(_output(complex_like(grads[id(leaf)], leaf._value) if id(leaf) in grads
                             else _zeros(_shape(leaf._value), leaf._value)) for leaf in leaves)

    primal_out = tree.unflatten(treedef, [_output(_apart(v) if type(y) is Var and y._trace is trace else v)
                                          for y, v in zip(outs, values)])
    if has_aux:
        aux = _strip(aux, lambda a: _settled_if_ours(a, trace), _apart)
        return primal_out, vjp_fn, aux
    return primal_out, vjp_fn


def _apart(value):
    """A recorded value returned to the caller of vjp, as an array of its own: the tape may read
    it in the pullback (exp's rule reads its output), and ``r -= data`` on the result must not
    change what the pullback reads (it returned a gradient of the changed values)."""
    return value.copy() if type(value) is np.ndarray and value.ndim else value


def _settled_if_ours(a, trace):
    """Whether ``a`` is a value of ``trace``; a borrowed input among them gets its own copy."""
    if type(a) is Var and a._trace is trace:
        trace.settle(a)
        return True
    return False


@returns_transformed
def value_and_grad(f, argnums=0, has_aux=False, holomorphic=False):
    """value_and_grad(f, argnums=0, has_aux=False, holomorphic=False) -> function returning ``(f(x), ∇f(x))``.

    With ``has_aux`` ``f`` returns ``(value, aux)`` and the result is ``((value, aux), grad)``.
    ``f`` returns a real number; with complex inputs the gradient follows JAX's convention
    (``∂f/∂x − i ∂f/∂y`` for ``z = x + iy``, docs/complex.md). With ``holomorphic=True`` the
    inputs and the output are complex and the result is ``df/dz``.

    >>> value_and_grad(lambda x: x ** 3)(2.0)
    (8.0, 12.0)
    """
    if _is_compiled(f):
        entry = _jit().compiled_value_and_grad
        reverse = entry(f, argnums, has_aux, **_compiled(entry, holomorphic, "grad"))
        return reverse if holomorphic else _forward_if_refused(reverse, _forward_value_and_grad(f, argnums, has_aux), "grad")
    return _on_containers(_value_and_grad, f, argnums, "grad", has_aux=has_aux, holomorphic=holomorphic)


def _forward_if_refused(reverse, forward, who):
    """``reverse`` (compiled reverse mode) until it refuses the code for its complex
    intermediates, which compiled forward mode differentiates: ``forward`` from then on (whose
    refusals are ``who``'s, the transformation the user called)."""
    forward_only = []

    def call(*args, **kwargs):
        if not forward_only:
            try:
                return reverse(*args, **kwargs)
            except TypeError as exc:
                from .jit.complex_rules import FORWARD_ONLY
                if FORWARD_ONLY not in str(exc):
                    raise
                forward_only.append(True)
        try:
            return forward(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            message = str(exc)
            for inner in ("jacfwd: ", "hessian: "):
                if message.startswith(inner) and inner != f"{who}: ":
                    raise type(exc)(f"{who}: {message[len(inner):]}") from None
            raise
    call.forward_only = forward_only
    return call


def _forward_value_and_grad(f, argnums, has_aux):
    """``value_and_grad`` of a dispatcher by compiled forward mode (one lane per input)."""
    gradient = _jit().compiled_jacfwd(f, argnums=argnums, has_aux=has_aux)

    def value_and_gradient(*args, **kwargs):
        out = f(*args, **kwargs)
        value = out[0] if has_aux else out
        if np.ndim(value) != 0:
            raise TypeError(f"grad: the function returned shape {np.shape(value)}; grad needs a "
                            f"scalar output (use jacfwd or jacrev for a Jacobian)")
        g = gradient(*args, **kwargs)
        return ((float(value), out[1]), g[0]) if has_aux else (float(value), g)
    return value_and_gradient


def _value_and_grad(f, argnums=0, has_aux=False, group=None, holomorphic=False, caller="grad"):
    @reported_at_user_line
    def value_and_gradient(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), caller)
        trace, leaves, out = _reverse_call(f, args, nums, caller, kwargs, holomorphic=holomorphic)
        if has_aux:
            out, aux = _split_aux(out, caller)
            aux = _strip(aux, lambda a: type(a) is Var and a._trace is trace)
        if isinstance(out, (tuple, list, dict)):
            raise TypeError(f"{caller} requires a scalar output, but the function returned a "
                            f"{type(out).__name__}; return one scalar, pass has_aux=True to return "
                            f"(value, aux), or use jacrev/vjp for several outputs")
        _check_leaf(out, caller, trace)
        if _shape(out) != ():
            raise TypeError(f"{caller} requires a scalar output, got shape {_shape(out)}; "
                            f"use jacrev or vjp for vector outputs")
        value = _value_of(out, trace)
        check_float_output(value, caller)
        if holomorphic:
            require_complex([value], caller, "outputs")
        elif is_complex(value):
            raise TypeError(f"{caller} requires a real scalar output, got a complex one; for df/dz of a "
                            "holomorphic function pass holomorphic=True, else differentiate a real "
                            "number (np.abs(y) ** 2, np.real(y)) or use vjp")
        grads = {}
        if type(out) is Var and out._trace is trace:
            seed = np.array(1, dtype=_dtype(value))
            grads = backward([(out, seed)], retain_graph=False)
        gs = tuple(_output(in_dtype(grads[id(v)], v._value)) if id(v) in grads
                   else _output(_zeros(_shape(v._value), v._value)) for v in leaves)
        g = gs[0] if single else group(gs) if group else gs
        value = _output(value)
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_gradient


@returns_transformed
def grad(f, argnums=0, has_aux=False, holomorphic=False):
    """grad(f, argnums=0, has_aux=False, holomorphic=False) -> function returning ∂f/∂x shaped like x (f scalar).

    ``f`` returns a real number; a complex input's gradient is ``∂f/∂x − i ∂f/∂y`` (JAX's
    convention: ``grad(lambda z: abs(z) ** 2)(3 + 4j) == 6 - 8j``, docs/complex.md). With
    ``holomorphic=True`` the inputs and the output are complex and the result is ``df/dz``.

    For a Numba dispatcher the gradient is compiled reverse mode: one run of the compiled
    function recording a tape and one compiled sweep, whatever the number of inputs.

    >>> import numpy as np
    >>> grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def gradient(*args, **kwargs):
        res, g = vg(*args, **kwargs)
        return (g, res[1]) if has_aux else g

    return gradient


@returns_transformed
def jacrev(f, argnums=0, has_aux=False, chunk_size=None, sparsity=None, workers=None, holomorphic=False):
    """jacrev(f, argnums=0, has_aux=False, chunk_size=None, sparsity=None, workers=None, holomorphic=False) -> function returning ∂f/∂x by reverse mode.

    One recording of ``f``; the output's cotangent directions are pulled back together as
    lanes, ``chunk_size`` at a time. Same shape and values as :func:`jacfwd`. A Numba
    dispatcher is recorded once on a compiled tape and swept once per chunk.

    Args:
        f, argnums, has_aux: as in :func:`jacfwd`.
        chunk_size: output rows per backward sweep (default: all within 64 MB).
        sparsity: as in :func:`jacfwd`; a ``scipy.sparse.csr_array``, one cotangent per row colour.
        workers: as in :func:`jacfwd`; each task records ``f`` once and sweeps its rows (one
            plain evaluation in the caller first tells the output's shape).
        holomorphic: inputs and outputs are complex and ``f`` holomorphic: the result is ``df/dz``
            (complex outputs raise without it; real outputs of complex inputs give the rows of
            JAX's convention, docs/complex.md).

    >>> import numpy as np
    >>> jacrev(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> jacrev(lambda x: x ** 2, chunk_size=1, workers=map)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if sparsity is not None:
        if holomorphic:
            raise NotImplementedError("jacrev: sparsity= with holomorphic=True is not supported; "
                                      "drop one of them")
        return real_sparse(_sparse().sparse_jacobian(f if _is_compiled(f) else RealOutputs(f, has_aux), argnums, has_aux,
                                                      chunk_size, sparsity, mode="rev", workers=workers),
                            argnums, "jacrev")
    if _is_compiled(f):
        entry = _jit().compiled_jacrev
        return entry(f, argnums=argnums, has_aux=has_aux, chunk_size=chunk_size, workers=workers,
                     **_compiled(entry, holomorphic, "jacrev"))
    return _on_containers(_jacrev, f, argnums, "jacrev", has_aux=has_aux, chunk_size=chunk_size,
                          workers=workers, holomorphic=holomorphic)


def _jacrev(f, argnums=0, has_aux=False, chunk_size=None, group=None, workers=None, holomorphic=False):
    pool = _workers.resolve(workers, "jacrev")

    @reported_at_user_line
    def jacobian(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "jacrev")
        if pool is not None and holomorphic:
            raise NotImplementedError("jacrev: workers= with holomorphic=True is not supported; "
                                      "drop workers=")
        if pool is not None:
            from .worker_tasks import jacrev_spread
            spread = jacrev_spread(pool, f, args, kwargs, nums, has_aux, chunk_size)
            if spread is not None:
                outs, treedef, rows, aux, inputs = spread
                refuse_complex(outs, "jacrev", "outputs")
                jacobians = [_reverse_blocks(rows[j], _shape(y), inputs, single, group)
                             for j, y in enumerate(outs)]
                result = tree.unflatten(treedef, jacobians)
                return (result, aux) if has_aux else result
        trace, leaves, out = _reverse_call(f, args, nums, "jacrev", kwargs, holomorphic=holomorphic)
        if has_aux:
            out, aux = _split_aux(out, "jacrev")
            aux = _strip(aux, lambda a: type(a) is Var and a._trace is trace)
        outs, treedef = tree.flatten(out)
        inputs = [v._value for v in leaves]
        jacobians = []
        for y in outs:
            _check_leaf(y, "jacrev", trace)
        values = [_value_of(y, trace) for y in outs]
        (require_complex if holomorphic else refuse_complex)(values, "jacrev", "outputs")
        for y, value in zip(outs, values):
            out_shape = _shape(value)
            m = math.prod(out_shape)
            rows = []
            if type(y) is Var and y._trace is trace and m:
                chunk = _chunk_lanes(chunk_size, m, "jacrev", size=m)
                rows = [_pull_rows(y, value, leaves, start, min(chunk, m - start))
                        for start in range(0, m, chunk)]
            jacobians.append(_reverse_blocks(rows, out_shape, inputs, single, group))
        result = tree.unflatten(treedef, jacobians)
        return (result, aux) if has_aux else result

    return jacobian


def _pull_rows(y, value, leaves, start, lanes):
    """Rows ``start`` to ``start + lanes`` of the Jacobian of the recorded output ``y``: one
    backward sweep with that many cotangent lanes -> one block ``(lanes,) + in.shape`` per input."""
    m = math.prod(_shape(value))
    eye_dtype = _dtype(value) if np.dtype(_dtype(value)).kind in "fc" else np.float64
    seed = np.zeros((lanes, m), dtype=eye_dtype)
    seed[np.arange(lanes), start + np.arange(lanes)] = 1.0
    grads = backward([(y, seed.reshape((lanes,) + _shape(value)))], retain_graph=True)
    return [grads[id(v)] if id(v) in grads else _zeros((lanes,) + _shape(v._value), v._value)
            for v in leaves]


def _reverse_blocks(rows, out_shape, inputs, single, group):
    """The Jacobian blocks of one output from its swept rows (one list per chunk; none: zeros)."""
    blocks = []
    for k, x in enumerate(inputs):
        in_shape = _shape(x)
        if rows:
            parts = [r[k] for r in rows]
            stacked = parts[0] if len(parts) == 1 else concatenate(parts, axis=0)
            blocks.append(_output(in_dtype(reshape(stacked, out_shape + in_shape), x)))   # complex x: complex
        else:
            blocks.append(_output(_zeros(out_shape + in_shape, x)))
    return blocks[0] if single else group(blocks) if group else tuple(blocks)


# ---------------------------------------------------------------- choosing the mode

# reverse mode pays off once the inputs outnumber the outputs by this factor and there are more
# than REVERSE_FROM inputs; measured on this project's 2-core machine for f(x) = tanh(A sin x) *
# exp(-A x / 10) (n inputs, m outputs, one thread): n=1000, m=10: jacrev 0.18 ms, jacfwd 3.9 ms;
# n=1000, m=500: 23 vs 36 ms; n=200, m=100: 0.39 vs 0.53 ms; n=150, m=100: 0.40 vs 0.35 ms;
# n=300, m=300: 2.4 vs 2.2 ms; n=16, m=256: 1.1 vs 0.16 ms; below ~64 inputs the two are within
# 20 % (one pass each) and forward mode, which records nothing, is kept
REVERSE_RATIO = 1.5
REVERSE_FROM = 64
# compiled code: forward lanes against one recording on the compiled tape, whose cost is memory
# traffic and does not grow with the inputs (W7 of benchmarks/: Lorenz-96 with 80 inputs, lanes
# 27x the plain call, the tape 19x; W4's 6 inputs: lanes 2.2x, the tape 16x): the tape wins from
# about 60 inputs
COMPILED_REVERSE_FROM = 64


@returns_transformed
def jacobian(f, argnums=0, mode="auto", has_aux=False, chunk_size=None, workers=None, sparsity=None,
             holomorphic=False):
    """jacobian(f, argnums=0, mode="auto", has_aux=False, chunk_size=None, workers=None, sparsity=None, holomorphic=False) -> function returning ∂f/∂x.

    ``mode="fwd"`` is :func:`jacfwd`, ``mode="rev"`` is :func:`jacrev`; ``"auto"`` evaluates
    ``f`` once per new input layout to count its outputs and picks reverse mode when the inputs
    number more than ``REVERSE_FROM`` (64) and more than ``REVERSE_RATIO`` (1.5) times the
    outputs, forward mode otherwise (the crossover measured on this project's machine, see the
    module source). A Numba dispatcher takes the compiled tape from ``COMPILED_REVERSE_FROM``
    (64) inputs as well (compiled forward lanes are cheaper below). With
    ``sparsity=`` the result is a ``scipy.sparse.csr_array`` (see :func:`jacfwd`), and ``"auto"``
    takes reverse mode when the pattern's row colours number fewer than its column colours by
    ``REVERSE_RATIO``, forward mode otherwise. The result is the same in every mode;
    ``.mode_for(*args)`` tells which one a call takes.

    Args:
        f, argnums, has_aux, chunk_size, workers, sparsity, holomorphic: as in :func:`jacfwd` and
            :func:`jacrev`.
        mode: ``"auto"``, ``"fwd"`` or ``"rev"``.

    >>> import numpy as np
    >>> jac = jacobian(lambda x: np.sum(x ** 2))
    >>> jac(np.ones(100)).shape, jac.mode_for(np.ones(100)), jac.mode_for(np.ones(3))
    ((100,), 'rev', 'fwd')
    """
    if mode not in ("auto", "fwd", "rev"):
        raise ValueError(f"jacobian: mode must be 'auto', 'fwd' or 'rev', got {mode!r}")
    if sparsity is not None:
        if holomorphic:
            raise NotImplementedError("jacobian: sparsity= with holomorphic=True is not supported; "
                                      "drop one of them")
        return _sparse_jacobian_by_colours(f, argnums, mode, has_aux, chunk_size, workers, sparsity)
    forward = jacfwd(f, argnums, has_aux=has_aux, chunk_size=chunk_size, workers=workers,
                     holomorphic=holomorphic)
    reverse = jacrev(f, argnums, has_aux=has_aux, chunk_size=chunk_size, workers=workers,
                     holomorphic=holomorphic)
    least = COMPILED_REVERSE_FROM if _is_compiled(f) else REVERSE_FROM
    chosen = {}
    if mode == "auto" and _is_compiled(f):   # complex intermediates: compiled forward mode
        reverse = _forward_if_refused(reverse, forward, "jacobian")

    def mode_for(*args, **kwargs):
        if mode != "auto":
            return mode
        if getattr(reverse, "forward_only", None):
            return "fwd"
        nums, _ = _argnums(argnums, len(args), "jacobian")
        leaves = [leaf for i in nums for leaf in tree.flatten(args[i])[0]]
        key = (len(args), tuple((_shape(a), str(_dtype(a))) for a in leaves))
        if key not in chosen:
            n_in = sum(math.prod(_shape(a)) for a in leaves)
            out = f(*args, **kwargs)
            out = out[0] if has_aux else out
            outs = tree.flatten(out)[0]
            n_out = sum(math.prod(_shape(y)) for y in outs)
            chosen[key] = "rev" if n_in > least and n_in > REVERSE_RATIO * n_out else "fwd"
            if not holomorphic and any(is_complex(a) for a in leaves):
                chosen[key] = "rev"   # complex inputs of a real function: only reverse mode takes them
            elif not holomorphic and any(is_complex(y) for y in outs):
                chosen[key] = "fwd"   # complex outputs of real inputs: only forward mode takes them
        return chosen[key]

    def jac(*args, **kwargs):
        return (forward if mode_for(*args, **kwargs) == "fwd" else reverse)(*args, **kwargs)

    jac.mode_for = mode_for
    return jac

def _sparse_jacobian_by_colours(f, argnums, mode, has_aux, chunk_size, workers, pattern):
    """``jacobian(..., sparsity=pattern)``: compressed forward or reverse mode, by colour counts."""
    options = dict(has_aux=has_aux, chunk_size=chunk_size, workers=workers, sparsity=pattern)
    forward, reverse = jacfwd(f, argnums, **options), jacrev(f, argnums, **options)
    chosen = {}

    def mode_for(*args, **kwargs):
        if mode != "auto":
            return mode
        key = (len(args),) + tuple((_shape(a), str(_dtype(a))) for a in args)
        if key not in chosen:
            found = (pattern if hasattr(pattern, "row_colors") else
                     sparsity(f, *args, argnums=argnums) if isinstance(pattern, str) else
                     _sparse().Sparsity(pattern))
            rows, columns = len(set(found.row_colors.tolist())), found.n_colors
            chosen[key] = "rev" if REVERSE_RATIO * rows < columns else "fwd"
        return chosen[key]

    def jac(*args, **kwargs):
        return (forward if mode_for(*args, **kwargs) == "fwd" else reverse)(*args, **kwargs)

    jac.mode_for = mode_for
    return jac

# ---------------------------------------------------------------- second order


@returns_transformed
def hessian(f, argnums=0, has_aux=False, sparsity=None, chunk_size=None, workers=None, holomorphic=False):
    """hessian(f, argnums=0, has_aux=False, sparsity=None, chunk_size=None, workers=None, holomorphic=False) -> function returning the Hessian, forward over reverse.

    Shape ``in.shape + in.shape`` for a scalar ``f``. For a compiled (Numba) ``f`` with a scalar
    output, forward over reverse (8 directions per recording on the compiled tape, so ``n``
    inputs cost about ``n / 8`` gradients); a non-scalar output or complex intermediates take
    forward over forward (nested duals, passes of 8 × 8 lanes).

    Args:
        f, argnums: as in :func:`jacfwd`.
        has_aux: ``f`` returns ``(value, aux)``; the result is then ``(hessian, aux)``, ``aux``
            as plain values (JAX's ``hessian(has_aux=True)``).
        sparsity: ``"auto"`` (or a Hessian pattern): a symmetric ``scipy.sparse.csr_array`` of
            shape ``(in.size, in.size)``, one forward lane per star colour.
        chunk_size: forward directions per pass (Hessian columns per recording and sweep);
            default: every direction on the NumPy path, 8 for a dispatcher.
        workers: as in :func:`jacfwd`: the passes of the outer forward mode are spread.
        holomorphic: complex inputs, ``f`` holomorphic: the complex second derivative. A real
            function of complex inputs has no complex Hessian: use :func:`hvp` (complex ``x``
            and ``v``), or pass the real and imaginary parts as real arrays.

    >>> import numpy as np
    >>> hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    >>> hessian(lambda x: np.sum(x ** 3), chunk_size=1, workers=map)(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    >>> H, aux = hessian(lambda x: (np.sum(x ** 3), x ** 2), has_aux=True)(np.array([1.0, 2.0]))
    >>> H.tolist(), aux.tolist()
    ([[6.0, 0.0], [0.0, 12.0]], [1.0, 4.0])
    """
    if sparsity is not None:
        for given, name in ((holomorphic, "holomorphic=True"), (has_aux, "has_aux=True")):
            if given:
                raise NotImplementedError(f"hessian: sparsity= with {name} is not supported; drop "
                                          f"one of them (an aux value: a plain call f(x)[1])")
        return _sparse().sparse_hessian(f, argnums, sparsity, workers=workers)
    if _is_compiled(f):
        entry = _jit().compiled_hessian_auto
        return entry(f, argnums=argnums, chunk_size=chunk_size, workers=workers, has_aux=has_aux,
                     **_compiled(entry, holomorphic, "hessian"))
    if holomorphic:
        return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=True), argnums, has_aux=has_aux,
                      chunk_size=chunk_size, workers=workers, holomorphic=True)
    if workers is None:
        return _real_inputs(jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux,
                                   chunk_size=chunk_size), argnums)
    return _real_inputs(jacfwd(_JacrevOf(f, argnums, has_aux), argnums, has_aux=has_aux,
                               chunk_size=chunk_size, workers=workers), argnums)


def _real_inputs(hess, argnums):
    """``hess`` refusing a complex input in its own name, with the way a real function of complex
    inputs has second derivatives (jacfwd inside would name itself and suggest holomorphic=True)."""
    def hessian_of(*args, **kwargs):
        nums, _ = _argnums(argnums, len(args), "hessian")
        for i in nums:
            if any(is_complex(leaf) for leaf in tree.flatten(args[i])[0]):
                raise TypeError(f"hessian: input {i} is complex, and a real function of "
                                f"complex inputs has no complex Hessian: use hvp(f, z, v) (complex z "
                                f"and v), or pass the real and imaginary parts as real arrays; "
                                f"holomorphic=True is for a holomorphic f")
        try:
            return hess(*args, **kwargs)
        except (TypeError, ValueError) as exc:   # the inner transformations' checks, in hessian's name
            text = str(exc)   # ("jacrev: ..." or "jacrev(has_aux=True): ...")
            inner = next((w for w in ("jacfwd", "jacrev") if text.startswith((w + ":", w + "("))), None)
            if inner is None or type(exc) not in (TypeError, ValueError):
                raise
            raise type(exc)("hessian" + text[len(inner):]) from None
    return hessian_of


class _JacrevOf:
    """``jacrev(function, argnums, has_aux)`` as an object that ``workers=`` can pickle (not a closure)."""

    def __init__(self, function, argnums, has_aux=False):
        self.function, self.argnums, self.has_aux = function, argnums, has_aux

    def __call__(self, *args, **kwargs):
        return jacrev(self.function, self.argnums, has_aux=self.has_aux)(*args, **kwargs)


def hvp(f, x, v, /, *args, **kwargs):
    """hvp(f, x, v, *args, **kwargs) -> H(x)·v, the Hessian of ``f(x, *args, **kwargs)`` in ``x``
    times ``v``, one forward pass over one reverse pass, without forming H.

    ``args`` and ``kwargs`` (data, parameters) are held constant, so ``functools.partial(duals.hvp, f)`` is
    SciPy's ``hessp(x, p, *args)``. A Numba dispatcher is recorded once on a compiled tape over
    duals seeded with ``v`` and swept once.

    >>> import numpy as np
    >>> hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
    >>> hvp(lambda x, c: c * np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]), 2.0).tolist()
    [12.0, 0.0]
    """
    if _is_compiled(f):
        if kwargs:   # compiled code takes its arguments by position
            x, *args = _jit().api.positional(f, (x,) + args, kwargs, "hvp")

        def by_forward_lanes(x, v, *args):   # complex intermediates: forward over forward, H @ v
            H = _jit().compiled_hessian(f)(x, *args)
            return np.tensordot(H, np.asarray(v, dtype=np.result_type(H)), axes=np.ndim(x))
        return _forward_if_refused(lambda *a: _jit().compiled_hvp(f, *a), by_forward_lanes, "hvp")(x, v, *args)
    gradient = _on_containers(_value_and_grad, f, 0, "hvp", caller="hvp")
    return jvp(lambda y: gradient(y, *args, **kwargs)[1], (x,), (v,))[1]


@returns_transformed
def value_grad_hessian(f, argnums=0):
    """value_grad_hessian(f, argnums=0) -> function returning ``(f(x), ∇f(x), H(x))`` from one sweep.

    >>> import numpy as np
    >>> value, g, H = value_grad_hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> float(value), g.tolist(), H.tolist()
    (9.0, [3.0, 12.0], [[6.0, 0.0], [0.0, 12.0]])
    """
    if _is_compiled(f):  # compiled code cannot run on Python-level duals: its own two entry points
        value_and_gradient, hess = value_and_grad(f, argnums), hessian(f, argnums)
        return lambda *args: value_and_gradient(*args) + (hess(*args),)

    def gradient_with_value(*args, **kwargs):
        value, g = value_and_grad(f, argnums)(*args, **kwargs)
        return g, (value, g)

    def vgh(*args, **kwargs):
        H, (value, g) = jacfwd(gradient_with_value, argnums, has_aux=True)(*args, **kwargs)
        return value, g, H

    return vgh


def sparsity(f, *args, argnums=0, hessian=False, order="smallest_last"):
    """sparsity(f, *args, argnums=0, hessian=False, order="smallest_last") -> the Jacobian's (or Hessian's) pattern at args.

    Detection runs ``f`` once on index sets instead of numbers (for ``hessian=True``, its
    gradient), so it costs a few evaluations, not one per input. The result, a
    ``duals.sparse.Sparsity``, has ``.pattern`` (a boolean ``scipy.sparse.csr_array`` of shape
    ``(out.size, in.size)``), ``.colors`` and ``.n_colors`` (column colours; star colours for
    a Hessian), ``.row_colors``, and ``.depends_on_values`` (the pattern was decided by values
    at ``args``, e.g. by ``maximum`` or a comparison, and may differ elsewhere). Pass it as
    ``sparsity=`` to :func:`jacfwd`, :func:`jacrev` or :func:`hessian`.

    >>> import numpy as np
    >>> s = sparsity(lambda x: x[1:] - x[:-1], np.ones(4))
    >>> s.pattern.toarray().astype(int).tolist(), s.n_colors
    ([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], 2)
    """
    return _sparse().sparsity(f, *args, argnums=argnums, hessian=hessian, order=order)
