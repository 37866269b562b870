"""General (non-symmetric) eigendecomposition: ``linalg.eig`` and ``linalg.eigvals``.

``eig`` is one primitive whose output packs the eigenvalues as a first row above the eigenvectors
(shape ``(..., n + 1, n)``), as ``eigh`` does; real when NumPy's result is real (every
eigenvalue of a real matrix real), complex otherwise. With ``E = V⁻¹ dA V``:

* ``dλ = diag(E)``, and ``W = V (F ∘ E)`` with ``F_ij = 1 / (λ_j − λ_i)`` off the diagonal moves
  each eigenvector within the plane of the others;
* LAPACK returns each eigenvector with Euclidean norm 1 and its entry of largest modulus real, so
  ``dv_j = w_j + (a_j + i b_j) v_j`` with ``a_j = −Re(v_jᴴ w_j)`` (the norm stays 1) and ``b_j``
  keeping that entry real: the derivative of the very vectors NumPy returns, phases included
  (a real eigenvector keeps only its norm), as long as LAPACK keeps its choices: for larger
  matrices a small change can reorder the eigenvalues or flip a vector's sign, and the
  derivative follows each eigenvalue and vector continuously;
* reverse mode is the transpose of those maps under the pairing ``Re Σ c t`` (docs/complex.md).

``eigvals`` takes its value from ``np.linalg.eigvals`` (NumPy's numbers, bit for bit) and its
derivative ``dλᵢ = ũᵢᵀ dA wᵢ`` from the right eigenvectors of ``eig(A)`` and the left ones of
``eig(Aᵀ)`` (scaled so that ``ũᵢᵀ wᵢ = 1``), matched to the eigenvalues one by one: no inverse of
the eigenvector matrix, which is singular when the matrix is defective. Eigenvalues are
holomorphic in the matrix; eigenvectors, normalised with a modulus, are not.

Policy: a repeated eigenvalue has no derivative (a defective matrix's eigenvalues move like
``√ε``; a non-defective one's split in directions ``diag(E)`` does not give), but the simple
ones beside it have theirs (a Leslie matrix's dominant eigenvalue beside a defective zero): in
``eigvals`` forward mode gives the repeated ones NaN tangents, with a warning, and reverse mode
raises ``np.linalg.LinAlgError`` when a cotangent reaches one; ``eig``'s values do the same in
reverse mode when its vectors are unused. ``eig``'s vectors of repeated eigenvalues get NaN
tangents in forward mode and raise in reverse mode when used, the simple eigenvalues' vectors
keeping theirs (so a simple eigenvalue has its second derivative); a vector whose two largest
entries have equal modulus raises (which of them LAPACK makes real is not stable).

>>> import duals
>>> duals.jacfwd(np.linalg.eigvals)(np.array([[2.0, 1.0], [0.0, 3.0]])).tolist()
[[[1.0, 0.0], [-1.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]]]
"""
import numpy as np

from ..core import Primitive
from ..float_warnings import warn_at_user_line
from ..index_sets import per_matrix_rule
from . import export, innermost, is_complex, repeated_gap, shape_of as shape
from .complex_parts import conj, imag, real
from .elementwise import where
from .linalg import _check_square as _check, matmul, solve
from .reductions import sum as _sum
from .assembly import take_along_axis
from .shape import concatenate, swapaxes
from .spectral import listed, packed_marks, repeated_error, split_packed, tied_gaps, unused

EigResult = type(np.linalg.eig(np.eye(1)))   # NumPy's own namedtuple


def _eig_impl(a, *, quiet=False):   # (quiet: eigvals' own use, which warns itself)
    w, v = np.linalg.eig(a)
    return np.concatenate([w[..., None, :], v], axis=-2)


eig_p = Primitive("eig", _eig_impl)
eig_p.def_sparsity(per_matrix_rule())


