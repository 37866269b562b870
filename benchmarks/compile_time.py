"""python benchmarks/compile_time.py [--kernels svd,qr] [--reverse]: first-call compile time of
compiled derivatives of small linear-algebra kernels, each in a new process with empty caches.

What a user waits for the first time ``duals.jacfwd`` (or ``duals.grad`` with ``--reverse``) of an
``@njit`` function calling ``np.linalg`` runs: Numba typing, lowering and LLVM for the dual
specialisation. The plain function is compiled first and not counted. Numba's optimisation
level is the user's (``NUMBA_OPT``, default 3), not the test suite's 1.
"""
import argparse
import os
import subprocess
import sys
import tempfile

KERNELS = {
    "matmul": "(a @ a.T) @ np.ascontiguousarray(a[:, 0])",
    "solve": "np.linalg.solve(a @ a.T + np.eye(a.shape[0]), np.ascontiguousarray(a[:, 0]))",
    "inv_det": "np.linalg.inv(a[:3, :3]) * np.linalg.det(a[:3, :3])",
    "cholesky": "np.linalg.cholesky(a @ a.T + np.eye(a.shape[0]))[1]",
    "lstsq": "np.linalg.lstsq(a, a[:, 0] + 1.0)[0]",
    "pinv": "np.linalg.pinv(a) @ np.ascontiguousarray(a[:, 0])",
    "svd": "np.linalg.svd(a, full_matrices=False)[1] * np.linalg.svd(a, full_matrices=False)[0][0, 0]",
    "eigh": "np.linalg.eigh(a[:3, :3] + a[:3, :3].T)[0]",
    "qr": "np.linalg.qr(a)[0][0] + np.linalg.qr(a)[1][0]",
}

CHILD = """
import time, numpy as np, numba, duals
f = numba.njit(lambda a: {body})
g = numba.njit(lambda a: np.sum(f(a) ** 2))
a = np.random.default_rng(0).standard_normal((4, 3))
{target}(a)
start = time.perf_counter()
{call}(a)
print(time.perf_counter() - start)
"""


def first_call(name, reverse):
    """Seconds of the first derivative call of kernel ``name``, in a fresh process and caches."""
    target, call = ("g", "duals.grad(g)") if reverse else ("f", "duals.jacfwd(f)")
    code = CHILD.format(body=KERNELS[name], target=target, call=call)
    with tempfile.TemporaryDirectory() as numba_cache, tempfile.TemporaryDirectory() as duals_cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache, DUALS_CACHE_DIR=duals_cache,
                   NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, cwd=duals_cache,
                              capture_output=True, text=True, timeout=600)  # cwd: not a checkout
    if done.returncode:
        return f"failed: {done.stderr.strip().splitlines()[-1]}"
    return float(done.stdout.split()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated names")
    parser.add_argument("--reverse", action="store_true", help="duals.grad instead of duals.jacfwd")
    args = parser.parse_args(argv)
    mode = "grad" if args.reverse else "jacfwd"
    print(f"| kernel | first {mode} (s) |\n|---|---:|")
    for name in args.kernels.split(","):
        seconds = first_call(name, args.reverse)
        print(f"| {name} | {seconds:.1f} |" if isinstance(seconds, float) else f"| {name} | {seconds} |")


if __name__ == "__main__":
    main()
