"""python -m benchmarks.fused_groups [n ...]: gradients with and without the walk's groups.

The walk runs a chain of element-wise reverse rules as one generated kernel
(:mod:`duals.ops.fused_groups`). Here, for a few gradients of ordinary NumPy code on float64
arrays of ``n`` entries (default 10⁴ and 10⁵), single-threaded: ``f``, the gradient with groups
switched off and on (alternating, best of 300 calls each, twice), as microseconds and as
multiples of ``f``, and the largest relative difference between the two gradients.
"""
import benchmarks._threads  # noqa: F401  (one thread for BLAS and Numba, before NumPy)

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import duals  # noqa: E402
from duals.ops import fused_groups  # noqa: E402


def _cases(n):
    rng = np.random.default_rng(0)
    x, y, s = rng.random(n), rng.random(n), 1.0 + rng.random(n)
    return [
        ("Rosenbrock", lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2), (x,)),
        ("Gaussian log-likelihood", lambda mu, s: np.sum(-0.5 * ((y - mu) / s) ** 2 - np.log(s)), (x, s)),
        ("tanh and hypot", lambda a, b: np.sum(np.tanh(a * b + 0.5 * a) * b - np.sqrt(a * a + b * b)), (x, y)),
        ("sin * cos / (1 + x²)", lambda a, b: np.sum(np.sin(a) * np.cos(b) / (1.0 + a * a)), (x, y)),
        ("1-D stencil energy", lambda u: np.sum(0.5 * (u[2:] - 2.0 * u[1:-1] + u[:-2]) ** 2
                                                + 0.25 * (u[1:-1] ** 2 - 1.0) ** 2), (x,)),
    ]


def _best(fn, calls=300):
    best = np.inf
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(sizes):
    fused_groups.FUSE_ENTRIES = 0     # compile at the second call: the steady state is timed
    print(f"{'gradient':26s} {'n':>7s} {'f µs':>8s} {'ungrouped':>16s} {'grouped':>16s}  rel. diff")
    for n in sizes:
        for name, f, args in _cases(n):
            gradient = duals.grad(f, argnums=tuple(range(len(args))))
            fused_groups.ENABLED = False
            reference = gradient(*args)
            fused_groups.ENABLED = True
            for _ in range(3):
                got = gradient(*args)
            diff = max(float(np.max(np.abs(a - b)) / np.max(np.abs(b))) for a, b in zip(got, reference))
            plain = _best(lambda: f(*args))
            times = {False: np.inf, True: np.inf}
            for enabled in (False, True, False, True):
                fused_groups.ENABLED = enabled
                times[enabled] = min(times[enabled], _best(lambda: gradient(*args)))
            fused_groups.ENABLED = True
            off, on = times[False], times[True]
            print(f"{name:26s} {n:7d} {plain * 1e6:8.1f} {off * 1e6:8.1f} ({off / plain:4.2f}×) "
                  f"{on * 1e6:8.1f} ({on / plain:4.2f}×)  {diff:.1e}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
