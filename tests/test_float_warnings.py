"""NumPy's floating-point warnings raised inside duals point at the user's line and name the rule."""
import inspect
import warnings

import numba
import numpy as np
import pytest

import duals


def _line_of(function, text):
    """The line number in this file of the line of ``function`` that contains ``text``."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


def user_sqrt(x):
    return np.sum(np.sqrt(x))


def user_log(x):
    return np.sum(np.log(x))


def test_a_reverse_rule_warning_points_at_the_line_that_called_grad():
    with pytest.warns(RuntimeWarning, match="divide by zero") as record:
        g = duals.grad(np.sqrt)(0.0)
    assert g == np.inf   # sqrt'(0) = inf, the documented policy
    assert [w.filename for w in record] == [__file__]
    assert "sqrt (reverse mode, formula 0.5 / out)" in str(record[0].message)


def test_the_primal_warning_points_at_the_users_own_line():
    # grad of sum(log(x)) at 0: log(0) while recording, 1/0 in the rule while walking back
    with pytest.warns(RuntimeWarning) as record:
        duals.grad(user_log)(np.zeros(3))
    assert {w.filename for w in record} == {__file__}
    primal = [w for w in record if str(w.message) == "divide by zero encountered in log"]
    assert [w.lineno for w in primal] == [_line_of(user_log, "np.log")]
    assert any("log (reverse mode, formula 1.0 / x)" in str(w.message) for w in record)


@pytest.mark.parametrize("transform", [
    lambda f, x: duals.grad(f)(x),
    lambda f, x: duals.jacrev(f)(x),
    lambda f, x: duals.vjp(f, x)[1](1.0),
    lambda f, x: duals.value_and_grad(f)(x),
], ids=["grad", "jacrev", "vjp", "value_and_grad"])
def test_every_transformation_reports_at_the_user_file(transform):
    with pytest.warns(RuntimeWarning, match="divide by zero") as record:
        transform(user_sqrt, np.zeros(2))
    assert {w.filename for w in record} == {__file__}


def test_forward_mode_rules_on_numpy_report_at_the_user_file():
    # exp and log take NumPy's value and the table's formula from 1000 elements on
    x = np.zeros(2000)
    with pytest.warns(RuntimeWarning, match="divide by zero") as record:
        duals.jvp(lambda x: np.log(x), (x,), (np.ones_like(x),))
    assert {w.filename for w in record} == {__file__}
    assert any("log (forward mode, formula 1.0 / x)" in str(w.message) for w in record)


def test_var_backward_reports_at_the_line_that_called_backward():
    v = duals.Var(np.array(0.0))
    out = np.sqrt(v)
    with pytest.warns(RuntimeWarning, match="sqrt") as record:
        out.backward()
    assert [w.filename for w in record] == [__file__]
    assert v.grad == np.inf


def test_the_callers_error_state_is_kept():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # any warning would fail the test
        with np.errstate(divide="ignore"):
            assert duals.grad(np.sqrt)(0.0) == np.inf
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        duals.grad(np.sqrt)(0.0)


def test_a_callback_of_the_caller_is_left_in_charge():
    seen = []
    with np.errstate(divide="call", call=lambda error, flag: seen.append(error)):
        duals.grad(np.sqrt)(0.0)
    assert seen == ["divide by zero"]


def test_no_warning_where_nothing_goes_wrong():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert duals.grad(np.sqrt)(4.0) == 0.25
        np.testing.assert_allclose(duals.jacfwd(np.log)(np.ones(3)), np.eye(3))
        # x ** h at x = 0 (Hill kinetics from zero): the exponent's rule took log(0) in the branch
        # it then discarded, two warnings for a derivative of 0 (NumPy's 0.0 ** 2.0 is silent)
        power = lambda p: p[0] ** p[1]  # noqa: E731
        for mode in (duals.grad, duals.jacfwd, duals.jacrev, duals.hessian):
            assert np.all(np.isfinite(mode(power)(np.array([0.0, 2.0]))))
        big = np.zeros(5000)   # (the element-wise kernels of large arrays)
        assert np.all(duals.grad(lambda e: np.sum(big ** e))(np.full(5000, 2.0)) == 0.0)
        assert duals.grad(numba.njit(lambda x, h: x ** h), argnums=1)(0.0, 2.0) == 0.0


def test_a_warnings_filter_of_error_raises_the_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="sqrt"):
            duals.grad(np.sqrt)(0.0)


def test_code_without_a_source_file_gets_the_warning_too():
    # python -c: the caller's module has no source a loader could give (warnings.warn_explicit
    # with module_globals would fail there); the report names <string> and the line
    import subprocess
    import sys
    code = "import numpy as np, duals\nduals.grad(np.sqrt)(0.0)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "<string>:2: RuntimeWarning: divide by zero encountered in sqrt" in done.stderr


def bernoulli(x):
    """x / (e^x - 1), its overflowing branch silenced by the user and discarded by np.where."""
    with np.errstate(all="ignore"):
        middle = x / np.expm1(x)
    return np.where(np.abs(x) < 1e-3, 1.0 - 0.5 * x + x * x / 12.0,
                    np.where(x > 35.0, x * np.exp(-x), middle))


@pytest.mark.parametrize("transform", [duals.grad, duals.hessian, lambda f: duals.jacrev(lambda x: f(x))])
def test_a_rule_runs_under_the_error_state_its_operation_ran_under(transform):
    # the reverse walk (and forward over reverse's) ran the rules of x / expm1(x) after the
    # user's np.errstate(all="ignore") had ended: hessian warned "overflow encountered in div"
    # from the branch np.where discards (a semiconductor trial); the values were exact
    x = np.array([1.0, 800.0, 1e-300, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = transform(lambda x: np.sum(bernoulli(x)))(x)
    first = np.diag(out) if np.ndim(out) == 2 and transform is duals.hessian else out
    assert np.all(np.isfinite(first))
    assert np.geterr() == {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
    # outside the user's errstate the rules still report (log's 1/x at 0), at the user's line
    with pytest.warns(RuntimeWarning) as record:   # (the value's own log(0) warns too)
        duals.grad(lambda x: np.sum(np.log(x)))(np.array([0.0, 1.0]))
    assert any("divide by zero encountered in log (reverse mode" in str(w.message) for w in record)
