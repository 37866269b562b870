"""Parameter-only sensitivities of unchanged @njit code: cost relative to the plain call.

    python benchmarks/bench_parameters.py [--steps 1000] [--quick]

Two kernels written as a Numba user writes them, whose buffers are made from plain inputs
(so their dual specialisations need promotion, see ``duals/jit/promotion.py``):

* the Lorenz RK4 of ``bench_jit.py`` (``s = state.copy()``, ``np.empty_like(s)``),
  differentiated with respect to (σ, ρ, β) only;
* an explicit 1-D reaction-diffusion stencil on 64 cells with ``np.zeros`` buffers and an
  allocating helper, differentiated with respect to (D, k).

For each: the plain float call, ``duals.jvp`` (one direction), ``duals.jacfwd`` over the
parameters, central finite differences (2 runs per parameter), and the first call of the
Jacobian in a fresh process with cold caches (the failed plain typing attempt plus the
promoting compilation). Threads are pinned to one. Prints a markdown table.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks import _threads  # noqa: E402,F401  (one thread, before NumPy and Numba)

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from benchmarks._steady import drivers_at_once  # noqa: E402
from benchmarks.bench_jit import SIGMA, RHO, BETA, DT, X0, best, lorenz_rk4  # noqa: E402

drivers_at_once()   # the timed repetitions stand for a long loop


@numba.njit(cache=True)
def laplacian(u, dx):
    out = np.zeros_like(u)
    for i in range(1, u.size - 1):
        out[i] = (u[i - 1] - 2.0 * u[i] + u[i + 1]) / (dx * dx)
    return out


@numba.njit(cache=True)
def reaction_diffusion(u0, d, k, steps, dt, dx):
    u = np.zeros(u0.size)
    u[:] = u0
    for _ in range(steps):
        lap = laplacian(u, dx)
        for i in range(1, u.size - 1):
            u[i] = u[i] + dt * (d * lap[i] - k * u[i] * u[i])
    return u


U0 = np.sin(np.linspace(0.0, np.pi, 64))
CELL = 1.0 / 63


def cases(n):
    """name -> (plain(), args, parameter positions)."""
    return {
        "Lorenz RK4, 3 parameters": ((SIGMA, RHO, BETA, X0, DT, n), (0, 1, 2)),
        "reaction-diffusion, 64 cells, 2 parameters": ((U0, 0.7, 1.3, n, 2e-5, CELL), (1, 2)),
    }


KERNELS = {"Lorenz RK4, 3 parameters": lorenz_rk4,
           "reaction-diffusion, 64 cells, 2 parameters": reaction_diffusion}


def finite_differences(f, args, nums, h=1e-6):
    cols = []
    for k in nums:
        up, down = list(args), list(args)
        up[k] += h
        down[k] -= h
        cols.append((f(*up) - f(*down)) / (2 * h))
    return cols


def child(n):
    out = {}
    for name, (args, nums) in cases(n).items():
        t = time.perf_counter()
        duals.jacfwd(KERNELS[name], argnums=nums)(*args)
        out[name] = time.perf_counter() - t
    print(json.dumps(out))


def first_calls(n):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                   DUALS_CACHE_DIR=os.path.join(tmp, "duals"))
        done = subprocess.run([sys.executable, __file__, "--child", "--steps", str(n)],
                              env=env, capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="short timings, no fresh-process compile")
    parser.add_argument("--child", action="store_true")
    options = parser.parse_args()
    n = options.steps
    if options.child:
        return child(n)
    cold = {} if options.quick else first_calls(n)
    repeat, budget = (3, 0.03) if options.quick else (7, 0.2)
    print(f"Parameter-only sensitivities, N = {n} steps, numba {numba.__version__}, "
          f"numpy {np.__version__}, one thread\n")
    print("| kernel | plain | jvp / f | jacfwd / f | FD / f | jacfwd first call, cold |")
    print("|---|---|---|---|---|---|")
    for name, (args, nums) in cases(n).items():
        f = KERNELS[name]
        jac = duals.jacfwd(f, argnums=nums)
        tangents = tuple(1.0 if i == nums[0] else (0.0 if i in nums else None)
                         for i in range(len(args)))
        for got, fd in zip(jac(*args), finite_differences(f, args, nums)):
            assert np.allclose(got, fd, rtol=1e-5, atol=1e-7), name
        t_plain = best(lambda: f(*args), repeat, budget)
        t_jvp = best(lambda: duals.jvp(f, args, tangents), repeat, budget)
        t_jac = best(lambda: jac(*args), repeat, budget)
        t_fd = best(lambda: finite_differences(f, args, nums), repeat, budget)
        first = f"{cold[name]:.2f} s" if name in cold else ""
        print(f"| {name} | {t_plain * 1e6:.1f} µs | {t_jvp / t_plain:.2f}× | {t_jac / t_plain:.2f}× "
              f"| {t_fd / t_plain:.2f}× | {first} |")
        if name.startswith("Lorenz"):
            # the workaround promotion replaces: differentiate the state too (no promotion needed)
            wide = duals.jacfwd(f, argnums=(0, 1, 2, 3))
            t_wide = best(lambda: wide(*args), repeat, budget)
            print(f"| {name}: the state too (6 lanes, no promotion) | | | {t_wide / t_plain:.2f}× | | |")


if __name__ == "__main__":
    main()
