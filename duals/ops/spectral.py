"""Symmetric eigendecomposition, ``linalg.eigh`` and ``linalg.eigvalsh``, and the matrix products
built on ``matmul`` (``matrix_power``, ``multi_dot``).

``eigh`` is one primitive whose output packs the eigenvalues as a first row above the
eigenvectors (shape ``(..., n + 1, n)``), so one decomposition serves both and the rules see
both. As in NumPy, only the ``UPLO`` triangle of ``a`` is read: the other triangle has
derivative zero. With ``S`` the symmetric matrix NumPy decomposes and ``C = Vᵀ dS V``:

* ``dλ = diag(C)`` and ``dV = V (F ∘ C)`` with ``F_ij = 1 / (λ_j − λ_i)`` off the diagonal;
* reverse: ``S̄ = V (diag(λ̄) + F ∘ (Vᵀ V̄)) Vᵀ``, folded onto the triangle NumPy read.

A complex Hermitian matrix takes the same rules with ``C = Vᴴ dS V``, ``dλ = Re diag(C)`` (the
eigenvalues are real), ``dS`` read from one triangle and its conjugate transpose with the diagonal's
imaginary part ignored (as LAPACK does), and in reverse (JAX's pairing ``Re Σ c t``, no conjugation)
``S̄ = conj(V) (diag(Re λ̄) + F ∘ (Vᵀ V̄)) Vᵀ``. A complex eigenvector is defined up to a phase;
its derivative is the one with ``Im(vᵢᴴ dvᵢ) = 0``, so only functions that do not depend on the
phases (``|V|²``, ``V f(Λ) Vᴴ``) have derivatives that agree with differences of NumPy's results.

Policy at repeated eigenvalues: eigenvectors have no derivative there (any rotation inside the
eigenspace is as good), so the vectors of eigenvalues closer than ``eps^(2/3) · max|λ|`` have none
(:func:`~duals.ops.repeated_gap`: a tie that rounding split counts as one):
reverse mode raises ``np.linalg.LinAlgError`` naming the gap when their cotangent is not zero by
structure (a vector the function uses, even through a zero eigenvalue), and forward mode, which
cannot know what is used, gives them NaN tangents with a warning. Every eigenvalue and the
vectors of the simple ones keep their derivatives (a structure's lowest mode beside a repeated
higher pair). Eigenvalues alone
(``eigvalsh``) are differentiated everywhere with ``diag(Vᵀ dS V)`` in NumPy's basis: exact for
every function symmetric in the repeated eigenvalues (their sum, ``trace``, norms, ``logdet``).
An individual repeated eigenvalue has no derivative there (its one-sided derivatives are the
eigenvalues of ``Vᵀ dS V`` restricted to the repeated eigenspace, different on each side), and
what is returned for it is the diagonal above, not one of them: at ``S = diag(1, 1, 3)`` along
``dS = [[0, 1, 0], [1, 0, 0], [0, 0, 2]]`` it is ``(0, 0, 2)``, while the eigenvalues move by
``(−1, 1, 2)`` to one side and ``(1, −1, 2)`` to the other.
"""

import numpy as np

from ..core import Primitive, Tracer
from ..float_warnings import warn_at_user_line
from ..index_sets import per_matrix_rule
from . import export, innermost, is_complex, repeated_gap, shape_of as shape
from .complex_parts import conj, imag, real
from .elementwise import where
from .linalg import _check_square as _check, matmul
from .reductions import sum as _sum
from .shape import concatenate, getitem, swapaxes, tril, triu

EighResult = type(np.linalg.eigh(np.eye(1)))   # NumPy's own namedtuple: one structure for results


def _eigh_impl(a, *, lower, strict=False):   # (strict: a repeated eigenvalue raises in every mode)
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return np.concatenate([w[..., None, :], v], axis=-2)


eigh_p = Primitive("eigh", _eigh_impl)
eigh_p.def_sparsity(per_matrix_rule())


