"""SciPy's special functions, called as SciPy's own ufuncs on traced values, in every mode."""
import warnings
from fractions import Fraction

import numba
import numpy as np
import pytest
import scipy.special as sp
from scipy import stats

import duals
import duals.numpy as dnp


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
                                     (sp.psi, [0.7, 3.5]), (sp.log_ndtr, [-5.0, 1.0]),
                                     (sp.log_expit, [-3.0, 35.0]), (sp.ndtri, [0.01, 0.7]),
                                     (sp.erfinv, [-0.9, 0.3]), (sp.erfcinv, [0.1, 1.6])],
                         ids=lambda p: getattr(p, "__name__", ""))
def test_scipy_ufuncs_are_recognised_by_identity_in_every_mode(ufunc, x):
    x = np.array(x)
    np.testing.assert_allclose(duals.jacfwd(ufunc)(x), duals.jacrev(ufunc)(x), rtol=1e-13)
    assert duals.gradcheck(ufunc, x)
    assert duals.testing.check_grads(lambda z: np.sum(ufunc(z)), (x,), order=2)
    np.testing.assert_allclose(duals.jvp(ufunc, (x,), (np.ones(2),))[0], ufunc(x))


def test_the_inverses_of_ndtr_erf_and_erfc_have_the_inverse_function_derivatives():
    # a Nataf / Rosenblatt transform's X → U step: u = ndtri(F(x)), du/dx = f(x) / φ(u)
    p = np.array([1e-6, 0.05, 0.5, 0.975])
    u = sp.ndtri(p)
    np.testing.assert_allclose(duals.jacfwd(sp.ndtri)(p), np.diag(1.0 / stats.norm.pdf(u)), rtol=1e-13)
    second = duals.grad(duals.grad(lambda q: sp.ndtri(q)))
    for q in (1e-6, 0.3, 0.975):   # d²u/dp² = u / φ(u)²
        assert second(q) == pytest.approx(sp.ndtri(q) / stats.norm.pdf(sp.ndtri(q)) ** 2, rel=1e-12)
    y = np.array([-0.99, 0.0, 0.5])
    np.testing.assert_allclose(duals.grad(lambda y: np.sum(sp.erfinv(y)))(y),
                               np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(y) ** 2), rtol=1e-13)
    np.testing.assert_allclose(duals.grad(lambda y: np.sum(sp.erfcinv(y)))(1.0 - y),
                               -np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(y) ** 2), rtol=1e-12)
    gumbel_to_normal = lambda x: sp.ndtri(np.exp(-np.exp(-x)))   # noqa: E731  (a Gumbel variable)
    x = np.array([-1.0, 0.5, 3.0])
    F, f = np.exp(-np.exp(-x)), np.exp(-x - np.exp(-x))
    np.testing.assert_allclose(duals.jacrev(gumbel_to_normal)(x), np.diag(f / stats.norm.pdf(sp.ndtri(F))),
                               rtol=1e-12)


def _mills_slope(x):
    """d/dx log Φ(x) = φ(x)/Φ(x) by SciPy's scaled erfc, accurate to rounding for every x < 0."""
    return np.sqrt(2 / np.pi) / sp.erfcx(-x / np.sqrt(2))


@pytest.mark.parametrize("x", [-40.0, -300.0, -1e4, -1e5, -1e7, -5.5, -4.5, -1.0])
def test_log_ndtr_keeps_its_first_and_second_derivatives_exact_deep_in_the_tail(x):
    # exp(log φ - log Φ) cancels two numbers of size x²/2 (x = -1e4: 5e7 each), and the second
    # derivative -g (x + g) cancels again (x + g ~ 1/|x|): 61 % off at x = -1e4 before
    slope = duals.grad(sp.log_ndtr)(x)
    assert slope == pytest.approx(_mills_slope(x), rel=1e-14)
    bend = duals.grad(duals.grad(sp.log_ndtr))(x)
    step = 1e-3 * max(1.0, abs(x))   # the slope's own central difference, each from erfcx
    assert bend == pytest.approx((_mills_slope(x + step) - _mills_slope(x - step)) / (2 * step), rel=1e-6)
    assert duals.hessian(sp.log_ndtr)(x) == pytest.approx(bend, rel=1e-15)


