"""The policy of eigh/eigvalsh at repeated eigenvalues, and a realistic use."""
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from finite_differences import central_differences


def test_eigenvector_derivative_at_a_repeated_eigenvalue_raises_naming_the_gap():
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue.*eigvalsh"):
        duals.grad(lambda A: np.sum(np.linalg.eigh(A)[1]))(np.eye(3))


def test_a_basis_independent_function_of_eigenvectors_at_a_tie_is_refused_saying_so():
    # V diag(f(w)) Vᵀ (a return map in principal stresses, at zero strain) does not depend on the
    # basis inside the eigenspace, but duals differentiates V: the advice said to write exactly
    # such a function (a plasticity trial)
    def rebuilt(S):
        w, V = np.linalg.eigh(S)
        return V @ np.diag(2.0 * w) @ V.T
    with pytest.raises(np.linalg.LinAlgError, match=r"^eigh: .*a use of the repeated ones' vectors raises "
                                                    r"here .*even in a function that does not depend on the basis"):
        duals.jacrev(rebuilt)(np.zeros((3, 3)))
    with pytest.warns(RuntimeWarning, match=r"eigh: eigenvalues 0, 1 and 2 .*tangents are NaN.*does not "
                                            r"depend on the basis"):
        assert np.isnan(duals.jacfwd(rebuilt)(np.zeros((3, 3)))).all()   # (forward mode cannot know)
    lower = lambda S: 2.0 * (np.tril(S) + np.tril(S, -1).T)   # noqa: E731 (eigh reads the lower triangle)
    S = np.diag([1.0, 2.0, 4.0])
    np.testing.assert_allclose(duals.jacfwd(rebuilt)(S), duals.jacfwd(lower)(S), atol=1e-12)


def test_a_second_derivative_of_eigvalsh_at_a_tie_is_refused_in_its_own_name():
    # (it named eigh, and advised eigvalsh, to code that calls only eigvalsh)
    with pytest.raises(np.linalg.LinAlgError,
                       match=r"^eigvalsh: a second derivative \(hessian, hvp, a Jacobian of a gradient\)"):
        duals.hessian(lambda S: np.sum(np.linalg.eigvalsh(S) ** 2))(np.diag([2.0, 2.0, 5.0]))


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


# ---------------------------------------------------------------- general matrices: eig, eigvals

def damped_oscillators(c):
    """The system matrix of two masses on springs with dampers ``c``: x'' = -K x - diag(c) x'."""
    K = np.array([[2.0, -1.0], [-1.0, 2.0]])
    return np.block([[np.zeros((2, 2)), np.eye(2)], [-K, -np.diag(c)]])


def spectral_abscissa(c):
    """The slowest decay rate: the largest real part of the eigenvalues (a stability margin)."""
    return np.max(np.linalg.eigvals(damped_oscillators(c)).real)


def test_stability_margin_of_damped_oscillators_matches_differences_in_every_mode():
    c = np.array([0.3, 0.7])
    h = 1e-6
    central = np.array([(spectral_abscissa(c + h * e) - spectral_abscissa(c - h * e)) / (2 * h)
                        for e in np.eye(2)])
    for transform in (duals.grad, duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(spectral_abscissa)(c), central, rtol=1e-6)
    H = duals.hessian(spectral_abscissa)(c)
    np.testing.assert_allclose(H, H.T, rtol=1e-10)
    np.testing.assert_allclose(H[:, 0], (duals.grad(spectral_abscissa)(c + h * np.eye(2)[0])
                                         - duals.grad(spectral_abscissa)(c - h * np.eye(2)[0])) / (2 * h),
                               rtol=1e-5, atol=1e-8)