def split_packed(packed):
    """(eigenvalue row ``(..., 1, n)``, eigenvectors) of a packed eigendecomposition."""
    return (getitem(packed, (Ellipsis, slice(0, 1), slice(None))),
            getitem(packed, (Ellipsis, slice(1, None), slice(None))))


def _H(x):
    """The conjugate transpose of the last two axes (the transpose for real values)."""
    return conj(swapaxes(x, -1, -2))


def _real_diagonal(x):
    """``x`` with the imaginary part of its diagonal removed (LAPACK ignores it in a Hermitian
    matrix); ``x`` itself when real."""
    if not is_complex(x):
        return x
    return x - 1j * (imag(x) * np.eye(shape(x)[-1]))


def _symmetric_tangent(t, lower):
    """The change of the matrix NumPy decomposes when ``a`` changes by ``t`` (one triangle read,
    the other its conjugate transpose)."""
    if lower:
        return _real_diagonal(tril(t) + _H(tril(t, -1)))
    return _real_diagonal(triu(t) + _H(triu(t, 1)))


def _fold(s_bar, lower):
    """The cotangent of ``a`` from that of the Hermitian matrix (the transpose of the map above
    under the pairing ``Re Σ c t``)."""
    if lower:
        return _real_diagonal(tril(s_bar) + tril(_H(s_bar), -1))
    return _real_diagonal(triu(s_bar) + triu(_H(s_bar), 1))


_AT_REPEATED = {
    "eigh": "the eigenvectors have no derivative at a repeated eigenvalue{gap}, and duals "
            "differentiates the vectors themselves, so a use of the repeated ones' vectors raises "
            "here (the other eigenvectors and every eigenvalue keep theirs), even in a "
            "function that does not depend on the basis chosen inside the repeated eigenspace "
            "(V diag(f(w)) Vᵀ); differentiate the eigenvalues (np.linalg.eigvalsh: first "
            "derivatives), write the "
            "function of the matrix without eigenvectors (np.trace, np.linalg.det, powers of the "
            "matrix; duals.numpy.linalg.expm(t * a) for V diag(exp(t w)) Vᵀ), or declare it as a "
            "primitive with its own rule (duals.extend.primitive)",
    "eigvalsh": "a second derivative (hessian, hvp, a Jacobian of a gradient) of the eigenvalues "
                "at a repeated eigenvalue{gap} needs the eigenvectors' derivative, which does not "
                "exist there, so it raises even for a function symmetric in them (an isotropic "
                "energy at an isotropic state, whose Hessian exists); write the function through "
                "invariants of the matrix where it has them (np.trace(a) for the sum of the "
                "eigenvalues, np.sum(a * a) for the sum of their squares, np.linalg.det(a) for "
                "their product), declare it as a primitive with its own second-order rule "
                "(duals.extend.primitive), or take the Hessian off the tie (it is continuous there "
                "for a symmetric function: a relative perturbation d of the matrix, well above "
                "1e-10, gives it to about d)",
    "eig": "the eigenvectors have no derivative at a repeated eigenvalue{gap}; differentiate a "
           "function of the eigenvalues that is symmetric in the repeated ones (np.trace(a) for "
           "their sum), or move the matrix off the repeated eigenvalue",
    "eigvals": "a repeated eigenvalue of a general matrix has no derivative{gap} (a defective one "
               "moves like the square root of the change); differentiate a function symmetric in "
               "the repeated ones (np.trace(a) for their sum), or use eigvalsh for a symmetric matrix",
    "roots": "a repeated root has no derivative{gap} (it moves like the square root of a change of "
             "the coefficients); write a function symmetric in the roots through the coefficients "
             "(their sum is -p[1] / p[0]), or move the coefficients off the repeated root",
}


