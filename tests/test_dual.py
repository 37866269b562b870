"""duals.Dual as in API.md §1: arithmetic obeys ε² = 0, NumPy works on it, errors are clear."""
import cmath
import math

import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import Dual

OPERATIONS = [
    ("add", lambda a, b: a + b, lambda a, b, da, db: da + db),
    ("sub", lambda a, b: a - b, lambda a, b, da, db: da - db),
    ("mul", lambda a, b: a * b, lambda a, b, da, db: da * b + a * db),
    ("div", lambda a, b: a / b, lambda a, b, da, db: (da * b - a * db) / b ** 2),
    ("pow", lambda a, b: a ** b, lambda a, b, da, db: b * a ** (b - 1) * da + a ** b * np.log(a) * db),
    ("floordiv", lambda a, b: a // b, lambda a, b, da, db: 0.0 * (da + db)),
    ("mod", lambda a, b: a % b, lambda a, b, da, db: da - (a // b) * db),
]
CONSTANTS = [3, 2.5, np.float64(1.5), np.array([1.5, 2.0])]


@pytest.mark.parametrize("name,op,rule", OPERATIONS, ids=[o[0] for o in OPERATIONS])
@pytest.mark.parametrize("c", CONSTANTS, ids=["int", "float", "np-float", "array"])
def test_arithmetic_with_constants_in_both_operand_orders(name, op, rule, c):
    a, da = 1.7, 0.3
    left = op(Dual(a, da), c)
    right = op(c, Dual(a, da))
    np.testing.assert_allclose(left.primal, op(a, c))
    np.testing.assert_allclose(left.tangent, rule(a, np.asarray(c, float), da, 0.0), rtol=1e-12)
    np.testing.assert_allclose(right.primal, op(c, a))
    np.testing.assert_allclose(right.tangent, rule(np.asarray(c, float), a, 0.0, da), rtol=1e-12)


@pytest.mark.parametrize("name,op,rule", OPERATIONS, ids=[o[0] for o in OPERATIONS])
def test_arithmetic_between_two_duals_follows_the_product_rule(name, op, rule):
    a, b, da, db = 1.3, 0.8, 0.4, -1.1
    d = op(Dual(a, da), Dual(b, db))
    np.testing.assert_allclose(d.tangent, rule(a, b, da, db), rtol=1e-12)


def test_epsilon_squared_is_zero():
    eps = Dual(0.0, 1.0)
    assert (eps * eps).primal == 0.0 and (eps * eps).tangent == 0.0


def test_floats_stay_floats_and_arrays_stay_arrays():
    d = Dual(2.0, 1.0) * 3.0
    assert isinstance(d.primal, float) and isinstance(d.tangent, float)
    a = Dual(np.ones(3), np.arange(3.0)) * 2.0
    assert isinstance(a.tangent, np.ndarray) and a.tangent.shape == (3,)


def test_unary_operators_and_abs_at_zero():
    d = Dual(-2.0, 1.0)
    assert (-d).tangent == -1.0
    assert abs(d).tangent == -1.0
    assert abs(Dual(0.0, 1.0)).tangent == 0.0  # policy abs'(0) = 0


def test_comparisons_compare_primals():
    assert Dual(1.0, 100.0) < Dual(2.0, -100.0)
    assert Dual(1.0, 5.0) == Dual(1.0, 7.0)
    assert (Dual(np.array([1.0, 3.0]), np.zeros(2)) > 2.0).tolist() == [False, True]


def test_numpy_ufuncs_functions_and_methods_act_on_duals():
    x, t = np.array([0.1, 0.5, 0.9]), np.array([1.0, 2.0, 3.0])
    d = Dual(x, t)
    np.testing.assert_allclose(np.sin(d).tangent, np.cos(x) * t)
    np.testing.assert_allclose(dnp.exp(d).tangent, np.exp(x) * t)
    np.testing.assert_allclose(np.sum(d).tangent, t.sum())
    np.testing.assert_allclose(d.sum().tangent, t.sum())
    np.testing.assert_allclose(d[1:].tangent, t[1:])
    np.testing.assert_allclose((d @ d).tangent, 2 * x @ t)
    np.testing.assert_allclose(np.mean(d).tangent, t.mean())


def test_numpy_function_without_rule_raises_naming_it():
    with pytest.raises(TypeError, match="numpy.histogram2d has no derivative rule"):
        np.histogram2d(Dual(np.ones(2), np.ones(2)), np.ones(2))
    with pytest.raises(TypeError, match="numpy.i0"):
        np.i0(Dual(np.ones(2), np.ones(2)))


def test_mismatched_tangent_shape_is_refused():
    with pytest.raises(ValueError, match="tangent shape"):
        Dual(np.ones(3), np.ones(2))


@pytest.mark.parametrize("bad", [np.array(["a"]), np.array([True]), np.array([object()])])
def test_non_float_primals_are_refused(bad):
    with pytest.raises(TypeError):
        Dual(bad, np.zeros(1))


def test_converting_to_python_float_refuses_to_drop_the_derivative():
    with pytest.raises(TypeError, match="drop its derivative"):
        float(Dual(1.0, 1.0))


def _log_likelihood_with_lgamma(k):
    return math.lgamma(k + 1.0) - k


def _with_sin(x):
    return math.sin(x) * 2.0


def test_a_math_function_on_a_traced_value_names_its_array_spelling():
    # math.lgamma has no np.lgamma: the way out is scipy.special.gammaln
    with pytest.raises(TypeError, match=r"math.lgamma takes Python numbers only: write scipy.special.gammaln"):
        duals.grad(_log_likelihood_with_lgamma)(2.5)
    with pytest.raises(TypeError, match=r"math.sin takes Python numbers only: write np.sin"):
        duals.grad(_with_sin)(2.5)


def _bode_phase_degrees(x):
    return math.degrees(cmath.phase(1j * x + 2.0))


def _warburg_root(x):
    return cmath.sqrt(1j * x + 2.0).real


def test_a_cmath_function_on_a_traced_value_names_its_array_spelling():
    # (EIS trial) the advice said math.*, or named math.degrees, which takes the plain number after
    with pytest.raises(TypeError, match=r"cmath.phase takes Python numbers only: write np.angle"):
        duals.grad(_bode_phase_degrees)(1.0)
    with pytest.raises(TypeError, match=r"cmath.sqrt takes Python numbers only: write np.sqrt"):
        duals.grad(_warburg_root)(1.0)
    assert duals.grad(lambda x: np.degrees(np.angle(1j * x + 2.0)))(1.0) == pytest.approx(
        np.degrees(2.0 / (4.0 + 1.0)), rel=1e-14)   # the spelling it names works


def test_item_assignment_into_traced_array_says_what_to_use():
    d = Dual(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="dnp.where"):
        d[0] = 2.0


def test_dnp_on_plain_arrays_returns_plain_arrays():
    out = dnp.sin(np.array([0.0, 1.0]))
    assert type(out) is np.ndarray
    assert type(dnp.sum(np.ones(2))) in (float, np.float64)
