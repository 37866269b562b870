"""``np.linalg.solve``, ``inv``, ``det`` and ``slogdet`` of adjoint arrays (compiled reverse mode).

Each takes its value from Numba's own LAPACK call on the real parts (for float64 inputs the plain
call's value, bit for bit; float32 inputs are computed in float64, as compiled reverse mode does)
and records its derivative as a linear map of the input's tape nodes (:mod:`.differentials`),
with the matrix's LU factors or its inverse as the constant coefficients:

* ``solve(A, B)``: ``dX = A⁻¹ (dB − dA X)``, the solve by LAPACK's ``dgesv`` (the plain call's)
  and ``A⁻¹`` applied as its substitutions with the LU factors it leaves: at most ``2 n² k``
  nodes for ``k`` right-hand sides, one per nonzero entry of ``A`` and of its factors (a banded
  matrix records a band), where Gaussian elimination on adjoints recorded ``n³ / 3`` more;
* ``inv(A)``: ``dP = −A⁻¹ dA P``, the product then the substitutions: ``2 n³`` nodes for a dense
  ``A`` (every entry of ``P`` moves with every entry of ``A``), ``O(b n²)`` for a band of ``b``;
* ``det(A)``: ``d det = det · tr(A⁻¹ dA)`` (``tr(adj(A) dA)`` at a singular matrix) and
  ``slogdet``'s ``d log|det| = tr(A⁻¹ dA)``: ``n²`` nodes.

The sweep costs as much as the recording. Under forward over reverse (``duals.hessian``, ``hvp``
of a dispatcher) the real parts are dual arrays: the value and the inverse come from forward
mode's rules (``solve`` applies ``A⁻¹`` as a dense product there) and the coefficients carry
their own derivatives.

>>> import numba, numpy as np, duals
>>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> duals.grad(numba.njit(lambda b: np.sum(np.linalg.solve(A, b))))(np.ones(2)).round(12).tolist()
[0.4, 0.2]
>>> duals.grad(numba.njit(lambda a: np.linalg.det(a)))(A).round(12).tolist()
[[3.0, -1.0], [-1.0, 2.0]]
"""
import functools

import numpy as np
from numba.core import errors, types

from .._overloads import overload, register_jitable
from ._types import DualType, make
from .adjoint_arrays import _level
from .compat import lapack_gesv
from .differentials import (_any_adjoint, _attach, _contiguous, _copy_rhs, _left, _negated, _right, _scaled,
                            _step, _values, _zeros)
from .errors import MARK
from .extras import _real
from .linalg import _adjugate

__all__ = []

_DET_SECOND_ORDER = ("duals.jit: the second derivative of np.linalg.det at a singular matrix is not "
                     "computed (its first, the adjugate, is)")


def _operands(name, *operands):
    """The adjoint type of a call of ours (an adjoint array among the operands), else None;
    refuses what the rule does not take with a message that names the call."""
    T = _level(*operands)
    if T is None or not isinstance(operands[0], types.Array):
        return None
    a = operands[0]
    if a.ndim != 2:
        raise errors.TypingError(f"{MARK}{name} of adjoint arrays (compiled reverse mode) takes one "
                                 f"square matrix (2-d), got a {a.ndim}-d array; loop over the leading axes")
    for x in operands:
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Complex):
            raise errors.TypingError(f"{MARK}{name} of adjoint arrays with a complex operand: compiled "
                                     f"reverse mode is real; differentiate with duals.jacfwd (complex "
                                     f"compiled forward mode)")
    if len(operands) > 1 and (not isinstance(operands[1], types.Array) or operands[1].ndim not in (1, 2)):
        raise errors.TypingError(f"{MARK}{name} of adjoint arrays takes a 1-d or 2-d right-hand side, "
                                 f"got {operands[1]}")
    return T


def _real_parts(x):
    """The values the rule computes with: an adjoint array's real parts (floats, or duals for
    forward over reverse), a float64 or dual array as it is, any other array as float64."""


