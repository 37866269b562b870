"""Derivative-based global sensitivity measures (DGSM) with exact gradients.

For inputs ``x`` uniform on a box ``[a_j, b_j]`` (Sobol' and Kucherenko 2009),

    v_j = E[(∂f/∂x_j)^2],    dgsm_j = v_j (b_j - a_j)^2 / (π^2 Var f),

and ``dgsm_j`` bounds the total Sobol' index of ``x_j`` from above. SALib estimates ``∂f/∂x_j``
by finite differences, ``N (D + 1)`` model runs; here every sample costs one gradient (one
reverse pass, or ``D`` compiled forward lanes for ``@njit`` code), exact to rounding. The
result has SALib's keys (``vi``, ``vi_std``, ``dgsm``, ``dgsm_conf``, ``names``) with the
same definitions, but for the confidence interval (see :func:`dgsm`).

>>> import numpy as np
>>> res = dgsm(lambda x: 2.0 * x[0] + x[1] ** 2, [(0.0, 1.0), (0.0, 1.0)], 1024, seed=0)
>>> np.round(res["vi"], 3).tolist()          # E[2^2] = 4, E[(2 x)^2] = 4/3 (Sobol' points)
[4.0, 1.333]
"""
import math
import statistics

import numpy as np

from ..arguments import is_compiled
from ..transforms import value_and_grad
from ._optional import require
from .parameters import returning_a_number

__all__ = ["dgsm", "DGSMResult"]

WHO = "duals.sensitivity.dgsm"


class DGSMResult(dict):
    """DGSMResult: SALib's DGSM result (a dict of ``vi``, ``vi_std``, ``dgsm``, ``dgsm_conf``,
    ``names``) plus ``vi_conf``; keys read as attributes too. ``samples``, ``values`` and
    ``gradients`` hold the points, ``f`` there and ``∇f`` there; ``to_df()`` gives a pandas
    DataFrame when pandas is installed."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_df(self):
        """to_df() -> a pandas DataFrame indexed by the input names (needs pandas)."""
        pandas = require("pandas", "DGSMResult.to_df")
        keys = ["vi", "vi_std", "dgsm", "dgsm_conf", "vi_conf"]
        return pandas.DataFrame({k: self[k] for k in keys}, index=self["names"])

    def __str__(self):
        width = max([len("input")] + [len(n) for n in self["names"]])
        lines = [f"{'input':<{width}} {'vi':>11} {'vi_std':>11} {'dgsm':>11} {'dgsm_conf':>11}"]
        for j, name in enumerate(self["names"]):
            lines.append(f"{name:<{width}} " + " ".join(
                f"{self[k][j]:>11.4g}" for k in ("vi", "vi_std", "dgsm", "dgsm_conf")))
        return "\n".join(lines)


def _problem(bounds, names):
    """(bounds as a (D, 2) array, names) from a list of pairs or SALib's problem dict."""
    if isinstance(bounds, dict):
        problem = bounds
        if "bounds" not in problem:
            raise KeyError(f"{WHO}: the problem dict needs 'bounds' (and 'names', 'num_vars'), "
                           f"as SALib's does")
        dists = problem.get("dists")
        if dists is not None and any(d not in ("unif", None) for d in dists):
            raise NotImplementedError(f"{WHO}: only uniform inputs ('unif') are supported, got "
                                      f"dists={list(dists)}; the DGSM bound (b - a)^2 / π^2 "
                                      f"holds for uniform inputs")
        box = np.asarray(problem["bounds"], dtype=np.float64)
        names = names or problem.get("names")
        if "num_vars" in problem and int(problem["num_vars"]) != len(box):
            raise ValueError(f"{WHO}: num_vars = {problem['num_vars']} but bounds has {len(box)} "
                             f"rows")
    else:
        box = np.asarray(bounds, dtype=np.float64)
    if box.ndim != 2 or box.shape[1] != 2 or not len(box):
        raise ValueError(f"{WHO}: bounds must be a list of (low, high) pairs, got shape {box.shape}")
    if np.any(box[:, 1] <= box[:, 0]) or not np.all(np.isfinite(box)):
        raise ValueError(f"{WHO}: every bound needs finite low < high, got {box.tolist()}")
    names = [f"x{j + 1}" for j in range(len(box))] if names is None else [str(n) for n in names]
    if len(names) != len(box):
        raise ValueError(f"{WHO}: {len(names)} names for {len(box)} inputs")
    return box, names


def _samples(box, n_samples, sampler, rng):
    d = len(box)
    if n_samples is None or int(n_samples) != n_samples or n_samples < 2:
        raise ValueError(f"{WHO}: n_samples must be an integer >= 2, got {n_samples!r}")
    n = int(n_samples)
    if sampler is None:
        try:
            import scipy.stats  # noqa: F401
            sampler = "sobol"
        except ImportError:
            sampler = "random"
    if sampler == "sobol":
        qmc = require("scipy.stats.qmc", f"{WHO}(sampler='sobol')")
        engine = qmc.Sobol(d, scramble=True, seed=rng)
        unit = engine.random_base2(int(math.log2(n))) if n & (n - 1) == 0 else engine.random(n)
    elif sampler == "random":
        unit = rng.random((n, d))
    else:
        raise ValueError(f"{WHO}: sampler must be 'sobol', 'random' or None, got {sampler!r}; "
                         f"pass samples=... for points from another sampler")
    return box[:, 0] + unit * (box[:, 1] - box[:, 0])