def tied_gaps(w_row, also=None):
    """(F, tied): ``F_ij = 1 / (λ_j − λ_i)`` between eigenvalues apart, 0 on the diagonal and
    between tied ones (closer than ``eps^(2/3) · max|λ|``, :func:`~duals.ops.repeated_gap`, or
    both marked in the row mask ``also``: a general matrix's nearly defective ones), and the mask
    of the tied pairs."""
    n = shape(w_row)[-1]
    plain = np.asarray(innermost(w_row))
    gaps = np.abs(plain - np.swapaxes(plain, -1, -2))
    off = ~np.eye(n, dtype=bool)
    scale = np.max(np.abs(plain)) if plain.size else 0.0
    tied = off & (gaps <= repeated_gap(np.finfo(plain.dtype).eps) * max(scale, 1e-300))
    if also is not None:
        tied |= off & also & np.swapaxes(also, -1, -2)
    apart = off & ~tied
    difference = w_row - swapaxes(w_row, -1, -2)
    return where(apart, 1.0 / where(apart, difference, 1.0), 0.0), tied


def repeated_error(who, w_row, tied, why=None):
    """The LinAlgError for a derivative that needs the gaps between tied eigenvalues (``why``: the
    key of the explanation, ``who``'s own by default)."""
    plain = np.asarray(innermost(w_row))
    gaps = np.abs(plain - np.swapaxes(plain, -1, -2))[tied]
    return np.linalg.LinAlgError(f"{who}: " + _AT_REPEATED[why or who].format(
        gap=f" (the smallest gap is {np.min(gaps):.3g})"))


def inverse_gaps(w_row, who="eigh"):
    """``F_ij = 1 / (λ_j − λ_i)`` off the diagonal, 0 on it; raises at a repeated eigenvalue
    (``who`` names the function and the way out)."""
    F, tied = tied_gaps(w_row)
    if tied.any():
        raise repeated_error(who, w_row, tied)
    return F


def _eigh_jvp(t, out, a, *, lower, strict=False):
    w, V = split_packed(out)
    n = shape(a)[-1]
    C = matmul(_H(V), matmul(_symmetric_tangent(t, lower), V))
    dw = real(_sum(C * np.eye(n), axis=-2, keepdims=True))
    F, tied = tied_gaps(real(w))
    dV = matmul(V, F * C)
    if tied.any():   # the repeated eigenvalues' vectors have no derivative; the others have theirs
        if strict:   # eigvalsh's rules, differentiated
            raise repeated_error("eigvalsh", real(w), tied)
        columns = tied.any(axis=-2, keepdims=True)
        warn_at_user_line(f"eigh: eigenvalues {listed(columns, tied)} (in NumPy's order) are repeated, and "
                          f"their eigenvectors have no derivative (any rotation inside the eigenspace "
                          f"is as good): their tangents are NaN, and so is any derivative that uses "
                          f"them, even of a function that does not depend on the basis (V diag(f(w)) "
                          f"Vᵀ); every eigenvalue's and the other eigenvectors' are exact, to first "
                          f"order (a second derivative of a repeated eigenvalue needs its vectors' "
                          f"and is NaN too: write the function through invariants of the matrix)")
        dV = where(columns, np.nan, dV)
    return concatenate([dw, dV], axis=-2)


def listed(columns, tied=None):
    """``"0, 1 and 2"`` (or ``"4, 5, 6, 7, 8, 9, ... (20 of them)"``) for a mask of eigenvalues
    ``(..., 1, n)``, by their place in NumPy's order; with the tied pairs ``tied`` (``(..., n,
    n)``), two to four repeated groups as ``"1 and 2, and 3 and 4 (2 groups)"``.

    >>> tied = np.zeros((4, 4), bool); tied[0, 1] = tied[1, 0] = tied[2, 3] = tied[3, 2] = True
    >>> listed(tied.any(axis=-2, keepdims=True), tied)
    '0 and 1, and 2 and 3 (2 groups)'
    """
    if tied is not None:
        groups = _groups(np.asarray(tied).reshape((-1,) + np.shape(tied)[-2:]).any(axis=0))
        if 1 < len(groups) <= 4:
            return ", and ".join(_listed(g) for g in groups) + f" ({len(groups)} groups)"
    return _listed([int(k[-1]) for k in np.argwhere(columns)])