@overload(_real_parts)
def _ov_real_parts(x):
    if _level(x) is not None:
        return lambda x: _values(x)
    if x.dtype == types.float64 or isinstance(x.dtype, DualType):
        return lambda x: x
    return lambda x: x.astype(np.float64)


@register_jitable
def _square(ar):
    if ar.shape[0] != ar.shape[1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


@register_jitable
def _traced_trace(factor, C, a):
    """The differential ``factor · Σᵢⱼ C[j, i] dA[i, j]`` (``factor · tr(C dA)``), a node per term."""
    t = _zeros(1, 1, a)[0, 0]
    n = C.shape[0]
    for i in range(n):
        for j in range(n):
            t = _step(t, factor * C[j, i], a[i, j])
    return t


def _solve_typer(A, B):
    T = _operands("np.linalg.solve", A, B)
    if T is None:
        return None
    vector = B.ndim == 1
    a_moves = _level(A) is not None
    if not isinstance(T.base, DualType):
        factor_and_solve = _factoring()

        def impl(A, B):   # LAPACK's LU (the plain call's solve), its substitutions recorded
            ar = _real_parts(A)
            br = _real_parts(B)
            _square(ar)
            n = ar.shape[0]
            lu = _fortran_copy(ar, n, n)
            x = _fortran_copy(br, n, 1 if vector else br.shape[1])
            pivots = factor_and_solve(lu, x)
            like = _any_adjoint(A, B)
            rhs = _zeros(n, x.shape[1], like)       # dB − dA X
            _copy_rhs(B, rhs)
            if a_moves:
                _right(A, _negated(np.ascontiguousarray(x)), rhs)
            _substitute(lu, pivots, rhs)
            return _attach(x[:, 0], rhs[:, 0]) if vector else _attach(x, rhs)
        return impl

    def nested(A, B):     # forward over reverse: the coefficients are duals, from forward mode
        ar = _real_parts(A)
        br = _real_parts(B)
        _square(ar)
        x = _contiguous(np.linalg.solve(ar, br))
        n = ar.shape[0]
        k = 1 if vector else br.shape[1]
        like = _any_adjoint(A, B)
        rhs = _zeros(n, k, like)
        _copy_rhs(B, rhs)
        if a_moves:
            _right(A, _negated(x.reshape((n, k))), rhs)
        dx = _left(_contiguous(np.linalg.inv(ar)), rhs, _zeros(n, k, like))
        return _attach(x, dx.reshape(x.shape))
    return nested


@functools.lru_cache(maxsize=None)
def _factoring():
    """The @njit function ``factor_and_solve(lu, x) -> pivots``: LAPACK's ``dgesv`` on
    Fortran-ordered ``lu`` (n × n) and ``x`` (n × k, k ≥ 1), left holding the factors
    ``P A = L U`` and the solution; made at first use (it needs SciPy's LAPACK)."""
    gesv, pivot_dtype = lapack_gesv()
    kind = ord("d")

    @register_jitable
    def factor_and_solve(lu, x):
        n = lu.shape[0]
        pivots = np.empty(n, pivot_dtype)
        if n > 0 and gesv(kind, n, x.shape[1], lu.ctypes, n, pivots.ctypes, x.ctypes, n) != 0:
            raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
        return pivots
    return factor_and_solve


@register_jitable
def _fortran_copy(a, rows, columns):
    """A Fortran-ordered float64 copy of ``a`` (1-d: one column) of shape ``(rows, columns)``,
    what LAPACK overwrites; checks what Numba's own solve checks."""
    if a.shape[0] != rows:
        raise np.linalg.LinAlgError("Incompatible array sizes, system is not dimensionally valid.")
    out = np.empty((columns, rows)).T
    flat = a.reshape((rows, columns)) if a.ndim == 1 else a
    for i in range(rows):
        for j in range(columns):
            v = flat[i, j]
            if not np.isfinite(v):
                raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
            out[i, j] = v
    return out


@register_jitable
def _substitute(lu, pivots, d):
    """Solve ``A dX = d`` in place on differentials ``d`` (``n × k``) with ``dgetrf``'s factors
    ``P A = L U`` in ``lu``: the row interchanges, then a node per nonzero factor entry (a
    banded matrix's factors are banded, and so is the recording)."""
    n = lu.shape[0]
    for i in range(n):
        p = pivots[i] - 1
        if p != i:
            for c in range(d.shape[1]):
                d[i, c], d[p, c] = d[p, c], d[i, c]
    for c in range(d.shape[1]):
        for i in range(n):                  # L y = P d, unit diagonal
            t = d[i, c]
            for j in range(i):
                if lu[i, j] != 0.0:
                    t = _step(t, -lu[i, j], d[j, c])
            d[i, c] = t
        for i in range(n - 1, -1, -1):      # U x = y
            t = d[i, c]
            for j in range(i + 1, n):
                if lu[i, j] != 0.0:
                    t = _step(t, -lu[i, j], d[j, c])
            d[i, c] = _scaled(1.0 / lu[i, i], t)


def _inv_typer(A):
    T = _operands("np.linalg.inv", A)
    if T is None:
        return None
    if not isinstance(T.base, DualType):
        factor_and_solve = _factoring()

        def impl(A):       # −A⁻¹ dA P by the substitutions of A's LU factors
            ar = _real_parts(A)
            _square(ar)
            n = ar.shape[0]
            p = _contiguous(np.linalg.inv(ar))
            lu = _fortran_copy(ar, n, n)
            pivots = factor_and_solve(lu, np.zeros((1, n)).T)   # (no right-hand side: no factors)
            dp = _right(A, _negated(p), _zeros(n, n, A))
            _substitute(lu, pivots, dp)
            return _attach(p, dp)
        return impl

    def nested(A):
        ar = _real_parts(A)
        _square(ar)
        n = ar.shape[0]
        p = _contiguous(np.linalg.inv(ar))
        dp = _left(_negated(p), _right(A, p, _zeros(n, n, A)), _zeros(n, n, A))   # −P dA P
        return _attach(p, dp)
    return nested


def _det_typer(A):
    T = _operands("np.linalg.det", A)
    if T is None:
        return None
    if not isinstance(T.base, DualType):
        def impl(A):
            ar = _real_parts(A)
            _square(ar)
            d = np.linalg.det(ar)
            if d == 0.0:   # a polynomial: the derivative is tr(adj(A) dA) there too
                return make(d, _traced_trace(1.0, _adjugate(ar), A)._du)
            return make(d, _traced_trace(d, np.linalg.inv(ar), A)._du)
        return impl

    def nested(A):
        ar = _real_parts(A)
        _square(ar)
        d = np.linalg.det(ar)
        if _real(d) == 0.0:
            raise np.linalg.LinAlgError(_DET_SECOND_ORDER)
        return make(d, _traced_trace(d, np.linalg.inv(ar), A)._du)
    return nested


def _slogdet_typer(A):
    if _operands("np.linalg.slogdet", A) is None:
        return None

    def impl(A):
        ar = _real_parts(A)
        _square(ar)
        sign, logabs = np.linalg.slogdet(ar)
        if _real(sign) == 0.0:   # (the plain call returns (0, -inf))
            raise np.linalg.LinAlgError("duals.jit: np.linalg.slogdet has no derivative at a "
                                        "singular matrix (logabsdet is -inf there)")
        return _real(sign), make(logabs, _traced_trace(1.0, np.linalg.inv(ar), A)._du)
    return impl


def _install():
    overload(np.linalg.solve, target="cpu")(_solve_typer)
    overload(np.linalg.inv, target="cpu")(_inv_typer)
    overload(np.linalg.det, target="cpu")(_det_typer)
    overload(np.linalg.slogdet, target="cpu")(_slogdet_typer)


_install()
