"""Singular value and QR decompositions: ``linalg.svd`` (and ``svdvals``) and ``linalg.qr`` are
primitives (``lstsq`` and ``pinv``, built on them, are in :mod:`duals.ops.least_squares`).

``svd`` is one primitive whose output packs the singular values as a first row above ``U``
and ``V = Vhᵀ`` (shape ``(..., 1 + m + n, k)``, ``k = min(m, n)``; with ``full_matrices`` the
columns are padded with zeros to ``max(m, n)``). With ``P = Uᵀ dA V``, ``S = diag(s)`` and
``F_ij = 1 / (s_j² − s_i²)`` off the diagonal:

* ``ds = diag(P)`` (``ds_i = u_iᵀ dA v_i``);
* ``dU = U (F ∘ (P S + S Pᵀ)) + (I − U Uᵀ) dA V S⁻¹`` and
  ``dV = V (F ∘ (S P + Pᵀ S)) + (I − V Vᵀ) dAᵀ U S⁻¹``; the reverse rule is their transpose.

``qr`` (``m ≥ n``) packs ``Q`` above ``R``. With ``C = Qᵀ dA R⁻¹`` and ``Ω = L − Lᵀ``
(``L`` the strict lower triangle of ``C``): ``dR = (C − Ω) R`` and
``dQ = Q Ω + (I − Q Qᵀ) dA R⁻¹``. A wide ``a = [X Y]`` is ``Q R_X = X`` and ``R = [R_X, Qᵀ Y]``.

Policy where these functions have no derivative (the same in every mode and order):

* **Signs.** Singular vectors and the columns of ``Q`` are those LAPACK returns; the derivative
  is that of this choice, kept by continuity (a pair ``u_i, v_i`` flipped together, or a column
  of ``Q`` with its row of ``R``, is the same decomposition).
* **Repeated singular values** (a gap ``s_i − s_{i+1} ≤ max(m, n) · eps · s_max``): the
  singular vectors have no derivative (any rotation inside the repeated subspace is as good),
  so a derivative of ``svd`` with ``compute_uv=True`` raises ``LinAlgError`` naming the gap.
  The singular values alone (``compute_uv=False``, ``svdvals``) are differentiated everywhere
  with ``diag(Uᵀ dA V)`` in NumPy's basis: exact for every function symmetric in the repeated
  values (their sum, ``trace``, norms); an individual repeated value has no derivative, and
  what it gets is that diagonal, not a one-sided derivative (as ``eigvalsh``, see
  :mod:`duals.ops.spectral`).
* **Zero singular values** (rank deficiency, ``s_i ≤ max(m, n) · eps · s_max``): a singular
  value has a kink at zero (``|x|`` at 0) and the singular vectors of a zero singular value are
  not unique, so ``svd`` with ``compute_uv=True`` raises ``LinAlgError`` there; the singular
  values alone have derivative 0 at a zero singular value (the minimum-norm subgradient, as
  ``abs'(0) = 0``; the nuclear norm then gets ``U_r V_rᵀ`` over the nonzero values).
* **The extra columns of** ``full_matrices=True`` (``m ≠ n``): the last ``|m − n|`` columns of
  ``U`` (rows of ``Vh``) are a basis LAPACK picks inside the orthogonal complement of the range.
  Their derivative is ``dU⊥ = −U S⁻¹ Vᵀ dAᵀ U⊥`` (the basis turns only as much as it must to
  stay orthogonal to ``U``). With one extra column that is exact (the column is unique up to
  sign). With two or more, only functions that do not depend on the basis chosen (projections
  ``U⊥ U⊥ᵀ``, distances ``‖U⊥ᵀ y‖``) have a derivative: reverse mode checks the cotangent
  (``U⊥ᵀ Ḡ`` symmetric) and raises ``LinAlgError`` otherwise; forward mode cannot tell what
  the tangent will be used for, so it raises for any derivative. ``full_matrices=False``
  gives the same singular values and first ``k`` vectors, with no such limit.
* ``qr``: at linearly dependent columns (``|R_ii| ≤ max(m, n) · eps · max|R_jj|``, of the first
  ``min(m, n)`` columns) ``Q`` is not unique and a derivative raises ``LinAlgError``;
  ``mode='complete'`` of a tall matrix (extra columns of ``Q``) and ``'raw'`` are not supported
  on traced values.
* ``hermitian=True`` is NumPy's composition (``eigh`` of the lower triangle, ``|λ|`` sorted):
  with ``compute_uv`` a derivative raises at a zero or repeated ``|λ|``.
* **Complex matrices** take the same rules with conjugate transposes (reverse mode in JAX's
  pairing ``Re Σ c t``, docs/complex.md). A pair ``u_i, v_i`` can turn by a common phase: the
  derivative is the one with ``Im(v_iᴴ dv_i) = 0``, so functions that do not depend on the phases
  agree with differences of NumPy's results. ``R`` of ``qr`` has a real diagonal (LAPACK's), so
  ``C = Qᴴ dA R⁻¹`` splits into an upper-triangular part with a real diagonal and a skew-Hermitian
  one. The extra columns of a complex ``full_matrices=True`` svd raise when used;
  ``svd(hermitian=True)`` of a complex matrix raises (use ``eigh``).

>>> import duals
>>> a = np.array([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
>>> duals.grad(lambda a: np.linalg.svd(a, compute_uv=False)[0])(a).tolist()
[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
"""
import numpy as np

