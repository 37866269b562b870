"""Linear algebra of dual arrays in @njit code: ``A @ x``, ``np.dot``, ``np.linalg.solve`` and friends.

Each rule splits its dual operands into real parts and tangent lanes (:mod:`.parts`), calls
Numba's own ``np.dot`` / ``np.linalg`` on the real parts, and gets every lane at once from
a few more BLAS or LAPACK calls, the lanes travelling as extra columns; for nested duals
(``hessian``) the real parts are duals of the level below and the same rules apply to them.

* ``A @ B``, ``np.dot`` and ``np.matmul`` (1-d and 2-d operands, duals and floats mixed):
  ``dC = dA B + A dB``, two matrix products with the lanes folded into rows or columns
  (``np.matmul`` of float arrays too: Numba has none); small products of first-order duals
  take their lanes from scalar dual arithmetic (:mod:`.small_products`);
* ``solve(A, B)``: ``X = A⁻¹B``, ``dX = A⁻¹(dB − dA X)``, the lanes as right-hand sides of one
  more solve (a single solve of ``[B | dB]`` when ``A`` is constant);
* ``inv``: ``−A⁻¹ dA A⁻¹``; ``det``: ``det(A) tr(A⁻¹ dA)``; ``slogdet``: ``tr(A⁻¹ dA)``;
* ``norm`` (``ord=None``: the vector 2-norm, the Frobenius norm of a matrix; also the vector
  orders 1, 2, ±inf and p, and the matrix orders ±1, ±inf);
* ``cholesky``: ``dL = L Φ(L⁻¹ dS L⁻ᵀ)``, with ``dS`` the lower triangle of ``dA`` mirrored,
  since Numba (as NumPy) reads only the lower triangle;
* ``lstsq`` of a full-rank matrix: :mod:`.least_squares`;
* ``eigh``, ``eigvalsh``, ``svd``, ``qr`` and ``pinv``: :mod:`.decompositions`.

Policy (as on the NumPy path): a derivative at a singular matrix raises ``LinAlgError``
(``det`` and ``slogdet`` say so; ``solve`` and ``inv`` fail in LAPACK as for floats),
``cholesky`` raises it unless positive definite, ``norm`` has derivative 0 at the zero vector
and its max/min based orders split ties evenly. ``lstsq`` raises ``LinAlgError`` for a matrix
of deficient rank (its solution jumps there), and the derivative of a repeated singular value
is the one in the SVD's basis, exact for functions symmetric in the repeated values.

>>> import numba, numpy as np, duals
>>> solve = numba.njit(lambda A, b: np.linalg.solve(A, b))
>>> duals.jacfwd(solve, argnums=1)(np.diag([2.0, 4.0]), np.ones(2)).tolist()
[[0.5, 0.0], [0.0, 0.25]]
"""
import operator

import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from .errors import MARK
from .small_products import is_small, real_parts, small_inner, small_product
from .parts import (at_level, is_dual_array, join, join_scalar, lanes_left, lanes_right,
                    level_of, minus, negated, plus, split, transposed_lanes)


@register_jitable
def _solve(a, b):
    """np.linalg.solve, C-ordered (LAPACK's result is Fortran-ordered, which reshape reads
    in the wrong order)."""
    return np.ascontiguousarray(np.linalg.solve(a, b))


@register_jitable
def _solve_lanes(a, b, values=0):
    """:func:`_solve` of tangent lanes (after ``values`` columns of values): lanes holding inf or
    NaN (an infinite derivative upstream: sqrt at 0) come back NaN, as the NumPy path's and reverse
    mode's derivatives do, where Numba's check would refuse the whole call with 'Array must not
    contain infs or NaNs' (a value column is refused as the plain call refuses it)."""
    if np.all(np.isfinite(b)):
        return _solve(a, b)
    columns = b.reshape((b.shape[0], -1))
    finite = columns.copy()
    bad = np.zeros(columns.shape[1], np.bool_)
    for j in range(columns.shape[1]):
        for i in range(columns.shape[0]):
            if not np.isfinite(columns[i, j]):
                bad[j] = True
        if bad[j]:
            if j < values:
                return _solve(a, b)
            finite[:, j] = 0.0
    x = _solve(a, finite)
    for j in range(columns.shape[1]):
        if bad[j]:
            x[:, j] = np.nan
    return x.reshape(b.shape)


