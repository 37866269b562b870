"""The composable transformations of first order: jvp, vjp, grad, value_and_grad, jacfwd, jacrev,
and jacobian, which picks between forward mode (:mod:`duals.forward_transforms`) and reverse
mode (:mod:`duals.reverse_transforms`); second order is :mod:`duals.second_order`.

Each call opens a fresh trace (a new level, compared by identity), wraps the selected
arguments in its traced values, runs ``f`` and unwraps what comes back. Values of other
traces pass through untouched, so every transformation nests inside every other.
"""
import math

from . import tree
from .arguments import argnums as _argnums, is_compiled as _is_compiled
from .ops import is_complex
from .random_states import untouched_call
from .transformed import returns_transformed
from .forward_transforms import jvp, jacfwd
from .reverse_transforms import vjp, value_and_grad, grad, jacrev, _forward_if_refused
from ._transform_support import _dtype, _shape, _sparse

__all__ = ["jvp", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian", "sparsity"]

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
            out = untouched_call(f, args, kwargs)   # (a look: every pass starts where the call began)
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
