"""Decompositions of adjoint arrays (compiled reverse mode): ``np.linalg.eigh``, ``eigvalsh``, ``svd``, ``qr``, ``pinv``, ``lstsq``.

Each function computes its value as compiled forward mode does, by Numba's own LAPACK call on the
real parts (so it is the plain call's, bit for bit), and records its derivative as a linear map
of the input's tape nodes whose coefficients are the factors just computed: the formulas of
:mod:`.decompositions` (``lstsq``'s of :mod:`.linalg`), each matrix product with a differential
operand written as a loop of one-node steps ``t + c·x`` (:mod:`.differentials`). With ``S`` the lower triangle of ``dA``
mirrored (what LAPACK reads), ``P = Uᵀ dA V`` and ``F`` the inverse gaps:

* ``eigh``: ``C = Vᵀ S V``, ``dλ = diag(C)``, ``dV = V (F ∘ C)``; ``eigvalsh``: ``diag(Vᵀ S V)``;
* ``svd``: ``ds = diag(P)`` and ``dU``, ``dVᵀ`` as in :mod:`.decompositions`;
  ``svd(a, compute_uv=False)``: ``ds = diag(P)`` alone, 0 at a zero singular value (the NumPy
  path's policy for the singular values alone);
* ``qr``: ``W = dA R⁻¹`` (substitution), ``C = Qᵀ W``, ``dQ = W − Q M``, ``dR = M R`` with ``M``
  the upper triangle of ``C + Cᵀ`` (its diagonal once); ``pinv`` and ``lstsq`` likewise.

A call records ``O(n³)`` operations on the tape for ``n × n`` matrices, as a product does (about
``3 n³`` for ``eigh``, ``4 n³`` for ``svd``, ``2 n³`` for ``qr`` and ``pinv``, ``n³ / 2`` for
``eigvalsh``), and the sweep costs as much: meant for the small matrices of simulation code; for
large dense decompositions use forward mode (``duals.jacfwd``). Forward over reverse
(``duals.hessian``, ``hvp`` of a dispatcher) works unchanged: the real parts are then dual
arrays, the value comes from forward mode's rule and the coefficients carry their own
derivatives.

Policy, as in compiled forward mode and with its messages: ``LinAlgError`` at a repeated
eigenvalue (``eigh``), a zero or repeated singular value (``svd``), two or more extra columns of
``svd(a)`` (use ``full_matrices=False``), linearly dependent columns (``qr``) and a
rank-deficient matrix (``pinv``, ``lstsq``); ``eigvalsh`` and the singular values alone are
differentiated everywhere (in LAPACK's basis) to first order. Second order of ``eigvalsh``, of
the singular values and of ``lstsq``'s ``s`` needs them distinct.

>>> import numba, numpy as np, duals
>>> f = numba.njit(lambda a: np.linalg.eigvalsh(a)[1])
>>> duals.grad(f)(np.diag([1.0, 3.0])).tolist()
[[0.0, 0.0], [0.0, 1.0]]
"""
import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from ..ops import REPEATED_GAP_POWER
from ._types import DualType
from .adjoint_arrays import _level
from .decompositions import (_DEPENDENT_COLUMNS, _EXTRA_COLUMNS, _RANK_DEFICIENT, _RANK_DEFICIENT_PINV,
                             _REPEATED_SINGULAR, _eps, _inverse_gaps)
from .differentials import (_any_adjoint, _attach, _contiguous, _copy_rhs, _diagonal, _identity_minus, _left,
                            _minus, _negated, _pair, _right, _scaled, _step, _values, _zeros)
from .errors import MARK
from .extras import _real
from .least_squares import truncated_pinv
from .parts import real_values

__all__ = []

_LSTSQ_RANK = ("duals.jit: np.linalg.lstsq has no derivative at a matrix of deficient rank (the "
               "solution jumps there)")
