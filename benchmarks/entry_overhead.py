"""What a compiled derivative of several passes costs a call beyond its compiled work (issue 21).

    python benchmarks/entry_overhead.py

A power-flow-like kernel of 22 inputs (every output reads every input: ``cos`` of differences),
whose ``duals.jacfwd`` takes two passes of 16 lanes, and ``x * x`` of 22 inputs, where the
passes cost nearly nothing: the time per call of the plain ``@njit`` call, of ``jacfwd`` kept
between calls, and of ``duals.jacfwd(f)(x)`` made afresh at each call (as a Newton loop writes
it). One thread, best of several loops, all in this one process.

Then a small step (a cart-pole's explicit Euler step, 4 states and 1 input, as an iLQR loop
differentiates a few thousand times) and its stage cost: ``jacfwd`` and ``grad`` kept between
calls on the general path, and after ``.compile(x, u)`` made their compiled drivers (with the
seconds that took).
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


@numba.njit(cache=True)
def cart_step(x, u):
    out = np.empty(4)
    out[0] = x[0] + 0.01 * x[2]
    out[1] = x[1] + 0.01 * x[3]
    out[2] = x[2] + 0.01 * (u[0] - np.sin(x[1]))
    out[3] = x[3] + 0.01 * np.cos(x[1]) * x[2]
    return out


@numba.njit(cache=True)
def stage_cost(x, u):
    return np.sum(x * x) + 0.1 * u[0] ** 2 + np.sin(x[0]) * u[0]


def small_steps():
    """The general path against ``.compile``'s driver for a small step and its cost."""
    import time
    x, u = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.5])
    print("\n| derivative | plain @njit | kept, general path | × plain | after .compile | × plain | .compile took |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, f, transform in (("jacfwd(cart_step)", cart_step, duals.jacfwd),
                               ("grad(stage_cost)", stage_cost, duals.grad)):
        general, compiled = transform(f), transform(f)
        expected = general(x, u)
        plain, t_general = per_call(lambda: f(x, u)), per_call(lambda: general(x, u))
        start = time.perf_counter()
        np.testing.assert_array_equal(compiled.compile(x, u), expected)
        took = time.perf_counter() - start
        t_compiled = per_call(lambda: compiled(x, u))
        print(f"| {name} | {plain * 1e6:.2f} µs | {t_general * 1e6:.1f} µs | {t_general / plain:.0f} "
              f"| {t_compiled * 1e6:.1f} µs | {t_compiled / plain:.0f} | {took:.1f} s |")


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
    small_steps()


if __name__ == "__main__":
    main()
