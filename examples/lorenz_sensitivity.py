"""Sensitivity of a chaotic Lorenz trajectory to its parameters (sigma, rho, beta).

The Lorenz system  x' = s (y - x),  y' = x (r - z) - y,  z' = x y - b z  is integrated by
a plain ``@numba.njit`` fixed-step RK4 loop.  ``duals.jacfwd`` runs that *unchanged*
compiled code on dual numbers and returns d(state(t))/d(sigma, rho, beta) at every time
step in one pass.  The report shows

* the exponential growth of the sensitivities (the fitted rate is close to the largest
  Lyapunov exponent of the Lorenz attractor, about 0.9), which is what chaos means;
* central finite differences at several step sizes h against the dual result: large h
  suffers truncation error (the trajectory is far from linear in the parameters), small
  h suffers cancellation; the dual result has neither.

Run:  python examples/lorenz_sensitivity.py [--small] [--plot lorenz.png]
"""
import argparse
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


@numba.njit(cache=False)
def lorenz_rk4(p, y0, dt, nsteps):
    """States at t = 0, dt, ..., nsteps*dt; shape (nsteps + 1, 3).  p = (sigma, rho, beta)."""
    out = np.empty((nsteps + 1, 3), dtype=p.dtype)
    y = np.empty(3, dtype=p.dtype)
    for i in range(3):
        y[i] = y0[i]                       # floats stored into the dual buffer
        out[0, i] = y[i]
    s = p[0]
    r = p[1]
    b = p[2]
    for n in range(nsteps):
        x0 = y[0]
        x1 = y[1]
        x2 = y[2]
        a0 = s * (x1 - x0)
        a1 = x0 * (r - x2) - x1
        a2 = x0 * x1 - b * x2
        t0 = x0 + 0.5 * dt * a0
        t1 = x1 + 0.5 * dt * a1
        t2 = x2 + 0.5 * dt * a2
        b0 = s * (t1 - t0)
        b1 = t0 * (r - t2) - t1
        b2 = t0 * t1 - b * t2
        t0 = x0 + 0.5 * dt * b0
        t1 = x1 + 0.5 * dt * b1
        t2 = x2 + 0.5 * dt * b2
        c0 = s * (t1 - t0)
        c1 = t0 * (r - t2) - t1
        c2 = t0 * t1 - b * t2
        t0 = x0 + dt * c0
        t1 = x1 + dt * c1
        t2 = x2 + dt * c2
        d0 = s * (t1 - t0)
        d1 = t0 * (r - t2) - t1
        d2 = t0 * t1 - b * t2
        y[0] = x0 + dt / 6.0 * (a0 + 2.0 * b0 + 2.0 * c0 + d0)
        y[1] = x1 + dt / 6.0 * (a1 + 2.0 * b1 + 2.0 * c1 + d1)
        y[2] = x2 + dt / 6.0 * (a2 + 2.0 * b2 + 2.0 * c2 + d2)
        for i in range(3):
            out[n + 1, i] = y[i]
    return out