def _groups(tied):
    """The groups of indices joined by the pairs of the (n, n) mask ``tied``, each sorted."""
    groups, seen = [], set()
    for start in range(tied.shape[0]):
        if start in seen or not tied[start].any():
            continue
        group, frontier = {start}, [start]
        while frontier:
            for j in np.flatnonzero(tied[frontier.pop()]):
                if int(j) not in group:
                    group.add(int(j))
                    frontier.append(int(j))
        seen |= group
        groups.append(sorted(group))
    return groups


def _listed(found):
    if len(found) > 6:
        return ", ".join(map(str, found[:6])) + f", ... ({len(found)} of them)"
    return ", ".join(map(str, found[:-1])) + f" and {found[-1]}" if len(found) > 1 else str(found[0])


def _eigh_vjp(g, out, a, *, lower, strict=False, unreached=None):
    # the transpose of the JVP: with M = diag(Re w̄) + F ∘ (Vᵀ V̄), S̄ = conj(V) M Vᵀ (V M Vᵀ if real)
    w, V = split_packed(out)
    w_bar, V_bar = split_packed(g)
    n = shape(a)[-1]
    F, tied = tied_gaps(real(w))
    if tied.any():
        columns = tied.any(axis=-2, keepdims=True)
        values, vectors = packed_marks(unreached)
        if strict:   # eigvalsh's rules, differentiated
            raise repeated_error("eigvalsh", real(w), tied)
        if not unused(columns, vectors):   # a repeated eigenvalue's vector is used: name its gap
            raise repeated_error("eigh", real(w), tied & _used_columns(vectors, tied.shape))
        if unused(True, vectors) and unused(columns[..., 0, :], values):
            # no vector used, nor a repeated eigenvalue: S̄ = Σ w̄ₖ vₖ vₖᵀ over the simple ones; the
            # repeated ones' vectors (NaN tangents at second order) are left out of it, so that a
            # simple eigenvalue's second derivative is not poisoned by 0 · NaN
            V = where(columns, 0.0, V)
        elif isinstance(out, Tracer):   # differentiated again: w̄ₖ vₖ vₖᵀ needs the repeated dvₖ
            raise repeated_error("eigh", real(w), tied, why="eigvalsh")
    inner = real(w_bar) * np.eye(n) + F * matmul(swapaxes(V, -1, -2), V_bar)
    return _fold(matmul(conj(V), matmul(inner, swapaxes(V, -1, -2))), lower)


def _used_columns(vector_marks, shape):
    """The pairs ``(i, j)`` of which column ``j`` is an eigenvector the function uses (not zero by
    structure in ``vector_marks``), as a mask of ``shape``; every pair without marks."""
    if vector_marks is None or np.ndim(vector_marks) < 2:
        return np.ones(shape, dtype=bool)
    used = ~np.all(vector_marks, axis=-2)
    return np.broadcast_to(used[..., None, :] | used[..., :, None], shape)


def packed_marks(unreached):
    """(marks of the eigenvalues ``(..., n)``, marks of the eigenvectors ``(..., n, n)``) from the
    walk's marks over a packed decomposition: the entries whose cotangent is zero by structure
    (None where there are none; a 0-d mark stands for every entry)."""
    if unreached is None:
        return None, None
    marks = np.asarray(unreached)
    if marks.ndim < 2:
        return marks, marks
    return marks[..., 0, :], marks[..., 1:, :]


def unused(selected, marks):
    """Whether every entry ``selected`` picks (a mask; True for all) is zero by structure in
    ``marks``, not merely zero in value, which a vector multiplied by a zero eigenvalue also gets
    while its derivative is undefined (``V diag(w) Vᵀ`` at ``S = 0``)."""
    return marks is not None and bool(np.all(marks | ~np.asarray(selected)))


