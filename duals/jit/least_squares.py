"""``np.linalg.lstsq`` of dual arrays in @njit code, for a matrix of full rank.

``dx = A⁺(db − dA x) + A⁺A⁺ᵀ dAᵀ r + (I − A⁺A) dAᵀ A⁺ᵀ x`` with ``A⁺`` from one SVD, the
singular values ``ds_i = u_iᵀ dA v_i`` and the residuals ``2 rᵀ(db − dA x)``. At a matrix of
deficient rank the solution jumps: the call raises ``LinAlgError`` (a constant matrix is fine).

>>> import numba, numpy as np, duals
>>> fit = numba.njit(lambda A, b: np.linalg.lstsq(A, b)[0])
>>> A = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
>>> (np.round(duals.jacfwd(fit, argnums=1)(A, np.zeros(3)), 12) + 0.0).tolist()
[[0.833333333333, 0.333333333333, -0.166666666667], [-0.5, 0.0, 0.5]]
"""
import numpy as np
from numba.core import types

from .._overloads import overload, register_jitable
from .linalg import _columns, _float_base, _ours, _refuse
from .parts import is_dual_array, join, lanes_left, lanes_right, minus, plus, split, transposed_lanes


@register_jitable
def truncated_pinv(u, s, vt, rank):
    """The pseudo-inverse of the matrix ``u s vt`` (a thin SVD) from its ``rank`` largest singular
    values, those lstsq keeps: lstsq's solution is this times ``b``, linear in ``b`` for a
    constant matrix."""
    return np.ascontiguousarray(np.dot(vt[:rank].T / s[:rank], np.ascontiguousarray(u[:, :rank].T)))


def lstsq_typer(a, b, rcond=-1.0):
    T = _ours("np.linalg.lstsq", a, b)
    if T is None:
        return None
    if a.ndim != 2 or b.ndim not in (1, 2):
        _refuse(f"np.linalg.lstsq of dual arrays takes a 2-d matrix and a 1-d or 2-d right-hand "
                f"side, got {a.ndim}-d and {b.ndim}-d")
    if not _float_base(T):
        _refuse("np.linalg.lstsq of nested duals (hessian) is not supported in compiled code; "
                "solve the normal equations np.linalg.solve(A.T @ A, A.T @ b) instead")
    vector = b.ndim == 1
    width = T.lanes
    a_moves = is_dual_array(a)

    def impl(a, b, rcond=-1.0):
        ar, da = split(a, T)
        br, db = split(b, T)
        m, n = ar.shape
        b2 = np.ascontiguousarray(br).reshape((m, 1)) if vector else br
        x, res, rank, sv = np.linalg.lstsq(ar, b2, rcond)
        if a_moves and rank < min(m, n):
            raise np.linalg.LinAlgError("duals.jit: np.linalg.lstsq has no derivative at a matrix "
                                        "of deficient rank (the solution jumps there)")
        u, s, vt = np.linalg.svd(ar, full_matrices=False)
        pinv = truncated_pinv(u, s, vt, rank)
        k = x.shape[1]
        lanes = width
        rhs = minus(_columns(db, m, k, lanes), lanes_left(da, x))
        r = b2 - np.dot(ar, x)
        dx = plus(lanes_right(pinv, rhs), _lstsq_matrix_terms(da, ar, pinv, x, r))
        dres = np.zeros((res.shape[0], lanes))
        for c in range(res.shape[0]):  # d |r|² = 2 rᵀ(db − dA x): rᵀ A dx = 0 at the optimum
            for i in range(m):
                dres[c] += 2.0 * r[i, c] * rhs[i, c]
        sv_out = _singular_values(sv, da, u, vt, T)
        if vector:
            return join(x.reshape(n), dx.reshape((n, lanes)), T), join(res, dres, T), rank, sv_out
        return join(x, dx, T), join(res, dres, T), rank, sv_out
    return impl


def _lstsq_matrix_terms(da, ar, pinv, x, r):
    """The terms of lstsq's dx that come from dA besides A⁺ dA x (None when A is constant):
    A⁺A⁺ᵀ dAᵀ r when m > n, (I − A⁺A) dAᵀ A⁺ᵀ x when m < n (each vanishes otherwise)."""


@overload(_lstsq_matrix_terms)
def _ov_lstsq_matrix_terms(da, ar, pinv, x, r):
    if da is None or isinstance(da, types.NoneType):
        return lambda da, ar, pinv, x, r: None

    def impl(da, ar, pinv, x, r):
        m, n = ar.shape
        if m == n:  # A⁺A = I and r = 0: both vanish
            return np.zeros((n, x.shape[1], da.shape[2]))
        dat = transposed_lanes(da)
        pinv_t = np.ascontiguousarray(pinv.T)
        if m > n:
            return lanes_right(pinv, lanes_right(pinv_t, lanes_left(dat, r)))
        w = lanes_left(dat, np.dot(pinv_t, x))
        return minus(w, lanes_right(pinv, lanes_right(ar, w)))
    return impl


def _singular_values(sv, da, u, vt, T):
    """lstsq's singular values: floats for a constant matrix, else duals with ds_i = u_iᵀ dA v_i."""


@overload(_singular_values)
def _ov_singular_values(sv, da, u, vt, T):
    if da is None or isinstance(da, types.NoneType):
        return lambda sv, da, u, vt, T: sv

    def impl(sv, da, u, vt, T):
        weights = lanes_right(np.ascontiguousarray(u.T), da)  # (Uᵀ dA)[i, j, lane]
        ds = np.zeros((sv.shape[0], da.shape[2]))
        for i in range(sv.shape[0]):
            for j in range(vt.shape[1]):
                ds[i] += weights[i, j] * vt[i, j]
        return join(sv, ds, T)
    return impl
