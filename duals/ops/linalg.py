"""Linear algebra and contractions: ``matmul``, ``solve`` and ``cholesky`` are primitives; ``dot``,
``inner``, ``outer``, ``tensordot``, ``vdot`` and ``inv`` are composed from them and from the shape
and reduction primitives (``det`` and ``slogdet``, ``einsum`` and ``norm`` live in their own modules).

The primitives take operands of at least two axes whose leading (batch) axes broadcast, as in
NumPy's ``matmul`` and ``linalg.solve``; the public wrappers promote vectors to matrices and
drop the added axis afterwards. Tangents and cotangents carry lane axes in front, which the
batch axes of ``matmul`` and ``solve`` absorb, so a rule is one batched call, not a loop.

Complex matrices take the same rules (their VJPs are plain transposes, JAX's convention);
``cholesky`` of a Hermitian matrix uses conjugate transposes (``dL = L Φ(L⁻¹ dA L⁻ᴴ)``)
(docs/complex.md).

Policy at non-differentiable points: ``solve`` and ``inv`` raise NumPy's ``LinAlgError`` when
asked for a derivative at a singular matrix; ``cholesky`` raises it for a matrix that is not
positive definite.
"""

import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import collect, per_matrix_rule, positions, union
from . import all_of_copies, dtype_of, export, innermost, is_complex, ndim_of as ndim, shape_of as shape
from .complex_parts import conj, imag
from .elementwise import PRIMITIVES, align
from .reductions import unbroadcast
from .shape import reshape, reshape_p, swapaxes, transpose, tril
from .sparse_products import is_sparse_matrix, sparse_product

_abs = PRIMITIVES["abs"]

# ---------------------------------------------------------------- helpers


class _Shaped:
    """A stand-in with only a ``shape``, for :func:`unbroadcast` of an intermediate result."""

    __slots__ = ("shape",)

    def __init__(self, s):
        self.shape = tuple(s)


def _unbroadcast(g, value_shape, target_shape):
    """Cotangent ``g`` of a value of ``value_shape`` (lanes in front) summed down to ``target_shape``."""
    return unbroadcast(g, _Shaped(value_shape), target_shape)


def _T(x):
    """The last two axes swapped (lanes and batch axes untouched)."""
    return swapaxes(x, -1, -2)


def _plain(x):
    return np.asarray(innermost(x))


def _float_dtype(x):
    d = np.dtype(dtype_of(x))
    return d if d.kind == "f" else np.dtype(np.float64)


def _traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


