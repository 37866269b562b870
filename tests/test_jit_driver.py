"""Compiled drivers (duals.jit.driver): once a layout's calls have paid for it, jvp and single-pass
jacfwd of a dispatcher run through one compiled call. Every result must equal the general
path's bit for bit, and every layout a driver cannot serve must keep the general path."""
import math

import numba
import numpy as np
import pytest

import duals
from duals import tree
from finite_differences import central_differences

CALLS = 5  # more than the warm-up calls, so the driver serves the last ones


@pytest.fixture(autouse=True)
def drivers_without_delay(monkeypatch):
    """Drivers from the third call of a layout: these tests check what a driver returns, not when
    a long loop's calls have paid for it (see test_a_driver_is_built_once_its_calls_pay_for_it)."""
    from duals.jit import driver
    monkeypatch.setattr(driver, "DRIVER_COMPILE_S", 0.0)


@numba.njit
def lorenz_final(state, params, steps, dt):
    s = state.copy()
    k = np.empty_like(s)
    for _ in range(steps):
        k[0] = params[0] * (s[1] - s[0])
        k[1] = s[0] * (params[1] - s[2]) - s[1]
        k[2] = s[0] * s[1] - params[2] * s[2]
        s = s + dt * k
    return s


@numba.njit
def damped_energy(x, c):
    total = 0.0
    for i in range(x.shape[0]):
        total += 0.5 * x[i] ** 2 * math.exp(-c * i)
    return total


@numba.njit(parallel=True)
def parallel_squares(x):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * x[i] + math.sin(x[i])
    return out


@numba.njit
def pair_result(x):
    return x * 2.0, np.sum(x)


@numba.njit
def checked_log(x):
    if x[0] < 0.0:
        raise ValueError("negative start")
    return np.log(x)


@numba.njit
def apply(g, x):
    return g(x) * 2.0


@numba.njit
def square(x):
    return x * x


def _driver_of(f):
    """Whether some layout of ``f`` holds a driver (the path these tests mean to exercise)."""
    return any(h.driver is not None for h in f.__dict__.get("_duals_hot", {}).values())


def _same(results):
    first = results[0]
    for r in results[1:]:
        for a, b in zip(np.atleast_1d(first), np.atleast_1d(r)):
            np.testing.assert_array_equal(a, b)


def test_jacfwd_through_the_driver_equals_the_general_path_and_central_differences():
    state, params = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0])
    jac = duals.jacfwd(lorenz_final, argnums=1)
    results = [jac(state, params, 50, 0.01) for _ in range(CALLS)]
    _same(results)
    assert _driver_of(lorenz_final)
    want = central_differences(lorenz_final, [state, params, 50, 0.01], 1)
    np.testing.assert_allclose(results[-1], want, rtol=1e-6, atol=1e-8)
    assert results[-1].shape == (3, 3)


def test_jvp_through_the_driver_with_scalar_and_array_inputs_and_changing_constants():
    x = np.linspace(0.1, 1.0, 6)
    results = [duals.jvp(damped_energy, (x, 0.3), (np.ones(6), 1.0)) for _ in range(CALLS)]
    _same(results)
    assert _driver_of(damped_energy)
    value, slope = results[-1]
    assert type(value) is float and type(slope) is float
    want = central_differences(lambda x, c: damped_energy(x, c), [x, 0.3], 0).sum() + \
        central_differences(damped_energy, [x, 0.3], 1)
    assert slope == pytest.approx(want, rel=1e-7)
    # a constant argument of another type: the driver compiles again, same numbers
    again = duals.jvp(damped_energy, (x, 0.3), (np.ones(6), None))
    assert again[1] == pytest.approx(central_differences(lambda x: damped_energy(x, 0.3), [x], 0).sum(), rel=1e-7)


def test_scalar_and_vector_jacobians_of_one_function_keep_their_shapes():
    x = np.linspace(0.1, 1.0, 4)
    grads = [duals.jacfwd(damped_energy, argnums=(0, 1))(x, 0.5) for _ in range(CALLS)]
    _same([np.concatenate([g[0], [g[1]]]) for g in grads])
    assert grads[-1][0].shape == (4,) and type(grads[-1][1]) is float


