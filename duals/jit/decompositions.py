"""Decompositions of dual arrays in @njit code: ``np.linalg.eigh``, ``eigvalsh``, ``svd``, ``qr``, ``pinv``.

The rules are those of the NumPy path (``duals/ops/spectral.py``, ``duals/ops/decompositions.py``),
computed as in :mod:`.linalg`: Numba's own LAPACK call on the real part for the value (so it is
the plain call's, bit for bit), and every tangent lane at once by a few matrix products with the
lanes as extra columns. With ``C = Vᵀ dS V`` (``dS`` the lower triangle of ``dA`` mirrored, all
that Numba's ``eigh`` reads), ``P = Uᵀ dA V``, ``F`` the inverse gaps:

* ``eigh``: ``dλ = diag(C)``, ``dV = V (F ∘ C)``; ``eigvalsh``: ``diag(C)``;
* ``svd``: ``ds = diag(P)``, ``dU = U (F ∘ (P S + S Pᵀ)) + (dA V − U P) S⁻¹`` (tall),
  ``dV = V (F ∘ (S P + Pᵀ S)) + (dAᵀ U − V Pᵀ) S⁻¹`` (wide);
* ``qr``: ``W = dA R⁻¹``, ``C = Qᵀ W``, ``Ω = L − Lᵀ`` (``L`` the strict lower triangle of ``C``),
  ``dR = (C − Ω) R``, ``dQ = Q Ω + W − Q C``; a wide ``[X Y]`` through ``X`` and ``R_Y = Qᵀ Y``;
* ``pinv`` (``P``): ``−P dA P`` plus ``P Pᵀ dAᵀ (I − A P)`` (tall) or ``(I − P A) dAᵀ Pᵀ P`` (wide).

Policy, as on the NumPy path: at a repeated eigenvalue the eigenvectors, and at a repeated or
zero singular value the singular vectors, have no derivative, and a derivative raises
``LinAlgError`` naming what to do (``eigvalsh`` is differentiated everywhere, in LAPACK's basis);
``svd(a)`` of a matrix whose sides differ by two or more has extra columns (``full_matrices``)
that LAPACK picks freely, so it raises too (``full_matrices=False`` does not); ``qr`` raises at
linearly dependent columns, ``pinv`` at a rank-deficient matrix (``rcond`` as Numba's). The
signs of vectors are LAPACK's. First order only: nested duals (``hessian``) are refused with
what to do. ``np.linalg.eig`` (complex in general) stays refused.

>>> import numba, numpy as np, duals
>>> f = numba.njit(lambda a: np.linalg.eigvalsh(a))
>>> duals.jacfwd(f)(np.diag([1.0, 3.0]))[1].tolist()
[[0.0, 0.0], [0.0, 1.0]]
"""
import numpy as np

from .._overloads import overload, register_jitable
from ..ops import REPEATED_GAP_POWER
from .extras import _real
from .linalg import _ours, _refuse, _square
from .parts import (add_into, join, lanes_left, lanes_right, minus, negated, plus, split,
                    transposed_lanes)

_REPEATED_EIGENVALUE = ("duals.jit: np.linalg.eigh: the eigenvectors have no derivative at a repeated "
                        "eigenvalue, and compiled reverse mode records every eigenvector's, so eigh "
                        "raises here even where the function uses only the eigenvalues or the simple "
                        "eigenvalues' vectors (compiled forward mode, duals.jacfwd, gives the repeated "
                        "ones' vectors NaN tangents and the rest exactly); for the eigenvalues alone "
                        "call np.linalg.eigvalsh, and write a function of the matrix that does not "
                        "depend on the basis (V diag(f(w)) Vᵀ) without eigenvectors (np.trace, "
                        "np.linalg.det, powers of the matrix; for V diag(exp(t w)) Vᵀ a Padé "
                        "matrix exponential, docs/compiled.md)")
_RANK_DEFICIENT = ("duals.jit: np.linalg.svd: the matrix is rank deficient (a singular value is zero to "
                   "working precision): the singular vectors of a zero singular value are not unique, so "
                   "the decomposition has no derivative there; regularize the matrix")
_REPEATED_SINGULAR = ("duals.jit: np.linalg.svd: the singular vectors have no derivative at a repeated "
                      "singular value; use a function that does not depend on the basis chosen inside "
                      "the repeated singular subspace")
