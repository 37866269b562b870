"""``linalg.expm``: the matrix exponential (SciPy's ``scipy.linalg.expm``; NumPy has none).

The value is SciPy's, bit for bit. The derivative in a direction ``E`` is the Fréchet derivative
``L(A, E) = ∫₀¹ e^{sA} E e^{(1-s)A} ds``, read off the exponential of a block matrix:
``expm([[A, E], [0, A]]) = [[e^A, L(A, E)], [0, e^A]]``. Reverse mode is its transpose,
``Ā = L(Aᵀ, Ḡ)`` (plain transposes for complex matrices too: ``expm`` is holomorphic). On plain
values ``L`` is SciPy's ``expm_frechet``; on traced ones (second and higher order) it is the
corner of the primitive itself on the block matrix, so every order works (each order doubles the
block). Unlike a spectral formula ``V e^Λ V⁻¹`` the derivative is exact at repeated eigenvalues
(a Jukes–Cantor rate matrix, a rotation generator).

>>> import duals
>>> round(float(duals.grad(lambda t: expm(t * np.array([[0.0, 1.0], [-1.0, 0.0]]))[0, 1])(0.5)), 12)  # cos t
0.87758256189
"""
import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import per_matrix_rule
from . import dtype_of, export, innermost, shape_of as shape
from .linalg import _as_operand, _check_square, _T, _traced
from .shape import broadcast_to, concatenate, getitem


def _expm_impl(a):
    try:
        from scipy.linalg import expm as scipy_expm
    except ImportError:
        raise ImportError("duals.numpy.linalg.expm takes its values from SciPy: pip install "
                          "scipy (or duals[sparse])") from None
    return scipy_expm(a)


def _scale_down(a, t):
    """A power of two ``c <= 1`` with ``c·max|t|`` about ``max(max|a|, 1)`` (1 unless ``t`` is the
    larger): scaling by it is exact, ``L(A, cE) / c = L(A, E)``, and a large direction adds no
    squarings to the block's exponential. (Scaling a small one up costs accuracy in the small
    entries of ``L``.)"""
    big_a = max(float(np.max(np.abs(innermost(a)), initial=0.0)), 1.0)
    big_t = float(np.max(np.abs(innermost(t)), initial=0.0))
    if not np.isfinite(big_t) or big_t <= big_a:
        return 1.0
    return 2.0 ** -round(np.log2(big_t / big_a))


def _frechet_of_plain(a, t):
    """``L(A, E)`` of plain arrays by SciPy's ``expm_frechet`` (Al-Mohy and Higham), matrix by
    matrix of ``t``'s lanes and ``a``'s stack."""
    from scipy.linalg import expm_frechet
    a_full = np.broadcast_to(a, t.shape)
    out = np.empty(t.shape, dtype=np.result_type(a, t))
    for index in np.ndindex(t.shape[:-2]):
        out[index] = expm_frechet(a_full[index], t[index], compute_expm=False)
    return out


def frechet(a, t):
    """frechet(a, t) -> ``L(A, E)`` for every lane and matrix of ``t`` (``t``'s lane axes in front
    of ``a``'s shape): SciPy's ``expm_frechet`` for plain values, else (nested derivatives) the
    exponential of the block matrix ``[[A, E], [0, A]]``, whose rules differentiate again."""
    if not isinstance(a, Tracer) and not isinstance(t, Tracer):
        return _frechet_of_plain(np.asarray(a), np.asarray(t))
    n = shape(a)[-1]
    c = _scale_down(a, t)
    e = t * c if c != 1.0 else t
    a_full = broadcast_to(a, shape(e))
    zeros = np.zeros(shape(e), dtype=np.result_type(dtype_of(a), dtype_of(e)))
    block = concatenate([concatenate([a_full, e], axis=-1), concatenate([zeros, a_full], axis=-1)], axis=-2)
    corner = getitem(expm_p(block), (Ellipsis, slice(0, n), slice(n, None)))
    return corner / c if c != 1.0 else corner


expm_p = Primitive("expm", _expm_impl)
expm_p.def_sparsity(per_matrix_rule())
expm_p.def_jvp(0, lambda t, out, a: frechet(a, t))
expm_p.def_vjp(0, lambda g, out, a: frechet(_T(a), g))


@export("linalg.expm")
def expm(a):
    """expm(a): the matrix exponential ``e^a`` (of each matrix in a stack), SciPy's ``expm``.

    Needs SciPy. Derivatives of every order, exact at repeated eigenvalues too.

    >>> expm(np.zeros((2, 2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    a = _as_operand(a)
    _check_square(a, "linalg.expm")
    if not _traced(a):
        return _expm_impl(a)
    return expm_p(a)