def test_one_jacfwd_object_reused_across_layouts_returns_fresh_correct_blocks():
    """A jacfwd object called in a loop takes its drivers' layouts first; a call of another
    layout (shape, argument type, argument count) must still find its own way, and no result may
    share memory with the next."""
    jac = duals.jacfwd(lorenz_final, argnums=1)
    state, params = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0])
    first = [jac(state, params, 30, 0.01) for _ in range(CALLS)]
    assert _driver_of(lorenz_final)
    kept = first[-1].copy()
    first[-1][:] = np.nan                               # the caller owns what it got
    np.testing.assert_array_equal(jac(state, params, 30, 0.01), kept)
    want = central_differences(lorenz_final, [state, params, 30, 0.01], 1)
    np.testing.assert_allclose(kept, want, rtol=1e-6, atol=1e-8)
    # integer parameters (converted by the general path) and a longer parameter vector
    np.testing.assert_array_equal(jac(state, np.array([10, 28, 3]), 30, 0.01),
                                  jac(state, np.array([10.0, 28.0, 3.0]), 30, 0.01))
    energy = duals.jacfwd(damped_energy, argnums=(0, 1))
    for n in (4, 4, 4, 4, 7, 4):
        x = np.linspace(0.1, 1.0, n)
        gx, gc = energy(x, 0.5)
        assert gx.shape == (n,) and type(gc) is float
        np.testing.assert_allclose(gx, central_differences(damped_energy, [x, 0.5], 0), rtol=1e-7)
    with pytest.raises(ValueError, match="argnums=1 refers to argument 1"):
        jac(state)


def test_jacfwd_made_afresh_at_every_call_shares_the_plans_of_its_layout_only():
    """duals.jacfwd(f)(x) in a loop (a Newton loop writes it so) finds the plan the last one made
    (kept on f); calls of other argnums, chunk sizes and layouts of the same f, interleaved, must
    each get their own blocks."""
    state, params = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0])
    x = np.linspace(0.1, 1.0, 4)
    want_params = central_differences(lorenz_final, [state, params, 30, 0.01], 1)
    want_state = central_differences(lorenz_final, [state, params, 30, 0.01], 0)
    want_x = central_differences(damped_energy, [x, 0.5], 0)
    for _ in range(CALLS):
        np.testing.assert_allclose(duals.jacfwd(lorenz_final, argnums=1)(state, params, 30, 0.01),
                                   want_params, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(duals.jacfwd(lorenz_final)(state, params, 30, 0.01), want_state,
                                   rtol=1e-6, atol=1e-8)
        both = duals.jacfwd(lorenz_final, argnums=(0, 1), chunk_size=2)(state, params, 30, 0.01)
        np.testing.assert_allclose(np.concatenate(both, axis=1), np.concatenate([want_state, want_params], axis=1),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(duals.jacfwd(damped_energy)(x, 0.5), want_x, rtol=1e-7)
        gx, gc = duals.jacfwd(damped_energy, argnums=(0, 1))(x, 0.5)
        np.testing.assert_array_equal(gx, duals.jacfwd(damped_energy)(x, 0.5))
        assert type(gc) is float


def test_blocks_of_several_arguments_through_the_driver_are_independent():
    """With several ``argnums`` the driver's one block is cut into one Jacobian per argument
    (views of it, not copies): each must equal the general path's, and writing into one block
    must change neither another block nor the next call's result."""
    state, params = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0])
    jac = duals.jacfwd(lorenz_final, argnums=(0, 1, 3))
    general = duals.jacfwd(lorenz_final, argnums=(0, 1, 3))(state, params, 20, 0.01)
    results = [jac(state, params, 20, 0.01) for _ in range(CALLS)]
    assert _driver_of(lorenz_final)
    for blocks in results:
        for got, want in zip(blocks, general):
            np.testing.assert_array_equal(got, want)
    d_state, d_params, d_dt = results[-1]
    assert d_state.shape == (3, 3) and d_params.shape == (3, 3) and d_dt.shape == (3,)
    kept = [b.copy() for b in results[-1]]
    d_state[:] = np.nan
    np.testing.assert_array_equal(d_params, kept[1])
    np.testing.assert_array_equal(d_dt, kept[2])
    for got, want in zip(jac(state, params, 20, 0.01), kept):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(d_dt, central_differences(lorenz_final, [state, params, 20, 0.01], 3),
                               rtol=1e-6, atol=1e-8)


