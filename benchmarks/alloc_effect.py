"""python -m benchmarks.alloc_effect: what duals.tune_allocator() buys, measured in two processes.

The allocator setting cannot be undone inside a process, so each configuration runs in a fresh
interpreter (single-threaded, best of k, gc off while timing). Printed: Rosenbrock gradient at
n = 10⁵ (W1), Hessian at n = 300 and hvp at n = 10⁵ (W2), and a where-guarded gradient at 10⁵.
"""
import json
import subprocess
import sys

_CHILD = r'''
import os, sys
for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[k] = "1"
import gc, json, time
import numpy as np
import duals
tuned = duals.tune_allocator() if sys.argv[1] == "tuned" else False

def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

def guarded(x):
    return np.sum(np.where(x > 0, np.sqrt(np.abs(x)) * np.log1p(x * x), 0.0))

def best(fn, k=15):
    fn()
    gc.disable()
    try:
        times = []
        for _ in range(k):
            t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    finally:
        gc.enable()
    return min(times)

x5 = np.cos(np.arange(100_000)) * 0.5 + 1.0
x3 = x5[:300].copy()
v5 = np.sin(np.arange(100_000))
g, h, gw = duals.grad(rosen), duals.hessian(rosen), duals.grad(guarded)
print(json.dumps({
    "tuned": tuned,
    "f n=1e5 (ms)": best(lambda: rosen(x5)) * 1e3,
    "W1 grad n=1e5 (ms)": best(lambda: g(x5)) * 1e3,
    "W2 hessian n=300 (ms)": best(lambda: h(x3), 5) * 1e3,
    "W2 hvp n=1e5 (ms)": best(lambda: duals.hvp(rosen, x5, v5), 5) * 1e3,
    "where-guarded grad n=1e5 (ms)": best(lambda: gw(x5 - 1.0)) * 1e3,
}))
'''


def main():
    rows = {}
    for config in ("default", "tuned", "default", "tuned"):   # interleaved: the machine drifts
        out = subprocess.run([sys.executable, "-c", _CHILD, config], capture_output=True,
                             text=True, check=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        for key, value in result.items():
            if key != "tuned":
                rows.setdefault(key, {}).setdefault(config, []).append(value)
    print(f"{'workload':34} {'default':>10} {'tuned':>10} {'ratio':>7}")
    for key, by in rows.items():
        d, t = min(by["default"]), min(by["tuned"])
        print(f"{key:34} {d:10.3f} {t:10.3f} {d / t:7.2f}")


if __name__ == "__main__":
    main()
