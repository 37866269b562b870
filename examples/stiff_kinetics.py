"""Robertson's stiff chemical kinetics with a duals Jacobian for SciPy's implicit solvers.

    y1' = -0.04 y1 + 1e4 y2 y3
    y2' =  0.04 y1 - 1e4 y2 y3 - 3e7 y2^2
    y3' =  3e7 y2^2                      y(0) = (1, 0, 0),  t in [0, 1e11] (log time)

Implicit methods (BDF, Radau) need the Jacobian df/dy.  Without ``jac=`` SciPy builds it by
finite differences, one extra right-hand-side call per state per Jacobian.  Here the
Jacobian is ``duals.jacfwd`` of the very same right-hand side (no hand derivation).  The
report compares, for each method: right-hand-side calls (nfev), Jacobian evaluations
(njev), LU factorisations, wall time and the global error at the final time against a tight
reference solution, in units of the requested tolerance (err/tol); and checks the duals Jacobian against the hand-written one.
With ``--plot`` it also sweeps the requested tolerance and draws err/tol against it, next to
the concentrations.

Run:  python examples/stiff_kinetics.py [--small] [--plot robertson.png]
"""
import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)
from _progress import progress  # noqa: E402  (a tqdm bar on a terminal, nothing otherwise)

import numpy as np
from scipy.integrate import solve_ivp

import duals
import duals.numpy as dnp

K1, K2, K3 = 0.04, 3.0e7, 1.0e4


def rhs(t, y):
    y1, y2, y3 = y[0], y[1], y[2]
    return dnp.stack([-K1 * y1 + K3 * y2 * y3,
                      K1 * y1 - K3 * y2 * y3 - K2 * y2 ** 2,
                      K2 * y2 ** 2])


def jac_by_hand(t, y):
    y1, y2, y3 = y
    return np.array([[-K1, K3 * y3, K3 * y2],
                     [K1, -K3 * y3 - 2 * K2 * y2, -K3 * y2],
                     [0.0, 2 * K2 * y2, 0.0]])


_jac = duals.jacfwd(lambda y: rhs(0.0, y))


def jac_duals(t, y):
    return _jac(np.asarray(y, dtype=float))


def error_over_tolerance(sol, y_ref, rtol, atol):
    """The largest over the species of |y(t_end) - y_ref| / (atol + rtol |y_ref|): the final
    state's error in units of the tolerance the solver was asked for."""
    return float(np.max(np.abs(sol.y[:, -1] - y_ref) / (atol + rtol * np.abs(y_ref))))