def test_parallel_functions_run_their_promoting_copy_through_the_driver():
    x = np.linspace(-1.0, 1.0, 5)
    results = [duals.jacfwd(parallel_squares)(x) for _ in range(CALLS)]
    _same(results)
    assert _driver_of(parallel_squares)
    np.testing.assert_allclose(results[-1], np.diag(2 * x + np.cos(x)), rtol=1e-13)


def test_layouts_a_driver_does_not_serve_keep_the_general_path():
    x = np.linspace(0.5, 1.5, 3)
    for _ in range(CALLS):  # two results: a tuple
        j = duals.jacfwd(pair_result)(x)
        np.testing.assert_array_equal(j[0], 2 * np.eye(3))
        np.testing.assert_array_equal(j[1], np.ones(3))
    assert not _driver_of(pair_result)
    for _ in range(CALLS):  # a dispatcher among the arguments
        np.testing.assert_array_equal(duals.jacfwd(apply, argnums=1)(square, x), np.diag(4 * x))
    assert not _driver_of(apply)
    x32 = x.astype(np.float32)
    for _ in range(CALLS):  # float32 keeps float32
        assert duals.jvp(square, (x32,), (np.ones(3, np.float32),))[1].dtype == np.float32


def test_errors_raised_by_the_users_code_propagate_through_the_driver():
    x = np.array([1.0, 2.0])
    for _ in range(CALLS):
        duals.jacfwd(checked_log)(x)
    assert _driver_of(checked_log)
    with pytest.raises(ValueError, match="negative start"):
        duals.jacfwd(checked_log)(-x)
    np.testing.assert_array_equal(duals.jacfwd(checked_log)(x), np.diag(1 / x))


def test_a_wrong_call_raises_and_leaves_the_layouts_driver_in_place():
    x = np.array([1.0, 2.0])
    jac = duals.jacfwd(damped_energy)
    for _ in range(CALLS):
        jac(x, 0.3)
    def driven():
        return [h for key, h in damped_energy.__dict__["_duals_hot"].items()
                if key[0] == "jacfwd" and h.driver is not None]
    assert driven()
    with pytest.raises(TypeError, match="cannot compile damped_energy even for plain numbers"):
        jac(x, None)                       # the driver cannot compile for None: general path's error
    assert driven()
    np.testing.assert_allclose(jac(x, 0.3), central_differences(damped_energy, [x, 0.3], 0), rtol=1e-7)


# ---------------------------------------------------------------- reverse mode

@numba.njit
def misfit(params, observed, steps):
    s = np.array([1.0, 1.0, 1.0])
    k = np.empty(3)
    for _ in range(steps):
        k[0] = params[0] * (s[1] - s[0])
        k[1] = s[0] * (params[1] - s[2]) - s[1]
        k[2] = s[0] * s[1] - params[2] * s[2]
        s = s + 0.01 * k
    r = s - observed
    return r @ r


@numba.njit
def constant_energy(x):
    return 3.0


@numba.njit
def reaction_rates(t, y, p):
    return np.array([-p[0] * y[0] * y[1], p[0] * y[0] * y[1] - p[1] * y[1], p[1] * y[1]])