def _as_operand(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _mm(a, b):
    """Batched product of operands of ndim >= 2; a 2-D operand against a stack is one GEMM."""
    na, nb = ndim(a), ndim(b)
    if not _traced(a, b):
        if nb == 2 and na > 2:
            return np.matmul(np.reshape(a, (-1, a.shape[-1])), b).reshape(a.shape[:-1] + b.shape[-1:])
        if na == 2 and nb > 2:
            r = np.matmul(np.reshape(np.swapaxes(b, -1, -2), (-1, b.shape[-2])), a.T)
            return np.swapaxes(r.reshape(b.shape[:-2] + (b.shape[-1], a.shape[0])), -1, -2)
        return np.matmul(a, b)
    if nb == 2 and na > 2:
        sa = shape(a)
        return reshape(matmul_p(reshape(a, (-1, sa[-1])), b), sa[:-1] + shape(b)[-1:])
    if na == 2 and nb > 2:
        sb = shape(b)
        r = matmul_p(reshape(_T(b), (-1, sb[-2])), transpose(a))
        return _T(reshape(r, sb[:-2] + (sb[-1], shape(a)[0])))
    return matmul_p(a, b)


def _batch(who, sa, sb, ba, bb):
    try:
        return np.broadcast_shapes(ba, bb)
    except ValueError:
        raise ValueError(f"{who}: the batch axes of shapes {sa} and {sb} do not broadcast "
                         f"({ba} against {bb})") from None

# ---------------------------------------------------------------- matmul


def _matmul_impl(a, b):
    return np.matmul(a, b)


matmul_p = Primitive("matmul", _matmul_impl)
matmul_p.def_jvp(0, lambda t, out, a, b: _mm(align(t, a, out), b))
matmul_p.def_jvp(1, lambda t, out, a, b: _mm(a, align(t, b, out)))
def _matmul_vjp_a(g, out, a, b, unreached=None):
    if unreached is not None:   # columns of b whose cotangent column is zero by structure
        b = _without(b, np.all(np.broadcast_to(unreached, shape(out)), axis=-2, keepdims=True))
    return _unbroadcast(_mm(g, _T(b)), shape(out)[:-1] + shape(a)[-1:], shape(a))


def _matmul_vjp_b(g, out, a, b, unreached=None):
    if unreached is not None:   # rows of a whose cotangent row is zero by structure
        a = _without(a, np.all(np.broadcast_to(unreached, shape(out)), axis=-1, keepdims=True))
    return _unbroadcast(_mm(_T(a), g), shape(out)[:-2] + shape(b)[-2:], shape(b))


def _without(x, lines):
    """``x`` with the rows (or columns) that ``lines`` marks set to 0, so that a NaN or inf there
    does not meet the structural zeros of the cotangent (0 · NaN)."""
    from .elementwise import where
    return where(lines, 0.0, x) if lines.any() else x


# the walk passes the marks of the cotangent's structural zeros to rules that take them
_matmul_vjp_a.takes_unreached = _matmul_vjp_b.takes_unreached = True
matmul_p.def_vjp(0, _matmul_vjp_a)
matmul_p.def_vjp(1, _matmul_vjp_b)


def _matmul_unreached(i, mask, out, a, b):
    """Rows of ``a`` whose output rows, and columns of ``b`` whose output columns, have
    cotangents that are zero by structure (``(x @ w)[ok]`` skips the other rows of ``x``)."""
    if mask is None:
        return None
    operand = shape((a, b)[i])
    spread = shape(out)[:-2] + operand[-2:]   # the operand broadcast over the output's batch axes
    lines = np.all(np.broadcast_to(mask, shape(out)), axis=-1 if i == 0 else -2, keepdims=True)
    return all_of_copies(np.broadcast_to(lines, spread), spread, operand)   # rows of a, columns of b


matmul_p.unreached = _matmul_unreached


def _align_plain(t, x, out):
    missing = out.ndim - np.ndim(x)
    return t if missing <= 0 else t.reshape(t.shape[:1] + (1,) * missing + t.shape[1:])


def _matmul_fused_jvp(primals, tangents):
    """Value and tangent on plain arrays (one lanes axis) without dispatching each rule."""
    a, b = primals
    ta, tb = tangents
    out = np.matmul(a, b)
    t = None if ta is None else _mm(_align_plain(ta, a, out), b)
    if tb is not None:
        c = _mm(a, _align_plain(tb, b, out))
        t = c if t is None else t + c
    return out, t


matmul_p.fused_jvp = _matmul_fused_jvp


def _matmul_sparsity(sets, out, a, b):
    """``out[..., i, j]`` depends on ``a[..., i, l]`` and ``b[..., l, j]`` for every ``l``, except
    through a constant operand's exact zeros (a stencil stored as a dense matrix stays sparse)."""
    out_shape = np.shape(_plain(out))
    batch, (m, n) = out_shape[:-2], out_shape[-2:]
    k = shape(a)[-1]
    outs = positions(out_shape).reshape(-1, m, n)

    def spread(x, core):
        return np.broadcast_to(positions(shape(x)), batch + core).reshape((-1,) + core)

    def reaches(other, traced, core):   # where the other operand's entries can carry a dependency
        constant = not traced and not isinstance(other, Tracer)   # (not even of an outer trace)
        entries = np.asarray(other) != 0 if constant else np.ones(shape(other), dtype=bool)
        return np.nonzero(np.broadcast_to(entries, batch + core).reshape((-1,) + core))

    parts = []
    if sets[0] is not None:
        stack, l, j = reaches(b, sets[1] is not None, (k, n))
        parts.append(collect(sets[0], spread(a, (m, k))[stack, :, l], outs[stack, :, j], out_shape))
    if sets[1] is not None:
        stack, i, l = reaches(a, sets[0] is not None, (m, k))
        parts.append(collect(sets[1], spread(b, (k, n))[stack, l, :], outs[stack, i, :], out_shape))
    return union(parts, out_shape)


matmul_p.def_sparsity(_matmul_sparsity)


@export()
def matmul(a, b):
    """matmul(a, b): the matrix product ``a @ b`` with NumPy's rules for vectors and stacks.

    A 1-D first operand is a row, a 1-D second operand a column; leading axes broadcast.

    >>> matmul(np.eye(2), np.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    if is_sparse_matrix(a) or is_sparse_matrix(b):
        return _with_sparse(a, b, "matmul")
    a, b = _as_operand(a), _as_operand(b)
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must have at least one axis, got shapes {sa} and {sb}; "
                         f"use multiply for scalars")
    k, kb = sa[-1], sb[-1 if len(sb) == 1 else -2]
    if k != kb:
        raise ValueError(f"matmul: shapes {sa} and {sb} do not align: the last axis of the first "
                         f"({k}) must equal the {'only' if len(sb) == 1 else 'second-to-last'} axis "
                         f"of the second ({kb})")
    if len(sa) > 2 or len(sb) > 2:
        _batch("matmul", sa, sb, sa[:-2], sb[:-2])
    if not _traced(a, b):
        return np.matmul(a, b)
    if len(sa) > 1 and len(sb) > 1:
        return matmul_p(a, b)
    # vectors: promoted to a row / a column, the added axis dropped from the result
    out = matmul_p(reshape_p(a, shape=(1,) + sa) if len(sa) == 1 else a,
                   reshape_p(b, shape=sb + (1,)) if len(sb) == 1 else b)
    so = shape(out)
    return reshape_p(out, shape=so[:-2] + (so[-2:-1] if len(sa) > 1 else ()) + (so[-1:] if len(sb) > 1 else ()))


def _with_sparse(a, b, who):
    """``a @ b`` where one operand is a constant ``scipy.sparse`` matrix (duals.ops.sparse_products)."""
    if is_sparse_matrix(a) and is_sparse_matrix(b) or not _traced(a, b):
        return a @ b
    if isinstance(a, Tracer) and is_sparse_matrix(b):   # x @ L = (Lᵀ @ xᵀ)ᵀ
        return sparse_product(b.T, a) if ndim(a) == 1 else transpose(sparse_product(b.T, transpose(a)))
    if not is_sparse_matrix(a):
        raise TypeError(f"{who}: a traced operand beside a sparse matrix must be an array")
    return sparse_product(a, b)


@export()
def dot(a, b):
    """dot(a, b): NumPy's ``dot``: a product for scalars, ``matmul`` for vectors and matrices,
    and a sum over the last axis of ``a`` and the second-to-last of ``b`` beyond.

    >>> float(dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    if is_sparse_matrix(a) or is_sparse_matrix(b):
        return _with_sparse(a, b, "dot")
    a, b = _as_operand(a), _as_operand(b)
    sa, sb = shape(a), shape(b)
    if sa and sb and sa[-1] != sb[-1 if len(sb) == 1 else -2]:
        raise ValueError(f"dot: shapes {sa} and {sb} do not align: the last axis of the first "
                         f"({sa[-1]}) must equal the {'only' if len(sb) == 1 else 'second-to-last'} "
                         f"axis of the second ({sb[-1 if len(sb) == 1 else -2]})")
    if not _traced(a, b):
        return np.dot(a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return a * b
    if ndim(a) == 1 or ndim(b) <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


@export()
def vdot(a, b):
    """vdot(a, b): the sum of products of the flattened operands, ``a`` conjugated (as NumPy).

    >>> float(vdot(np.ones((2, 2)), np.full((2, 2), 2.0)))
    8.0
    """
    a, b = _as_operand(a), _as_operand(b)
    if int(np.prod(shape(a))) != int(np.prod(shape(b))):
        raise ValueError(f"vdot: shapes {shape(a)} and {shape(b)} have different sizes")
    if not _traced(a, b):
        return np.vdot(a, b)
    from .complex_parts import conj
    return matmul(reshape(conj(a), (-1,)), reshape(b, (-1,)))


@export()
def inner(a, b):
    """inner(a, b): the sum of products over the last axes of ``a`` and ``b``.

    >>> float(inner(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    a, b = _as_operand(a), _as_operand(b)
    if ndim(a) and ndim(b) and shape(a)[-1] != shape(b)[-1]:
        raise ValueError(f"inner: shapes {shape(a)} and {shape(b)} do not align: last axes "
                         f"{shape(a)[-1]} != {shape(b)[-1]}")
    if not _traced(a, b):
        return np.inner(a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return a * b
    return tensordot(a, b, axes=([-1], [-1]))


@export()
def outer(a, b):
    """outer(a, b): the matrix ``a[i] * b[j]`` of the flattened operands.

    >>> outer(np.array([1.0, 2.0]), np.array([1.0, 0.0, 3.0])).shape
    (2, 3)
    """
    a, b = _as_operand(a), _as_operand(b)
    if not _traced(a, b):
        return np.outer(a, b)
    return reshape(a, (-1, 1)) * reshape(b, (1, -1))


def _axes_list(axes, nd, who, s):
    axes = [int(axes)] if isinstance(axes, (int, np.integer)) else [int(a) for a in axes]
    for a in axes:
        if not -nd <= a < nd:
            raise np.exceptions.AxisError(f"{who}: axis {a} is out of bounds for shape {s}")
    return [a % nd for a in axes]


@export()
def tensordot(a, b, axes=2):
    """tensordot(a, b, axes=2): sums of products over ``axes`` (an int N: the last N axes of
    ``a`` with the first N of ``b``; or a pair of axis lists), free axes of ``a`` then ``b``.

    >>> tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = _as_operand(a), _as_operand(b)
    sa, sb = shape(a), shape(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"tensordot: axes={n} is invalid for shapes {sa} and {sb}")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}") from None
        ax_a = _axes_list(ax_a, len(sa), "tensordot", sa)
        ax_b = _axes_list(ax_b, len(sb), "tensordot", sb)
    if len(ax_a) != len(ax_b) or any(sa[i] != sb[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError(f"tensordot: shape-mismatch for sum: axes {ax_a} of shape {sa} and axes "
                         f"{ax_b} of shape {sb} must have equal lengths")
    if not _traced(a, b):
        return np.tensordot(a, b, axes=(ax_a, ax_b))
    free_a = [i for i in range(len(sa)) if i not in ax_a]
    free_b = [i for i in range(len(sb)) if i not in ax_b]
    k = int(np.prod([sa[i] for i in ax_a], dtype=int))
    am = reshape(transpose(a, free_a + ax_a), (-1, k))
    bm = reshape(transpose(b, ax_b + free_b), (k, -1))
    return reshape(matmul_p(am, bm), tuple(sa[i] for i in free_a) + tuple(sb[i] for i in free_b))

# ---------------------------------------------------------------- solve and inv


def _solve_impl(a, b):
    return np.linalg.solve(a, b)


solve_p = Primitive("solve", _solve_impl)
solve_p.def_sparsity(per_matrix_rule())


def _solve_vjp_b(g, out, a, b):
    return _unbroadcast(solve_p(_T(a), g), shape(out), shape(b))


solve_p.def_jvp(0, lambda t, out, a, b: -solve_p(a, _mm(align(t, a, out), out)))
solve_p.def_jvp(1, lambda t, out, a, b: solve_p(a, align(t, b, out)))
solve_p.def_vjp(0, lambda g, out, a, b: _unbroadcast(
    -_mm(solve_p(_T(a), g), _T(out)), shape(out)[:-1] + shape(a)[-1:], shape(a)))
solve_p.def_vjp(1, _solve_vjp_b)


def _check_square(a, who):
    s = shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise np.linalg.LinAlgError(f"{who}: expected a square matrix (or a stack of them) in the "
                                    f"last two axes, got shape {s}")


@export("linalg.solve")
def solve(a, b):
    """solve(a, b): ``x`` with ``a @ x = b``; ``b`` is a vector if 1-D, else (a stack of) matrices.

    Raises ``LinAlgError`` for a singular ``a``.

    >>> solve(2.0 * np.eye(2), np.array([2.0, 4.0])).tolist()
    [1.0, 2.0]
    """
    a, b = _as_operand(a), _as_operand(b)
    _check_square(a, "linalg.solve")
    sa, sb = shape(a), shape(b)
    vector = len(sb) == 1
    if len(sb) == 0 or sb[-1 if vector else -2] != sa[-1]:
        raise ValueError(f"linalg.solve: shapes {sa} and {sb} do not align: b needs {sa[-1]} rows "
                         f"(b is a vector if 1-D, else a matrix or a stack of them)")
    _batch("linalg.solve", sa, sb, sa[:-2], () if vector else sb[:-2])
    if not _traced(a, b):
        return np.linalg.solve(a, b)
    if vector:
        return reshape(solve_p(a, reshape(b, sb + (1,))), sa[:-2] + sb)
    return solve_p(a, b)


@export("linalg.inv")
def inv(a):
    """inv(a): the inverse matrix (of each matrix in a stack), as ``solve(a, I)``.

    Raises ``LinAlgError`` for a singular matrix.

    >>> inv(2.0 * np.eye(2)).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    a = _as_operand(a)
    _check_square(a, "linalg.inv")
    if not _traced(a):
        return np.linalg.inv(a)
    return solve_p(a, np.eye(shape(a)[-1], dtype=_float_dtype(a)))

# ---------------------------------------------------------------- cholesky


def _cholesky_impl(a):
    return np.linalg.cholesky(a)


def _phi(out):
    """Lower-triangle weights with a halved diagonal: Φ(M) = M * W."""
    n = shape(out)[-1]
    return (np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(_float_dtype(out))


def _H(x):
    """The conjugate transpose of the last two axes (the transpose for real values)."""
    return conj(_T(x))


def _real_diagonal(x):
    """``x`` without the imaginary part of its diagonal, which LAPACK ignores in a Hermitian matrix
    (``x`` itself when real)."""
    if not is_complex(x):
        return x
    return x - 1j * (imag(x) * np.eye(shape(x)[-1]))


def _cholesky_jvp(t, out, a):
    # cholesky reads only the lower triangle of a: the tangent is that triangle, mirrored (its
    # conjugate for a Hermitian a, whose diagonal is read as real)
    s = _real_diagonal(tril(t) + _H(tril(t, -1)))
    m = _H(solve_p(out, _H(solve_p(out, s))))          # L⁻¹ s L⁻ᴴ (Hermitian)
    return _mm(out, m * _phi(out))


def _cholesky_vjp(g, out, a):
    # the transpose of the JVP under Re Σ c t: S̄ = L⁻ᵀ Φ(Lᵀ L̄) conj(L⁻¹), folded onto the triangle
    p = _mm(_T(out), g) * _phi(out)
    s = _T(solve_p(_H(out), _T(solve_p(_T(out), p))))
    return _real_diagonal(tril(s) + tril(_H(s), -1))


cholesky_p = Primitive("cholesky", _cholesky_impl)
cholesky_p.def_sparsity(per_matrix_rule())
cholesky_p.def_jvp(0, _cholesky_jvp)
cholesky_p.def_vjp(0, _cholesky_vjp)


@export("linalg.cholesky")
def cholesky(a, upper=False):
    """cholesky(a, upper=False): the lower factor ``L`` with ``a = L @ L.T`` (``U = L.T`` if ``upper``).

    Like NumPy, only the lower (upper) triangle of ``a`` is read, so the derivative with
    respect to the other triangle is zero. Raises ``LinAlgError`` unless ``a`` is positive definite.

    >>> cholesky(np.array([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    a = _as_operand(a)
    _check_square(a, "linalg.cholesky")
    if upper:
        return _T(cholesky_p(_T(a)))
    return cholesky_p(a)

cholesky_p.holomorphic = False   # the factor of a Hermitian matrix: its diagonal is real
