"""Complex numbers: the cost of jvp and grad relative to the complex NumPy function.

    python benchmarks/complex.py [--quick] [--n 100000]

Four functions written with complex NumPy, ``n`` = 10⁵ entries, one thread (``_threads`` and
threadpoolctl; Numba's threads 1):

* ``rlc``: the impedance magnitudes ``|R + iωL + 1/(iωC)|`` of a frequency sweep, real inputs
  ``R, L, C`` per frequency (``examples/rlc_impedance.py``); jvp along ``L``, grad of the sum;
* ``waves``: the intensity ``Σ |Σ_k a_k e^{i k_k x}|²`` of eight plane waves at ``n`` points
  ``x`` (real input, complex intermediates, a complex matrix product); jvp along ``x``, grad;
* ``fft filter``: ``Σ irfft(rfft(x) · H)²``, a real signal through a complex transfer function;
* ``complex input``: ``Σ |e^z z² + sin z|²`` of a complex ``z`` (JAX's convention for the
  gradient), jvp along a complex direction.

For each: the time of f, of ``duals.jvp`` (one tangent) and of ``duals.grad`` of the real scalar,
as ratios to f (aim ≤ 3×; nothing is asserted). Every derivative is checked: the jvp against
central differences and the gradient against the jvp (``Re Σ g·t`` equals the directional
derivative), so a wrong number makes the run fail. ``--quick`` runs 10³ entries once (the test).
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks import _threads  # noqa: E402,F401  (one thread, before NumPy and Numba)

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import duals  # noqa: E402
from benchmarks.bench_jit import best  # noqa: E402


def rlc(n):
    omega = 2 * np.pi * np.logspace(1, 5, n)
    rng = np.random.default_rng(0)
    R, C = 50.0 * (1 + 0.1 * rng.random(n)), 1e-6 * (1 + 0.1 * rng.random(n))
    L = 10e-3 * (1 + 0.1 * rng.random(n))

    def f(L):
        return np.abs(R + 1j * omega * L + 1.0 / (1j * omega * C))
    return f, L, rng.standard_normal(n) * 1e-3


def waves(n):
    rng = np.random.default_rng(1)
    k = np.linspace(1.0, 8.0, 8)
    a = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    x = np.linspace(0.0, 10.0, n)

    def f(x):
        return np.abs(np.exp(1j * np.outer(x, k)) @ a) ** 2
    return f, x, rng.standard_normal(n)


def fft_filter(n):
    rng = np.random.default_rng(2)
    freq = np.fft.rfftfreq(n)
    H = 1.0 / (1.0 + 1j * freq / 0.05)            # a first-order low-pass filter

    def f(x):
        return np.fft.irfft(np.fft.rfft(x) * H, n=n) ** 2
    return f, rng.standard_normal(n), rng.standard_normal(n)


def complex_input(n):
    rng = np.random.default_rng(3)
    z = 0.5 * (rng.standard_normal(n) + 1j * rng.standard_normal(n))

    def f(z):
        return np.abs(np.exp(z) * z ** 2 + np.sin(z)) ** 2
    return f, z, rng.standard_normal(n) + 1j * rng.standard_normal(n)


CASES = {"rlc": rlc, "waves": waves, "fft filter": fft_filter, "complex input": complex_input}


def check(name, f, x, t):
    """The jvp against central differences, the gradient against the jvp; raises if either fails."""
    total = lambda y: np.sum(f(y))  # noqa: E731
    _, jt = duals.jvp(f, (x,), (t,))
    h = 1e-6 * max(1.0, float(np.max(np.abs(x)))) / max(1.0, float(np.max(np.abs(t))))
    fd = (f(x + h * t) - f(x - h * t)) / (2 * h)
    err_fwd = float(np.max(np.abs(jt - fd)) / max(np.max(np.abs(fd)), 1e-300))
    g = duals.grad(total)(x)
    err_rev = abs(float(np.sum(g * t).real) - float(np.sum(jt))) / max(float(np.sum(np.abs(jt))), 1e-300)
    if not (err_fwd < 1e-5 and err_rev < 1e-10):
        raise AssertionError(f"{name}: jvp vs differences {err_fwd:.2e}, grad vs jvp {err_rev:.2e}")
    return err_fwd, err_rev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^3 entries, one repetition (the test)")
    ap.add_argument("--n", type=int, default=100_000)
    args = ap.parse_args(argv)
    n = 1000 if args.quick else args.n
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(1)
    except ImportError:   # the environment variables of _threads already ask for one thread
        limits = None
    timer = (lambda fn: best(fn, repeat=1, budget=0.01)) if args.quick else best
    print(f"complex NumPy functions at n = {n:,}, one thread; times relative to f (aim <= 3x)")
    print(f"{'function':>14} {'f (ms)':>9} {'jvp':>7} {'grad':>7}   {'jvp vs FD':>9} {'grad vs jvp':>11}")
    for name, make in CASES.items():
        f, x, t = make(n)
        err_fwd, err_rev = check(name, f, x, t)
        total = lambda y, f=f: np.sum(f(y))  # noqa: E731
        gradient = duals.grad(total)
        t_f = timer(lambda: f(x))
        t_jvp = timer(lambda: duals.jvp(f, (x,), (t,)))
        t_grad = timer(lambda: gradient(x))
        print(f"{name:>14} {t_f * 1e3:9.3f} {t_jvp / t_f:6.2f}x {t_grad / t_f:6.2f}x   "
              f"{err_fwd:9.1e} {err_rev:11.1e}")
    if limits is not None:
        limits.unregister()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
