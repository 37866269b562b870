"""duals.sensitivity.adjoint_gradient: the continuous adjoint against forward sensitivities, central
differences and closed forms; Python and @njit right-hand sides; stiff methods; bad input."""
import numba
import numpy as np
import pytest

pytest.importorskip("scipy.integrate")

import duals.numpy as dnp  # noqa: E402
from duals.sensitivity import SolveFailedError, adjoint_gradient, solve_ivp  # noqa: E402

LV_P = np.array([1.0, 0.4, 0.1, 0.4])
LV_Y0 = np.array([10.0, 5.0])
LV_T = np.linspace(1.0, 8.0, 8)
DATA = np.array([3.0, 4.0])


def lotka_volterra(t, y, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[2] * y[0] * y[1] - p[3] * y[1]])


@numba.njit(cache=True)
def lotka_volterra_compiled(t, y, p):
    out = np.empty_like(y)
    out[0] = p[0] * y[0] - p[1] * y[0] * y[1]
    out[1] = p[2] * y[0] * y[1] - p[3] * y[1]
    return out


def squared_misfit(t, y):
    return dnp.sum((y - DATA) ** 2) * (1.0 + 0.1 * t)


def _forward_gradient(fun, t_eval, method="RK45", rtol=1e-10, atol=1e-10):
    """The same gradient from forward sensitivities: sum_k  dloss/dy(t_k) S(t_k)."""
    res = solve_ivp(fun, (0.0, t_eval[-1]), LV_Y0, LV_P, sens_y0=True, t_eval=t_eval,
                    method=method, rtol=rtol, atol=atol)
    grad = np.zeros(6)
    for k, t in enumerate(t_eval):
        grad += (2 * (res.y[:, k] - DATA) * (1.0 + 0.1 * t)) @ res.sensitivity[:, :, k]
    return grad


@pytest.mark.parametrize("fun", [lotka_volterra, lotka_volterra_compiled], ids=["python", "njit"])
def test_adjoint_matches_forward_sensitivities_at_observation_times(fun):
    res = adjoint_gradient(fun, (0.0, 8.0), LV_Y0, LV_P, squared_misfit, t_eval=LV_T,
                           rtol=1e-10, atol=1e-10)
    assert res.segments == LV_T.size and res.parameter_names == [f"p[{j}]" for j in range(4)]
    forward = _forward_gradient(fun, LV_T)
    np.testing.assert_allclose(np.concatenate([res.grad_p, res.grad_y0]), forward, rtol=1e-6)


def test_adjoint_matches_central_differences_of_the_functional():
    def value(p, y0):
        sol = solve_ivp(lotka_volterra_compiled, (0.0, 8.0), y0, p, t_eval=LV_T, rtol=1e-11,
                        atol=1e-11)
        return sum(float(squared_misfit(t, sol.y[:, k])) for k, t in enumerate(LV_T))
    res = adjoint_gradient(lotka_volterra_compiled, (0.0, 8.0), LV_Y0, LV_P, squared_misfit,
                           t_eval=LV_T, rtol=1e-10, atol=1e-10)
    assert abs(res.value - value(LV_P, LV_Y0)) < 1e-6 * abs(res.value)
    for j in range(4):
        h = 1e-5 * LV_P[j]
        e = np.zeros(4)
        e[j] = h
        fd = (value(LV_P + e, LV_Y0) - value(LV_P - e, LV_Y0)) / (2 * h)
        assert abs(res.grad_p[j] - fd) < 1e-5 * abs(fd)


def test_integrand_and_observation_at_t0_by_closed_form():
    # y = y0 e^{-kt}: J = ∫_0^T y dt + y(0)^2 = y0 (1 - e^{-kT}) / k + y0^2
    k, y0, T = 0.7, 1.5, 2.0
    res = adjoint_gradient(lambda t, y, p: -p["k"] * y, (0.0, T), [y0], {"k": k},
                           loss=lambda t, y: y[0] ** 2, t_eval=[0.0],
                           integrand=lambda t, y: y[0], rtol=1e-11, atol=1e-12)
    e = np.exp(-k * T)
    assert abs(res.value - (y0 * (1 - e) / k + y0 ** 2)) < 1e-9
    d_k = y0 * (T * e / k - (1 - e) / k ** 2)
    d_y0 = (1 - e) / k + 2 * y0
    assert isinstance(res.grad_p, dict) and abs(res.grad_p["k"] - d_k) < 1e-8
    np.testing.assert_allclose(res.grad_y0, [d_y0], rtol=1e-9)


