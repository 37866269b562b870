"""Reverse mode on the NumPy path: vjp, value_and_grad, grad and jacrev (a dispatcher goes to duals.jit)."""
import math

import numpy as np

from . import tree
from .arguments import Containers, argnums as _argnums, as_input as _as_input, in_dtype, is_whole_number, zero_cotangent
from .arguments import chunk_lanes as _chunk_lanes, is_compiled as _is_compiled, output as _output, split_aux as _split_aux
from .core import Tracer, new_level
from .float_warnings import call_at_user_line, reported_at_user_line
from .validation import check_float_output, check_numeric_dtype, check_real_output
from .holomorphic import HolomorphicReverseTrace, RealOutputs, complex_like, real_sparse, refuse_complex, require_complex
from .ops import is_complex
from .ops.shape import concatenate, reshape
from .random_states import from_one_state
from .reverse import ReverseTrace, Var, backward
from .transformed import returns_transformed
from . import workers as _workers
from ._transform_support import (_check_leaf, _closing, _compiled, _dtype, _jit, _on_containers, _shape,
                                 _sparse, _strip, _zeros)

__all__ = ["vjp", "value_and_grad", "grad", "jacrev"]

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

    Integer and boolean primals (indices, counts, masks) are held constant, as in JAX: they
    reach ``f`` unchanged and their cotangent is zero (``0.0``, or zeros of their shape). To
    differentiate with respect to a whole number, pass it as a float.

    >>> import numpy as np
    >>> y, pullback = vjp(np.multiply, 2.0, 3.0)
    >>> pullback(1.0)
    (3.0, 2.0)
    >>> vjp(lambda c, i: 2.0 * c[i], np.array([1.0, 5.0, 7.0]), np.array([2, 0]))[1](np.ones(2))
    (array([2., 0., 2.]), array([0., 0.]))
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
    nums = tuple(i for i in everything if not is_whole_number(primals[i]))
    trace, leaves, out = _reverse_call(f, primals, nums, "vjp", {}, keep_inputs=True)
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
        found = iter(_output(complex_like(grads[id(leaf)], leaf._value) if id(leaf) in grads
                             else _zeros(_shape(leaf._value), leaf._value)) for leaf in leaves)
        return tuple(next(found) if i in nums else zero_cotangent(primals[i]) for i in everything)

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
        def checked_value():
            out = f(*args, **kwargs)
            value = out[0] if has_aux else out
            if np.ndim(value) != 0:
                raise TypeError(f"grad: the function returned shape {np.shape(value)}; grad needs a "
                                f"scalar output (use jacfwd or jacrev for a Jacobian)")
            check_float_output(value, "grad")
            check_real_output(value, "grad")
            return out, value

        # the value and the lanes from one realisation of any noise f draws
        (out, value), g = from_one_state(checked_value, lambda: gradient(*args, **kwargs),
                                         args=tuple(args) + tuple(kwargs.values()))
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
        else:
            check_real_output(value, caller)
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


