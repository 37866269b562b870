"""NumPy functions on dual arrays inside @numba.njit code (duals/jit/array_functions.py).

Realistic kernels (a trapezoid integral, an ODE driven by an interpolated table, a softmax, a
robust loss, order statistics), each run plain and under duals.jacfwd, are checked against
central differences of the plain function, closed forms, and the NumPy path (``f.py_func``
under duals.jacrev) for plain-NumPy kernels; at ties and kinks the NumPy path's policy. The
table test applies every entry of duals.derivatives to 2-d dual arrays. Every jacfwd uses
LANES lanes, as the other compiled-mode tests do, so the dual rules compile once for all
(tests/lanes.py).
"""
import math

import numba
import numpy as np
import pytest
from numpy.polynomial import polynomial as P

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.jit import dual_array, fn
from finite_differences import central_differences
from lanes import LANES

njit = numba.njit(cache=True)


def jacfwd(f, argnums=0):
    return duals.jacfwd(f, argnums=argnums, chunk_size=LANES)


def matches_numpy_path(f, *args, argnums=0, rtol=1e-12):
    got = jacfwd(f, argnums=argnums)(*args)
    want = duals.jacrev(f.py_func, argnums=argnums)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-13)


# ---------------------------------------------------------------- user code, unchanged

@njit
def cumulative_trapezoid(y, t):
    return np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(t))


@njit
def decay_integral(k, t):
    return cumulative_trapezoid(np.exp(-k * t), t)[-1]


@njit
def forced_decay(k, times, forcing, y0, dt, steps):
    """Euler steps of y' = -k y + f(t), the forcing f interpolated from a table."""
    y = y0
    for i in range(steps):
        f = np.interp(i * dt, times, forcing)
        y = y + dt * (-k * y + f)
    return y


@njit
def softmax_rows(X):
    m = np.max(X, axis=1)
    E = np.exp(X - m.reshape((-1, 1)))
    return E / np.sum(E, axis=1).reshape((-1, 1))


@njit
def statistics(X):
    return (np.mean(X, axis=0), np.var(X[:, 0]), np.std(X[1]), np.prod(X, axis=1),
            np.cumprod(X[0]), np.min(X, axis=0), np.max(X), X.min())


@njit
def standardized(x):
    return (x - np.mean(x)) / np.std(x)


@njit
def robust_loss(w, A, y):
    r = A @ w - y
    a = np.abs(r)
    huber = np.where(a <= 0.5, 0.5 * r ** 2, 0.5 * (a - 0.25))
    margins = np.maximum(0.0, 1.0 - y.reshape((-1, 1)) * (A * w.reshape((1, -1))))
    return np.sum(huber) + np.mean(margins) + np.sum(np.clip(w, -0.5, 0.5)) + np.sum(np.minimum(A, w))


@njit
def safe_root(x):
    return np.where(x > 0.0, np.sqrt(x), 0.0)


@njit
def trimmed_mean(x):
    s = np.sort(x)
    return np.mean(s[1:-1])


@njit
def ranked(x, w):
    order = np.argsort(x)
    return x[order] * w + x[np.argmax(x)]


@njit
def largest(X):
    return np.max(X), np.max(X, axis=0), np.ptp(X)


@njit
def value_only(x):
    return x * np.floor(x) + np.round(x, 1) + np.isnan(x) * x + np.rint(x)


@njit
def special_functions(x):
    return fn.erf(x) * fn.expit(x) + fn.erfc(x)


@njit
def channel_summary(X):
    """A table of sensor readings with dropouts (NaN): per-channel means, the range of the
    readings, the total of the first channel."""
    return np.nanmean(X, axis=0), np.nanmax(X) - np.nanmin(X), np.nansum(X[:, 0]), np.nanmax(X, axis=1)


@njit
def median_absolute_deviation(x):
    m = np.median(x)
    return m, np.median(np.abs(x - m))


@njit
def trimmed_mean_in_place(x):
    s = x.copy()
    s.sort()
    return np.mean(s[1:-1])


@njit
def ranked_stably(x, w):
    return np.sum(x[np.argsort(x, kind="mergesort")] * w) + x[x.argsort(kind="mergesort")][0]


@njit
def uses_percentile(x):
    return np.percentile(x, 90.0)


@njit
def uses_nanvar(x):
    return np.nanvar(x)


# ---------------------------------------------------------------- integrals and ODEs

T = np.array([0.0, 0.3, 0.5, 1.1, 1.6, 2.4])


def test_trapezoid_integral_with_cumsum_matches_the_numpy_path():
    y = np.sin(T)
    matches_numpy_path(cumulative_trapezoid, y, T, argnums=(0, 1))
    np.testing.assert_allclose(cumulative_trapezoid(y, T), dnp.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(T)))


@njit
def rigid_body_kinetic_energy(omega, positions, masses):
    """½ Σ m |ω × r|², the velocities of a rigid body's points from its angular velocity."""
    velocities = np.cross(omega, positions)
    return 0.5 * np.sum(masses * np.sum(velocities * velocities, axis=1))


@njit
def torque_norm(positions, forces):
    return np.sum(np.cross(positions, forces) ** 2)


@njit
def absorbed_after(P, steps):
    """The probability of reaching the last state of a Markov chain within ``steps`` steps."""
    return np.linalg.matrix_power(P, steps)[0, -1]


