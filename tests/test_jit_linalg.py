"""Linear algebra on dual arrays inside @numba.njit code (duals/jit/linalg.py).

The kernels are written as a Numba user writes them (a Newton solver, a least-squares fit, a
Gaussian log-likelihood, a small network), each run plain and under duals.jacfwd / hessian,
and checked against central differences of the plain function, closed forms, and the NumPy
path (``f.py_func`` under duals.jacrev) where the kernel is plain NumPy. Every jacfwd and
hessian here uses LANES lanes (per level), as the other compiled-mode tests do, so the dual rules
compile once for all (tests/lanes.py).
"""
import math

import numba
import numpy as np
import pytest

import duals
from finite_differences import central_differences
from lanes import LANES

njit = numba.njit(cache=True)


def jacfwd(f, argnums=0):
    return duals.jacfwd(f, argnums=argnums, chunk_size=LANES)


def hessian(f, argnums=0):  # forward over forward (nested duals through the LAPACK rules), fixed lanes
    return duals.jit.compiled_hessian(f, argnums=argnums, chunk_size=LANES)


# ---------------------------------------------------------------- user code, unchanged

@njit
def newton(x0, p, iterations):
    """The root of F(x) = (x0² + x1 − p0, x0 + x1³ − p1) by Newton steps J dx = −F."""
    x = x0.copy()
    for _ in range(iterations):
        F = np.empty_like(x)
        F[0] = x[0] ** 2 + x[1] - p[0]
        F[1] = x[0] + x[1] ** 3 - p[1]
        J = np.empty((2, 2), dtype=x.dtype)
        J[0, 0] = 2.0 * x[0]
        J[0, 1] = 1.0
        J[1, 0] = 1.0
        J[1, 1] = 3.0 * x[1] ** 2
        x = x - np.linalg.solve(J, F)
    return x


@njit
def polynomial_fit(t, y, degree):
    V = np.empty((t.shape[0], degree + 1), dtype=t.dtype)
    for i in range(t.shape[0]):
        for j in range(degree + 1):
            V[i, j] = t[i] ** j
    coefficients, residuals, rank, singular_values = np.linalg.lstsq(V, y)
    return coefficients, residuals, singular_values


@njit
def least_squares(A, b):
    x, residuals, rank, s = np.linalg.lstsq(A, b)
    return x


@njit
def lstsq_sum(A, b):
    return np.sum(np.linalg.lstsq(A, b)[0])


@njit
def gp_log_likelihood(theta, t, y):
    """log N(y; 0, K(θ)) of a squared-exponential kernel, through cholesky and two solves."""
    n = t.shape[0]
    K = np.empty((n, n), dtype=theta.dtype)
    for i in range(n):
        for j in range(n):
            K[i, j] = theta[0] ** 2 * math.exp(-0.5 * (t[i] - t[j]) ** 2 / theta[1] ** 2)
        K[i, i] += theta[2] ** 2
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return -0.5 * (y @ alpha) - np.sum(np.log(np.diag(L))) - 0.5 * n * math.log(2.0 * math.pi)


@njit
def network(W1, b1, w2, x):
    h = np.tanh(W1 @ x + b1)
    return w2 @ h + x @ x


@njit
def products(A, B, x):
    return (np.dot(A, B) @ x + (x @ A) @ B.T + A.T @ (B @ x) + np.dot(x, x) * x
            + np.matmul(A, x) + np.matmul(x, B) + np.matmul(A, B)[0] + np.matmul(x, x) * x)


@njit
def matrix_functions(A, b):
    return (np.linalg.det(A) * np.linalg.norm(np.linalg.inv(A) @ b) + np.linalg.norm(A)
            + np.linalg.slogdet(A)[1] + np.trace(A) * np.linalg.norm(b, np.inf))


def matrix_functions_numpy(A, b):
    import duals.numpy as dnp
    return (dnp.linalg.det(A) * dnp.linalg.norm(dnp.linalg.inv(A) @ b) + dnp.linalg.norm(A)
            + dnp.linalg.slogdet(A)[1] + dnp.trace(A) * dnp.linalg.norm(b, np.inf))


@njit
def solve_matrix(A, B):
    return np.linalg.solve(A, B)


