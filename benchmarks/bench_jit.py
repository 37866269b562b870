"""Compiled forward mode on a Lorenz RK4 integrator: cost relative to the plain @njit function.

    python benchmarks/bench_jit.py [--steps 1000] [--no-first-calls]

Measures, in one run on this machine: the plain float function, ``duals.jvp`` (one
direction), ``duals.jacfwd`` over the 6 parameters (σ, ρ, β, x₀, y₀, z₀), central finite
differences (12 plain runs), the same dual calls without the Python entry point (the
dispatcher called on prepared dual arguments), and the compile time of the first call in a
fresh process with a cold cache and again with the warm cache, and of the compiled driver a
long loop gets (built here at the third call). Prints a markdown table. ``--no-first-calls``
leaves the fresh processes out (``python -m benchmarks.run --quick`` does: their columns stay
empty).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import duals  # noqa: E402
from duals.jit import dual_array  # noqa: E402
from benchmarks._steady import drivers_at_once  # noqa: E402
from benchmarks.systems import peers_skipped  # noqa: E402

drivers_at_once()   # the timed repetitions stand for a long loop


@numba.njit(cache=True)
def lorenz_rhs(s, sigma, rho, beta, out):
    out[0] = sigma * (s[1] - s[0])
    out[1] = s[0] * (rho - s[2]) - s[1]
    out[2] = s[0] * s[1] - beta * s[2]


@numba.njit(cache=True)
def lorenz_rk4(sigma, rho, beta, state, dt, n):
    s = state.copy()
    k1 = np.empty_like(s)
    k2 = np.empty_like(s)
    k3 = np.empty_like(s)
    k4 = np.empty_like(s)
    tmp = np.empty_like(s)
    for _ in range(n):
        lorenz_rhs(s, sigma, rho, beta, k1)
        for i in range(3):
            tmp[i] = s[i] + 0.5 * dt * k1[i]
        lorenz_rhs(tmp, sigma, rho, beta, k2)
        for i in range(3):
            tmp[i] = s[i] + 0.5 * dt * k2[i]
        lorenz_rhs(tmp, sigma, rho, beta, k3)
        for i in range(3):
            tmp[i] = s[i] + dt * k3[i]
        lorenz_rhs(tmp, sigma, rho, beta, k4)
        for i in range(3):
            s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    return s


SIGMA, RHO, BETA, DT = 10.0, 28.0, 8.0 / 3.0, 0.01
X0 = np.array([1.0, 1.0, 1.0])


def plain(n):
    return lorenz_rk4(SIGMA, RHO, BETA, X0, DT, n)


def jvp(n):
    return duals.jvp(lorenz_rk4, (SIGMA, RHO, BETA, X0, DT, n),
                     (1.0, 0.0, 0.0, np.zeros(3), None, None))


JAC = duals.jacfwd(lorenz_rk4, argnums=(0, 1, 2, 3))


def jacfwd(n):
    return JAC(SIGMA, RHO, BETA, X0, DT, n)


def finite_differences(n, h=1e-6):
    p = np.array([SIGMA, RHO, BETA, *X0])
    cols = []
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        a, b = p + e, p - e
        cols.append((lorenz_rk4(a[0], a[1], a[2], a[3:], DT, n)
                     - lorenz_rk4(b[0], b[1], b[2], b[3:], DT, n)) / (2 * h))
    return np.stack(cols, axis=-1)


def kernel_args(lanes):
    """Dual arguments prepared once, to time the compiled code without the entry point."""
    seeds = np.eye(6)[:lanes]
    sc = [dual_array(v, seeds[:, k])[()] for k, v in enumerate((SIGMA, RHO, BETA))]
    return (*sc, dual_array(X0, seeds[:, 3:]), DT)


def best(fn, repeat=7, budget=0.2):
    fn()
    loops = 1
    while True:
        t = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - t > budget / repeat or loops > 1 << 20:
            break
        loops *= 2
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - t) / loops)
    return min(times)


def child(n):
    """Run in a fresh process: time of the first call of each function (compile or cache load)
    and, for the derivatives, of the third: the compiled driver's compilation (drivers are not
    cached on disk)."""
    out = {}
    for name, fn in (("plain", lambda: plain(n)), ("jvp", lambda: jvp(n)),
                     ("jacfwd", lambda: jacfwd(n))):
        t = time.perf_counter()
        fn()
        out[name] = time.perf_counter() - t
        if name != "plain":
            fn()
            t = time.perf_counter()
            fn()
            out[name + " driver"] = time.perf_counter() - t
    print(json.dumps(out))


def first_calls(n):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                   DUALS_CACHE_DIR=os.path.join(tmp, "duals"))
        runs = []
        for _ in range(2):
            res = subprocess.run([sys.executable, __file__, "--child", "--steps", str(n)],
                                 env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
        return runs


def jax_jacfwd(n):
    """JAX's ``jit(jacfwd)`` over ``lax.fori_loop``, the same RK4; None when JAX is missing (or
    left out by ``python -m benchmarks.run --no-peers``)."""
    if peers_skipped():
        return None
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def rhs(s, p):
        return jnp.stack([p[0] * (s[1] - s[0]), s[0] * (p[1] - s[2]) - s[1], s[0] * s[1] - p[2] * s[2]])

    def run(p6):
        p, s0 = p6[:3], p6[3:]

        def step(_, s):
            k1 = rhs(s, p)
            k2 = rhs(s + 0.5 * DT * k1, p)
            k3 = rhs(s + 0.5 * DT * k2, p)
            k4 = rhs(s + DT * k3, p)
            return s + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return jax.lax.fori_loop(0, n, step, s0)

    jac = jax.jit(jax.jacfwd(run))
    p6 = jnp.array([SIGMA, RHO, BETA, *X0])
    J = np.asarray(jac(p6))
    assert np.allclose(J[:, 3:], finite_differences(n)[:, 3:], rtol=1e-4, atol=1e-6)
    return lambda: jac(p6).block_until_ready()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--no-first-calls", action="store_true")
    args = parser.parse_args()
    n = args.steps
    if args.child:
        return child(n)
    cold, warm = ({}, {}) if args.no_first_calls else first_calls(n)
    J = jacfwd(n)
    assert np.allclose(J[3], finite_differences(n)[:, 3:], rtol=1e-4, atol=1e-6)
    k1, k6 = kernel_args(1), kernel_args(6)
    t_plain = best(lambda: plain(n))
    rows = [
        ("plain @njit (floats)", t_plain, "plain"),
        ("duals.jvp, 1 direction", best(lambda: jvp(n)), "jvp"),
        ("duals.jacfwd, 6 parameters", best(lambda: jacfwd(n)), "jacfwd"),
        ("  dispatcher on 1-lane duals (no entry point)", best(lambda: lorenz_rk4(*k1, n)), None),
        ("  dispatcher on 6-lane duals (no entry point)", best(lambda: lorenz_rk4(*k6, n)), None),
        ("central finite differences (12 runs)", best(lambda: finite_differences(n)), None),
    ]
    jax_call = jax_jacfwd(n)
    if jax_call is not None:
        rows.append(("JAX jit(jacfwd) over lax.fori_loop", best(jax_call), None))
    print(f"Lorenz RK4, N = {n} steps, numba {numba.__version__}, numpy {np.__version__}\n")
    print("| method | time per call | ratio to plain | first call, cold cache | first call, warm cache "
          "| driver's compilation, cold / warm cache |")
    print("|---|---|---|---|---|---|")

    def seconds(run, key, digits):
        return f"{run[key]:.{digits}f} s" if key in run else ""
    for name, t, key in rows:
        cs, ws = (seconds(cold, key, 2), seconds(warm, key, 3)) if key else ("", "")
        driver = f"{seconds(cold, key + ' driver', 2)} / {seconds(warm, key + ' driver', 2)}" \
            if key and key + " driver" in cold else ""
        print(f"| {name} | {t * 1e6:.1f} µs | {t / t_plain:.2f}× | {cs} | {ws} | {driver} |")


if __name__ == "__main__":
    main()