_eigh_vjp.takes_unreached = True
eigh_p.unreached = lambda i, mask, out, a, **params: None   # (takes the marks; passes none on: S̄ is dense)
eigh_p.def_jvp(0, _eigh_jvp)
eigh_p.def_vjp(0, _eigh_vjp)


def _eigvalsh_impl(a, *, lower):
    return np.linalg.eigvalsh(a, UPLO="L" if lower else "U")


eigvalsh_p = Primitive("eigvalsh", _eigvalsh_impl)
eigvalsh_p.def_sparsity(per_matrix_rule())


def _vectors(a, lower):
    """The eigenvectors the rules of ``eigvalsh`` read; differentiated (second order), they
    raise at a repeated eigenvalue in eigvalsh's name (``strict``)."""
    return split_packed(eigh_p(a, lower=lower, strict=True))[1]


def _eigvalsh_jvp(t, out, a, *, lower):
    V = _vectors(a, lower)
    n = shape(a)[-1]
    C = matmul(_H(V), matmul(_symmetric_tangent(t, lower), V))
    return real(_sum(C * np.eye(n), axis=-2))


def _eigvalsh_vjp(g, out, a, *, lower):
    V = _vectors(a, lower)
    w_bar = real(getitem(g, (Ellipsis, None, slice(None))))   # a row: it scales the columns of V
    return _fold(matmul(conj(V) * w_bar, swapaxes(V, -1, -2)), lower)


eigvalsh_p.def_jvp(0, _eigvalsh_jvp)
eigvalsh_p.def_vjp(0, _eigvalsh_vjp)
# a Hermitian matrix's eigenvalues are real: no complex derivative (holomorphic=True refuses them)
eigh_p.holomorphic = eigvalsh_p.holomorphic = False


def _lower(UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


@export("linalg.eigh")
def eigh(a, UPLO="L"):
    """eigh(a, UPLO="L") -> (eigenvalues, eigenvectors) of a symmetric matrix, ascending.

    >>> w, v = eigh(np.diag([2.0, 1.0]))
    >>> w.tolist()
    [1.0, 2.0]
    """
    _check(a, "eigh")
    lower = _lower(UPLO)
    if not hasattr(a, "_trace"):
        return EighResult(*np.linalg.eigh(a, UPLO=UPLO))
    w, V = split_packed(eigh_p(a, lower=lower))
    return EighResult(real(getitem(w, (Ellipsis, 0, slice(None)))), V)


@export("linalg.eigvalsh")
def eigvalsh(a, UPLO="L"):
    """eigvalsh(a, UPLO="L"): the eigenvalues of a symmetric matrix, ascending.

    >>> eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    _check(a, "eigvalsh")
    lower = _lower(UPLO)
    if not hasattr(a, "_trace"):
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return eigvalsh_p(a, lower=lower)


@export("linalg.matrix_power")
def matrix_power(a, n):
    """matrix_power(a, n): ``a`` multiplied by itself ``n`` times (by squaring); ``n < 0`` inverts first.

    >>> matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    from .linalg import inv
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: the exponent must be an integer, got {type(n).__name__}")
    _check(a, "matrix_power")
    if not hasattr(a, "_trace"):
        return np.linalg.matrix_power(a, n)
    if n == 0:
        return np.broadcast_to(np.eye(shape(a)[-1]), shape(a)).copy()
    base, n = (inv(a), -int(n)) if n < 0 else (a, int(n))
    result = None
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


@export("linalg.multi_dot")
def multi_dot(arrays, *, out=None):
    """multi_dot(arrays): the chained product ``arrays[0] @ arrays[1] @ ...`` (left to right).

    >>> multi_dot([np.eye(2), np.ones((2, 1)), np.ones((1, 2))]).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if out is not None:
        raise TypeError("multi_dot(..., out=...) cannot write a traced value into an array; drop out=")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    result = arrays[0]
    for a in arrays[1:]:
        result = matmul(result, a)
    return result