class Counter:
    """Counts calls of the right-hand side made by the solver (including its FD Jacobian)."""

    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, t, y):
        self.n += 1
        return self.f(t, y)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="shorter time span (CI)")
    ap.add_argument("--plot", metavar="PATH", help="save a figure of the concentrations")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())
    t_end = 1.0e5 if args.small else 1.0e11
    rtol, atol = 1e-6, 1e-10
    y0 = np.array([1.0, 0.0, 0.0])

    # 1. the duals Jacobian is the hand-written one
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20):
        y = rng.uniform(0.0, 1.0, 3) * np.array([1.0, 1e-4, 1.0])
        Jd, Jh = jac_duals(0.0, y), jac_by_hand(0.0, y)
        Jr = duals.jacrev(lambda y: rhs(0.0, y))(y)
        worst = max(worst, np.abs(Jd - Jh).max() / np.abs(Jh).max(),
                    np.abs(Jr - Jh).max() / np.abs(Jh).max())
    print(f"Robertson kinetics, t in [0, {t_end:.0e}], rtol={rtol:g}, atol={atol:g}")
    print(f"duals Jacobian (jacfwd and jacrev) vs hand-written, 20 random states: "
          f"max rel. diff {worst:.1e}")
    if not worst < 1e-14:
        raise AssertionError(f"duals Jacobian disagrees with the hand-written one: {worst:.2e}")

    ref = solve_ivp(rhs, (0.0, t_end), y0, method="Radau", jac=jac_by_hand,
                    rtol=1e-12, atol=1e-16)
    y_ref = ref.y[:, -1]

    print(f"\n{'method':6s} {'jacobian':16s} {'nfev':>6s} {'rhs calls':>9s} {'njev':>5s} "
          f"{'nlu':>5s} {'steps':>6s} {'time [s]':>9s} {'err/tol':>8s}")
    results = {}
    for method in ("BDF", "Radau"):
        for label, jac in (("finite diff.", None), ("duals.jacfwd", jac_duals),
                           ("hand-written", jac_by_hand)):
            f = Counter(rhs)
            t0 = time.perf_counter()
            sol = solve_ivp(f, (0.0, t_end), y0, method=method, jac=jac, rtol=rtol, atol=atol)
            el = time.perf_counter() - t0
            if not sol.success:
                raise RuntimeError(f"{method} with {label} Jacobian failed: {sol.message}")
            err = error_over_tolerance(sol, y_ref, rtol, atol)
            results[method, label] = (sol, f.n, err)
            print(f"{method:6s} {label:16s} {sol.nfev:6d} {f.n:9d} {sol.njev:5d} {sol.nlu:5d} "
                  f"{sol.t.size - 1:6d} {el:9.3f} {err:8.2g}")
    print("(SciPy's nfev leaves out the calls its finite-difference Jacobian makes; "
          "'rhs calls' counts every call)")
    print("err/tol: the largest over y1, y2, y3 of |y(t_end) - y_ref| / (atol + rtol |y_ref|), the "
          "final state's error against a\n  tight reference solve, in units of the requested "
          "tolerance; below 1 is within it (the solvers control each\n  step's local error, so "
          "the global error can exceed the tolerance)")
    for method in ("BDF", "Radau"):
        fd, ad = results[method, "finite diff."], results[method, "duals.jacfwd"]
        print(f"{method}: the duals Jacobian saves {fd[1] - ad[1]} right-hand-side calls "
              f"({fd[1]} -> {ad[1]})")
        hand = results[method, "hand-written"]
        if ad[0].nfev != hand[0].nfev or not np.allclose(ad[0].y[:, -1], hand[0].y[:, -1],
                                                         rtol=1e-10, atol=1e-14):
            raise AssertionError(f"{method}: duals Jacobian run differs from the exact one")
        if not ad[2] < 1e3:
            raise AssertionError(f"{method}: final state error {ad[2]:.2e} too large")
    mass = results["BDF", "duals.jacfwd"][0].y.sum(axis=0)
    print(f"mass conservation y1+y2+y3 = 1: max deviation {np.abs(mass - 1).max():.1e}")
    print(f"final state y({t_end:.0e}) = {y_ref}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        rtols = 10.0 ** -np.arange(3, 10)
        sweep = {}
        for method, r in progress([(m, r) for m in ("BDF", "Radau") for r in rtols], "tolerances"):
            a = r * atol / rtol                      # the same atol / rtol ratio as above
            run = solve_ivp(rhs, (0.0, t_end), y0, method=method, jac=jac_duals, rtol=r, atol=a)
            sweep.setdefault(method, []).append(error_over_tolerance(run, y_ref, r, a))
        print("err/tol against the requested rtol (duals.jacfwd Jacobian):")
        for method, errs in sweep.items():
            print(f"  {method:6s} " + "  ".join(f"{r:.0e}: {e:.2g}" for r, e in zip(rtols, errs)))
        sol = results["BDF", "duals.jacfwd"][0]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4))
        for i, (lab, s) in enumerate((("y1", 1), ("y2 x 1e4", 1e4), ("y3", 1))):
            ax.semilogx(sol.t[1:], s * sol.y[i, 1:], label=lab)
        ax.set_xlabel("time t (model time units, log scale)")
        ax.set_ylabel("concentration (fraction of the total, dimensionless)")
        ax.set_title("Robertson kinetics, BDF with a duals.jacfwd Jacobian")
        ax.legend()
        for method, marker in (("BDF", "o-"), ("Radau", "s-")):
            bx.loglog(rtols, sweep[method], marker, label=f"{method}, duals.jacfwd Jacobian")
        bx.axhline(1.0, color="k", lw=0.8, ls="--", label="error = requested tolerance")
        bx.set_xlabel(f"requested rtol (atol = rtol x {atol / rtol:g})")
        bx.set_ylabel("final-state error / (atol + rtol |y|)  (err/tol)")
        bx.set_title(f"global error at t = {t_end:.0e} against the tolerance")
        bx.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
        plt.close(fig)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