def test_rigid_body_energy_and_torque_by_cross_products_match_the_numpy_path_and_the_closed_form():
    rng = np.random.default_rng(4)
    omega, r, m = rng.normal(size=3), rng.normal(size=(5, 3)), rng.uniform(0.5, 2.0, 5)
    matches_numpy_path(rigid_body_kinetic_energy, omega, r, m, argnums=(0, 1, 2))
    inertia = sum(mi * (ri @ ri * np.eye(3) - np.outer(ri, ri)) for mi, ri in zip(m, r))
    np.testing.assert_allclose(jacfwd(rigid_body_kinetic_energy)(omega, r, m), inertia @ omega, rtol=1e-12)
    F = rng.normal(size=(5, 3))
    matches_numpy_path(torque_norm, r, F, argnums=(0, 1))
    np.testing.assert_allclose(jacfwd(torque_norm, argnums=1)(r, F),
                               central_differences(torque_norm, (r, F), 1), rtol=1e-7)
    value = duals.jvp(torque_norm, (r, F), (np.ones_like(r), np.zeros_like(F)))[0]
    assert value == torque_norm(r, F)     # the plain call's formula, bit for bit


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 7, -2])
def test_markov_chain_powers_match_the_numpy_path_for_every_branch_of_the_power(steps):
    P = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    matches_numpy_path(absorbed_after, P, steps)
    if steps > 0:
        np.testing.assert_allclose(jacfwd(absorbed_after)(P, steps),
                                   central_differences(absorbed_after, (P, steps), 0), rtol=1e-7, atol=1e-9)


@njit
def smoothed_roughness(signal, kernel):
    smooth = np.convolve(signal, kernel, "same")
    return np.sum(np.diff(smooth) ** 2) + np.sum(np.convolve(signal, kernel)) + np.sum(np.convolve(kernel, signal, "valid") ** 2)


def test_convolutions_in_every_mode_match_the_numpy_path_and_keep_numbas_values():
    rng = np.random.default_rng(6)
    signal, kernel = rng.normal(size=9), rng.normal(size=4)
    matches_numpy_path(smoothed_roughness, signal, kernel, argnums=(0, 1))
    np.testing.assert_allclose(jacfwd(smoothed_roughness, argnums=1)(signal, kernel),
                               central_differences(smoothed_roughness, (signal, kernel), 1), rtol=1e-7)
    value = duals.jvp(smoothed_roughness, (signal, kernel), (np.ones(9), np.zeros(4)))[0]
    assert value == smoothed_roughness(signal, kernel)    # Numba's own convolve on the real parts
    H = duals.hessian(smoothed_roughness)(signal, kernel)
    np.testing.assert_allclose(H, duals.hessian(smoothed_roughness.py_func)(signal, kernel), rtol=1e-11, atol=1e-12)


@njit
def autocorrelation_misfit(signal, template):
    """Matched filter and autocorrelation as signal code writes them, every mode of np.correlate."""
    score = np.correlate(signal, template, "same")
    acf = np.correlate(signal - np.mean(signal), signal - np.mean(signal), "full")
    return np.sum(score ** 2) + np.sum(acf[signal.shape[0]:] ** 2) + np.sum(np.correlate(template, signal, "same"))


def test_correlations_in_every_mode_match_the_numpy_path_and_central_differences():
    rng = np.random.default_rng(7)
    signal, template = rng.normal(size=8), rng.normal(size=3)
    matches_numpy_path(autocorrelation_misfit, signal, template, argnums=(0, 1))
    for argnum in (0, 1):
        np.testing.assert_allclose(jacfwd(autocorrelation_misfit, argnums=argnum)(signal, template),
                                   central_differences(autocorrelation_misfit, (signal, template), argnum),
                                   rtol=1e-7)
        np.testing.assert_allclose(duals.grad(autocorrelation_misfit, argnums=argnum)(signal, template),
                                   jacfwd(autocorrelation_misfit, argnums=argnum)(signal, template), rtol=1e-12)
    value = duals.jvp(autocorrelation_misfit, (signal, template), (np.ones(8), np.zeros(3)))[0]
    assert value == pytest.approx(autocorrelation_misfit(signal, template), rel=1e-14)
    np.testing.assert_allclose(duals.hessian(autocorrelation_misfit)(signal, template),
                               duals.hessian(autocorrelation_misfit.py_func)(signal, template), rtol=1e-11, atol=1e-12)


def test_decay_integral_has_the_closed_form_of_the_trapezoid_rule():
    k = 0.8
    got = jacfwd(decay_integral)(k, T)
    e = -T * np.exp(-k * T)
    assert got == pytest.approx(np.sum(0.5 * (e[1:] + e[:-1]) * np.diff(T)), rel=1e-13)
    assert got == pytest.approx(central_differences(decay_integral, (k, T), 0), rel=1e-7)


TABLE_T = np.array([-0.1, 0.33, 0.71, 1.37, 2.05])  # no step lands on a knot
TABLE_F = np.array([1.0, 0.4, -0.6, 0.2, 0.9])
ODE = (0.7, TABLE_T, TABLE_F, 1.5, 0.05, 40)


