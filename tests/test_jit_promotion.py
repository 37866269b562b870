"""Parameter-only sensitivities of unchanged @njit code: arrays the code makes hold duals.

Each kernel is written the way a Numba user writes it (buffers from the plain state,
``np.zeros(n)``, ``np.array([...])`` right-hand sides, helpers that allocate), differentiated
with respect to its parameters only, and checked against central differences of the plain
call, which must stay exactly Numba's.
"""
import math

import numba
import numpy as np
import pytest

import duals
from finite_differences import central_differences


@numba.njit(cache=True)
def lorenz_rk4(state, sigma, rho, beta, n, dt):
    s = state.copy()
    k1 = np.empty_like(state)
    k2 = np.empty_like(state)
    tmp = np.zeros(3)
    for _ in range(n):
        for stage in range(2):
            src = s if stage == 0 else tmp
            out = k1 if stage == 0 else k2
            x, y, z = src[0], src[1], src[2]
            out[0] = sigma * (y - x)
            out[1] = x * (rho - z) - y
            out[2] = x * y - beta * z
            if stage == 0:
                for j in range(3):
                    tmp[j] = s[j] + dt * k1[j]
        for j in range(3):
            s[j] = s[j] + 0.5 * dt * (k1[j] + k2[j])
    return s


def test_lorenz_parameter_sensitivities_from_buffers_made_of_the_plain_state():
    args = (np.array([1.0, 1.0, 1.0]), 10.0, 28.0, 8.0 / 3.0, 300, 0.002)
    plain_before = lorenz_rk4(*args).copy()
    jac = duals.jacfwd(lorenz_rk4, argnums=(1, 2, 3))(*args)
    for k, block in zip((1, 2, 3), jac):
        np.testing.assert_allclose(block, central_differences(lorenz_rk4, args, k), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(lorenz_rk4(*args), plain_before)  # the plain call is untouched


@numba.njit(cache=True)
def pendulum(y, g, c):
    return np.array([y[1], -g * math.sin(y[0]) - c * y[1]])


def test_right_hand_side_built_by_np_array_of_a_list():
    y = np.array([0.3, 0.1])
    jy = duals.jacfwd(pendulum)(y, 9.81, 0.2)
    np.testing.assert_allclose(jy, [[0.0, 1.0], [-9.81 * math.cos(0.3), -0.2]], rtol=1e-14)
    dg, dc = duals.jacfwd(pendulum, argnums=(1, 2))(y, 9.81, 0.2)
    np.testing.assert_allclose(dg, [0.0, -math.sin(0.3)], rtol=1e-14)
    np.testing.assert_allclose(dc, [0.0, -0.1], rtol=1e-14)
    assert pendulum(y, 9.81, 0.2).dtype == np.float64


@numba.njit(cache=True)
def laplacian(u, dx):
    out = np.zeros_like(u)
    for i in range(1, u.size - 1):
        out[i] = (u[i - 1] - 2.0 * u[i] + u[i + 1]) / (dx * dx)
    return out


@numba.njit(cache=True)
def reaction_diffusion(u0, d, k, steps, dt, dx):
    """Explicit 1-D reaction-diffusion with fixed ends, buffers from np.zeros and a helper."""
    n = u0.size
    u = np.zeros(n)
    u[:] = u0
    history = np.empty((steps, 2))
    for t in range(steps):
        lap = laplacian(u, dx)
        for i in range(1, n - 1):
            u[i] = u[i] + dt * (d * lap[i] - k * u[i] * u[i])
        history[t, 0] = u[n // 2]
        history[t, 1] = np.sum(u)
    return history[-1]


def test_stencil_with_np_zeros_buffers_and_an_allocating_helper():
    u0 = np.sin(np.linspace(0.0, np.pi, 24))
    args = (u0, 0.7, 1.3, 40, 1e-3, 1.0 / 23)
    jd, jk = duals.jacfwd(reaction_diffusion, argnums=(1, 2))(*args)
    np.testing.assert_allclose(jd, central_differences(reaction_diffusion, args, 1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jk, central_differences(reaction_diffusion, args, 2), rtol=1e-6, atol=1e-9)


@numba.njit(cache=True)
def decay_table(y0, rates, t):
    """Closed form y0 exp(-k t) for every rate, with creation functions of every kind."""
    out = np.full((rates.size, t.size), 0.0)
    scale = np.ones(rates.size)
    idx = np.zeros(rates.size, dtype=np.int64)
    for i in range(rates.size):
        idx[i] = i
        for j in range(t.size):
            out[i, j] = y0 * scale[idx[i]] * math.exp(-rates[i] * t[j])
    return out


def test_creation_functions_promote_floats_and_keep_integers():
    rates, t = np.array([0.5, 2.0]), np.linspace(0.0, 1.0, 4)
    jac = duals.jacfwd(decay_table, argnums=1)(1.5, rates, t)
    expected = np.zeros((2, 4, 2))
    for i in range(2):
        expected[i, :, i] = -t * 1.5 * np.exp(-rates[i] * t)
    np.testing.assert_allclose(jac, expected, rtol=1e-13, atol=1e-15)
    dy0 = duals.jacfwd(decay_table, argnums=0)(1.5, rates, t)
    np.testing.assert_allclose(dy0, np.exp(-np.outer(rates, t)), rtol=1e-14)


@numba.njit(cache=True)
def leaky_chain(rates, steps):
    """Probability of the last state after ``steps`` of a chain that leaks state i into i + 1."""
    n = rates.shape[0] + 1
    P = np.eye(n)
    for i in range(n - 1):
        P[i, i] -= rates[i]
        P[i, i + 1] = rates[i]
    dist = np.identity(n)[0]
    for _ in range(steps):
        new = np.zeros(n)
        for j in range(n):
            for i in range(n):
                new[j] += dist[i] * P[i, j]
        dist = new
    return dist[n - 1]


@numba.njit(cache=True)
def banded(x):
    return np.eye(3, 4, 1) * x[0] + np.eye(3, 4, -1, np.float64) * x[1] + np.sum(np.eye(2, dtype=np.int64))


def test_nested_list_literals_with_constant_rows_take_duals():
    theta = np.array([0.2, 0.5, 0.3])
    expected = central_differences(damped_oscillator_energy, (theta, 12), 0)
    np.testing.assert_allclose(duals.grad(damped_oscillator_energy)(theta, 12), expected, rtol=1e-7)
    np.testing.assert_allclose(duals.jacfwd(damped_oscillator_energy)(theta, 12), expected, rtol=1e-7)


def test_unit_matrices_from_np_eye_and_identity_take_duals():
    rates = np.array([0.3, 0.2, 0.25])
    expected = central_differences(leaky_chain, (rates, 6), 0)
    np.testing.assert_allclose(duals.grad(leaky_chain)(rates, 6), expected, rtol=1e-8)
    np.testing.assert_allclose(duals.jacfwd(leaky_chain)(rates, 6), expected, rtol=1e-8)
    x = np.array([2.0, 3.0])
    np.testing.assert_array_equal(banded(x), np.eye(3, 4, 1) * 2.0 + np.eye(3, 4, -1) * 3.0 + 2)
    np.testing.assert_array_equal(duals.jacfwd(banded)(x)[..., 0], np.eye(3, 4, 1))
    np.testing.assert_array_equal(duals.jacfwd(banded)(x)[..., 1], np.eye(3, 4, -1))


@numba.njit(cache=True)
def _kernel_likelihood(theta, X, y):
    n = X.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = math.exp(theta[1]) * math.exp(-0.5 * ((X[i] - X[j]) / math.exp(theta[0])) ** 2)
    K = K + math.exp(theta[2]) * np.eye(n, dtype=theta.dtype) + 0.0 * np.identity(n, dtype=theta.dtype)
    a = np.linalg.solve(np.linalg.cholesky(K), y)
    return 0.5 * a @ a


def test_unit_matrices_of_a_differentiated_arrays_dtype():
    """np.eye(n, dtype=theta.dtype) of the differentiated theta: 'no implementation of
    duals_eye(int64, dtype=dtype(Dual1...))' where np.identity worked (a user trial's GP noise)."""
    X, y = np.array([0.0, 0.4, 1.1, 2.0]), np.array([0.3, -0.1, 0.5, 0.2])
    theta = np.array([0.0, 0.0, -2.0])
    expected = central_differences(_kernel_likelihood, (theta, X, y), 0)
    np.testing.assert_allclose(duals.jacfwd(_kernel_likelihood)(theta, X, y), expected, rtol=1e-7)
    np.testing.assert_allclose(duals.grad(_kernel_likelihood)(theta, X, y), expected, rtol=1e-7)


@numba.njit(cache=True)
def damped_oscillator_energy(theta, steps):
    """A state-space model whose transition matrix is a nested list literal: constant rows
    beside rows of the parameters (Numba alone cannot unify such rows)."""
    decay, coupling = math.exp(-theta[0]), np.tanh(theta[1])
    T = np.array([[1.0, 0.1],
                  [-coupling, decay]])
    B = np.asarray([[0.0], [theta[2]]])
    state = np.array([1.0, 0.0])
    total = 0.0
    for _ in range(steps):
        state = T @ state + B[:, 0]
        total += state[0] ** 2
    return total


@numba.njit(cache=True)
def joined(x, a):
    left = np.array([1.0, 2.0])
    return np.concatenate((left, a * x, np.copy(x)))


def test_joining_float_and_dual_arrays_and_np_copy():
    x = np.array([0.5, -1.0])
    ja = duals.jacfwd(joined, argnums=1)(x, 3.0)
    np.testing.assert_allclose(ja, [0.0, 0.0, 0.5, -1.0, 0.0, 0.0])
    jx = duals.jacfwd(joined)(x, 3.0)
    np.testing.assert_allclose(jx, np.vstack([np.zeros((2, 2)), 3 * np.eye(2), np.eye(2)]))


@numba.njit
def integrate(rhs, y0, p, n, dt):
    y = y0.copy()
    for _ in range(n):
        y = y + dt * rhs(y, p)
    return y


@numba.njit
def logistic_rhs(y, p):
    return np.array([p[0] * y[0] * (1.0 - y[0] / p[1])])


def test_a_function_passed_as_an_argument_is_promoted_too():
    args = (logistic_rhs, np.array([0.1]), np.array([1.5, 2.0]), 200, 0.01)
    jac = duals.jacfwd(integrate, argnums=2)(*args)
    assert jac.shape == (1, 2)
    h = 1e-6
    for j in range(2):
        up, down = args[2].copy(), args[2].copy()
        up[j] += h
        down[j] -= h
        fd_j = (integrate(logistic_rhs, args[1], up, 200, 0.01)
                - integrate(logistic_rhs, args[1], down, 200, 0.01)) / (2 * h)
        np.testing.assert_allclose(jac[:, j], fd_j, rtol=1e-6)


def test_hessian_with_respect_to_parameters_only():
    @numba.njit
    def energy(x, k):
        springs = np.zeros(x.size - 1)
        for i in range(x.size - 1):
            springs[i] = 0.5 * k[i] * (x[i + 1] - x[i]) ** 2
        return np.sum(springs) * np.sum(springs)

    x, k = np.array([0.0, 1.0, 3.0]), np.array([2.0, 0.5])
    e = 0.5 * k * np.diff(x) ** 2
    grad_k = 0.5 * np.diff(x) ** 2
    hess = duals.hessian(energy, argnums=1)(x, k)
    np.testing.assert_allclose(hess, 2 * np.outer(grad_k, grad_k), rtol=1e-13)
    np.testing.assert_allclose(duals.jacfwd(energy, argnums=1)(x, k), 2 * e.sum() * grad_k, rtol=1e-13)


def test_jvp_of_parameter_only_code():
    args = (np.array([1.0, 1.0, 1.0]), 10.0, 28.0, 8.0 / 3.0, 50, 0.002)
    _, tangent = duals.jvp(lorenz_rk4, args, (None, 1.0, 0.0, 0.0, None, None))
    np.testing.assert_allclose(tangent, central_differences(lorenz_rk4, args, 1), rtol=1e-6, atol=1e-9)


def test_an_input_array_changed_in_place_is_differentiated_on_a_copy():
    @numba.njit
    def step_in_place(state, k):
        state[0] = state[0] * k
        return state

    state = np.ones(2)
    np.testing.assert_array_equal(duals.jacfwd(step_in_place, argnums=1)(state, 2.0), [1.0, 0.0])
    np.testing.assert_array_equal(duals.grad(numba.njit(lambda s, k: np.sum(step_in_place(s, k))),
                                             argnums=1)(state, 2.0), 1.0)
    np.testing.assert_array_equal(state, np.ones(2))  # the caller's array is not written


@numba.njit
def _oscillator_rhs(x, p):
    out = np.empty(2)
    out[0] = x[1]
    out[1] = -p[0] * x[0]
    return out


@numba.njit
def _euler_in_place(x, p, n):
    for _ in range(n):
        x += 0.1 * _oscillator_rhs(x, p)
    return x


def test_a_state_updated_in_place_is_promoted_whichever_argument_was_differentiated_first():
    """d/dx first made the promoting copy (for the helper's buffer) the function's way; d/dp
    then stores duals into the plain state x, which only promoting x serves: it raised (a user
    trial; in a fresh process d/dp alone worked)."""
    x, p = np.array([1.0, 0.0]), np.array([4.0])
    by_state = duals.jacfwd(_euler_in_place, argnums=0)(x.copy(), p, 3)
    by_parameter = duals.jacfwd(_euler_in_place, argnums=1)(x.copy(), p, 3)
    np.testing.assert_allclose(by_parameter, central_differences(lambda q: _euler_in_place(x.copy(), q, 3), [p], 0),
                               rtol=1e-8)
    np.testing.assert_allclose(duals.jacfwd(_euler_in_place, argnums=0)(x.copy(), p, 3), by_state, rtol=1e-15)
    np.testing.assert_allclose(duals.jacrev(_euler_in_place, argnums=1)(x.copy(), p, 3), by_parameter, rtol=1e-12)


def test_a_dual_stored_into_an_array_from_linspace_gets_advice_that_applies():
    @numba.njit
    def profile(k, n):
        grid = np.linspace(0.0, 1.0, n)
        grid[0] = grid[0] * k
        return grid

    with pytest.raises(TypeError, match="copy") as info:
        duals.jacfwd(profile, argnums=0)(2.0, 5)
    assert len(str(info.value).splitlines()) <= 3


# ---------------------------------------------------------------- parallel=True and @vectorize

@numba.njit(parallel=True)
def parallel_energy(x, k):
    acc = 0.0
    for i in numba.prange(x.size):
        acc += k * math.sin(x[i]) ** 2
    return acc


@numba.njit(parallel=True)
def parallel_map(x, k):
    out = np.empty_like(x)
    for i in numba.prange(x.size):
        out[i] = k * x[i] ** 3
    return out


def test_parallel_loops_and_reductions_differentiate_exactly():
    x = np.linspace(-1.0, 1.0, 9)
    np.testing.assert_allclose(duals.jacfwd(parallel_energy)(x, 1.5),
                               1.5 * np.sin(2 * x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(parallel_energy, argnums=1)(x, 1.5),
                               np.sum(np.sin(x) ** 2), rtol=1e-13)
    np.testing.assert_allclose(duals.jacfwd(parallel_map)(x, 1.5), np.diag(4.5 * x ** 2), atol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(parallel_map, argnums=1)(x, 1.5), x ** 3, rtol=1e-14)
    np.testing.assert_allclose(parallel_map(x, 1.5), 1.5 * x ** 3)   # the plain call, still parallel
    assert parallel_map.targetoptions["parallel"]


@numba.vectorize
def gaussian_bump(x, a):
    return a * math.exp(-x * x)


@numba.vectorize(["float64(float64)"])
def softplus(x):
    return math.log1p(math.exp(x))


@numba.njit
def bump_energy(x, a):
    return np.sum(gaussian_bump(x, a)) + softplus(a)


def test_vectorize_functions_given_to_jacfwd_and_called_inside_njit():
    x = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(duals.jacfwd(gaussian_bump)(x, 2.0), np.diag(-4 * x * np.exp(-x * x)),
                               atol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(gaussian_bump, argnums=1)(x, 2.0), np.exp(-x * x))
    dx, da = duals.jacfwd(bump_energy, argnums=(0, 1))(x, 2.0)
    np.testing.assert_allclose(dx, -4 * x * np.exp(-x * x), atol=1e-15)
    np.testing.assert_allclose(da, np.exp(-x * x).sum() + 1 / (1 + math.exp(-2.0)), rtol=1e-14)
    s = 1 / (1 + math.exp(-0.3))
    np.testing.assert_allclose(duals.hessian(softplus)(0.3), s * (1 - s), rtol=1e-14)
    np.testing.assert_allclose(gaussian_bump(x, 2.0), 2 * np.exp(-x * x))


@numba.vectorize
def saturated(x, drive):
    return math.tanh(drive * x)


@numba.njit
def saturation_energy(drive, x):    # a lazy @vectorize function, alone: Numba's own ufunc
    return np.sum(saturated(x, drive) ** 2)    # typing took duals and could not lower them


@numba.njit
def saturation_energy_by_loop(drive, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += saturated(x[i], drive) ** 2
    return total


def test_a_lazy_vectorize_function_alone_inside_njit():
    # (DSP trial) NotImplementedError: unsupported type for input operand: Dual1[float64, 1 lanes]
    x, drive = np.linspace(-1.5, 1.5, 7), 1.3
    expected = np.sum(2 * np.tanh(drive * x) * x / np.cosh(drive * x) ** 2)
    for f in (saturation_energy, saturation_energy_by_loop):
        for transform in (duals.grad, duals.jacfwd):
            np.testing.assert_allclose(transform(f)(drive, x), expected, rtol=1e-14)
    assert saturation_energy(drive, x) == pytest.approx(np.sum(np.tanh(drive * x) ** 2), rel=1e-14)
    assert saturated.types == ["dd->d"]   # no loop for duals left in the user's ufunc


@numba.vectorize(["float64(float64)"], target="parallel")
def parallel_square(x):
    return x * x


def test_a_parallel_target_vectorize_hides_its_kernel_and_says_so():
    with pytest.raises(TypeError, match=r"'parallel_square' is neither NumPy's nor SciPy's.*drop target="):
        duals.jacfwd(parallel_square)(np.array([1.0, 2.0]))


@numba.guvectorize(["void(float64[:], float64[:], float64, float64[:])"], "(n),(n),()->(n)")
def diffusion_step(u, k, dt, out):
    """One explicit step of u' = k u'' on a row, the ends insulated."""
    n = u.shape[0]
    for i in range(n):
        left = u[i - 1] if i > 0 else u[i]
        right = u[i + 1] if i < n - 1 else u[i]
        out[i] = u[i] + dt * k[i] * (left - 2.0 * u[i] + right)


@numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def weighted_energy(u, w, res):
    acc = 0.0
    for i in range(u.shape[0]):
        acc += w[i] * u[i] ** 2
    res[0] = acc


@numba.njit
def diffused_energies(U, k, dt, steps):
    """Every row of U diffused ``steps`` times; the energy of each row at the end."""
    out = np.empty_like(U)
    for _ in range(steps):
        diffusion_step(U, k, dt, out)
        U = out.copy()
    energies = np.empty(U.shape[0])
    weighted_energy(U, k, energies)
    return energies


ROWS = np.array([[1.0, 0.5, -0.2, 0.8], [0.3, -1.0, 0.4, 0.0]])
CONDUCTIVITY = np.array([0.5, 1.0, 0.8, 1.2])


def test_guvectorize_given_to_jacfwd_is_its_stencil_row_by_row():
    got = duals.jacfwd(diffusion_step)(ROWS, CONDUCTIVITY, 0.1)  # the output made for it
    n = CONDUCTIVITY.size
    stencil = np.eye(n) + 0.1 * CONDUCTIVITY[:, None] * (np.eye(n, k=1) + np.eye(n, k=-1) - 2 * np.eye(n))
    stencil[0, 0] += 0.1 * CONDUCTIVITY[0]
    stencil[-1, -1] += 0.1 * CONDUCTIVITY[-1]
    for r in range(2):  # rows do not mix
        np.testing.assert_allclose(got[r, :, r, :], stencil, rtol=1e-15)
        np.testing.assert_array_equal(got[r, :, 1 - r, :], 0.0)
    np.testing.assert_allclose(duals.jacfwd(weighted_energy, argnums=1)(ROWS[0], CONDUCTIVITY), ROWS[0] ** 2)
    np.testing.assert_allclose(duals.hessian(weighted_energy)(ROWS[0], CONDUCTIVITY), 2 * np.diag(CONDUCTIVITY))


def test_guvectorize_called_inside_njit_matches_central_differences():
    args = (ROWS, CONDUCTIVITY, 0.05, 6)
    plain = diffused_energies(*args)
    assert plain.shape == (2,) and np.all(plain > 0)
    for argnum, got in enumerate(duals.jacfwd(diffused_energies, argnums=(0, 1))(*args)):
        np.testing.assert_allclose(got, central_differences(diffused_energies, args, argnum), rtol=1e-7, atol=1e-9)


@numba.njit(cache=True)
def decay_chain(rates, n):
    amounts = np.zeros(rates.size)       # a buffer of its own: needs the promoting copy
    amounts[0] = 1.0
    for _ in range(n):
        flow = rates * amounts
        amounts[0] -= 0.01 * flow[0]
        for i in range(1, rates.size):
            amounts[i] += 0.01 * (flow[i - 1] - flow[i])
    return amounts


@numba.njit(cache=True)
def plain_square_sum(x):
    return np.sum(x * x)


def test_the_promotion_decision_of_a_cached_function_is_remembered_for_later_processes():
    from duals.jit import calling, promotion_notes
    rates = np.array([0.5, 0.3, 0.2])
    expected = duals.jacfwd(decay_chain)(rates, 50)
    assert promotion_notes.recall(decay_chain, (0,)) is True
    # as in a new process: the decision is read from the note, and the function's own dual
    # specialisation, which cannot type, is not tried again
    del calling._PROMOTING[decay_chain]

    def tried_the_original(*args, **kwargs):
        raise AssertionError("the function's own dual specialisation was tried again")
    decay_chain._compile_for_args = tried_the_original
    try:
        np.testing.assert_array_equal(duals.jacfwd(decay_chain)(rates, 50), expected)
    finally:
        del decay_chain._compile_for_args
    np.testing.assert_allclose(expected, central_differences(decay_chain, (rates, 50), 0),
                               rtol=1e-7, atol=1e-10)


def test_a_note_only_ever_chooses_the_exact_promoting_path():
    from duals.jit import calling, promotion_notes
    x = np.array([1.0, -2.0, 0.5])
    expected = duals.grad(plain_square_sum)(x)      # compiled reverse: its own specialisation
    jac = duals.jacfwd(plain_square_sum)(x)
    assert promotion_notes.recall(plain_square_sum, (0,)) is None
    promotion_notes.remember(plain_square_sum, (0,), True)   # a stale note: promote needlessly
    calling._PROMOTING.pop(plain_square_sum, None)
    try:
        np.testing.assert_array_equal(duals.jacfwd(plain_square_sum)(x), jac)
        assert calling._PROMOTING[plain_square_sum] is True
    finally:
        promotion_notes.forget(plain_square_sum, (0,))
        calling._PROMOTING.pop(plain_square_sum, None)
    np.testing.assert_array_equal(jac, 2 * x)
    np.testing.assert_array_equal(expected, 2 * x)


@numba.njit
def binned_energy(x, state, bins):
    """astype as Numba code uses it: a float cast that changes nothing, bins from values, and a
    buffer cast from a plain argument that then holds duals."""
    y = x.astype(np.float64)
    index = (y * bins).astype(np.int64)
    s = state.astype(np.float64)
    for i in range(y.size):
        s[index[i] % bins] += y[i] ** 2
    return np.sum(s * np.arange(1.0, bins + 1.0))


def test_astype_to_the_float_type_keeps_derivatives_and_to_integers_takes_values():
    x, state, bins = np.array([0.37, 1.61, -0.42]), np.array([1.0, 2.0, 0.5, 0.25]), 4
    index = (x * bins).astype(np.int64)
    want = 2.0 * x * (index % bins + 1.0)
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_allclose(transform(binned_energy)(x, state, bins), want, rtol=1e-15)
    np.testing.assert_allclose(central_differences(binned_energy, (x, state, bins), 0), want, rtol=1e-7)
    H = duals.hessian(binned_energy)(x, state, bins)
    np.testing.assert_allclose(H, np.diag(2.0 * (index % bins + 1.0)), rtol=1e-15)


@numba.njit
def cast_to_single(x):
    return np.sum(x.astype(np.float32))


def test_astype_of_duals_to_another_float_type_is_refused_saying_what_to_write():
    for transform in (duals.grad, duals.jacfwd):
        with pytest.raises(TypeError, match=r"x\.astype\(float32\) of an array of duals over float64: "
                                            r"only casts to float64 itself.*x\.copy\(\)"):
            transform(cast_to_single)(np.ones(3))


@numba.njit
def dft_power(p, a):
    """A hand-written DFT's power, its work buffers cast to complex: one from a plain argument
    (promoted), one from duals."""
    n = a.size
    x = a.astype(np.complex128)
    y = (a * p[0]).astype(np.complex128)
    power = 0.0
    for k in range(n):
        acc = 0j
        for j in range(n):
            acc += (x[j] * p[1] + y[j]) * np.exp(-2j * np.pi * k * j / n)
        power += abs(acc) ** 2
    return power


def test_astype_to_complex_makes_complex_duals_of_a_plain_buffer_and_of_duals():
    p, a = np.array([0.7, 1.3]), np.array([1.0, -0.5, 2.0, 0.25])
    F = np.exp(-2j * np.pi * np.outer(np.arange(4), np.arange(4)) / 4)
    power = lambda p: np.sum(np.abs(F @ (a * (p[0] + p[1]))) ** 2)   # noqa: E731
    want = duals.grad(power)(p)
    np.testing.assert_allclose(central_differences(dft_power, (p, a), 0), want, rtol=1e-7)
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_allclose(transform(dft_power)(p, a), want, rtol=1e-13)
    np.testing.assert_allclose(duals.hessian(dft_power)(p, a), duals.hessian(power)(p), rtol=1e-13)


@numba.njit
def tip_from_a_list(q):
    """A two-link arm's tip, written as np.array([...]) of the joint angles' float type."""
    a = q[0] + q[1]
    return np.array([math.cos(q[0]) + math.cos(a), math.sin(q[0]) + math.sin(a)])


@numba.njit
def tip_into_a_default_buffer(q):
    """The same tip stored into np.empty's float64 buffer, whatever the angles' float type."""
    out = np.empty(2)
    a = q[0] + q[1]
    out[0] = math.cos(q[0]) + math.cos(a)
    out[1] = math.sin(q[0]) + math.sin(a)
    return out


@numba.njit
def tip_into_a_single_buffer(q):
    out = np.empty(2, np.float32)
    a = q[0] + q[1]
    out[0] = math.cos(q[0]) + math.cos(a)
    out[1] = math.sin(q[0]) + math.sin(a)
    return out


@numba.njit(cache=True)
def _explicit_float32_buffer(x):
    buf = np.zeros(2, dtype=np.float32)      # as float32 seismic codes allocate their wavefields
    buf[0] = x[0] * x[1]
    return np.sum(buf * buf)


@numba.njit(cache=True)
def _float32_kernel_sum(theta, X):
    K = np.empty((X.size, X.size), dtype=X.dtype)
    for i in range(X.size):
        for j in range(X.size):
            r2 = 0.0
            r2 += ((X[i] - X[j]) / theta[0]) ** 2
            K[i, j] = math.exp(-0.5 * r2)
    return np.sum(K)


def test_float32_duals_fill_arrays_of_either_float_type_as_plain_numba_does():
    # (float32 angles: np.array([...]) and a store into a float64 buffer did not compile in
    # forward mode; a user trial. A dual over float32 converts to one over float64, and back
    # when stored into a float32 buffer, as Numba converts its floats)
    q = np.array([0.3, 0.5])
    s1, s12, c1, c12 = math.sin(0.3), math.sin(0.8), math.cos(0.3), math.cos(0.8)
    jacobian = np.array([[-s1 - s12, -s12], [c1 + c12, c12]])
    hessians = np.array([[[-c1 - c12, -c12], [-c12, -c12]], [[-s1 - s12, -s12], [-s12, -s12]]])
    for f in (tip_from_a_list, tip_into_a_default_buffer, tip_into_a_single_buffer):
        for dtype in (np.float32, np.float64):
            x = q.astype(dtype)
            tol = 1e-6 if dtype is np.float32 or f is tip_into_a_single_buffer else 1e-14
            forward = duals.jacfwd(f)(x)
            np.testing.assert_allclose(forward, jacobian, rtol=tol, atol=tol)
            np.testing.assert_allclose(duals.jit.compiled_hessian(f)(x), hessians, rtol=tol, atol=tol)
            if f is not tip_into_a_single_buffer:   # (see below)
                np.testing.assert_array_equal(forward, duals.jacrev(f)(x))
    # compiled reverse mode computes in float64, so a float32 buffer holds its float64 adjoints,
    # as one of the inputs' dtype does (they were refused as a float64 value narrowed into a
    # float32 buffer, also where every input was float32: user trials' wavefields, kernel matrices)
    np.testing.assert_allclose(duals.jacrev(tip_into_a_single_buffer)(q), jacobian, rtol=1e-14, atol=1e-14)
    theta, X = np.array([0.5], dtype=np.float32), np.array([0.1, 0.4, 1.1], dtype=np.float32)
    gradient = duals.grad(_float32_kernel_sum)(theta, X)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, duals.jacfwd(_float32_kernel_sum)(theta, X), rtol=1e-5)
    x32 = np.array([1.5, 2.0], dtype=np.float32)
    np.testing.assert_array_equal(duals.grad(_explicit_float32_buffer)(x32), [12.0, 9.0])
    X64 = X.astype(np.float64)   # (float32 differences would be noise at any useful step)
    np.testing.assert_allclose(gradient, central_differences(_float32_kernel_sum, (theta.astype(float), X64), 0),
                               rtol=1e-5)
    assert tip_from_a_list(q.astype(np.float32)).dtype == np.float32
    assert duals.jacfwd(tip_from_a_list)(q.astype(np.float32)).dtype == np.float32


@numba.njit(cache=True)
def backward_euler(k, steps):
    u = np.sin(np.linspace(0.0, 3.0, 3)) + 1.0     # a plain array, later bound to the solves
    A = np.eye(3) * k[0] + 0.1
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return np.sum(u)


@numba.njit(cache=True)
def backward_euler_copied(k, steps):
    u = (np.sin(np.linspace(0.0, 3.0, 3)) + 1.0).copy()   # the advice: a promoted constructor
    A = np.eye(3) * k[0] + 0.1
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return np.sum(u)


def test_a_plain_array_rebound_to_derivatives_is_refused_with_what_to_write():
    # "Cannot unify array(float64) and array(Adjoint1[float64])" ended with "this construct is not
    # supported" (a re-check trial of the solves); .copy() of the expression makes it work
    k = np.array([2.0])
    for transform in (duals.grad, duals.jacfwd):
        with pytest.raises(TypeError, match=r"Cannot unify array\(float64.*later one that carries "
                                            r"derivatives.*\.copy\(\) of the expression"):
            transform(backward_euler)(k, 3)
    got = duals.grad(backward_euler_copied)(k, 3)
    np.testing.assert_allclose(got, central_differences(backward_euler_copied, [k, 3], 0), rtol=1e-7)
    np.testing.assert_allclose(got, duals.jacfwd(backward_euler_copied)(k, 3), rtol=1e-13)


K_VALUES = np.array([3.0, 1.2, 0.3])


@numba.njit(cache=True)
def vapour_fraction(z, start):
    """Rachford-Rice by Newton, written with array expressions (a process-engineering trial)."""
    V = start
    for _ in range(30):
        d = 1.0 + V * (K_VALUES - 1.0)
        f = np.sum(z * (K_VALUES - 1.0) / d)
        df = -np.sum(z * (K_VALUES - 1.0) ** 2 / d ** 2)
        V -= f / df
    return V


@numba.njit(cache=True)
def vapour_fraction_started_as_derivative(z):
    return vapour_fraction(z, 0.5 + 0.0 * z[0])   # the advice


def test_an_array_expression_of_a_number_that_becomes_a_dual_says_to_start_the_number_as_one():
    # V = 0.5 becomes a dual after the first Newton step, so V * (K - 1) changes type between
    # iterations; the advice was a constructor's, which cannot apply to an expression's temporary
    z = np.array([0.4, 0.35, 0.25])
    with pytest.raises(TypeError, match=r"An array expression changes type between loop iterations: .*"
                                        r"V = 0\.5 \+ 0\.0 \* z\[0\]"):
        duals.jacfwd(vapour_fraction)(z, 0.5)
    got = duals.jacfwd(vapour_fraction_started_as_derivative)(z)
    np.testing.assert_allclose(got, central_differences(vapour_fraction_started_as_derivative, [z], 0), rtol=1e-6)
    np.testing.assert_allclose(duals.grad(vapour_fraction_started_as_derivative)(z), got, rtol=1e-13)


@numba.njit(cache=True)
def platoon_positions(k, x0, n):
    x = x0.copy()
    out = np.empty(n)        # a buffer of its own, promoted in the promoting copy
    for i in range(n):
        x = x - 0.1 * k * x
        out[i] = x[0]
    return out


@numba.njit(cache=True)
def platoon_loss(k, x0, n, simulate=platoon_positions):
    return np.sum(simulate(k, x0, n))


def test_a_callee_given_as_a_default_argument_is_promoted_too():
    # the promoting copy promoted callees named as globals, closures and arguments, not a default
    # argument's: "Cannot unify array(float64) and array(Adjoint1[float64])" (a traffic trial)
    x0 = np.array([1.0, 2.0])
    got = duals.grad(platoon_loss)(0.5, x0, 5)
    assert got == pytest.approx(duals.grad(platoon_loss)(0.5, x0, 5, platoon_positions), rel=1e-15)
    assert got == pytest.approx(float(central_differences(platoon_loss, [0.5, x0, 5], 0)), rel=1e-7)
    assert duals.jacfwd(platoon_loss)(0.5, x0, 5) == pytest.approx(got, rel=1e-14)

