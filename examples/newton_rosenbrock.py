"""Newton's method on the n-dimensional Rosenbrock function with exact Hessians from duals.

    f(x) = sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2,     minimum f = 0 at x = (1, ..., 1)

* a hand-written damped Newton iteration, each step from one
  ``duals.value_grad_hessian(f)(x)`` call (value, gradient and dense Hessian in one sweep),
  showing the quadratic convergence at the end;
* ``scipy.optimize.minimize`` with ``method="trust-ncg"`` and ``"Newton-CG"``, given
  ``jac=duals.grad(f)`` and ``hessp=`` a ``duals.hvp`` Hessian-vector product, which never
  forms the n x n Hessian; against L-BFGS-B with the same gradient;

value, gradient and Hessian are checked against SciPy's hand-coded ``rosen_der`` and
``rosen_hess``.

Run:  python examples/newton_rosenbrock.py [--small] [--n N] [--plot newton.png]
"""
import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numpy as np
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess, rosen_hess_prod

import duals
import duals.numpy as dnp


def rosenbrock(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def newton(f, x, tol=1e-10, maxiter=200):
    """Damped Newton: Levenberg shift if H is not positive definite, Armijo backtracking."""
    vgh = duals.value_grad_hessian(f)
    history = []
    n = x.size
    for it in range(maxiter):
        v, g, H = vgh(x)
        gnorm = np.linalg.norm(g, np.inf)
        history.append((it, v, gnorm))
        if gnorm < tol:
            break
        shift = 0.0
        while True:
            try:
                L = np.linalg.cholesky(H + shift * np.eye(n))
                break
            except np.linalg.LinAlgError:
                shift = max(2.0 * shift, 1e-3 * np.abs(H).max())
        step = -np.linalg.solve(L.T, np.linalg.solve(L, g))
        t = 1.0
        while float(f(x + t * step)) > v + 1e-4 * t * (g @ step) and t > 1e-10:
            t *= 0.5
        x = x + t * step
    return x, history


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="n = 100 instead of 1000 (CI)")
    ap.add_argument("--n", type=int, default=None, help="dimension")
    ap.add_argument("--plot", metavar="PATH", help="save a convergence plot")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())
    n = args.n or (100 if args.small else 1000)

    # SciPy tutorial's start, repeated.  (-1.2, 1, -1.2, 1, ...) leads to the local minimum
    # near x[0] = -1 (f ~ 3.99) that the chained Rosenbrock function has for n >= 4.
    x0 = np.resize([1.3, 0.7, 0.8, 1.9, 1.2], n)
    print(f"Rosenbrock function, n = {n}, start x0 = (1.3, 0.7, 0.8, 1.9, 1.2, 1.3, ...)")

    # derivative checks against SciPy's hand-written derivatives
    rng = np.random.default_rng(0)
    xr = rng.uniform(-2.0, 2.0, n)
    v, g, H = duals.value_grad_hessian(rosenbrock)(xr)
    vr = rng.standard_normal(n)
    errs = {
        "value": abs(v - rosen(xr)) / rosen(xr),
        "grad": np.abs(g - rosen_der(xr)).max() / np.abs(rosen_der(xr)).max(),
        "hessian": np.abs(H - rosen_hess(xr)).max() / np.abs(rosen_hess(xr)).max(),
        "hvp": np.abs(duals.hvp(rosenbrock, xr, vr) - rosen_hess_prod(xr, vr)).max()
        / np.abs(rosen_hess_prod(xr, vr)).max(),
    }
    print("vs scipy.optimize rosen/rosen_der/rosen_hess/rosen_hess_prod at a random x: "
          + ", ".join(f"{k} {e:.1e}" for k, e in errs.items()))
    if not max(errs.values()) < 1e-13:
        raise AssertionError(f"derivatives disagree with SciPy's: {errs}")

    # 1. Newton's method with value_grad_hessian
    t0 = time.perf_counter()
    x, hist = newton(rosenbrock, x0.copy())
    t_newton = time.perf_counter() - t0
    print(f"\nNewton with duals.value_grad_hessian: {len(hist) - 1} iterations, "
          f"{t_newton:.2f} s, |x - 1|_inf = {np.abs(x - 1).max():.1e}")
    print("  last iterations (quadratic convergence):")
    for it, v, gn in hist[-5:]:
        print(f"    iter {it:3d}   f = {v:10.3e}   |grad|_inf = {gn:9.2e}")
    if not np.abs(x - 1.0).max() < 1e-8:
        raise AssertionError("Newton did not converge to (1, ..., 1)")

    # 2. SciPy's Hessian-free Newton methods with duals.grad and duals.hvp
    grad = duals.grad(rosenbrock)

    def hessp(x, p):
        return duals.hvp(rosenbrock, x, p)

    print(f"\n{'method':12s} {'nit':>5s} {'nfev':>5s} {'njev':>5s} {'nhev':>6s} {'time [s]':>9s}"
          f" {'|x-1|_inf':>10s}")
    runs = {}
    for method, kw in (("trust-ncg", dict(hessp=hessp)), ("Newton-CG", dict(hessp=hessp)),
                       ("L-BFGS-B", {})):
        opts = {"gtol": 1e-8} if method == "trust-ncg" else {}
        if method == "Newton-CG":
            opts = {"xtol": 1e-12}
        if method == "L-BFGS-B":
            opts = {"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000}
        t0 = time.perf_counter()
        res = minimize(lambda x: float(rosenbrock(x)), x0, jac=grad, method=method,
                       options=opts, **kw)
        el = time.perf_counter() - t0
        err = np.abs(res.x - 1.0).max()
        runs[method] = (res, err)
        print(f"{method:12s} {res.nit:5d} {res.nfev:5d} {res.njev:5d} "
              f"{getattr(res, 'nhev', 0):6d} {el:9.2f} {err:10.1e}")
    for method in ("trust-ncg", "Newton-CG"):
        if not runs[method][1] < 1e-5:
            raise AssertionError(f"{method} with duals.hvp did not converge: {runs[method][1]:.1e}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        it = [h[0] for h in hist]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.semilogy(it, [max(h[1], 1e-300) for h in hist], "o-", label="f(x_k)")
        ax.semilogy(it, [h[2] for h in hist], "s-", label="|grad f(x_k)|_inf")
        ax.set_xlabel("Newton iteration k (count)")
        ax.set_ylabel(r"$f(x_k)$ and $\|\nabla f(x_k)\|_\infty$ (dimensionless)")
        ax.set_title(f"Rosenbrock n={n}: Newton with duals.value_grad_hessian")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
        plt.close(fig)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