from ..core import Primitive
from ..index_sets import per_matrix_rule
from . import export, innermost, is_complex, ndim_of as ndim, repeated_gap, shape_of as shape
from .assembly import take_along_axis
from .complex_parts import conj, imag, real
from .elementwise import PRIMITIVES, where
from .linalg import _as_operand, _check_square, _float_dtype, _traced, matmul, solve_p
from .reductions import sum as _sum
from .shape import concatenate, getitem, swapaxes, tril

# NumPy's own result types, so that results (and cotangents built from NumPy's) have one structure
SVDResult = type(np.linalg.svd(np.eye(1)))
QRResult = type(np.linalg.qr(np.eye(1)))
_abs = PRIMITIVES["abs"]


def _T(x):
    return swapaxes(x, -1, -2)


def _plain(x):
    return np.asarray(innermost(x))


def _rows(x, start, stop, cols=None):
    return getitem(x, (Ellipsis, slice(start, stop), slice(0, cols)))


def _pad(x, width):
    """``x`` with zero columns appended up to ``width`` (the packing of ``full_matrices``)."""
    missing = width - shape(x)[-1]
    if missing <= 0:
        return x
    return concatenate([x, np.zeros(shape(x)[:-1] + (missing,), dtype=_float_dtype(x))], axis=-1)


def _tolerance(values, m, n):
    """``max(m, n) · eps · max(values)`` per matrix (NumPy's ``matrix_rank`` threshold)."""
    top = np.max(np.abs(values), axis=-1, keepdims=True) if values.shape[-1] else np.zeros(values.shape)
    return max(m, n) * np.finfo(_float_dtype(values)).eps * top

# ---------------------------------------------------------------- svd


def _svd_impl(a, *, full):
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    m, n = a.shape[-2:]
    width = max(m, n) if full else min(m, n)

    def pad(x):
        return np.concatenate([x, np.zeros(x.shape[:-1] + (width - x.shape[-1],), x.dtype)], axis=-1)

    v = np.swapaxes(vh, -1, -2)
    return np.concatenate([pad(s[..., None, :]), pad(u), pad(v.conj() if np.iscomplexobj(v) else v)], axis=-2)


svd_p = Primitive("svd", _svd_impl)
svd_p.def_sparsity(per_matrix_rule())


def _svd_parts(packed, m, n):
    """(s as a row, U, V, U⊥ or None, V⊥ or None) of the packed output (or cotangent)."""
    k = min(m, n)
    width = shape(packed)[-1]
    s, U, V = real(_rows(packed, 0, 1, k)), _rows(packed, 1, 1 + m, k), _rows(packed, 1 + m, 1 + m + n, k)
    U_rest = getitem(packed, (Ellipsis, slice(1, 1 + m), slice(k, m))) if width > k and m > k else None
    V_rest = getitem(packed, (Ellipsis, slice(1 + m, 1 + m + n), slice(k, n))) if width > k and n > k else None
    return s, U, V, U_rest, V_rest