_EIGVALSH_SECOND_ORDER = ("duals.jit: np.linalg.eigvalsh under forward over reverse (duals.hessian, hvp): "
                          "a second derivative of the eigenvalues at a repeated eigenvalue (closer "
                          "than 4e-11 relative) needs the eigenvectors' derivative, which does not "
                          "exist there, so it raises even for a function symmetric in them (whose "
                          "Hessian exists); differentiate to first order (duals.grad), write the "
                          "function through invariants of the matrix (np.trace(a) for the sum of "
                          "the eigenvalues, np.sum(a * a) for the sum of their squares, "
                          "np.linalg.det(a) for their product), or take the Hessian off the tie")
_VALUES_SECOND_ORDER = ("duals.jit: np.linalg.svd(a, compute_uv=False) under forward over reverse "
                        "(duals.hessian, hvp): the singular values have no second derivative at a "
                        "repeated or zero singular value; differentiate to first order (duals.grad), "
                        "or regularize the matrix")
_LSTSQ_SECOND_ORDER = ("duals.jit: np.linalg.lstsq under forward over reverse (duals.hessian, hvp): its "
                       "singular values s have no second derivative at a repeated singular value, and "
                       "lstsq returns them differentiated whether or not they are used; solve the "
                       "normal equations np.linalg.solve(A.T @ A, A.T @ b) instead")


def _matrix(name, a, *others):
    """The adjoint type of a call of ours (an adjoint array among the operands), else None."""
    T = _level(a, *others)
    if T is None or not all(isinstance(t, types.Array) for t in (a,) + others):
        return None
    if a.ndim != 2:
        raise errors.TypingError(f"{MARK}{name} of adjoint arrays (compiled reverse mode) takes one "
                                 f"matrix (2-d), got a {a.ndim}-d array; loop over the leading axes")
    return T


def _second_order(T):
    """Whether the real parts are duals (forward over reverse)."""
    return isinstance(T.base, DualType)


# ---------------------------------------------------------------- eigh, eigvalsh

@register_jitable
def _mirrored_lower(a):
    """The differentials of the matrix ``eigh`` decomposes: the lower triangle of ``a``, mirrored."""
    n = a.shape[0]
    s = np.empty((n, n), a.dtype)
    for i in range(n):
        for j in range(n):
            s[i, j] = a[i, j] if i >= j else a[j, i]
    return s


@register_jitable
def _rayleigh(V, a):
    """``dλ_i = v_iᵀ S v_i`` for every column of ``V``, read from the lower triangle of ``a``:
    ``n (n + 1) / 2`` nodes per eigenvalue."""
    n = V.shape[0]
    out = np.zeros(V.shape[1], a.dtype)
    for i in range(V.shape[1]):
        t = out[i]
        for j in range(n):
            t = _step(t, V[j, i] * V[j, i], a[j, j])
            for k in range(j):
                t = _step(t, 2.0 * V[j, i] * V[k, i], a[j, k])
        out[i] = t
    return out


def _eigh_typer(a):
    T = _matrix("np.linalg.eigh", a)
    if T is None:
        return None
    eps = _eps(T)

    def impl(a):
        w, v = np.linalg.eigh(_values(a))
        V = _contiguous(v)
        F = _inverse_gaps(w, eps)
        C = _left(V.T, _right(_mirrored_lower(a), V, _zeros(V.shape[0], V.shape[1], a)),
                  _zeros(V.shape[1], V.shape[1], a))
        G = np.empty_like(C)
        for i in range(C.shape[0]):
            for j in range(C.shape[1]):
                G[i, j] = _scaled(F[i, j], C[i, j])
        dV = _left(V, G, _zeros(V.shape[0], V.shape[1], a))
        return _attach(w, _diagonal(C)), _attach(V, dV)
    return impl


def _eigvalsh_typer(a):
    T = _matrix("np.linalg.eigvalsh", a)
    if T is None:
        return None
    second = _second_order(T)
    eps = _eps(T)

    def impl(a):
        ar = _values(a)
        w = np.linalg.eigvalsh(ar)  # the plain call's values; eigh's differ in the last bits
        if second and not _distinct(real_values(w), eps):   # eigh of duals needs them distinct
            raise np.linalg.LinAlgError(_EIGVALSH_SECOND_ORDER)
        V = _contiguous(np.linalg.eigh(ar)[1])
        return _attach(w, _rayleigh(V, a))
    return impl