def _ours(name, *args):
    """The dual type of the call when it is ours (a dual array among ``args``), else None."""
    if not any(is_dual_array(a) for a in args):
        return None
    if not all(isinstance(a, types.Array) for a in args):
        return None
    return level_of(name, *args)


def _refuse(message):
    raise errors.TypingError(MARK + message)


def _float_base(T):
    return T.tag == 1


# ---------------------------------------------------------------- products

def _matmul_typer(name):
    def ov(a, b):
        T = _ours(name, a, b)
        if T is None:
            return None
        if a.ndim not in (1, 2) or b.ndim not in (1, 2):
            _refuse(f"{name} of dual arrays supports 1-d and 2-d operands, got {a.ndim}-d and "
                    f"{b.ndim}-d; loop over the leading axes")
        small = _float_base(T)   # small products of first-order duals: lanes by scalar arithmetic
        if a.ndim == 2 and b.ndim == 2:
            def matrices(a, b):
                if small and is_small(a, b):
                    return small_product(a, b, np.dot(real_parts(a), real_parts(b)), T)
                c, dc = _product(a, b, T)
                return join(c, dc, T)
            return matrices
        row, column = a.ndim == 1, b.ndim == 1
        if row and column:
            def inner(a, b):   # (a strided view too: a column f[:, j])
                a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
                a2, b2 = a.reshape((1, a.shape[0])), b.reshape((b.shape[0], 1))
                if small and is_small(a2, b2):
                    return small_inner(a, b)
                c, dc = _product(a2, b2, T)
                return join_scalar(c[0, 0], dc[0, 0], T)
            return inner

        def vectors(a, b):  # a vector is a matrix of one row (left) or one column (right)
            a2 = np.ascontiguousarray(a).reshape((1, a.shape[0]) if row else (a.shape[0], a.shape[-1]))
            b2 = np.ascontiguousarray(b).reshape((b.shape[0], 1) if column else (b.shape[0], b.shape[-1]))
            if small and is_small(a2, b2):
                c = np.dot(real_parts(a), real_parts(b))   # as the plain call: gemv, not gemm
                return small_product(a2, b2, c.reshape((a2.shape[0], b2.shape[1])), T).reshape(c.size)
            c, dc = _product(a2, b2, T)
            n = c.size
            return join(c.reshape(n), dc.reshape((n, dc.shape[2])), T)
        return vectors
    return ov


def _product(a, b, T):
    """(real part, lanes) of the product of two matrices, one of them duals of ``T``'s level."""


@overload(_product)
def _ov_product(a, b, T):
    def impl(a, b, T):
        ar, da = split(a, T)
        br, db = split(b, T)
        if ar.shape[1] != br.shape[0]:
            raise ValueError("duals.jit: matrix product of dual arrays with mismatched inner "
                             "dimensions:", ar.shape[1], br.shape[0])
        return np.dot(ar, br), plus(lanes_left(da, br), lanes_right(ar, db))
    return impl


# ---------------------------------------------------------------- solve, inv, det, slogdet

def _square(name, a):
    if a.ndim != 2:
        _refuse(f"{name} of dual arrays supports one square matrix (2-d), got a {a.ndim}-d array; "
                f"loop over the leading axes")