def _check_distinct_nonzero(s_row, m, n, who="svd"):
    """Raise unless the singular values (descending) are nonzero (``max(m, n) · eps · s_max``, NumPy's
    rank) and distinct (:func:`~duals.ops.repeated_gap`)."""
    s = _plain(s_row)[..., 0, :]
    tol = _tolerance(s, m, n)
    if s.shape[-1] and np.any(s[..., -1:] <= tol):
        raise np.linalg.LinAlgError(
            f"{who}: the matrix is rank deficient (a singular value is {np.min(s[..., -1]):.3g}, zero "
            f"to working precision): a singular value has a kink at zero and the singular vectors of "
            f"a zero singular value are not unique, so the decomposition has no derivative there; "
            f"differentiate the singular values alone (np.linalg.svd(a, compute_uv=False), derivative "
            f"0 at a zero singular value) or regularize the matrix")
    gaps = s[..., :-1] - s[..., 1:]
    top = s[..., :1] if s.shape[-1] else 0.0
    if gaps.size and np.any(gaps <= repeated_gap(np.finfo(s.dtype).eps) * top):
        raise np.linalg.LinAlgError(
            f"{who}: the singular vectors have no derivative at a repeated singular value (the "
            f"smallest gap is {np.min(gaps):.3g}); differentiate the singular values "
            f"(np.linalg.svd(a, compute_uv=False)) or a function that does not depend on the basis "
            f"chosen inside the repeated singular subspace. A second derivative (hessian, hvp) of "
            f"the singular values needs the vectors' derivative too, so it raises there even for a "
            f"function symmetric in them (norm(a, 'nuc')); move the matrix off the repeated value")


def _inverse_square_gaps(s_row):
    """``F_ij = 1 / (s_j² − s_i²)`` off the diagonal, 0 on it."""
    k = shape(s_row)[-1]
    off = ~np.eye(k, dtype=bool)
    squares = s_row * s_row
    difference = squares - _T(squares)
    return where(off, 1.0 / where(off, difference, 1.0), 0.0)


def _extra_columns_error(rest, m, n, mode):
    side = "columns of U" if m > n else "rows of Vh"
    return np.linalg.LinAlgError(
        f"svd(full_matrices=True) of a {m}x{n} matrix: the last {abs(m - n)} {side} are a basis that "
        f"LAPACK picks inside the orthogonal complement of the range, and "
        + ("forward mode cannot tell whether the function uses them in a way that does not depend on "
           "that choice" if mode == "forward" else
           "the function depends on which basis was picked (it is not a function of their span)")
        + "; call np.linalg.svd(a, full_matrices=False) (the same singular values and first "
        f"{min(m, n)} vectors), or use the extra vectors only through projections such as "
        "U⊥ @ U⊥.T in reverse mode")


def _complex_extra_columns(a, m, n, full):
    """Refuse the extra columns of a complex ``full_matrices=True`` svd: their basis (and phases)
    is LAPACK's choice inside the orthogonal complement."""
    if full and m != n and is_complex(a):
        raise np.linalg.LinAlgError(
            f"svd(full_matrices=True) of a complex {m}x{n} matrix: the derivative of the extra "
            f"{'columns of U' if m > n else 'rows of Vh'} is not supported for complex matrices; call "
            f"np.linalg.svd(a, full_matrices=False)")


def _svd_jvp(t, out, a, *, full):
    # complex a: P = Uᴴ dA V, dσ = Re diag(P), dU = U (F ∘ (P S + S Pᴴ) + i Im diag(P) / σ),
    # dV = V (F ∘ (S P + Pᴴ S)): the phase of each pair (uᵢ, vᵢ) is free, and the derivative is
    # the one that leaves vᵢ's phase alone (Im(vᵢᴴ dvᵢ) = 0)
    m, n = shape(a)[-2:]
    s, U, V, U_rest, V_rest = _svd_parts(out, m, n)
    _check_distinct_nonzero(s, m, n)
    _complex_extra_columns(a, m, n, full)
    if abs(m - n) >= 2 and full:
        raise _extra_columns_error(None, m, n, "forward")
    k = min(m, n)
    tV = matmul(t, V)
    P = matmul(_H(U), tV)
    F = _inverse_square_gaps(s)
    PS, SP = P * s, _T(s) * P
    eye = np.eye(k, dtype=_float_dtype(s))
    ds = real(_sum(P * eye, axis=-2, keepdims=True))
    dU = matmul(U, F * (PS + _H(PS)))
    if is_complex(P):
        dU = dU + matmul(U, 1j * (imag(P) * eye) / s)
    dV = matmul(V, F * (SP + _H(SP)))
    if m > n:
        dU = dU + (tV - matmul(U, P)) / s
    if n > m:
        tU = matmul(_H(t), U)
        dV = dV + (tU - matmul(V, _H(P))) / s
    width = shape(out)[-1]
    if U_rest is not None:   # the extra columns, turned only to stay orthogonal to U
        dU = concatenate([dU, -matmul(U, matmul(_T(tV / s), U_rest))], axis=-1)
    if V_rest is not None:
        dV = concatenate([dV, -matmul(V, matmul(_T(tU / s), V_rest))], axis=-1)
    return concatenate([_pad(ds, width), _pad(dU, width), _pad(dV, width)], axis=-2)


