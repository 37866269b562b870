"""Unchanged NumPy code on traced values: realistic user functions written with plain ``np.*``
(an iteration stopped by ``np.allclose``, a peak found by ``np.argmax``, a median-based robust
loss, trapezoidal integration, a padded stencil, interpolation of a table, ...), each checked with
``duals.gradcheck`` (jacfwd, jacrev and central differences) and, where smooth, the Hessian
against ``jacfwd(jacfwd)``; then the value-only queries, the methods, the tie policy of the
order statistics and the errors of what stays unsupported.
"""
import math
import re
import warnings

import numba
import numpy as np
import scipy.fft
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.spatial.distance
import pytest

import duals
import duals.numpy as dnp
from duals import Dual, Var
from duals.ops.quantile_methods import METHODS
from duals.testing import assert_close
from finite_differences import central_differences

RNG = np.random.default_rng(20240615)

# ---------------------------------------------------------------- realistic user functions


def fixed_point(a):
    """x = 0.5 cos(a x), iterated until np.allclose says it has converged."""
    x = np.zeros_like(a)
    for _ in range(500):
        x_new = 0.5 * np.cos(a * x)
        if np.allclose(x_new, x, rtol=0.0, atol=1e-14):
            break
        x = x_new
    return x_new


def fixed_point_loss(a):
    return np.sum(fixed_point(a) ** 2 * np.arange(1.0, a.shape[0] + 1.0))


def refined_peak(p):
    """Height of a sampled Gaussian's peak: np.argmax, then a three-point parabola through it."""
    t = np.linspace(0.0, 10.0, 201)
    y = p[0] * np.exp(-((t - p[1]) ** 2) / (2.0 * p[2] ** 2))
    i = np.argmax(y)
    y0, y1, y2 = y[i - 1], y[i], y[i + 1]
    offset = 0.5 * (y0 - y2) / (y0 - 2.0 * y1 + y2)
    return y1 - 0.25 * (y0 - y2) * offset


X_DATA = np.linspace(-1.0, 1.0, 15)
Y_DATA = 0.3 + 1.7 * X_DATA + 0.05 * RNG.standard_normal(15)
Y_DATA[[3, 11]] += [2.0, -3.0]   # outliers


def robust_loss(theta):
    """Cauchy loss of line-fit residuals scaled by their median absolute deviation."""
    r = Y_DATA - (theta[0] + theta[1] * X_DATA)
    mad = np.median(np.abs(r - np.median(r)))
    return np.mean(np.log1p((r / (1.4826 * mad)) ** 2))


def model_energy(p):
    """Trapezoidal integral of a damped oscillation on a grid whose end point is a parameter."""
    t = np.linspace(0.0, p[2], 401)
    y = np.exp(-p[0] * t) * np.sin(p[1] * t)
    return np.trapezoid(y ** 2, t)


def padded_stencil_energy(u):
    """Dirichlet energy with a discrete Laplacian from an edge-padded copy (Neumann border)."""
    up = np.pad(u, 1, mode="edge")
    lap = up[2:] - 2.0 * up[1:-1] + up[:-2]
    return -np.sum(u * lap) + 0.1 * np.sum(u ** 4)


def periodic_stencil_2d(u):
    """A 2-D periodic five-point Laplacian with np.roll, and a wrap-padded second version."""
    lap = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4 * u
    up = np.pad(u, 1, mode="wrap")
    lap2 = up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * up[1:-1, 1:-1]
    return np.sum(lap * lap2) + np.sum(np.tanh(u))


TABLE_T = np.array([200.0, 250.0, 300.0, 350.0, 400.0, 500.0])
TABLE_CP = np.array([0.95, 1.00, 1.01, 1.03, 1.07, 1.12])


def tabulated_heat(p):
    """Heat of a gas heated from T0 to T1, with a tabulated heat capacity rescaled by a factor."""
    temps = np.linspace(p[0], p[1], 50)
    cp = np.interp(temps, TABLE_T, TABLE_CP * p[2])
    return np.trapezoid(cp, temps)


def design_matrix_fit(y):
    """Least-squares quadratic fit through np.column_stack and np.linalg.solve; its prediction."""
    x = np.linspace(0.0, 1.0, y.shape[0])
    A = np.column_stack([np.ones_like(x), x, x ** 2])
    coef = np.linalg.solve(A.T @ A, A.T @ y)
    return np.polyval(coef[::-1], 0.5)


def survival(h):
    """Probability of surviving each step of a discrete hazard, then the expected lifetime."""
    alive = np.cumprod(1.0 - h)
    return np.sum(alive) + np.diff(alive, prepend=1.0) @ np.arange(h.shape[0])


def percentile_band(p):
    """Width of the 5-95 % band of a scaled and shifted sample, plus its trimmed mean."""
    z = np.array([-1.3, 0.2, 0.7, -0.4, 2.1, -2.2, 0.05, 1.1, -0.8, 0.45])
    s = p[0] + p[1] * z + 0.1 * z ** 2 * p[0]
    lo, hi = np.percentile(s, [5, 95])
    return (hi - lo) + np.mean(np.sort(s)[1:-1])


def smoothed_signal(x):
    """A signal smoothed by np.convolve with a normalized kernel, its derivative by np.diff."""
    kernel = np.array([1.0, 2.0, 3.0, 2.0, 1.0])
    kernel /= kernel.sum()
    s = np.convolve(np.sin(x), kernel, mode="same")
    return np.sum(np.diff(s) ** 2) + np.max(s)


def torque_and_grid(v):
    """Cross products of forces with arms, and a meshgrid integral of a field that depends on them."""
    arms = np.vstack([v[:3], v[3:], v[:3] * v[3:]])
    forces = np.tile(np.array([0.3, -0.2, 0.5]), (3, 1)) + arms[::-1]
    torque = np.cross(arms, forces)
    X, Y = np.meshgrid(np.linspace(0.0, 1.0, 5), np.linspace(0.0, 1.0, 4))
    field = np.exp(-(X - torque[0, 0]) ** 2 - (Y - torque[1, 2]) ** 2)
    return np.trapezoid(np.trapezoid(field, dx=0.25, axis=1), dx=1.0 / 3.0) + np.sum(np.kron(v[:2], v[2:4]))


def soft_weighted_mean(w):
    """np.average with softmax weights (traced) of fixed data, with missing values skipped."""
    data = np.array([1.0, np.nan, 3.0, 4.0, np.nan])
    weights = np.exp(w) / np.sum(np.exp(w))
    good = ~np.isnan(data)
    return np.average(data[good], weights=weights[good]) + np.nansum(data * w) + np.nanmean(data * w ** 2)


def image_symmetry(img):
    """Deviation of an image from its mirror and rotated copies, ReLU by np.fmax, sum where bright."""
    asym = img - np.fliplr(img) + np.flipud(img) - np.rot90(img)
    relu = np.fmax(asym, 0.0)
    return np.sum(relu ** 2) + np.sum(img ** 2, where=img > 0.0) + np.sum(np.deg2rad(img))