@numba.njit(cache=True)
def robertson_compiled(t, y, p):
    out = np.empty_like(y)
    out[0] = -p[0] * y[0] + p[2] * y[1] * y[2]
    out[1] = p[0] * y[0] - p[2] * y[1] * y[2] - p[1] * y[1] ** 2
    out[2] = p[1] * y[1] ** 2
    return out


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_stiff_adjoint_matches_forward_sensitivities(method):
    p, y0, t = np.array([0.04, 3.0e7, 1.0e4]), np.array([1.0, 0.0, 0.0]), np.array([0.4, 4.0, 40.0])
    weights = np.array([1.0, 1e4, 1.0])
    res = adjoint_gradient(robertson_compiled, (0.0, 40.0), y0, p, lambda t, y: dnp.sum(weights * y) * t,
                           t_eval=t, method=method, rtol=1e-8, atol=1e-12)
    fw = solve_ivp(robertson_compiled, (0.0, 40.0), y0, p, sens_y0=True, method="Radau",
                   t_eval=t, rtol=1e-10, atol=1e-14)
    reference = sum(t[k] * weights @ fw.sensitivity[:, :, k] for k in range(3))
    # BDF's dense output (the checkpoints) limits the adjoint to about 1e-5 at rtol = 1e-8
    tolerance = 1e-7 if method == "Radau" else 2e-5
    got = np.concatenate([res.gradient, res.grad_y0])
    assert np.all(np.abs(got - reference) <= tolerance * np.abs(reference))


def test_adjoint_is_the_gradient_when_the_adjoint_is_constant():
    # λ stays 1, the gradient is all quadrature: y(T) = (1 - cos pT) / p
    p, T = 2.0, 10.0
    res = adjoint_gradient(lambda t, y, p: dnp.stack([dnp.sin(p[0] * t)]), (0.0, T), [0.0],
                           np.array([p]), lambda t, y: y[0], rtol=1e-9, atol=1e-11)
    exact = T * np.sin(p * T) / p - (1 - np.cos(p * T)) / p ** 2
    assert abs(res.gradient[0] - exact) < 1e-7 * abs(exact)


