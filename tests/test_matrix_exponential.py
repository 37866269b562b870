"""duals.numpy.linalg.expm against closed forms, SciPy's Fréchet derivative and finite differences,
at repeated eigenvalues too (the starting point of a substitution-model fit, a phylogenetics trial)."""
import numpy as np
import pytest
import scipy.linalg

import duals
import duals.numpy as dnp
from duals.testing import numerical_jacobian

expm = dnp.linalg.expm


def _rotation(t):
    return expm(t * np.array([[0.0, 1.0], [-1.0, 0.0]]))


def test_value_is_scipys_and_a_rotation_has_its_closed_form_derivatives():
    a = np.random.default_rng(0).normal(size=(2, 4, 4))
    np.testing.assert_array_equal(expm(a), scipy.linalg.expm(a))
    t = 0.7
    exact = np.array([[-np.sin(t), np.cos(t)], [-np.cos(t), -np.sin(t)]])
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(_rotation)(t), exact, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(duals.hessian(lambda t: _rotation(t)[0, 0])(t), -np.cos(t), rtol=1e-13)


def test_derivative_is_scipys_frechet_derivative_and_reverse_is_its_transpose():
    rng = np.random.default_rng(1)
    a, e, g = rng.normal(size=(3, 5, 5))
    _, frechet = scipy.linalg.expm_frechet(a, e)
    _, tangent = duals.jvp(expm, (a,), (e,))
    np.testing.assert_allclose(tangent, frechet, rtol=1e-12, atol=1e-13)
    _, pullback = duals.vjp(expm, a)
    (cotangent,) = pullback(g)
    assert np.isclose(np.sum(tangent * g), np.sum(e * cotangent), rtol=1e-12)
    # a direction far larger than a is scaled first: no squarings lost to its norm
    _, big = duals.jvp(expm, (a,), (1e8 * e,))
    np.testing.assert_allclose(big, 1e8 * frechet, rtol=1e-12)


def _log_likelihood(rates, t, counts):
    """A GTR-style symmetric substitution model at equal rates (Jukes-Cantor): the rate matrix has a
    triple eigenvalue, where an eigh-based P(t) = V e^{Λt} Vᵀ has no derivative."""
    iu = np.triu_indices(4, 1)
    upper = np.zeros((4, 4, 6))
    upper[iu[0], iu[1], np.arange(6)] = 1.0
    q = upper @ rates
    q = q + q.T
    q = q - np.diag(np.sum(q, axis=1))
    p = expm(q * (t / np.mean(-np.diag(q))))   # t in expected substitutions per site
    return np.sum(counts * np.log(p))


def test_gradient_and_hessian_at_a_repeated_eigenvalue_agree_with_finite_differences():
    rates, t = np.ones(6), 0.3
    counts = np.array([[90, 5, 12, 3], [4, 60, 2, 11], [10, 3, 70, 4], [2, 13, 5, 95]], float)
    assert np.ptp(np.linalg.eigvalsh(np.ones((4, 4)) - 4.0 * np.eye(4))[:3]) < 1e-14   # tied to rounding
    f = lambda r: _log_likelihood(r, t, counts)  # noqa: E731
    fd = numerical_jacobian(f, [rates], 0)
    for transform in (duals.grad, duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(f)(rates), fd, rtol=1e-7, atol=1e-7)
    H = duals.hessian(f)(rates)
    np.testing.assert_allclose(H, duals.jacfwd(duals.jacfwd(f))(rates), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(H, numerical_jacobian(duals.grad(f), [rates], 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12)


def _relaxation_step(T2, dt=1e-3):
    """Mx after a free-precession step of a Bloch generator (x, y, z, 1) with a short T2: the
    decaying block's entries of e^A are tiny beside the slow block's (an MRI trial)."""
    R1, R2, dw = 1.0, 1.0 / T2, 100.0
    A = dnp.array([[-R2, dw, 0.0, 0.0], [-dw, -R2, 0.0, 0.0], [0.0, 0.0, -R1, R1], [0.0, 0.0, 0.0, 0.0]])
    return (expm(A * dt) @ np.array([0.99, -0.1, 0.001, 1.0]))[0]


def test_tiny_entries_keep_their_relative_accuracy_in_every_mode():
    # a cotangent scaled up to the size of A before the block exponential gave -7e-13 for 3e-15
    dt, phase = 1e-3, 0.1
    for rate in (48.0, 96.0, 190.0):
        T2 = dt / rate
        decay = np.exp(-rate) * (0.99 * np.cos(phase) - 0.1 * np.sin(phase))
        first, second = decay * dt / T2 ** 2, decay * ((dt / T2 ** 2) ** 2 - 2 * dt / T2 ** 3)
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            np.testing.assert_allclose(transform(_relaxation_step)(T2), first, rtol=1e-10)
        for hessian in (duals.hessian, lambda f: duals.jacfwd(duals.jacfwd(f))):
            np.testing.assert_allclose(hessian(_relaxation_step)(T2), second, rtol=1e-8)
    # a subnormal direction (2 ** round(log2(|A| / 1e-310)) overflowed)
    _, tangent = duals.jvp(expm, (np.array([[0.0, 1.0], [-1.0, 0.0]]),), (np.array([[0.0, 1e-310], [0.0, 0.0]]),))
    assert np.all(np.isfinite(tangent)) and tangent[0, 1] != 0.0


def test_complex_matrices_take_the_holomorphic_derivative():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    e = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    _, tangent = duals.jvp(expm, (a,), (e,))
    np.testing.assert_allclose(tangent, scipy.linalg.expm_frechet(a, e)[1], rtol=1e-12, atol=1e-13)


def test_bad_input_and_scipys_own_expm_say_what_to_write():
    with pytest.raises(np.linalg.LinAlgError, match="linalg.expm: expected a square matrix"):
        duals.grad(lambda a: np.sum(expm(a)))(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"duals\.numpy\.linalg\.expm\(a\)"):
        duals.grad(lambda a: np.sum(scipy.linalg.expm(a)))(np.eye(2))