def log_data_term(x):
    """A log-likelihood of counts; log(0) entries replaced by np.nan_to_num, then logaddexp.reduce."""
    counts = np.array([0.0, 3.0, 1.0, 0.0, 5.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.nan_to_num(counts * np.log(counts * x), nan=0.0, neginf=0.0)
    return np.sum(ll) - np.logaddexp.reduce(x)


def python_loop_over_tolist(x):
    """Plain-Python loops: over x.tolist(), and one stopped by a value test on .item()."""
    weighted = sum(v * (k + 1.0) for k, v in enumerate(x.tolist()))
    total = 0.0
    for i in range(len(x)):
        total = total + x[i] ** 2
        if total.item() > 5.0:
            break
    return total + weighted


SMOOTH = [
    ("fixed_point", fixed_point_loss, RNG.uniform(0.5, 1.5, 3)),
    ("refined_peak", refined_peak, np.array([2.0, 4.3, 0.9])),
    ("robust_loss", robust_loss, np.array([0.25, 1.6])),
    ("model_energy", model_energy, np.array([0.4, 3.0, 2.5])),
    ("padded_stencil_energy", padded_stencil_energy, RNG.uniform(-1, 1, 6)),
    ("periodic_stencil_2d", periodic_stencil_2d, RNG.uniform(-1, 1, (3, 4))),
    ("tabulated_heat", tabulated_heat, np.array([260.0, 420.0, 1.1])),
    ("design_matrix_fit", design_matrix_fit, RNG.uniform(-1, 1, 7)),
    ("survival", survival, RNG.uniform(0.05, 0.3, 6)),
    ("percentile_band", percentile_band, np.array([0.5, 1.3])),
    ("smoothed_signal", smoothed_signal, RNG.uniform(-2, 2, 8)),
    ("torque_and_grid", torque_and_grid, RNG.uniform(-0.5, 0.5, 6)),
    ("soft_weighted_mean", soft_weighted_mean, RNG.uniform(-1, 1, 5)),
    ("image_symmetry", image_symmetry, RNG.uniform(-1, 1, (3, 3))),
    ("log_data_term", log_data_term, RNG.uniform(0.5, 2.0, 5)),
    ("python_loop_over_tolist", python_loop_over_tolist, RNG.uniform(0.5, 1.5, 8)),
]


@pytest.mark.parametrize("name,f,x", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_user_function_gradcheck(name, f, x):
    assert duals.gradcheck(f, x, rtol=1e-4 if name == "tabulated_heat" else None)


@pytest.mark.parametrize("name,f,x", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_user_function_value_is_numpys(name, f, x):
    value = duals.value_and_grad(f)(x)[0]
    assert_close(value, f(x), 1e-12, 1e-12, name)


@pytest.mark.parametrize("name,f,x", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_user_function_hessian_equals_jacfwd_of_jacfwd(name, f, x):
    H = duals.hessian(f)(x)
    assert_close(H, duals.jacfwd(duals.jacfwd(f))(x), 1e-9, 1e-9, name)
    assert_close(H, duals.jacrev(duals.jacrev(f))(x), 1e-9, 1e-9, name)


def test_fixed_point_derivative_is_the_implicit_one():
    a = np.array([0.8])
    x = fixed_point(a)
    # x = 0.5 cos(a x)  =>  dx/da = -0.5 sin(a x) x / (1 + 0.5 sin(a x) a)
    s = np.sin(a * x)
    assert duals.gradcheck(fixed_point, a)
    assert_close(duals.jacfwd(fixed_point)(a)[0, 0], (-0.5 * s * x / (1 + 0.5 * s * a))[0], 1e-10, 1e-10,
                 "implicit derivative")


def test_integral_with_traced_end_point_has_the_integrand_there():
    def integral(b):
        t = np.linspace(0.0, b, 2001)
        return np.trapezoid(np.exp(-t ** 2), t)
    assert abs(duals.grad(integral)(1.3) - np.exp(-1.69)) < 1e-6


def test_imperative_var_through_numpy_functions():
    x = Var(np.array([3.0, 1.0, 2.0]))
    y = np.sum(np.sort(x) * np.array([1.0, 10.0, 100.0])) + np.median(x) + np.interp(x[0], [0.0, 4.0], [0.0, 2.0])
    y.backward()
    np.testing.assert_allclose(x.grad, [100.5, 1.0, 11.0])

MIXED = [
    ("vstack", lambda x: np.vstack([x, [1.0, 2.0, 3.0]])), ("hstack", lambda x: np.hstack([[5.0], x])),
    ("column_stack", lambda x: np.column_stack([x, [1.0, 2.0, 3.0]])), ("append", lambda x: np.append(x, [1.0])),
    ("meshgrid", lambda x: np.meshgrid(x, [1.0, 2.0])[0] * np.meshgrid(x, [1.0, 2.0])[1]),
    ("fmax", lambda x: np.fmax(x, [0.0, 0.0, 0.0])), ("kron", lambda x: np.kron([1.0, 2.0], x)),
    ("cross", lambda x: np.cross([1.0, 0.0, 0.5], x)), ("convolve", lambda x: np.convolve([1.0, 0.5], x)),
    ("average", lambda w: np.average([1.0, 2.0, 3.0], weights=w ** 2 + 1.0)),
    ("trapezoid", lambda x: np.trapezoid([1.0, 2.0, 3.0], np.cumsum(x ** 2))),
    ("interp", lambda fp: np.interp([0.5, 1.5], [0.0, 1.0, 2.0], fp)),
    ("polyval", lambda p: np.polyval(p, [1.0, 2.0])),
    ("quantile", lambda q: np.quantile([1.0, 5.0, 2.0, 4.0], q / 2.0 + 0.5)),
]


@pytest.mark.parametrize("name,f", MIXED, ids=[m[0] for m in MIXED])
def test_plain_lists_next_to_traced_values(name, f):
    assert duals.gradcheck(f, np.array([0.3, -0.7, 0.9]))


# ---------------------------------------------------------------- value-only queries


def _answers_on_traced_values(x, query):
    """``query`` of ``x`` as a Dual, a Var and a Dual inside a Var (nested, asked while the
    hessian that made it runs: a traced value is not used after its call returned)."""
    answers = [query(Dual(x, np.ones_like(x))), query(Var(x))]

    def probe(v):
        answers.append(query(v))
        return dnp.sum(v)
    duals.hessian(probe)(x)
    return answers


QUERIES = [
    ("argmax", lambda x: np.argmax(x)), ("argmin-axis", lambda x: np.argmin(x, axis=0)),
    ("argsort", lambda x: np.argsort(x)), ("any", lambda x: np.any(x)), ("all", lambda x: np.all(x > -5)),
    ("isclose", lambda x: np.isclose(x, 0.25)), ("allclose", lambda x: np.allclose(x, x + 1e-12)),
    ("count_nonzero", lambda x: np.count_nonzero(x > 0)), ("nonzero", lambda x: np.nonzero(x)[0]),
    ("searchsorted", lambda x: np.searchsorted(np.sort(np.ravel(x)), 0.0)),
    ("shape", lambda x: np.shape(x)), ("size", lambda x: np.size(x)), ("ndim", lambda x: np.ndim(x)),
    ("less", lambda x: np.less(x, 0.0)), ("greater_equal", lambda x: np.greater_equal(0.1, x)),
    ("equal", lambda x: np.equal(x, x)), ("not_equal", lambda x: np.not_equal(x, 0.25)),
    ("logical_and", lambda x: np.logical_and(x > 0, x < 1)), ("heaviside", lambda x: np.heaviside(x, 0.5)),
    ("round", lambda x: np.round(x, 1)), ("signbit", lambda x: np.signbit(x)),
    ("argmax-method", lambda x: x.argmax()), ("argmin-method", lambda x: x.argmin(axis=0)),
    ("argsort-method", lambda x: x.argsort()), ("any-method", lambda x: x.any()), ("all-method", lambda x: x.all()),
    ("nonzero-method", lambda x: x.nonzero()[0]), ("round-method", lambda x: x.round(2)),
]


@pytest.mark.parametrize("name,query", QUERIES, ids=[q[0] for q in QUERIES])
def test_value_only_queries_give_numpys_plain_answer(name, query):
    x = np.array([[0.25, -1.5, 2.0], [0.0, 0.75, -0.1]])
    expected = query(x)
    for got in _answers_on_traced_values(x, query):
        assert not isinstance(got, duals.core.Tracer), name
        assert type(got) is type(expected) or np.asarray(got).dtype == np.asarray(expected).dtype, name
        np.testing.assert_array_equal(got, expected)


def test_ufunc_reduce_defaults_to_the_first_axis_as_numpy():
    x = np.arange(6.0).reshape(2, 3)
    d = Dual(x, np.ones_like(x))
    np.testing.assert_allclose(np.add.reduce(d).primal, np.add.reduce(x))
    np.testing.assert_allclose(np.logaddexp.reduce(d, axis=1).primal, np.logaddexp.reduce(x, axis=1))
    np.testing.assert_allclose(np.multiply.accumulate(d, axis=1).primal, np.multiply.accumulate(x, axis=1))

# ---------------------------------------------------------------- methods


def test_item_and_tolist_keep_the_derivative():
    x = np.array([1.0, 2.0, 3.0])
    g = duals.grad(lambda v: v.item(1) ** 2 + sum(v.tolist()) + v[2:].item() * 3.0)(x)
    np.testing.assert_allclose(g, [1.0, 5.0, 4.0])
    d = Dual(np.array([[1.0, 2.0]]), np.array([[1.0, 0.0]]))
    assert [[float(e.primal) for e in row] for row in d.tolist()] == [[1.0, 2.0]]
    assert d.item(0, 0).tangent == 1.0
    with pytest.raises(ValueError, match="size 1"):
        d.item()
    with pytest.raises(TypeError, match="drop its derivative"):
        float(Dual(np.array([1.0]), np.array([1.0])).item())


def test_format_real_conj_astype():
    d = Dual(np.array(1.23456), np.array(1.0))
    assert f"{d:.2f}" == "1.23"
    assert d.real is d and d.conj() is d and d.conjugate() is d   # NumPy's of real x: x (or a view)
    for copied in (np.conj(d), d.astype(float), d.copy(), +d):   # NumPy's: new arrays
        assert copied is not d and copied.primal == d.primal and copied.tangent == d.tangent
    assert np.asarray(Dual(np.ones(2), np.ones(2)).imag).tolist() == [0.0, 0.0]
    g = duals.grad(lambda v: np.sum(v.real * v.conj()))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [2.0, 4.0])


def test_sort_method_refuses_to_mutate_and_says_what_to_write():
    for x in (Dual(np.ones(3), np.ones(3)), Var(np.ones(3))):
        with pytest.raises(TypeError, match=r"x = np\.sort\(x\)"):
            x.sort()


def test_new_methods_match_the_functions():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = duals.grad(lambda v: np.sum(v.cumprod()) + np.sum(v.repeat(2, axis=0) ** 3) + np.sum(v.take([3, 0]) ** 2))
    h = duals.grad(lambda v: np.sum(np.cumprod(v)) + np.sum(np.repeat(v, 2, axis=0) ** 3)
                   + np.sum(np.take(v, [3, 0]) ** 2))
    np.testing.assert_allclose(g(x), h(x))

# ---------------------------------------------------------------- tie policy of the order statistics


def test_sort_at_a_tie_follows_the_stable_order():
    x = np.array([1.0, 2.0, 1.0])
    J = duals.jacfwd(np.sort)(x)
    np.testing.assert_array_equal(J, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(duals.jacrev(np.sort)(x), J)


def test_median_and_percentile_at_a_tie_take_one_entry():
    x = np.array([2.0, 5.0, 2.0, 0.0, 2.0])
    np.testing.assert_array_equal(duals.grad(np.median)(x), [0.0, 0.0, 1.0, 0.0, 0.0])
    g = duals.grad(lambda v: np.percentile(v, 60.0))(x)   # virtual index 2.4: sorted entries 2 and 3
    np.testing.assert_allclose(g, [0.0, 0.0, 0.6, 0.0, 0.4])


def test_interp_at_a_knot_takes_the_right_segment_and_outside_is_flat():
    xp, fp = [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]
    g = duals.grad(lambda x: np.sum(np.interp(x, xp, fp)))
    np.testing.assert_allclose(g(np.array([1.0])), [0.5])     # right of the knot 1
    np.testing.assert_allclose(g(np.array([3.0])), [0.5])     # the last knot: left segment
    np.testing.assert_allclose(g(np.array([-1.0, 4.0])), [0.0, 0.0])


def test_cumprod_derivatives_are_exact_at_a_zero_entry():
    x = np.array([2.0, 0.0, 3.0, 4.0])

    def products_without(k, skip):   # prod_{l <= k, l not in skip} x_l
        return np.prod([x[l] for l in range(k + 1) if l not in skip])

    J = np.array([[products_without(k, {i}) if i <= k else 0.0 for i in range(4)] for k in range(4)])
    np.testing.assert_array_equal(duals.jacfwd(np.cumprod)(x), J)
    np.testing.assert_array_equal(duals.jacrev(np.cumprod)(x), J)
    H = np.array([[sum(products_without(k, {i, j}) for k in range(max(i, j), 4)) if i != j else 0.0
                   for j in range(4)] for i in range(4)])
    np.testing.assert_array_equal(duals.hessian(lambda v: np.sum(np.cumprod(v)))(x), H)
    np.testing.assert_array_equal(duals.jacfwd(duals.jacrev(lambda v: np.sum(np.cumprod(v))))(x), H)


def test_median_of_a_slice_with_nan_is_nan():
    d = Dual(np.array([1.0, np.nan, 3.0]), np.ones(3))
    assert np.isnan(np.median(d).primal) and np.isnan(np.percentile(d, 50).primal)


def test_weighted_histogram_of_many_samples_is_numpys_and_its_gradient_is_exact():
    """Importance weights of 150,000 samples (three of NumPy's blocks): counts and density are
    NumPy's bit for bit; the gradient of one bin's density is the closed form."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=150_000)

    def density(theta):
        w = np.exp(theta * x)                      # tilted weights
        return np.histogram(x, bins=20, range=(-3.0, 3.0), weights=w, density=True)[0]

    theta = 0.3
    value, tangent = duals.jvp(density, (theta,), (1.0,))
    assert np.array_equal(value, density(theta))
    w = np.exp(theta * x)
    edges = np.linspace(-3.0, 3.0, 21)
    inside = (x >= -3.0) & (x <= 3.0)
    index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, 19)
    mass = np.bincount(index[inside], (w * x)[inside], 20)      # d/dθ of each bin's weight
    counts = np.bincount(index[inside], w[inside], 20)
    width, total = 0.3, counts.sum()
    closed = mass / width / total - counts / width / total ** 2 * mass.sum()
    np.testing.assert_allclose(tangent, closed, rtol=1e-9)
    np.testing.assert_allclose(duals.grad(lambda t: density(t)[7])(theta), closed[7], rtol=1e-9)


def test_histogram_edges_follow_the_data_and_refuse_what_has_no_derivative():
    x = np.array([0.5, 2.0, 1.0, 4.0])
    J = duals.jacfwd(lambda x: np.histogram(x, bins=3)[1])(x)      # linspace(min, max, 4)
    np.testing.assert_allclose(J, [[1, 0, 0, 0], [2 / 3, 0, 0, 1 / 3], [1 / 3, 0, 0, 2 / 3], [0, 0, 0, 1]],
                               rtol=1e-15, atol=1e-15)
    counts = duals.jvp(lambda x: np.histogram(x, bins=3)[0], (x,), (np.ones(4),))[1]
    assert not np.any(counts)                                        # a count is piecewise constant
    with pytest.raises(TypeError, match="range cannot be traced"):
        duals.grad(lambda h: np.histogram(x * h, 3, range=(0.0, h))[1][1])(5.0)
    with pytest.raises(TypeError, match="number of bins cannot be traced"):
        duals.grad(lambda n: np.histogram(x, n)[1][1])(3.0)
    # plain data: NumPy's own histogram runs (range= is not a dispatch argument) and is stopped
    # where it converts the traced range to integers, with the same way out
    with pytest.raises(TypeError, match=r"numpy.histogram .*traced range= is not supported.*bins=np.linspace"):
        duals.grad(lambda h: np.histogram(x, 3, range=(0.0, h))[1][1])(5.0)


@pytest.mark.parametrize("transform", [duals.jacfwd, duals.jacrev])
def test_ufunc_keyword_options_cast_or_name_the_way_out(transform):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(transform(lambda x: np.subtract(x, 1.0, dtype=np.float64))(x), np.eye(3))
    for options, message in [({"dtype": int}, r"dtype=int64\) of a traced value would drop"),
                             ({"where": x > 1}, r"where=mask\) is not supported.*np.where"),
                             ({"casting": "unsafe"}, "casting= and order= are not supported")]:
        with pytest.raises(TypeError, match=message):
            transform(lambda x: np.multiply(x, x, **options))(x)


def test_float32_is_kept():
    x = np.array([3.0, 1.0, 2.0, 0.5], dtype=np.float32)
    for f in (np.sort, np.median, lambda v: np.percentile(v, 30), np.cumprod, np.diff,
              lambda v: np.pad(v, 1, mode="reflect"), lambda v: np.trapezoid(v, dx=0.5),
              lambda v: np.convolve(v, v[:2]), lambda v: np.linspace(v[0], v[1], 3)):
        assert duals.jacfwd(f)(x).dtype == np.float32

# ---------------------------------------------------------------- what stays unsupported


def test_unsupported_functions_name_themselves_the_reason_and_the_way_out():
    d = Dual(np.ones(3), np.ones(3))
    for call, name in ((lambda: np.histogram2d(d, d), "numpy.histogram2d"), (lambda: np.polydiv(d, d), "numpy.polydiv"),
                       (lambda: np.linalg.tensorinv(np.eye(4).reshape(2, 2, 2, 2) * d[0], 2), "numpy.linalg.tensorinv"),
                       (lambda: np.i0(d), "numpy.i0"),
                       (lambda: np.subtract.reduce(d), "numpy.subtract.reduce")):
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(name + " has no derivative rule"), message
        assert "losing the derivative" in message and "duals.extend.primitive" in message


def test_special_functions_without_a_rule_name_the_spelling_that_has_one():
    # (a probabilistic-programming trial: betaln's advice was dir(duals.numpy))
    import scipy.special as sp
    y, t = np.array([0.2, 0.35, 0.1]), np.array([0.5, 1.2])

    def beta_log_likelihood(t, betaln):
        a, b = np.exp(t[0]), np.exp(t[1])
        return np.sum(sp.xlogy(a - 1, y) + sp.xlog1py(b - 1, -y) - betaln(a, b))

    with pytest.raises(TypeError, match=r"^scipy\.special\.betaln has no derivative rule .* Write "
                                        r"scipy\.special\.gammaln\(a\) \+ scipy\.special\.gammaln\(b\) - "):
        duals.grad(beta_log_likelihood)(t, sp.betaln)
    advised = lambda a, b: sp.gammaln(a) + sp.gammaln(b) - sp.gammaln(a + b)  # noqa: E731
    np.testing.assert_allclose(duals.grad(beta_log_likelihood)(t, advised),
                               central_differences(lambda t: beta_log_likelihood(t, sp.betaln), [t], 0),
                               rtol=1e-7)
    p = np.array([0.0, 0.2, 0.8])
    for name, f, advised in (
            ("entr", lambda p: sp.entr(p), lambda p: -sp.xlogy(p, p)),
            ("kl_div", lambda p: sp.kl_div(p, 0.5), lambda p: sp.xlogy(p, p) - sp.xlogy(p, 0.5) - p + 0.5)):
        with pytest.raises(TypeError, match=rf"^scipy\.special\.{name} has no derivative rule"):
            duals.grad(lambda p: np.sum(f(p)))(p)
        np.testing.assert_allclose(advised(p), f(p), rtol=1e-14, atol=1e-300)   # the same values


def fill_preallocated(a):
    out = np.zeros(3)
    for i in range(3):
        out[i] = np.sin(a[i]) * a[i]
    return np.sum(out)


@pytest.mark.parametrize("transform", ["grad", "jacfwd"])
def test_storing_one_traced_number_into_a_plain_array_says_what_to_write(transform):
    """NumPy refuses ``out[i] = traced`` as "setting an array element with a sequence" before the
    value can object; within a transformation the message goes on with what to write instead."""
    with pytest.raises(ValueError, match=r"with a sequence\. If the value is traced .* dnp\.stack .* @numba\.njit"
                                         r".*\(in .*test_numpy_coverage\.py, line \d+\)$"):   # the user's line
        getattr(duals, transform)(fill_preallocated)(np.array([0.1, 0.2, 0.3]))
    # adding into entries (a circuit's stamps): the advice named dnp.stack and dnp.where only
    with pytest.raises(ValueError, match=r"to add into entries \(G\[i, j\] \+= g.* weights=dnp\.stack\(values\)"):
        getattr(duals, transform)(filled_buffer_by_stamps)(np.array([2.0]))
    with pytest.raises(ValueError, match=r"with a sequence\.$"):   # NumPy's own, outside transformations
        np.zeros(2)[0] = [1.0, 2.0]


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev", "hessian"])
def test_a_variance_without_degrees_of_freedom_is_nan_as_in_numpy(transform):
    """np.var(x, ddof=x.size) divides by zero: NumPy warns and returns inf or nan, and so do the
    derivatives (a partial 1 / y at y = 0 evaluated on Python numbers raised ZeroDivisionError)."""
    x = np.array([1.0, 2.0, 3.0])
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isinf(np.var(x, ddof=3))
        got = getattr(duals, transform)(lambda x: np.var(x, ddof=3))(x)
        assert not np.all(np.isfinite(got))
        got = getattr(duals, transform)(lambda x: np.std(x[1:2], ddof=1))(x)
        assert np.isnan(got).any()


@pytest.mark.parametrize("call,match", [
    (lambda d: np.pad(d, 1, mode="mean"), r"numpy\.pad with mode='mean'.*supported modes"),
    (lambda d: np.quantile(d, 0.5, weights=np.ones(3)), r"numpy\.quantile with weights="),
    (lambda d: np.interp(0.5, d, [0.0, 1.0, 2.0], period=3.0), r"numpy\.interp: traced sample points xp with period="),
    (lambda d: np.take(d, np.array([0]) * d), r"take: the indices cannot be a traced value"),
    (lambda d: np.linspace(d[0], d[1], 3, dtype=int), r"linspace\(..., dtype=int64\)"),
    (lambda d: np.sum(d, where=d > 0, out=np.zeros(())), r"sum\(..., out=\.\.\.\)"),
    (lambda d: np.ravel(d.reshape(1, 3), order="K"), r"ravel\(order='K'\) follows the memory layout"),
    (lambda d: d.reshape(1, 3).reshape((3, 1), order="A"), r"reshape: order must be 'C' or 'F' \(got 'A'\)"),
    (lambda d: np.asfortranarray(d.reshape(1, 3)), r"np\.asfortranarray makes a plain NumPy array .* "
     r"dnp\.asfortranarray\(x\)"),
    (lambda d: np.cumsum(d, dtype=int), r"cumsum: dtype=int64 would truncate the derivative"),
    (lambda d: np.add.at(np.zeros(2), np.array([0, 1, 0]), d), r"numpy\.add\.at\(a, indices, b\) changes a in "
     r"place.*a \+ np\.bincount\(indices, weights=b, minlength=a\.size\)"),
    (lambda d: np.add.at(np.zeros(2, complex), np.array([0, 1, 0]), d * (1 + 2j)),  # complex: by parts
     r"a \+ \(np\.bincount\(indices, weights=b\.real, minlength=a\.size\) \+ 1j \* np\.bincount\(indices, "
     r"weights=b\.imag, minlength=a\.size\)\)"),
    (lambda d: np.maximum.at(np.zeros(2), np.array([0, 1, 0]), d), r"numpy\.maximum\.at.*@numba\.njit"),
    (lambda d: dnp.add.at(np.zeros(2), np.array([0, 1, 0]), d), r"numpy\.add\.at\(a, indices, b\) changes a"),
])
def test_unsupported_options_say_what_and_how(call, match):
    d = Dual(np.array([0.0, 1.0, 2.0]), np.ones(3))
    with pytest.raises((TypeError, NotImplementedError, ValueError), match=match) as raised:
        call(d)
    if "numpy.add.at" in str(raised.value):   # a refused ufunc call names the user's line
        assert re.search(r"\(in .*test_numpy_coverage\.py, line \d+\)$", str(raised.value))


def test_interp_with_a_zero_period_is_refused_as_numpy_refuses_it():
    d = Dual(np.array([0.0, 1.0, 2.0]), np.ones(3))
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        np.interp(d, [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], period=0.0)


def robertson_rhs(t, y):
    """An ODE right-hand side as it is usually written: np.array of the three rates."""
    y1, y2, y3 = y
    return np.array([-0.04 * y1 + 1e4 * y2 * y3, 0.04 * y1 - 1e4 * y2 * y3 - 3e7 * y2 ** 2,
                     3e7 * y2 ** 2])


def triangular_misfit(theta):
    L = np.linalg.cholesky(np.eye(3) * np.exp(theta[0]) + 0.1)
    import scipy.linalg
    return np.sum(scipy.linalg.solve_triangular(L, np.ones(3), lower=True))


def scipy_logsumexp(x):
    import scipy.special
    return scipy.special.logsumexp(x)


def normal_cdf_sum(x):
    import scipy.stats
    return np.sum(scipy.stats.norm.cdf(x))


def poisson_log_likelihood(mu):   # a binned fit's term, as written with scipy.stats (a HEP trial)
    import scipy.stats
    return np.sum(scipy.stats.poisson.logpmf(np.array([3, 5]), mu))


def filled_buffer(x):
    a = np.zeros(5)
    a[1:4] = x
    return np.sum(a)


def scattered_buffer(x):
    a = np.zeros(5)
    a[np.array([0, 2, 2])] += x
    return np.sum(a)


def filled_like(x):
    return np.sum(np.full_like(np.zeros(2), x[0]) * x)   # (of a traced x, np.full_like(x, x[0]) works)


TRIPLET_ROWS, TRIPLET_COLS = np.array([0, 0, 1, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 2, 1, 2])
STIFFNESS_PATTERN = np.array([2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0])


def sparse_compliance(k):   # the top88 way: triplets into a scipy.sparse matrix, then spsolve
    import scipy.sparse
    import scipy.sparse.linalg
    K = scipy.sparse.coo_matrix((k[0] * STIFFNESS_PATTERN, (TRIPLET_ROWS, TRIPLET_COLS)), shape=(3, 3))
    return np.sum(scipy.sparse.linalg.spsolve(K.tocsc(), np.ones(3)))


def dense_compliance(k):    # what the refusal advises
    K = np.bincount(np.ravel_multi_index((TRIPLET_ROWS, TRIPLET_COLS), (3, 3)),
                    weights=k[0] * STIFFNESS_PATTERN, minlength=9).reshape((3, 3))
    return np.sum(np.linalg.solve(K, np.ones(3)))


def stamped_compliance(k):  # the same with the values a list of traced numbers, as stamping makes
    values = [c * k[0] for c in STIFFNESS_PATTERN]
    K = np.bincount(np.ravel_multi_index((TRIPLET_ROWS, TRIPLET_COLS), (3, 3)),
                    weights=dnp.stack(values), minlength=9).reshape((3, 3))
    return np.sum(np.linalg.solve(K, np.ones(3)))


def sparse_solve_of_traced_loads(k):
    import scipy.sparse
    import scipy.sparse.linalg
    K = scipy.sparse.csr_matrix(np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]]))
    return np.sum(scipy.sparse.linalg.spsolve(K, k[0] * np.ones(3)))


def filled_buffer_by_stamps(k):   # a circuit's conductances stamped into a plain matrix
    G = np.zeros((2, 2))
    for i, j, g in ((0, 0, k[0]), (0, 1, -k[0]), (1, 0, -k[0]), (1, 1, 2.0 * k[0])):
        G[i, j] += g
    return np.sum(np.linalg.solve(G, np.ones(2)))


def scattered_by_bincount(x):   # what the refusal of scattered_buffer advises
    a = np.zeros(5)
    a = a + np.bincount(np.array([0, 2, 2]), weights=x, minlength=a.size)
    return np.sum(a * a)


def scattered_complex_by_bincount(v):   # what the refusal advises for complex values
    idx, a = np.array([0, 2, 2]), np.zeros(5, complex)
    return a + (np.bincount(idx, weights=v.real, minlength=a.size)
                + 1j * np.bincount(idx, weights=v.imag, minlength=a.size))


def scattered_complex_by_bincount_loop(v):
    return dnp.stack([v[0], 0.0 * v[0], v[1] + v[2], 0.0 * v[0], 0.0 * v[0]])


def filled(x):
    return np.sum(np.full(3, x[0]))


def cast_first(x):
    first = np.float64(x[0])
    return first * x[1]


def vectorized(x):
    return np.sum(np.vectorize(lambda t: t * t)(x))


def padded(x):
    y = np.r_[x, 0.0]
    return np.sum(y * y)


def cast_input(x):
    x = np.asarray(x, dtype=float)
    return np.sum(x * x)


def decay_fit_residual(p):   # fitting an ODE's parameters through SciPy's integrator
    from scipy.integrate import solve_ivp
    t = np.linspace(0.5, 5.0, 4)
    return solve_ivp(lambda _, y: -p[1] * y, (0.0, 5.0), [p[0]], t_eval=t).y[0] - 2.0 * np.exp(-0.7 * t)


def spline_rate_rhs(y):   # a tabulated rate k(T) as a spline, with a constant array on the line
    from scipy.interpolate import CubicSpline
    T = np.linspace(250.0, 400.0, 7)
    rate = CubicSpline(T, 1e-3 * np.exp(0.05 * (T - 250.0)))
    return rate(y[1]) * y[0] * np.array([-1.0, 0.5])


def rotated_sum(v):   # a static method: named by its class (not scipy.spatial.transform.from_rotvec)
    from scipy.spatial.transform import Rotation
    return np.sum(Rotation.from_rotvec(v).as_matrix())


def complex_assembly(k):   # a Helmholtz matrix filled entry by entry
    A = np.zeros((2, 2), dtype=complex)
    A[0, 0] = k[0] ** 2
    A[1, 1] = 1.0
    return np.abs(np.linalg.solve(A, np.ones(2))[0]) ** 2


def spline_through(y):   # a traced argument of a constructor: named by its class
    from scipy.interpolate import CubicSpline
    return CubicSpline(np.arange(3.0), y)(0.5)


@pytest.mark.parametrize("f, x, says", [
    (rotated_sum, np.array([0.1, 0.2, 0.3]), r"scipy\.spatial\.transform\.Rotation\.from_rotvec converts"),
    (spline_through, np.array([0.1, 0.2, 0.3]), r"scipy\.interpolate\.CubicSpline converts"),
    (lambda y: robertson_rhs(0.0, y), np.array([0.9, 1e-5, 0.1]),
     r"np\.array / np\.asarray of traced values.*dnp\.array\(\[\.\.\.\]\)"),
    (cast_input, np.ones(2), r"dnp\.asarray\(x, dtype=\.\.\.\) to convert or cast"),
    (filled_like, np.ones(2), r"numpy\.full_like with a traced fill value .* dnp\.full_like"),
    (filled, np.ones(2), r"numpy\.full converts its argument.*Write dnp\.full instead"),
    (cast_first, np.ones(2), r"np\.float64\(x\) of a traced value makes a plain number"),
    (vectorized, np.ones(2), r"np\.vectorize calls its function on plain numbers"),
    (padded, np.ones(2), r"np\.r_\[\.\.\.\] and np\.c_\[\.\.\.\] make plain arrays"),
    (triangular_misfit, np.array([0.2]), r"scipy\.linalg\.solve_triangular converts its argument.*"
                                          r"Write np\.linalg\.solve\(L, b\)"),
    # (a complex buffer asks the value for a number: 'use np.* instead of math.*' was the answer)
    (complex_assembly, np.array([3.0]), r"storing a traced value into a plain complex NumPy array \(a\[i\] = "
                                        r"value\) would drop it; build the array with dnp\.stack [^@]*$"),
    # (they said that duals.numpy has no counterpart, and advised an interpolant's .derivative())
    (lambda v: np.sum(scipy.linalg.cholesky(np.diag(v + 2.0))), np.array([0.2, 0.4]),
     r"scipy\.linalg\.cholesky converts .* Write np\.linalg\.cholesky\(a\), the lower factor"),
    (lambda v: np.sum(scipy.linalg.inv(np.diag(v + 2.0))), np.array([0.2, 0.4]),
     r"scipy\.linalg\.inv converts .* Write np\.linalg\.inv instead"),
    (lambda v: np.sum(scipy.linalg.eigh(np.diag(v + 2.0), np.eye(2))[0]), np.array([0.2, 0.4]),
     r"scipy\.linalg\.eigh converts .* for a generalised one, K v = λ M v, reduce it by M's Cholesky"),
    (lambda v: np.sum(__import__("scipy.ndimage").ndimage.convolve(v, np.ones(3) / 3)), np.array([0.2, 0.4]),
     r"scipy\.ndimage\.convolve converts .*duals\.extend \(docs/custom_rules\.md\), or pass"),   # (no interpolant)
    # (it named numpy.common_type, which scipy.sparse.diags calls: a user trial's diffusion operator)
    (lambda v: __import__("scipy.sparse").sparse.diags([v, -v[:1]], [0, 1]).diagonal().sum(), np.array([0.2, 0.4]),
     r"scipy\.sparse\.diags converts .*np\.diag\(main\) \+ np\.diag\(upper, 1\)"),
    (lambda v: np.sum(scipy.spatial.distance.cdist(v[:, None], v[:, None])), np.array([0.2, 0.4]),
     r"scipy\.spatial\.distance\.cdist converts .* squared distances by broadcasting"),
    (scipy_logsumexp, np.array([0.2, 0.4]),
     r"scipy\.special\.logsumexp converts .* Write dnp\.special\.logsumexp instead"),
    (poisson_log_likelihood, np.array([2.0, 4.0]),
     r"scipy\.stats\.poisson\.logpmf converts .* Write scipy\.special\.xlogy\(k, mu\) - mu - "
     r"scipy\.special\.gammaln\(k \+ 1\) instead"),
    (normal_cdf_sum, np.array([0.2, 0.4]),
     r"scipy\.stats\.norm\.cdf converts .* Write scipy\.special\.ndtr\(\(x - loc\) / scale\) instead, or"),
    (filled_buffer, np.ones(3), r"storing a traced value into a plain NumPy array \(a\[i\] = value\)"),
    (decay_fit_residual, np.array([1.0, 0.3]), r"scipy\.integrate\.(ivp\.)?solve_ivp converts .* Write "
                                               r"duals\.sensitivity\.solve_ivp"),
    (spline_rate_rhs, np.array([1.0, 300.0]), r"scipy\.interpolate\.CubicSpline converts .*duals\.extend"),
    (scattered_buffer, np.ones(3), r"in-place operator on a plain NumPy array \(a \+= v, a\[i\] \+= v.*"
                                   r"a\[idx\] \+= v \(assembly\) a = a \+ np\.bincount\(idx, weights=v"),
    (sparse_compliance, np.array([2.0]), r"a scipy\.sparse matrix cannot hold traced values .*np\.bincount\("
                                         r"np\.ravel_multi_index\(\(rows, cols\), shape\), weights=dnp\.stack\(values\)"),
    # (it named scipy.sparse.linalg.linsolve.spsolve and advised an interpolant's .derivative())
    (sparse_solve_of_traced_loads, np.array([2.0]),
     r"scipy\.sparse\.linalg\.spsolve converts .* Write np\.linalg\.solve\(A\.toarray\(\), b\)"),
    # (it gave the generic advice of dnp.stack / dnp.array)
    (lambda p: np.random.normal(p[0], p[1]), np.array([0.3, 0.5]),
     r"\.normal\(\.\.\.\) is a random draw: .*mu \+ sigma \* np\.random\.normal\(\)"),
    (lambda p: np.random.default_rng(0).exponential(p[0]), np.array([0.3]),
     r"\.exponential\(\.\.\.\) is a random draw: .*scale \* np\.random\.exponential\(\)"),
    # (SciPy's compiled loop caught the refusal: "could not convert b, a, and x to a common type")
    (lambda b: np.sum(scipy.signal.lfilter(b, [1.0, -0.5], np.ones(8)) ** 2), np.array([0.2, 0.4]),
     r"scipy\.signal\.lfilter converts its argument to a plain array\. Write the recursion itself"),
    # (stability and BVP trials: generic advice, or np.linalg.eig, which takes no B)
    (lambda s: np.abs(scipy.linalg.eig(np.diag(s), np.eye(2))[0]), np.array([1.0, 2.0]),
     r"scipy\.linalg\.eig converts .*np\.linalg\.eig\(np\.linalg\.solve\(B, A\)\)"),
    (lambda s: scipy.linalg.solve_banded((0, 0), s[None, :], np.ones(2)), np.array([1.0, 2.0]),
     r"scipy\.linalg\.solve_banded converts .*Write a dense matrix from its bands"),
    (lambda s: scipy.integrate.solve_bvp(lambda x, y: np.vstack([y[1], -s[0] * y[0]]),
                                         lambda a, b: np.array([a[0], b[0] - 1.0]), np.linspace(0, 1, 5),
                                         np.zeros((2, 5))).sol(0.5), np.array([1.0]),
     r"scipy\.integrate\.solve_bvp converts .*a shooting method"),
    # (an events trial: odeint, the classic pharmacometrics call, had the generic advice)
    (lambda k: scipy.integrate.odeint(lambda y, t, k: -k * y, [1.0], [0.0, 1.0], args=(k[0],))[:, 0],
     np.array([0.3]), r"scipy\.integrate\.odeint converts .* Write duals\.sensitivity\.solve_ivp\(lambda t, y, p: "
                      r"rhs\(y, t, \*p\)"),
    # (a viscoelastic trial: generic advice where np.convolve is the same convolution)
    (lambda w: scipy.signal.fftconvolve(w, np.ones(4), mode="same"), np.array([0.2, 0.4, 0.1]),
     r"scipy\.signal\.fftconvolve converts .* Write np\.convolve\(a, b\) for 1-d arrays"),
    # (a spectral trial: "duals.numpy has no counterpart of it", np.fft's are exact counterparts)
    (lambda a: np.sum(np.abs(scipy.fft.rfft(a)) ** 2), np.array([0.2, 0.4, 0.1]),
     r"scipy\.fft\.rfft converts .* Write np\.fft\.rfft instead"),
    # (a scattering trial: the same for SciPy's quadrature rules that NumPy has or a sum writes)
    (lambda y: scipy.integrate.trapezoid(y, dx=0.5), np.array([0.2, 0.4, 0.1]),
     r"scipy\.integrate\.trapezoid converts .* Write np\.trapezoid\(y, x\)"),
    # (a climate trial: Legendre(c)(x) blamed the coefficients; polyval of traced coefficients)
    (lambda x: np.polynomial.Legendre([1.0, 2.0, 0.5])(x), np.array([0.2, 0.4]),
     r"numpy\.polynomial\.legendre\.Legendre converts .*\.legval\(off \+ scl \* x, p\.coef\) with "
     r"off, scl = p\.mapparms\(\)"),
    (lambda c: np.polynomial.polynomial.polyval(0.5, c), np.array([0.2, 0.4]),
     r"polynomial\.polyval converts .* Write np\.polyval\(c\[::-1\], x\)"),
    (lambda c: np.polynomial.chebyshev.chebval(0.5, c), np.array([0.2, 0.4]),
     r"chebyshev\.chebval converts .* Write np\.polynomial\.chebyshev\.chebvander\(x, len\(c\) - 1\) @ c"),
    (lambda y: scipy.integrate.simpson(y, dx=0.5), np.array([0.2, 0.4, 0.1]),
     r"scipy\.integrate\.simpson converts .* Simpson's weights .* np\.tile\(\[4, 2\]"),
])
def test_a_traced_value_made_plain_names_the_call_that_did_it(f, x, says):
    for transform in (duals.jacfwd, duals.jacrev):
        with pytest.raises(TypeError, match=says) as raised:
            transform(f)(x)
    # and the user's line that did it (a structural-dynamics trial had to find it in the
    # traceback; a geometry trial an in-place np.add.at's)
    assert re.search(r"\(in .*test_numpy_coverage\.py, line \d+\)$", str(raised.value))


def test_np_full_like_of_a_traced_array_with_a_traced_fill_value_differentiates():
    w = np.array([0.2, 0.4, 0.1, -0.3])
    np.testing.assert_allclose(duals.grad(lambda w: np.sum(np.full_like(w, w[0]) * w))(w), [np.sum(w) + w[0], *[w[0]] * 3])


def test_the_spellings_advised_for_scipy_signal_give_its_numbers_and_derivatives():
    w, x = np.array([0.2, 0.4, 0.1, -0.3]), np.sin(np.linspace(0.0, 3.0, 9))
    # SciPy's mode='full' (its 'same', the size of the first argument, and 'valid' are slices of it)
    np.testing.assert_allclose(np.convolve(w, x), scipy.signal.fftconvolve(w, x), atol=1e-14)
    np.testing.assert_allclose(duals.jacfwd(lambda w: np.convolve(w, x))(w),
                               np.transpose([scipy.signal.fftconvolve(e, x) for e in np.eye(4)]), atol=1e-14)

    def filtered(a):   # lfilter([1 - a], [1, -a], x) as its recursion
        y, previous = [], 0.0
        for n in range(x.size):
            previous = (1.0 - a) * x[n] + a * previous
            y.append(previous)
        return dnp.stack(y)
    np.testing.assert_allclose(filtered(0.3), scipy.signal.lfilter([0.7], [1.0, -0.3], x), rtol=1e-14)
    h = 1e-6
    np.testing.assert_allclose(duals.jacfwd(filtered)(0.3), (scipy.signal.lfilter([1 - 0.3 - h], [1.0, -0.3 - h], x)
                               - scipy.signal.lfilter([1 - 0.3 + h], [1.0, -0.3 + h], x)) / (2 * h), rtol=1e-7, atol=1e-9)


def test_a_library_reading_an_array_attribute_of_a_traced_value_is_named_with_the_way_out():
    # scipy.fftpack.fft reads x.flags before converting: "'Var' object has no attribute 'flags'"
    import scipy.fftpack
    for transform in (duals.jacfwd, duals.jacrev):
        with pytest.raises(AttributeError, match=r"has no attribute 'flags': scipy\.fftpack\.fft converts "
                                                 r"its argument .* Write np\.fft\.fft instead"):
            transform(lambda a: np.sum(np.abs(scipy.fftpack.fft(a)) ** 2))(np.array([0.2, 0.4, 0.1]))
    seen = []
    duals.grad(lambda a: seen.append(hasattr(a, "flags")) or np.sum(a * a))(np.ones(2))
    assert seen == [False]   # hasattr still answers


def test_an_adaptive_integrator_is_named_with_fixed_nodes_as_the_way_out():
    import scipy.integrate
    moment = lambda a: scipy.integrate.quad(lambda t: a * t ** 2, 0.0, 1.0)[0]   # noqa: E731
    with pytest.raises(TypeError, match=r"scipy\.integrate\.quad evaluates the integrand .* "
                                        r"scipy\.integrate\.fixed_quad\(f, a, b, n=\.\.\.\)"):
        duals.grad(moment)(1.0)
    # the advice works, with a traced limit too: d/da of the integral of a t^2 over [0, a] is 4 a^3 / 3
    fixed = lambda a: scipy.integrate.fixed_quad(lambda t: a * t ** 2, 0.0, a, n=3)[0]   # noqa: E731
    np.testing.assert_allclose(duals.grad(fixed)(1.5), 4 * 1.5 ** 3 / 3, rtol=1e-14)


def test_an_interpolant_of_traced_data_is_advised_its_weights_which_work():
    from scipy.interpolate import CubicSpline
    x, t = np.linspace(0.0, 1.0, 6), np.array([0.13, 0.5, 0.91])
    with pytest.raises(TypeError, match=r"in the data values the interpolant is linear.*"
                                        r"W = CubicSpline\(x, np\.eye\(len\(x\)\)\)\(t\), then W @ y"):
        duals.jacrev(lambda y: CubicSpline(x, y)(t))(np.sin(3 * x))
    W = CubicSpline(x, np.eye(len(x)))(t)   # the advice, as written
    np.testing.assert_allclose(duals.jacrev(lambda y: W @ y)(np.sin(3 * x)),
                               central_differences(lambda y: CubicSpline(x, y)(t), (np.sin(3 * x),), 0), atol=1e-8)


def test_scipys_lambertw_is_named_with_a_primitive_that_works():
    # (photovoltaics trial) it said "the ufunc '_lambertw' is neither NumPy's nor SciPy's"
    import scipy.special
    with pytest.raises(TypeError, match=r"^scipy\.special\.lambertw has no derivative rule .*"
                                        r"np\.exp\(-w\) / \(1 \+ w\)"):
        duals.grad(lambda v: scipy.special.lambertw(np.exp(v)).real)(0.5)
    W = duals.extend.elementwise("lambertw_real_test", lambda x: scipy.special.lambertw(x).real,
                                 lambda w, x: np.exp(-w) / (1 + w))   # the advice, as written
    x = np.array([0.0, 0.5, 30.0])
    np.testing.assert_allclose(np.diag(duals.jacfwd(W)(x)),
                               central_differences(lambda x: scipy.special.lambertw(x).real, (x,), 0).diagonal(),
                               rtol=1e-8)


@numba.vectorize(["float64(float64, float64)"])
def diode_current(v, light):
    """A single-diode current by Newton iterations, as a default-target @numba.vectorize."""
    current = light
    for _ in range(30):
        e = math.exp((v + 0.3 * current) / 1.7)
        current -= (light - 1e-10 * (e - 1.0) - current) / (-1e-10 * e * 0.3 / 1.7 - 1.0)
    return current


def test_a_default_target_vectorize_called_from_python_code_says_where_it_is_differentiated():
    # (photovoltaics trial) it said "drop target=" of a function that has none, at numba's line
    v = np.linspace(0.0, 30.0, 4)
    with pytest.raises(TypeError, match=r"@numba\.vectorize function 'diode_current' runs its compiled "
                                        r"kernel on plain numbers.*duals\.jacfwd\(diode_current, "
                                        r"argnums=\.\.\.\).*\(in .*test_numpy_coverage\.py, line \d+\)$"):
        duals.grad(lambda light: np.sum(v * diode_current(v, light)))(9.0)
    np.testing.assert_allclose(duals.jacfwd(diode_current, argnums=1)(v, 9.0),   # the advice
                               central_differences(diode_current, (v, 9.0), 1), rtol=1e-6)


def test_vectorised_scipy_newton_is_refused_saying_that_a_number_x0_works():
    import scipy.optimize
    def voltage(light, x0):
        return scipy.optimize.newton(lambda v: light - 1e-3 * (np.exp(v) - 1.0), x0)
    with pytest.raises(TypeError, match=r"scipy\.optimize\.newton with an array x0 \(its vectorised "
                                        r"form\).*with a number x0 it runs in Python"):
        duals.grad(lambda light: np.sum(voltage(light, np.array([6.0, 6.5]))))(0.5)
    exact = 1.0 / (0.5 + 1e-3)   # v = log(1 + light / 1e-3): dv/dlight = 1 / (light + 1e-3)
    np.testing.assert_allclose(duals.grad(lambda light: voltage(light, 6.0))(0.5), exact, rtol=1e-10)


def test_math_gamma_is_advised_a_spelling_that_has_a_rule():
    # the advice was scipy.special.gamma, which has no rule (a scattering trial)
    with pytest.raises(TypeError, match=r"math\.gamma .* write np\.exp\(scipy\.special\.gammaln\(x\)\)"):
        duals.grad(lambda z: math.gamma(z + 1.0))(3.5)


def conductance_matrix(g):   # a network's diag(1/dh) by scipy.sparse, as in a GGA solver
    import scipy.sparse
    incidence = scipy.sparse.csr_matrix(np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0], [1.0, 0.0, -1.0]]))
    return (incidence.T @ scipy.sparse.diags(g) @ incidence).toarray().sum()


def test_scipys_own_error_from_a_sparse_constructor_says_what_to_write():
    # sp.diags(traced) raised SciPy's "Different number of diagonals and offsets." and
    # sp.csr_matrix(traced) "unrecognized csr_matrix constructor input", with nothing more
    # (hydraulics and earlier trials): SciPy checks the input before converting it
    import scipy.sparse
    for f in (conductance_matrix, lambda a: scipy.sparse.csr_matrix(np.diag(a)).sum()):
        for transform in (duals.jacfwd, duals.jacrev):
            with pytest.raises(ValueError, match=r"raised inside scipy\.sparse during a duals transformation"
                                                 r".*np\.diag\(v\).*dnp\.matmul\(S, x\)"):
                transform(f)(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"^Different number of diagonals and offsets\.$"):
        scipy.sparse.diags(np.ones(3), [0, 1])   # outside a transformation: SciPy's error as it is


def test_a_scipy_solver_inside_a_differentiated_function_is_named_with_the_ways_out():
    """brentq for the Euler-Lotka growth rate gave 'use np.* instead of math.*' (a user trial);
    the solvers written in Python are tested here (a compiled one's C code may swallow the error)."""
    import scipy.optimize
    ages = np.arange(60)

    def growth_rate(p, solver):
        survival = np.exp(-p[0] / p[1] * (np.exp(p[1] * ages) - 1))
        fecundity = p[2] / (1 + np.exp(-(ages - 15.0) / 2.0))
        euler_lotka = lambda r: np.sum(np.exp(-r * ages) * survival * fecundity) - 1   # noqa: E731
        if solver == "minimize_scalar":
            return scipy.optimize.minimize_scalar(lambda r: euler_lotka(r) ** 2, bounds=(-1, 1),
                                                  method="bounded").x
        return scipy.optimize.fixed_point(lambda r: r + 0.1 * euler_lotka(r), 0.0)

    for solver in ("minimize_scalar", "fixed_point"):
        for transform in (duals.jacfwd, duals.grad):
            with pytest.raises(TypeError, match=rf"scipy\.optimize\.{solver} calls your function on plain numbers"
                                                r".*scipy\.optimize\.newton.*implicit function theorem"):
                transform(growth_rate)(np.array([0.01, 0.08, 0.3]), solver)


def test_a_compiled_scipy_solver_that_swallows_the_refusal_still_raises_it():
    # (a BVP trial) fsolve and root surfaced MINPACK's "Result from function call is not a proper
    # array of floats" (duals' refusal only printed), brentq under grad a SystemError
    import scipy.optimize
    residual = lambda s, b: s * s - b   # noqa: E731  (the root sqrt(b))
    solvers = {"fsolve": lambda b: scipy.optimize.fsolve(residual, 1.0, args=(b,))[0],
               "root": lambda b: scipy.optimize.root(residual, 1.0, args=(b,)).x[0],
               "brentq": lambda b: scipy.optimize.brentq(residual, 0.5, 3.0, args=(b,))}
    for name, solve in solvers.items():
        for transform in (duals.jacfwd, duals.grad):
            with pytest.raises(TypeError, match=rf"scipy\.optimize\.{name} calls your function on plain numbers"):
                transform(solve)(2.0)


def test_the_rewrites_the_refusals_of_assembly_advise_differentiate():
    k = np.array([2.0])
    K = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    compliance = np.sum(np.linalg.solve(K, np.ones(3)))   # of k K: compliance / k, slope -compliance / k**2
    for transform in (duals.jacfwd, duals.jacrev):
        for f in (dense_compliance, stamped_compliance):
            assert transform(f)(k)[0] == pytest.approx(-compliance / 4.0, rel=1e-14)
    x = np.array([0.5, -1.0, 2.0])
    want = 2.0 * np.array([x[0], x[1] + x[2], x[1] + x[2]])   # a = (x0, 0, x1 + x2, 0, 0)
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(scattered_by_bincount)(x), want, rtol=1e-14)
    admittance = np.array([2.0 - 1.0j, 0.5 + 3.0j, -1.0 + 0.5j])
    for transform in (duals.jacfwd, duals.jacrev):   # the advice for complex values, by parts
        np.testing.assert_allclose(transform(lambda x: np.real(np.sum(np.abs(
            scattered_complex_by_bincount(x * admittance)) ** 2)))(x),
            duals.jacfwd(lambda x: np.sum(np.abs(scattered_complex_by_bincount_loop(x * admittance)) ** 2))(x),
            rtol=1e-14)


@pytest.mark.parametrize("x", [0.0, 1e-9, -1e-6, 0.01])
def test_sinc_has_its_taylor_derivatives_at_and_near_zero(x):
    """sin(u)/u loses its second derivative to cancellation near 0 (0.0 for -pi^2/3 at 1e-9, and
    at 0 the quotient is not evaluated at all); the Taylor polynomial keeps every order exact."""
    u = np.pi * x
    second = np.pi ** 2 * (-1.0 / 3.0 + u ** 2 / 10.0 - u ** 4 / 168.0 + u ** 6 / 6480.0)
    fourth = np.pi ** 4 * (1.0 / 5.0 - u ** 2 / 14.0 + u ** 4 / 216.0)
    assert duals.hessian(np.sinc)(x) == pytest.approx(second, rel=1e-13)
    assert duals.hvp(np.sinc, x, 1.0) == pytest.approx(second, rel=1e-13)
    d4 = duals.jacfwd(duals.jacrev(duals.jacfwd(duals.grad(np.sinc))))(x)
    assert d4 == pytest.approx(fourth, rel=1e-10)


def test_sinc_values_are_numpys_bit_for_bit_on_both_sides_of_the_switch():
    x = np.concatenate([np.linspace(-0.2, 0.2, 401), [0.0, 1e-300, -1e-12, 1.0, 2.5]])
    value, slope = duals.jvp(np.sinc, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(value, np.sinc(x))
    u = np.pi * x[np.abs(x) > 0.01]
    np.testing.assert_allclose(slope[np.abs(x) > 0.01], np.pi * (u * np.cos(u) - np.sin(u)) / u ** 2, rtol=1e-12)


@numba.njit(cache=True)
def interp_table(x, xp, fp):
    return np.interp(x, xp, fp)


def test_interp_with_traced_sample_points_matches_compiled_mode_and_differences():
    """Calibrating the knots of a table: the segment of each point from the values, the value
    NumPy's; at a knot the segment to its right (as compiled mode), elsewhere central differences."""
    x = np.array([0.5, 1.0, 1.7, 2.9, 3.0, -1.0, 4.0])
    xp, fp = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0, 5.0])
    f = lambda xp: np.interp(x, xp, fp)  # noqa: E731
    value, _ = duals.jvp(f, (xp,), (np.ones(4),))
    np.testing.assert_array_equal(value, np.interp(x, xp, fp))
    J = duals.jacfwd(f)(xp)
    np.testing.assert_allclose(duals.jacrev(f)(xp), J, rtol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(interp_table, argnums=1)(x, xp, fp), J, rtol=1e-15)
    off_knots = [0, 2, 3, 5, 6]
    np.testing.assert_allclose(J[off_knots], central_differences(f, (xp,), 0)[off_knots], atol=1e-8)
    assert J[1].tolist() == [0.0, 1.0, 0.0, 0.0]   # at xp[1]: the segment [1, 2] moves with its left end


def test_interp_at_repeated_knots_is_numpys_value_with_finite_derivatives_in_every_mode():
    # (a grid with its end point appended, xp = [..., 1, 1]: the value at the last knot was NaN,
    # and compiled mode raised ZeroDivisionError; a user trial)
    xp, fp = np.array([0.0, 1.0, 1.0, 2.0, 2.0]), np.array([0.0, 1.0, 2.0, 4.0, 3.0])
    x = np.array([0.5, 1.0, 1.5, 2.0, 2.5])
    want_value = np.interp(x, xp, fp)
    by_fp = np.array([[0.5, 0.5, 0.0, 0.0, 0.0],    # x = 0.5: halfway along [0, 1]
                      [0.0, 0.0, 1.0, 0.0, 0.0],    # x = 1: the segment to its right starts at fp[2]
                      [0.0, 0.0, 0.5, 0.5, 0.0],
                      [0.0, 0.0, 0.0, 0.0, 1.0],    # x = 2, the repeated last knot: fp[-1]
                      [0.0, 0.0, 0.0, 0.0, 1.0]])   # beyond: fp[-1]
    f = lambda fp: np.interp(x, xp, fp)  # noqa: E731
    value, _ = duals.jvp(f, (fp,), (np.ones(5),))
    np.testing.assert_array_equal(value, want_value)
    for J in (duals.jacfwd(f)(fp), duals.jacrev(f)(fp), duals.jacfwd(interp_table, argnums=2)(x, xp, fp),
              duals.jacrev(interp_table, argnums=2)(x, xp, fp)):
        np.testing.assert_array_equal(J, by_fp)
    for argnums in (0, 1):   # the points and the knots traced: finite, the plain call's values
        for J in (duals.jacfwd(interp_table, argnums=argnums)(x, xp, fp),
                  duals.jacrev(lambda *a: np.interp(*a), argnums=argnums)(x, xp, fp)):
            assert np.all(np.isfinite(J))
    assert duals.grad(lambda x: np.sum(np.interp(x, xp, fp)))(x).tolist() == [1.0, 2.0, 2.0, 0.0, 0.0]


@numba.njit(cache=True)
def band_integral(spacing, y):
    return np.trapezoid(y ** 2, dx=spacing)


def test_trapezoid_with_a_differentiated_spacing_compiles_and_matches_the_python_path():
    # (Numba's np.trapezoid takes a plain dx: compiled grad refused what the Python path does;
    # a user trial)
    y = np.linspace(0.0, 2.0, 9)
    value, slope = duals.jvp(band_integral, (0.25, y), (1.0, None))
    assert value == band_integral(0.25, y)
    assert slope == pytest.approx(np.sum((y[1:] ** 2 + y[:-1] ** 2) / 2), rel=1e-15)
    python = lambda d, y: np.trapezoid(y ** 2, dx=d)  # noqa: E731
    compiled, plain = (duals.grad(g, argnums=(0, 1))(0.25, y) for g in (band_integral, python))
    for got, want in zip(compiled, plain):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    # rows (a 2-d y): Numba's own, since np.asarray of a dual number is a 0-d array of it
    rows = numba.njit(lambda d, Y: np.sum(np.trapezoid(Y ** 2, dx=d) * np.arange(1.0, 3.0)))
    Y = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    want = (rows(0.5 + 1e-6, Y) - rows(0.5 - 1e-6, Y)) / 2e-6
    assert duals.grad(rows)(0.5, Y) == pytest.approx(want, rel=1e-8)
    assert duals.jvp(rows, (0.5, Y), (1.0, None)) == (rows(0.5, Y), pytest.approx(want, rel=1e-8))


def test_delete_insert_compress_take_their_positions_plain_and_say_so_when_traced():
    x = np.array([1.0, 2.0, 3.0])
    inserted = duals.grad(lambda x: np.sum(np.insert(x, int(x[0]), x[2]) ** 2))(x)
    np.testing.assert_array_equal(inserted, [2.0, 4.0, 12.0])   # a position from the value: a step
    np.testing.assert_array_equal(duals.grad(lambda x: np.sum(np.compress(x > 1.0, x)))(x), [0.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="choose: the index array a cannot be a traced value"):
        duals.grad(lambda x: np.sum(np.choose(x, [x, x])))(x)
    assert np.delete(x, 1).tolist() == [1.0, 3.0]   # plain calls are NumPy's


def test_running_extremes_refuse_what_has_no_derivative_and_match_the_chain_of_maximum():
    with pytest.raises(TypeError, match=r"maximum\.accumulate of complex values"):
        duals.jacfwd(lambda z: np.maximum.accumulate(z), holomorphic=True)(np.array([1.0 + 1j, 2.0]))
    with pytest.raises(TypeError, match=r"out=\.\.\.\) cannot write a traced value"):
        duals.grad(lambda x: np.sum(np.minimum.accumulate(x, out=np.empty(3))))(np.ones(3))
    t = np.array([1.0, 1.0, 0.5, 1.0, 2.0])   # ties: the chain np.maximum(acc, t[k]) splits each

    def chain(t):
        acc = [t[0]]
        for k in range(1, t.size):
            acc.append(np.maximum(acc[-1], t[k]))
        return np.stack(acc)
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_array_equal(transform(lambda t: np.maximum.accumulate(t))(t), transform(chain)(t))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quantiles_of_every_method_equal_numpys_to_the_bit(method, dtype):
    """Values and dtypes as NumPy's: positions computed in q's own precision (float32 q picked
    another order statistic when computed in float64: a user trial), a Python-number q rounding
    the weights to the data's precision, an array q keeping its own."""
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 8):
        x = rng.normal(size=n).astype(dtype)
        with_nan = np.concatenate([x, np.array([np.nan], dtype)])
        for q in (0.0, 0.01, 0.2, 0.25, 0.5, 0.6, 0.65, 0.99, 1.0):
            for f, data in ((lambda a: np.quantile(a, q, method=method), x),
                            (lambda a: np.quantile(a, np.array([q], np.float32), method=method), x),
                            (lambda a: np.percentile(a, [100 * q, 50.0], method=method), x),
                            (lambda a: np.percentile(a, np.float32(100 * q), method=method), x),
                            (lambda a: np.nanquantile(a, q, method=method), with_nan),
                            (lambda a: np.nanpercentile(a, np.array([100 * q]), method=method), with_nan)):
                value, tangent = duals.jvp(f, (data,), (np.ones_like(data),))
                expected = f(data)
                np.testing.assert_array_equal(value, expected)
                assert np.result_type(value) == np.result_type(expected)
                np.testing.assert_allclose(tangent, 1.0, rtol=1e-6)   # weights of entries that sum to one


def test_an_unknown_quantile_method_is_refused_as_numpy_refuses_it():
    with pytest.raises(ValueError, match="'sideways' is not a valid method"):
        duals.grad(lambda x: np.quantile(x, 0.5, method="sideways"))(np.arange(3.0))


def test_astype_to_another_precision_converts_the_value_as_numpy_does():
    """astype(np.float64) of traced float32 was ignored: mean(z²) - mean(z)² of values near 1e4
    came out 0.0 in float32 where the plain call gives 1.25 (a user trial)."""
    x32 = np.array([10000.0, 10001.0, 10002.0, 10003.0], dtype=np.float32)

    def variance(x):
        z = x.astype(np.float64)
        return np.mean(z * z) - np.mean(z) ** 2
    value, g = duals.value_and_grad(variance)(x32)
    assert value == variance(x32) == 1.25
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2.0 * (x32 - np.mean(x32.astype(np.float64))) / 4, rtol=1e-6)
    x = np.array([1.0, 2.0])
    for f in (lambda v: np.sum(v.astype(np.float32) ** 3), lambda v: np.sum(dnp.asarray(v, dtype=np.float32) ** 3),
              lambda v: np.sum(np.astype(v, np.float32) ** 3)):
        value, tangent = duals.jvp(f, (x,), (np.ones(2),))
        assert value.dtype == np.float32 and value == f(x)
        np.testing.assert_allclose(duals.hessian(f)(x), np.diag(6.0 * x))


def test_hypot_at_the_origin_follows_the_policy_of_norm():
    """hypot(x, 0) is abs(x): its gradient at (0, 0) is 0 with derivative 0, as norm's at 0, in
    every mode and in compiled code (it was 0/0 = NaN: a user trial)."""
    import math
    x = np.zeros(2)
    on_numpy = lambda v: np.hypot(v[0], v[1])   # noqa: E731
    compiled = numba.njit(lambda v: math.hypot(v[0], v[1]))
    for f in (on_numpy, compiled):
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            np.testing.assert_array_equal(transform(f)(x), [0.0, 0.0])
        np.testing.assert_array_equal(duals.hessian(f)(x), np.zeros((2, 2)))
    np.testing.assert_allclose(duals.grad(on_numpy)(np.array([3.0, 4.0])), [0.6, 0.8])


def test_comparisons_write_into_out_and_a_numpy_bool_output_has_a_zero_jacobian():
    """Both plain results of the values (user trials): np.greater(x, 0, out=mask) was refused as
    writing a traced value, and x[0] > 0 (an np.bool_) as an output, unlike a Python bool."""
    mask = np.empty(3, bool)

    def positive_squares(x):
        np.greater(x, 0.0, out=mask)
        return np.sum(np.where(mask, x ** 2, 0.0))
    x = np.array([-1.0, 2.0, 3.0])
    np.testing.assert_array_equal(duals.grad(positive_squares)(x), [0.0, 4.0, 6.0])
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_array_equal(transform(lambda v: v[0] > 0)(x), np.zeros(3))


def test_list_operands_copy_false_and_reduction_dtypes_as_numpy():
    """From a user trial: a Python list as a ufunc's other operand crashed (np.result_type read it
    as a dtype); nan_to_num(y, copy=False) returned a new value and left y with its NaN; dtype= of
    np.sum/np.mean of float32 data was ignored (float32 sums of 1000 entries)."""
    x = np.array([0.5, 1.5, 2.0])
    f = lambda v: np.sum(np.multiply(v, [1.0, 2.0, 3.0]) + np.hypot(v, [1.0, 2.0, 3.0])   # noqa: E731
                         + np.subtract.outer([1.0, 2.0], v)[0])
    expected = central_differences(f, (x,), 0)
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(f)(x), expected, rtol=1e-7)

    def cleaned_log_sum(v):
        y = np.log(v)
        np.nan_to_num(y, copy=False)
        return np.sum(y)
    with np.errstate(invalid="ignore"), pytest.raises(RuntimeError, match="changed in place"):
        duals.grad(cleaned_log_sum)(np.array([0.5, -1.2, 2.0]))
    g = duals.grad(lambda v: np.sum(np.nan_to_num(np.log(v), copy=False)))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(g(np.array([0.5, -1.2, 2.0])), [2.0, 0.0, 0.5])

    data = np.random.default_rng(0).normal(size=1000).astype(np.float32) * 1e3
    for reduce in (lambda v: np.sum(v, dtype=np.float64), lambda v: np.mean(v, dtype=np.float64),
                   lambda v: np.add.reduce(v, dtype=np.float64)):
        value = duals.jvp(reduce, (data,), (np.ones_like(data),))[0]
        assert value == reduce(data) and np.result_type(value) == np.float64


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("widths", [(2, 0), (3, 4), (9, 11)])
def test_pad_with_odd_reflection_matches_numpy_in_value_and_derivative(mode, widths):
    # reflect_type="odd" (2 edge - x) was taken as positions to copy: [3, 7, 1, ...] for
    # NumPy's [0, -0.5, 1, ...], or an IndexError
    x = np.array([1.0, 2.5, 2.0, 4.0, 3.0, 7.0])
    f = lambda x: np.pad(x, widths, mode=mode, reflect_type="odd")  # noqa: E731
    np.testing.assert_array_equal(duals.jvp(f, (x,), (x,))[0], f(x))
    J = central_differences(f, [x], 0)
    np.testing.assert_allclose(duals.jacfwd(f)(x), J, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(duals.jacrev(f)(x), J, rtol=1e-7, atol=1e-9)


def test_pad_takes_traced_constant_pairs_and_dict_widths():
    X = np.arange(12.0).reshape(3, 4)
    p = np.array([0.5, -1.5])
    per_axis = lambda p: dnp.pad(X, ((1, 0), (0, 2)), constant_values=((p[0], 1.0), (2.0, p[1])))  # noqa: E731
    np.testing.assert_array_equal(duals.jvp(per_axis, (p,), (p,))[0], per_axis(p))
    pair = lambda p: np.sum(dnp.pad(X, 2, constant_values=(p[0], p[1])) ** 2)  # noqa: E731
    np.testing.assert_allclose(duals.grad(pair)(p), central_differences(pair, [p], 0), rtol=1e-7)
    u = np.arange(6.0).reshape(2, 3)
    by_axis = lambda u: np.pad(u, {1: (1, 2)}, mode="edge")  # noqa: E731
    np.testing.assert_array_equal(duals.jvp(by_axis, (u,), (u,))[0], by_axis(u))


def test_weighted_quantiles_of_plain_data_have_slope_zero_in_traced_weights():
    # they recursed without end: NumPy's quantile dispatched back to duals for the weights
    y = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0, 1.0])
    for f in (lambda w: np.quantile(y, 0.4, weights=w, method="inverted_cdf"),
              lambda w: np.nanpercentile(y, 40, weights=w, method="inverted_cdf")):
        np.testing.assert_array_equal(duals.grad(f)(w), np.zeros(6))
        np.testing.assert_array_equal(duals.jacfwd(f)(w), np.zeros(6))


def test_diff_appends_a_list_of_entries_and_unwrap_differentiates_its_period():
    x = np.array([1.0, 4.0, 9.0, 16.0])
    f = lambda x: np.diff(x, append=[1.0, 2.0], prepend=[0.5])  # noqa: E731
    np.testing.assert_array_equal(duals.jvp(f, (x,), (x,))[0], f(x))
    phase = np.array([0.1, 3.0, 6.2, 9.1, 12.5, -3.0])
    g = lambda p: dnp.unwrap(phase * p[1], period=p[0])  # noqa: E731   (k periods added: slope k)
    p = np.array([4.0, 1.0])
    np.testing.assert_allclose(duals.jacfwd(g)(p), central_differences(g, [p], 0), rtol=1e-7, atol=1e-7)
    with pytest.raises(TypeError, match=r"numpy\.unwrap got a traced value .* write dnp\.unwrap"):
        duals.jacfwd(lambda p: np.unwrap(phase, period=p[0]))(p)
    xp = np.linspace(0.0, 10.0, 8)
    with pytest.raises(TypeError, match=r"numpy\.interp got a traced value .* write dnp\.interp"):
        duals.jacfwd(lambda p: np.interp(np.array([-1.0, 3.3]), xp, np.sin(xp), left=p[0]))(p)


def test_sliding_window_view_of_traced_arrays_is_a_convolution_s_im2col():
    # the NumPy idiom of a convolution layer; it was refused for anything traced
    from numpy.lib.stride_tricks import sliding_window_view
    rng = np.random.default_rng(0)
    image, kernel = rng.normal(size=(5, 6)), rng.normal(size=(2, 3))
    conv = lambda x, k: np.einsum("ijkl,kl->ij", sliding_window_view(x, (2, 3)), k)  # noqa: E731
    for argnum in (0, 1):
        want = central_differences(conv, [image, kernel], argnum)
        np.testing.assert_allclose(duals.jacfwd(conv, argnums=argnum)(image, kernel), want, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(duals.jacrev(conv, argnums=argnum)(image, kernel), want, rtol=1e-7, atol=1e-9)
    along = lambda x: sliding_window_view(x, 3, axis=1)  # noqa: E731
    np.testing.assert_array_equal(duals.jvp(along, (image,), (image,))[0], along(image))

    def windows_then_change(x):   # NumPy's windows are a view: x += 1 shows through them
        w = sliding_window_view(x, 2)
        x += 1.0
        return np.sum(w)
    with pytest.raises(RuntimeError, match="changed in place"):
        duals.grad(windows_then_change)(np.ones(4))


def test_roots_move_with_every_coefficient_as_the_implicit_function_theorem_says():
    # dr/dp_j = -r^(n-j) / p'(r) at a simple root, the zero coefficients included (a user trial:
    # a cubic equation of state, np.roots had no rule)
    def expected(p):
        r = np.roots(p)
        n = len(p) - 1
        return -np.array([[x ** (n - j) for j in range(n + 1)] for x in r]) / np.polyval(np.polyder(p), r)[:, None]
    for p in (np.array([1.0, -6.0, 11.0, -6.0]), np.array([2.0, -1.0, 3.0, 0.5]),
              np.array([1.0, -3.0, 2.0, 0.0])):     # the last: a traced zero, the root 0 moves
        J = expected(p)
        np.testing.assert_allclose(duals.jacfwd(np.roots)(p), J, rtol=1e-12, atol=1e-12)
        for part in (np.real, np.imag):     # (complex roots: jacrev takes real outputs)
            np.testing.assert_allclose(duals.jacrev(lambda q: part(np.roots(q)))(p), part(J),
                                       rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(duals.jacfwd(np.roots)(p).real, central_differences(lambda q: np.roots(q).real, (p,), 0),
                     rtol=1e-6, atol=1e-7)
    # plain zeros in a list are stripped as NumPy strips them: its order and values
    f = lambda a: np.roots([0.0, 1.0, a[0], a[1], 0.0, 0.0])
    a = np.array([-3.0, 2.0])
    np.testing.assert_array_equal(duals.jvp(f, (a,), (np.ones(2),))[0], f(a))
    np.testing.assert_allclose(duals.jacfwd(f)(a), [[-2.0, -1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]], rtol=1e-12, atol=1e-12)


def test_roots_refuse_a_repeated_root_and_a_traced_zero_leading_coefficient_by_name():
    with pytest.raises(np.linalg.LinAlgError, match="roots: a repeated root has no derivative"):
        duals.jacrev(np.roots)(np.array([1.0, -2.0, 1.0]))
    with pytest.raises(TypeError, match="np.roots of traced coefficients whose leading one is 0"):
        duals.jacfwd(np.roots)(np.array([0.0, 1.0, -2.0, 3.0]))
    cubic = numba.njit(lambda p: np.roots(p + 0j)[0].real)
    with pytest.raises(TypeError, match=r"np\.roots of dual numbers is not supported in compiled code.*Newton"):
        duals.jacfwd(cubic)(np.array([1.0, -6.0, 11.0, -6.0]))


def test_poly_of_roots_and_of_a_matrix_is_numpys_with_the_derivatives_of_its_coefficients():
    # the characteristic polynomial's coefficients: -trace and det for 2 x 2, whose derivatives are
    # -I and the cofactor matrix; complex eigenvalues give NumPy's real coefficients
    for A in (np.array([[2.0, 1.0], [0.5, 3.0]]), np.array([[0.0, 1.0], [-2.0, -0.5]])):
        cofactor = np.array([[A[1, 1], -A[1, 0]], [-A[0, 1], A[0, 0]]])
        for transform in (duals.jacfwd, duals.jacrev):
            J = transform(np.poly)(A)
            np.testing.assert_allclose(J[1], -np.eye(2), atol=1e-14)
            np.testing.assert_allclose(J[2], cofactor, atol=1e-14)
        assert np.array_equal(duals.jvp(np.poly, (A,), (np.ones((2, 2)),))[0], np.poly(A))
    r = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(duals.jacfwd(np.poly)(r), central_differences(np.poly, (r,), 0), rtol=1e-7, atol=1e-8)
    assert duals.grad(lambda a: np.poly([a, 2.0])[2])(3.0) == 2.0   # a list of a traced root and a number


def test_polymul_drops_plain_leading_zeros_as_numpy_and_refuses_a_traced_one():
    # NumPy's poly1d drops leading zeros by value: a plain zero in a list goes, as in NumPy; a traced
    # one would take its derivative with it
    f = lambda a: dnp.polymul([0.0, a, 2.0], np.array([1.0, -1.0]))   # noqa: E731 (NumPy reads no list)
    assert np.array_equal(duals.jvp(f, (3.0,), (1.0,))[0], f(3.0))
    assert duals.jacfwd(f)(3.0).tolist() == [1.0, -1.0, 0.0]
    with pytest.raises(TypeError, match=r"np\.polymul of traced coefficients whose leading one is 0"):
        duals.jacrev(lambda p: np.polymul(p, np.array([1.0, 2.0])))(np.array([0.0, 1.0, 3.0]))


def test_a_traced_value_in_a_list_given_to_a_numpy_function_is_told_what_to_pass():
    """np.concatenate([[b[0]], np.zeros(n), [b[-1]]]) said 'a NumPy function without a duals rule
    was called', though concatenate has one: the inner list hides the value (a user trial)."""
    def padded(b):
        return np.concatenate([[b[0]], np.zeros(2), [b[-1]]]) * b[0]

    with pytest.raises(TypeError, match=r"inside a Python list given to np\.concatenate .*x\[:1\] rather "
                                        r"than \[x\[0\]\], dnp\.stack"):
        duals.grad(lambda b: np.sum(padded(b)))(np.array([0.2, 0.5]))
    b = np.array([0.2, 0.5])
    advised = duals.grad(lambda b: np.sum(np.concatenate([b[:1], np.zeros(2), b[-1:]]) * b[0]))(b)
    np.testing.assert_allclose(advised, [2 * b[0] + b[1], b[0]])


def _linear_shift(q, u):
    """A semi-Lagrangian step by linear interpolation, its cell index by astype (as in NumPy code)."""
    departure = np.arange(q.size) - u
    cell = np.floor(departure).astype(int)
    a = departure - cell
    return (1.0 - a) * q[cell % q.size] + a * q[(cell + 1) % q.size]


def test_astype_to_an_integer_type_takes_the_truncated_values_as_int_does():
    # (semi-Lagrangian trial) s.astype(int) was refused ("keep a float dtype") while int(s[0]),
    # np.floor(s).astype(int) and compiled code's astype took the values: a step function
    q, u = np.sin(np.linspace(0.0, 6.0, 8)), 0.3
    for spelled in (lambda s: s.astype(int), lambda s: (s // 1.0).astype(np.int64)):
        def step(q, u):
            departure = np.arange(q.size) - u
            cell = spelled(np.floor(departure) + 0.0 * departure)
            a = departure - cell
            return (1.0 - a) * q[cell % q.size] + a * q[(cell + 1) % q.size]
        for transform in (duals.jacfwd, duals.jacrev):
            np.testing.assert_array_equal(transform(step, argnums=1)(q, u), transform(_linear_shift, argnums=1)(q, u))
    index = duals.jvp(lambda s: s.astype(np.int32), (np.array([1.7, -0.2]),), (np.ones(2),))[0]
    assert index.dtype == np.int32 and index.tolist() == [1, 0]
    with pytest.raises(TypeError, match=r"astype\(<U3\) of a traced value would drop its derivative"):
        duals.grad(lambda s: s.astype("U3"))(np.ones(2))


def _pair_energy(x, cutoff=1.5):
    """A 1-D particle system's pair energy, the pairs within the cutoff found by SciPy's tree on
    the plain positions (a neighbour list), the distances on the traced ones."""
    from scipy.spatial import cKDTree
    pairs = cKDTree(duals.stop_gradient(x)[:, None]).query_pairs(cutoff, output_type="ndarray")
    r = x[pairs[:, 1]] - x[pairs[:, 0]]
    return np.sum((cutoff - np.abs(r)) ** 2)


def test_stop_gradient_is_a_plain_value_in_every_mode_for_code_that_needs_one():
    # (SPH trial) under grad it returned a traced Var, which cdist and cKDTree refused, while the
    # refusals advised it
    import scipy.spatial.distance
    x = np.array([0.0, 0.7, 2.1, 2.5])
    seen = []
    for transform in (duals.grad, duals.jacfwd, duals.jacrev, duals.hessian):
        transform(lambda x: seen.append(type(duals.stop_gradient(x))) or np.sum(x * x))(x)
    assert seen == [np.ndarray] * 4
    want = central_differences(_pair_energy, (x,), 0)
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_allclose(transform(_pair_energy)(x), want, rtol=1e-8)
    plain = duals.stop_gradient
    near = lambda x: np.sum(x * (scipy.spatial.distance.cdist(plain(x)[:, None],   # noqa: E731
                                                              plain(x)[:2, None]) < 1.0).sum(axis=1))
    np.testing.assert_array_equal(duals.grad(near)(x), [2.0, 2.0, 0.0, 0.0])
    with pytest.raises(TypeError, match=r"cKDTree\(\.\.\.\) builds its search structure .* "
                                        r"cKDTree\(duals\.stop_gradient\(x\)\)"):
        from scipy.spatial import cKDTree
        duals.grad(lambda x: np.sum(cKDTree(x[:, None]).query(x[:, None], k=2)[0]))(x)