_EXTRA_COLUMNS = ("duals.jit: np.linalg.svd(a) of a matrix whose sides differ by two or more: the extra "
                  "columns of U (rows of Vh) are a basis LAPACK picks inside the orthogonal complement of "
                  "the range, so they have no derivative; call np.linalg.svd(a, full_matrices=False)")
_DEPENDENT_COLUMNS = ("duals.jit: np.linalg.qr: the first min(m, n) columns of the matrix are linearly "
                      "dependent (|R[i, i]| zero to working precision): Q is not unique there, so it has "
                      "no derivative; remove or perturb the dependent columns")
_RANK_DEFICIENT_PINV = ("duals.jit: np.linalg.pinv of a rank-deficient matrix has no derivative (the "
                        "pseudo-inverse jumps where the rank changes); regularize "
                        "(np.linalg.solve(a.T @ a + lam * np.eye(n), a.T)) or remove the dependent rows "
                        "or columns")


def _checked(name, a, square=True):
    """The dual type of a call of ours on one matrix (None when it is not ours)."""
    T = _ours(name, a)
    if T is None:
        return None
    if square:
        _square(name, a)
    elif a.ndim != 2:
        _refuse(f"{name} of dual arrays takes one matrix (2-d), got a {a.ndim}-d array; loop over "
                f"the leading axes")
    if T.tag != 1:
        _refuse(f"{name} of nested duals (hessian) is not supported in compiled code; differentiate "
                f"it on the Python path (duals.hessian of a function using duals.numpy)")
    return T


def _eps(T):
    return float(np.finfo(str(T.float)).eps)


# ---------------------------------------------------------------- lane helpers

@register_jitable
def _between(left, dx, right):
    """``left @ dx[..., l] @ right`` for every lane."""
    return lanes_left(lanes_right(np.ascontiguousarray(left), dx), np.ascontiguousarray(right))


@register_jitable
def _diagonal(c):
    """The diagonals of the lanes ``c`` (k, k, L) as (k, L)."""
    out = np.empty((c.shape[0], c.shape[2]), c.dtype)
    for i in range(c.shape[0]):
        out[i] = c[i, i]
    return out


@register_jitable
def _divided(x, s, by_column):
    """``x[i, j, l] / s[j]`` (``by_column``) or ``x[i, j, l] / s[i]``."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            d = s[j] if by_column else s[i]
            for lane in range(x.shape[2]):
                out[i, j, lane] = x[i, j, lane] / d
    return out


@register_jitable
def _weighted(F, c):
    """``F[i, j] c[i, j, l]``."""
    out = np.empty_like(c)
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            for lane in range(c.shape[2]):
                out[i, j, lane] = F[i, j] * c[i, j, lane]
    return out


@register_jitable
def _place(out, row, column, x):
    """``out[row:, column:][:x.shape[0], :x.shape[1]] = x`` for lanes (m, n, L)."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            for lane in range(x.shape[2]):
                out[row + i, column + j, lane] = x[i, j, lane]


# ---------------------------------------------------------------- eigh, eigvalsh

@register_jitable
def _mirrored_lower(da):
    """The change of the matrix that ``eigh`` decomposes: the lower triangle of ``dA``, mirrored."""
    n, _, lanes = da.shape
    s = np.empty_like(da)
    for i in range(n):
        for j in range(n):
            s[i, j] = da[i, j] if i >= j else da[j, i]
    return s


@register_jitable
def _inverse_gaps(w, eps, tied_nan=False):
    """``F_ij = 1 / (λ_j − λ_i)`` off the diagonal, 0 on it; raises at a repeated eigenvalue, or
    with ``tied_nan`` is NaN between tied ones (forward mode: the repeated eigenvalues' vectors get
    NaN tangents, the others keep theirs). The eigenvalues ``w`` may be duals (compiled reverse
    mode's forward over reverse): the gaps are compared on their real parts."""
    n = w.shape[0]
    scale = 1e-300
    for i in range(n):
        scale = max(scale, abs(_real(w[i])))
    tol = eps ** REPEATED_GAP_POWER * scale   # duals.ops.repeated_gap: a split tie is a tie
    F = np.zeros((n, n), w.dtype)
    for i in range(n):
        for j in range(n):
            if i != j:
                if abs(_real(w[j]) - _real(w[i])) <= tol:
                    if not tied_nan:
                        raise np.linalg.LinAlgError(_REPEATED_EIGENVALUE)
                    F[i, j] = np.nan
                else:
                    F[i, j] = 1.0 / (w[j] - w[i])
    return F