def finite_difference(p, y0, dt, nsteps, h):
    """Central differences with relative step h in each parameter; shape (nsteps+1, 3, 3)."""
    cols = []
    for k in range(3):
        e = np.zeros(3)
        e[k] = h * p[k]
        cols.append((lorenz_rk4(p + e, y0, dt, nsteps) - lorenz_rk4(p - e, y0, dt, nsteps))
                    / (2.0 * e[k]))
    return np.stack(cols, axis=-1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="short horizon (CI)")
    ap.add_argument("--plot", metavar="PATH", help="save a figure of |dstate/dp| over time")
    ap.add_argument("--T", type=float, default=None, help="time horizon")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())

    T = args.T if args.T is not None else (10.0 if args.small else 30.0)
    dt = 0.01 if args.small else 0.005
    nsteps = int(round(T / dt))
    p = np.array([10.0, 28.0, 8.0 / 3.0])
    # start on the attractor: burn in from (1, 1, 1) for t = 20 with the plain compiled code
    y0 = lorenz_rk4(p, np.array([1.0, 1.0, 1.0]), 0.01, 2000)[-1].copy()
    names = ["sigma", "rho", "beta"]

    jac = duals.jacfwd(lorenz_rk4)           # argnums=0: only p becomes dual
    t0 = time.perf_counter()
    J = jac(p, y0, dt, nsteps)               # (nsteps+1, 3, 3): d state_i(t_n) / d p_k
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    J = jac(p, y0, dt, nsteps)
    t_dual = time.perf_counter() - t0
    lorenz_rk4(p, y0, dt, nsteps)  # compile the plain version before timing it
    t0 = time.perf_counter()
    lorenz_rk4(p, y0, dt, nsteps)
    t_plain = time.perf_counter() - t0
    times = dt * np.arange(nsteps + 1)

    print(f"Lorenz RK4, sigma=10 rho=28 beta=8/3, T={T:g}, dt={dt:g} ({nsteps} steps)")
    print(f"jacfwd of the @njit integrator: {t_dual * 1e3:.2f} ms "
          f"(first call incl. compilation {t_first:.2f} s; plain run {t_plain * 1e3:.2f} ms)")
    assert J.shape == (nsteps + 1, 3, 3)

    # exponential growth of the sensitivities
    norm = np.linalg.norm(J.reshape(nsteps + 1, 9), axis=1)
    print("\n    t    |d state/d p|   (Frobenius norm of the 3x3 sensitivity)")
    for t in np.linspace(0, T, 6)[1:]:
        n = int(round(t / dt))
        print(f"  {times[n]:5.1f}   {norm[n]:12.4e}")
    mask = times > 1.0
    rate = np.polyfit(times[mask], np.log(norm[mask]), 1)[0]
    print(f"fitted growth rate of log|J|: {rate:.2f} per unit time "
          f"(largest Lyapunov exponent of Lorenz ~ 0.91)")
    if not (norm[-1] > 100.0 * norm[int(round(1.0 / dt))] and 0.5 < rate < 1.5):
        raise AssertionError("sensitivities did not grow exponentially")

    # finite differences at several step sizes, at t = 5 and at the final time
    t_chk = min(5.0, T)
    n_chk = int(round(t_chk / dt))
    print("\nfinite differences vs duals (relative error, max over the 3x3 entries)")
    print(f"  {'h':>7s}   {'t = %g' % t_chk:>10s}   {'t = %g' % T:>10s}")
    hs = 10.0 ** -np.arange(1, 13)
    errs = []
    for h in hs:
        fd = finite_difference(p, y0, dt, nsteps, h)
        e_chk = np.abs(fd[n_chk] - J[n_chk]).max() / np.abs(J[n_chk]).max()
        e_end = np.abs(fd[-1] - J[-1]).max() / np.abs(J[-1]).max()
        errs.append((e_chk, e_end))
        print(f"  {h:7.0e}   {e_chk:10.2e}   {e_end:10.2e}")
    errs = np.array(errs)
    for j, t in enumerate((t_chk, T)):
        best = int(np.argmin(errs[:, j]))
        print(f"t = {t:g}: best step h = {hs[best]:.0e}, error {errs[best, j]:.1e}")
    print("larger h: truncation error (chaos makes the trajectory nonlinear in p);"
          " smaller h: cancellation")
    print(f"d state(T={T:g}) / d(sigma, rho, beta) by duals:")
    for i, v in enumerate("xyz"):
        print(f"  {v}: " + "  ".join(f"{names[k]} {J[-1, i, k]:+.6e}" for k in range(3)))
    if not errs[:, 0].min() < 1e-6:
        raise AssertionError(f"duals and finite differences disagree at t = {t_chk:g}: "
                             f"{errs[:, 0].min():.2e}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        for k in range(3):
            a1.semilogy(times[1:], np.abs(J[1:, 0, k]), lw=0.8, label=f"|dx/d{names[k]}|")
        a1.semilogy(times[1:], norm[1:], "k", lw=1.2, label="|J| (Frobenius)")
        a1.semilogy(times, np.exp(rate * times) * norm[mask][0] / np.exp(rate * times[mask][0]),
                    "k--", lw=1, label=f"exp({rate:.2f} t)")
        a1.set_xlabel("time t (dimensionless model time)")
        a1.set_ylabel(r"sensitivity $|\partial x(t) / \partial p|$, $|J|$ (dimensionless)")
        a1.set_title("Lorenz: sensitivity of x(t) (duals.jacfwd of @njit RK4)")
        a1.legend()
        a2.loglog(hs, errs[:, 0], "o-", label=f"t = {t_chk:g}")
        a2.loglog(hs, errs[:, 1], "s-", label=f"t = {T:g}")
        a2.set_xlabel("finite-difference step h (relative to p, dimensionless)")
        a2.set_ylabel("relative error vs duals (dimensionless)")
        a2.legend()
        a2.set_title("finite differences: truncation vs cancellation")
        fig.tight_layout()
        fig.savefig(args.plot)
        plt.close(fig)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