def test_ode_with_an_interpolated_forcing_table_matches_central_differences():
    got = jacfwd(forced_decay, argnums=(0, 1, 2))(*ODE)
    for argnum, g in zip((0, 1, 2), got):
        np.testing.assert_allclose(g, central_differences(forced_decay, ODE, argnum), rtol=1e-6, atol=1e-8)


def test_ode_is_linear_in_the_forcing_table_with_interpolation_weights():
    k, times, forcing, y0, dt, steps = ODE
    got = jacfwd(forced_decay, argnums=2)(*ODE)
    weights = np.array([[np.interp(i * dt, times, e) for e in np.eye(5)] for i in range(steps)])
    decay = (1.0 - dt * k) ** (steps - 1 - np.arange(steps))
    np.testing.assert_allclose(got, dt * decay @ weights, rtol=1e-12)


def test_interp_at_the_knots_takes_the_right_segment_as_the_numpy_path():
    @njit
    def table(x):
        return np.interp(x, TABLE_T, TABLE_F)
    x = np.array([-0.5, -0.1, 0.33, 1.0, 2.05, 3.0])  # outside, knots, inside, the last knot
    np.testing.assert_allclose(table(x), np.interp(x, TABLE_T, TABLE_F), rtol=1e-15)
    matches_numpy_path(table, x)


# ---------------------------------------------------------------- axis reductions

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.9, 2.0, -0.1]])


def test_softmax_over_rows_with_max_over_an_axis_has_the_closed_form():
    s = softmax_rows(X)
    np.testing.assert_allclose(s, np.exp(X) / np.exp(X).sum(axis=1, keepdims=True), rtol=1e-14)
    got = jacfwd(softmax_rows)(X)
    for i in range(3):
        np.testing.assert_allclose(got[i, :, i, :], np.diag(s[i]) - np.outer(s[i], s[i]), atol=1e-15)
        np.testing.assert_array_equal(np.delete(got[i], i, axis=1), 0.0)  # rows do not mix


def test_mean_var_std_prod_cumprod_min_max_ptp_match_the_numpy_path():
    plain = statistics(X)
    want = statistics.py_func(X)
    for p, w in zip(plain, want):
        np.testing.assert_allclose(p, w, rtol=1e-14)
    matches_numpy_path(statistics, X)


def test_standardized_vector_matches_central_differences():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    np.testing.assert_allclose(jacfwd(standardized)(x), central_differences(standardized, (x,), 0),
                               rtol=1e-7, atol=1e-9)


