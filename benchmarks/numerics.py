"""Floors that every workload shares: central finite differences and optional Numba."""
import numpy as np

from .timing import Unavailable


def central_gradient(f, x, rel_step=1e-6):
    """central_gradient(f, x) -> ∂f/∂x by 2n evaluations of ``f``."""
    g = np.empty_like(x)
    xp = x.copy()
    for i in range(x.size):
        h = rel_step * max(1.0, abs(x[i]))
        xp[i] = x[i] + h
        up = f(xp)
        xp[i] = x[i] - h
        down = f(xp)
        xp[i] = x[i]
        g[i] = (up - down) / (2 * h)
    return g


def central_jacobian(f, x, rel_step=1e-6):
    """central_jacobian(f, x) -> (m, n) Jacobian by 2n evaluations of ``f``."""
    columns = []
    xp = x.copy()
    for i in range(x.size):
        h = rel_step * max(1.0, abs(x[i]))
        xp[i] = x[i] + h
        up = np.asarray(f(xp))
        xp[i] = x[i] - h
        down = np.asarray(f(xp))
        xp[i] = x[i]
        columns.append((up - down) / (2 * h))
    return np.stack(columns, axis=-1)


def central_directional(f, x, t, rel_step=1e-6):
    """central_directional(f, x, t) -> J·t by two evaluations of ``f``."""
    h = rel_step * max(1.0, float(np.max(np.abs(x))))
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def njit(fn, cache=True):
    """njit(fn, cache=True) -> ``numba.njit(fn)`` (raises Unavailable if Numba cannot be imported)."""
    try:
        import numba
    except Exception as exc:
        raise Unavailable(f"numba not importable ({type(exc).__name__})") from None
    return numba.njit(cache=cache)(fn)
