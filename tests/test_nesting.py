"""Nesting to any depth, and perturbation confusion in every pairing (Siskind & Pearlmutter 2005)."""
import numpy as np
import pytest

import duals


def test_grad_inside_grad_does_not_confuse_perturbations():
    assert duals.grad(lambda x: x * duals.grad(lambda y: x + y)(1.0))(1.0) == pytest.approx(1.0)


def test_grad_inside_grad_variant_with_a_product():
    assert duals.grad(lambda x: x * duals.grad(lambda y: x * y)(2.0))(1.0) == pytest.approx(2.0)


def _inner_jvp(x):
    return duals.jvp(lambda y: x + y, (1.0,), (1.0,))[1]


def test_jvp_inside_jvp():
    assert duals.jvp(lambda x: x * _inner_jvp(x), (1.0,), (1.0,))[1] == pytest.approx(1.0)


def test_jvp_inside_grad():
    assert duals.grad(lambda x: x * _inner_jvp(x))(1.0) == pytest.approx(1.0)


def test_grad_inside_jacfwd():
    J = duals.jacfwd(lambda x: x * duals.grad(lambda y: np.sum(x * y))(np.ones(2)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(J, np.diag([2.0, 4.0]))


def test_jacfwd_inside_jacrev():
    def f(x):
        inner = duals.jacfwd(lambda y: np.sum(x + y))(np.ones(2))
        return x * inner
    np.testing.assert_allclose(duals.jacrev(f)(np.array([1.0, 2.0])), np.eye(2))


@pytest.mark.parametrize("outer,inner", [(a, b) for a in ("jacfwd", "jacrev") for b in ("jacfwd", "jacrev")])
def test_every_pairing_of_jacobians_gives_the_same_hessian(outer, inner):
    f = lambda x: np.sum(np.sin(x) * x[::-1] ** 2)  # noqa: E731
    x = np.array([0.3, -0.7, 1.1])
    H = getattr(duals, outer)(getattr(duals, inner)(f))(x)
    np.testing.assert_allclose(H, duals.hessian(f)(x), rtol=1e-12, atol=1e-12)


def _nth(f, n, mode):
    for _ in range(n):
        f = mode(f)
    return f


DERIVATIVES = {
    "sin": (np.sin, [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin]),
    "exp": (np.exp, [np.exp] * 4),
    "x**5": (lambda x: x ** 5, [lambda x: 5 * x ** 4, lambda x: 20 * x ** 3,
                                lambda x: 60 * x ** 2, lambda x: 120 * x]),
}


@pytest.mark.parametrize("mode", ["grad", "jacfwd", "jacrev"])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("name", list(DERIVATIVES))
def test_higher_derivatives_match_closed_forms(name, order, mode):
    f, closed = DERIVATIVES[name]
    x = 0.7
    got = _nth(f, order, getattr(duals, mode))(x)
    assert float(got) == pytest.approx(closed[order - 1](x), rel=1e-12)


def test_mixed_modes_to_third_order():
    f = lambda x: np.exp(2.0 * x)  # noqa: E731
    third = duals.jacfwd(duals.grad(duals.jacrev(f)))(0.3)
    assert float(third) == pytest.approx(8 * np.exp(0.6), rel=1e-12)


def test_closure_over_an_outer_traced_value_with_argnums_tuples():
    def outer(a, b):
        ga, gb = duals.grad(lambda u, v: np.sum(a * u * v), argnums=(0, 1))(np.ones(2), np.full(2, 2.0))
        return np.sum(ga * b) + np.sum(gb)
    a, b = np.array([1.0, 3.0]), np.array([2.0, 5.0])
    ga, gb = duals.grad(outer, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, 2.0 * b + 1.0)
    np.testing.assert_allclose(gb, 2.0 * a)


def _keeps_an_intermediate(x):
    """d/dx [grad_y(x y) * (x * 3)] = d/dx 3 x^2 = 6 x, with the inner product kept in a list
    while the inner grad runs and used after it returned: its derivative belonged to that call."""
    kept = []

    def inner(y):
        kept.append(x * y)
        return x * y
    return duals.grad(inner)(3.0) * kept[0]


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
def test_a_value_kept_from_a_finished_inner_call_is_refused_not_treated_as_a_constant(transform):
    """It took part as a constant before (jacfwd returned 0.0 where 12.0 is the derivative)."""
    with pytest.raises(RuntimeError, match=r"traced inside an earlier call of a duals transformation.*"
                                           r"has_aux=True"):
        getattr(duals, transform)(_keeps_an_intermediate)(2.0)
    with pytest.raises(RuntimeError, match="earlier call of a duals transformation"):
        duals.jvp(_keeps_an_intermediate, (2.0,), (1.0,))


def test_a_kept_value_returned_as_it_is_is_refused_too():
    kept = []
    duals.grad(lambda y: kept.append(y * y) or np.sum(y * y))(np.ones(2))
    with pytest.raises(RuntimeError, match="earlier call of a duals transformation"):
        duals.jacfwd(lambda x: kept[0])(np.ones(2))
    with pytest.raises(RuntimeError, match="earlier call of a duals transformation"):
        np.sin(kept[0])


def test_values_returned_through_has_aux_and_nested_calls_stay_usable():
    g, aux = duals.grad(lambda x: (np.sum(x ** 2), x * 3.0), has_aux=True)(np.ones(2))
    np.testing.assert_array_equal(g, [2.0, 2.0])
    np.testing.assert_array_equal(aux, [3.0, 3.0])
    assert duals.jacfwd(lambda x: duals.grad(lambda y: x * y ** 2)(3.0) * x)(2.0) == pytest.approx(24.0)


def test_a_hand_made_dual_under_reverse_mode_names_the_way_out():
    # under grad the Dual becomes part of a traced value: .tangent was a bare AttributeError
    def times_inner_derivative(x):
        return x * (x + duals.Dual(1.0, 1.0)).tangent
    assert duals.jacfwd(times_inner_derivative)(2.0) == 1.0
    with pytest.raises(AttributeError, match="Take the inner derivative with duals.jvp"):
        duals.grad(times_inner_derivative)(2.0)
    by_jvp = lambda x: x * duals.jvp(lambda y: x + y, (1.0,), (1.0,))[1]  # noqa: E731
    assert duals.grad(by_jvp)(2.0) == 1.0 and duals.hessian(by_jvp)(2.0) == 0.0
