"""The trade of checkpointing a compiled time loop: tape memory against time (issue 16).

    python benchmarks/bench_checkpoint.py [--steps 1000]

W7's Lorenz-96 (n = 40, RK4, dt = 0.01): the gradient of ½ Σ (x_i(T) - 1)² with respect to the
forcing by ``duals.grad`` of the whole loop (one tape of every step) and by
``duals.jit.loop_value_and_grad`` with segments of several lengths (one segment's tape at a
time, one extra plain run). Reports time relative to the plain loop and the tape's peak bytes,
one thread, best of several runs, all in this one process.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._threads  # noqa: E402,F401  (one thread for BLAS and Numba, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
import duals.jit  # noqa: E402
from benchmarks._steady import best  # noqa: E402

N, DT = 40, 0.01
FORCING = 8.0 + 0.1 * np.sin(np.arange(N))
STATE = FORCING + 0.01 * np.arange(N)


@numba.njit(cache=True)
def rhs(x, F):
    n = x.shape[0]
    out = np.empty_like(x)
    for i in range(n):
        out[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + F[i]
    return out


@numba.njit(cache=True)
def rk4_step(x, F):
    k1 = rhs(x, F)
    k2 = rhs(x + 0.5 * DT * k1, F)
    k3 = rhs(x + 0.5 * DT * k2, F)
    k4 = rhs(x + DT * k3, F)
    return x + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


@numba.njit(cache=True)
def misfit(x, F):
    return 0.5 * np.sum((x - 1.0) ** 2)


@numba.njit(cache=True)
def whole(x0, F, steps):
    x = x0
    for _ in range(steps):
        x = rk4_step(x, F)
    return misfit(x, F)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    steps = ap.parse_args(argv).steps
    plain = best(lambda: whole(STATE, FORCING, steps))
    grad = duals.grad(whole, argnums=1)
    expected = grad(STATE, FORCING, steps)
    rows = []
    t = best(lambda: grad(STATE, FORCING, steps))
    rows.append(("duals.grad, whole loop", t, duals.jit.last_recording().nbytes, 0.0))
    for segment in (10, 32, 100):
        loop = duals.jit.loop_value_and_grad(rk4_step, misfit, steps, segment=segment)
        got = loop(STATE, FORCING)[1][1]
        error = float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
        t = best(lambda: loop(STATE, FORCING))
        rows.append((f"loop_value_and_grad, segment {segment}", t, duals.jit.last_recording().nbytes, error))
    print(f"Lorenz-96, n = {N}, {steps} RK4 steps; plain @njit loop {plain * 1e3:.3f} ms (one thread)\n")
    print("| method | time | × plain | tape bytes (last recording) | rel. difference to whole-loop grad |")
    print("|---|---:|---:|---:|---:|")
    for name, t, nbytes, error in rows:
        print(f"| {name} | {t * 1e3:.2f} ms | {t / plain:.1f} | {nbytes / 2 ** 20:.2f} MiB | {error:.1e} |")


if __name__ == "__main__":
    main()
