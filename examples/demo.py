"""A two-minute tour of duals: the derivatives of a small damped-oscillator model.

    python examples/demo.py

The model is the position of a damped oscillator after time ``t``,
``x(t) = A·exp(-γt)·cos(ωt)``, as a function of its parameters ``p = (A, γ, ω)`` and of
the time grid. We differentiate it four ways and check every result against central
finite differences: ``jvp`` (one directional derivative), ``jacfwd`` and ``jacrev`` (the
full Jacobian by forward and reverse mode), ``hessian`` of a least-squares loss, and the
same integrator written as an unchanged ``@numba.njit`` loop, differentiated compiled.
The script exits non-zero if any check fails.
"""
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numba
import numpy as np

import duals
from duals.testing import numerical_jacobian

T = np.linspace(0.0, 10.0, 50)


def oscillator(p, t=T):
    """Positions of a damped oscillator with amplitude, damping and frequency ``p``."""
    amplitude, damping, frequency = p[0], p[1], p[2]
    return amplitude * np.exp(-damping * t) * np.cos(frequency * t)


def loss(p):
    """Least-squares misfit against data made with p = (1.0, 0.3, 2.0)."""
    data = oscillator(np.array([1.0, 0.3, 2.0]))
    return np.sum((oscillator(p) - data) ** 2)


@numba.njit   # no cache=True: run as a script and loaded by the tests, its cache would name two modules
def integrate(p, x0, steps, dt):
    """Semi-implicit Euler for x'' = -2γx' - ω²x, written as a plain loop."""
    x, v = x0[0], x0[1]
    path = np.empty(steps, dtype=p.dtype)
    for k in range(steps):
        v = v + dt * (-2.0 * p[0] * v - p[1] * p[1] * x)
        x = x + dt * v
        path[k] = x
    return path


def check(name, got, expected, tol):
    error = float(np.max(np.abs(np.asarray(got) - np.asarray(expected))))
    scale = max(1.0, float(np.max(np.abs(expected))))
    ok = error <= tol * scale
    print(f"  {name:<42} max |error| vs finite differences = {error:.2e}  {'ok' if ok else 'FAILED'}")
    return ok


def main():
    print(_blas_threads.describe())
    p = np.array([1.2, 0.25, 1.9])
    results = []
    print(f"duals {duals.__version__}: derivatives of x(t) = A·exp(-γt)·cos(ωt), p = (A, γ, ω) = {p}\n")

    direction = np.array([0.0, 1.0, 0.0])
    x, dx = duals.jvp(oscillator, (p,), (direction,))
    fd = numerical_jacobian(oscillator, (p,), 0) @ direction
    print("jvp: sensitivity of the trajectory to the damping γ")
    results.append(check("jvp(oscillator, (p,), (e_γ,))", dx, fd, 1e-6))

    start = time.perf_counter()
    J_fwd = duals.jacfwd(oscillator)(p)
    J_rev = duals.jacrev(oscillator)(p)
    elapsed = time.perf_counter() - start
    print(f"\njacfwd / jacrev: the {J_fwd.shape} Jacobian ∂x(t_i)/∂p_j "
          f"(both, first call with kernel compilation: {elapsed * 1e3:.0f} ms)")
    results.append(check("jacfwd(oscillator)(p)", J_fwd, numerical_jacobian(oscillator, (p,), 0), 1e-6))
    results.append(check("jacrev(oscillator)(p) vs jacfwd", J_rev, J_fwd, 1e-12))

    value, gradient, H = duals.value_grad_hessian(loss)(p)
    print(f"\nvalue_grad_hessian: loss = {value:.4f}, ‖∇loss‖ = {np.linalg.norm(gradient):.4f}")
    results.append(check("grad(loss)(p)", gradient, numerical_jacobian(loss, (p,), 0), 1e-6))
    results.append(check("hessian(loss)(p) (forward over reverse)", H,
                         numerical_jacobian(duals.grad(loss), (p,), 0), 1e-5))
    step = np.linalg.solve(H, gradient)
    print(f"  one Newton step from p: {p - step}  (data made with [1.0, 0.3, 2.0])")

    params, x0 = np.array([0.2, 1.5]), np.array([1.0, 0.0])
    start = time.perf_counter()
    J_compiled = duals.jacfwd(integrate)(params, x0, 200, 0.01)
    elapsed = time.perf_counter() - start
    fd = numerical_jacobian(lambda q: integrate(q, x0, 200, 0.01), (params,), 0)
    print(f"\njacfwd of an unchanged @numba.njit loop: {J_compiled.shape} Jacobian "
          f"(first call, compilation included: {elapsed:.2f} s)")
    results.append(check("jacfwd(integrate)(params, x0, 200, 0.01)", J_compiled, fd, 1e-6))

    print(f"\n{sum(results)} of {len(results)} checks passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
