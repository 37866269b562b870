"""duals.gradcheck: jacfwd, jacrev and finite differences compared; clear failures."""
import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.gradcheck import GradcheckError
from duals.testing import check_grads


def _rule_pair(name, jvp_scale=1.0, vjp_scale=1.0):
    """sin as a custom primitive whose rules are scaled (1.0 = correct)."""
    p = duals.extend.primitive(name, np.sin)
    p.def_jvp(0, lambda t, out, x: jvp_scale * dnp.cos(x) * t)
    p.def_vjp(0, lambda g, out, x: vjp_scale * dnp.cos(x) * g)
    return p


def test_returns_true_for_a_correct_function_of_several_arguments():
    x, y = np.array([0.1, 0.7, -0.4]), np.array([[1.5], [0.3]])
    assert duals.gradcheck(lambda x, y: dnp.sin(x) * y + dnp.exp(x / y), x, y) is True


def test_returns_true_for_float32_inputs_with_dtype_tolerances():
    assert duals.gradcheck(lambda x: dnp.tanh(x) * x, np.array([0.3, -1.2], dtype=np.float32))


def test_checks_every_output_of_a_tuple_returning_function():
    wrong = _rule_pair("gc_tuple_wrong", vjp_scale=2.0)
    with pytest.raises(GradcheckError, match=r"d\(output 1\)/d\(argument 0\)"):
        duals.gradcheck(lambda x: (dnp.sin(x), wrong(x)), np.array([0.2, 0.4]))


def test_wrong_vjp_rule_is_reported_with_the_worst_entry_and_three_values():
    wrong = _rule_pair("gc_wrong_vjp", vjp_scale=-1.0)
    x = np.array([0.1, 0.5, 1.0])
    with pytest.raises(GradcheckError) as info:
        duals.gradcheck(wrong, x)
    msg = str(info.value)
    # the worst entry is where |2 cos x| is largest: x = 0.1
    assert "output index (0,), input index (0,)" in msg
    assert repr(float(np.cos(0.1))) in msg and repr(float(-np.cos(0.1))) in msg
    assert "finite differences" in msg and "tolerance" in msg
    assert "a VJP rule is wrong" in msg


def test_wrong_jvp_rule_is_blamed_on_the_jvp_rule():
    wrong = _rule_pair("gc_wrong_jvp", jvp_scale=0.5)
    with pytest.raises(GradcheckError, match="a JVP rule is wrong"):
        duals.gradcheck(wrong, np.array([0.3]))


def test_rules_wrong_in_both_modes_disagree_with_finite_differences():
    wrong = _rule_pair("gc_wrong_both", jvp_scale=1.1, vjp_scale=1.1)
    with pytest.raises(GradcheckError, match="agree with each other but not with finite differences"):
        duals.gradcheck(wrong, np.array([0.3, 0.9]))


def test_tolerances_can_be_loosened_explicitly():
    slightly = _rule_pair("gc_slightly", jvp_scale=1 + 1e-4, vjp_scale=1 + 1e-4)
    x = np.array([0.3])
    with pytest.raises(GradcheckError):
        duals.gradcheck(slightly, x)
    assert duals.gradcheck(slightly, x, atol=1e-3, rtol=1e-3)


def test_kink_at_the_point_is_reported_as_not_differentiable():
    with pytest.raises(GradcheckError, match="not differentiable at this point") as info:
        duals.gradcheck(dnp.abs, np.array([1.0, 0.0]))
    assert "input index (1,)" in str(info.value)


def test_max_tie_is_reported_as_not_differentiable():
    with pytest.raises(GradcheckError, match="not differentiable"):
        duals.gradcheck(lambda x: dnp.maximum(x, 0.5), np.array([0.5]))


def test_infinite_derivative_is_reported_as_not_differentiable():
    with np.errstate(all="ignore"), pytest.raises(GradcheckError, match="jacfwd is inf .*not differentiable"):
        duals.gradcheck(dnp.sqrt, np.array([0.0, 1.0]))