def _largest_entries(V, skip=False):
    """A mask of each column's entry of largest modulus (the one LAPACK made real); raises when
    two entries of a column (other than those ``skip`` masks) are within rounding of it."""
    mags = np.abs(np.asarray(innermost(V)))
    n = mags.shape[-2]
    top = np.sort(mags, axis=-2)
    ambiguous = top[..., -2:-1, :] >= top[..., -1:, :] * (1.0 - 64 * np.finfo(mags.dtype).eps)
    if n > 1 and np.any(ambiguous & ~np.asarray(skip)):
        raise np.linalg.LinAlgError(
            "eig: an eigenvector has two entries of equal largest modulus; LAPACK makes one of them "
            "real and which one is not stable, so the eigenvectors' phases have no derivative "
            "here. Differentiate np.linalg.eigvals, or a function of the eigenvectors that does "
            "not depend on their phases")
    return np.arange(n)[:, None] == np.argmax(mags, axis=-2)[..., None, :]


def _normalised(W, V, skip=False):
    """``dV`` from ``W``: each ``w_j + (a_j + i b_j) v_j`` keeping NumPy's normalisation."""
    if not is_complex(V):
        return W - V * _sum(V * W, axis=-2, keepdims=True)
    mask = _largest_entries(V, skip)
    a = -real(_sum(conj(V) * W, axis=-2, keepdims=True))
    b = -_sum(where(mask, imag(W), 0.0), axis=-2, keepdims=True) / _sum(
        where(mask, real(V), 0.0), axis=-2, keepdims=True)
    return W + V * (a + 1j * b)


def _normalised_transpose(V_bar, V, skip=False):
    """``W̄`` from ``V̄``: the transpose of :func:`_normalised` under ``Re Σ c t``."""
    s = _sum(V_bar * V, axis=-2, keepdims=True)
    if not is_complex(V):
        return V_bar - V * s
    mask = _largest_entries(V, skip)
    r = _sum(where(mask, real(V), 0.0), axis=-2, keepdims=True)
    return V_bar - real(s) * conj(V) + where(mask, -1j * imag(s) / r, 0.0)


def _phase_free(w, a, quiet):
    """The columns whose phase a tie of their largest entries leaves free without harm, as a row
    ``(..., 1, n)``: all of them for eigvals' own use (``quiet``: ``ũᵢᵀ dA wᵢ`` with ``ũᵢᵀwᵢ = 1``
    does not depend on the phase, to every order), and the real eigenvalues of a real matrix, whose
    vectors are real and stay real under a real perturbation (a stochastic matrix's constant
    vector)."""
    if quiet:
        return True
    if is_complex(a):
        return False
    return np.imag(np.asarray(innermost(w))) == 0


def _defective_rows(w, V):
    """:func:`nearly_defective` of ``eig``'s packed eigenvalues, as a row ``(..., 1, n)``."""
    values = np.asarray(innermost(w))[..., 0, :]
    return nearly_defective(values, _cosines_of(V))[..., None, :]


def _eig_jvp(t, out, a, *, quiet=False):
    w, V = split_packed(out)
    n = shape(a)[-1]
    E = solve(V, matmul(t, V))
    dw = _sum(E * np.eye(n), axis=-2, keepdims=True)
    F, tied = tied_gaps(w, _defective_rows(w, V))
    if not tied.any():
        dV = _normalised(matmul(V, F * E), V, skip=_phase_free(w, a, quiet))
        return concatenate([dw, dV], axis=-2)
    # the repeated eigenvalues and their vectors have no derivative; the simple ones keep theirs
    columns = tied.any(axis=-2, keepdims=True)
    if not quiet:
        warn_at_user_line(f"eig: eigenvalues {listed(columns, tied)} (in NumPy's order) are repeated: they "
                          f"and their eigenvectors have no derivative, their tangents are NaN and so is "
                          f"any derivative that uses them; the simple eigenvalues' and their vectors' "
                          f"are exact")
    dV = _normalised(matmul(V, F * E), V, skip=columns | _phase_free(w, a, quiet))
    return concatenate([where(columns, np.nan, dw), where(columns, np.nan, dV)], axis=-2)


def _eig_vjp(g, out, a, *, quiet=False, unreached=None):
    w, V = split_packed(out)
    w_bar, V_bar = split_packed(g)
    values, vectors = packed_marks(unreached)
    if unused(True, vectors):   # (vals, vecs = eig(a), the values alone used)
        return _eigvals_vjp(w_bar[..., 0, :], w[..., 0, :], a, unreached=values)
    n = shape(a)[-1]
    F, tied = tied_gaps(w, _defective_rows(w, V))
    columns = tied.any(axis=-2, keepdims=True)
    if tied.any() and not (unused(columns, vectors) and unused(columns[..., 0, :], values)):
        raise repeated_error("eig", w, tied)   # (a repeated eigenvalue, or its vector, is used)
    VT = swapaxes(V, -1, -2)
    free = columns | _phase_free(w, a, quiet)
    E_bar = w_bar * np.eye(n) + F * matmul(VT, _normalised_transpose(V_bar, V, skip=free))
    return solve(VT, matmul(E_bar, VT))     # V⁻ᵀ Ē Vᵀ


