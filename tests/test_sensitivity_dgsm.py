"""duals.sensitivity.dgsm: closed-form DGSM of the Ishigami function within sampling error, the same
measures from finite-difference gradients at the same points, SALib's layout and problem dict,
vectorised and compiled models, and bad input."""
import math

import numba
import numpy as np
import pytest

import duals.numpy as dnp
from duals.sensitivity import dgsm
from duals.sensitivity.global_measures import measures

A, B = 7.0, 0.1
PI = math.pi
BOUNDS = [(-PI, PI)] * 3
PROBLEM = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-PI, PI]] * 3}


def ishigami(x):
    return dnp.sin(x[0]) + A * dnp.sin(x[1]) ** 2 + B * x[2] ** 4 * dnp.sin(x[0])


def ishigami_rows(X):
    return dnp.sin(X[:, 0]) + A * dnp.sin(X[:, 1]) ** 2 + B * X[:, 2] ** 4 * dnp.sin(X[:, 0])


@numba.njit(cache=True)
def ishigami_compiled(x):
    return math.sin(x[0]) + A * math.sin(x[1]) ** 2 + B * x[2] ** 4 * math.sin(x[0])


@numba.njit(cache=True)
def ishigami_compiled_rows(X):
    out = np.empty(X.shape[0], dtype=X.dtype)
    for i in range(X.shape[0]):
        out[i] = np.sin(X[i, 0]) + A * np.sin(X[i, 1]) ** 2 + B * X[i, 2] ** 4 * np.sin(X[i, 0])
    return out


def closed_form():
    """v_i = E[(df/dx_i)^2] over U(-pi, pi)^3, with E[x^k] = pi^k / (k + 1) for even k and
    E[cos^2] = E[sin^2] = E[sin^2 2x] = 1/2:
    df/dx1 = cos x1 (1 + b x3^4), df/dx2 = a sin 2 x2, df/dx3 = 4 b x3^3 sin x1."""
    v = np.array([0.5 * (1 + 2 * B * PI ** 4 / 5 + B ** 2 * PI ** 8 / 9),
                  A ** 2 / 2,
                  16 * B ** 2 * PI ** 6 / 7 / 2])
    variance = A ** 2 / 8 + B * PI ** 4 / 5 + B ** 2 * PI ** 8 / 18 + 0.5
    return v, v * (2 * PI) ** 2 / (PI ** 2 * variance)


@pytest.mark.parametrize("sampler", ["random", "sobol"])
def test_ishigami_matches_the_closed_form_within_sampling_error(sampler):
    if sampler == "sobol":
        pytest.importorskip("scipy.stats")
    n = 4096
    res = dgsm(ishigami_rows, BOUNDS, n, seed=3, sampler=sampler, vectorized=True)
    v, ratio = closed_form()
    # the standard error of a mean of n points bounds a Sobol' estimate's error too
    assert np.all(np.abs(res["vi"] - v) < 4 * res["vi_std"] / math.sqrt(n))
    assert np.all(np.abs(res["dgsm"] - ratio) < 2 * res["dgsm_conf"])
    assert res["names"] == ["x1", "x2", "x3"]


def test_same_as_finite_difference_dgsm_at_the_same_points():
    res = dgsm(ishigami, PROBLEM, 256, seed=0)
    X = res.samples
    h = 1e-5
    fd = np.empty_like(X)
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fd[:, j] = [(float(ishigami(x + e)) - float(ishigami(x - e))) / (2 * h) for x in X]
    reference = measures(res.values, fd, np.array(PROBLEM["bounds"]), PROBLEM["names"], rng=0)
    for key in ("vi", "vi_std", "dgsm"):
        np.testing.assert_allclose(res[key], reference[key], rtol=1e-7)
    np.testing.assert_allclose(res.gradients, fd, rtol=1e-6, atol=1e-7)


def test_every_way_of_evaluating_gives_the_same_measures():
    runs = [dgsm(f, BOUNDS, 128, seed=5, vectorized=v) for f, v in
            ((ishigami, False), (ishigami_rows, True), (ishigami_compiled, False),
             (ishigami_compiled_rows, True))]
    for other in runs[1:]:
        np.testing.assert_allclose(other.gradients, runs[0].gradients, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(other["dgsm"], runs[0]["dgsm"], rtol=1e-12)


def test_salib_layout_and_definitions():
    rng = np.random.default_rng(1)
    X = rng.uniform(-PI, PI, (500, 3))
    res = dgsm(ishigami_rows, PROBLEM, samples=X, vectorized=True, num_resamples=200)
    assert {"vi", "vi_std", "dgsm", "dgsm_conf", "names"} <= set(res)
    g2 = res.gradients ** 2
    np.testing.assert_allclose(res["vi"], g2.mean(axis=0))
    np.testing.assert_allclose(res["vi_std"], g2.std(axis=0))                 # SALib: np.std
    np.testing.assert_allclose(res["dgsm"], g2.mean(axis=0) * 4 / np.var(res.values))
    # the bootstrap half-widths: about 1.96 standard errors of each mean
    np.testing.assert_allclose(res["vi_conf"], 1.96 * res["vi_std"] / math.sqrt(500), rtol=0.25)
    assert res.vi is res["vi"] and "vi_std" in str(res)


def test_constant_model_has_undefined_dgsm():
    res = dgsm(lambda x: 0.0 * x[0] + 1.0, [(0.0, 1.0)], 16, seed=0, sampler="random")
    assert res["vi"][0] == 0.0 and np.isnan(res["dgsm"][0])


def test_bad_input():
    with pytest.raises(ValueError, match="low < high"):
        dgsm(ishigami, [(1.0, 0.0)] * 3, 16)
    with pytest.raises(NotImplementedError, match="uniform"):
        dgsm(ishigami, dict(PROBLEM, dists=["norm"] * 3), 16)
    with pytest.raises(ValueError, match="n_samples"):
        dgsm(ishigami, BOUNDS, 1.5)
    with pytest.raises(ValueError, match="sampler"):
        dgsm(ishigami, BOUNDS, 16, sampler="latin")
    with pytest.raises(ValueError, match="samples must have shape"):
        dgsm(ishigami, BOUNDS, samples=np.zeros((4, 2)))
    with pytest.raises(ValueError, match="shape"):
        dgsm(lambda X: X, BOUNDS, 8, vectorized=True)
    for out in (lambda x: x * 2.0, lambda x: x[:1] * x[1]):   # a vector, a 1-element array
        with pytest.raises(ValueError, match=r"dgsm: f\(x\) must return one number, got shape"):
            dgsm(out, BOUNDS, 8)
    outside = np.full((8, 3), 0.5)
    outside[3, 1] = 4.0
    with pytest.raises(ValueError, match=r"samples of x2 lie in \[0.5, 4\], outside its bounds"):
        dgsm(ishigami, BOUNDS, samples=outside)


def test_samples_not_spread_over_the_box_get_a_warning():
    """Unit-cube points passed with the box [-pi, pi]^3 (qmc.scale forgotten) would give the
    measures of another box (x2's 46.7 for 7.08)."""
    unit = np.random.default_rng(3).uniform(0.0, 1.0, (64, 3))
    with pytest.warns(UserWarning, match=r"samples of x1 span \[.*16 % of its bounds.*qmc.scale"):
        dgsm(ishigami, BOUNDS, samples=unit)
