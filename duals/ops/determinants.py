"""Determinants: ``linalg.det`` and ``linalg.slogdet`` are primitives, with the adjugate as a
third, for ``det`` at a singular matrix.

``d det = det · trace(a⁻¹ da)`` and ``d logabsdet = trace(a⁻¹ da)``. ``det`` is a polynomial: at a
singular matrix its derivative is the adjugate (from the SVD), and its second derivative there
raises ``LinAlgError``; ``slogdet`` raises it for any derivative at a singular matrix. Of a
complex matrix ``slogdet`` differentiates the complex ``sign`` too (docs/complex.md).
"""
import numpy as np

from ..core import Primitive
from ..index_sets import per_matrix_rule
from . import export, innermost, is_complex, shape_of as shape
from .linalg import _T, _as_operand, _check_square, _float_dtype, _plain, _traced, matmul_p, solve_p
from .reductions import sum as _sum
from .shape import reshape

def _det_impl(a):
    return np.linalg.det(a)


def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    # complex a: the complex logarithm of det (log|det| + i arg det), holomorphic with the same rules
    return logabsdet + 1j * np.angle(sign) if np.iscomplexobj(sign) else logabsdet


def _inv_T(a):
    return _T(solve_p(a, np.eye(shape(a)[-1], dtype=_float_dtype(a))))


def _trace_of_solve(t, a):
    """trace(a⁻¹ t) over the last two axes, for tangents with lanes (one inverse, no loop)."""
    return _sum(_inv_T(a) * t, axis=(-2, -1))


def _matrix_cotangent(g):
    return reshape(g, shape(g) + (1, 1))


def _adjugate_impl(a):
    """adj(a) = det(a) a⁻¹, also where ``a`` is singular: with ``a = U S Vᴴ``, ``adj(a) = det(U)
    det(Vᴴ) V adj(S) Uᴴ`` and ``adj(S)`` the diagonal of the products of the other singular values."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * (np.conj(np.swapaxes(vh, -1, -2)) * others[..., None, :]) @ np.conj(
        np.swapaxes(u, -1, -2))


def _nonsingular(a):
    if _singular(a):
        raise np.linalg.LinAlgError("the second derivative of det at a singular matrix (the "
                                    "derivative of its adjugate) is not computed by duals")


def _adjugate_jvp(t, out, a):
    """d adj = adj tr(a⁻¹ da) - a⁻¹ da adj (``adj = det · a⁻¹``), where ``a`` is not singular."""
    _nonsingular(a)
    return out * _matrix_cotangent(_trace_of_solve(t, a)) - matmul_p(solve_p(a, t), out)


def _adjugate_vjp(g, out, a):
    """The transpose: ``tr(gᵀ adj) a⁻ᵀ - a⁻ᵀ g adjᵀ``."""
    _nonsingular(a)
    return (_matrix_cotangent(_sum(g * out, axis=(-2, -1))) * _inv_T(a)
            - solve_p(_T(a), matmul_p(g, _T(out))))


adjugate_p = Primitive("adjugate", _adjugate_impl)
adjugate_p.def_jvp(0, _adjugate_jvp)
adjugate_p.def_vjp(0, _adjugate_vjp)
adjugate_p.def_sparsity(per_matrix_rule())


def _singular(a):
    return _zero(np.linalg.det(np.asarray(innermost(a))))


def _zero(det):
    """Whether a determinant (of any matrix in a stack) is 0: where det's rules take the adjugate."""
    return bool(np.any(np.asarray(innermost(det)) == 0.0))


def _det_jvp(t, out, a):
    if _zero(out):
        return _sum(_T(adjugate_p(a)) * t, axis=(-2, -1))
    return out * _trace_of_solve(t, a)


def _det_vjp(g, out, a):
    if _zero(out):
        return _matrix_cotangent(g) * _T(adjugate_p(a))
    return _matrix_cotangent(g * out) * _inv_T(a)


det_p = Primitive("det", _det_impl)
det_p.def_jvp(0, _det_jvp)
det_p.def_vjp(0, _det_vjp)
slogdet_p = Primitive("slogdet", _slogdet_impl)
det_p.def_sparsity(per_matrix_rule())
slogdet_p.def_sparsity(per_matrix_rule())
slogdet_p.def_jvp(0, lambda t, out, a: _trace_of_solve(t, a))
slogdet_p.def_vjp(0, lambda g, out, a: _matrix_cotangent(g) * _inv_T(a))


@export("linalg.det")
def det(a):
    """det(a): the determinant (of each matrix in a stack).

    ``d det = det · trace(a⁻¹ da)``; at a singular matrix (value 0, as NumPy's) ``trace(adj(a) da)``
    with the adjugate from the SVD, and a second derivative there raises ``LinAlgError``.

    >>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
    5.0
    """
    a = _as_operand(a)
    _check_square(a, "linalg.det")
    return det_p(a)


SlogdetResult = type(np.linalg.slogdet(np.eye(1)))   # NumPy's own namedtuple


@export("linalg.slogdet")
def slogdet(a):
    """slogdet(a) -> (sign, logabsdet): the sign (a plain array, derivative zero) and the
    differentiable log of the absolute value of the determinant.

    At a singular matrix ``logabsdet`` is ``-inf`` and a derivative raises ``LinAlgError``.

    >>> sign, logdet = slogdet(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> float(sign), round(float(logdet), 6)
    (-1.0, 0.693147)
    """
    a = _as_operand(a)
    _check_square(a, "linalg.slogdet")
    if is_complex(a) and _traced(a):   # sign = exp(i arg det) has a derivative then
        from .complex_parts import imag, real
        from .elementwise import exp
        log_det = slogdet_p(a)
        return SlogdetResult(exp(1j * imag(log_det)), real(log_det))
    sign = np.linalg.slogdet(_plain(a))[0]
    return SlogdetResult(sign, slogdet_p(a))