def test_grad_through_the_driver_equals_the_general_path_and_central_differences():
    params, observed = np.array([10.0, 28.0, 8.0 / 3.0]), np.array([2.0, 3.0, 20.0])
    grad = duals.grad(misfit, argnums=(0, 1))
    results = [grad(params, observed, 40) for _ in range(CALLS)]
    for r in results[1:]:
        for a, b in zip(results[0], r):
            np.testing.assert_array_equal(a, b)
    assert _driver_of(misfit)
    np.testing.assert_allclose(results[-1][0], central_differences(misfit, [params, observed, 40], 0),
                               rtol=1e-6)
    values = [duals.value_and_grad(misfit)(params, observed, 40)[0] for _ in range(CALLS)]
    assert values[-1] == misfit(params, observed, 40) and type(values[-1]) is float
    for _ in range(CALLS):  # a constant result: zero gradient, through the driver too
        np.testing.assert_array_equal(duals.grad(constant_energy)(params), np.zeros(3))
    with pytest.raises(TypeError, match="scalar output"):
        duals.grad(lambda_free_vector)(params)


def test_one_grad_object_reused_across_layouts_takes_the_driver_only_for_its_own():
    """A grad object in a loop finds its driver's layout before converting arguments: every
    other layout (integers, float32, a longer vector, a 0-d array, aliased arguments) must still
    be converted or refused by the general path, with the same numbers."""
    grad = duals.grad(damped_energy, argnums=(0, 1))
    x = np.linspace(0.1, 1.0, 4)
    results = [grad(x, 0.5) for _ in range(CALLS)]
    assert _driver_of(damped_energy)
    for gx, gc in results[1:]:
        np.testing.assert_array_equal(gx, results[0][0])
        assert gc == results[0][1] and type(gc) is float
    np.testing.assert_allclose(results[-1][0], central_differences(damped_energy, [x, 0.5], 0), rtol=1e-7)
    for other, c in ((np.arange(1, 5), 0.5), (x.astype(np.float32), 0.5), (np.linspace(0.1, 1.0, 7), 0.5),
                     (x, 1), (x, np.array(0.5))):
        gx, gc = grad(other, c)
        want = central_differences(damped_energy, [np.asarray(other, dtype=float), float(c)], 0)
        np.testing.assert_allclose(gx, want, rtol=1e-6)
        assert gx.shape == np.shape(other) and type(gc) is float
    assert type(grad(x, 0.5)[1]) is float   # the driver's layout again


@numba.njit
def lambda_free_vector(x):
    return x * 2.0


def test_the_adjoint_solvers_pullback_through_the_driver_equals_the_general_path():
    from duals.jit.reverse import pull_once
    y, p, lam = np.array([0.9, 0.1, 0.0]), np.array([0.5, 0.2]), np.array([1.0, -2.0, 0.5])
    results = [pull_once(reaction_rates, [0.0, y, p], [1, 2], lam) for _ in range(CALLS)]
    for value, grads in results[1:]:
        np.testing.assert_array_equal(value, results[0][0])
        for a, b in zip(grads, results[0][1]):
            np.testing.assert_array_equal(a, b)
    assert _driver_of(reaction_rates)
    J = duals.jacfwd(reaction_rates, argnums=(1, 2))(0.0, y, p)
    np.testing.assert_allclose(results[-1][1][0], lam @ J[0], rtol=1e-14)
    np.testing.assert_allclose(results[-1][1][1], lam @ J[1], rtol=1e-14)
    with pytest.raises(ValueError, match="shape"):
        pull_once(reaction_rates, [0.0, y, p], [1, 2], np.ones(2))



@numba.njit
def tripled(x):
    return x * 3.0


def test_a_driver_made_without_aux_does_not_serve_a_call_with_has_aux():
    x = np.array([1.0, 2.0])
    for _ in range(CALLS):
        np.testing.assert_array_equal(duals.jacfwd(tripled)(x), 3.0 * np.eye(2))
    assert _driver_of(tripled)
    with pytest.raises(TypeError, match="must return a pair"):
        duals.jacfwd(tripled, has_aux=True)(x)


@numba.njit
def quartic(x):
    return np.sum(x ** 4)


