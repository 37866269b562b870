"""Derivative cases for ``duals/ops/spectral.py``: eigenvalues and eigenvectors of symmetric matrices."""
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
CASES += [
    Case("norm-2", lambda a: L.norm(a, 2), ((3, 2),), ("eigvalsh",)),
    Case("norm-minus-2-wide", lambda a: L.norm(a, -2), ((2, 4),), ("eigvalsh",)),
    Case("norm-nuc-axes", lambda a: L.norm(a, "nuc", axis=(0, 2), keepdims=True), ((3, 2, 3),),
         ("eigvalsh",)),
    Case("matrix_power-3", lambda a: L.matrix_power(a, 3), ((3, 3),), ("matmul",)),
    Case("matrix_power-minus-2", lambda a: L.matrix_power(a + 3.0 * dnp.eye(3), -2), ((3, 3),),
         ("matmul", "solve")),
    Case("multi_dot", lambda a, b: L.multi_dot([a, b, a.T]), ((2, 3), (3, 3)), ("matmul",)),
]