def test_eigenvalue_derivative_is_the_left_right_eigenvector_product():
    # dλ_i/dA_kl = u_ik v_li with U = V⁻¹ (rows: left eigenvectors scaled to uᵢ·vᵢ = 1)
    A = np.array([[1.0, 2.0, 0.5], [-1.0, 0.5, 1.0], [0.3, -0.7, 2.0]])
    w, V = np.linalg.eig(A)
    U = np.linalg.inv(V)
    closed = np.einsum("ik,li->ikl", U, V)
    np.testing.assert_allclose(duals.jacfwd(np.linalg.eigvals)(A), closed, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(duals.jacfwd(np.linalg.eigvals, holomorphic=True)(A + 0j), closed,
                               rtol=1e-12, atol=1e-13)


def test_eigenvectors_keep_numpys_normalisation_to_first_order():
    rng = np.random.default_rng(8)
    A = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    T = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    V, dV = duals.jvp(lambda a: np.linalg.eig(a)[1], (A,), (T,))
    np.testing.assert_allclose(np.real(np.sum(np.conj(V) * dV, axis=0)), 0, atol=1e-12)   # norm 1
    largest = np.argmax(np.abs(V), axis=0)
    np.testing.assert_allclose(dV[largest, range(4)].imag, 0, atol=1e-12)                # stays real
    h = 1e-6
    central = (np.linalg.eig(A + h * T)[1] - np.linalg.eig(A - h * T)[1]) / (2 * h)
    np.testing.assert_allclose(dV, central, rtol=1e-6, atol=1e-7)


def test_repeated_eigenvalues_and_equal_largest_entries_raise_naming_the_way_out():
    with pytest.raises(np.linalg.LinAlgError, match=r"eigvals: eigenvalues 0, 1 and 2 \(in NumPy's order\) "
                                                    r"are repeated .*uses them.*np\.trace"):
        duals.grad(lambda A: np.sum(np.linalg.eigvals(A)))(np.eye(3))
    with pytest.raises(np.linalg.LinAlgError, match="eig: the eigenvectors have no derivative"):
        duals.jacrev(lambda A: np.linalg.eig(A)[1])(np.diag([1.0, 1.0, 2.0]))
    with pytest.warns(RuntimeWarning, match=r"eig: eigenvalues 0 and 1 .*repeated.*tangents are NaN"):
        vectors = duals.jacfwd(lambda A: np.linalg.eig(A)[1])(np.diag([1.0, 1.0, 2.0]))
    assert np.isnan(vectors[:, :2]).all() and np.isfinite(vectors[:, 2]).all()   # the simple one's is exact
    rotation = np.array([[0.0, 1.0], [-1.0, 0.0]])   # eigenvectors (1, ±i)/√2: equal moduli
    with pytest.raises(np.linalg.LinAlgError, match="two entries of equal largest modulus.*eigvals"):
        duals.jacrev(lambda A: np.real(np.linalg.eig(A)[1]))(rotation)
    np.testing.assert_allclose(duals.jacfwd(lambda A: np.linalg.eigvals(A).imag)(rotation)[0],
                               [[0.0, 0.5], [-0.5, 0.0]], atol=1e-15)   # the values stay differentiable


CYCLE = np.roll(np.eye(3), 1, axis=1)
STOCHASTIC = 0.3 * np.eye(3) + 0.5 * CYCLE + 0.2 * CYCLE.T   # a complex pair, and 1 with vector (1, 1, 1)


def moved_chain(x):
    E, F = np.zeros((3, 3)), np.zeros((3, 3))
    E[0, 0], E[0, 1], F[1, 1], F[1, 2] = -1.0, 1.0, -1.0, 1.0   # rows still sum to 1
    return STOCHASTIC + x[0] * E + x[1] * F


def test_a_tie_of_largest_entries_raises_only_where_a_phase_is_used():
    """(A stability trial) a real eigenvector of a real matrix (a stochastic matrix's constant one)
    has no phase to follow, and eigvals' own use does not depend on phases: Hessians of eigvals and
    phase-free functions of the other vectors raised "two entries of equal largest modulus"."""
    x = np.array([0.01, 0.02])
    second_modulus = lambda x: np.sort(np.abs(np.linalg.eigvals(moved_chain(x))))[-2]   # noqa: E731 (mixing)
    gradient = duals.grad(second_modulus)
    central = central_differences(gradient, [x], 0, h=1e-5)
    for hessian in (duals.hessian(second_modulus), duals.jacfwd(gradient), duals.jacrev(gradient)):
        np.testing.assert_allclose(hessian(x), central, rtol=1e-7, atol=1e-9)

    def weight(x):   # |v0|² / Σ|v|² of the vector of the eigenvalue of largest imaginary part
        w, V = np.linalg.eig(moved_chain(x))
        v = V[:, np.argmax(w.imag)]
        return np.abs(v[0]) ** 2 / np.sum(np.abs(v) ** 2)
    for transform in (duals.jacfwd, duals.grad):
        np.testing.assert_allclose(transform(weight)(x), central_differences(weight, [x], 0), rtol=1e-7)
    # a symmetric structure's complex modes: |v_i| = |v_(n-1-i)|, the second derivative of eigvals
    flip = np.fliplr(np.eye(4))
    mirrored = lambda s: np.max(np.linalg.eigvals(np.diag([1.0, 2.0, 2.0, 1.0]) * s + 3.0 * np.roll(np.eye(4), 1, 1)
                                                  - 3.0 * np.roll(np.eye(4), -1, 1) + s * s * flip).real)   # noqa: E731
    np.testing.assert_allclose(duals.hessian(mirrored)(0.7), central_differences(duals.grad(mirrored), [0.7], 0),
                               rtol=1e-6)


def leslie(theta):
    """A Leslie matrix of 5 age classes whose last two do not reproduce: 0 is a double eigenvalue
    (a Jordan block: the matrix is defective), the Perron root simple."""
    f1, f2, f3, s1, s2, s3, s4 = theta
    A = np.diag(dnp.stack([s1, s2, s3, s4]), k=-1)
    return A + np.outer(np.eye(5)[0], dnp.stack([f1, f2, f3, 0.0 * f1, 0.0 * f1]))


def perron_sensitivity(A):
    """∂λ/∂A = v wᵀ / (v · w), the left and right eigenvectors of the dominant eigenvalue."""
    values, right = np.linalg.eig(A)
    k = np.argmax(values.real)
    left_values, left = np.linalg.eig(A.T)
    v, w = left[:, np.argmin(np.abs(left_values - values[k]))].real, right[:, k].real
    return np.outer(v, w) / (v @ w)


def test_a_simple_eigenvalue_is_differentiated_however_the_others_coincide():
    """Demography's dominant eigenvalue next to a repeated (even defective) zero: every mode
    raised 'repeated eigenvalue' for the whole function (a user trial: Leslie matrices with
    post-reproductive classes, low-rank integral projection kernels, R0 = ρ(F V⁻¹))."""
    theta = np.array([0.5, 1.2, 0.8, 0.6, 0.7, 0.5, 0.4])
    A = np.asarray(leslie(theta))
    growth = lambda t: np.max(np.linalg.eigvals(leslie(t)).real)   # noqa: E731
    expected = duals.jacfwd(leslie)(theta).reshape(25, 7).T @ perron_sensitivity(A).ravel()
    np.testing.assert_allclose(expected, central_differences(growth, [theta], 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(duals.grad(growth)(theta), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(duals.grad(lambda t: np.max(np.linalg.eig(leslie(t))[0].real))(theta),
                               expected, rtol=1e-10, atol=1e-12)      # eig, its vectors unused
    with pytest.warns(RuntimeWarning, match=r"eigvals: eigenvalues \d and \d \(in NumPy's order\) are "
                                            r"repeated .*tangents are NaN.*dominant"):
        np.testing.assert_allclose(duals.jacfwd(growth)(theta), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(duals.grad(lambda a: np.max(np.linalg.eigvals(a).real))(A),
                               perron_sensitivity(A), rtol=1e-10, atol=1e-12)
    with pytest.warns(RuntimeWarning):   # all the eigenvalues: the repeated ones' rows are NaN
        every = duals.jacfwd(lambda a: np.linalg.eigvals(a).real)(A)
    values = np.linalg.eigvals(A)
    repeated = np.abs(values) < 1e-8
    assert np.isnan(every[repeated]).all() and np.isfinite(every[~repeated]).all()
    with pytest.raises(np.linalg.LinAlgError, match="repeated .*and the function uses them"):
        duals.jacrev(lambda a: np.linalg.eigvals(a).real)(A)


def test_the_basic_reproduction_number_of_a_rank_one_next_generation_matrix():
    """R0 = ρ(F V⁻¹) of an SEIIR model: F has one non-zero row, so F V⁻¹ has the eigenvalues
    [R0, 0, 0]; R0's closed form checks every mode."""
    def next_generation(p):
        beta1, beta2, sigma, gamma1, gamma2, mu = p
        F = np.outer(np.eye(3)[0], dnp.stack([0.0 * mu, beta1, beta2]))
        V = np.diag(dnp.stack([sigma + mu, gamma1 + mu, gamma2 + mu]))
        V = V - np.outer(np.eye(3)[1], dnp.stack([sigma, 0.0 * mu, 0.0 * mu]))
        V = V - np.outer(np.eye(3)[2], dnp.stack([0.0 * mu, gamma1, 0.0 * mu]))
        return F @ np.linalg.inv(V)

    def closed(p):
        beta1, beta2, sigma, gamma1, gamma2, mu = p
        return sigma / (sigma + mu) * (beta1 + beta2 * gamma1 / (gamma2 + mu)) / (gamma1 + mu)

    p = np.array([0.9, 0.4, 0.3, 0.25, 0.2, 0.02])
    R0 = lambda q: np.max(np.abs(np.linalg.eigvals(next_generation(q))))   # noqa: E731
    assert R0(p) == pytest.approx(closed(p), rel=1e-12)
    expected = duals.grad(closed)(p)
    np.testing.assert_allclose(duals.grad(R0)(p), expected, rtol=1e-10)
    with pytest.warns(RuntimeWarning, match="repeated"):
        np.testing.assert_allclose(duals.jacfwd(R0)(p), expected, rtol=1e-10)


def test_a_simple_eigenvalue_and_its_vector_keep_their_derivatives_beside_a_repeated_pair():
    """w, V = eigh(A) with a repeated pair elsewhere: w[k] and V[:, k] of a simple eigenvalue
    raised in every mode, though only the repeated ones' vectors have no derivative (a user
    trial: symmetric designs in topology optimisation repeat higher eigenvalues)."""
    A = np.diag([1.0, 1.0, 2.0, 3.0])
    A[2, 3] = A[3, 2] = 0.1
    c = np.array([0.3, -0.2, 0.5, 0.7])

    def value(a):
        return np.linalg.eigh(a)[0][2]

    def vector(a):
        w, V = np.linalg.eigh(a)
        return (V[:, 2] * np.sign(V[2, 2])) @ c

    expected = duals.grad(lambda a: np.linalg.eigvalsh(a)[2])(A)
    np.testing.assert_allclose(duals.grad(value)(A), expected, rtol=1e-12, atol=1e-14)
    differences = central_differences(vector, [A], 0)
    np.testing.assert_allclose(duals.grad(vector)(A), differences, rtol=1e-6, atol=1e-8)
    with pytest.warns(RuntimeWarning, match="eigenvalues 0 and 1 .*are repeated"):
        np.testing.assert_allclose(duals.jacfwd(value)(A), expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(duals.jacfwd(vector)(A), differences, rtol=1e-6, atol=1e-8)
    with pytest.raises(np.linalg.LinAlgError, match="repeated ones' vectors"):
        duals.grad(lambda a: np.linalg.eigh(a)[1][0, 0] ** 2)(A)


def test_the_dominant_eigenvector_of_a_matrix_with_repeated_zero_eigenvalues():
    """k-effective and the power shape of M⁻¹F, whose zero eigenvalues repeat (F vanishes outside
    the fuel): eig's dominant vector raised in every mode, and a second derivative of the dominant
    eigenvalue too (a user trial, a criticality search differentiated again)."""
    def operator(p):
        return np.outer(dnp.stack([p[0], 1.0 + 0.0 * p[0], 0.5 * p[1]]), np.array([1.0, 0.0, 0.0]) + 0.0 * p[1]) \
            + np.diag(dnp.stack([0.0 * p[0], 0.0 * p[0], 0.0 * p[0]]))

    def shape(p):
        w, V = np.linalg.eig(operator(p))
        v = V[:, np.argmax(w.real)].real
        return v / v[0]

    def dominant(p):
        return np.max(np.linalg.eigvals(operator(p)).real)

    p = np.array([2.0, 0.7])
    differences = central_differences(shape, [p], 0)
    np.testing.assert_allclose(duals.jacrev(shape)(p), differences, rtol=1e-7, atol=1e-9)
    with pytest.warns(RuntimeWarning, match="repeated"):
        np.testing.assert_allclose(duals.jacfwd(shape)(p), differences, rtol=1e-7, atol=1e-9)
    gradient = duals.grad(dominant)
    with pytest.warns(RuntimeWarning, match="repeated"):
        np.testing.assert_allclose(duals.hessian(dominant)(p), central_differences(gradient, [p], 0),
                                   rtol=1e-6, atol=1e-8)


def test_a_defective_repeated_eigenvalue_reached_by_a_zero_cotangent_is_refused_not_dropped():
    """Σ λ² of a matrix with a defective double eigenvalue 0: its cotangent 2λ is zero in value, but
    λ moves like √ε and λ·dλ has a finite limit; taking the zero for 'unused' dropped that part:
    grad gave [[0,0,0],[0,0,0],[0,0,4]] against 2Aᵀ (a user trial). Only a structurally zero
    cotangent counts as unused now."""
    A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    for decomposition in (np.linalg.eigvals, lambda a: np.linalg.eig(a)[0]):
        with pytest.raises(np.linalg.LinAlgError, match="repeated .*uses them"):
            duals.grad(lambda a: np.real(np.sum(decomposition(a) ** 2)))(A)
    np.testing.assert_allclose(duals.grad(lambda a: np.trace(a @ a))(A), 2 * A.T)   # the way it advises


def test_a_simple_eigenvalue_of_eigh_has_its_second_derivative_beside_a_repeated_pair():
    """Its Hessian was NaN: the repeated pair's vectors (NaN tangents at second order) entered the
    first-order rule multiplied by their zero cotangents (a user trial)."""
    def largest(p):
        S = np.diag([1.0, 1.0, 3.0]) + p[0] * (np.outer([1.0, 0, 0], [0, 0, 1.0]) + np.outer([0, 0, 1.0], [1.0, 0, 0])) \
            + p[1] * (np.outer([0, 1.0, 0], [0, 0, 1.0]) + np.outer([0, 0, 1.0], [0, 1.0, 0]))
        return np.linalg.eigh(S)[0][2]        # 2 + sqrt(1 + p0² + p1²): Hessian I at 0

    with pytest.warns(RuntimeWarning, match="repeated"):
        np.testing.assert_allclose(duals.hessian(largest)(np.zeros(2)), np.eye(2), atol=1e-12)


# An Ogden energy through the principal stretches, as a materials code writes it, at F = R Q U Qᵀ
# with U a uniaxial stretch: Fᵀ F has an exact double eigenvalue that rounding splits by 1.9e-15
# (4 eps of the largest), just above the former tie tolerance n · eps · max|λ| (hyperelasticity
# trial: hessian's tangent stiffness came out 16 % off, without a word)
OGDEN_MU, OGDEN_ALPHA = np.array([0.6, 0.01, -0.05]), np.array([1.3, 5.0, -2.0])
ROTATED_UNIAXIAL = np.array([-0.9563653242481446, -0.12439472594187462, 0.0021992257167745923,
                             -0.0990697397928751, -0.7296277559066828, 0.5066526510623615,
                             -0.6272585778569517, 0.34621876606781204, 1.1580287879150306])


def ogden_through_eigvalsh(F_flat):
    F = F_flat.reshape(3, 3)
    stretches = np.sqrt(np.linalg.eigvalsh(F.T @ F))
    return sum(m / a * (np.sum(stretches ** a) - 3.0) for m, a in zip(OGDEN_MU, OGDEN_ALPHA))


def ogden_through_eigh(F_flat):
    F = F_flat.reshape(3, 3)
    w, V = np.linalg.eigh(F.T @ F)   # the vectors unused
    return sum(m / a * (np.sum(np.sqrt(w) ** a) - 3.0) for m, a in zip(OGDEN_MU, OGDEN_ALPHA))


@pytest.mark.filterwarnings("ignore:eigh. eigenvalues 0 and 1:RuntimeWarning")   # (jacfwd, then raised)
def test_a_tie_that_rounding_split_is_a_tie_for_the_second_derivative():
    w = np.linalg.eigvalsh(ROTATED_UNIAXIAL.reshape(3, 3).T @ ROTATED_UNIAXIAL.reshape(3, 3))
    assert 3 * np.finfo(float).eps * w[-1] < w[1] - w[0] < 1e-14   # the case: split by rounding
    for energy in (ogden_through_eigvalsh, ogden_through_eigh):
        np.testing.assert_allclose(duals.grad(energy)(ROTATED_UNIAXIAL),
                                   central_differences(energy, [ROTATED_UNIAXIAL], 0), atol=1e-8)
        for second in (duals.hessian, lambda f: duals.jacrev(duals.grad(f)),
                       lambda f: duals.jacfwd(duals.grad(f))):
            with pytest.raises(np.linalg.LinAlgError, match=r"^eig(h|valsh): a second derivative .*"
                                                             r"symmetric in them.*invariants"):
                second(energy)(ROTATED_UNIAXIAL)


def test_the_second_derivative_off_a_tie_is_exact_above_the_tolerance():
    # the same energy at a stretch whose eigenvalues are 1e-6 apart, relative: computed, and exact
    # to the accuracy the gap allows (eps / gap)
    F = np.diag([1.5, 1.5 ** -0.5 * (1.0 + 1e-6), 1.5 ** -0.5]).ravel()
    H = duals.hessian(ogden_through_eigvalsh)(F)
    np.testing.assert_allclose(H, central_differences(duals.grad(ogden_through_eigvalsh), [F], 0),
                               atol=1e-6)


def test_compiled_code_counts_the_same_ties():
    import numba

    @numba.njit
    def ogden(F_flat, mus, alphas):
        F = F_flat.reshape(3, 3)
        w = np.linalg.eigvalsh(F.T @ F)
        total = 0.0
        for p in range(mus.size):
            for i in range(3):
                total += mus[p] / alphas[p] * (np.sqrt(w[i]) ** alphas[p] - 1.0)
        return total

    args = (ROTATED_UNIAXIAL, OGDEN_MU, OGDEN_ALPHA)
    np.testing.assert_allclose(duals.grad(ogden)(*args), duals.grad(ogden_through_eigvalsh)(args[0]),
                               rtol=1e-12, atol=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="eigvalsh under forward over reverse.*symmetric in them"):
        duals.hessian(ogden)(*args)


# Roots and eigenvalues of general matrices that rounding split from a defective (repeated) one:
# a double root comes out ~sqrt(eps) apart and a triple one ~eps^(1/3), above the gap's test, and
# their derivatives were returned, wrong by O(1) or more (DSP trial: a triple root's radius had
# derivative -7.7e9; two identical biquads in cascade gave a wrong pole-radius gradient silently)
@pytest.mark.parametrize("p", [[1.0, -1.8, 0.81], [1.0, -3.0, 3.0, -1.0],
                               np.convolve([1.0, -1.6, 0.81], [1.0, -1.6, 0.81])],
                         ids=["double", "triple", "double-pair"])
@pytest.mark.parametrize("transform", [duals.jacfwd, duals.jacrev])
def test_a_root_split_by_rounding_is_a_repeated_root(p, transform):
    with pytest.raises(np.linalg.LinAlgError, match=r"^roots: a repeated root has no derivative"):
        transform(lambda q: np.max(np.abs(np.roots(q))))(np.asarray(p, float))


def test_a_near_double_root_keeps_its_derivative():
    # roots 1 ± 1e-3 (c = 1 - 1e-6): the larger one 1 + sqrt(1 - c) has dr/dc = -1 / (2 sqrt(1 - c))
    p = np.array([1.0, -2.0, 1.0 - 1e-6])
    got = duals.jacrev(lambda q: np.max(np.roots(q)))(p)
    np.testing.assert_allclose(got[2], -0.5 / np.sqrt(1e-6), rtol=1e-8)
    np.testing.assert_allclose(got, central_differences(lambda q: np.max(np.roots(q)), [p], 0, h=1e-9),
                               rtol=1e-5)


def test_a_defective_eigenvalue_split_by_rounding_has_no_derivative_and_the_simple_one_keeps_its():
    rng = np.random.default_rng(0)
    S = rng.standard_normal((3, 3))
    A = S @ np.array([[0.9, 1.0, 0.0], [0.0, 0.9, 0.0], [0.0, 0.0, 0.3]]) @ np.linalg.inv(S)

    def largest(a):
        return np.max(np.real(np.linalg.eigvals(a)))

    def smallest(a):
        return np.min(np.real(np.linalg.eigvals(a)))

    with pytest.raises(np.linalg.LinAlgError, match=r"^eigvals: eigenvalues 1 and 2 .*repeated"):
        duals.grad(largest)(A)
    with pytest.warns(RuntimeWarning, match=r"eigvals: eigenvalues 1 and 2 .*repeated"):
        assert np.isnan(duals.jacfwd(largest)(A)).all()
    expected = central_differences(smallest, [A], 0)
    np.testing.assert_allclose(duals.grad(smallest)(A), expected, rtol=1e-6, atol=1e-8)
    with pytest.warns(RuntimeWarning, match=r"eigvals: eigenvalues 1 and 2"):
        np.testing.assert_allclose(duals.jacfwd(smallest)(A), expected, rtol=1e-6, atol=1e-8)


def test_two_repeated_pairs_are_named_as_two_groups():
    # (quantum chemistry trial: "eigenvalues 1, 2, 3 and 4 are repeated" read as a four-fold tie)
    S = np.diag([0.0, 1.0, 1.0, 2.0, 2.0, 3.0])
    with pytest.warns(RuntimeWarning, match=r"eigh: eigenvalues 1 and 2, and 3 and 4 \(2 groups\)"):
        duals.jacfwd(lambda s: np.linalg.eigh(s)[1].sum())(S)


def double_well(b, n=600, L=6.0):
    """(grid, Hamiltonian) of (x² - b²)² on a finite-difference grid (ħ = m = 1)."""
    x = np.linspace(-L, L, n)
    h = x[1] - x[0]
    kinetic = (np.diag(np.full(n, 2.0)) - np.eye(n, k=1) - np.eye(n, k=-1)) / (2 * h * h)
    return x, kinetic + np.diag((x ** 2 - b ** 2) ** 2)


def double_well_ground_state_spread(b):
    """<x²> of the double well's ground state."""
    x, H = double_well(b)
    w, v = np.linalg.eigh(H)
    return np.sum(v[:, 0] ** 2 * x ** 2)


def test_a_small_gap_on_a_fine_grid_keeps_its_derivative():
    # (Numerov trial) the tunnelling doublet's gap 3.7e-5 is 5e-9 of max|λ| ~ 2/h²: sqrt(eps)
    # called it a tie and refused a derivative good to 1e-10 (against the perturbation sum)
    b = 1.96
    x, H = double_well(b)
    w, v = np.linalg.eigh(H)
    A, B = v.T @ (x ** 2 * v[:, 0]), v.T @ (-4 * b * (x ** 2 - b ** 2) * v[:, 0])
    expected = 2 * np.sum(A[1:] * B[1:] / (w[0] - w[1:]))
    assert duals.grad(double_well_ground_state_spread)(b) == pytest.approx(expected, rel=1e-9)