@register_jitable
def _distinct(w, eps):
    """Whether the ascending floats ``w`` are distinct to working precision (as
    :func:`_inverse_gaps` counts it)."""
    n = w.shape[0]
    scale = 1e-300
    for i in range(n):
        scale = max(scale, abs(w[i]))
    for i in range(n - 1):
        if abs(w[i + 1] - w[i]) <= eps ** REPEATED_GAP_POWER * scale:   # duals.ops.repeated_gap
            return False
    return True


# ---------------------------------------------------------------- svd

@register_jitable
def _singular_gaps(s, m, n, eps):
    """``F_ij = 1 / (s_j² − s_i²)`` off the diagonal; raises at a zero or repeated singular value."""
    k = s.shape[0]
    tol = max(m, n) * eps * (_real(s[0]) if k else 0.0)
    if k and _real(s[k - 1]) <= tol:
        raise np.linalg.LinAlgError(_RANK_DEFICIENT)
    gap = eps ** REPEATED_GAP_POWER * (_real(s[0]) if k else 0.0)   # duals.ops.repeated_gap
    F = np.zeros((k, k), s.dtype)
    for i in range(k):
        if i + 1 < k and _real(s[i]) - _real(s[i + 1]) <= gap:
            raise np.linalg.LinAlgError(_REPEATED_SINGULAR)
        for j in range(k):
            if i != j:
                F[i, j] = 1.0 / (s[j] * s[j] - s[i] * s[i])
    return F


@register_jitable
def _svd_recorded(a, u, s, vh, eps):
    """(dU, ds, dVh) of ``a = U diag(s) Vh`` (LAPACK's factors, ``full_matrices`` either way)."""
    m, n = a.shape
    k = s.shape[0]
    full = u.shape[1] > k or vh.shape[0] > k
    if full and abs(m - n) >= 2:
        raise np.linalg.LinAlgError(_EXTRA_COLUMNS)
    F = _singular_gaps(s, m, n, eps)
    U = _contiguous(u[:, :k])
    V = _contiguous(vh[:k, :].T)
    X = _right(a, V, _zeros(m, k, a))                 # dA V
    P = _left(U.T, X, _zeros(k, k, a))                # Uᵀ dA V
    # dU = U (F ∘ (P S + S Pᵀ) − [m > n] P S⁻¹) + [m > n] dA V S⁻¹, and dV the same on the other side
    GU = np.empty_like(P)
    GV = np.empty_like(P)
    for i in range(k):
        for j in range(k):
            cu = F[i, j] * s[j] - (1.0 / s[j] if m > n else 0.0)
            GU[i, j] = _pair(cu, P[i, j], F[i, j] * s[i], P[j, i])
            cv = F[i, j] * s[j] - (1.0 / s[j] if n > m else 0.0)
            GV[i, j] = _pair(F[i, j] * s[i], P[i, j], cv, P[j, i])
    du = _zeros(m, u.shape[1], a)
    dV = _zeros(n, k, a)
    dvh = _zeros(vh.shape[0], n, a)
    if m > n:
        for r in range(m):
            for j in range(k):
                du[r, j] = _scaled(1.0 / s[j], X[r, j])
        if full:  # the one extra column of U turns only to stay orthogonal to U: −U S⁻¹ Vᵀ dAᵀ rest
            Z = _right(X.T, _contiguous(u[:, k:]), _zeros(k, m - k, a))    # Vᵀ dAᵀ rest
            _left(_scaled_columns(U, s, -1.0), Z, du[:, k:])
    if n > m:
        Y = _right(a.T, U, _zeros(n, k, a))                                 # dAᵀ U
        for r in range(n):
            for j in range(k):
                dV[r, j] = _scaled(1.0 / s[j], Y[r, j])
        if full:  # the one extra row of Vh, likewise: −(V S⁻¹ Uᵀ dA rest)ᵀ
            Z = _right(Y.T, _contiguous(vh[k:, :].T), _zeros(k, n - k, a))  # Uᵀ dA rest
            _left(_scaled_columns(V, s, -1.0), Z, dvh[k:, :].T)
    _left(U, GU, du[:, :k])
    _left(V, GV, dV)
    for i in range(k):
        for r in range(n):
            dvh[i, r] = dV[r, i]
    return du, _diagonal(P), dvh