def test_integer_input_is_refused_with_a_fix():
    with pytest.raises(TypeError, match=r"argument 1 has dtype int.*closing over it: gradcheck\(lambda"):
        duals.gradcheck(lambda x, n: x ** n, 2.0, 3)
    relax = numba.njit(lambda x, steps: np.sum(x ** steps))
    with pytest.raises(TypeError, match=r"closing over it: gradcheck\(numba.njit\(lambda x: f\(x, n\)\), x\)"):
        duals.gradcheck(relax, np.array([0.5, 1.5]), 3)
    assert duals.gradcheck(numba.njit(lambda x: relax(x, 3)), np.array([0.5, 1.5]))   # the advice works


def test_boolean_input_is_refused():
    with pytest.raises(TypeError, match="argument 0 has dtype bool"):
        duals.gradcheck(lambda m: m * 1.0, np.array([True]))


@numba.njit(cache=True)
def capped_balance(s, ela, cap):   # a glacier's mass balance, capped: min(number, number)
    total = 0.0
    for i in range(s.size):
        total += min(0.007 * (s[i] - ela), cap) * (s[i] / 1000.0) ** 2
    return total


def test_a_compiled_function_gets_its_numbers_as_numbers_from_the_differences():
    # the differences passed the float arguments as 0-d arrays, and Numba refused
    # min(float64, array(float64, 0d)) with a typing dump (a glaciology trial)
    s = np.array([1200.0, 1500.0, 1900.0])
    assert duals.gradcheck(capped_balance, s, 1400.0, 2.0)
    assert duals.testing.check_grads(capped_balance, (s, 1400.0, 2.0), order=2, rtol=1e-4)
    # a 0-d array given as one stays one
    assert duals.gradcheck(lambda x, k: x * k.reshape(1), np.array([1.0, 2.0]), np.array(3.0))


def test_eps_sets_the_finite_difference_step():
    # a huge step makes central differences of sin wrong by a visible factor sin(h)/h
    with pytest.raises(GradcheckError, match="finite differences"):
        duals.gradcheck(dnp.sin, np.array([0.2]), eps=0.5)


def test_gradcheck_takes_parameters_held_in_dicts_and_lists():
    # the containers grad takes: a dict said "dtype object", a ragged list NumPy's own ValueError
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=3)}
    x = rng.normal(size=2)
    assert duals.gradcheck(lambda p: np.sum(np.tanh(p["W"] @ x + p["b"])), params)
    assert duals.gradcheck(lambda ps, x: np.sum(ps[0] @ x + ps[1]), [params["W"], params["b"]], x)
    wrong = _rule_pair("gc_in_a_dict_wrong", vjp_scale=2.0)
    with pytest.raises(GradcheckError, match="a VJP rule is wrong"):
        duals.gradcheck(lambda p: np.sum(wrong(p["b"])), params)


def test_a_numba_dispatcher_is_checked_in_compiled_mode_to_second_order():
    # (gradcheck wrapped f in a Python function, which hid the dispatcher: every @njit function
    # was refused, with advice to differentiate the compiled function itself; a user trial)
    import numba

    @numba.njit
    def log_density(theta, scale):
        s = 0.0
        for i in range(theta.shape[0]):
            s += -0.5 * (theta[i] / scale) ** 2 + np.log1p(theta[i] ** 2)
        return s

    @numba.njit
    def field(theta):
        return np.sin(theta) * theta[0]

    x = np.array([0.3, -1.2, 0.7])
    assert duals.gradcheck(log_density, x, 1.5)
    assert duals.gradcheck(field, x)
    from duals.testing import check_grads
    assert check_grads(log_density, (x, 1.5), order=2)
    with pytest.raises(TypeError, match="one scalar output; check order=1 here"):
        check_grads(field, (x,), order=2)
    with pytest.raises(TypeError, match="second order at most"):
        check_grads(log_density, (x, 1.5), order=3)


@numba.njit
def _noisy_energy_compiled(x):
    return np.sum(x ** 2 * (1.0 + 0.1 * np.random.standard_normal(x.size)))


