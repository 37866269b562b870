"""duals.sensitivity.solve_ivp: forward sensitivities of ODE solutions against closed forms and
central differences of whole solves, the exact augmented Jacobian, events, dense output, and
bad input."""
import math
import subprocess
import sys

import numba
import numpy as np
import pytest

scipy_integrate = pytest.importorskip("scipy.integrate")
from scipy.linalg import expm  # noqa: E402

import duals  # noqa: E402
import duals.numpy as dnp  # noqa: E402
from duals.sensitivity import SolveFailedError, solve_ivp  # noqa: E402
from duals.sensitivity.model import RightHandSide  # noqa: E402
from duals.sensitivity.ode import _Augmented  # noqa: E402
from duals.sensitivity.parameters import Parameters  # noqa: E402

ROBERTSON_P = np.array([0.04, 3.0e7, 1.0e4])
ROBERTSON_Y0 = np.array([1.0, 0.0, 0.0])
ROBERTSON_T = np.array([0.4, 4.0, 40.0])


def robertson(t, y, p):
    return dnp.stack([-p[0] * y[0] + p[2] * y[1] * y[2],
                      p[0] * y[0] - p[2] * y[1] * y[2] - p[1] * y[1] ** 2,
                      p[1] * y[1] ** 2])


@numba.njit(cache=True)
def robertson_compiled(t, y, p):
    out = np.empty_like(y)
    out[0] = -p[0] * y[0] + p[2] * y[1] * y[2]
    out[1] = p[0] * y[0] - p[2] * y[1] * y[2] - p[1] * y[1] ** 2
    out[2] = p[1] * y[1] ** 2
    return out


def robertson_jacobian(t, y, p):
    return np.array([[-p[0], p[2] * y[2], p[2] * y[1]],
                     [p[0], -p[2] * y[2] - 2 * p[1] * y[1], -p[2] * y[1]],
                     [0.0, 2 * p[1] * y[1], 0.0]])


