"""svd, qr, lstsq and pinv: closed forms, the policy where they have no derivative (repeated and
zero singular values, the extra columns of full_matrices, rank deficiency), and realistic uses."""
import numpy as np
import pytest

import duals
from duals.testing import assert_close, numerical_jacobian

RNG = np.random.default_rng(2024)
MODES = ["jacfwd", "jacrev"]

# ---------------------------------------------------------------- closed forms


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3)])
def test_singular_value_derivative_is_u_i_v_i_transpose(mode, shape):
    a = RNG.standard_normal(shape)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    jac = getattr(duals, mode)(lambda a: np.linalg.svd(a, full_matrices=False)[1])(a)
    for i in range(s.size):
        assert_close(jac[i], np.outer(u[:, i], vh[i]), 1e-12, 1e-12, f"ds_{i}/dA")
    assert_close(getattr(duals, mode)(np.linalg.svdvals)(a), jac, 1e-12, 1e-12, "svdvals")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("full", [False, True])
def test_reconstruction_from_the_factors_has_the_identity_jacobian(mode, full):
    shape = (4, 3) if not full else (3, 3)
    a = RNG.standard_normal(shape)

    def rebuilt(a):
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        return (u[:, :3] * s) @ vh[:3]

    identity = np.eye(a.size).reshape(a.shape + a.shape)
    assert_close(getattr(duals, mode)(rebuilt)(a), identity, 1e-10, 1e-10, "d(U S Vh)/dA")
    assert_close(getattr(duals, mode)(lambda a: np.matmul(*np.linalg.qr(a)))(a), identity, 1e-10, 1e-10,
                 "d(Q R)/dA")


def test_pinv_of_a_tall_matrix_is_the_normal_equations_one():
    a = RNG.standard_normal((5, 3))
    normal = lambda a: np.linalg.solve(a.T @ a, a.T)  # noqa: E731
    assert_close(duals.jacrev(np.linalg.pinv)(a), duals.jacfwd(normal)(a), 1e-10, 1e-10, "pinv")


def test_lstsq_returns_plain_rank_and_singular_values_and_differentiates_x_and_residuals():
    a, b = RNG.standard_normal((6, 3)), RNG.standard_normal(6)
    x, res, rank, s = np.linalg.lstsq(a, duals.Var(b))
    assert isinstance(x, duals.Var) and isinstance(res, duals.Var)
    assert isinstance(s, np.ndarray) and not isinstance(rank, duals.Var) and int(rank) == 3
    x_np, res_np, _, s_np = np.linalg.lstsq(a, b)
    np.testing.assert_array_equal(x.value, x_np)
    np.testing.assert_array_equal(res.value, res_np)
    np.testing.assert_array_equal(s, s_np)
    # dx/db is the pseudo-inverse; d(residual)/db = 2 (b - a x)
    assert_close(duals.jacfwd(lambda b: np.linalg.lstsq(a, b)[0])(b), np.linalg.pinv(a), 1e-12, 1e-12, "dx/db")
    assert_close(duals.grad(lambda b: np.linalg.lstsq(a, b)[1][0])(b), 2 * (b - a @ x_np), 1e-12, 1e-12,
                 "dres/db")


@pytest.mark.parametrize("shape", [(6, 3), (3, 3), (2, 4)], ids=["tall", "square", "wide"])
def test_lstsq_singular_values_of_a_traced_matrix_are_differentiated(shape):
    """``s`` depends on ``a``: the condition number read from lstsq has the derivative of
    svd(a, compute_uv=False)'s, in both modes, and central differences agree."""
    a, b = RNG.standard_normal(shape), RNG.standard_normal(shape[0])
    condition = lambda a: np.linalg.lstsq(a, b)[3][0] / np.linalg.lstsq(a, b)[3][-1]  # noqa: E731
    by_svd = lambda a: np.linalg.svd(a, compute_uv=False)[0] / np.linalg.svd(a, compute_uv=False)[-1]  # noqa: E731
    s = np.linalg.lstsq(duals.Var(a), b)[3]
    np.testing.assert_array_equal(s.value, np.linalg.lstsq(a, b)[3])   # NumPy's values
    forward, reverse = duals.jacfwd(condition)(a), duals.grad(condition)(a)
    assert_close(reverse, forward, 1e-12, 1e-12, "grad vs jacfwd")
    assert_close(reverse, duals.grad(by_svd)(a), 1e-12, 1e-12, "the singular values' derivative")
    assert_close(reverse, numerical_jacobian(condition, [a], 0), 1e-6, 1e-7, "central differences")


