"""python -m benchmarks.page_faults: W1's gradient and its page faults per call, in fresh processes.

Whether a large gradient pays page faults on every call depends on what the process allocated
before (glibc hands large free blocks at the top of its heap back to the kernel). Each line is
one fresh interpreter, single-threaded, default allocator, timing Rosenbrock at n = 10⁵ (best of
200 calls) and counting minor page faults per call, ``f`` and ``grad`` in the order given: the
order alone puts a process in one state or the other.
"""
import subprocess
import sys

_CHILD = r'''
import os, sys
for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[k] = "1"
import resource, time
import numpy as np
import duals

def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

x = np.linspace(-1.5, 1.5, 100_000)
grad = duals.grad(rosen)
grad(x)
calls = {"f": lambda: rosen(x), "grad": lambda: grad(x)}
out = []
for name in sys.argv[1].split(","):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    best = 1e9
    for _ in range(200):
        t = time.perf_counter(); calls[name](); best = min(best, time.perf_counter() - t)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200
    out.append(f"{name} {best * 1e3:.3f} ms, {faults:.0f} faults/call")
print("; ".join(out))
'''


def main():
    for order in ("grad,f", "f,grad"):
        result = subprocess.run([sys.executable, "-c", _CHILD, order], capture_output=True, text=True,
                                check=True)
        print(f"order {order:7s} {result.stdout.strip()}")


if __name__ == "__main__":
    main()