def _solve_typer(a, b):
    T = _ours("np.linalg.solve", a, b)
    if T is None:
        return None
    _square("np.linalg.solve", a)
    if b.ndim not in (1, 2):
        _refuse(f"np.linalg.solve of dual arrays takes a 1-d or 2-d right-hand side, got {b.ndim}-d")
    vector = b.ndim == 1
    if not at_level(a, T):
        base = T.base

        def impl(a, b):  # a constant matrix: one solve for the value and every lane
            br, db = split(b, T)
            n = br.shape[0]
            k = 1 if vector else br.size // max(n, 1)
            lanes = db.shape[-1]
            columns = np.empty((n, k * (1 + lanes)), base)
            columns[:, :k] = br.reshape((n, k))
            columns[:, k:] = db.reshape((n, k * lanes))
            y = _solve_lanes(a, columns, k)
            x = np.ascontiguousarray(y[:, :k])
            dx = np.ascontiguousarray(y[:, k:]).reshape((n, k, lanes))
            if vector:
                return join(x.reshape(n), dx.reshape((n, lanes)), T)
            return join(x, dx, T)
        return impl

    def impl(a, b):
        ar, da = split(a, T)
        br, db = split(b, T)
        n = br.shape[0]
        b2 = br.reshape((n, 1)) if vector else br
        x = _solve(ar, b2)
        lanes = da.shape[-1]
        k = x.shape[1]
        rhs = minus(_columns(db, n, k, lanes), lanes_left(da, x))
        dx = _solve_lanes(ar, rhs.reshape((n, k * lanes))).reshape((n, k, lanes))
        if vector:
            return join(x.reshape(n), dx.reshape((n, lanes)), T)
        return join(x, dx, T)
    return impl


def _columns(db, n, k, lanes):
    """The lanes ``db`` of a right-hand side as (n, k, lanes), or None for None."""


@overload(_columns)
def _ov_columns(db, n, k, lanes):
    if db is None or isinstance(db, types.NoneType):
        return lambda db, n, k, lanes: None
    return lambda db, n, k, lanes: db.reshape((n, k, lanes))


def _inv_typer(a):
    T = _ours("np.linalg.inv", a)
    if T is None:
        return None
    _square("np.linalg.inv", a)

    def impl(a):
        ar, da = split(a, T)
        ai = np.linalg.inv(ar)
        return join(ai, negated(lanes_left(lanes_right(ai, da), ai)), T)
    return impl


def _trace_of_solve(ar, da):
    """tr(A⁻¹ dA) for every lane: one solve with the lanes as columns."""


@overload(_trace_of_solve)
def _ov_trace_of_solve(ar, da):
    def impl(ar, da):
        n, _, lanes = da.shape
        z = _solve_lanes(ar, da.reshape((n, n * lanes))).reshape((n, n, lanes))
        tr = z[0, 0].copy()
        for i in range(1, n):
            tr += z[i, i]
        return tr
    return impl


@register_jitable
def _adjugate(a):
    """adj(a) from the SVD ``a = U S Vᴴ``: ``det(U) det(Vᴴ) V adj(S) Uᴴ``, singular ``a`` too."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[0]
    others = np.ones(n, dtype=s.dtype)
    for i in range(n):
        for j in range(n):
            if j != i:
                others[i] *= s[j]
    v = np.ascontiguousarray(np.conj(vh).T) * others
    return (np.linalg.det(u) * np.linalg.det(vh)) * (v @ np.ascontiguousarray(np.conj(u).T))


@register_jitable
def _trace_with(adj, da):
    """trace(adj da) for every lane of ``da`` (shape ``(n, n, lanes)``)."""
    n, _, lanes = da.shape
    out = np.zeros(lanes, dtype=da.dtype)
    for i in range(n):
        for j in range(n):
            out += adj[j, i] * da[i, j]
    return out


def _det_typer(a):
    T = _ours("np.linalg.det", a)
    if T is None:
        return None
    _square("np.linalg.det", a)
    if _float_base(T):
        def impl(a):
            ar, da = split(a, T)
            d = np.linalg.det(ar)
            if d == 0.0:   # a polynomial: the derivative is trace(adj(a) da) there too
                return join_scalar(d, _trace_with(_adjugate(ar), da), T)
            return join_scalar(d, d * _trace_of_solve(ar, da), T)
        return impl

    def nested(a):
        ar, da = split(a, T)
        d = np.linalg.det(ar)
        if d == 0.0:
            raise np.linalg.LinAlgError("duals.jit: the second derivative of np.linalg.det at a "
                                        "singular matrix is not computed (its first, the "
                                        "adjugate, is)")
        return join_scalar(d, d * _trace_of_solve(ar, da), T)
    return nested


def _slogdet_typer(a):
    T = _ours("np.linalg.slogdet", a)
    if T is None:
        return None
    _square("np.linalg.slogdet", a)

    def impl(a):
        ar, da = split(a, T)
        sign, logdet = np.linalg.slogdet(ar)
        if sign == 0.0:
            raise np.linalg.LinAlgError("duals.jit: np.linalg.slogdet has no derivative at a "
                                        "singular matrix (logabsdet is -inf there)")
        return sign, join_scalar(logdet, _trace_of_solve(ar, da), T)
    return impl


# ---------------------------------------------------------------- norm

def _two_norm(x, T):
    """The 2-norm of the entries of a dual array of ``T``'s level (derivative 0 at zero)."""