def _gradients(f, X, vectorized, workers=None):
    """(values (N,), gradients (N, D)) of ``f`` at the rows of ``X``."""
    n, d = X.shape
    pool = None
    if workers is not None:
        from ..workers import resolve
        pool = resolve(workers, WHO)
    if vectorized and pool is not None:
        raise ValueError(f"{WHO}: workers= spreads the points' gradients, one per point; with "
                         f"vectorized=True every point goes through one call of f, which does not "
                         f"split without changing how it rounds (a matrix product sums in another "
                         f"order for fewer rows). Pass vectorized=False to spread the points, or "
                         f"leave workers out")
    if vectorized:
        if is_compiled(f):
            from ..jit import dual_array
            tangents = np.zeros((d, n, d))
            tangents[np.arange(d), :, np.arange(d)] = 1.0
            out = f(dual_array(X, tangents))
            if not (isinstance(out, np.ndarray) and out.dtype.names == ("primal", "tangent")):
                raise TypeError(f"{WHO}: the compiled vectorized f returned "
                                f"{type(out).__name__}; return one value per row, an array")
            values, grads = out["primal"], out["tangent"]
        else:
            def total(X):
                y = f(X)
                return y.sum(), y
            (_, values), grads = value_and_grad(total, has_aux=True)(X)
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(f"{WHO}: with vectorized=True f(X) must return shape ({n},) for X "
                             f"of shape {X.shape}, got {values.shape}")
        return values, np.asarray(grads, dtype=np.float64).reshape(n, d)
    points = list(X)
    if pool is None:
        pairs = point_gradients(f, points)
    else:
        pairs = pool.run(_numbered_point_gradients, (f,), list(enumerate(points)),
                         describe=lambda block: f"points {block[0][0]}..{block[-1][0]}")
    values, grads = np.empty(n), np.empty((n, d))
    for i, (value, g) in enumerate(pairs):
        values[i], grads[i] = value, g
    return values, grads


def _numbered_point_gradients(f, numbered):
    """A task of ``dgsm(workers=)``: :func:`point_gradients` of ``(index, point)`` pairs."""
    return point_gradients(f, [x for _, x in numbered])


def point_gradients(f, points):
    """[(f(x), ∇f(x)) for x in points]: the serial loop of :func:`dgsm`, and a task of ``workers=``."""
    vg = value_and_grad(returning_a_number(f, WHO, "f(x)"))
    pairs = []
    for x in points:
        pairs.append(vg(x.copy()))
    return pairs


def _check_spread(X, box, names):
    """Warn when the samples of an input span less than half its bounds: N uniform points span
    (N - 1) / (N + 1) of the width on average, and less than half with probability below
    N 2^(1 - N), so at 32 points and more this is a sampler's mistake (unit-cube points not
    scaled to the box), which would give measures of another box."""
    if len(X) < 32:
        return
    spans = (X.max(axis=0) - X.min(axis=0)) / (box[:, 1] - box[:, 0])
    narrow = np.flatnonzero(spans < 0.5)
    if narrow.size:
        import warnings
        j = narrow[0]
        warnings.warn(f"{WHO}: the {len(X)} samples of {names[j]} span [{X[:, j].min():.6g}, "
                      f"{X[:, j].max():.6g}], {100 * spans[j]:.0f} % of its bounds {box[j].tolist()}; "
                      f"the measures assume points spread uniformly over the box (points from the "
                      f"unit cube need scipy.stats.qmc.scale(X, low, high) first)", stacklevel=3)