@register_jitable
def _scaled_columns(U, s, sign):
    """``sign · U S⁻¹`` (column ``j`` of ``U`` over ``s_j``)."""
    out = np.empty_like(U)
    for r in range(U.shape[0]):
        for j in range(U.shape[1]):
            out[r, j] = sign * U[r, j] / s[j]
    return out


@register_jitable
def _singular_values_recorded(a, u, s, vh, m, n, eps):
    """``ds_i = u_iᵀ dA v_i``, 0 at a zero singular value: ``m n`` nodes per value."""
    k = s.shape[0]
    tol = max(m, n) * eps * (_real(s[0]) if k else 0.0)
    out = np.zeros(k, a.dtype)
    for i in range(k):
        if _real(s[i]) > tol:
            t = out[i]
            for r in range(m):
                for c in range(n):
                    t = _step(t, u[r, i] * vh[i, c], a[r, c])
            out[i] = t
    return out


def _constant_flag(flag):
    """The value of a flag argument: its default (not given), a literal's value, or None when it
    is not a constant."""
    if isinstance(flag, (bool, int)):
        return flag
    if isinstance(flag, types.Omitted):
        return flag.value
    return getattr(flag, "literal_value", None)


def _svd_typer(a, full_matrices=1, compute_uv=1):
    T = _matrix("np.linalg.svd", a)
    if T is None:
        return None
    eps = _eps(T)
    uv = _constant_flag(compute_uv)
    if uv is None:
        raise errors.TypingError(f"{MARK}np.linalg.svd of adjoint arrays: compute_uv must be a "
                                 f"constant (True or False), since it decides what is returned")
    if not uv:
        second = _second_order(T)

        def values(a, full_matrices=1, compute_uv=1):
            ar = _values(a)
            m, n = ar.shape
            if second and not _distinct_nonzero(real_values(ar), m, n, eps):
                raise np.linalg.LinAlgError(_VALUES_SECOND_ORDER)   # the factors of duals need it
            u, s, vh = np.linalg.svd(ar, False)   # the plain call's values (see singular_values)
            return _attach(s, _singular_values_recorded(a, u, s, vh, m, n, eps))
        return values

    def impl(a, full_matrices=1, compute_uv=1):
        u, s, vh = np.linalg.svd(_values(a), full_matrices != 0)
        du, ds, dvh = _svd_recorded(a, u, s, vh, eps)
        return _attach(u, du), _attach(s, ds), _attach(vh, dvh)
    return impl


@register_jitable
def _distinct_nonzero(ar, m, n, eps):
    """Whether the singular values of the float matrix ``ar`` are distinct and nonzero to
    working precision (as :func:`_singular_gaps` counts it)."""
    s = np.linalg.svd(ar, False)[1]
    k = s.shape[0]
    tol = max(m, n) * eps * (s[0] if k else 0.0)
    gap = eps ** REPEATED_GAP_POWER * (s[0] if k else 0.0)   # duals.ops.repeated_gap
    for i in range(k):
        if s[i] <= tol or (i + 1 < k and s[i] - s[i + 1] <= gap):
            return False
    return True


# ---------------------------------------------------------------- qr

