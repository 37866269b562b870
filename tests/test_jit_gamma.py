"""math.lgamma and math.gamma of duals in compiled code, and the digamma function they need."""
import math

import numba
import numpy as np
import pytest
import scipy.special as sp

import duals
from duals.jit.gamma import digamma
from finite_differences import central_differences

njit = numba.njit(cache=True)


@njit
def digamma_of(x):
    return digamma(x)


def test_digamma_matches_scipy_on_both_sides_of_zero():
    x = np.concatenate([np.linspace(-4.7, -0.05, 93), np.linspace(0.01, 30.0, 400), [1e-6, 1e3, 1e8]])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    got = np.array([digamma_of(v) for v in x])
    want = sp.digamma(x)
    assert np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))) < 5e-14
    assert all(math.isnan(digamma_of(v)) for v in (0.0, -1.0, -3.0))


@njit
def negative_binomial_nll(log_r, logit_p, counts):
    """The negative log-likelihood of counts under NB(r, p), as a Numba user writes it."""
    r = math.exp(log_r)
    p = 1.0 / (1.0 + math.exp(-logit_p))
    total = 0.0
    for k in counts:
        total += math.lgamma(k + r) - math.lgamma(r) - math.lgamma(k + 1.0)
        total += r * math.log(p) + k * math.log(1.0 - p)
    return -total


COUNTS = np.array([0.0, 3.0, 7.0, 2.0, 12.0, 1.0])


def _nb_derivatives(log_r, logit_p):
    """Closed forms: the gradient and Hessian of negative_binomial_nll."""
    r, p = math.exp(log_r), 1.0 / (1.0 + math.exp(-logit_p))
    k = COUNTS
    d_r = -np.sum(sp.digamma(k + r) - sp.digamma(r) + math.log(p))
    d2_r = -np.sum(sp.polygamma(1, k + r) - sp.polygamma(1, r))
    d_p = -np.sum(r / p - k / (1.0 - p))
    d2_p = -np.sum(-r / p ** 2 - k / (1.0 - p) ** 2)
    dp, d2p = p * (1 - p), p * (1 - p) * (1 - 2 * p)        # dp/dlogit, d²p/dlogit²
    grad = np.array([d_r * r, d_p * dp])
    cross = -len(k) / p * r * dp
    hess = np.array([[d2_r * r * r + d_r * r, cross], [cross, d2_p * dp ** 2 + d_p * d2p]])
    return grad, hess


@pytest.mark.parametrize("point", [(-1.0, 0.4), (0.5, -0.3), (2.0, 1.5)])
def test_a_negative_binomial_likelihood_differentiates_in_every_mode(point):
    grad, hess = _nb_derivatives(*point)
    args = (*point, COUNTS)
    for transform in (duals.grad, duals.jacfwd):
        got = np.array(transform(negative_binomial_nll, argnums=(0, 1))(*args))
        np.testing.assert_allclose(got, grad, rtol=1e-13, atol=1e-12)
    fd = [float(central_differences(negative_binomial_nll, args, i)) for i in (0, 1)]
    np.testing.assert_allclose(fd, grad, rtol=1e-6)
    H = np.array(duals.hessian(negative_binomial_nll, argnums=(0, 1))(*args))
    np.testing.assert_allclose(H, hess, rtol=1e-12, atol=1e-11)
    packed = numba.njit(lambda q: negative_binomial_nll(q[0], q[1], COUNTS))
    v = np.array([0.3, -1.1])
    np.testing.assert_allclose(duals.hvp(packed, np.array(point), v), hess @ v, rtol=1e-12, atol=1e-11)


@njit
def gamma_of(x):
    return math.gamma(x)


@njit
def lgamma_of(x):
    return math.lgamma(x)


@pytest.mark.parametrize("x", [-2.5, -0.3, 0.7, 3.3, 12.0])
def test_gamma_and_lgamma_first_and_second_derivatives(x):
    psi, psi1 = sp.digamma(x), sp.polygamma(1, x)
    for transform in (duals.grad, duals.jacfwd):
        assert transform(lgamma_of)(x) == pytest.approx(psi, rel=1e-13, abs=1e-14)
        assert transform(gamma_of)(x) == pytest.approx(sp.gamma(x) * psi, rel=1e-13)
    assert duals.hessian(lgamma_of)(x) == pytest.approx(psi1, rel=1e-12)
    assert duals.hessian(gamma_of)(x) == pytest.approx(sp.gamma(x) * (psi ** 2 + psi1), rel=1e-12)


def test_at_a_pole_the_value_is_infinite_and_the_derivative_nan():
    for x in (0.0, -2.0):
        assert lgamma_of(x) == math.inf
        assert math.isnan(duals.grad(lgamma_of)(x)) and math.isnan(duals.jacfwd(lgamma_of)(x))
