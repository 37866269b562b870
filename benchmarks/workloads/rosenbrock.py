"""Rosenbrock's function, its exact gradient, Hessian and Hessian-vector product."""
import numpy as np


def rosenbrock(x, xp=np):
    """rosenbrock(x) -> sum(100 (x[1:] - x[:-1]²)² + (1 - x[:-1])²), in namespace ``xp``."""
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_loop(x):
    """rosenbrock_loop(x) -> the same sum as a scalar loop (for Numba)."""
    total = 0.0
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        total += 100.0 * a * a + b * b
    return total


def rosenbrock_grad(x):
    """rosenbrock_grad(x) -> the hand-written gradient."""
    a = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * a - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * a
    return g


def _bands(x):
    diag = np.zeros_like(x)
    diag[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    diag[1:] += 200.0
    return diag, -400.0 * x[:-1]


def rosenbrock_hessian(x):
    """rosenbrock_hessian(x) -> the exact (tridiagonal) Hessian as a dense array."""
    diag, off = _bands(x)
    return np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)


def rosenbrock_hvp(x, v):
    """rosenbrock_hvp(x, v) -> H(x) v from the two bands, without forming H."""
    diag, off = _bands(x)
    out = diag * v
    out[:-1] += off * v[1:]
    out[1:] += off * v[:-1]
    return out


def start(n):
    """start(n) -> linspace(-1.5, 1.5, n), the point of W1 and W2."""
    return np.linspace(-1.5, 1.5, n)