def test_lstsq_of_a_wide_system_has_no_residuals_and_the_minimum_norm_derivative():
    a, b = RNG.standard_normal((2, 4)), RNG.standard_normal(2)
    x, res, rank, _ = np.linalg.lstsq(duals.Dual(a, np.zeros_like(a)), b)
    assert res.shape == (0,) and int(rank) == 2
    minimum_norm = lambda a: a.T @ np.linalg.solve(a @ a.T, b)  # noqa: E731
    assert_close(duals.jacrev(lambda a: np.linalg.lstsq(a, b)[0])(a), duals.jacfwd(minimum_norm)(a),
                 1e-10, 1e-10, "min-norm x")


def test_values_are_numpys_own():
    a = RNG.standard_normal((5, 3))
    d = duals.Dual(a, np.ones_like(a))
    for got, expected in [(np.linalg.svd(d, full_matrices=False)[0], np.linalg.svd(a, full_matrices=False)[0]),
                          (np.linalg.svd(d[:4])[0], np.linalg.svd(a[:4])[0]),
                          (np.linalg.svd(d, compute_uv=False), np.linalg.svd(a, compute_uv=False)),
                          (np.linalg.qr(d.T)[1], np.linalg.qr(a.T)[1]),       # wide: R composed
                          (np.linalg.pinv(d), np.linalg.pinv(a))]:
        np.testing.assert_array_equal(got.primal, expected)
    sq = duals.Dual(a[:3], np.ones((3, 3)))
    for got, expected in zip(np.linalg.svd(sq, hermitian=True), np.linalg.svd(a[:3], hermitian=True)):
        np.testing.assert_array_equal(got.primal, expected)

# ---------------------------------------------------------------- policy: repeated and zero singular values


@pytest.mark.parametrize("mode", MODES)
def test_singular_vectors_at_a_repeated_singular_value_raise_naming_the_gap(mode):
    a = np.diag([2.0, 2.0, 1.0])
    with pytest.raises(np.linalg.LinAlgError, match="repeated singular value.*compute_uv=False"):
        getattr(duals, mode)(lambda a: np.linalg.svd(a)[0])(a)


@pytest.mark.parametrize("mode", MODES)
def test_symmetric_functions_of_repeated_singular_values_are_exact(mode):
    # 2 Q with orthonormal columns: both singular values are 2; ||A||_F^2 and the nuclear norm
    q = np.linalg.qr(RNG.standard_normal((4, 2)))[0]
    a = 2.0 * q
    frobenius = getattr(duals, mode)(lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2))(a)
    nuclear = getattr(duals, mode)(lambda a: np.sum(np.linalg.svdvals(a)))(a)
    assert_close(frobenius, 2 * a, 1e-12, 1e-12, "d||A||_F^2")
    assert_close(nuclear, q, 1e-12, 1e-12, "d||A||_* = U V^T")
    assert_close(nuclear, numerical_jacobian(lambda a: np.sum(np.linalg.svdvals(a)), [a], 0), 1e-6, 1e-6,
                 "nuclear norm vs finite differences")


@pytest.mark.parametrize("mode", MODES)
def test_a_zero_singular_value_has_derivative_zero_and_the_nuclear_norm_its_minimum_norm_subgradient(mode):
    x, y = RNG.standard_normal(3), RNG.standard_normal(4)
    a = np.outer(x, y)                               # rank one: two zero singular values
    jac = getattr(duals, mode)(np.linalg.svdvals)(a)
    assert np.all(jac[1:] == 0.0)
    u1, v1 = x / np.linalg.norm(x), y / np.linalg.norm(y)
    assert_close(getattr(duals, mode)(lambda a: np.sum(np.linalg.svdvals(a)))(a), np.outer(u1, v1),
                 1e-12, 1e-12, "U_r V_r^T")


