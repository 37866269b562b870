"""Derivative cases for ``duals/ops/spectral.py`` and ``eigen.py``: eigenvalues and eigenvectors of
symmetric and of general matrices."""
import duals.numpy as dnp
from op_cases import Case

L = dnp.linalg
CASES = [
    Case("eigvalsh", L.eigvalsh, ((4, 4),), ("eigvalsh", "eigh")),
    Case("eigvalsh-upper-batched", lambda a: L.eigvalsh(a, UPLO="U"), ((2, 3, 3),), ("eigvalsh",)),
    Case("eigh-values", lambda a: L.eigh(a).eigenvalues, ((3, 3),), ("eigh",)),
    # squared entries: independent of the sign LAPACK picks for each eigenvector
    Case("eigh-vectors", lambda a: L.eigh(a)[1] ** 2, ((3, 3),), ("eigh",)),
    Case("eigh-rayleigh", lambda a: dnp.sum(L.eigh(a)[1][:, 0] * (a @ L.eigh(a)[1][:, 0])),
         ((3, 3),), ("eigh",)),
]
# general matrices: complex eigenvalue pairs at these samples, so real and imaginary parts both move
CASES += [
    Case("eigvals-real-part", lambda a: dnp.real(L.eigvals(a)), ((3, 3),), ("eigvals", "eig")),
    Case("eigvals-modulus-batched", lambda a: dnp.abs(L.eigvals(a)), ((2, 3, 3),), ("eigvals",)),
    Case("eig-values-pair", lambda a: dnp.imag(L.eig(a).eigenvalues) ** 2 + dnp.real(L.eig(a)[0]), ((3, 3),), ("eig",)),
    # products of two entries of one column: independent of the column's sign, not of its phase
    Case("eig-vectors-phase", lambda a: dnp.real(L.eig(a)[1] * L.eig(a)[1][:1, :]), ((3, 3),), ("eig",)),
    Case("eig-vectors-imaginary", lambda a: dnp.imag(L.eig(a)[1] * L.eig(a)[1][1:2, :]), ((3, 3),), ("eig",)),
    # real eigenvalues (a symmetric matrix seen as a general one): real eigenvectors, norm 1
    Case("eig-real-spectrum", lambda a: L.eig(a + a.T)[1] ** 2, ((3, 3),), ("eig",)),
]
CASES += [
    Case("norm-2", lambda a: L.norm(a, 2), ((3, 2),), ("svdvals",)),
    Case("norm-minus-2-wide", lambda a: L.norm(a, -2), ((2, 4),), ("svdvals",)),
    Case("norm-nuc-axes", lambda a: L.norm(a, "nuc", axis=(0, 2), keepdims=True), ((3, 2, 3),),
         ("svdvals",)),
    Case("matrix_power-3", lambda a: L.matrix_power(a, 3), ((3, 3),), ("matmul",)),
    Case("matrix_power-minus-2", lambda a: L.matrix_power(a + 3.0 * dnp.eye(3), -2), ((3, 3),),
         ("matmul", "solve")),
    Case("multi_dot", lambda a, b: L.multi_dot([a, b, a.T]), ((2, 3), (3, 3)), ("matmul",)),
]