def test_a_function_that_draws_noise_is_checked_for_one_realisation():
    """Every evaluation gradcheck makes starts from one random state: each finite difference drew
    other noise and the check reported 'f is not differentiable at this point'."""
    def noisy_energy(x):
        return np.sum(x ** 2 * (1.0 + 0.1 * np.random.normal(size=x.shape)))

    x = np.linspace(0.1, 1.0, 5)
    np.random.seed(0)
    assert duals.gradcheck(noisy_energy, x)
    from duals.testing import check_grads
    assert check_grads(noisy_energy, (x,), order=2)
    assert duals.gradcheck(_noisy_energy_compiled, x)
    assert check_grads(_noisy_energy_compiled, (x,), order=2)


def test_an_entry_of_a_container_argument_is_named_by_its_argument_and_key():
    """An integer inside a dict given as argument 1 was 'argument 3' (its place among the
    flattened leaves, an argument the function does not have; a user trial)."""
    def f(x, params):
        return np.sum(x ** params["p"]) * params["scale"]

    with pytest.raises(TypeError, match=r"gradcheck: argument 1\['zn'\] has dtype int64"):
        duals.gradcheck(f, np.array([0.3, 0.7]), {"p": 3.0, "scale": 2.0, "zn": 30})
    with pytest.raises(GradcheckError, match=r"d f/d\(argument 1\[1\]\)"):
        duals.gradcheck(lambda x, pair: np.sum(x * duals.stop_gradient(pair[1])) + pair[0],
                        np.array([0.3]), (1.0, np.array([2.0])))


def test_kinks_that_cancel_are_named_in_the_hint():
    # a friction limit at zero force (vehicle trial): the hint blamed the library's rules only
    def limited(F):
        return np.sign(F) * np.minimum(np.abs(F), 1e3)
    assert duals.grad(limited)(0.0) == 0.0   # the policy's sign(0) · 1 (docs/non_differentiable.md)
    assert duals.grad(lambda F: np.clip(F, -1e3, 1e3))(0.0) == 1.0   # the spelling it advises
    with pytest.raises(GradcheckError, match=r"rule is wrong, or f is written through kinks that "
                                             r"cancel at exactly this point"):
        duals.gradcheck(limited, 0.0)


FREQUENCIES = 2 * np.pi * np.logspace(-2, 4, 8)


def parallel_cpe_impedance(p):
    """R0 + (R_ct ‖ CPE) over a frequency sweep, as an EIS fit writes it (Q = p[2] ~ 1e-5)."""
    return p[0] + 1 / (1 / p[1] + p[2] * (1j * FREQUENCIES) ** p[3])


def test_inputs_of_mixed_scales_are_differenced_with_steps_to_their_size():
    # (EIS trial) eps · max(1, |x|) = 6e-6 is 30 % of Q = 2e-5: gradcheck blamed a rule on exact
    # derivatives, and no one eps suited both Q and alpha
    p = np.array([10.0, 50.0, 2e-5, 0.85])
    assert duals.gradcheck(parallel_cpe_impedance, p)
    with pytest.raises(GradcheckError, match="finite differences mismatch"):   # a given eps is kept
        duals.gradcheck(parallel_cpe_impedance, p, eps=1e-9)


def test_compiled_code_with_complex_intermediates_is_checked_by_its_forward_modes():
    # (EIS trial) gradcheck called jacrev, which compiled reverse mode refuses for complex values
    @numba.njit
    def sweep(p, w):
        out = np.empty(2 * w.shape[0])
        for k in range(w.shape[0]):
            z = p[0] + 1.0 / (1.0 / p[1] + p[2] * (1j * w[k]) ** p[3])
            out[k], out[w.shape[0] + k] = z.real, z.imag
        return out

    @numba.njit
    def misfit(p, w):
        return np.sum(sweep(p, w) ** 2)

    p, w = np.array([10.0, 50.0, 0.2, 0.85]), np.logspace(-1, 1, 4)
    assert duals.gradcheck(sweep, p, w)
    assert check_grads(misfit, (p, w))
    with pytest.raises(TypeError, match="compiled forward mode only"):   # asked for alone: refused
        check_grads(sweep, (p, w), order=1, modes=("rev",))