@njit
def solve_matrix_sum(A, B):
    return np.sum(np.linalg.solve(A, B))


@njit
def cholesky_of(A):
    return np.linalg.cholesky(A)


@njit
def norm_of(x):
    return np.linalg.norm(x)


@njit
def det_of(A):
    return np.linalg.det(A)


# ---------------------------------------------------------------- a Newton solver

P = np.array([2.0, 3.0])


def test_newton_solution_sensitivity_is_the_inverse_jacobian():
    x0 = np.array([1.0, 1.0])
    x = newton(x0, P, 30)
    np.testing.assert_allclose([x[0] ** 2 + x[1], x[0] + x[1] ** 3], P, rtol=1e-13)
    d_x0, d_p = jacfwd(newton, argnums=(0, 1))(x0, P, 30)
    J = np.array([[2.0 * x[0], 1.0], [1.0, 3.0 * x[1] ** 2]])
    np.testing.assert_allclose(d_p, np.linalg.inv(J), rtol=1e-12)  # implicit function theorem
    np.testing.assert_allclose(d_x0, 0.0, atol=1e-12)  # the root does not depend on the guess
    np.testing.assert_allclose(d_p, central_differences(newton, (x0, P, 30), 1), rtol=1e-6)


def test_one_newton_step_matches_central_differences():
    x0 = np.array([1.2, 0.7])
    for argnum, got in enumerate(jacfwd(newton, argnums=(0, 1))(x0, P, 1)):
        np.testing.assert_allclose(got, central_differences(newton, (x0, P, 1), argnum),
                                   rtol=1e-7, atol=1e-8)


# ---------------------------------------------------------------- least squares

T_SAMPLES = np.array([-1.0, -0.4, 0.1, 0.5, 1.2, 2.0])
Y_SAMPLES = np.array([0.3, -0.2, 0.4, 1.1, 0.8, 2.5])


def test_polynomial_fit_is_linear_in_the_data_with_the_pseudo_inverse():
    coefficients, residuals, s = polynomial_fit(T_SAMPLES, Y_SAMPLES, 2)
    V = np.vander(T_SAMPLES, 3, increasing=True)
    np.testing.assert_allclose(coefficients, np.linalg.lstsq(V, Y_SAMPLES)[0], rtol=1e-12)
    dc, dres, ds = jacfwd(polynomial_fit, argnums=1)(T_SAMPLES, Y_SAMPLES, 2)
    np.testing.assert_allclose(dc, np.linalg.pinv(V), rtol=1e-10, atol=1e-12)
    r = Y_SAMPLES - V @ coefficients
    np.testing.assert_allclose(dres, 2.0 * r[None, :], rtol=1e-10, atol=1e-12)  # d|r|²/dy = 2r
    np.testing.assert_array_equal(ds, 0.0)  # the singular values do not depend on y