def test_bad_input_is_refused():
    decay = (lambda t, y, k: -k * y)
    with pytest.raises(TypeError, match="give loss"):
        adjoint_gradient(decay, (0.0, 1.0), [1.0], 1.0)
    with pytest.raises(ValueError, match="sorted"):
        adjoint_gradient(decay, (0.0, 1.0), [1.0], 1.0, lambda t, y: y[0], t_eval=[0.5, 0.2])
    with pytest.raises(ValueError, match="lie in t_span"):
        adjoint_gradient(decay, (0.0, 1.0), [1.0], 1.0, lambda t, y: y[0], t_eval=[2.0])
    with pytest.raises(TypeError, match="no loss"):
        adjoint_gradient(decay, (0.0, 1.0), [1.0], 1.0, integrand=lambda t, y: y[0], t_eval=[0.5])
    with pytest.raises(SolveFailedError, match="forward solve"):
        adjoint_gradient(lambda t, y, c: c * y ** 2, (0.0, 2.0), [1.0], 1.0, lambda t, y: y[0])
    with pytest.raises(ValueError, match=r"t_eval gives t = 1 more than once.*replicate"):
        adjoint_gradient(decay, (0.0, 2.0), [1.0], 1.0, lambda t, y: y[0], t_eval=[1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"adjoint_gradient: loss\(t, y\) must return one number, got "
                                         r"shape \(1,\); return the number itself"):
        adjoint_gradient(decay, (0.0, 2.0), [1.5], 0.8, lambda t, y: y ** 2)


@pytest.mark.parametrize("method", ["RK45", "RK23", "DOP853", "Radau"])
def test_checkpoints_give_scipys_dense_output_bit_for_bit(method):
    from scipy.integrate import solve_ivp
    from duals.sensitivity.adjoint import _Checkpoints
    sol = solve_ivp(lambda t, y: [-y[1], y[0] - 0.1 * y[1]], (0.0, 10.0), [1.0, 0.0], method=method,
                    dense_output=True)
    checkpoints = _Checkpoints(sol.sol)
    for t in np.concatenate([np.linspace(10.0, 0.0, 301), sol.t]):   # backwards, and at the steps
        np.testing.assert_array_equal(checkpoints(t), sol.sol(t))


def test_a_loss_and_an_integrand_that_read_the_parameters_take_them_and_are_differentiated():
    """A terminal-voltage misfit V = U(y) - I Rc depends on Rc directly: a loss(t, y, p) raised
    Python's 'missing 1 required positional argument', and one reading p from a closure gave
    dJ/dRc = 0 (a user trial); now the third argument is differentiated, a closure is refused."""
    current = 2.0
    fun = lambda t, y, p: -p["k"] * current * y   # noqa: E731
    p = {"k": 0.1, "Rc": 0.05}
    times = np.array([1.0, 2.0, 3.0])

    def misfit(t, y, q):
        return (3.0 + y[0] - current * q["Rc"] - 3.5) ** 2

    res = adjoint_gradient(fun, (0.0, 3.0), [1.0], p, misfit, t_eval=times, rtol=1e-10, atol=1e-12)
    y = np.exp(-p["k"] * current * times)
    voltage = 3.0 + y - current * p["Rc"]
    assert res.value == pytest.approx(np.sum((voltage - 3.5) ** 2), rel=1e-9)
    assert res.grad_p["Rc"] == pytest.approx(np.sum(2 * (voltage - 3.5) * -current), rel=1e-8)
    assert res.grad_p["k"] == pytest.approx(np.sum(2 * (voltage - 3.5) * -current * times * y), rel=1e-8)

    heat = adjoint_gradient(fun, (0.0, 3.0), [1.0], p, integrand=lambda t, y, q: q["Rc"] * y[0] ** 2,
                            rtol=1e-10, atol=1e-12)
    assert heat.grad_p["Rc"] == pytest.approx((1 - np.exp(-2 * p["k"] * current * 3.0)) / (2 * p["k"] * current),
                                              rel=1e-8)

    @numba.njit
    def compiled_misfit(t, y, q):
        return (y[0] - q[1]) ** 2

    array_p = np.array([0.1, 0.3])
    res = adjoint_gradient(lambda t, y, q: -q[0] * y, (0.0, 1.0), [1.0], array_p, compiled_misfit,
                           rtol=1e-10, atol=1e-12)
    y1 = np.exp(-0.1)
    np.testing.assert_allclose(res.gradient, [2 * (y1 - 0.3) * -y1, -2 * (y1 - 0.3)], rtol=1e-8)

    with pytest.raises(TypeError, match=r"loss\(t, y\) reads p from a closure or a global.*loss\(t, y, p\)"):
        adjoint_gradient(fun, (0.0, 3.0), [1.0], p, lambda t, y: (y[0] - p["Rc"]) ** 2, t_eval=times)


def test_events_are_refused_naming_the_split_at_a_dose_which_gives_the_gradient():
    # (events trial) "events= is not accepted (duals sets up both solves)" did not say what to do
    decay = lambda t, y, p: -p["k"] * y   # noqa: E731
    with pytest.raises(TypeError, match=r"events= is not accepted: .*Split at the events .*grad_y0 · y"):
        adjoint_gradient(decay, (0.0, 2.0), [100.0], {"k": 0.5}, lambda t, y: y[0] ** 2, events=lambda t, y: y[0])
    options, dose = dict(rtol=1e-11, atol=1e-12), 50.0
    before = solve_ivp(decay, (0.0, 1.0), [100.0], {"k": 0.5}, **options).y[:, -1]
    second = adjoint_gradient(decay, (1.0, 2.0), before + dose, {"k": 0.5}, lambda t, y: y[0] ** 2, **options)
    first = adjoint_gradient(decay, (0.0, 1.0), [100.0], {"k": 0.5}, lambda t, y: second.grad_y0 @ y, **options)
    final = lambda k: (100.0 * np.exp(-k) + dose) * np.exp(-k)   # noqa: E731
    np.testing.assert_allclose(first.grad_p["k"] + second.grad_p["k"],
                               (final(0.5 + 1e-6) ** 2 - final(0.5 - 1e-6) ** 2) / 2e-6, rtol=1e-8)