def test_expit_keeps_its_derivative_in_the_upper_tail():
    # s (1 - s) lost the tail: 1e-3 off at x = 30, 0 instead of 4.2e-18 at x = 40
    x = np.array([30.0, 40.0, 100.0, -700.0, 0.5])
    exact = np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))) ** 2
    np.testing.assert_allclose(duals.grad(lambda v: np.sum(sp.expit(v)))(x), exact, rtol=1e-14)
    np.testing.assert_allclose(duals.jacfwd(sp.expit)(x).diagonal(), exact, rtol=1e-14)


def test_logaddexp_keeps_its_first_and_second_derivatives_in_both_tails():
    # the partials were exp(x - out): out's rounding through exp, and 1 - exp(.) in the second
    # derivative lost the tail (0 instead of 6.3e-16 at x = 35, 1.3 % off at x = 30)
    x = np.array([-40.0, -5.0, 0.0, 20.0, 30.0, 35.0, 700.0])
    first = 1.0 / (1.0 + np.exp(-x))
    second = np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))) ** 2
    softplus = lambda v: np.sum(np.logaddexp(0.0, v))  # noqa: E731
    np.testing.assert_allclose(duals.grad(softplus)(x), first, rtol=1e-15)
    np.testing.assert_allclose(duals.hessian(softplus)(x).diagonal(), second, rtol=1e-14)
    np.testing.assert_allclose(duals.grad(lambda v: np.sum(sp.log_expit(-v)))(x), -first, rtol=1e-15)
    compiled = numba.njit(softplus)
    np.testing.assert_allclose(duals.grad(compiled)(x), first, rtol=1e-15)
    np.testing.assert_allclose(duals.jit.compiled_hessian(compiled)(x).diagonal(), second, rtol=1e-14)


def test_xlogy_at_zero_is_zero_with_slope_log_y_in_x_as_jax_and_pytorch():
    # x log y is linear in x: at x = 0 its slope is log y (soft-target cross entropy with a zero
    # target), which the branch where(x == 0, 0, ...) had made 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = duals.grad(lambda y: np.sum(sp.xlogy(np.array([0.0, 2.0]), y)))(np.array([0.0, 3.0]))
        np.testing.assert_allclose(g, [0.0, 2.0 / 3.0])
        q = np.array([0.7, 0.2, 0.1])
        t = np.array([0.2, 0.0, 0.0])
        np.testing.assert_allclose(duals.grad(lambda t: -np.sum(sp.xlogy(t, q)))(t), -np.log(q), rtol=1e-15)
        np.testing.assert_allclose(duals.jacfwd(lambda t: sp.xlog1py(t, q))(t).diagonal(), np.log1p(q), rtol=1e-15)
        assert duals.hessian(lambda v: sp.xlogy(v[0], v[1]))(np.array([0.0, 2.0]))[0, 1] == 0.5
        # where log y is not finite, the value is 0 (SciPy) and the slope 0 (as PyTorch)
        for y in (0.0, -1.0, np.inf):
            assert sp.xlogy(0.0, y) == 0.0 and duals.grad(sp.xlogy, argnums=(0, 1))(0.0, y) == (0.0, 0.0)
    assert str(duals.numpy.special.xlogy(0.0, 0.5)) == "0.0"   # SciPy's 0, not 0 · log 0.5 = -0


