"""SciPy's special functions, called as SciPy's own ufuncs on traced values, in every mode."""
import warnings

import numpy as np
import pytest
import scipy.special as sp
from scipy import stats

import duals


def black_scholes_call(S, K, T, r, sigma):
    """The textbook pricer, written with scipy.special.ndtr as finance code does."""
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * sp.ndtr(d1) - K * np.exp(-r * T) * sp.ndtr(d2)


def test_black_scholes_greeks_through_scipy_ndtr_match_the_closed_forms():
    S, K, T, r, sigma = 100.0, 95.0, 0.5, 0.02, 0.25
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    delta, vega = duals.grad(black_scholes_call, argnums=(0, 4))(S, K, T, r, sigma)
    assert delta == pytest.approx(stats.norm.cdf(d1), rel=1e-12)
    assert vega == pytest.approx(S * stats.norm.pdf(d1) * np.sqrt(T), rel=1e-12)
    gamma = duals.hessian(black_scholes_call)(S, K, T, r, sigma)
    assert gamma == pytest.approx(stats.norm.pdf(d1) / (S * sigma * np.sqrt(T)), rel=1e-10)


@pytest.mark.parametrize("ufunc,x", [(sp.erf, [0.3, -1.2]), (sp.erfc, [0.3, 2.0]),
                                     (sp.expit, [-3.0, 0.5]), (sp.ndtr, [-2.0, 1.0]),
                                     (sp.logit, [0.2, 0.7]), (sp.gammaln, [0.7, 3.5]),
                                     (sp.psi, [0.7, 3.5]), (sp.log_ndtr, [-5.0, 1.0])],
                         ids=lambda p: getattr(p, "__name__", ""))
def test_scipy_ufuncs_are_recognised_by_identity_in_every_mode(ufunc, x):
    x = np.array(x)
    np.testing.assert_allclose(duals.jacfwd(ufunc)(x), duals.jacrev(ufunc)(x), rtol=1e-13)
    assert duals.gradcheck(ufunc, x)
    assert duals.testing.check_grads(lambda z: np.sum(ufunc(z)), (x,), order=2)
    np.testing.assert_allclose(duals.jvp(ufunc, (x,), (np.ones(2),))[0], ufunc(x))


def test_log_ndtr_keeps_its_accuracy_deep_in_the_tail():
    # d/dx log Φ(x) = φ(x)/Φ(x) ~ -x - 1/x for x → -∞; log(ndtr(x)) would be -inf here
    slope = duals.grad(sp.log_ndtr)(-40.0)
    assert slope == pytest.approx(40.0 + 1 / 40.0, rel=1e-4)


def test_xlogy_at_zero_is_zero_with_derivative_zero_as_scipy_defines_it():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = duals.grad(lambda y: np.sum(sp.xlogy(np.array([0.0, 2.0]), y)))(np.array([0.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, 2.0 / 3.0])


def test_an_unsupported_scipy_ufunc_is_named_as_scipys():
    with pytest.raises(TypeError, match=r"scipy\.special\.j0 has no derivative rule in duals"):
        duals.grad(sp.j0)(1.0)