def test_polynomial_fit_with_respect_to_the_sample_points_matches_central_differences():
    got = jacfwd(polynomial_fit)(T_SAMPLES, Y_SAMPLES, 2)
    for k in range(3):  # coefficients, residuals, singular values
        want = central_differences(lambda t: polynomial_fit(t, Y_SAMPLES, 2)[k], (T_SAMPLES,), 0)
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4)], ids=["square", "under"])  # over: the fit above
def test_least_squares_in_the_matrix_matches_central_differences(shape):
    rng = np.random.default_rng(sum(shape))
    A, b = rng.normal(size=shape), rng.normal(size=shape[0])
    dA, db = jacfwd(least_squares, argnums=(0, 1))(A, b)
    np.testing.assert_allclose(dA, central_differences(least_squares, (A, b), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(db, central_differences(least_squares, (A, b), 1), rtol=1e-6, atol=1e-7)


def test_least_squares_of_a_rank_deficient_matrix_refuses_a_derivative():
    A = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    least_squares(A, np.ones(3))  # the plain call is fine
    with pytest.raises(np.linalg.LinAlgError, match="deficient rank"):
        jacfwd(least_squares, argnums=(0, 1))(A, np.ones(3))


@pytest.mark.parametrize("transform", [jacfwd, duals.jacrev], ids=["forward", "reverse"])
def test_least_squares_of_a_constant_rank_deficient_matrix_is_linear_in_b(transform):
    A, b = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), np.array([1.0, 0.5, -0.2])
    db = transform(least_squares, argnums=1)(A, b)
    np.testing.assert_allclose(db, central_differences(least_squares, (A, b), 1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(db, duals.jacfwd(lambda b: np.linalg.lstsq(A, b)[0])(b), rtol=1e-12, atol=1e-14)


def test_hessian_of_least_squares_names_lstsq_and_what_to_do():
    with pytest.raises(TypeError, match=r"np\.linalg\.lstsq of nested duals .* normal equations"):
        hessian(lstsq_sum)(np.eye(3)[:, :2] + 0.1, np.ones(3))


# ---------------------------------------------------------------- Gaussian log-likelihood

THETA = np.array([1.3, 0.7, 0.4])
T_GRID = np.linspace(0.0, 2.0, 5)
Y_GRID = np.sin(3.0 * T_GRID)


def _kernel_and_derivatives(theta, t):
    d2 = (t[:, None] - t[None, :]) ** 2
    e = np.exp(-0.5 * d2 / theta[1] ** 2)
    K = theta[0] ** 2 * e + theta[2] ** 2 * np.eye(t.size)
    dK = [2.0 * theta[0] * e, theta[0] ** 2 * e * d2 / theta[1] ** 3, 2.0 * theta[2] * np.eye(t.size)]
    return K, dK


def test_gaussian_log_likelihood_gradient_has_the_closed_form():
    K, dK = _kernel_and_derivatives(THETA, T_GRID)
    sign, logdet = np.linalg.slogdet(K)
    want_value = -0.5 * Y_GRID @ np.linalg.solve(K, Y_GRID) - 0.5 * logdet - 2.5 * math.log(2 * math.pi)
    assert gp_log_likelihood(THETA, T_GRID, Y_GRID) == pytest.approx(want_value, rel=1e-12)
    alpha = np.linalg.solve(K, Y_GRID)
    Kinv = np.linalg.inv(K)
    closed = [0.5 * np.trace((np.outer(alpha, alpha) - Kinv) @ d) for d in dK]
    got = jacfwd(gp_log_likelihood)(THETA, T_GRID, Y_GRID)
    np.testing.assert_allclose(got, closed, rtol=1e-10)


def test_gaussian_log_likelihood_hessian_matches_differences_of_the_gradient():
    H = hessian(gp_log_likelihood)(THETA, T_GRID, Y_GRID)
    grad = jacfwd(gp_log_likelihood)
    want = central_differences(lambda th: grad(th, T_GRID, Y_GRID), (THETA,), 0, h=1e-5)
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(H, H.T, rtol=1e-12)


def test_gaussian_log_likelihood_in_the_data_is_minus_the_solve():
    got = jacfwd(gp_log_likelihood, argnums=2)(THETA, T_GRID, Y_GRID)
    K, _ = _kernel_and_derivatives(THETA, T_GRID)
    np.testing.assert_allclose(got, -np.linalg.solve(K, Y_GRID), rtol=1e-11)


# ---------------------------------------------------------------- products and matrix functions

RNG = np.random.default_rng(7)
W1, B1, W2, X_IN = RNG.normal(size=(3, 2)), RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=2)
A3 = RNG.normal(size=(3, 3)) + 3.0 * np.eye(3)
B3 = RNG.normal(size=(3, 3))
X3 = RNG.normal(size=3)


def test_network_of_matrix_vector_products_matches_the_numpy_path():
    got = jacfwd(network, argnums=(0, 1, 2, 3))(W1, B1, W2, X_IN)
    want = duals.jacrev(network.py_func, argnums=(0, 1, 2, 3))(W1, B1, W2, X_IN)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_products_of_every_shape_with_duals_and_floats_mixed_match_the_numpy_path():
    np.testing.assert_allclose(products(A3, B3, X3), products.py_func(A3, B3, X3), rtol=1e-14)  # np.matmul runs plain
    got = jacfwd(products, argnums=(0, 1))(A3, B3, X3)  # x a float vector among dual matrices
    want = duals.jacrev(products.py_func, argnums=(0, 1))(A3, B3, X3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n", [3, 9])
def test_small_and_large_products_of_strided_operands_match_the_numpy_path_and_keep_the_value(n):
    # small products take their lanes from scalar dual arithmetic (a 3-vector np.dot cost ~20x
    # the plain call through lane arrays and BLAS; an optics trial), larger ones from BLAS: at
    # n = 9 the matrix products are large and the matrix-vector ones small
    A, B = RNG.normal(size=(2 * n, 2 * n))[::2, ::2], RNG.normal(size=(n, n)).T   # strided, transposed
    x = RNG.normal(size=2 * n)[::2]
    for argnums in ((0, 1), 2):
        got = jacfwd(products, argnums=argnums)(A, B, x)
        want = duals.jacrev(products.py_func, argnums=argnums)(A, B, x)
        for g, w in zip(got if argnums != 2 else [got], want if argnums != 2 else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    value, _ = duals.jvp(products, (A, B, x), (np.ones_like(A), np.zeros_like(B), np.zeros_like(x)))
    np.testing.assert_allclose(value, products(A, B, x), rtol=1e-14)   # (BLAS on copies of strided operands)


@njit
def site_momentum(f, c):
    """Lattice-Boltzmann moments at each site: a dot product with a column view f[:, j]."""
    total = 0.0
    for j in range(f.shape[1]):
        total += np.dot(c, f[:, j]) ** 2 + (c @ f[:, j]) * np.dot(f[:, j], f[::-1, j])
    return total


def test_dot_of_strided_columns_of_dual_arrays():
    # a column view f[:, j] is non-contiguous: jacfwd refused it ("x.reshape() on an array of
    # duals", or an internal name for a read-only operand); compiled grad took it
    f = RNG.normal(size=(3, 4))
    c = np.array([0.0, 1.0, -1.0])
    c.flags.writeable = False
    got = jacfwd(site_momentum)(f, c)
    np.testing.assert_allclose(got, duals.grad(site_momentum)(f, c), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(got, central_differences(site_momentum, [f, c], 0), rtol=1e-7, atol=1e-8)


def test_det_inv_norm_slogdet_trace_match_the_numpy_path():
    got = jacfwd(matrix_functions, argnums=(0, 1))(A3, X3)
    want = duals.jacrev(matrix_functions_numpy, argnums=(0, 1))(A3, X3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11)


def test_det_derivative_is_det_times_inverse_transpose():
    np.testing.assert_allclose(jacfwd(det_of)(A3), np.linalg.det(A3) * np.linalg.inv(A3).T, rtol=1e-12)


def test_solve_with_a_matrix_right_hand_side_matches_central_differences():
    B = np.ascontiguousarray(B3[:, :2])  # as the differences' steps are, so solve compiles once
    for argnum, got in enumerate(jacfwd(solve_matrix, argnums=(0, 1))(A3, B)):
        np.testing.assert_allclose(got, central_differences(solve_matrix, (A3, B), argnum),
                                   rtol=1e-7, atol=1e-8)


def test_cholesky_reads_the_lower_triangle_only_as_on_the_numpy_path():
    S = A3 @ A3.T
    got = jacfwd(cholesky_of)(S)
    np.testing.assert_allclose(got, duals.jacrev(np.linalg.cholesky)(S), rtol=1e-11, atol=1e-13)
    upper = np.triu_indices(3, 1)
    np.testing.assert_array_equal(got[..., upper[0], upper[1]], 0.0)


def test_norm_of_the_zero_vector_has_derivative_zero():
    np.testing.assert_array_equal(jacfwd(norm_of)(np.zeros(3)), 0.0)


@pytest.mark.parametrize("a", [np.ones((2, 2)), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [2.0, 4.0, 6.0]])])
def test_det_at_a_singular_matrix_has_the_cofactors_as_derivative_and_the_numpy_paths(a):
    """A polynomial: at a singular matrix jacfwd gives the adjugate transposed (it raised), as the
    NumPy path does; the second derivative there raises, on both paths."""
    expected = duals.jacfwd(np.linalg.det)(a)
    np.testing.assert_allclose(jacfwd(det_of)(a), expected, atol=1e-13)
    assert abs(expected[0, 0] - (a[1, 1] if a.shape == (2, 2) else 6.0)) < 1e-13
    with pytest.raises(np.linalg.LinAlgError, match="second derivative (of np.linalg.det at a singular|is not)"):
        duals.hessian(det_of)(a)


def test_a_singular_solve_under_compiled_grad_says_singular_and_not_det():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match=r"^Matrix is singular to machine precision\.$"):
        duals.grad(solve_matrix_sum)(singular, np.ones((2, 2)))
    np.testing.assert_allclose(duals.grad(det_of)(singular), [[4.0, -2.0], [-2.0, 1.0]],
                               rtol=1e-12, atol=1e-14)   # the cofactors, as in every other mode


def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises():
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        jacfwd(cholesky_of)(-np.eye(2))


def test_linalg_without_a_compiled_rule_names_the_function():
    @numba.njit
    def condition(A):
        return np.linalg.cond(A) * A
    with pytest.raises(TypeError, match=r"^jacfwd: np\.linalg\.cond of dual numbers is not supported"
                                        r".*Python path"):
        jacfwd(condition)(np.eye(2))


@numba.njit
def binned_rank_weighted(A, x, edges):
    """Index and rank queries on values being differentiated: plain numbers, derivative zero."""
    k = np.searchsorted(edges, x[0]) + np.digitize(x, edges)[1]
    return np.linalg.matrix_rank(A) * A[k % A.shape[0]] * x[0]


def test_index_and_rank_queries_on_duals_are_plain_in_both_modes():
    A, x, edges = np.diag([1.0, 2.0, 0.0]), np.array([0.3, 1.7]), np.array([0.0, 1.0, 2.0])
    forward = jacfwd(binned_rank_weighted, argnums=(0, 1))(A, x, edges)
    python = duals.jacfwd(binned_rank_weighted.py_func, argnums=(0, 1))(A, x, edges)
    for got, want in zip(forward, python):
        np.testing.assert_array_equal(got, want)
    reverse = duals.jacrev(binned_rank_weighted, argnums=(0, 1))(A, x, edges)
    for got, want in zip(reverse, python):
        np.testing.assert_array_equal(got, want)


@numba.njit(cache=True)
def _matern_log_likelihood(theta, X, guarded):
    n = X.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            r2 = ((X[i] - X[j]) / math.exp(theta[0])) ** 2
            r = (math.sqrt(r2) if r2 > 0.0 else 0.0) if guarded else math.sqrt(r2)
            K[i, j] = (1.0 + math.sqrt(3.0) * r) * math.exp(-math.sqrt(3.0) * r)
        K[i, i] += 0.1
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, X)
    return np.sum(np.log(np.diag(L))) + alpha @ X + np.log(np.linalg.det(K))


def test_an_infinite_derivative_reaching_a_solve_gives_nan_as_every_other_mode_does():
    """sqrt at a zero distance (a Matérn kernel's diagonal) sends inf into the tangent lanes that
    cholesky and solve pass to LAPACK, whose check refused the whole call with 'Array must not
    contain infs or NaNs' though the plain call works (a user trial); grad and the NumPy path
    give NaN, and so does jacfwd now. The guarded kernel is exact; a value that is not finite
    is still refused as the plain call refuses it."""
    X, theta = np.array([0.0, 0.5, 1.3]), np.array([0.2])
    assert np.isnan(duals.jacfwd(_matern_log_likelihood)(theta, X, False)).all()
    assert np.isnan(duals.grad(_matern_log_likelihood)(theta, X, False)).all()
    expected = central_differences(lambda t: _matern_log_likelihood(t, X, True), [theta], 0)
    np.testing.assert_allclose(duals.jacfwd(_matern_log_likelihood)(theta, X, True), expected, rtol=1e-7)
    solve = numba.njit(lambda A, b: np.linalg.solve(A, b))
    b = np.array([1.0, np.inf])
    with pytest.raises(np.linalg.LinAlgError, match="infs or NaNs"):
        solve(np.eye(2), b)
    for argnums in (0, 1):   # a differentiated matrix; a constant one (values and lanes solved at once)
        with pytest.raises(np.linalg.LinAlgError, match="infs or NaNs"):
            duals.jacfwd(solve, argnums=argnums)(np.eye(2), b)