_eig_vjp.takes_unreached = True
eig_p.unreached = lambda i, mask, out, a, **params: None   # (takes the marks; passes none on)
eig_p.def_jvp(0, _eig_jvp)
eig_p.def_vjp(0, _eig_vjp)
eig_p.holomorphic = False   # the eigenvectors are normalised with a modulus


def _eigvals_impl(a):
    return np.linalg.eigvals(a)


eigvals_p = Primitive("eigvals", _eigvals_impl)
eigvals_p.def_sparsity(per_matrix_rule())


def _relative_gaps(values):
    """Each eigenvalue's distance to the nearest other, over the largest modulus."""
    n = values.shape[-1]
    if n < 2:
        return np.full(values.shape, np.inf)
    gaps = np.abs(values[..., :, None] - values[..., None, :])
    gaps[..., np.arange(n), np.arange(n)] = np.inf
    scale = np.max(np.abs(values)) if values.size else 0.0
    return np.min(gaps, axis=-1) / max(scale, 1e-300)


def _repeated(values):
    """A mask of the eigenvalues within rounding of another (``inverse_gaps``' tolerance)."""
    return _relative_gaps(values) <= repeated_gap(np.finfo(values.dtype).eps)


def nearly_defective(values, cosines):
    """A mask of the eigenvalues of a general matrix that rounding split from a defective
    (repeated) one: ``sᵢ · gapᵢ / max|λ| < eps^(2/3)`` (:func:`~duals.ops.repeated_gap`), with
    ``sᵢ = |ũᵢᴴ wᵢ| / (‖ũᵢ‖ ‖wᵢ‖)``
    (``cosines``) the reciprocal condition number of ``λᵢ``. A derivative there would be accurate
    to about ``eps / (sᵢ · gapᵢ)``, and a defective double root comes out split by ``~sqrt(eps)``
    with ``sᵢ ~ sqrt(eps)``, a triple by ``~eps^(1/3)`` with ``sᵢ ~ eps^(2/3)``: both would give a
    derivative wrong by O(1) (a triple root's was -7.7e9), more than the gap alone shows. For a
    normal matrix (``sᵢ = 1``) this is the gap's own test.

    >>> bool(nearly_defective(np.array([1.0, 1.0 + 3e-8]), np.array([3e-8, 3e-8])).all())
    True
    """
    eps = np.finfo(np.result_type(values.dtype, np.float64)).eps
    return np.asarray(cosines) * _relative_gaps(values) < repeated_gap(eps)


def refuse_repeated_roots(companion):
    """Raise ``LinAlgError`` if a root of a polynomial is repeated, exactly or split by rounding
    (:func:`nearly_defective` of its ``companion`` matrix)."""
    w, V = np.linalg.eig(companion)
    defective = nearly_defective(w, _cosines_of(V)) | _repeated(w)
    if defective.any():
        pairs = ~np.eye(w.shape[-1], dtype=bool) & (defective[:, None] | defective[None, :])
        raise repeated_error("roots", w[None, :], pairs)


def _cosines_of(V):
    """``sᵢ`` of :func:`nearly_defective` from the right eigenvectors: the left ones are the rows
    of ``V⁻¹``."""
    V = np.asarray(innermost(V))
    with np.errstate(all="ignore"):
        rows = np.linalg.norm(np.linalg.inv(V), axis=-1)
        return 1.0 / (rows * np.linalg.norm(V, axis=-2))


def _matched(packed, values, repeated):
    """(the eigenvectors of ``eig``'s packed result in the order of ``values``, ``repeated`` with
    the eigenvalues two of which matched one of eig's): the LAPACK calls need not agree on order or
    last bits, and the values of a root split by rounding (``~sqrt(eps)`` apart) may cross."""
    w, V = split_packed(packed)
    found = np.asarray(innermost(w))[..., 0, :]
    order = np.argmin(np.abs(values[..., :, None] - found[..., None, :]), axis=-1)
    shared = (order[..., :, None] == order[..., None, :]).sum(axis=-1) > 1
    return take_along_axis(V, order[..., None, :], axis=-1), repeated | shared