@overload(_two_norm)
def _ov_two_norm(x, T):
    base = T.instance_type.base

    def impl(x, T):
        xr, dx = split(x, T)
        n = xr.size
        flat = xr.reshape(n)
        value = np.linalg.norm(flat)
        lanes = dx.shape[-1]
        if value == 0.0:
            return join_scalar(value, np.zeros(lanes, base), T)
        return join_scalar(value, np.dot(flat, dx.reshape((n, lanes))) / value, T)
    return impl


def refuse_string_order(x, ord):
    """Raise for ``np.linalg.norm(x, 'fro')`` of a dual or adjoint array: Numba's own norm takes no
    string ``ord`` (its plain call raises at run time), so no mode of compiled code has one."""
    if is_dual_array(x) and isinstance(ord, (types.UnicodeType, types.StringLiteral)):
        _refuse("np.linalg.norm takes no string ord in compiled code (Numba's plain call raises "
                "'Invalid norm order' too): write np.linalg.norm(M) for ord='fro' (ord=None is the "
                "Frobenius norm of a matrix) and np.sum(np.linalg.svd(M)[1]) for ord='nuc'")


def _norm_typer(x, ord=None):
    refuse_string_order(x, ord)
    T = _ours("np.linalg.norm", x)
    if T is None:
        return None
    if x.ndim not in (1, 2):
        _refuse(f"np.linalg.norm of dual arrays takes a 1-d or 2-d array, got {x.ndim}-d")
    if ord is None or isinstance(ord, (types.NoneType, types.Omitted)):
        return lambda x, ord=None: _two_norm(x, T)
    if not isinstance(ord, (types.Integer, types.Float)):
        _refuse(f"np.linalg.norm of dual arrays takes ord=None or a number, got {ord}")
    return norm_of_order(x, _two_norm, T)


def norm_of_order(x, two_norm, T):
    """norm_of_order(x, two_norm, T) -> the implementation of ``np.linalg.norm(x, ord)`` for a
    number ``ord`` (forward and reverse mode alike): ``two_norm(x, T)`` for the vector 2-norm, the
    other orders from ``np.abs``, sums and extrema, whose rules are the element-wise ones."""
    if x.ndim == 1:
        def vector(x, ord=None):
            if ord == 2:
                return two_norm(x, T)
            if ord == np.inf:
                return np.max(np.abs(x))
            if ord == -np.inf:
                return np.min(np.abs(x))
            if ord == 1:
                return np.sum(np.abs(x))
            if ord == 0:
                return float(np.sum(x != 0.0))  # a count: derivative 0
            if np.sum(x != 0.0) == 0:
                return np.sum(np.abs(x))  # the zero vector: derivative 0, as abs'(0)
            return np.sum(np.abs(x) ** ord) ** (1.0 / ord)
        return vector

    def matrix(x, ord=None):
        if ord == 1:
            return np.max(np.sum(np.abs(x), axis=0))
        if ord == -1:
            return np.min(np.sum(np.abs(x), axis=0))
        if ord == np.inf:
            return np.max(np.sum(np.abs(x), axis=1))
        if ord == -np.inf:
            return np.min(np.sum(np.abs(x), axis=1))
        if ord == 2:
            return np.linalg.svd(x, compute_uv=False)[0]
        if ord == -2:
            return np.linalg.svd(x, compute_uv=False)[-1]
        raise ValueError("Invalid norm order for matrices.")
    return matrix