def _eigh_typer(a):
    T = _checked("np.linalg.eigh", a)
    if T is None:
        return None
    eps = _eps(T)

    def impl(a):
        ar, da = split(a, T)
        w, v = np.linalg.eigh(ar)
        V = np.ascontiguousarray(v)
        C = _between(V.T, _mirrored_lower(da), V)
        dV = lanes_right(V, _weighted(_inverse_gaps(w, eps, True), C))
        return join(w, _diagonal(C), T), join(V, dV, T)
    return impl


def _eigvalsh_typer(a):
    T = _checked("np.linalg.eigvalsh", a)
    if T is None:
        return None

    def impl(a):
        ar, da = split(a, T)
        w = np.linalg.eigvalsh(ar)  # the plain call's values; eigh's differ in the last bits
        V = np.ascontiguousarray(np.linalg.eigh(ar)[1])
        return join(w, _diagonal(_between(V.T, _mirrored_lower(da), V)), T)
    return impl


# ---------------------------------------------------------------- svd

@register_jitable
def _singular_gaps(s, m, n, eps):
    """``F_ij = 1 / (s_j² − s_i²)`` off the diagonal; raises at a zero or repeated singular value."""
    k = s.shape[0]
    tol = max(m, n) * eps * (s[0] if k else 0.0)
    if k and s[k - 1] <= tol:
        raise np.linalg.LinAlgError(_RANK_DEFICIENT)
    gap = eps ** REPEATED_GAP_POWER * (s[0] if k else 0.0)   # duals.ops.repeated_gap
    F = np.zeros((k, k), s.dtype)
    for i in range(k):
        if i + 1 < k and s[i] - s[i + 1] <= gap:
            raise np.linalg.LinAlgError(_REPEATED_SINGULAR)
        for j in range(k):
            if i != j:
                F[i, j] = 1.0 / (s[j] * s[j] - s[i] * s[i])
    return F


@register_jitable
def _singular_vector_terms(F, P, s, left):
    """``F ∘ (P S + S Pᵀ)`` (left singular vectors) or ``F ∘ (S P + Pᵀ S)`` (right), lane by lane."""
    k, _, lanes = P.shape
    out = np.empty_like(P)
    for i in range(k):
        for j in range(k):
            a, b = (s[j], s[i]) if left else (s[i], s[j])
            for lane in range(lanes):
                out[i, j, lane] = F[i, j] * (P[i, j, lane] * a + b * P[j, i, lane])
    return out


def _svd_typer(a, full_matrices=1):
    T = _checked("np.linalg.svd", a, square=False)
    if T is None:
        return None
    eps = _eps(T)

    def impl(a, full_matrices=1):
        ar, da = split(a, T)
        m, n = ar.shape
        k = min(m, n)
        u, s, vh = np.linalg.svd(ar, full_matrices)
        full = u.shape[1] > k or vh.shape[0] > k
        if full and abs(m - n) >= 2:
            raise np.linalg.LinAlgError(_EXTRA_COLUMNS)
        F = _singular_gaps(s, m, n, eps)
        U = np.ascontiguousarray(u[:, :k])
        V = np.ascontiguousarray(vh[:k, :].T)
        P = _between(U.T, da, V)
        dU = lanes_right(U, _singular_vector_terms(F, P, s, True))
        dV = lanes_right(V, _singular_vector_terms(F, P, s, False))
        lanes = P.shape[2]
        du = np.zeros((m, u.shape[1], lanes), ar.dtype)
        dvh = np.zeros((vh.shape[0], n, lanes), ar.dtype)
        if m > n:
            add_into(dU, _divided(minus(lanes_left(da, V), lanes_right(U, P)), s, True))
            if full:  # the one extra column turns only to stay orthogonal to U
                rest = np.ascontiguousarray(u[:, k:])
                _place(du, 0, k, negated(lanes_right(U, _divided(transposed_lanes(_between(rest.T, da, V)), s, False))))
        if n > m:
            dat = transposed_lanes(da)
            add_into(dV, _divided(minus(lanes_left(dat, U), lanes_right(V, transposed_lanes(P))), s, True))
            if full:
                rest = np.ascontiguousarray(vh[k:, :].T)
                _place(dvh, k, 0, transposed_lanes(negated(lanes_right(V, _divided(_between(U.T, da, rest), s, False)))))
        _place(du, 0, 0, dU)
        _place(dvh, 0, 0, transposed_lanes(dV))
        return join(u, du, T), join(s, _diagonal(P), T), join(vh, dvh, T)
    return impl