def _check_basis_free(rest, g_rest, m, n):
    """Raise unless ``restᵀ g_rest`` is symmetric: the function does not depend on the basis."""
    x = np.swapaxes(_plain(rest), -1, -2) @ _plain(g_rest)
    skew = np.max(np.abs(x - np.swapaxes(x, -1, -2)), initial=0.0)
    scale = np.max(np.abs(_plain(g_rest)), initial=0.0)
    if skew > 100 * max(m, n) * np.finfo(x.dtype).eps * scale:
        raise _extra_columns_error(rest, m, n, "reverse")


def _svd_vjp(g, out, a, *, full):
    # the transpose under Re Σ c t: with J = F ∘ (Uᵀ Ū), K = F ∘ (Vᵀ V̄) and
    # M = (J + Jᴴ) S + diag(Re σ̄) + S (K + Kᴴ) + i Im diag(Uᵀ Ū) / σ, Ā = conj(U) M Vᵀ (+ the
    # parts outside the ranges), which for real a is U M Vᵀ
    m, n = shape(a)[-2:]
    s, U, V, U_rest, V_rest = _svd_parts(out, m, n)
    _check_distinct_nonzero(s, m, n)
    gs, gU, gV, gU_rest, gV_rest = _svd_parts(g, m, n)
    if any(r is not None and np.any(_plain(r) != 0) for r in (gU_rest, gV_rest)):
        _complex_extra_columns(a, m, n, full)   # complex: only unused extra columns
    k = min(m, n)
    F = _inverse_square_gaps(s)
    eye = np.eye(k, dtype=_float_dtype(s))
    UtgU = matmul(_T(U), gU)
    J = F * UtgU
    K = F * matmul(_T(V), gV)
    inner = (J + _H(J)) * s + real(gs) * eye + _T(s) * (K + _H(K))
    if is_complex(UtgU):
        inner = inner + 1j * (imag(UtgU) * eye) / s
    left = matmul(conj(U), inner)
    if m > n:
        projected = gU - matmul(conj(U), matmul(_T(U), gU))
        if U_rest is not None:
            if m - n >= 2:
                _check_basis_free(U_rest, gU_rest, m, n)
            projected = projected - matmul(U_rest, matmul(_T(gU_rest), U))
        left = left + projected / s
    result = matmul(left, _T(V))
    if n > m:
        projected = gV - matmul(conj(V), matmul(_T(V), gV))
        if V_rest is not None:
            if n - m >= 2:
                _check_basis_free(V_rest, gV_rest, m, n)
            projected = projected - matmul(V_rest, matmul(_T(gV_rest), V))
        result = result + matmul(conj(U) / s, _H(projected))
    return result


svd_p.def_jvp(0, _svd_jvp)
svd_p.def_vjp(0, _svd_vjp)


def _svdvals_impl(a):
    return np.linalg.svd(a, compute_uv=False)


svdvals_p = Primitive("svdvals", _svdvals_impl)
svdvals_p.def_sparsity(per_matrix_rule())


def _vectors_and_zeros(out, a):
    """U, V of ``a`` (traced, for second order) and the mask of its zero singular values (a row)."""
    m, n = shape(a)[-2:]
    s, U, V, _, _ = _svd_parts(svd_p(a, full=False), m, n)
    values = _plain(out)
    zero = (values <= _tolerance(values, m, n))[..., None, :]
    return U, V, zero


def _svdvals_jvp(t, out, a):
    # dσ = Re diag(Uᴴ t V) (Uᵀ for real a), without forming Uᴴ t V
    U, V, zero = _vectors_and_zeros(out, a)
    ds = real(_sum(conj(U) * matmul(t, V), axis=-2, keepdims=True))
    ds = where(zero, 0.0, ds) if zero.any() else ds
    return getitem(ds, (Ellipsis, 0, slice(None)))


