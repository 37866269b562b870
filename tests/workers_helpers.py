"""Functions that tests/test_workers.py sends to other processes: at module level in an importable
module (tests/ is on sys.path through conftest.py), so that they pickle by reference; the compiled
ones with cache=True, so that workers load them from Numba's cache instead of compiling."""
import math
import os

import numba
import numpy as np


def numpy_model(x, A):
    """A vector function whose lanes meet in a matrix product (BLAS)."""
    return np.tanh(A @ np.sin(x)) * np.exp(-0.5 * x[:2].sum())


def numpy_scalar(x):
    return np.sum(np.sin(x[1:]) ** 3 * x[:-1]) + 0.5 * np.sum(x ** 2)


def numpy_with_aux(params, scale):
    """Containers in and out, with aux: a dict argument, a tuple output."""
    w, b = params["w"], params["b"]
    y = np.tanh(scale * w * b)
    return (y, np.sum(w ** 2)), {"norm": np.sum(y)}


@numba.njit(cache=True)
def compiled_model(x, A):
    out = np.empty_like(x[:A.shape[0]])   # of x's type: duals when x is (no promotion)
    damping = math.exp(-0.5 * (x[0] + x[1]))
    for i in range(A.shape[0]):
        total = 0.0 * x[0]
        for j in range(x.size):
            total += A[i, j] * math.sin(x[j])
        out[i] = math.tanh(total) * damping
    return out


@numba.njit(cache=True)
def compiled_scalar(x):
    total = 0.0
    for i in range(x.size - 1):
        total += math.sin(x[i + 1]) ** 3 * x[i]
    for i in range(x.size):
        total += 0.5 * x[i] * x[i]
    return total


def tridiagonal_residual(x):
    """Broyden's tridiagonal residual: a sparse Jacobian of 3 colours."""
    padded = np.concatenate([np.zeros(1), x, np.zeros(1)])
    return (3.0 - 2.0 * x) * x - padded[:-2] - 2.0 * padded[2:] + 1.0


def chain_energy(x):
    """A scalar whose Hessian is tridiagonal."""
    return np.sum((x[1:] - x[:-1]) ** 4) + np.sum(np.sin(x))


@numba.njit(cache=True)
def compiled_tridiagonal_residual(x):
    out = np.empty_like(x)
    n = x.size
    for i in range(n):
        left = x[i - 1] if i > 0 else 0.0 * x[0]
        right = x[i + 1] if i < n - 1 else 0.0 * x[0]
        out[i] = (3.0 - 2.0 * x[i]) * x[i] - left - 2.0 * right + 1.0
    return out


@numba.njit(cache=True)
def compiled_chain_energy(x):
    total = 0.0 * x[0]
    for i in range(x.size - 1):
        total += (x[i + 1] - x[i]) ** 4
    for i in range(x.size):
        total += math.sin(x[i])
    return total


def fails_above(x):
    """Raises for points whose first entry exceeds 0.9 (a DGSM sample block that fails)."""
    if x[0] > 0.9:
        raise ValueError("model diverged: x[0] > 0.9")
    return np.sum(x ** 2)


def dies_in_a_worker(x, caller_pid):
    """Ends its process without a word when it is not the caller's (a worker that dies)."""
    if os.getpid() != caller_pid:
        os._exit(3)
    return x * 2.0


def alternating_sweep(x, order):
    """A Gauss-Seidel-like sweep that reverses ``order`` in place at every call (the direction
    alternates from call to call): every pass of one Jacobian must start from the same order."""
    order[:] = order[::-1]
    out = np.zeros_like(x)
    acc = 0.0
    for i in order:
        acc = 0.5 * acc + x[i] ** 2
        out = out + acc * (np.arange(x.size) == i)
    return out


@numba.njit(cache=True)
def compiled_alternating_sweep(x, order):
    order[:] = order[::-1].copy()
    out = np.zeros_like(x)
    acc = 0.0
    for i in order:
        acc = 0.5 * acc + x[i] ** 2
        out[i] = acc
    return out


def noisy_square(x):
    """x² times noise from NumPy's global generator: a Jacobian is that of one realisation."""
    return x ** 2 * (1.0 + 0.1 * np.random.normal(size=x.shape))


class SolverDiverged(Exception):
    """An exception whose __init__ takes other arguments than it passes on: it does not unpickle."""

    def __init__(self, step, residual):
        super().__init__(f"diverged at step {step}")
        self.step, self.residual = step, residual


def diverges(x):
    raise SolverDiverged(17, 1e9)


def alternating_energy(x, order):
    return np.sum(alternating_sweep(x, order) ** 2)


@numba.njit(cache=True)
def compiled_alternating_energy(x, order):
    return np.sum(compiled_alternating_sweep(x, order) ** 2)


def noisy_square_of(x, rng):
    """x² times noise drawn from the generator it is given."""
    return x ** 2 * (1.0 + 0.1 * rng.normal(size=x.shape))


def interrupted_in_a_worker(x, caller_pid):
    """In a worker: interrupt the caller (as Ctrl-C in a terminal does) and keep the worker busy."""
    import signal
    import time
    if os.getpid() != caller_pid:
        os.kill(caller_pid, signal.SIGINT)
        time.sleep(60)
    return x * 2.0
