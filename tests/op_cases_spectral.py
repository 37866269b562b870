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
