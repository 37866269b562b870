"""python -m benchmarks.hessian_modes [--quick]: the Hessian of an @njit function, forward over
forward (nested duals, ``duals.jit.compiled_hessian``) against forward over reverse (one recording
over duals and a sweep, ``duals.jit.compiled_hessian_rev``, what ``duals.hessian`` takes for a
scalar output).

For each kernel, each mode runs in a new process with empty caches: the first call (typing,
lowering and LLVM of the derivative's specialisation; the plain function is compiled first and
not counted) and the time per call after it, single-threaded, at Numba's optimisation level of
the user (``NUMBA_OPT``, default 3). The two Hessians must agree to rounding. Prints a markdown
table with the ratios over reverse.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks import _threads  # noqa: E402,F401  (one thread, before NumPy and Numba)
from benchmarks._steady import per_call  # noqa: E402

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402


@numba.njit
def lorenz_energy(p, x0):
    """Explicit Euler over 200 steps, the energy of the end state: 6 inputs."""
    s = x0.copy()
    for _ in range(200):
        k = np.empty_like(s)
        k[0] = p[0] * (s[1] - s[0])
        k[1] = s[0] * (p[1] - s[2]) - s[1]
        k[2] = s[0] * s[1] - p[2] * s[2]
        s = s + 0.005 * k
    return np.sum(s * s)


@numba.njit
def rosenbrock_loop(x):
    acc = 0.0
    for i in range(x.shape[0] - 1):
        acc += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return acc


@numba.njit
def rosenbrock_numpy(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit
def huber_regression(w, A, y):
    r = A @ w - y
    a = np.abs(r)
    return np.sum(np.where(a <= 0.5, 0.5 * r ** 2, 0.5 * (a - 0.25)))


@numba.njit
def matched_filter(signal, template):
    score = np.correlate(signal, template, "same")
    acf = np.correlate(signal - np.mean(signal), signal - np.mean(signal), "full")
    return np.sum(score ** 2) + np.sum(acf[signal.shape[0]:] ** 2)


@numba.njit
def gp_log_likelihood(theta, t, y):
    """Squared-exponential Gaussian process: cholesky, two triangular solves, log det."""
    n = t.shape[0]
    K = np.empty((n, n), dtype=theta.dtype)
    for i in range(n):
        for j in range(n):
            K[i, j] = theta[0] ** 2 * np.exp(-0.5 * (t[i] - t[j]) ** 2 / theta[1] ** 2)
        K[i, i] += theta[2] ** 2
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * np.dot(y, alpha) + np.sum(np.log(np.diag(L)))


def _cases():
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 3.0, 6)
    return {
        "Lorenz energy, scalar loop (6 inputs)": (lorenz_energy, (np.array([10.0, 28.0, 8 / 3]), np.ones(3)), (0, 1)),
        "Rosenbrock, scalar loop (5)": (rosenbrock_loop, (np.array([0.9, -0.4, 1.3, 0.2, 0.5]),), 0),
        "Rosenbrock, NumPy (5)": (rosenbrock_numpy, (np.array([0.9, -0.4, 1.3, 0.2, 0.5]),), 0),
        "Huber regression, A @ w and where (3)": (
            huber_regression, (np.array([0.2, -0.9, 0.45]), rng.normal(size=(5, 3)), rng.normal(size=5)), 0),
        "matched filter, np.correlate (8)": (matched_filter, (rng.normal(size=8), rng.normal(size=3)), 0),
        "Gaussian process, cholesky and solve (3)": (gp_log_likelihood, (np.array([1.1, 0.7, 0.3]), t, np.sin(t)), 0),
    }


QUICK = ("Rosenbrock, scalar loop (5)",)
MODES = ("forward over forward", "forward over reverse")


def _per_call(fn, budget=0.3, repeat=5):
    """Best time per call over ``repeat`` samples, each a loop of about budget / repeat seconds."""
    t = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t, 1e-7)
    return per_call(fn, max(1, int(budget / repeat / once)), repeat)


def child(case, mode):
    """In a fresh process: the first call of ``mode``'s Hessian of ``case``, then its time per call."""
    import duals
    f, args, argnums = _cases()[case]
    f(*args)
    make = duals.jit.compiled_hessian if mode == MODES[0] else duals.jit.compiled_hessian_rev
    hess = make(f, argnums=argnums)
    t = time.perf_counter()
    H = hess(*args)
    first = time.perf_counter() - t
    if isinstance(H, tuple):
        H = np.block([[np.atleast_2d(b) for b in row] for row in H])
    print(json.dumps({"first": first, "per_call": _per_call(lambda: hess(*args)), "H": np.asarray(H).tolist()}))


def _run_child(case, mode):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"), DUALS_CACHE_DIR=os.path.join(tmp, "duals"))
        done = subprocess.run([sys.executable, "-m", "benchmarks.hessian_modes", "--child", case, mode],
                              env=env, capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)) or ".")
    if done.returncode != 0:
        raise RuntimeError(f"{case}, {mode}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one small kernel")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    print(f"Compiled Hessians, numba {numba.__version__}, NUMBA_OPT={os.environ.get('NUMBA_OPT', '3')}, "
          f"one thread, each mode in a new process with empty caches\n")
    print("| kernel | first call, over forward | over reverse | ratio | per call, over forward | over reverse | ratio |")
    print("|---|---|---|---|---|---|---|")
    for case in (QUICK if args.quick else _cases()):
        fwd, rev = (_run_child(case, mode) for mode in MODES)
        Hf, Hr = np.array(fwd["H"]), np.array(rev["H"])
        scale = max(np.abs(Hf).max(), 1.0)
        assert np.abs(Hf - Hr).max() <= 1e-12 * scale, f"{case}: the two Hessians differ"
        print(f"| {case} | {fwd['first']:.2f} s | {rev['first']:.2f} s | {fwd['first'] / rev['first']:.2f}× "
              f"| {fwd['per_call'] * 1e6:.1f} µs | {rev['per_call'] * 1e6:.1f} µs "
              f"| {fwd['per_call'] / rev['per_call']:.2f}× |")


if __name__ == "__main__":
    main()
