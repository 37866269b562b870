"""``linalg.norm`` of vectors (any order) and matrices (Frobenius, 1, inf, 2, nuclear and the
negatives), composed from ``abs``, ``power``, ``sqrt``, the reductions and ``eigvalsh``; complex
values through ``|z|²`` and the Hermitian Gram matrix ``Aᴴ A``; and ``linalg.cond``.

Policy: the derivative is 0 at the zero vector and the zero matrix, for every order and in
every mode (as ``abs'(0) = 0``), and orders built on ``max``/``min`` split ties evenly, like
``max`` and ``min``.
"""
import numpy as np

from ..core import Tracer, _plain_under
from . import export, ndim_of as ndim, normalize_axis, shape_of as shape
from .complex_parts import square_is, squared_modulus
from .elementwise import PRIMITIVES, select, sqrt
from .linalg import _as_operand, _float_dtype, _plain, _traced
from .powers import power
from .shape import getitem, moveaxis, reshape
from .reductions import max as _max, min as _min, sum as _sum

_abs = PRIMITIVES["abs"]


def _safe_root(s, p):
    """``s ** (1/p)`` with derivative 0 where ``s == 0`` (the norm's policy at the zero vector);
    a square root remembers ``s``, its square's smooth form (``norm(w) ** 2`` at ``w = 0``)."""
    zero = _plain_under(s) == 0   # (read without telling a sparsity detection: only a zero decides)
    if not zero.any():   # (the structural pattern: no value decided it)
        return sqrt(s) if p == 2 else power(s, 1.0 / p)
    _plain(s)   # (a detection's pattern is this point's: the zero drops a dependency)
    safe = select(zero, np.ones((), dtype=_float_dtype(s)), s)
    root = sqrt(safe) if p == 2 else power(safe, 1.0 / p)
    root = select(zero, np.zeros((), dtype=_float_dtype(s)), root)
    if p == 2 and isinstance(root, Tracer):
        square_is(root, None, s)
    return root


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return _safe_root(_sum(squared_modulus(x), axis=axis, keepdims=keepdims), 2)
    if isinstance(ord, str):
        raise ValueError(f"linalg.norm: invalid norm order {ord!r} for vectors")
    if ord == np.inf:
        return _max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return _min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(_plain(x) != 0, axis=axis, keepdims=keepdims).astype(_float_dtype(x))
    if ord == 1:
        return _sum(_abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    zero = np.all(np.asarray(_plain_under(x)) == 0, axis=axis, keepdims=True)
    if not zero.any():
        return _safe_root(_sum(power(_abs(x), p), axis=axis, keepdims=keepdims), p)
    _plain(x)   # (a detection's pattern is this point's)
    # at a zero vector |x|^p has infinite partials for p < 1, which the root's zero derivative
    # would meet as 0 * inf in reverse mode: those vectors are replaced by ones, their norm by 0
    safe = select(np.broadcast_to(zero, shape(x)), np.ones((), dtype=_float_dtype(x)), x)
    out = _safe_root(_sum(power(_abs(safe), p), axis=axis, keepdims=keepdims), p)
    return select(zero if keepdims else np.squeeze(zero, axis=axis), np.zeros((), dtype=_float_dtype(x)), out)


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if ord in (None, "fro", "f"):
        out = _safe_root(_sum(squared_modulus(x), axis=axes, keepdims=True), 2)
    elif ord in (1, -1, np.inf, -np.inf):
        inner_axis, outer_axis = (r, c) if ord in (1, -1) else (c, r)
        reduce = _max if ord > 0 else _min
        out = reduce(_sum(_abs(x), axis=inner_axis, keepdims=True), axis=outer_axis, keepdims=True)
    elif ord in (2, -2, "nuc"):
        out = _singular_norm(x, ord, r, c)
    else:
        raise ValueError(f"linalg.norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        return out
    return reshape(out, tuple(n for i, n in enumerate(shape(x)) if i not in axes))


def _singular_norm(x, ord, r, c):
    """ord 2 (largest singular value), -2 (smallest) or 'nuc' (their sum), kept axes of length 1.

    From the singular values' own rule (``svdvals``: at a zero singular value its derivative is
    0, the minimum-norm subgradient, as ``abs'(0)``; not through the Gram matrix's eigenvalues,
    which square the condition number: 98 % off at a 9×9 Hilbert matrix). ``'nuc'`` is symmetric
    in the singular values, so it is exact at repeated ones too; ``2`` and ``-2`` at a repeated
    largest (smallest) singular value have no derivative (see :mod:`duals.ops.decompositions`).
    """
    from .decompositions import svdvals
    s = svdvals(moveaxis(x, (r, c), (-2, -1)))
    value = _sum(s, axis=-1) if ord == "nuc" else getitem(s, (Ellipsis, 0 if ord == 2 else -1))
    kept = list(shape(x))
    kept[r] = kept[c] = 1
    return reshape(value, tuple(kept))


@export("linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False):
    """norm(x, ord=None, axis=None, keepdims=False): a vector or matrix norm, NumPy's conventions.

    Vector orders: ``None``/2, 1, ``inf``, ``-inf``, 0 (a count, derivative zero) and any
    ``p``; matrix orders: ``'fro'``, 1, -1, ``inf``, ``-inf``, 2, -2 and ``'nuc'`` (the last
    three from the singular values, see ``_singular_norm``).
    At the zero vector (matrix) the derivative is 0, the minimum-norm subgradient, as
    ``abs'(0) = 0``; ``inf``, ``-inf``, 1 and -1 split ties evenly, like ``max`` and ``min``.

    >>> float(norm(np.array([3.0, 4.0])))
    5.0
    """
    x = _as_operand(x)
    if not _traced(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    nd = ndim(x)
    if axis is None:
        if ord is None:
            return _vector_norm(x, None, tuple(range(nd)), keepdims)
        if nd not in (1, 2):
            raise ValueError(f"linalg.norm: ord={ord!r} without axis needs a 1-D or 2-D array, "
                             f"got shape {shape(x)}")
        axis = tuple(range(nd))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axis = tuple(axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, normalize_axis(axis, nd), keepdims)
    if len(axis) == 2:
        r, c = (int(a) % nd for a in axis)
        if r == c:
            raise ValueError(f"linalg.norm: duplicate axes {axis}")
        return _matrix_norm(x, ord, (r, c), keepdims)
    raise ValueError(f"linalg.norm: axis must name one or two axes, got {axis}")


@export("linalg.cond")
def cond(x, p=None):
    """cond(x, p=None): the condition number, NumPy's: ``σ_max / σ_min`` for ``p`` None, 2 (and the
    inverse ratio for -2) from the singular values; ``‖x‖_p ‖x⁻¹‖_p`` for the other orders.

    >>> float(cond(np.diag([4.0, 2.0])))
    2.0
    """
    x = _as_operand(x)
    if not _traced(x):
        return np.linalg.cond(x, p)
    from .decompositions import svdvals
    from .linalg import inv
    if p is None or p in (2, -2):
        s = svdvals(x)
        first, last = getitem(s, (Ellipsis, 0)), getitem(s, (Ellipsis, -1))
        return last / first if p == -2 else first / last
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
