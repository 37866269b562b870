"""Derivative cases for ``duals/ops/decompositions.py``: ``svd`` (reduced, full, values only,
hermitian), ``qr`` (tall, square, wide, ``mode='r'``), ``lstsq`` and ``pinv``, called as plain NumPy.

Singular vectors are checked the way a function can use them without depending on LAPACK's
sign choice (flipping ``u_i`` and ``v_i`` together is the same decomposition): weighted
reconstructions ``U diag(w) Vh``, entries squared or in absolute value, projectors ``V Vᵀ``,
the polar factor ``U Vh``. Random inputs have distinct nonzero singular values with probability
one; the policy where they do not is tested in ``test_decompositions.py``.
"""
import numpy as np

from op_cases import Case

S = ("svd",)
Q = ("qr", "solve")


def _weighted(a, full_matrices=False):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    weights = np.arange(k, 0, -1, dtype=a.dtype)
    return (u[..., :, :k] * (s * weights)[..., None, :]) @ vh[..., :k, :]


CASES = [
    # ------------------------------------------------------------ svd, reduced (what real code calls)
    Case("svd-weighted-reconstruction-tall", _weighted, ((4, 3),), S),
    Case("svd-weighted-reconstruction-wide", _weighted, ((2, 4),), S),
    Case("svd-abs-u-tall", lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[0]), ((4, 2),), S + ("abs",)),
    Case("svd-squared-vh-wide", lambda a: np.linalg.svd(a, full_matrices=False).Vh ** 2, ((2, 3),), S),
    Case("svd-row-space-projector", lambda a: (lambda vh: vh.T @ vh)(np.linalg.svd(a, full_matrices=False)[2]),
         ((2, 4),), S),
    Case("svd-polar-factor-stack", lambda a: (lambda u, s, vh: u @ vh)(*np.linalg.svd(a, full_matrices=False)),
         ((2, 3, 2),), S),
    # ------------------------------------------------------------ svd, full_matrices=True
    Case("svd-full-square", lambda a: _weighted(a, True) + np.linalg.svd(a)[0] ** 2, ((3, 3),), S),
    Case("svd-full-tall-by-one", lambda a: np.linalg.svd(a)[0] ** 2, ((4, 3),), S),
    Case("svd-full-wide-by-one", lambda a: np.linalg.svd(a)[2] ** 2, ((2, 3),), S),
    # ------------------------------------------------------------ singular values only
    Case("svd-values-wide", lambda a: np.linalg.svd(a, compute_uv=False), ((3, 4),), ("svdvals",)),
    Case("svdvals-stack-cubed", lambda a: np.linalg.svdvals(a) ** 3, ((2, 3, 2),), ("svdvals",)),
    Case("svd-values-from-full-decomposition", lambda a: np.linalg.svd(a).S, ((3, 3),), S),
    # ------------------------------------------------------------ hermitian=True (eigh of the lower triangle)
    Case("svd-hermitian-vectors", lambda a: np.linalg.svd(a, hermitian=True)[0] ** 2 * np.linalg.svd(a, hermitian=True)[1],
         ((3, 3),), ("eigh", "abs")),
    Case("svd-hermitian-values", lambda a: np.linalg.svd(a, compute_uv=False, hermitian=True), ((3, 3),),
         ("eigvalsh", "abs")),
    # ------------------------------------------------------------ qr
    Case("qr-tall-q", lambda a: np.linalg.qr(a).Q, ((4, 3),), Q),
    Case("qr-tall-r", lambda a: np.linalg.qr(a)[1], ((4, 2),), Q),
    Case("qr-r-mode-stack", lambda a: np.linalg.qr(a, mode="r"), ((2, 3, 3),), Q),
    Case("qr-wide", lambda a: (lambda q, r: q @ np.abs(r) + r[..., :1] * r)(*np.linalg.qr(a)), ((2, 4),),
         Q + ("matmul",)),
    # ------------------------------------------------------------ lstsq (x and residuals differentiated)
    Case("lstsq-tall-vector", lambda a, b: np.linalg.lstsq(a, b)[0], ((5, 3), (5,)), Q),
    Case("lstsq-residuals-matrix-rhs", lambda a, b: np.linalg.lstsq(a, b)[1] + np.linalg.lstsq(a, b)[0][0],
         ((5, 2), (5, 2)), Q),
    Case("lstsq-wide-minimum-norm", lambda a, b: np.linalg.lstsq(a, b)[0], ((2, 3), (2,)), Q),
    # ------------------------------------------------------------ pinv
    Case("pinv-tall", np.linalg.pinv, ((4, 2),), ("pinv",)),
    Case("pinv-square", np.linalg.pinv, ((3, 3),), ("pinv",)),
    Case("pinv-wide-stack", np.linalg.pinv, ((2, 2, 3),), Q),
    # NumPy reads the lower triangle only: the upper one has derivative zero, as finite differences say
    Case("pinv-hermitian", lambda a: np.linalg.pinv(a, hermitian=True), ((3, 3),), Q),
]
