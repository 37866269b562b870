"""Compiled forward mode on complex code: an RLC impedance sweep, relative to the plain @njit call.

    python -m benchmarks.bench_jit_complex [--n 100000] [--repeat 20]

The user's function loops over ``n`` frequencies computing ``|R + iωL + 1/(iωC)|`` in complex
arithmetic. Measured on one thread (benchmarks._threads): the plain float call, ``duals.jvp``
along one parameter direction (one complex lane inside), ``duals.jacfwd`` over (R, L, C) (three
lanes), and the same jvp as the dispatcher called on prepared dual arguments (no Python entry
point); each the best of ``--repeat`` runs after a warm-up call. Prints a markdown table with
the ratios to the plain call.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._threads  # noqa: E402,F401  (one thread, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from duals.jit import dual_array  # noqa: E402
from duals.jit.promotion import promoted_call  # noqa: E402


@numba.njit(cache=True)
def rlc_magnitude(p, w):
    R, L, C = p[0], p[1], p[2]
    out = np.empty(w.size)
    for k in range(w.size):
        z = R + 1j * w[k] * L + 1.0 / (1j * w[k] * C)
        out[k] = abs(z)
    return out


def best(call, repeat):
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    a = parser.parse_args()
    p = np.array([50.0, 1e-3, 1e-6])
    w = np.logspace(2, 7, a.n)
    direction = np.array([1.0, 0.0, 0.0])
    jac = duals.jacfwd(rlc_magnitude)
    seeded = dual_array(p, direction[None, :])
    rows = [("plain @njit call", best(lambda: rlc_magnitude(p, w), a.repeat))]
    rows.append(("duals.jvp, one direction", best(lambda: duals.jvp(rlc_magnitude, (p, w), (direction, None)), a.repeat)))
    rows.append(("promoting specialisation on prepared duals (1 lane)",
                 best(lambda: promoted_call(rlc_magnitude, [seeded, w]), a.repeat)))
    rows.append(("duals.jacfwd over (R, L, C), 3 lanes", best(lambda: jac(p, w), a.repeat)))
    plain = rows[0][1]
    print(f"RLC sweep, n = {a.n} frequencies, one thread, best of {a.repeat}\n")
    print("| call | time (ms) | / plain |")
    print("|---|---:|---:|")
    for label, t in rows:
        print(f"| {label} | {t * 1e3:.3f} | {t / plain:.2f} |")


if __name__ == "__main__":
    main()
