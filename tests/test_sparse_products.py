"""A constant scipy.sparse operator times a traced array (duals.ops.sparse_products), as a
method-of-lines right-hand side uses it: derivatives, the detected pattern, a stiff solve, and
the message for ``L @ y`` as written."""
import numpy as np
import pytest
import scipy.integrate
import scipy.sparse

import duals
import duals.numpy as dnp
from finite_differences import central_differences

N = 40
LAPLACIAN = scipy.sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(N, N), format="csr") * (N + 1) ** 2


def allen_cahn(t, u, eps=0.05):
    """u' = eps² u'' + u - u³ on (0, 1), zero at both ends: the diffusion is a sparse operator."""
    return eps ** 2 * dnp.matmul(LAPLACIAN, u) + u - u ** 3


def start():
    x = np.linspace(0.0, 1.0, N + 2)[1:-1]
    return 0.5 * np.sin(3 * np.pi * x) + 0.1 * x


def test_jacobians_of_a_sparse_operator_term_are_exact_in_every_mode():
    u = start()
    exact = 0.05 ** 2 * LAPLACIAN.toarray() + np.diag(1.0 - 3.0 * u ** 2)
    f = lambda u: allen_cahn(0.0, u)   # noqa: E731
    np.testing.assert_allclose(duals.jacfwd(f)(u), exact, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(duals.jacrev(f)(u), exact, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(duals.jacfwd(f)(u), central_differences(f, (u,), 0), rtol=1e-6, atol=1e-6)
    energy = lambda u: np.sum(u * (u @ LAPLACIAN)) + np.sum(u ** 4)   # noqa: E731
    A = LAPLACIAN.toarray()
    np.testing.assert_allclose(duals.hessian(energy)(u), A + A.T + np.diag(12.0 * u ** 2), rtol=1e-12)
    v = np.cos(np.arange(N))
    np.testing.assert_allclose(duals.hvp(energy, u, v), (A + A.T) @ v + 12.0 * u ** 2 * v, rtol=1e-12)


def test_the_detected_pattern_is_the_operators_bands_and_a_stiff_solve_uses_it():
    u0 = start()
    jac = duals.jacfwd(lambda u: allen_cahn(0.0, u), sparsity="auto")
    J = jac(u0)
    assert J.nnz == 3 * N - 2   # the tridiagonal bands: the reaction adds only the diagonal
    solved = scipy.integrate.solve_ivp(allen_cahn, (0.0, 2.0), u0, method="BDF",
                                       jac=lambda t, u: jac(u), rtol=1e-8, atol=1e-10)
    reference = scipy.integrate.solve_ivp(allen_cahn, (0.0, 2.0), u0, method="BDF", rtol=1e-8, atol=1e-10)
    assert solved.success and reference.success
    np.testing.assert_allclose(solved.y[:, -1], reference.y[:, -1], atol=1e-6)


def test_sparse_times_traced_as_written_says_what_to_write():
    with pytest.raises(TypeError, match=r"scipy\.sparse matrix with a traced operand .* write "
                                        r"dnp\.matmul\(L, x\) or x @ L\.T"):
        duals.grad(lambda u: np.sum(LAPLACIAN @ u))(start())
    with pytest.raises(ValueError, match=r"shapes \(40, 40\) \(sparse\) and \(3,\) do not align"):
        duals.grad(lambda u: np.sum(dnp.matmul(LAPLACIAN, u)))(np.ones(3))


SECOND_DIFFERENCES = scipy.sparse.diags([np.ones(4), -2.0 * np.ones(5), np.ones(4)], [-1, 0, 1], format="csr")


@pytest.mark.parametrize("scaled", [
    lambda k: (k * SECOND_DIFFERENCES)[2, 2],
    lambda k: (SECOND_DIFFERENCES * k)[2, 2] + k ** 2,
    lambda k: np.multiply(k, SECOND_DIFFERENCES)[2, 2],
    lambda k: (scipy.sparse.identity(5, format="csc") - 0.1 * k * SECOND_DIFFERENCES)[0, 0],
])
def test_a_traced_value_times_a_sparse_matrix_is_refused_not_silently_wrong(scaled):
    # (k * L made a tracer holding a csr_matrix: grad gave 0.0 for d/dk (k L)[2, 2] = -2; a user trial)
    for transform in (duals.grad, duals.jacfwd):
        with pytest.raises(TypeError, match=r"scipy\.sparse matrix (?=.*k \* \(L @ u\))(?=.*dnp\.matmul\(L, x\))"):
            transform(scaled)(0.7)
    with pytest.raises(TypeError, match="scipy.sparse matrix"):
        scaled(duals.Var(0.7))


def test_a_traced_value_times_a_sparse_product_is_differentiated():
    u = np.linspace(0.0, 1.0, 5) ** 2
    f = lambda k: np.sum(k * (SECOND_DIFFERENCES @ u) * u)   # noqa: E731
    want = np.sum((SECOND_DIFFERENCES @ u) * u)
    for transform in (duals.grad, duals.jacfwd):
        assert float(transform(f)(0.7)) == pytest.approx(want, rel=1e-14)