@register_jitable
def _qr_square_or_tall(Q, R, a, m, n, eps):
    """(dQ, dR) of ``a = Q R`` with ``R`` square (``k × k``) and invertible; ``a`` the first ``k``
    columns' differentials."""
    k = R.shape[0]
    top = 0.0
    for i in range(k):
        top = max(top, abs(_real(R[i, i])))
    for i in range(k):
        if abs(_real(R[i, i])) <= max(m, n) * eps * top:
            raise np.linalg.LinAlgError(_DEPENDENT_COLUMNS)
    rows = a.shape[0]
    W = _zeros(rows, k, a)       # W = dA R⁻¹, row by row: W[i, j] R[j, j] = dA[i, j] − Σ_{l<j} W[i, l] R[l, j]
    for i in range(rows):
        for j in range(k):
            t = _scaled(1.0 / R[j, j], a[i, j])
            for l in range(j):
                t = _step(t, -R[l, j] / R[j, j], W[i, l])
            W[i, j] = t
    C = _left(Q.T, W, _zeros(k, k, a))
    M = _zeros(k, k, a)          # C − Ω: the upper triangle of C + Cᵀ, its diagonal once
    for i in range(k):
        M[i, i] = C[i, i]
        for j in range(i + 1, k):
            M[i, j] = _pair(1.0, C[i, j], 1.0, C[j, i])
    dQ = np.empty_like(W)        # dQ = W − Q M
    for p in range(rows):
        for j in range(k):
            t = W[p, j]
            for l in range(j + 1):
                t = _step(t, -Q[p, l], M[l, j])
            dQ[p, j] = t
    dR = _zeros(k, k, a)         # dR = M R, upper triangular
    for i in range(k):
        for j in range(i, k):
            t = dR[i, j]
            for l in range(i, j + 1):
                t = _step(t, R[l, j], M[i, l])
            dR[i, j] = t
    return dQ, dR


def _qr_typer(a):
    T = _matrix("np.linalg.qr", a)
    if T is None:
        return None
    eps = _eps(T)

    def impl(a):
        ar = _values(a)
        m, n = ar.shape
        q, r = np.linalg.qr(ar)
        Q, R = _contiguous(q), _contiguous(r)
        if m >= n:
            dq, dr = _qr_square_or_tall(Q, R, a, m, n, eps)
            return _attach(Q, dq), _attach(R, dr)
        # a = [X Y]: Q R_X = X and R_Y = Qᵀ Y, so dR_Y = dQᵀ Y + Qᵀ dY (X judged as the square
        # matrix it is, at m eps, as compiled forward mode and the Python path judge it)
        dq, dr_x = _qr_square_or_tall(Q, _contiguous(R[:, :m]), a[:, :m], m, m, eps)
        dr = _zeros(m, n, a)
        dr[:, :m] = dr_x
        for i in range(m):
            for c in range(m, n):
                t = dr[i, c]
                for p in range(m):
                    t = _step(_step(t, ar[p, c], dq[p, i]), Q[p, i], a[p, c])
                dr[i, c] = t
        return _attach(Q, dq), _attach(R, dr)
    return impl


# ---------------------------------------------------------------- pinv

def _pinv_typer(a, rcond=1e-15):
    T = _matrix("np.linalg.pinv", a)
    if T is None:
        return None

    def impl(a, rcond=1e-15):
        ar = _values(a)
        m, n = ar.shape
        P = _contiguous(np.linalg.pinv(ar, rcond))
        s = np.linalg.svd(real_values(ar), False)[1]
        if s.shape[0] and s[s.shape[0] - 1] <= rcond * s[0]:
            raise np.linalg.LinAlgError(_RANK_DEFICIENT_PINV)
        X = _right(a, P, _zeros(m, m, a))                      # dA P
        dP = _left(_negated(P), X, _zeros(n, m, a))            # −P dA P
        if m > n:    # + P Pᵀ dAᵀ (I − A P)
            Z = _right(a.T, _identity_minus(np.dot(ar, P)), _zeros(n, m, a))
            _left(np.dot(P, _contiguous(P.T)), Z, dP)
        elif m < n:  # + (I − P A) dAᵀ Pᵀ P
            Z = _right(a.T, np.dot(_contiguous(P.T), P), _zeros(n, m, a))
            _left(_identity_minus(np.dot(P, ar)), Z, dP)
        return _attach(P, dP)
    return impl