# ---------------------------------------------------------------- cholesky

def _cholesky_typer(a):
    T = _ours("np.linalg.cholesky", a)
    if T is None:
        return None
    _square("np.linalg.cholesky", a)

    def impl(a):
        ar, da = split(a, T)
        low = np.linalg.cholesky(ar)
        n, _, lanes = da.shape
        s = np.empty_like(da)  # the lower triangle of dA, mirrored: all that cholesky reads
        for i in range(n):
            for j in range(n):
                s[i, j] = da[i, j] if i >= j else da[j, i]
        y = _solve_lanes(low, s.reshape((n, n * lanes))).reshape((n, n, lanes))
        m = _solve_lanes(low, transposed_lanes(y).reshape((n, n * lanes))).reshape((n, n, lanes))
        for i in range(n):  # Φ: the lower triangle, the diagonal halved
            for lane in range(lanes):
                m[i, i, lane] *= 0.5
                for j in range(i + 1, n):
                    m[i, j, lane] = 0.0
        return join(low, lanes_right(low, m), T)
    return impl


# ---------------------------------------------------------------- trace

def _trace_typer(a, offset=0):
    if not is_dual_array(a) or a.ndim != 2:
        return None

    def impl(a, offset=0):
        acc = a[0, 0] * 0.0
        rows, cols = a.shape
        for i in range(max(0, -offset), min(rows, cols - offset)):
            acc = acc + a[i, i + offset]
        return acc
    return impl


def _matmul_function(a, b):
    """``np.matmul``: ``a @ b`` (the rule above) of dual arrays; of float arrays too (1-d and
    2-d), since Numba has no ``np.matmul`` and the plain call of the same code must run."""
    if _ours("np.matmul", a, b) is not None:
        if a.ndim not in (1, 2) or b.ndim not in (1, 2):
            _refuse(f"np.matmul of dual arrays supports 1-d and 2-d operands, got {a.ndim}-d and "
                    f"{b.ndim}-d; loop over the leading axes")
        return lambda a, b: a @ b
    if all(isinstance(t, types.Array) and isinstance(t.dtype, (types.Float, types.Complex))
           and t.ndim in (1, 2) for t in (a, b)):
        return lambda a, b: a @ b
    return None


def _dot_into(a, b, out):
    """np.dot(a, b, out) of dual arrays, which Numba's own ``A @ B`` calls where its typing took
    ``@`` (arrays of complex duals): refused by name, as np.dot of two is."""
    if any(is_dual_array(t) for t in (a, b, out)):
        level_of("A @ B", a, b, out)   # raises for complex duals: their lanes are another kind
        _refuse("np.dot(a, b, out) of dual arrays is not supported; write out[...] = a @ b")


def _install():
    for f, name in ((operator.matmul, "@"), (np.dot, "np.dot")):
        overload(f, target="cpu")(_matmul_typer(name))
    overload(np.dot, target="cpu")(_dot_into)
    overload(np.matmul, target="cpu")(_matmul_function)
    overload(np.linalg.solve, target="cpu")(_solve_typer)
    overload(np.linalg.inv, target="cpu")(_inv_typer)
    overload(np.linalg.det, target="cpu")(_det_typer)
    overload(np.linalg.slogdet, target="cpu")(_slogdet_typer)
    overload(np.linalg.norm, target="cpu")(_norm_typer)
    overload(np.linalg.cholesky, target="cpu")(_cholesky_typer)
    from .least_squares import lstsq_typer
    overload(np.linalg.lstsq, target="cpu")(lstsq_typer)
    overload(np.trace, target="cpu")(_trace_typer)
    from . import decompositions  # eigh, svd, qr, pinv: built on the helpers here
    decompositions.install()


_install()
