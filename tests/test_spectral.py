"""The policy of eigh/eigvalsh at repeated eigenvalues, and a realistic use."""
import numpy as np
import pytest

import duals


def test_eigenvector_derivative_at_a_repeated_eigenvalue_raises_naming_the_gap():
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue.*eigvalsh"):
        duals.grad(lambda A: np.sum(np.linalg.eigh(A)[1]))(np.eye(3))


@pytest.mark.parametrize("transform", ["grad", "jacfwd"])
def test_symmetric_functions_of_repeated_eigenvalues_are_exact(transform):
    # sum of squared eigenvalues = ||S||_F^2 with S the matrix NumPy reads (lower triangle)
    A = np.diag([2.0, 2.0, 5.0]) + np.tril(np.full((3, 3), 0.0), -1)
    f = lambda A: np.sum(np.linalg.eigvalsh(A) ** 2)  # noqa: E731
    S_grad = 2 * np.diag(np.diag(A)) + 4 * np.tril(A, -1)
    np.testing.assert_allclose(getattr(duals, transform)(f)(A), S_grad, atol=1e-12)


def test_only_the_triangle_numpy_reads_has_a_derivative():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 4))
    g_lower = duals.grad(lambda A: np.linalg.eigvalsh(A)[-1])(A)
    g_upper = duals.grad(lambda A: np.linalg.eigvalsh(A, UPLO="U")[-1])(A)
    assert np.all(np.triu(g_lower, 1) == 0) and np.all(np.tril(g_upper, -1) == 0)


def test_largest_eigenvalue_of_a_stiffness_matrix_against_its_closed_form():
    # a chain of springs: K = k (tridiagonal 2, -1); λ_max = 2k (1 - cos(nπ/(n+1))), dλ/dk = λ/k
    n = 6
    base = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    lam = lambda k: np.linalg.eigvalsh(k * base)[-1]  # noqa: E731
    k = 3.0
    closed = 2 * (1 - np.cos(n * np.pi / (n + 1)))
    assert duals.grad(lam)(k) == pytest.approx(closed, rel=1e-12)
    assert duals.jacfwd(lam)(k) == pytest.approx(closed, rel=1e-12)
    assert duals.hessian(lam)(k) == pytest.approx(0.0, abs=1e-10)