def _svdvals_vjp(g, out, a):
    # the transpose under Re Σ c t: Ā = conj(U) diag(Re σ̄) Vᵀ (U diag(σ̄) Vᵀ for real a)
    U, V, zero = _vectors_and_zeros(out, a)
    row = real(getitem(g, (Ellipsis, None, slice(None))))   # scales the columns of U
    row = where(zero, 0.0, row) if zero.any() else row
    return matmul(conj(U) * row, _T(V))


svdvals_p.def_jvp(0, _svdvals_jvp)
svdvals_p.def_vjp(0, _svdvals_vjp)
svdvals_p.holomorphic = False   # singular values are real


def _symmetric_from_lower(a):
    return tril(a) + _T(tril(a, -1))


def _hermitian_svd(a, compute_uv):
    """NumPy's ``svd(hermitian=True)``: ``eigh`` of the lower triangle, ``|λ|`` in descending order."""
    from .spectral import eigh, eigvalsh
    from .sorting import sort
    m = shape(a)[-1]
    if not compute_uv:
        return getitem(sort(_abs(eigvalsh(a)), axis=-1), (Ellipsis, slice(None, None, -1)))
    w, u = eigh(a)
    sign = np.copysign(1.0, _plain(w))
    order = np.argsort(np.abs(_plain(w)), axis=-1)[..., ::-1]
    s = take_along_axis(_abs(w), order, axis=-1)
    _check_distinct_nonzero(getitem(s, (Ellipsis, None, slice(None))), m, m, "svd(hermitian=True)")
    u = take_along_axis(u, order[..., None, :], axis=-1)
    sign = np.take_along_axis(sign, order, axis=-1).astype(_float_dtype(a))
    return SVDResult(u, s, _T(u * sign[..., None, :]))


def _at_least_2d(a, who):
    if ndim(a) < 2:
        raise np.linalg.LinAlgError(f"{who}: {ndim(a)}-dimensional array given; the array must be at "
                                    f"least two-dimensional (a matrix or a stack of them)")


@export("linalg.svd")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """svd(a, full_matrices=True, compute_uv=True, hermitian=False) -> (U, S, Vh): ``a = U diag(S) Vh``.

    Singular values descending, as NumPy's; with ``compute_uv=False`` only ``S``. The policy at
    repeated and zero singular values and for the extra columns of ``full_matrices`` is in the
    module docstring of ``duals.ops.decompositions``.

    >>> u, s, vh = svd(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> s.tolist()
    [2.0, 1.0]
    """
    a = _as_operand(a)
    if not _traced(a):
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)
    _at_least_2d(a, "svd")
    if hermitian:
        _check_square(a, "svd(hermitian=True)")
        if is_complex(a):
            raise TypeError("svd(hermitian=True) of a complex matrix has no derivative rule in duals; "
                            "use np.linalg.eigh (complex Hermitian matrices are supported)")
        return _hermitian_svd(a, compute_uv)
    if not compute_uv:
        return svdvals_p(a)
    m, n = shape(a)[-2:]
    packed = svd_p(a, full=bool(full_matrices))
    cols_u, cols_v = (m, n) if full_matrices else (min(m, n),) * 2
    s = real(getitem(packed, (Ellipsis, 0, slice(0, min(m, n)))))   # real for complex a too
    return SVDResult(_rows(packed, 1, 1 + m, cols_u), s, _H(_rows(packed, 1 + m, 1 + m + n, cols_v)))