def test_an_empty_bins_xlogy_has_zero_curvature_at_any_expected_count():
    # lam - xlogy(n, lam) with n = 0 and lam in a far tail (1e-164): the second derivative was
    # 0 · (-1/lam²) = 0 · inf = NaN, the Hessian of a binned likelihood with it (a HEP trial)
    s = 12.0 * np.exp(-0.5 * np.array([0.0, 1.0, 27.5]) ** 2)
    b, obs = np.array([50.0, 40.0, 0.0]), np.array([55.0, 41.0, 0.0])
    nll = lambda mu: np.sum(mu * s + b - sp.xlogy(obs, mu * s + b))  # noqa: E731
    exact = np.sum(obs[:2] * s[:2] ** 2 / (s[:2] + b[:2]) ** 2)   # (the empty bin adds 0)
    for hessian in (duals.hessian, lambda f: duals.jacfwd(duals.jacfwd(f)), lambda f: duals.jacrev(duals.grad(f))):
        np.testing.assert_allclose(hessian(nll)(1.0), exact, rtol=1e-14)
    for y in (1e-170, 1e-300, 0.5):
        assert duals.hessian(lambda y: sp.xlogy(0.0, y) + sp.xlog1py(0.0, y - 1.0))(y) == 0.0


def test_polygamma_takes_scipys_orders_and_never_differentiates_them():
    x = np.array([1.0, 2.0, 3.0])
    n = np.array([0, 1, 2])
    np.testing.assert_allclose(dnp.special.polygamma(n, x), sp.polygamma(n, x), rtol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(lambda x: dnp.special.polygamma(n, x))(x).diagonal(),
                               sp.polygamma(n + 1, x), rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (SciPy's own warning for a fractional order)
        assert np.isnan(dnp.special.polygamma(1.5, 2.0))   # was polygamma(1, 2): int(1.5)
    with pytest.raises(TypeError, match="order n is a whole number"):
        duals.grad(lambda n: dnp.special.polygamma(n, 2.0))(1.0)
    assert dnp.special.digamma(np.float32(2.0)).dtype == np.float32


def test_logsumexp_of_a_slice_of_minus_infinities_has_slope_zero_not_nan():
    # log of a sum of zeros: 0/0 there spread NaN into the Jacobian rows of the other slices
    a = np.array([[-np.inf, -np.inf], [1.0, 2.0]])
    f = lambda a: dnp.special.logsumexp(a, axis=1)  # noqa: E731
    softmax = np.exp(a[1] - sp.logsumexp(a[1]))
    expected = np.array([[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], softmax]])
    for jac in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(jac(f)(a), expected, rtol=1e-15)
    np.testing.assert_array_equal(f(a), sp.logsumexp(a, axis=1))


def test_an_unsupported_scipy_ufunc_is_named_as_scipys():
    with pytest.raises(TypeError, match=r"scipy\.special\.j0 has no derivative rule in duals"):
        duals.grad(sp.j0)(1.0)


@pytest.mark.parametrize("kwargs", [dict(axis=1), dict(axis=None), dict(axis=0, keepdims=True),
                                    dict(axis=1, return_sign=True)])
def test_logsumexp_takes_scipys_weights_and_their_derivatives(kwargs):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 4)), rng.uniform(0.5, 2.0, size=(3, 4))
    if kwargs.get("return_sign"):
        b[:, 0] = -4.0    # negative sums: SciPy returns log|sum| and the sign
    got, want = dnp.special.logsumexp(a, b=b, **kwargs), sp.logsumexp(a, b=b, **kwargs)
    if kwargs.get("return_sign"):
        np.testing.assert_array_equal(got[1], want[1])
        got, want = got[0], want[0]
    np.testing.assert_allclose(got, want, rtol=1e-14)

    def loss(a, b):
        out = dnp.special.logsumexp(a, b=b, **kwargs)
        return dnp.sum(np.sin(out[0] if kwargs.get("return_sign") else out))

    def plain(a, b):
        out = sp.logsumexp(a, b=b, **kwargs)
        return np.sum(np.sin(out[0] if kwargs.get("return_sign") else out))

    for argnum, x in ((0, a), (1, b)):
        fd = np.zeros(x.size)
        for k in range(x.size):
            step = np.zeros(x.size)
            step[k] = 1e-6
            args_up, args_down = [a, b], [a, b]
            args_up[argnum], args_down[argnum] = x + step.reshape(x.shape), x - step.reshape(x.shape)
            fd[k] = (plain(*args_up) - plain(*args_down)) / 2e-6
        reverse = duals.grad(loss, argnums=argnum)(a, b)
        np.testing.assert_allclose(reverse.ravel(), fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(duals.jacfwd(loss, argnums=argnum)(a, b), reverse, rtol=1e-13, atol=1e-15)


def test_ndtr_of_complex_values_names_itself():
    with pytest.raises(TypeError, match="duals' ndtr is computed for real numbers only"):
        duals.jacfwd(lambda z: sp.ndtr(z), holomorphic=True)(np.array([0.5 + 0.1j]))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax_and_log_softmax_are_scipys_with_exact_derivatives(axis):
    x = np.array([[0.3, -1.2, 2.0], [1000.0, 1000.0, -5.0]])   # a row that overflows exp
    np.testing.assert_allclose(dnp.special.softmax(x, axis=axis), sp.softmax(x, axis=axis), rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(dnp.special.log_softmax(x, axis=axis), sp.log_softmax(x, axis=axis), rtol=1e-15)
    weights = np.arange(6.0).reshape(2, 3)
    for f in (dnp.special.softmax, dnp.special.log_softmax):
        loss = lambda z: np.sum(f(z, axis=axis) * weights)   # noqa: E731
        assert duals.testing.check_grads(loss, (x[[0, 0]] + np.array([[0.0], [0.5]]),), order=2)
        along = lambda z: f(z, axis=axis)   # noqa: E731
        np.testing.assert_allclose(duals.jacfwd(along)(x), duals.jacrev(along)(x), rtol=1e-14, atol=1e-15)


def test_scipy_softmax_on_a_traced_value_points_to_its_counterpart():
    with pytest.raises(TypeError, match=r"scipy\.special\.softmax converts .* Write dnp\.special\.softmax instead"):
        duals.grad(lambda z: np.sum(sp.softmax(z) * np.arange(3.0)))(np.ones(3))


def test_tanh_keeps_its_derivatives_in_both_tails_and_arctanh_near_one():
    # 1 - tanh² cancelled (DSP trial: a saturator at high drive): 1.7e-4 off at x = 15, 0 instead
    # of 1.7e-17 at x = 20; arctanh's 1 / (1 - x²) was 5e-10 off at x = 1 - 1e-9
    x = np.array([-25.0, -3.0, 0.0, 0.3, 15.0, 19.0, 20.0, 349.0, 400.0])
    e = np.exp(-2.0 * np.abs(x))
    sech2 = 4.0 * e / (1.0 + e) ** 2                      # no cancellation anywhere
    tanh_sum = lambda v: np.sum(np.tanh(v))  # noqa: E731
    np.testing.assert_allclose(duals.grad(tanh_sum)(x), sech2, rtol=1e-14, atol=0.0)
    np.testing.assert_allclose(duals.jacfwd(np.tanh)(x).diagonal(), sech2, rtol=1e-14, atol=0.0)
    np.testing.assert_allclose(duals.hessian(tanh_sum)(x).diagonal(), -2.0 * np.tanh(x) * sech2,
                               rtol=1e-13, atol=1e-300)
    compiled = numba.njit(tanh_sum)
    np.testing.assert_allclose(duals.grad(compiled)(x), sech2, rtol=1e-14, atol=0.0)
    y = 1.0 - 1e-9
    exact = float(1 / ((1 - Fraction(y)) * (1 + Fraction(y))))
    assert duals.grad(np.arctanh)(y) == pytest.approx(exact, rel=1e-15)
