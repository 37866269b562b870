"""What a compiled derivative of several passes costs a call beyond its compiled work (issue 21).

    python benchmarks/entry_overhead.py

A power-flow-like kernel of 22 inputs (every output reads every input: ``cos`` of differences),
whose ``duals.jacfwd`` takes two passes of 16 lanes, and ``x * x`` of 22 inputs, where the
passes cost nearly nothing: the time per call of the plain ``@njit`` call, of ``jacfwd`` kept
between calls, and of ``duals.jacfwd(f)(x)`` made afresh at each call (as a Newton loop writes
it). One thread, best of several loops, all in this one process.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._threads  # noqa: E402,F401  (one thread for BLAS and Numba, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from benchmarks._steady import per_call  # noqa: E402


@numba.njit(cache=True)
def mismatch(x):
    n = x.size
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(n):
            s += np.cos(x[i] - x[k]) * (1.0 + 0.01 * k)
        out[i] = s - x[i]
    return out


@numba.njit(cache=True)
def square(x):
    return x * x


def main():
    x = np.linspace(0.0, 1.0, 22)
    print("| function | plain @njit | jacfwd, kept | × plain | jacfwd made at each call | × plain |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in (mismatch, square):
        kept = duals.jacfwd(f)
        steps = 1e-6 * np.eye(x.size)
        differences = np.stack([(f(x + h) - f(x - h)) / 2e-6 for h in steps], axis=1)
        np.testing.assert_allclose(kept(x), differences, rtol=1e-6, atol=1e-6)
        plain, t_kept, t_fresh = per_call(lambda: f(x)), per_call(lambda: kept(x)), \
            per_call(lambda: duals.jacfwd(f)(x))
        print(f"| {f.__name__} | {plain * 1e6:.1f} µs | {t_kept * 1e6:.1f} µs | {t_kept / plain:.1f} "
              f"| {t_fresh * 1e6:.1f} µs | {t_fresh / plain:.1f} |")


if __name__ == "__main__":
    main()
