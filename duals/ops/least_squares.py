"""Least squares and the pseudo-inverse: ``linalg.lstsq`` composed from ``qr``, and ``linalg.pinv``
of a full-rank matrix as a primitive.

``lstsq`` is ``R⁻¹ Qᵀ b`` (tall) or ``Q R⁻ᵀ b`` with ``aᵀ = Q R`` (wide), with NumPy's value (the
composition gives the derivative). ``pinv`` (``P``, NumPy's value) has ``dP = −P dA P`` plus
``P Pᵀ dAᵀ (I − A P)`` (tall) or ``(I − P A) dAᵀ Pᵀ P`` (wide).

Both of a rank-deficient matrix (rank as NumPy counts it, from ``rcond``) raise ``LinAlgError``
on a derivative: the minimum-norm solution jumps where the rank changes. ``lstsq`` returns
``rank`` and ``s`` as plain values, ``x`` and ``residuals`` differentiated. Complex matrices
take the same rules with conjugate transposes (:mod:`duals.ops.decompositions`).
"""
import numpy as np

from ..core import Primitive
from ..index_sets import per_matrix_rule
from . import export, is_complex, ndim_of as ndim, shape_of as shape
from .complex_parts import conj, imag, squared_modulus
from .decompositions import (_H, _T, _at_least_2d, _plain, _qr_traced, _symmetric_from_lower,
                             _with_value, svd)
from .linalg import _as_operand, _check_square, _traced, matmul, solve_p
from .reductions import sum as _sum
from .shape import getitem, tril

def _rank_deficient(who, rank, k, hint):
    return np.linalg.LinAlgError(
        f"{who}: the matrix is rank deficient (rank {rank} < {k}): its minimum-norm solution jumps "
        f"where the rank changes, so it has no derivative; {hint}")


def _full_rank_pseudo_solve(a, b):
    """(``a⁺ b``, ``R``) of a full-rank ``a``: ``R⁻¹ Qᴴ b`` (tall) or ``Q R⁻ᴴ b`` with ``aᴴ = Q R``
    (wide); ``a`` and the square ``R`` have the same singular values."""
    m, n = shape(a)[-2:]
    if m >= n:
        Q, R = _qr_traced(a)
        return solve_p(R, matmul(_H(Q), b)), R
    Q, R = _qr_traced(_H(a))
    return matmul(Q, solve_p(_H(R), b)), R


@export("linalg.lstsq")
def lstsq(a, b, rcond=None):
    """lstsq(a, b, rcond=None) -> (x, residuals, rank, s): the least-squares solution of ``a x = b``.

    As NumPy's: ``residuals`` are the squared residual norms (one per column of ``b``; empty
    unless ``a`` is tall and of full rank), ``rank`` is plain. ``x``, ``residuals`` and the
    singular values ``s`` of ``a`` (those of ``svd(a, compute_uv=False)``, NumPy's values) are
    differentiated for a full-rank ``a`` (tall, or wide with the minimum-norm ``x``); a
    rank-deficient ``a`` raises ``LinAlgError`` on a derivative, unless ``a`` is a constant: then
    ``x`` is the truncated pseudo-inverse of ``a`` times ``b``, linear in ``b``.

    >>> x, res, rank, s = lstsq(np.array([[1.0], [1.0]]), np.array([1.0, 3.0]))
    >>> np.round(x, 12).tolist(), np.round(res, 12).tolist(), int(rank)
    ([2.0], [2.0], 1)
    """
    a, b = _as_operand(a), _as_operand(b)
    x_np, res_np, rank, s = np.linalg.lstsq(_plain(a), _plain(b), rcond=rcond)
    if not _traced(a, b):
        return x_np, res_np, rank, s
    m, n = shape(a)[-2:]
    vector = ndim(b) == 1
    B = getitem(b, (slice(None), None)) if vector else b
    if rank < min(m, n):
        if _traced(a):
            raise _rank_deficient("lstsq", rank, min(m, n), "remove the dependent columns, or "
                                  "regularize (np.linalg.solve(a.T @ a + lam * np.eye(n), a.T @ b))")
        x = matmul(_truncated_pseudo_inverse(a, rank), B)   # a constant: x is linear in b
        return _with_value(getitem(x, (slice(None), 0)) if vector else x, x_np), res_np, rank, s
    x, R = _full_rank_pseudo_solve(a, B)
    if res_np.size:
        r = B - matmul(a, x)
        residuals = _with_value(_sum(squared_modulus(r), axis=0), res_np)
    else:
        residuals = res_np
    x = getitem(x, (slice(None), 0)) if vector else x
    if _traced(a):   # a = Q R: the singular values of the square R, half the work of a's own
        s = _with_value(svd(R, compute_uv=False), s)
    return _with_value(x, x_np), residuals, rank, s