@pytest.mark.parametrize("mode", MODES)
def test_singular_vectors_of_a_rank_deficient_matrix_raise(mode):
    a = np.outer(RNG.standard_normal(3), RNG.standard_normal(3))
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient.*compute_uv=False"):
        getattr(duals, mode)(lambda a: np.linalg.svd(a)[2] ** 2)(a)

# ---------------------------------------------------------------- policy: the extra columns of full_matrices


def test_forward_mode_through_two_or_more_extra_columns_raises_and_says_full_matrices_false():
    a = RNG.standard_normal((5, 3))
    with pytest.raises(np.linalg.LinAlgError, match=r"last 2 columns of U.*full_matrices=False"):
        duals.jacfwd(lambda a: np.linalg.svd(a)[1])(a)


@pytest.mark.parametrize("shape", [(5, 3), (2, 5)])
def test_reverse_mode_through_the_extra_columns_is_exact_for_their_projector(shape):
    a = RNG.standard_normal(shape)
    m, n = shape
    k = min(m, n)

    def projector(a):
        u, s, vh = np.linalg.svd(a)
        rest = u[:, k:] if m > n else vh[k:].T
        return rest @ rest.T

    def complement(a):   # the same projector from the reduced SVD: I - U U^T (or I - V V^T)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        basis = u if m > n else vh.T
        return np.eye(max(m, n)) - basis @ basis.T

    expected = duals.jacfwd(complement)(a)
    assert_close(duals.jacrev(projector)(a), expected, 1e-10, 1e-10, "projector onto the complement")
    assert_close(expected, numerical_jacobian(projector, [a], 0), 1e-6, 1e-6, "vs finite differences")


def test_reverse_mode_that_depends_on_the_basis_of_the_extra_columns_raises():
    a = RNG.standard_normal((5, 3))
    with pytest.raises(np.linalg.LinAlgError, match="depends on which basis was picked"):
        duals.grad(lambda a: np.sum(np.linalg.svd(a)[0][:, 3:]))(a)


def test_reverse_mode_of_the_default_svd_using_only_values_and_leading_vectors_works():
    a = RNG.standard_normal((6, 2))
    f_full = lambda a: np.sum(np.linalg.svd(a)[1]) + np.sum(np.linalg.svd(a)[0][:, :2] ** 3)  # noqa: E731
    f_reduced = lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[1]) + np.sum(  # noqa: E731
        np.linalg.svd(a, full_matrices=False)[0] ** 3)
    assert_close(duals.grad(f_full)(a), duals.grad(f_reduced)(a), 1e-12, 1e-12, "default svd in reverse")

# ---------------------------------------------------------------- policy: qr, lstsq and pinv


@pytest.mark.parametrize("mode", MODES)
def test_qr_of_dependent_columns_raises(mode):
    a = RNG.standard_normal((4, 3))
    a[:, 2] = a[:, 0] - 2 * a[:, 1]
    with pytest.raises(np.linalg.LinAlgError, match="linearly dependent"):
        getattr(duals, mode)(lambda a: np.linalg.qr(a)[0])(a)


@pytest.mark.parametrize("mode,match", [("complete", "mode='complete' of a tall matrix"),
                                        ("raw", "Householder form")])
def test_qr_modes_without_a_derivative_say_what_to_use(mode, match):
    d = duals.Dual(RNG.standard_normal((4, 2)), np.ones((4, 2)))
    with pytest.raises(NotImplementedError, match=f"{match}.*use mode='reduced' or mode='r'"):
        np.linalg.qr(d, mode=mode)


def test_qr_complete_of_a_wide_matrix_is_the_reduced_one():
    a = RNG.standard_normal((2, 3))
    f = lambda mode: lambda a: np.linalg.qr(a, mode=mode)[0]  # noqa: E731
    assert_close(duals.jacfwd(f("complete"))(a), duals.jacfwd(f("reduced"))(a), 0, 0, "complete = reduced")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", [lambda a: np.linalg.lstsq(a, np.ones(4))[0], np.linalg.pinv],
                         ids=["lstsq", "pinv"])