def _relative(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# ---------------------------------------------------------------- closed forms


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau"])
def test_exponential_decay_matches_closed_form(method):
    k, y0 = 0.7, 2.0
    t = np.linspace(0.0, 3.0, 7)
    res = solve_ivp(lambda t, y, k: -k * y, (0.0, 3.0), [y0], k, sens_y0=True, method=method,
                    t_eval=t, rtol=1e-10, atol=1e-12)
    assert res.success and res.sensitivity.shape == (1, 2, t.size)
    np.testing.assert_allclose(res.y[0], y0 * np.exp(-k * t), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(res.sensitivity[0, 0], -t * y0 * np.exp(-k * t), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(res.sensitivity[0, 1], np.exp(-k * t), rtol=1e-7, atol=1e-10)


def _linear_model(p):
    A0 = np.array([[-1.0, 0.5], [0.2, -0.8]])
    parts = [np.array([[-1.0, 0.0], [1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, -1.0]])]
    return A0, parts


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF"])
def test_linear_system_matches_the_matrix_exponential(method):
    p = np.array([0.3, 1.2])
    A0, parts = _linear_model(p)

    def fun(t, y, p):
        A = A0 + p[0] * parts[0] + p[1] * parts[1]
        return A @ y

    y0 = np.array([1.0, -0.5])
    t = np.array([0.5, 1.0, 2.5])
    res = solve_ivp(fun, (0.0, 2.5), y0, p, sens_y0=True, method=method, t_eval=t,
                    rtol=1e-10, atol=1e-12)
    A = A0 + p[0] * parts[0] + p[1] * parts[1]
    for k, tk in enumerate(t):
        np.testing.assert_allclose(res.y[:, k], expm(A * tk) @ y0, rtol=1e-7, atol=1e-10)
        for j, Aj in enumerate(parts):
            # d/dp_j expm(A t) is the upper right block of expm([[A, A_j], [0, A]] t)
            block = expm(np.block([[A, Aj], [np.zeros((2, 2)), A]]) * tk)[:2, 2:]
            np.testing.assert_allclose(res.sensitivity[:, j, k], block @ y0, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(res.sensitivity[:, 2:, k], expm(A * tk), rtol=1e-6, atol=1e-9)


def test_logistic_equation_matches_closed_form_by_name():
    r, K, y0 = 0.8, 5.0, 0.3
    t = np.linspace(0.0, 10.0, 11)
    res = solve_ivp(lambda t, y, p: p["r"] * y * (1 - y / p["K"]), (0.0, 10.0), [y0],
                    {"r": r, "K": K}, sens_y0=True, t_eval=t, rtol=1e-10, atol=1e-12)
    e = np.exp(-r * t)
    c = K / y0 - 1
    d = 1 + c * e
    np.testing.assert_allclose(res.y[0], K / d, rtol=1e-8)
    assert res.parameter_names == ["r", "K", "y0[0]"]
    np.testing.assert_allclose(res.sensitivity_to("r")[0], K * c * t * e / d ** 2, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.sensitivity_to("K")[0], 1 / d - K * e / (y0 * d ** 2),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.sensitivity_to("y0")[0, 0], K ** 2 * e / (y0 ** 2 * d ** 2),
                               rtol=1e-6, atol=1e-9)
    assert res.sensitivity_to("y0[0]").shape == (1, t.size)


# ---------------------------------------------------------------- Robertson (stiff)


def _robertson_by_central_differences():
    def solve(p):
        return scipy_integrate.solve_ivp(robertson_compiled, (0.0, 40.0), ROBERTSON_Y0,
                                         method="Radau", t_eval=ROBERTSON_T, rtol=1e-11,
                                         atol=1e-15, args=(p,), jac=robertson_jacobian).y
    columns = []
    for j in range(3):
        step = np.zeros(3)
        step[j] = 1e-4 * ROBERTSON_P[j]
        columns.append((solve(ROBERTSON_P + step) - solve(ROBERTSON_P - step)) / (2 * step[j]))
    return np.stack(columns, axis=1)     # (state, parameter, time)


@pytest.fixture(scope="module")
def robertson_reference():
    return _robertson_by_central_differences()


@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_robertson_sensitivities_match_central_differences(method, robertson_reference):
    res = solve_ivp(robertson_compiled, (0.0, 40.0), ROBERTSON_Y0, ROBERTSON_P, method=method,
                    t_eval=ROBERTSON_T, rtol=1e-8, atol=1e-12, names=["k1", "k2", "k3"])
    assert res.njev > 0
    for j in range(3):   # each rate constant on its own scale
        assert _relative(res.sensitivity[:, j], robertson_reference[:, j]) < 2e-6
    np.testing.assert_array_equal(res.sensitivity_to("k2"), res.sensitivity[:, 1])


def test_robertson_python_and_compiled_fun_agree():
    # The Python path forms J_y S by a BLAS product, the compiled one pushes S's columns as
    # lanes: equal up to rounding, which the stiff solver's step-size control amplifies (3.5e-9
    # relative, measured with NumPy 2.4 and SciPy 1.17). A wrong derivative would differ by far
    # more than the solver's own tolerance (rtol=1e-6); a tenth of it is the bound.
    runs = [solve_ivp(f, (0.0, 4.0), ROBERTSON_Y0, ROBERTSON_P, method="BDF", rtol=1e-6,
                      atol=1e-10) for f in (robertson, robertson_compiled)]
    assert runs[0].t.size == runs[1].t.size
    np.testing.assert_allclose(runs[0].sensitivity, runs[1].sensitivity, rtol=1e-7, atol=1e-14)


@pytest.mark.parametrize("fun", [robertson, robertson_compiled], ids=["python", "njit"])
@pytest.mark.parametrize("sens_y0", [False, True])
def test_augmented_jacobian_is_exact(fun, sens_y0):
    k = 3 + (3 if sens_y0 else 0)
    system = _Augmented(RightHandSide(fun, Parameters(ROBERTSON_P, "test"), 3, "test"), k, False)
    z = np.random.default_rng(0).uniform(0.0, 1.0, system.size) * 1e-2
    J = system.jacobian(0.0, z)
    step = 1e-6
    numerical = np.stack([(system(0.0, z + step * e) - system(0.0, z - step * e)) / (2 * step)
                          for e in np.eye(system.size)], axis=1)
    assert _relative(J, numerical) < 1e-8
    system.sparse = True
    np.testing.assert_array_equal(system.jacobian(0.0, z).toarray(), J)


def reaction_diffusion(t, y, p):
    lap = dnp.concatenate([y[1:2] - y[:1], y[2:] - 2 * y[1:-1] + y[:-2], y[-2:-1] - y[-1:]])
    return p[0] * lap - p[1] * y ** 2 + p[2] * dnp.sin(y)


@numba.njit
def reaction_diffusion_compiled(t, y, p):
    out = np.empty(y.size)
    for i in range(y.size):
        left = y[i - 1] if i > 0 else y[i]
        right = y[i + 1] if i < y.size - 1 else y[i]
        out[i] = p[0] * (left - 2 * y[i] + right) - p[1] * y[i] ** 2 + p[2] * math.sin(y[i])
    return out


@pytest.mark.parametrize("fun", [reaction_diffusion, reaction_diffusion_compiled], ids=["python", "njit"])
def test_augmented_jacobian_of_a_chain_longer_than_one_chunk_of_lanes_is_exact(fun):
    # 19 states (compiled: chunks of 8 unit lanes, the last padded; it compiled for 19 lanes, and
    # for every n anew: 200 s at n = 400) and directions along y and p (Python: k lanes under n,
    # where the whole Jacobian was differentiated: cubic in n)
    n, k = 19, 5
    system = _Augmented(RightHandSide(fun, Parameters(np.array([3.0, 2.0, 0.5]), "test"), n, "test"), k, False)
    z = np.random.default_rng(1).uniform(0.1, 1.0, system.size)
    J = system.jacobian(0.0, z)
    step = 1e-6
    numerical = np.stack([(system(0.0, z + step * e) - system(0.0, z - step * e)) / (2 * step)
                          for e in np.eye(system.size)], axis=1)
    assert _relative(J, numerical) < 1e-7


# ---------------------------------------------------------------- dense output, events, outputs


def test_dense_output_gives_state_and_sensitivities():
    k = 0.5
    res = solve_ivp(lambda t, y, k: -k * y, (0.0, 2.0), [1.0, 3.0], k, sens_y0=True,
                    dense_output=True, rtol=1e-10, atol=1e-12)
    assert res.sol(1.3).shape == (2,) and res.sensitivity_sol(1.3).shape == (2, 3)
    np.testing.assert_allclose(res.sol(1.3), np.array([1.0, 3.0]) * np.exp(-k * 1.3), rtol=1e-8)
    ts = np.array([0.2, 1.3])
    S = res.sensitivity_sol(ts)
    assert S.shape == (2, 3, 2)
    np.testing.assert_allclose(S[:, 0, :], -ts * np.array([[1.0], [3.0]]) * np.exp(-k * ts), rtol=1e-7)
    np.testing.assert_allclose(S[:, 1:, 1], np.eye(2) * np.exp(-k * 1.3), rtol=1e-7, atol=1e-12)


def test_events_report_state_sensitivities_and_event_time_derivatives():
    k, y0 = 0.8, 2.0

    def half(t, y, p):
        return y[0] - 0.5
    half.terminal = True
    res = solve_ivp(lambda t, y, k: -k * y, (0.0, 10.0), [y0], k, sens_y0=True, events=half,
                    rtol=1e-10, atol=1e-12)
    t_e = math.log(y0 / 0.5) / k
    assert res.status == 1
    np.testing.assert_allclose(res.t_events[0], [t_e], rtol=1e-9)
    np.testing.assert_allclose(res.y_events[0], [[0.5]], rtol=1e-9)
    assert res.sensitivity_events[0].shape == (1, 1, 2)
    np.testing.assert_allclose(res.sensitivity_events[0][0, 0], [-t_e * 0.5, 0.5 / y0], rtol=1e-7)
    # t_e = ln(y0 / 0.5) / k: dt_e/dk = -t_e / k, dt_e/dy0 = 1 / (k y0)
    np.testing.assert_allclose(res.t_events_sensitivity[0], [[-t_e / k, 1 / (k * y0)]], rtol=1e-7)


def test_an_event_written_as_scipys_takes_no_parameters_and_one_reading_them_is_refused():
    """event(t, y), as SciPy's, raised Python's "takes 2 positional arguments but 3 were given" from
    inside duals (an events trial). y = cos(2 sqrt(k)/2 t) crosses 0 at pi / (2 sqrt(k)):
    dt/dk = -pi / 4 k^-3/2."""
    def spring(t, y, p):
        return dnp.stack([y[1], -p["k"] * y[0]])

    def crossing(t, y):
        return y[0]
    crossing.terminal = True
    res = solve_ivp(spring, (0.0, 3.0), [1.0, 0.0], {"k": 4.0}, events=crossing, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.t_events[0], [math.pi / 4], rtol=1e-9)
    np.testing.assert_allclose(res.t_events_sensitivity[0], [[-math.pi / 4 * 4.0 ** -1.5]], rtol=1e-7)
    parameters = {"k": 4.0}

    def reading(t, y):
        return y[0] - 0.1 * parameters["k"]
    with pytest.raises(TypeError, match=r"event\(t, y\) reads p from a closure .*event\(t, y, p\)"):
        solve_ivp(spring, (0.0, 3.0), [1.0, 0.0], parameters, events=reading)


def test_an_event_that_never_fires_gives_empty_arrays():
    """Reshaping no hits with -1 raised (a user trial): the arrays are empty, as SciPy's."""
    def never(t, y, k):
        return y[0] + 1.0
    res = solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), [1.0, 2.0], np.array([0.5, 1.0]), events=never)
    assert res.t_events[0].shape == (0,)
    assert res.y_events[0].shape == (0, 2)
    assert res.sensitivity_events[0].shape == (0, 2, 2)
    assert res.t_events_sensitivity[0].shape == (0, 2)


@pytest.mark.parametrize("t_eval", [[], np.array([])])
def test_events_alone_with_an_empty_t_eval(t_eval):
    """y = e^{-p t} reaches 1/2 at t = ln 2 / p: dt/dp = -ln 2 / p^2 (SciPy returns y as a list here)."""
    res = solve_ivp(lambda t, y, p: -p * y, (0.0, 1.0), [1.0], 2.0, t_eval=t_eval, rtol=1e-10,
                    atol=1e-12, events=lambda t, y, p: y[0] - 0.5)
    assert res.t.shape == (0,) and res.y.shape == (1, 0) and res.sensitivity.shape == (1, 1, 0)
    np.testing.assert_allclose(res.t_events_sensitivity[0], [[-np.log(2.0) / 4.0]], rtol=1e-7)


def test_a_fun_returning_a_list_and_integer_y0_work():
    res = solve_ivp(lambda t, y, p: [-p[0] * y[0], p[0] * y[0]], (0.0, 1.0), [1, 0], [2.0],
                    t_eval=[1.0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.sensitivity[:, 0, -1], [-np.exp(-2.0), np.exp(-2.0)], rtol=1e-7)


def test_compiled_fun_with_a_scalar_parameter():
    @numba.njit
    def decay(t, y, k):
        return -k * y
    res = solve_ivp(decay, (0.0, 1.0), [1.0], 0.5, method="Radau", t_eval=[1.0], rtol=1e-10,
                    atol=1e-12)
    np.testing.assert_allclose(res.sensitivity[0, 0, -1], -np.exp(-0.5), rtol=1e-7)


@numba.njit
def decay_into_a_buffer(t, y, p):
    """dy/dt = -p0 y, written as Numba code usually is: a buffer from np.empty, filled entry by entry."""
    out = np.empty(y.size)
    for i in range(y.size):
        out[i] = -p[0] * y[i]
    return out


@pytest.mark.parametrize("method", ["RK45", "BDF"])
def test_a_compiled_fun_filling_its_own_buffer_matches_the_closed_form(method):
    """The buffer holds floats in the plain call and duals here, as in duals.jacfwd of it (this
    stopped at a Numba typing error); first and second order (sens_y0) alike."""
    res = solve_ivp(decay_into_a_buffer, (0.0, 1.0), [1.0, 3.0], np.array([2.0]), sens_y0=True,
                    method=method, t_eval=[1.0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.sensitivity[:, 0, -1], -np.array([1.0, 3.0]) * np.exp(-2.0), rtol=1e-6)
    np.testing.assert_allclose(res.sensitivity[:, 1:, -1], np.eye(2) * np.exp(-2.0), rtol=1e-6, atol=1e-12)


def test_import_duals_sensitivity_imports_no_scipy():
    code = ("import sys, duals, duals.sensitivity; assert 'scipy' not in sys.modules; "
            "duals.sensitivity.local; assert 'scipy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- bad input


def test_p_of_the_wrong_shape_names_the_shapes():
    with pytest.raises(ValueError, match=r"raised ValueError.*y0 has shape \(2,\), p is shape \(3,\)"):
        solve_ivp(lambda t, y, p: -p * y, (0.0, 1.0), [1.0, 2.0], np.ones(3))
    with pytest.raises(IndexError, match=r"p is shape \(1,\)"):
        solve_ivp(lambda t, y, p: -p[1] * y, (0.0, 1.0), [1.0, 2.0], np.ones(1))
    with pytest.raises(ValueError, match=r"returned shape \(2, 2\).*p is shape \(2, 2\)"):
        solve_ivp(lambda t, y, p: -p * y, (0.0, 1.0), [1.0, 2.0], np.ones((2, 2)))


def test_fun_returning_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match=r"returned shape \(3,\) but y0 has shape \(2,\)"):
        solve_ivp(lambda t, y, p: dnp.stack([y[0], y[1], p]), (0.0, 1.0), [1.0, 2.0], 1.0)


@pytest.mark.parametrize("y0", [[1.0 + 1j], [True], ["a"], [[1.0]]])
def test_non_float_y0_is_refused(y0):
    with pytest.raises((TypeError, ValueError), match="y0"):
        solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), y0, 1.0)


def test_a_failed_solve_raises_with_status_and_message_and_no_arrays():
    with pytest.raises(SolveFailedError) as info:   # y' = y^2 from 1 blows up at t = 1
        solve_ivp(lambda t, y, c: c * y ** 2, (0.0, 2.0), [1.0], 1.0, rtol=1e-8)
    assert info.value.status == -1
    assert "step size" in info.value.message and 0.9 < info.value.t < 1.01
    assert "status -1" in str(info.value)
    assert "try a stiff method (method='BDF' or 'Radau')" in str(info.value)
    with pytest.raises(SolveFailedError, match=r"try another stiff method \(method='Radau' or 'LSODA'\)"):
        solve_ivp(lambda t, y, c: c * y ** 2, (0.0, 2.0), [1.0], 1.0, method="BDF", rtol=1e-8)


def test_other_bad_input_gets_a_clear_error():
    def decay(t, y, k):
        return -k * y
    with pytest.raises(ValueError, match="one name per entry"):
        solve_ivp(decay, (0.0, 1.0), [1.0], [1.0], names=["a", "b"])
    with pytest.raises(ValueError, match="nothing to differentiate"):
        solve_ivp(decay, (0.0, 1.0), [1.0], np.zeros(0))
    with pytest.raises(TypeError, match="jac= is not accepted"):
        solve_ivp(decay, (0.0, 1.0), [1.0], 1.0, jac=lambda t, y: -1.0)
    with pytest.raises(TypeError, match="dict"):
        solve_ivp(numba.njit(lambda t, y, p: -y), (0.0, 1.0), [1.0], {"k": 1.0})
    res = solve_ivp(lambda t, y, p: -p["k"] * y, (0.0, 1.0), [1.0], {"k": 1.0})
    with pytest.raises(KeyError, match="no parameter named 'q'"):
        res.sensitivity_to("q")


def test_a_compiled_fun_that_changes_p_in_place_is_refused():
    @numba.njit
    def greedy(t, y, p):
        p[0] = p[0] * 2.0
        return -p[0] * y
    with pytest.raises(ValueError, match=r"the compiled fun\(t, y, p\) writes into y or p, which it gets "
                                         r"read-only.*p = p\.copy\(\)"):
        solve_ivp(greedy, (0.0, 1.0), [1.0], np.array([0.5]))


def test_a_compiled_fun_that_does_not_compile_for_p_names_the_shapes():
    @numba.njit
    def decay(t, y, p):
        return -p[0] * y
    with pytest.raises(TypeError, match=r"cannot compile decay even for plain numbers.*getitem\(float64.*"
                                        r"p is shape \(\)"):
        solve_ivp(decay, (0.0, 1.0), [1.0], 0.5)


def test_a_dict_p_without_the_key_fun_reads_names_the_keys():
    with pytest.raises(KeyError, match=r"raised KeyError: 'beta'.*p is a dict of 'b': shape \(\)"):
        solve_ivp(lambda t, y, p: -p["beta"] * y, (0.0, 1.0), [1.0], {"b": 0.5})


@numba.njit
def decay_through_an_inner_dual(t, y, p):
    out = np.empty_like(y)
    out[0] = -p[0] * (duals.Dual(t, 1.0) * y[0]).tangent   # d/ds (s y) = y
    return out


def test_a_compiled_fun_making_its_own_dual_is_refused_not_mixed_with_the_sensitivity_lanes():
    # its one lane had the type of the single parameter's: y(T) 0.7605 for e^-1 = 0.3679
    with pytest.raises(ValueError, match="nested inside compiled code"):
        solve_ivp(decay_through_an_inner_dual, (0.0, 2.0), [1.0], np.array([0.5]), t_eval=[2.0])


def test_inside_a_transformation_the_sensitivity_functions_name_the_chain_rule_instead():
    # (events trial: y0 a steady state of p, an outer fit) the advice was np.array's or "a NumPy
    # function without a duals rule"
    def damped(t, y, p):
        return dnp.stack([y[1], -p["k"] * y[0] - p["c"] * y[1]])
    for transform, call in (
            (duals.jacfwd, lambda y0: solve_ivp(damped, (0.0, 1.0), y0, {"k": 4.0, "c": 0.3}).y[:, -1]),
            (duals.grad, lambda k: solve_ivp(damped, (0.0, 1.0), [1.0, 0.0], {"k": k, "c": 0.3}).y[0, -1]),
            (duals.grad, lambda k: duals.sensitivity.adjoint_gradient(
                damped, (0.0, 1.0), [1.0, 0.0], {"k": k, "c": 0.3}, lambda t, y: y[0] ** 2).value)):
        with pytest.raises(TypeError, match=r"(y0|p\['k'\]) is traced by an enclosing duals transformation.*"
                                            r"dy/dθ = S_p \+ S_y0 · dy0/dθ"):
            transform(call)(np.array([1.0, 0.0]) if transform is duals.jacfwd else 4.0)