def measures(values, gradients, box, names, num_resamples=100, conf_level=0.95, rng=None):
    """measures(values, gradients, box, names, ...) -> DGSMResult from ``f`` and ``∇f`` at sample points.

    Any gradients will do (exact, or finite differences: that is how the tests compare).
    """
    if not 0 < conf_level < 1:
        raise ValueError(f"{WHO}: conf_level must lie strictly between 0 and 1, got {conf_level}")
    rng = np.random.default_rng(rng)
    squares = gradients ** 2
    width2 = (box[:, 1] - box[:, 0]) ** 2

    def estimate(rows):
        variance = np.var(values[rows])
        vi = squares[rows].mean(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = vi * width2 / (math.pi ** 2 * variance) if variance > 0 else np.full_like(vi, np.nan)
        return vi, ratio

    everything = np.arange(len(values))
    vi, ratio = estimate(everything)
    boot_vi, boot_ratio = [], []
    for _ in range(int(num_resamples)):
        rows = rng.integers(len(values), size=len(values))
        b_vi, b_ratio = estimate(rows)
        boot_vi.append(b_vi)
        boot_ratio.append(b_ratio)
    z = statistics.NormalDist().inv_cdf(0.5 + conf_level / 2.0)
    ddof = 1 if num_resamples > 1 else 0
    vi_conf = z * np.std(boot_vi, axis=0, ddof=ddof) if boot_vi else np.full_like(vi, np.nan)
    dgsm_conf = z * np.std(boot_ratio, axis=0, ddof=ddof) if boot_ratio else np.full_like(vi, np.nan)
    return DGSMResult(vi=vi, vi_std=squares.std(axis=0), dgsm=ratio, dgsm_conf=dgsm_conf,
                      vi_conf=vi_conf, names=list(names))


def dgsm(f, bounds, n_samples=None, seed=None, *, sampler=None, samples=None, names=None,
         vectorized=False, num_resamples=100, conf_level=0.95, workers=None):
    """dgsm(f, bounds, n_samples=None, seed=None, *, sampler=None, samples=None, names=None, vectorized=False, num_resamples=100, conf_level=0.95, workers=None) -> DGSMResult.

    Derivative-based global sensitivity measures of ``f(x)`` over a box, from exact gradients.

    Args:
        f: ``f(x)`` for ``x`` of shape ``(D,)`` returning a float (Python code duals
            differentiates, or ``@numba.njit``); with ``vectorized=True``, ``f(X)`` for
            ``X`` of shape ``(N, D)`` returning shape ``(N,)``, each row on its own (then one
            reverse pass, or ``D`` compiled lanes, gives every gradient).
        bounds: ``[(low, high), ...]`` per input, or SALib's problem dict
            (``{"num_vars", "names", "bounds"}``; only uniform ``dists``).
        n_samples: how many points (a power of 2 keeps Sobol' points balanced).
        seed: an int or ``numpy.random.Generator``, for the points and the bootstrap.
        sampler: ``"sobol"`` (scrambled, from ``scipy.stats.qmc``), ``"random"`` (uniform) or
            ``None``: Sobol' when SciPy is installed, uniform otherwise.
        samples: points ``(N, D)`` to use instead (from any sampler, SALib's included).
        names: input names (default the problem's, else ``x1``, ``x2``, ...).
        num_resamples, conf_level: the bootstrap of the confidence intervals.
        workers: where the points' gradients are computed (see the workers page of the docs):
            ``None`` here; an int (a pool of that many processes), a
            ``concurrent.futures.Executor``, a ``dask.distributed.Client`` or a map-like
            callable. Each task computes the gradients of consecutive points as the serial
            loop does, so the result is the same bits. Not with ``vectorized=True``.

    Returns:
        A :class:`DGSMResult` with SALib's keys: ``vi`` (mean of ``(∂f/∂x_j)^2``), ``vi_std``
        (the standard deviation of ``(∂f/∂x_j)^2`` over the points), ``dgsm``
        (``vi (b - a)^2 / (π^2 Var f)`` with the points' variance of ``f``; NaN when ``f`` is
        constant there), ``dgsm_conf`` and ``names``. ``dgsm_conf`` is the half-width of the
        bootstrap confidence interval of ``dgsm`` itself (both ``vi`` and ``Var f``
        resampled); SALib reports under that name the interval of ``vi``, which is here
        ``vi_conf``.

    >>> import numpy as np
    >>> problem = {"num_vars": 2, "names": ["a", "b"], "bounds": [[0, 1], [0, 2]]}
    >>> res = dgsm(lambda x: x[0] + x[1], problem, 64, seed=1)
    >>> res["names"], np.round(res["vi"], 12).tolist()
    (['a', 'b'], [1.0, 1.0])
    >>> dgsm(lambda x: x[0] + x[1], problem, 64, seed=1, workers=map)["vi"].tolist() == res["vi"].tolist()
    True
    """
    box, names = _problem(bounds, names)
    rng = np.random.default_rng(seed)
    if samples is None:
        X = _samples(box, n_samples, sampler, rng)
    else:
        X = np.asarray(samples, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(box) or len(X) < 2:
            raise ValueError(f"{WHO}: samples must have shape (N >= 2, {len(box)}), got {X.shape}")
        if n_samples is not None and n_samples != len(X):
            raise ValueError(f"{WHO}: n_samples = {n_samples} but {len(X)} samples were given")
        outside = np.flatnonzero(np.any((X < box[:, 0]) | (X > box[:, 1]) | np.isnan(X), axis=0))
        if outside.size:
            j = outside[0]
            raise ValueError(f"{WHO}: samples of {names[j]} lie in [{X[:, j].min():.6g}, "
                             f"{X[:, j].max():.6g}], outside its bounds {box[j].tolist()}; the "
                             f"measures hold for points drawn in the box (points from the unit "
                             f"cube need scaling first: scipy.stats.qmc.scale(X, low, high))")
        _check_spread(X, box, names)
    values, grads = _gradients(f, X, vectorized, workers)
    result = measures(values, grads, box, names, num_resamples, conf_level, rng)
    result.samples, result.values, result.gradients = X, values, grads
    return result