@export("linalg.svdvals")
def svdvals(x):
    """svdvals(x): the singular values, descending (``svd(x, compute_uv=False)``).

    >>> svdvals(np.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = _as_operand(x)
    if not _traced(x):
        return np.linalg.svd(x, compute_uv=False)
    _at_least_2d(x, "svdvals")
    return svdvals_p(x)

# ---------------------------------------------------------------- qr


def _qr_impl(a):
    q, r = np.linalg.qr(a)
    return np.concatenate([q, r], axis=-2)


qr_p = Primitive("qr", _qr_impl)
qr_p.def_sparsity(per_matrix_rule())


def _qr_parts(packed, m):
    return _rows(packed, 0, m), _rows(packed, m, None)


def _right_divide(x, r):
    """``x R⁻¹`` (``R`` square)."""
    return _T(solve_p(_T(r), _T(x)))


def _check_independent(r, m, n):
    diagonal = np.abs(np.diagonal(_plain(r), axis1=-2, axis2=-1))
    tol = _tolerance(diagonal, m, n)
    if diagonal.size and np.any(diagonal <= tol):
        raise np.linalg.LinAlgError(
            f"qr: the first {min(m, n)} columns of the matrix are linearly dependent (|R[i, i]| = "
            f"{np.min(diagonal):.3g}, zero to working precision): Q is not unique there, so it has no "
            f"derivative; remove or perturb the dependent columns")


def _H(x):
    """The conjugate transpose (the transpose for real values)."""
    return conj(_T(x))


def _imaginary_diagonal(x):
    """``i Im(diag x)`` as a matrix, or None for real ``x``."""
    return 1j * (imag(x) * np.eye(shape(x)[-1])) if is_complex(x) else None


def _qr_jvp(t, out, a):
    # complex a (LAPACK's R has a real diagonal): C = Qᴴ dA R⁻¹ and the skew-Hermitian
    # Ω = L(C) − L(C)ᴴ + i Im diag(C), so that dR R⁻¹ = C − Ω is upper triangular with a real diagonal
    m, n = shape(a)[-2:]
    Q, R = _qr_parts(out, m)
    _check_independent(R, m, n)
    W = _right_divide(t, R)
    C = matmul(_H(Q), W)
    lower = tril(C, -1)
    omega = lower - _H(lower)
    diagonal = _imaginary_diagonal(C)
    omega = omega if diagonal is None else omega + diagonal
    dR = matmul(C - omega, R)
    dQ = matmul(Q, omega) + W - matmul(Q, C)
    return concatenate([dQ, dR], axis=-2)


def _qr_vjp(g, out, a):
    m, n = shape(a)[-2:]
    Q, R = _qr_parts(out, m)
    _check_independent(R, m, n)
    gQ, gR = _qr_parts(g, m)
    # the transpose under Re Σ c t: with N = R̄ Rᵀ − Qᵀ Q̄ and K = N − L(N − Nᴴ) − i Im diag(N),
    # Ā = (Q̄ + conj(Q) K) R⁻ᵀ (for real a, K = copyltu(Nᵀ))
    N = matmul(gR, _T(R)) - matmul(_T(Q), gQ)
    K = N - tril(N - _H(N), -1)
    diagonal = _imaginary_diagonal(N)
    K = K if diagonal is None else K - diagonal
    return _T(solve_p(R, _T(gQ + matmul(conj(Q), K))))


qr_p.def_jvp(0, _qr_jvp)
qr_p.def_vjp(0, _qr_vjp)


def _with_value(traced, exact):
    """``traced`` carrying NumPy's ``exact`` value (the difference, a rounding error, is a constant)."""
    return traced + (np.asarray(exact) - _plain(traced))


def _qr_traced(a):
    """(Q, R) of a traced matrix (or stack), reduced; a wide one through its leading square block."""
    m, n = shape(a)[-2:]
    if m >= n:
        return _qr_parts(qr_p(a), m)
    Q, R_left = _qr_parts(qr_p(getitem(a, (Ellipsis, slice(0, m)))), m)
    R_right = matmul(_H(Q), getitem(a, (Ellipsis, slice(m, None))))
    R_right = _with_value(R_right, np.linalg.qr(_plain(a), mode="r")[..., m:])
    return Q, concatenate([R_left, R_right], axis=-1)


@export("linalg.qr")
def qr(a, mode="reduced"):
    """qr(a, mode="reduced") -> (Q, R): ``a = Q R``, ``Q`` with orthonormal columns, ``R`` upper
    triangular (LAPACK's signs, as NumPy's); ``mode='r'`` returns ``R`` only.

    >>> q, r = qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]])
    True
    """
    a = _as_operand(a)
    if not _traced(a):
        return np.linalg.qr(a, mode=mode)
    _at_least_2d(a, "qr")
    m, n = shape(a)[-2:]
    if mode not in ("reduced", "complete", "r") or (mode == "complete" and m > n):
        what = ("the extra columns of Q in mode='complete' of a tall matrix are a basis LAPACK picks "
                "inside the orthogonal complement" if mode == "complete"
                else f"mode={mode!r} returns LAPACK's Householder form")
        raise NotImplementedError(f"qr(..., mode={mode!r}) on a traced value: {what}, which has no "
                                  f"derivative rule in duals; use mode='reduced' or mode='r'")
    Q, R = _qr_traced(a)
    return R if mode == "r" else QRResult(Q, R)

# rules derived for real matrices; complex values raise (docs/complex.md)
svd_p.holomorphic = False   # singular values are real
qr_p.holomorphic = False     # R's diagonal is real