# ---------------------------------------------------------------- qr

@register_jitable
def _qr_square_or_tall(q, r, da, m, n, eps):
    """(dQ, dR) of ``A = Q R`` with ``m ≥ n`` (``R`` square, invertible)."""
    k = r.shape[0]
    top = 0.0
    for i in range(k):
        top = max(top, abs(r[i, i]))
    for i in range(k):
        if abs(r[i, i]) <= max(m, n) * eps * top:
            raise np.linalg.LinAlgError(_DEPENDENT_COLUMNS)
    rows, cols, lanes = da.shape
    W = np.empty_like(da)  # dA R⁻¹ by forward substitution (R is upper triangular)
    for i in range(rows):
        for j in range(cols):
            for lane in range(lanes):
                acc = da[i, j, lane]
                for p in range(j):
                    acc -= W[i, p, lane] * r[p, j]
                W[i, j, lane] = acc / r[j, j]
    C = lanes_right(np.ascontiguousarray(q.T), W)
    omega = np.zeros_like(C)
    for i in range(k):
        for j in range(i):
            for lane in range(lanes):
                omega[i, j, lane] = C[i, j, lane]
                omega[j, i, lane] = -C[i, j, lane]
    return plus(lanes_right(q, minus(omega, C)), W), lanes_left(minus(C, omega), r)


def _qr_typer(a):
    T = _checked("np.linalg.qr", a, square=False)
    if T is None:
        return None
    eps = _eps(T)

    def impl(a):
        ar, da = split(a, T)
        m, n = ar.shape
        q, r = np.linalg.qr(ar)
        Q, R = np.ascontiguousarray(q), np.ascontiguousarray(r)
        if m >= n:
            dq, dr = _qr_square_or_tall(Q, R, da, m, n, eps)
            return join(Q, dq, T), join(R, dr, T)
        # a = [X Y]: Q R_X = X and R_Y = Qᵀ Y, so dR_Y = dQᵀ Y + Qᵀ dY
        dq, dr_x = _qr_square_or_tall(Q, np.ascontiguousarray(R[:, :m]),
                                      np.ascontiguousarray(da[:, :m]), m, m, eps)
        dr = np.empty((m, n, dq.shape[2]), ar.dtype)
        _place(dr, 0, 0, dr_x)
        _place(dr, 0, m, plus(lanes_left(transposed_lanes(dq), np.ascontiguousarray(ar[:, m:])),
                              lanes_right(np.ascontiguousarray(Q.T), np.ascontiguousarray(da[:, m:]))))
        return join(Q, dq, T), join(R, dr, T)
    return impl


# ---------------------------------------------------------------- pinv

def _pinv_typer(a, rcond=1e-15):
    T = _checked("np.linalg.pinv", a, square=False)
    if T is None:
        return None

    def impl(a, rcond=1e-15):
        ar, da = split(a, T)
        m, n = ar.shape
        P = np.ascontiguousarray(np.linalg.pinv(ar, rcond))
        s = np.linalg.svd(ar, False)[1]
        if s.shape[0] and s[s.shape[0] - 1] <= rcond * s[0]:
            raise np.linalg.LinAlgError(_RANK_DEFICIENT_PINV)
        dP = negated(lanes_right(P, lanes_left(da, P)))
        if m > n:
            dat = transposed_lanes(da)
            add_into(dP, lanes_right(np.dot(P, P.T), minus(dat, lanes_left(dat, np.dot(ar, P)))))
        elif m < n:
            dat = transposed_lanes(da)
            add_into(dP, lanes_left(minus(dat, lanes_right(np.dot(P, ar), dat)), np.dot(P.T, P)))
        return join(P, dP, T)
    return impl


def install():
    overload(np.linalg.eigh, target="cpu")(_eigh_typer)
    overload(np.linalg.eigvalsh, target="cpu")(_eigvalsh_typer)
    overload(np.linalg.svd, target="cpu")(_svd_typer)
    overload(np.linalg.qr, target="cpu")(_qr_typer)
    overload(np.linalg.pinv, target="cpu")(_pinv_typer)