def test_a_driver_is_built_once_its_calls_pay_for_it(monkeypatch):
    """The ski-rental rule: a handful of calls never compiles a driver (an interactive user never
    waits for one); the call after the saved work reaches the compilation's cost gets one; a
    caller that announces a long loop (the adjoint solver) gets it at its next call."""
    from duals.jit import driver
    from duals.jit.reverse import expect_pulls, pull_once
    monkeypatch.setattr(driver, "DRIVER_COMPILE_S", 0.5)   # this test's own setting, not the fixture's
    x = np.array([0.5, -1.0, 2.0])
    grad = duals.grad(quartic)
    for _ in range(20):
        np.testing.assert_array_equal(grad(x), 4 * x ** 3)
    assert not _driver_of(quartic)
    calls_to_pay = int(np.ceil(0.5 / driver.REVERSE_SAVING_S))
    (state,) = [h for h in quartic.__dict__["_duals_hot"].values()]
    state.saved += (calls_to_pay - 20) * driver.REVERSE_SAVING_S   # as if the loop had gone on
    np.testing.assert_array_equal(grad(x), 4 * x ** 3)
    assert _driver_of(quartic)
    np.testing.assert_array_equal(grad(x), 4 * x ** 3)             # served by the driver

    lam = np.array([1.0, -2.0, 0.5])
    y, p = np.array([0.9, 0.1, 0.0]), np.array([0.5, 0.2])
    reaction_rates.__dict__.pop("_duals_hot", None)
    pull_once(reaction_rates, [0.0, y, p], [1, 2], lam)
    assert not _driver_of(reaction_rates)
    expect_pulls(reaction_rates, [0.0, y, p], [1, 2], calls_to_pay)
    pull_once(reaction_rates, [0.0, y, p], [1, 2], lam)
    assert _driver_of(reaction_rates)


@numba.njit
def _cart_step(x, u):
    out = np.empty(4)
    out[0] = x[0] + 0.01 * x[2]
    out[1] = x[1] + 0.01 * x[3]
    out[2] = x[2] + 0.01 * (u[0] - math.sin(x[1]) + 0.01 * np.random.normal())
    out[3] = x[3] + 0.01 * math.cos(x[1]) * x[2]
    return out


@numba.njit
def _stage_cost(x, u):
    return np.sum(x * x) + 0.1 * u[0] ** 2 + math.sin(x[0]) * u[0]


def test_compile_makes_the_layouts_driver_at_once_and_returns_the_call(monkeypatch):
    """An iLQR loop of a few thousand Jacobians never paid for a driver by the ski-rental rule (a
    user trial: 20-30 µs a call, 5 µs by the driver); .compile(*args) asks for it up front."""
    from duals.jit import driver
    monkeypatch.setattr(driver, "DRIVER_COMPILE_S", 1e9)   # as if the loop were short
    x, u = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.5])

    @numba.njit
    def seed(s):
        np.random.seed(s)

    for transform, f, argnums in ((duals.jacfwd, _cart_step, 0), (duals.jacfwd, _cart_step, (0, 1)),
                                  (duals.grad, _stage_cost, 0), (duals.value_and_grad, _stage_cost, (0, 1))):
        f.__dict__.pop("_duals_hot", None)
        general = transform(f, argnums=argnums)
        seed(3)
        expected = general(x, u)
        after_one_call = _cart_step(x, u)
        seed(3)
        compiled = transform(f, argnums=argnums)
        got = compiled.compile(x, u)
        assert _driver_of(f)
        np.testing.assert_array_equal(_cart_step(x, u), after_one_call)   # the noise of one call drawn
        for result in (got, compiled(x, u) if f is _stage_cost else got):   # (the noise moves on)
            leaves, expected_leaves = tree.flatten(result)[0], tree.flatten(expected)[0]
            assert len(leaves) == len(expected_leaves)
            for a, b in zip(leaves, expected_leaves):
                np.testing.assert_array_equal(a, b)
    python = duals.jacfwd(lambda v: v * v)
    np.testing.assert_array_equal(python.compile(x), np.diag(2 * x))   # Python code: the call
