"""duals.jacobian: one function, the mode chosen by sizes (or forced), the same numbers."""
import numba
import numpy as np
import pytest

import duals
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


def test_containers_count_every_leaf():
    f = lambda p: np.sum(p["W"] ** 2) + p["b"][0]  # noqa: E731
    p = {"W": np.ones((10, 10)), "b": np.ones(3)}
    jac = duals.jacobian(f)
    assert jac.mode_for(p) == "rev"
    np.testing.assert_allclose(jac(p)["W"], 2 * p["W"])


def test_a_dispatcher_takes_compiled_forward_mode():
    f = numba.njit(lambda x: x * x)
    jac = duals.jacobian(f)
    assert jac.mode_for(np.ones(100)) == "fwd"
    np.testing.assert_allclose(jac(np.arange(3.0)), np.diag(2 * np.arange(3.0)))
    with pytest.raises(NotImplementedError, match="compiled reverse mode does not exist yet"):
        duals.jacobian(f, mode="rev")
