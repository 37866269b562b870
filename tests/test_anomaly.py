"""duals.detect_anomaly: the first NaN/inf raises, naming primitive, mode and the user's line."""
import warnings

import numpy as np
import pytest

import duals
import duals.core
import duals.numpy as dnp
from duals.anomaly import AnomalyError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _line_of(marker):
    """The line number in this file of the source line containing ``marker``."""
    with open(__file__) as source:
        return next(k for k, text in enumerate(source, 1) if marker in text and "_line_of" not in text)


def sqrt_user(x):
    return dnp.sum(dnp.sqrt(x) * 2.0)  # SITE-SQRT


def log_user(x):
    return dnp.sum(dnp.log(x))  # SITE-LOG


def _raised(call):
    with duals.detect_anomaly():
        with pytest.raises(AnomalyError) as info:
            call()
    return info.value


def test_value_nan_in_forward_mode_names_primitive_mode_and_user_line():
    e = _raised(lambda: duals.jacfwd(log_user)(np.array([1.0, -1.0])))
    assert (e.primitive, e.mode, e.kind) == ("log", "forward", "value")
    assert e.site[0] == __file__ and e.site[1] == _line_of("SITE-LOG")
    assert f"{__file__}:{_line_of('SITE-LOG')}" in str(e)


def test_value_inf_while_recording_the_tape_is_reported_in_reverse_mode():
    e = _raised(lambda: duals.grad(log_user)(np.array([1.0, 0.0])))
    assert (e.primitive, e.mode, e.kind) == ("log", "reverse", "value")


def test_infinite_cotangent_points_at_the_forward_line_that_created_the_node():
    e = _raised(lambda: duals.grad(sqrt_user)(np.array([1.0, 0.0])))
    assert (e.primitive, e.mode, e.kind) == ("sqrt", "reverse", "cotangent")
    assert e.site[1] == _line_of("SITE-SQRT")
    assert "VJP rule" in str(e)


def test_infinite_tangent_names_the_jvp_rule():
    e = _raised(lambda: duals.jvp(sqrt_user, (np.array([0.0]),), (np.array([1.0]),)))
    assert (e.primitive, e.mode, e.kind) == ("sqrt", "forward", "tangent")
    assert e.site[1] == _line_of("SITE-SQRT")


def test_nan_inside_a_rule_of_a_nested_transformation_is_blamed_on_the_outer_rule():
    # reverse over forward: sqrt's JVP rule runs on recorded values; its 0.5/out is inf
    e = _raised(lambda: duals.jacrev(duals.jacfwd(sqrt_user))(np.array([1.0, 0.0])))
    assert e.primitive == "sqrt" and e.kind in ("tangent", "cotangent")
    assert e.site[1] == _line_of("SITE-SQRT")


def test_imperative_backward_reports_the_cotangent_with_its_site():
    x = duals.Var(np.array([0.0, 4.0]))
    with duals.detect_anomaly():
        y = sqrt_user(x)
        with pytest.raises(AnomalyError) as info:
            y.backward()
    assert info.value.kind == "cotangent" and info.value.site[1] == _line_of("SITE-SQRT")


def test_plain_numpy_evaluation_inside_the_context_is_checked_too():
    e = _raised(lambda: log_user(np.array([-1.0])))
    assert (e.primitive, e.mode, e.kind) == ("log", "none", "value")


def test_nan_arriving_from_the_inputs_is_said_to_come_from_outside():
    e = _raised(lambda: duals.grad(lambda x: dnp.sum(dnp.sin(x)))(np.array([np.nan])))
    assert "inputs were already not finite" in str(e)


def test_nan_inside_a_vjp_rule_at_a_finite_input_is_said_to_be_the_derivative():
    # sqrt's VJP at 0 makes inf inside the rule (its select's inputs are not finite): that is
    # no sign of a non-finite input (a scattering trial's Debye formula at r_ii = 0)
    e = _raised(lambda: duals.jacrev(lambda x: np.sinc(np.sqrt(x)))(np.array([0.0, 1.0])))
    assert e.primitive == "sqrt" and e.kind == "cotangent"
    assert "its inputs were finite: the derivative is infinite or undefined" in str(e)


def test_finite_computations_run_unchanged_inside_the_context():
    x = np.array([0.3, 1.7])
    with duals.detect_anomaly():
        h = duals.hessian(sqrt_user)(x)
    np.testing.assert_allclose(h, duals.hessian(sqrt_user)(x), rtol=0, atol=0)


def test_outside_the_context_nans_pass_silently_and_nothing_is_recorded():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = duals.grad(sqrt_user)(np.array([0.0]))
    assert np.isinf(g).all()
    assert duals.core.ANOMALY is None


def test_context_restores_the_flag_after_an_exception():
    with pytest.raises(AnomalyError):
        with duals.detect_anomaly():
            log_user(np.array([-1.0]))
    assert duals.core.ANOMALY is None


def test_cotangent_from_a_raw_numpy_custom_rule_is_checked():
    p = duals.extend.primitive("anomaly_raw_rule", np.sin)
    p.def_vjp(0, lambda g, out, x: g / np.zeros_like(x))   # plain NumPy, no primitive sees it
    e = _raised(lambda: duals.grad(lambda x: dnp.sum(p(x)))(np.array([0.5])))
    assert (e.primitive, e.kind) == ("anomaly_raw_rule", "cotangent")
