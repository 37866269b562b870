"""Containers of parameters (pytrees) in every transformation, with JAX's conventions, and the
dtype of results (float32 in, float32 out)."""
import collections

import numpy as np
import pytest

import duals

RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 3))
Y = RNG.standard_normal((6, 2))
PARAMS = {"W": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2) * 0.1}
Params = collections.namedtuple("Params", "rate offset")


def mlp_loss(params, x, y):
    pred = np.tanh(x @ params["W"] + params["b"])
    return np.mean((pred - y) ** 2)


def _flat(params):
    return np.concatenate([params["W"].ravel(), params["b"]])


def _unflat(z):
    return {"W": z[:6].reshape(3, 2), "b": z[6:]}


def flat_loss(z):
    return mlp_loss(_unflat(z), X, Y)


def test_grad_of_a_dict_of_parameters_is_a_dict_of_the_same_shapes():
    g = duals.grad(mlp_loss)(PARAMS, X, Y)
    assert set(g) == {"W", "b"} and g["W"].shape == (3, 2) and g["b"].shape == (2,)
    reference = duals.grad(flat_loss)(_flat(PARAMS))
    np.testing.assert_allclose(_flat(g), reference, rtol=1e-12)


def test_value_and_grad_with_aux_and_a_container():
    def loss_with_aux(params, x, y):
        return mlp_loss(params, x, y), {"n": len(x)}
    (value, aux), g = duals.value_and_grad(loss_with_aux, has_aux=True)(PARAMS, X, Y)
    assert value == pytest.approx(mlp_loss(PARAMS, X, Y)) and aux == {"n": 6}
    np.testing.assert_allclose(_flat(g), duals.grad(flat_loss)(_flat(PARAMS)), rtol=1e-12)


def test_hessian_of_a_dict_is_a_dict_of_dicts_of_blocks():
    H = duals.hessian(mlp_loss)(PARAMS, X, Y)
    full = duals.hessian(flat_loss)(_flat(PARAMS))
    assert H["W"]["b"].shape == (3, 2, 2) and H["b"]["W"].shape == (2, 3, 2)
    np.testing.assert_allclose(H["W"]["W"].reshape(6, 6), full[:6, :6], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H["W"]["b"].reshape(6, 2), full[:6, 6:], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H["b"]["b"], full[6:, 6:], rtol=1e-10, atol=1e-12)


def test_jacobians_of_container_outputs_nest_output_outside_input_inside():
    def summary(params):
        return {"col": params["W"].sum(axis=0), "energy": np.sum(params["b"] ** 2)}
    for jac in (duals.jacfwd, duals.jacrev):
        J = jac(summary)(PARAMS)
        assert J["col"]["W"].shape == (2, 3, 2) and J["col"]["b"].shape == (2, 2)
        assert J["energy"]["W"].shape == (3, 2) and J["energy"]["b"].shape == (2,)
        np.testing.assert_allclose(J["energy"]["b"], 2 * PARAMS["b"])
        np.testing.assert_array_equal(J["col"]["b"], np.zeros((2, 2)))


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev"])
def test_a_list_of_numbers_meant_as_an_array_gets_the_container_explained(transform):
    loss = lambda x: np.sum(np.asarray(x) ** 2)   # noqa: E731
    with pytest.raises(TypeError, match=r"argument 0 is a list, which \w+ takes as a container of 3 "
                                        r"separate numbers.*pass np\.array\(\.\.\.\) of it"):
        getattr(duals, transform)(loss)([0.1, 0.2, 0.3])
    assert duals.grad(lambda p: p[0] * p[1])([1.0, 2.0]) == [2.0, 1.0]   # a container, on purpose


def test_namedtuple_tuple_and_list_arguments_keep_their_type():
    def decay(p, t):
        return p.offset + np.exp(-p.rate * t)
    t = np.linspace(0.0, 2.0, 5)
    g = duals.jacfwd(decay)(Params(0.7, 0.1), t)
    assert isinstance(g, Params)
    np.testing.assert_allclose(g.rate, -t * np.exp(-0.7 * t))
    np.testing.assert_allclose(g.offset, np.ones(5))
    assert isinstance(duals.grad(lambda p: p[0] * p[1][0])((2.0, [3.0])), tuple)
    assert isinstance(duals.grad(lambda p: p[0] * p[1])([2.0, 3.0]), list)


