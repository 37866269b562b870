"""``r_``/``c_`` (autograd's forms), ``np.gradient`` and ``np.frexp``/``np.ldexp`` on traced values:
NumPy's values, closed-form derivatives and the policy where the mantissa jumps."""
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.testing import assert_close

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 2))
C = RNG.standard_normal((3, 2))
V = RNG.standard_normal(10)


def _dual(x):
    return duals.Dual(x, np.ones_like(x))

# ---------------------------------------------------------------- r_ and c_


FORMS = [  # the forms of autograd's test-suite, then directives and mixed entries
    ("r_[x]", lambda x, m: m.r_[x], A),
    ("r_[x, x]", lambda x, m: m.r_[x, x], A),
    ("r_[x, c]", lambda x, m: m.r_[x, C], A),
    ("r_[x, c, x]", lambda x, m: m.r_[x, C, x], A),
    ("r_[x, c, 1:10]", lambda x, m: m.r_[x, V, 1:10], V),
    ("c_[x, c, x]", lambda x, m: m.c_[x, C, x], A),
    ("c_[x, 1-d]", lambda x, m: m.c_[x, V[:3]], A[:, 0]),
    ("r_['0,2,0', x, x]", lambda x, m: m.r_["0,2,0", x, x], V[:3]),
    ("r_['-1', x, 2.0]", lambda x, m: m.r_["-1", x, 2.0], V[:3]),
    ("c_[x, 0:1:3j]", lambda x, m: m.c_[x, 0:1:3j], V[:3]),
]


@pytest.mark.parametrize("name,form,x", FORMS, ids=[f[0] for f in FORMS])
def test_r_and_c_give_numpys_value_and_a_checked_derivative(name, form, x):
    np.testing.assert_array_equal(form(_dual(x), dnp).primal, form(x, np))
    assert duals.gradcheck(lambda x: form(x, dnp), x)


def test_r_of_plain_values_is_numpys_own():
    assert dnp.r_[V, 1:3].tolist() == np.r_[V, 1:3].tolist()


def test_numpys_r_on_a_traced_value_points_to_duals_numpy_r():
    with pytest.raises(TypeError, match=r"dnp\.r_\[\.\.\.\]"):
        duals.grad(lambda x: np.sum(np.r_[x, 1.0]))(V)


def test_the_matrix_directive_is_refused():
    with pytest.raises(NotImplementedError, match="numpy.matrix"):
        dnp.r_["r", _dual(V[:2]), _dual(V[:2])]

# ---------------------------------------------------------------- gradient


@pytest.mark.parametrize("args,kwargs", [((), {}), ((0.5,), {}), ((0.5, 2.0), {}), ((), {"edge_order": 2}),
                                         ((0.3,), {"axis": 1}), ((np.array([0.0, 1.0, 3.0, 3.5]),), {"axis": 0}),
                                         ((np.arange(4.0) * 2,), {"axis": 0, "edge_order": 2})])
def test_gradient_value_is_numpys_and_its_derivative_is_numpys_stencil(args, kwargs):
    f = RNG.standard_normal((4, 5))
    got, expected = np.gradient(_dual(f), *args, **kwargs), np.gradient(f, *args, **kwargs)
    got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.primal, e)
    # gradient is linear in f: its Jacobian applied to any f is NumPy's gradient of that f
    stacked = lambda f: np.stack(np.atleast_1d(*np.gradient(f, *args, **kwargs)))  # noqa: E731
    probe = RNG.standard_normal(f.shape)
    for mode in ("jacfwd", "jacrev"):
        applied = np.tensordot(getattr(duals, mode)(stacked)(f), probe, axes=2)
        assert_close(applied, stacked(probe), 1e-12, 1e-12, f"{mode}: the stencil")


def test_gradient_with_respect_to_a_scalar_spacing_is_minus_the_gradient_over_h():
    f, h = RNG.standard_normal(6), 0.4
    assert_close(duals.jacfwd(lambda h: np.gradient(f, h))(h), -np.gradient(f, h) / h, 1e-12, 1e-12, "d/dh")
    assert_close(duals.jacrev(lambda h: np.gradient(f, h))(h), -np.gradient(f, h) / h, 1e-12, 1e-12, "d/dh")


def test_gradient_of_too_short_an_axis_raises_as_numpy():
    with pytest.raises(ValueError, match="too small"):
        np.gradient(_dual(np.ones(2)), edge_order=2)

# ---------------------------------------------------------------- frexp and ldexp


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_frexp_mantissa_derivative_is_dx_over_two_to_the_exponent(mode):
    x = np.array([3.0, -0.3, 8.0, 5e5, -7e-3])
    mantissa, exponent = np.frexp(_dual(x))
    m_np, e_np = np.frexp(x)
    np.testing.assert_array_equal(mantissa.primal, m_np)
    assert isinstance(exponent, np.ndarray) and exponent.dtype.kind == "i"
    np.testing.assert_array_equal(exponent, e_np)
    assert_close(getattr(duals, mode)(lambda x: np.frexp(x)[0])(x), np.diag(2.0 ** -e_np), 0, 0, "dm/dx")


def test_at_a_power_of_two_the_mantissa_takes_the_piece_to_its_right():
    # frexp(4) = (0.5, 3): the piece [4, 8) has slope 1/8 (the one to the left, [2, 4), has 1/4)
    assert duals.grad(lambda x: np.frexp(x)[0])(4.0) == 0.125


def test_ldexp_of_frexp_differentiates_to_one_everywhere_zero_included():
    x = np.array([0.0, 4.0, -3.5, 1e-300])
    assert duals.jacrev(lambda x: np.ldexp(*np.frexp(x)))(x).tolist() == np.eye(4).tolist()


def test_ldexp_refuses_a_traced_exponent():
    with pytest.raises(TypeError, match="exponent x2 is an integer"):
        np.ldexp(2.0, _dual(np.array([1.0])))
