"""The square of a modulus at 0 (``abs(x) ** 2``, ``np.linalg.norm(w) ** 2``) has the square's own
second derivatives on the Python path, though ``abs'(0) = 0`` (duals.ops.complex_parts.square).

A Newton step from ``w = 0`` of a loss with ``norm(w) ** 2`` lost its Hessian's ``2I``; a
crystallographer's ``|F|²`` at an absent reflection (F exactly 0) its curvature (a user trial).
Each is checked against the same function written smoothly, in every mode and nesting."""
import numpy as np
import pytest

import duals


def _second_derivatives(f, x):
    """The Hessian of ``f`` at ``x`` by every way of taking one."""
    return {"hessian": duals.hessian(f)(x), "jacfwd(jacfwd)": duals.jacfwd(duals.jacfwd(f))(x),
            "jacrev(jacrev)": duals.jacrev(duals.jacrev(f))(x), "jacfwd(grad)": duals.jacfwd(duals.grad(f))(x),
            "hvp columns": np.stack([duals.hvp(f, x, e) for e in np.eye(x.size)], axis=-1)}


H = np.array([1.0, 1.0, 0.0])   # the (110) reflection of an FCC cell: F = 0 by symmetry
FCC = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])


def _structure_factor(positions):
    return np.sum(np.exp(2j * np.pi * (positions.reshape(4, 3) @ H)))


CASES = {
    # (written through a modulus, written smoothly, where)
    "abs(x) ** 2": (lambda x: np.sum(np.abs(x) ** 2 * np.arange(1.0, 4.0)),
                    lambda x: np.sum(x * x * np.arange(1.0, 4.0)), np.array([0.0, -1.5, 0.0])),
    "np.square(abs(z)) of complex z": (lambda x: np.sum(np.square(np.abs(x[:2] + 1j * x[2:]))),
                                       lambda x: np.sum(x * x), np.array([0.0, 0.3, 0.0, 0.0])),
    "norm(w) ** 2 (Newton from w = 0)": (lambda w: np.linalg.norm(w) ** 2 + np.sum(np.log1p(np.exp(w))),
                                         lambda w: w @ w + np.sum(np.log1p(np.exp(w))), np.zeros(3)),
    "norm of rows ** 2": (lambda w: np.sum(np.linalg.norm(w.reshape(2, 2), axis=1) ** 2),
                          lambda w: w @ w, np.array([0.0, 0.0, 1.0, -2.0])),
    "|F|^2 at an absent reflection": (lambda p: abs(_structure_factor(p)) ** 2,
                                      lambda p: (_structure_factor(p) * np.conj(_structure_factor(p))).real,
                                      FCC.ravel()),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_square_of_a_modulus_at_zero_has_the_squares_second_derivatives(name):
    through_modulus, smooth, x = CASES[name]
    assert through_modulus(x) == smooth(x) or np.isclose(through_modulus(x), smooth(x), rtol=1e-15, atol=1e-28)
    want = duals.hessian(smooth)(x)
    assert np.abs(want).max() > 1.0   # (the case reaches a zero modulus with curvature there)
    for way, got in _second_derivatives(through_modulus, x).items():
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=way)
    np.testing.assert_allclose(duals.grad(through_modulus)(x), duals.grad(smooth)(x), rtol=1e-12, atol=1e-12)


def test_the_values_are_the_plain_squares_bit_for_bit():
    z = np.array([0.0, 3.0 + 4.0j, 1e-3 - 2e-3j, 0.7])
    plain = np.abs(z) ** 2
    value, _ = duals.value_and_grad(lambda s: np.sum(np.abs(z * s) ** 2))(1.0)
    assert value == np.sum(plain)
    np.testing.assert_array_equal(duals.jvp(lambda s: np.abs(z * s) ** 2, (1.0,), (1.0,))[0], plain)
    w = np.zeros(3)
    assert duals.value_and_grad(lambda w: np.linalg.norm(w) ** 2)(w)[0] == 0.0


def test_away_from_zero_the_square_follows_the_chain_rule_through_the_modulus():
    x = np.array([0.4, -1.1])
    np.testing.assert_allclose(duals.hessian(lambda x: np.sum(np.abs(x) ** 2))(x), 2 * np.eye(2), rtol=1e-15)
    np.testing.assert_allclose(duals.hessian(lambda x: np.linalg.norm(x) ** 2)(x), 2 * np.eye(2), rtol=1e-14)