def test_argnums_selects_top_level_arguments_that_are_containers():
    def f(a, b):
        return np.sum(a["u"] * b[0]) + b[1] ** 2
    a, b = {"u": np.array([1.0, 2.0])}, (np.array([3.0, 4.0]), 5.0)
    ga, gb = duals.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga["u"], b[0])
    np.testing.assert_allclose(gb[0], a["u"])
    assert gb[1] == pytest.approx(10.0)


def test_jvp_and_vjp_take_containers():
    primal, tangent = duals.jvp(mlp_loss, (PARAMS, X, Y),
                                ({"W": np.ones((3, 2)), "b": np.zeros(2)}, None, None))
    g = duals.grad(mlp_loss)(PARAMS, X, Y)
    assert tangent == pytest.approx(np.sum(g["W"]))
    value, pullback = duals.vjp(lambda p: p["W"] @ p["b"], PARAMS)
    (cot,) = pullback(np.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(cot["b"], PARAMS["W"][0])


def test_jvp_tangent_with_another_structure_is_refused():
    with pytest.raises(ValueError, match="structure of its primal"):
        duals.jvp(lambda p: p["a"], ({"a": 1.0},), ({"b": 1.0},))


def test_grad_of_a_tuple_output_says_grad_needs_a_scalar_or_has_aux():
    with pytest.raises(TypeError, match="scalar output.*has_aux=True"):
        duals.grad(lambda x: (x, 2 * x))(1.0)


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev"])
def test_float32_input_gives_float32_derivatives(transform):
    x = np.array([0.5, 1.5], dtype=np.float32)
    f = lambda x: np.sum(np.sin(x) * np.float64(2.0))  # noqa: E731  (a float64 constant)
    result = getattr(duals, transform)(f)(x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, 2 * np.cos(x), rtol=1e-6)


def test_float32_leaves_in_a_container_keep_their_dtype():
    p = {"a": np.ones(2, dtype=np.float32), "b": np.ones(2)}
    g = duals.grad(lambda p: np.sum(p["a"] * p["b"] * 3.0))(p)
    assert g["a"].dtype == np.float32 and g["b"].dtype == np.float64


def test_argnums_out_of_order_with_a_container_keeps_the_order_of_argnums():
    """Results came back in positional order, swapping gy and gp of grad(f, argnums=(2, 0)) as
    soon as p was a dict (a user trial); JAX's order is argnums'."""
    def f(p, x, y):
        return np.sum(p["a"] * y) + np.sum(x) + p["b"] * np.sum(y * y)
    p, x, y = {"a": np.array([1.0, 2.0]), "b": 0.5}, np.ones(3), np.array([3.0, 4.0])
    gy_expected, gp_expected = p["a"] + 2.0 * p["b"] * y, {"a": y, "b": np.sum(y * y)}
    for transform in (duals.grad, duals.jacfwd, duals.jacrev, duals.jacobian):
        gy, gp = transform(f, argnums=(2, 0))(p, x, y)
        np.testing.assert_allclose(gy, gy_expected)
        np.testing.assert_allclose(gp["a"], gp_expected["a"])
        np.testing.assert_allclose(gp["b"], gp_expected["b"])
    (h_yy, h_yp), h_p = duals.hessian(f, argnums=(2, 0))(p, x, y)   # rows: y, then p's leaves
    np.testing.assert_allclose(h_yy, 2.0 * p["b"] * np.eye(2))
    np.testing.assert_allclose(h_yp["a"], np.eye(2))
    np.testing.assert_allclose(h_yp["b"], 2.0 * y)
    np.testing.assert_allclose(h_p["a"][0], np.eye(2))      # d²f / da dy
    np.testing.assert_allclose(h_p["b"][0], 2.0 * y)


def test_an_ordered_dict_comes_back_as_an_ordered_dict_in_its_own_order():
    """JAX's convention; duals returned a plain dict (a user trial)."""
    p = collections.OrderedDict([("b", np.array([1.0, 2.0])), ("a", 3.0)])
    g = duals.grad(lambda q: np.sum(q["b"] ** 2) * q["a"])(p)
    assert type(g) is collections.OrderedDict and list(g) == ["b", "a"]
    np.testing.assert_allclose(g["b"], 2.0 * p["b"] * p["a"])
    assert g["a"] == np.sum(p["b"] ** 2)
    J = duals.jacrev(lambda q: q["b"] * q["a"])(p)
    assert type(J) is collections.OrderedDict and list(J) == ["b", "a"]