def _eigenvector_pairs(out, a):
    """(Ũ, W, repeated) for the eigenvalues ``out``: ``eig``'s right eigenvectors W and left ones
    Ũ (of the transpose, scaled so that ũᵢᵀwᵢ = 1, zero for a repeated eigenvalue) in that order,
    and which eigenvalues are repeated: ``dλᵢ = ũᵢᵀ dA wᵢ`` needs no inverse of W, so a simple
    eigenvalue has its derivative however the others coincide (a defective W is singular)."""
    values = np.asarray(innermost(out))
    W, repeated = _matched(eig_p(a, quiet=True), values, _repeated(values))
    U, repeated = _matched(eig_p(swapaxes(a, -1, -2), quiet=True), values, repeated)
    cosines = np.abs(np.sum(np.asarray(innermost(U)) * np.asarray(innermost(W)), axis=-2))
    repeated = repeated | nearly_defective(values, cosines)   # (both columns of unit norm)
    alone = ~repeated[..., None, :]   # (a repeated one's vectors, NaN at second order, are left out)
    U = where(alone, U / where(alone, _sum(U * W, axis=-2, keepdims=True), 1.0), 0.0)
    return U, where(alone, W, 0.0), repeated


def _no_derivative_of_repeated(repeated, who):
    """The words for eigenvalues that have no derivative of their own."""
    return (f"{who}: eigenvalues {listed(repeated[..., None, :])} (in NumPy's order) are repeated and have no derivative of "
            f"their own (a defective one moves like the square root of a change)")


def _eigvals_jvp(t, out, a):
    U, W, repeated = _eigenvector_pairs(out, a)
    dw = _sum(U * matmul(t, W), axis=-2)
    if not repeated.any():
        return dw
    warn_at_user_line(_no_derivative_of_repeated(repeated, "eigvals") + ": their tangents are NaN, "
                      "and so is any derivative that uses them; the other eigenvalues' (a dominant "
                      "one's) are exact. A function symmetric in the repeated ones has a derivative: "
                      "write it through the matrix (np.trace(a) for their sum)")
    return where(repeated, np.nan, dw)


def _eigvals_vjp(g, out, a, unreached=None):
    U, W, repeated = _eigenvector_pairs(out, a)
    # structural zeros only: a defective eigenvalue moves like √ε, so a cotangent zero in value
    # (2λ of Σλ² at λ = 0) still meets an infinite derivative with a finite product
    if repeated.any() and not unused(repeated, unreached):
        raise np.linalg.LinAlgError(
            _no_derivative_of_repeated(repeated, "eigvals") + ", and the function uses them; "
            "write a function symmetric in them through the matrix (np.trace(a) for their sum), "
            "or use eigvalsh for a symmetric matrix")
    return matmul(U * g[..., None, :], swapaxes(W, -1, -2))      # Σᵢ ḡᵢ ũᵢ wᵢᵀ


_eigvals_vjp.takes_unreached = True
eigvals_p.unreached = lambda i, mask, out, a, **params: None   # (takes the marks; passes none on)
eigvals_p.def_jvp(0, _eigvals_jvp)
eigvals_p.def_vjp(0, _eigvals_vjp)


@export("linalg.eig")
def eig(a):
    """eig(a) -> (eigenvalues, eigenvectors) of a square matrix, in NumPy's order and normalisation.

    >>> w, v = eig(np.array([[2.0, 0.0], [0.0, 3.0]]))
    >>> w.tolist()
    [2.0, 3.0]
    """
    _check(a, "eig")
    if not hasattr(a, "_trace"):
        return EigResult(*np.linalg.eig(a))
    w, V = split_packed(eig_p(a))
    return EigResult(w[..., 0, :], V)


@export("linalg.eigvals")
def eigvals(a):
    """eigvals(a): the eigenvalues of a square matrix (real when they all are), NumPy's values.

    >>> eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    _check(a, "eigvals")
    if not hasattr(a, "_trace"):
        return np.linalg.eigvals(a)
    return eigvals_p(a)
