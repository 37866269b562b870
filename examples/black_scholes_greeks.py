"""Black-Scholes Greeks of a million European call options by automatic differentiation.

The price C(S, K, T, r, sigma) = S N(d1) - K exp(-rT) N(d2) is written once, with
``duals.special.erf`` for the normal CDF.  Its Greeks come from the transformations:

* ``duals.jvp`` with a tangent of ones in one argument: since the options are independent,
  one forward pass gives that Greek for every option (delta, vega, rho, theta = -dC/dT);
* ``duals.grad`` of sum(C) with ``argnums=(0, 1, 2, 3)``: all four first-order Greeks of all
  options in one reverse sweep;
* gamma = d2C/dS2 as a forward-over-reverse Hessian-vector product (``duals.hvp``) of sum(C),
  and ``duals.hessian`` of a single option's price in (S, sigma, T, r) for the full 4x4
  matrix of second-order Greeks (gamma, vanna, volga, ...);

all checked against the closed-form Greeks, with timings.

Run:  python examples/black_scholes_greeks.py [--small] [--n N] [--plot greeks.png]
"""
import argparse
import math
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numpy as np
from scipy.special import ndtr

import duals
import duals.numpy as dnp
from duals.special import erfc

SQRT2 = math.sqrt(2.0)


def norm_cdf(x):
    return 0.5 * erfc(-x / SQRT2)     # accurate in the far left tail, unlike 1 + erf


def call_price(S, sigma, T, r, K):
    """European call, no dividends.  Arrays broadcast element-wise."""
    sqrtT = dnp.sqrt(T)
    d1 = (dnp.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * sqrtT)
    d2 = d1 - sigma * sqrtT
    return S * norm_cdf(d1) - K * dnp.exp(-r * T) * norm_cdf(d2)


def closed_form(S, sigma, T, r, K):
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * sqrtT)
    d2 = d1 - sigma * sqrtT
    pdf = np.exp(-0.5 * d1 ** 2) / math.sqrt(2.0 * math.pi)
    disc = np.exp(-r * T)
    return {
        "price": S * ndtr(d1) - K * disc * ndtr(d2),
        "delta": ndtr(d1),
        "gamma": pdf / (S * sigma * sqrtT),
        "vega": S * pdf * sqrtT,
        "theta": -S * pdf * sigma / (2.0 * sqrtT) - r * K * disc * ndtr(d2),
        "rho": K * T * disc * ndtr(d2),
        "vanna": -pdf * d2 / sigma,
        "volga": S * pdf * sqrtT * d1 * d2 / sigma,
    }