def test_lstsq_and_pinv_of_a_rank_deficient_matrix_raise(mode, call):
    a = np.outer(RNG.standard_normal(4), RNG.standard_normal(3)) + np.outer(RNG.standard_normal(4), [1.0, 0, 0])
    assert np.linalg.matrix_rank(a) == 2
    with pytest.raises(np.linalg.LinAlgError, match=r"rank deficient \(rank 2 < 3\)"):
        getattr(duals, mode)(call)(a)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("columns", [None, 2], ids=["vector", "matrix"])
def test_lstsq_of_a_constant_rank_deficient_matrix_is_linear_in_b(mode, columns):
    a = np.outer(RNG.standard_normal(4), RNG.standard_normal(3)) + np.outer(RNG.standard_normal(4), [1.0, 0, 0])
    b = RNG.standard_normal(4 if columns is None else (4, columns))
    solve = lambda b: np.linalg.lstsq(a, b, rcond=None)[0]  # noqa: E731
    jac = getattr(duals, mode)(solve)(b)
    assert_close(jac, numerical_jacobian(solve, (b,), 0), 1e-7, 1e-8, "finite differences")
    assert_close(np.tensordot(jac, b, b.ndim), solve(b), 1e-12, 1e-12, "linear in b")


def test_pinv_hermitian_reads_the_lower_triangle_as_numpy_does():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    jac = duals.jacrev(lambda a: np.linalg.pinv(a, hermitian=True))(a)
    assert np.all(jac[..., np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] == 0)


def test_hermitian_svd_at_a_zero_eigenvalue_raises():
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        duals.jacfwd(lambda a: np.linalg.svd(a, hermitian=True)[0])(np.diag([2.0, 0.0, 1.0]))

# ---------------------------------------------------------------- realistic uses


def total_least_squares_slope(points):
    """Orthogonal-regression line through 2-D points: its slope from the last right singular vector."""
    centred = points - points.mean(axis=0)
    normal = np.linalg.svd(centred, full_matrices=False)[2][-1]
    return -normal[0] / normal[1]            # independent of the sign LAPACK gives the vector


def test_total_least_squares_slope_gradcheck():
    x = np.linspace(0.0, 1.0, 8)
    points = np.column_stack([x, 0.7 * x + 0.05 * RNG.standard_normal(8)])
    assert duals.gradcheck(total_least_squares_slope, points)


def test_explained_variance_of_pca_by_the_default_svd_in_reverse_mode():
    data = RNG.standard_normal((30, 3)) @ np.diag([3.0, 1.0, 0.3])

    def explained(x):
        s = np.linalg.svd(x - x.mean(axis=0))[1]      # full_matrices=True, as written in tutorials
        return s[0] ** 2 / np.sum(s ** 2)

    expected = numerical_jacobian(explained, [data], 0)
    assert_close(duals.grad(explained)(data), expected, 1e-6, 1e-6, "explained variance ratio")


def test_polynomial_fit_by_lstsq_matches_the_normal_equations():
    t = np.linspace(-1.0, 1.0, 12)
    y = np.cos(2.0 * t)

    def fitted_curvature(y, degree=3):
        coef = np.linalg.lstsq(np.vander(t, degree + 1), y)[0]
        return coef[-3]

    def normal_equations(y, degree=3):
        v = np.vander(t, degree + 1)
        return np.linalg.solve(v.T @ v, v.T @ y)[-3]

    assert_close(duals.grad(fitted_curvature)(y), duals.grad(normal_equations)(y), 1e-10, 1e-10, "fit")
    assert duals.gradcheck(fitted_curvature, y)


def test_results_are_numpys_own_namedtuples_so_cotangents_built_from_numpy_fit():
    a = RNG.standard_normal((4, 3))
    d = duals.Dual(a, np.ones_like(a))
    for call in (np.linalg.svd, np.linalg.qr, lambda a: np.linalg.eigh(a.T @ a),
                 lambda a: np.linalg.slogdet(a.T @ a)):
        assert type(call(d)) is type(call(a))
    out, pullback = duals.vjp(lambda a: np.linalg.svd(a, full_matrices=False), a)
    cotangent = type(out)(*(np.ones_like(o) for o in np.linalg.svd(a, full_matrices=False)))
    assert pullback(cotangent)[0].shape == a.shape