def _truncated_pseudo_inverse(a, rank):
    """The pseudo-inverse of a plain ``a`` from its ``rank`` largest singular values (the ones
    ``lstsq`` keeps), so that ``lstsq(a, b)[0]`` is this matrix times ``b``."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (vh[:rank].conj().T / s[:rank]) @ u[:, :rank].conj().T


_DEFAULT = object()


@export("linalg.pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=_DEFAULT):
    """pinv(a, rcond=None, hermitian=False, *, rtol): the Moore-Penrose pseudo-inverse (of each matrix).

    The value is NumPy's; a full-rank matrix is differentiated (the derivative of the pseudo-inverse
    of constant rank, see the module docstring); a rank-deficient one (singular values at or below NumPy's cutoff) raises
    ``LinAlgError`` on a derivative. ``hermitian=True`` reads the lower triangle, as NumPy does.

    >>> np.round(pinv(np.array([[1.0], [1.0]])), 12).tolist()
    [[0.5, 0.5]]
    """
    a = _as_operand(a)
    extra = {} if rtol is _DEFAULT else {"rtol": rtol}
    if not _traced(a):
        return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian, **extra)
    _at_least_2d(a, "pinv")
    m, n = shape(a)[-2:]
    given = rcond
    if hermitian:
        _check_square(a, "pinv(hermitian=True)")
        if is_complex(a):   # the conjugate mirror of the lower triangle, its diagonal real (as eigh)
            a = tril(a) + _H(tril(a, -1))
            a = a - 1j * (imag(a) * np.eye(m))
        else:
            a = _symmetric_from_lower(a)
    s = np.linalg.svd(_plain(a), compute_uv=False)
    if rcond is None:
        rcond = 1e-15 if rtol is _DEFAULT else (max(m, n) * np.finfo(s.dtype).eps if rtol is None else rtol)
    kept = np.sum(s > np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True), axis=-1)
    if np.any(kept < min(m, n)):
        raise _rank_deficient("pinv", int(np.min(kept)), min(m, n),
                              "regularize (np.linalg.solve(a.T @ a + lam * I, a.T)) or remove the "
                              "dependent rows or columns")
    # hermitian: NumPy reads the lower triangle, which the mirrored ``a`` shares
    return pinv_p(a, rcond=given, hermitian=hermitian, extra=tuple(extra.items()))


def _pinv_impl(a, *, rcond, hermitian, extra):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian, **dict(extra))


# the pseudo-inverse P of a full-rank matrix (NumPy's value): dP = -P dA P, plus
# P Pᵀ dAᵀ (I - A P) for a tall one, or (I - P A) dAᵀ Pᵀ P for a wide one (the other projector
# is the identity); the reverse rule is the transpose
pinv_p = Primitive("pinv", _pinv_impl)
pinv_p.def_sparsity(per_matrix_rule())


def _pinv_jvp(t, out, a, **params):
    # dP = −P dA P + P Pᴴ dAᴴ (I − A P) + (I − P A) dAᴴ Pᴴ P (one of the last two is zero at full rank)
    m, n = shape(a)[-2:]
    P, tH = out, _H(t)
    dP = -matmul(matmul(P, t), P)
    if m > n:
        dP = dP + matmul(matmul(P, _H(P)), tH - matmul(matmul(tH, a), P))
    elif m < n:
        dP = dP + matmul(tH - matmul(P, matmul(a, tH)), matmul(_H(P), P))
    return dP


def _pinv_vjp(g, out, a, **params):
    # the transpose under Re Σ c t: the dAᴴ terms transpose to conjugated products
    m, n = shape(a)[-2:]
    P, gH = out, _H(g)
    ga = -matmul(matmul(_T(P), g), _T(P))
    if m > n:
        ga = ga + matmul(gH - matmul(conj(a), matmul(conj(P), gH)), matmul(conj(P), _T(P)))
    elif m < n:
        ga = ga + matmul(matmul(_T(P), conj(P)), gH - matmul(matmul(gH, conj(P)), conj(a)))
    return ga


pinv_p.def_jvp(0, _pinv_jvp)
pinv_p.def_vjp(0, _pinv_vjp)

pinv_p.holomorphic = False   # dA⁺ has dAᴴ terms (rules derived for real matrices, docs/complex.md)