def timed(f, *a):
    t0 = time.perf_counter()
    out = f(*a)
    return out, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="10^4 options instead of 10^6 (CI)")
    ap.add_argument("--n", type=int, default=None, help="number of options")
    ap.add_argument("--plot", metavar="PATH", help="save a figure of the Greeks against S")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())
    n = args.n or (10_000 if args.small else 1_000_000)

    rng = np.random.default_rng(0)
    S = rng.uniform(50.0, 150.0, n)
    K = rng.uniform(60.0, 140.0, n)
    T = rng.uniform(0.1, 2.0, n)
    r = rng.uniform(0.0, 0.08, n)
    sigma = rng.uniform(0.1, 0.6, n)
    ones = np.ones(n)
    zeros = np.zeros(n)
    ref = closed_form(S, sigma, T, r, K)
    args_ = (S, sigma, T, r)

    def price(S, sigma, T, r):
        return call_price(S, sigma, T, r, K)

    def total(S, sigma, T, r):
        return dnp.sum(call_price(S, sigma, T, r, K))

    # warm up: compile the kernels on a tiny batch so that timings exclude compilation
    w = tuple(a[:8] for a in args_)
    duals.jvp(lambda *a: call_price(*a, K[:8]), w, tuple(np.ones(8) for _ in w))
    duals.grad(lambda *a: dnp.sum(call_price(*a, K[:8])), argnums=(0, 1, 2, 3))(*w)
    duals.hvp(lambda s: dnp.sum(call_price(s, *w[1:], K[:8])), w[0], np.ones(8))
    duals.hessian(lambda x: call_price(x[0], x[1], x[2], x[3], K[0]))(np.array([a[0] for a in w]))

    print(f"Black-Scholes Greeks of {n:,} European calls (timings after warm-up)")
    val, t_price = timed(price, *args_)
    print(f"  price (NumPy + duals.special.erfc)          {t_price * 1e3:8.1f} ms")

    fwd = {}
    t_fwd = 0.0
    for name, k, sign in (("delta", 0, 1.0), ("vega", 1, 1.0), ("theta", 2, -1.0), ("rho", 3, 1.0)):
        tangents = tuple(ones if j == k else zeros for j in range(4))
        (p, d), dt = timed(duals.jvp, price, args_, tangents)
        fwd[name] = sign * d
        t_fwd += dt
    print(f"  4 Greeks by jvp (4 forward passes)         {t_fwd * 1e3:8.1f} ms")

    g, t_rev = timed(duals.grad(total, argnums=(0, 1, 2, 3)), *args_)
    rev = {"delta": g[0], "vega": g[1], "theta": -g[2], "rho": g[3]}
    print(f"  4 Greeks by grad (one reverse sweep)       {t_rev * 1e3:8.1f} ms")

    gamma, t_gam = timed(duals.hvp, lambda s: total(s, sigma, T, r), S, ones)
    print(f"  gamma by hvp (forward over reverse)        {t_gam * 1e3:8.1f} ms")

    # full 4x4 second-order Greeks of a few single options by duals.hessian
    m = 5
    hess = []
    t0 = time.perf_counter()
    for i in range(m):
        def one(x, i=i):
            return call_price(x[0], x[1], x[2], x[3], K[i])
        hess.append(duals.hessian(one)(np.array([S[i], sigma[i], T[i], r[i]])))
    t_hess = time.perf_counter() - t0
    hess = np.array(hess)
    print(f"  4x4 Hessian of {m} single options            {t_hess * 1e3:8.1f} ms")

    print("\nmax relative error against the closed-form Greeks")
    worst = 0.0

    def rel(a, b):
        return float(np.max(np.abs(a - b) / (np.abs(b) + 1e-8 * np.abs(b).max() + 1e-300)))

    rows = [("price", val, ref["price"])]
    for name in ("delta", "vega", "theta", "rho"):
        rows.append((f"{name} (jvp)", fwd[name], ref[name]))
        rows.append((f"{name} (grad)", rev[name], ref[name]))
    rows.append(("gamma (hvp)", gamma, ref["gamma"]))
    sl = slice(0, m)
    rows.append(("gamma (hessian[0,0])", hess[:, 0, 0], ref["gamma"][sl]))
    rows.append(("vanna (hessian[0,1])", hess[:, 0, 1], ref["vanna"][sl]))
    rows.append(("volga (hessian[1,1])", hess[:, 1, 1], ref["volga"][sl]))
    rows.append(("hessian symmetric", hess, np.swapaxes(hess, 1, 2)))
    for name, a, b in rows:
        e = rel(np.asarray(a), np.asarray(b))
        worst = max(worst, e)
        print(f"  {name:24s} {e:9.2e}")
    i = 0
    print(f"\noption 0: S={S[i]:.2f} K={K[i]:.2f} T={T[i]:.2f} r={r[i]:.3f} sigma={sigma[i]:.2f}")
    print("  " + "  ".join(f"{k}={ref[k][i]:.5g}" for k in
                          ("price", "delta", "gamma", "vega", "theta", "rho")))
    if not worst < 1e-10:
        raise AssertionError(f"Greeks disagree with the closed form: worst relative error {worst:.2e}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        Sg = np.linspace(40.0, 160.0, 400)
        c = (np.full_like(Sg, 0.3), np.full_like(Sg, 1.0), np.full_like(Sg, 0.03))
        Kg = 100.0
        gS = duals.grad(lambda s: dnp.sum(call_price(s, *c, Kg)))(Sg)
        gam = duals.hvp(lambda s: dnp.sum(call_price(s, *c, Kg)), Sg, np.ones_like(Sg))
        _, veg = duals.jvp(lambda v: call_price(Sg, v, c[1], c[2], Kg), (c[0],), (np.ones_like(Sg),))
        fig, axs = plt.subplots(1, 3, figsize=(12, 4))
        panels = (
            (gS, "delta by duals.grad", r"delta $\partial C/\partial S$ (dimensionless)"),
            (gam, "gamma by duals.hvp", r"gamma $\partial^2 C/\partial S^2$ (1 / currency unit)"),
            (veg, "vega by duals.jvp", r"vega $\partial C/\partial \sigma$ (currency units per unit $\sigma$)"),
        )
        for ax, (y, title, ylabel) in zip(axs, panels):
            ax.plot(Sg, y)
            ax.set_xlabel("spot price S (currency units)")
            ax.set_ylabel(ylabel)
            ax.set_title(title)
        fig.suptitle(r"Black-Scholes call Greeks: K = 100, T = 1 year, $\sigma$ = 0.3 / $\sqrt{\mathrm{year}}$, "
                     "r = 0.03 / year")
        fig.tight_layout()
        fig.savefig(args.plot)
        plt.close(fig)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
