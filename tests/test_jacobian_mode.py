"""duals.jacobian: one function, the mode chosen by sizes (or forced), the same numbers."""
import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import transforms

RNG = np.random.default_rng(3)


def model(A):
    return lambda x: np.tanh(A @ np.sin(x)) * np.exp(-0.1 * (A @ x))


@pytest.mark.parametrize("n,m,expected", [(200, 10, "rev"), (10, 200, "fwd"), (300, 300, "fwd"),
                                          (40, 1, "fwd"), (1000, 500, "rev")])
def test_auto_picks_by_the_documented_rule_and_matches_both_modes(n, m, expected):
    A = RNG.standard_normal((m, n)) / np.sqrt(n)
    x = RNG.standard_normal(n)
    jac = duals.jacobian(model(A))
    assert jac.mode_for(x) == expected
    rule = "rev" if n > transforms.REVERSE_FROM and n > transforms.REVERSE_RATIO * m else "fwd"
    assert expected == rule
    J = jac(x)
    np.testing.assert_allclose(J, duals.jacfwd(model(A))(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J, duals.jacrev(model(A))(x), rtol=1e-12, atol=1e-12)


def test_forced_modes_and_a_bad_mode():
    f = lambda x: x ** 3  # noqa: E731
    x = np.array([1.0, 2.0])
    assert duals.jacobian(f, mode="rev").mode_for(x) == "rev"
    np.testing.assert_allclose(duals.jacobian(f, mode="fwd")(x), np.diag(3 * x ** 2))
    with pytest.raises(ValueError, match="mode must be"):
        duals.jacobian(f, mode="reverse")


def test_complex_outputs_of_many_real_inputs_take_forward_mode():
    """Reverse mode takes no complex outputs of real inputs (without holomorphic=True): with more
    than REVERSE_FROM inputs "auto" picked it and raised (a user trial)."""
    w = np.array([1.0, 10.0])

    def cascade_response(p):       # first-order sections in series, at two frequencies
        return np.prod(1.0 / (1.0 + 1j * w[:, None] * p), axis=1)
    p = np.linspace(0.01, 0.1, 100)
    jac = duals.jacobian(cascade_response)
    assert jac.mode_for(p) == "fwd"
    np.testing.assert_allclose(jac(p), duals.jacfwd(cascade_response)(p), rtol=1e-14)


def test_containers_count_every_leaf():
    f = lambda p: np.sum(p["W"] ** 2) + p["b"][0]  # noqa: E731
    p = {"W": np.ones((10, 10)), "b": np.ones(3)}
    jac = duals.jacobian(f)
    assert jac.mode_for(p) == "rev"
    np.testing.assert_allclose(jac(p)["W"], 2 * p["W"])


def test_a_dispatcher_takes_compiled_forward_mode_up_to_many_inputs_then_the_tape():
    f = numba.njit(lambda x: x * x)
    jac = duals.jacobian(f)
    assert jac.mode_for(np.ones(100)) == "fwd"
    energy = numba.njit(lambda x: np.sum(x * x))
    wide = duals.jacobian(energy)
    assert wide.mode_for(np.ones(40)) == "fwd" and wide.mode_for(np.ones(300)) == "rev"
    np.testing.assert_allclose(wide(np.arange(300.0)), 2 * np.arange(300.0))
    np.testing.assert_allclose(jac(np.arange(3.0)), np.diag(2 * np.arange(3.0)))
    rev = duals.jacobian(f, mode="rev")
    assert rev.mode_for(np.ones(100)) == "rev"
    np.testing.assert_allclose(rev(np.arange(3.0)), np.diag(2 * np.arange(3.0)))


def lorenz96_misfit(F, x0):
    x = x0.copy()
    n = x.shape[0]
    dxdt = np.empty_like(x)
    for _ in range(20):
        for i in range(n):
            dxdt[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + F[i]
        for i in range(n):
            x[i] += 0.01 * dxdt[i]
    total = 0.0
    for i in range(n):
        total += 0.5 * (x[i] - 1.0) ** 2
    return total


F0 = 8.0 + 0.1 * np.sin(np.arange(6.0))
X0 = F0 + 0.01 * np.arange(6.0)
misfit = numba.njit(lorenz96_misfit)


@numba.njit
def misfit_of_state(x0):
    return misfit(F0, x0)


def central(fun, x, h=1e-6):
    return np.array([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_reverse_entry_points_of_compiled_code_give_the_exact_gradient_by_the_compiled_tape():
    expected = duals.jacfwd(misfit, argnums=(0, 1))(F0, X0)
    np.testing.assert_allclose(expected[0], central(lambda F: lorenz96_misfit(F, X0), F0), rtol=1e-6)
    got = duals.grad(misfit, argnums=(0, 1))(F0, X0)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    value, g = duals.value_and_grad(misfit, argnums=(0, 1))(F0, X0)
    assert value == pytest.approx(lorenz96_misfit(F0, X0))
    np.testing.assert_allclose(g[1], expected[1], rtol=1e-13)
    np.testing.assert_allclose(duals.jacrev(misfit, argnums=(0, 1))(F0, X0)[0], expected[0], rtol=1e-13)
    v = np.linspace(-1.0, 1.0, 6)
    grad_along_v = central(lambda t: duals.grad(misfit_of_state)(X0 + t[0] * v), np.zeros(1))
    np.testing.assert_allclose(duals.hvp(misfit_of_state, X0, v), grad_along_v[0], rtol=1e-5)
    with pytest.raises(TypeError, match="scalar output"):
        duals.grad(numba.njit(lambda x: x * 2.0))(np.ones(2))
    value, pullback = duals.vjp(misfit, F0, X0)
    assert value == pytest.approx(lorenz96_misfit(F0, X0))
    for a, b in zip(pullback(2.0), expected):
        np.testing.assert_allclose(a, 2.0 * b, rtol=1e-13)


def test_jacobian_with_sparsity_takes_the_mode_with_fewer_colours():
    import scipy.sparse
    x = np.linspace(1.0, 2.0, 30)
    banded = lambda x: x[1:] * x[:-1]  # noqa: E731  (two column colours, two row colours)
    dense_row = lambda x: dnp.concatenate([x * x, dnp.sum(x, keepdims=True)])  # noqa: E731
    for f, mode in ((banded, "fwd"), (dense_row, "rev")):
        jac = duals.jacobian(f, sparsity="auto")
        assert jac.mode_for(x) == mode
        J = jac(x)
        assert isinstance(J, scipy.sparse.csr_array)
        np.testing.assert_allclose(J.toarray(), duals.jacfwd(f)(x), rtol=1e-14)
    forced = duals.jacobian(dense_row, mode="fwd", sparsity="auto")
    assert forced.mode_for(x) == "fwd"
    np.testing.assert_allclose(forced(x).toarray(), duals.jacfwd(dense_row)(x), rtol=1e-14)