# ---------------------------------------------------------------- lstsq

def _lstsq_typer(a, b, rcond=-1.0):
    T = _matrix("np.linalg.lstsq", a, b)
    if T is None:
        return None
    if b.ndim not in (1, 2):
        raise errors.TypingError(f"{MARK}np.linalg.lstsq of adjoint arrays takes a 1-d or 2-d "
                                 f"right-hand side, got {b.ndim}-d")
    vector = b.ndim == 1
    a_moves = _level(a) is not None
    second = _second_order(T)
    eps = _eps(T)

    def impl(a, b, rcond=-1.0):
        ar = _values(a)
        br = _values(b)
        m, n = ar.shape
        x, res, rank, sv = np.linalg.lstsq(ar, br, rcond)
        if a_moves and rank < min(m, n):
            raise np.linalg.LinAlgError(_LSTSQ_RANK)
        if a_moves and second and not _distinct_nonzero(real_values(ar), m, n, eps):
            raise np.linalg.LinAlgError(_LSTSQ_SECOND_ORDER)   # the factors of duals need it
        k = 1 if vector else br.shape[1]
        x2 = _contiguous(x).reshape((n, k))
        b2 = _contiguous(br).reshape((m, k))
        like = _any_adjoint(a, b)
        rhs = _zeros(m, k, like)        # db − dA x
        _copy_rhs(b, rhs)
        r = _minus(b2, np.dot(ar, x2))
        u, s, vt = np.linalg.svd(ar, full_matrices=False)
        pinv = truncated_pinv(u, s, vt, rank)
        dx = _zeros(n, k, like)
        if a_moves:
            _right(a, _negated(x2), rhs)
            if m > n:    # + A⁺A⁺ᵀ dAᵀ r
                Z = _right(a.T, r, _zeros(n, k, like))
                _left(np.dot(pinv, _contiguous(pinv.T)), Z, dx)
            elif m < n:  # + (I − A⁺A) dAᵀ A⁺ᵀ x
                Z = _right(a.T, np.dot(_contiguous(pinv.T), x2), _zeros(n, k, like))
                _left(_identity_minus(np.dot(pinv, ar)), Z, dx)
        _left(pinv, rhs, dx)
        dres = np.zeros(res.shape[0], like.dtype)   # d |r|² = 2 rᵀ(db − dA x)
        for c in range(res.shape[0]):
            t = dres[c]
            for i in range(m):
                t = _step(t, 2.0 * r[i, c], rhs[i, c])
            dres[c] = t
        values = _lstsq_singular_values(a, sv, ar, eps)
        return _attach(x, dx.reshape(x.shape)), _attach(res, dres), rank, values
    return impl


def _lstsq_singular_values(a, sv, ar, eps):
    """lstsq's singular values: plain for a constant matrix, else ``ds_i = u_iᵀ dA v_i``."""


@overload(_lstsq_singular_values)
def _ov_lstsq_singular_values(a, sv, ar, eps):
    if _level(a) is None:
        return lambda a, sv, ar, eps: sv

    def impl(a, sv, ar, eps):
        m, n = ar.shape
        u, s, vh = np.linalg.svd(ar, False)
        return _attach(sv, _singular_values_recorded(a, u, s, vh, m, n, eps))
    return impl


def _install():
    overload(np.linalg.eigh, target="cpu")(_eigh_typer)
    overload(np.linalg.eigvalsh, target="cpu")(_eigvalsh_typer)
    overload(np.linalg.svd, target="cpu", prefer_literal=True)(_svd_typer)
    overload(np.linalg.qr, target="cpu")(_qr_typer)
    overload(np.linalg.pinv, target="cpu")(_pinv_typer)
    overload(np.linalg.lstsq, target="cpu")(_lstsq_typer)


_install()