def test_max_splits_ties_evenly_over_the_whole_array_and_along_an_axis():
    tied = np.array([[2.0, 1.0], [2.0, 2.0]])
    whole, columns, spread = jacfwd(largest)(tied)
    np.testing.assert_allclose(whole, [[1 / 3, 0.0], [1 / 3, 1 / 3]], rtol=1e-15)
    np.testing.assert_allclose(spread, whole - [[0.0, 1.0], [0.0, 0.0]], rtol=1e-15)
    np.testing.assert_array_equal(columns[1], [[0.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(columns[0], [[0.5, 0.0], [0.5, 0.0]])
    assert largest(tied)[0] == 2.0


# ---------------------------------------------------------------- where, abs, maximum, clip

def test_robust_loss_with_where_abs_maximum_clip_matches_the_numpy_path():
    rng = np.random.default_rng(3)
    A, y = rng.normal(size=(5, 3)), np.sign(rng.normal(size=5))
    w = np.array([0.2, -0.9, 0.45])
    matches_numpy_path(robust_loss, w, A, y, argnums=(0, 1))


def test_where_gives_the_branch_not_taken_exactly_zero():
    x = np.array([0.0, 1.0, 4.0])
    np.testing.assert_array_equal(jacfwd(safe_root)(x), np.diag([0.0, 0.5, 0.25]))


def test_clip_and_maximum_split_ties_at_the_bounds():
    @njit
    def bounded(x):
        return np.clip(x, 0.0, 1.0) + np.maximum(x, 0.5)
    x = np.array([0.0, 0.5, 1.0])
    np.testing.assert_array_equal(jacfwd(bounded)(x), np.diag([0.5, 1.5, 1.5]))


def coulomb_limited(v):
    """A tangential force limited by friction, ft in [-mu Fn, mu Fn] (v = ft, mu, Fn)."""
    limit = v[1] * v[2]
    return np.clip(v[0], -limit, limit)


def test_clip_with_both_bounds_at_the_value_does_not_move_with_it():
    # (DEM trial) a contact at rest with mu = 0 or no normal force: clip(0, -0, 0) is 0 whatever
    # ft is, but maximum's and minimum's ties gave ft a quarter, and a spring that never acted
    # changed the trajectory's derivative; the band ±mu Fn opening from 0 leaves it at 0 too
    for p in (np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.5, 0.0])):
        for transform in (duals.grad, duals.jacfwd):
            np.testing.assert_array_equal(transform(coulomb_limited)(p), np.zeros(3))
            np.testing.assert_array_equal(transform(njit(coulomb_limited))(p), np.zeros(3))
    forces = np.array([0.0, 0.3, -2.0])
    limited = njit(lambda ft, m: np.sum(np.clip(ft, -m, m)))   # the bounds traced too
    d_forces, d_limit = jacfwd(limited, argnums=(0, 1))(forces, 0.0)
    np.testing.assert_array_equal(d_forces, [0.0, 0.0, 0.0])
    assert d_limit == 1.0   # 0 (pinned: the band's halves cancel) + 1 (above) + 0 (below: -m and m tie)
    np.testing.assert_array_equal(duals.jacfwd(lambda f: np.clip(f, 0.0, 0.0))(forces), np.zeros((3, 3)))


def monotone_cubic_step(q):
    """A semi-Lagrangian step of a periodic tracer: cubic Lagrange interpolation at departure
    points half a cell upstream, clipped to the two nearest values (a monotone limiter)."""
    n = q.size
    i0 = np.arange(n) - 1
    im1, i1, i2 = (i0 - 1) % n, (i0 + 1) % n, (i0 + 2) % n
    i0 = i0 % n
    a = 0.5
    cubic = (-a * (a - 1) * (a - 2) / 6 * q[im1] + (a + 1) * (a - 1) * (a - 2) / 2 * q[i0]
             - (a + 1) * a * (a - 2) / 2 * q[i1] + (a + 1) * a * (a - 1) / 6 * q[i2])
    return np.clip(cubic, np.minimum(q[i0], q[i1]), np.maximum(q[i0], q[i1]))


def test_clip_at_a_triple_tie_moves_with_all_three_as_they_move_together():
    # (semi-Lagrangian trial) in a constant region the value and both bounds are equal; the step
    # is positively homogeneous, so J q = f(q): with x nothing and the bounds ½ each the
    # partials sum to 1 (the first rule gave the bounds ½ in all, J q = f(q) / 2)
    clip3 = lambda v: np.clip(v[0], v[1], v[2])   # noqa: E731
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_array_equal(transform(clip3)(np.ones(3)), [0.0, 0.5, 0.5])
        np.testing.assert_array_equal(transform(njit(clip3))(np.ones(3)), [0.0, 0.5, 0.5])
    clipped_arrays = njit(lambda v: np.sum(np.clip(v[:1], v[1:2], v[2:])))   # bounds traced arrays
    np.testing.assert_array_equal(jacfwd(clipped_arrays)(np.ones(3)), [0.0, 0.5, 0.5])
    q = np.full(8, 1.7)
    for step in (monotone_cubic_step, njit(monotone_cubic_step)):
        for transform in (duals.jacfwd, duals.jacrev):
            np.testing.assert_allclose(transform(step)(q) @ q, step(q), rtol=1e-15)


# ---------------------------------------------------------------- sorting

def test_sort_and_argsort_based_code_matches_the_numpy_path_at_ties_too():
    for x in (np.array([0.4, -1.0, 2.5, 0.1, 1.7]), np.array([1.0, 2.0, 1.0, 2.0, 1.0])):
        matches_numpy_path(trimmed_mean, x)
    x, w = np.array([0.4, -1.0, 2.5, 0.1]), np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(ranked(x, w), np.sort(x) * w + 2.5)
    got = jacfwd(ranked)(x, w)
    want = np.eye(4)[np.argsort(x)] * w[:, None]
    want[:, 2] += 1.0
    np.testing.assert_array_equal(got, want)


def test_in_place_sort_follows_the_stable_order_of_np_sort_at_ties():
    for x in (np.array([0.4, -1.0, 2.5, 0.1, 1.7]), np.array([1.0, 2.0, 1.0, 2.0, 1.0])):
        assert trimmed_mean_in_place(x) == trimmed_mean(x)
        got = jacfwd(trimmed_mean_in_place)(x)
        np.testing.assert_array_equal(got, jacfwd(trimmed_mean)(x))
        np.testing.assert_allclose(got, duals.jacrev(trimmed_mean.py_func)(x), rtol=1e-15)


def test_stable_argsort_and_its_method_match_the_numpy_path_at_ties():
    x, w = np.array([2.0, 1.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0])
    assert ranked_stably(x, w) == ranked_stably.py_func(x, w)
    matches_numpy_path(ranked_stably, x, w, argnums=(0, 1))


def test_default_argsort_of_a_dual_array_at_ties_asks_for_a_stable_kind():
    tied = np.array([0.4, -1.0, 0.4, 0.1])
    ranked(tied, np.ones(4))  # the plain call is fine
    with pytest.raises(ValueError, match=r"np\.argsort of a dual array with equal entries.*kind='mergesort'"):
        jacfwd(ranked)(tied, np.ones(4))


def test_sort_at_ties_passes_derivatives_in_stable_order():
    @njit
    def sort(x):
        return np.sort(x)
    x = np.array([2.0, 1.0, 2.0, 1.0, 2.0])
    np.testing.assert_array_equal(jacfwd(sort)(x), np.eye(5)[np.argsort(x, kind="stable")])


# ---------------------------------------------------------------- median and the nan* reductions

def test_median_absolute_deviation_matches_the_numpy_path_at_ties_too():
    for x in (np.array([0.4, -1.0, 2.5, 0.1, 1.7]), np.array([3.0, 1.0, 2.5, 0.5]),
              np.array([2.0, 1.0, 2.0, 2.0, 7.0, 1.0])):
        np.testing.assert_array_equal(median_absolute_deviation(x), (np.median(x), np.median(np.abs(x - np.median(x)))))
        matches_numpy_path(median_absolute_deviation, x)
    x = np.array([0.4, -1.0, 2.5, 0.1, 1.7])
    got = jacfwd(median_absolute_deviation)(x)
    for g, k in zip(got, range(2)):
        want = central_differences(lambda v: median_absolute_deviation(v)[k], (x,), 0)
        np.testing.assert_allclose(g, want, rtol=1e-7, atol=1e-9)


def test_median_of_an_array_with_a_nan_is_nan_with_derivative_zero():
    x = np.array([0.4, np.nan, 2.5])
    with np.errstate(invalid="ignore"):
        m, _ = median_absolute_deviation(x)
        d_m, _ = jacfwd(median_absolute_deviation)(x)
    assert np.isnan(m)
    np.testing.assert_array_equal(d_m, 0.0)


READINGS = np.array([[0.3, np.nan, 1.2], [1.1, 0.4, np.nan], [np.nan, 2.0, -0.1], [0.8, 2.0, 0.5]])


def test_nan_reductions_leave_the_missing_readings_out_as_the_numpy_path():
    means, spread, total, row_max = channel_summary(READINGS)
    np.testing.assert_allclose(means, np.nanmean(READINGS, axis=0), rtol=1e-15)
    assert (spread, total) == (np.nanmax(READINGS) - np.nanmin(READINGS), np.nansum(READINGS[:, 0]))
    np.testing.assert_array_equal(row_max, np.nanmax(READINGS, axis=1))
    matches_numpy_path(channel_summary, READINGS)
    d_means = jacfwd(channel_summary)(READINGS)[0]
    counts = np.sum(~np.isnan(READINGS), axis=0)
    for j in range(3):  # d mean_j / d X[i, j] = 1 / count_j where X[i, j] is a reading, else 0
        np.testing.assert_allclose(d_means[j, :, j], np.where(np.isnan(READINGS[:, j]), 0.0, 1.0 / counts[j]))


@njit
def gappy_record_summary(x):
    """A record with missing samples, summarised the way analysis code does."""
    running = np.nancumsum(x * x)
    growth = np.nancumprod(1.0 + 0.1 * x)
    peak = x[np.nanargmax(x)]
    return np.nanmedian(x ** 2) + running[-1] * growth[-2] + peak


@pytest.mark.parametrize("record", [[0.31, np.nan, 0.45, 0.88, 0.57, 0.12], [0.2, 0.7, np.nan, np.nan, -0.4]],
                         ids=["one-gap", "two-gaps"])
def test_numbas_nan_functions_leave_the_gaps_out_for_duals_too(record):
    """Numba's own nancumsum, nancumprod and nanmedian test each entry with a NaN test that said
    "never NaN" for duals (the gaps were kept, silently); nanargmax is a position."""
    x = np.array(record)
    assert duals.value_and_grad(gappy_record_summary)(x)[0] == gappy_record_summary(x)
    gaps = np.isnan(x)

    def with_gaps(y):
        z = x.copy()
        z[~gaps] = y
        return gappy_record_summary(z)
    expected = central_differences(with_gaps, (x[~gaps],), 0)
    for transform in (jacfwd, duals.grad):
        got = transform(gappy_record_summary)(x)
        np.testing.assert_allclose(got[~gaps], expected, rtol=1e-6, atol=1e-8)
        assert np.all(got[gaps] == 0.0)
    H = duals.hessian(gappy_record_summary)(x)
    second = central_differences(lambda y: _gapped_grad(x, gaps, y), (x[~gaps],), 0)
    np.testing.assert_allclose(H[np.ix_(~gaps, ~gaps)], second, rtol=1e-5, atol=1e-6)


def _gapped_grad(x, gaps, y):
    z = x.copy()
    z[~gaps] = y
    return duals.grad(gappy_record_summary)(z)[~gaps]


def test_nanmax_at_minus_infinity_and_max_at_tied_infinities_split_as_the_numpy_path():
    @njit
    def extremes(x, y):
        return np.nanmax(x), np.nanmean(x), np.max(y)
    x, y = np.array([-np.inf, np.nan, -np.inf]), np.array([np.inf, 1.0, np.inf])
    with np.errstate(invalid="ignore"):
        assert extremes(x, y) == (-np.inf, -np.inf, np.inf)
        matches_numpy_path(extremes, x, y, argnums=(0, 1))
        d_nanmax, _ = jacfwd(extremes, argnums=(0, 1))(x, y)[0]
    np.testing.assert_array_equal(d_nanmax, [1 / 3, 0.0, 1 / 3])  # the NaN, read as -inf, ties


# ---------------------------------------------------------------- value-only functions

def test_floor_round_rint_isnan_of_dual_arrays_are_plain_values():
    x = np.array([0.4, 1.7, -2.2])
    np.testing.assert_allclose(value_only(x), value_only.py_func(x))
    np.testing.assert_array_equal(jacfwd(value_only)(x), np.diag(np.floor(x)))


# ---------------------------------------------------------------- every entry of the table

def _table_module():
    """unary(X) and binary(X, Y): every table entry through duals.jit.fn on 2-d arrays (one
    transposed, not contiguous); the NumPy ufunc spellings are the same element rules, tested
    on 1-d arrays in test_jit_arrays.py (and on 2-d ones by the kernels above)."""
    from duals.kernels import load_generated
    unary, binary = [], []
    for table, calls, args in ((derivatives.UNARY, unary, "X.T"), (derivatives.BINARY, binary, "X.T, Y")):
        for name in table:
            calls.append((name, f"fn.{name}({args})"))
    source = "import numba\nimport numpy as np\nfrom duals.jit import fn\n"
    for function, params, calls in (("unary", "X", unary), ("binary", "X, Y", binary)):
        source += (f"\n\n@numba.njit(cache=True)\ndef {function}({params}):\n"
                   f"    return ({', '.join(call for _, call in calls)},)\n")
    return load_generated("test_jit_numpy_table", source), unary, binary


@pytest.fixture(scope="module")
def table():
    return _table_module()


def _mismatches(calls, results, primals, lanes):
    from duals.ops.elementwise import PRIMITIVES
    bad = []
    for (name, call), got in zip(calls, results):
        with np.errstate(all="ignore"):
            value = PRIMITIVES[name](*primals)
            tangent = sum(duals.jvp(PRIMITIVES[name], primals, tuple(
                t[k] if t is not None else np.zeros_like(p) for p, t in zip(primals, lanes)))[1][..., None]
                * np.eye(len(lanes[0]))[k] for k in range(len(lanes[0])))
        plain = isinstance(got, np.ndarray) and got.dtype.names is None
        if plain or not (np.allclose(got["primal"], value, rtol=1e-12, equal_nan=True)
                         and np.allclose(got["tangent"], tangent, rtol=1e-12, equal_nan=True)):
            bad.append(call)
    return bad


def test_every_table_entry_applies_to_2d_dual_arrays_and_plain_float_arrays(table):
    module, unary, binary = table
    X = np.array([[-0.4, 0.6, 1.7], [0.3, 1.2, -0.9]])
    Y = np.array([[1.3, 0.5], [0.8, 1.9], [0.4, 0.7]])
    lanes = np.stack([np.sin(X + k) for k in range(3)])  # three lanes of direction
    dual_x = dual_array(X, lanes)
    with np.errstate(all="ignore"):
        bad = _mismatches(unary, module.unary(dual_x), (X.T,), (lanes.transpose(0, 2, 1),))
        bad += _mismatches(binary, module.binary(dual_x, Y), (X.T, Y), (lanes.transpose(0, 2, 1), None))
        plain = module.unary(X) + module.binary(X, Y)
    assert not bad, bad
    from duals.ops.elementwise import PRIMITIVES
    with np.errstate(all="ignore"):
        want = [PRIMITIVES[n](X.T) for n, _ in unary] + [PRIMITIVES[n](X.T, Y) for n, _ in binary]
    for (name, call), got, w in zip(unary + binary, plain, want):
        np.testing.assert_allclose(got, w, rtol=1e-13, equal_nan=True, err_msg=call)
    assert {"erf", "erfc", "expit"} <= {name for name, _ in unary}


def test_fn_special_functions_on_arrays_match_central_differences():
    x = np.array([[-0.4, 0.6], [1.7, 0.1]])
    np.testing.assert_allclose(jacfwd(special_functions)(x), central_differences(special_functions, (x,), 0),
                               rtol=1e-7, atol=1e-9)
    assert special_functions(x)[0, 0] == pytest.approx(
        math.erf(-0.4) / (1 + math.exp(0.4)) + math.erfc(-0.4), rel=1e-14)


# ---------------------------------------------------------------- sinc

@njit
def windowed_sinc_energy(x):
    """A Lanczos-style kernel energy: sinc at and near its removable singularity."""
    total = 0.0
    for i in range(x.shape[0]):
        total += np.sinc(x[i]) * np.sinc(x[i] / 3.0)
    return total + np.sum(np.sinc(x) ** 2)


def test_sinc_in_compiled_code_matches_the_numpy_path_to_second_order_at_zero_too():
    x = np.array([0.0, 1e-9, -0.2, 0.7, 2.5])
    assert windowed_sinc_energy(x) == windowed_sinc_energy.py_func(x)
    np.testing.assert_allclose(duals.grad(windowed_sinc_energy)(x), duals.grad(windowed_sinc_energy.py_func)(x),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(duals.hessian(windowed_sinc_energy)(x),
                               duals.hessian(windowed_sinc_energy.py_func)(x), rtol=1e-12, atol=1e-14)
    assert duals.hessian(windowed_sinc_energy)(x)[0, 0] == pytest.approx(
        -np.pi ** 2 / 3 * (1 + 1 / 9) - 2 * np.pi ** 2 / 3, rel=1e-13)   # sinc"(0) = -pi^2/3


# ---------------------------------------------------------------- bincount: a scatter-add

@njit
def bar_compliance(k, load, h):
    """A 1-d bar of linear elements with conductivities k, fixed at x = 0: f . u for K(k) u = f,
    the stiffness matrix assembled by a scatter-add of the element matrices."""
    n_el = k.shape[0]
    n = n_el + 1
    index = np.empty(4 * n_el, np.int64)
    entries = np.empty(4 * n_el)
    for e in range(n_el):
        ke = k[e] / h
        local = ((e, e, ke), (e, e + 1, -ke), (e + 1, e, -ke), (e + 1, e + 1, ke))
        for j in range(4):
            r, c, v = local[j]
            index[4 * e + j] = r * n + c
            entries[4 * e + j] = v
    K = np.bincount(index, weights=entries, minlength=n * n).reshape(n, n)
    u = np.linalg.solve(K[1:, 1:], load[1:])
    return np.dot(load[1:], u)


def test_stiffness_assembled_by_bincount_has_the_adjoint_closed_form_in_both_modes():
    k, load, h = np.array([1.0, 2.0, 0.5, 1.5, 0.8]), np.linspace(0.1, 1.0, 6), 0.2
    n = k.size + 1
    K = np.zeros((n, n))
    for e in range(k.size):
        K[e:e + 2, e:e + 2] += k[e] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
    u = np.concatenate([[0.0], np.linalg.solve(K[1:, 1:], load[1:])])
    closed = -np.diff(u) ** 2 / h    # dC/dk_e = -u^T dK/dk_e u
    np.testing.assert_allclose(jacfwd(bar_compliance)(k, load, h), closed, rtol=1e-12)
    np.testing.assert_allclose(duals.grad(bar_compliance)(k, load, h), closed, rtol=1e-12)
    np.testing.assert_allclose(duals.hessian(bar_compliance)(k, load, h),
                               central_differences(duals.grad(bar_compliance), (k, load, h), 0),
                               rtol=1e-6, atol=1e-8)


@njit
def deposit(positions, charges, cells):
    """Nearest-grid-point charge deposit and its field energy (a particle-in-cell step)."""
    density = np.bincount(np.floor(positions * cells).astype(np.int64), weights=charges, minlength=cells)
    return density, 0.5 * np.sum(density ** 2)


@njit
def deposit_energy(positions, charges, cells):
    return deposit(positions, charges, cells)[1]


def test_bincount_of_dual_weights_keeps_numpys_sums_and_sends_each_bin_to_its_weights():
    positions, charges = np.array([0.05, 0.93, 0.51, 0.07, 0.55, 0.12]), np.linspace(-1.0, 2.0, 6)
    plain, energy = deposit(positions, charges, 8)
    assert np.array_equal(plain, np.bincount(np.floor(positions * 8).astype(np.int64), charges, 8))
    (value, energy_jvp), _ = duals.jvp(deposit, (positions, charges, 8), (None, np.ones(6), None))
    jac = jacfwd(deposit, argnums=1)(positions, charges, 8)[0]
    grad_energy = duals.grad(deposit_energy, argnums=1)(positions, charges, 8)
    assert np.array_equal(value, plain) and energy_jvp == energy
    cell = np.floor(positions * 8).astype(np.int64)
    np.testing.assert_array_equal(jac, (np.arange(8)[:, None] == cell[None, :]).astype(float))
    np.testing.assert_allclose(grad_energy, plain[cell], rtol=1e-15)


def test_bincount_refuses_dual_bins_and_reports_numpys_errors():
    with pytest.raises(TypeError, match="np.bincount of dual numbers: the bins are integers"):
        duals.jacfwd(numba.njit(lambda x: np.bincount(x)))(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="no negative elements"):
        duals.grad(numba.njit(lambda w: np.sum(np.bincount(np.array([0, -1]), weights=w))))(np.ones(2))


# ---------------------------------------------------------------- clear errors

def test_functions_without_a_compiled_rule_give_one_line_naming_them():
    for f, label in ((uses_percentile, "np.percentile"), (uses_nanvar, "np.nanvar")):
        with pytest.raises(TypeError, match=rf"^jacfwd: {label} of dual numbers is not supported") as info:
            jacfwd(f)(np.array([1.0, 2.0, 3.0]))
        assert "\n" not in str(info.value)


@njit
def floored_energy(x):
    return np.sum(np.clip(x, x[0] + 0.1, 0.8) ** 2)


def test_clip_of_an_array_with_a_traced_bound():
    x = np.array([0.31, 0.72, 0.45, 0.88, 0.57])
    expected = central_differences(floored_energy, (x,), 0)
    for transform in (jacfwd, duals.grad):
        np.testing.assert_allclose(transform(floored_energy)(x), expected, rtol=1e-7, atol=1e-9)


@njit
def polynomial_sum(c):
    return np.sum(np.polynomial.polynomial.polyadd(c, np.ones(2)))


def test_a_numba_implementation_that_asks_numpy_for_a_common_dtype_is_named_with_the_line():
    # (climate trial) it named Numba's internal helper (_poly_result_dtype), and no line
    c = np.array([0.3, 0.7, 0.4])
    polynomial_sum(c)   # the plain call is fine
    with pytest.raises(TypeError, match=r"Numba's implementation of numpy\.polynomial\.polynomial\.polyadd "
                                        r"cannot take arrays of duals.*loops.*\(in .*test_jit_numpy\.py, line \d+\)"):
        jacfwd(polynomial_sum)(c)


@njit
def third_smallest_squared(x):
    return x[np.argpartition(x, 2)[2]] ** 2


def test_a_numba_implementation_calling_a_method_duals_lack_is_named_not_the_users_code():
    with pytest.raises(TypeError, match=r"Numba's np\.argpartition calls x\.astype\(\) on the array of duals"):
        jacfwd(third_smallest_squared)(np.array([0.31, 0.72, 0.45, 0.88]))


@njit
def positive_squares(z):
    return np.extract(z > 0, z ** 2)


def test_extract_of_dual_arrays_gathers_by_the_condition():
    x = np.array([0.3, -1.2, 2.5, 0.7, 0.1])
    expected = central_differences(positive_squares, (x,), 0)
    for transform in (jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(positive_squares)(x), expected, rtol=1e-7, atol=1e-9)


PHASES = np.array([0.1, 3.0, 6.2, 0.5, -3.0, 2.9])
COMPOSED_KERNELS = {   # duals/jit/composed_arrays.py: NumPy functions written with dual arithmetic
    "vdot": lambda x: np.vdot(x, np.sin(x[::-1])),
    "vander": lambda x: np.vander(x, 3),
    "vander-increasing-square": lambda x: np.vander(x, increasing=True),
    "nan_to_num-of-log": lambda x: np.nan_to_num(np.log(x)) * x,
    "nan_to_num-in-place-transposed": lambda x: np.nan_to_num(np.log(np.outer(x, x)).T, copy=False,
                                                              nan=1.0, neginf=-5.0) * x,
    "nan_to_num-of-a-scalar": lambda x: np.nan_to_num(np.log(x[2])) * x,
    "unwrap-of-a-phase-ramp": lambda x: np.unwrap(PHASES * x[0] + x[1]),
    "unwrap-with-discont": lambda x: np.unwrap(np.cumsum(4.0 * x), discont=4.0),
}


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")
@pytest.mark.parametrize("name", sorted(COMPOSED_KERNELS))
def test_numpy_functions_composed_from_dual_arithmetic(name):
    kernel = COMPOSED_KERNELS[name]
    f = njit(kernel)
    x = np.array([0.9, 1.3, -0.7, 2.1])     # a negative entry: log gives NaN, replaced by a constant
    np.testing.assert_array_equal(f(x), kernel(x))    # NumPy's values, to the bit
    expected = central_differences(f, (x,), 0)
    for transform in (jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(f)(x), expected, rtol=1e-7, atol=1e-8)


def closed_periodic_interp(q, x0):
    """np.interp on a periodic grid closed by np.append of a single value (as NWP code writes it)."""
    n = q.size
    x = np.arange(n) * 1.0
    return np.interp(x0, np.append(x, float(n)), np.append(q, q[0])) + np.sum(np.append(x, q[1]))


def test_append_of_a_single_dual_value_closes_a_periodic_grid():
    # (semi-Lagrangian trial) np.append(q, q[0]) did not compile: Numba's takes array-like values
    q = np.array([1.0, 2.0, 4.0])
    for x0, want in ((2.5, [0.5, 1.0, 0.5]), (0.25, [0.75, 1.25, 0.0])):
        for transform in (duals.jacfwd, duals.grad):
            np.testing.assert_allclose(transform(njit(closed_periodic_interp))(q, x0), want, rtol=1e-15)
        np.testing.assert_allclose(central_differences(njit(closed_periodic_interp), (q, x0), 0), want, rtol=1e-7)


NODES = np.linspace(0.05, 0.95, 7)


def fitted_profile_misfit(c, x0):
    """An energy-balance model's fitted temperature profile T(x) = sum c_k x^k, by Numba's
    numpy.polynomial.polynomial.polyval, on a grid and at a point (the ice edge's guess)."""
    return np.sum((P.polyval(NODES, c) - 1.0) ** 2) + P.polyval(x0, c) * x0


def test_numba_polynomial_polyval_of_duals_matches_the_numpy_path():
    # (climate trial) Numba's own asks NumPy for a common dtype of a dual array: refused, naming
    # an internal helper
    c, x0 = np.array([1.0, -2.0, 0.5]), 0.3
    numpy_path = lambda c, x0: (np.sum((np.polyval(c[::-1], NODES) - 1.0) ** 2)   # noqa: E731
                                + np.polyval(c[::-1], x0) * x0)
    for transform in (duals.jacfwd, duals.grad):
        for got, want in zip(transform(njit(fitted_profile_misfit), argnums=(0, 1))(c, x0),
                             transform(numpy_path, argnums=(0, 1))(c, x0)):
            np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(duals.hessian(njit(fitted_profile_misfit))(c, x0),
                               duals.hessian(numpy_path)(c, x0), rtol=1e-14)



def minimum_image_energy(x, box):
    """Pair energy in a periodic box, the separation wrapped by np.round (MD and SPH codes)."""
    energy = 0.0
    for i in range(x.size):
        for j in range(i + 1, x.size):
            dx = x[j] - x[i]
            dx -= box * np.round(dx / box)
            energy += dx * dx + 0.1 * np.round(dx, 1)
    return energy


def test_np_round_of_a_dual_number_is_a_step_function_in_compiled_code():
    # (SPH trial) np.round(x) of a number did not compile on duals, with a misleading message
    x, box = np.array([0.12, 0.93, 0.51]), 1.0   # (no separation at a rounding boundary)
    want = central_differences(minimum_image_energy, (x, box), 0)
    for transform in (duals.jacfwd, duals.grad):
        np.testing.assert_allclose(transform(njit(minimum_image_energy))(x, box), want, rtol=1e-7)
