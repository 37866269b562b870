"""W6: Black-Scholes European calls, N = 10³, 10⁶: price, grad of the summed price, jvp (delta)."""
import math

import numpy as np

from ..numerics import njit
from ..systems import ad_entries, bind
from ..timing import Case, Entry

ID = "W6"
TITLE = "Black-Scholes price, gradient and delta"
SIZES = (1000, 1_000_000)
SQRT2 = math.sqrt(2.0)


def price(S, sigma, r, T, K, xp=np, erf=None):
    """price(S, σ, r, T, K) -> European call prices (normal CDF through ``erf``)."""
    erf = erf or xp.erf
    sqrt_T = xp.sqrt(T)
    d1 = (xp.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * sqrt_T)
    d2 = d1 - sigma * sqrt_T
    return S * (0.5 * (1.0 + erf(d1 / SQRT2))) - K * xp.exp(-r * T) * (0.5 * (1.0 + erf(d2 / SQRT2)))


def price_loop(S, sigma, r, T, K):
    """price_loop(...) -> the same prices as a scalar loop (for Numba)."""
    out = np.empty_like(S)
    for i in range(S.shape[0]):
        sqrt_T = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r[i] + 0.5 * sigma[i] ** 2) * T[i]) / (sigma[i] * sqrt_T)
        d2 = d1 - sigma[i] * sqrt_T
        out[i] = S[i] * 0.5 * (1.0 + math.erf(d1 / SQRT2)) - \
            K[i] * math.exp(-r[i] * T[i]) * 0.5 * (1.0 + math.erf(d2 / SQRT2))
    return out


def _erf():
    try:
        from scipy.special import erf
        return erf
    except ImportError:
        return np.vectorize(math.erf, otypes=[float])


def greeks(S, sigma, r, T, K):
    """greeks(...) -> exact (∂C/∂S, ∂C/∂σ, ∂C/∂r, ∂C/∂T) per option."""
    erf = _erf()
    sqrt_T = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * sqrt_T)
    d2 = d1 - sigma * sqrt_T
    cdf = lambda d: 0.5 * (1.0 + erf(d / SQRT2))  # noqa: E731
    pdf1 = np.exp(-0.5 * d1 ** 2) / math.sqrt(2 * math.pi)
    discount = K * np.exp(-r * T)
    return (cdf(d1), S * pdf1 * sqrt_T, discount * T * cdf(d2),
            S * pdf1 * sigma / (2 * sqrt_T) + r * discount * cdf(d2))


def market(n):
    """market(n) -> (S, σ, r, T, K) for n options from a fixed seed."""
    rng = np.random.default_rng(6)
    return (rng.uniform(50, 150, n), rng.uniform(0.1, 0.5, n), rng.uniform(0.0, 0.05, n),
            rng.uniform(0.1, 2.0, n), rng.uniform(50, 150, n))


def cases(quick):
    return [_case(n) for n in (SIZES[:1] if quick else SIZES)]


def _case(n):
    S, sigma, r, T, K = args = market(n)
    erf = _erf()
    ones = np.ones(n)

    def summed(s):
        Ks = s.asarray(K)
        return lambda S_, sig_, r_, T_: s.xp.sum(price(S_, sig_, r_, T_, Ks, s.xp))

    def of_spot(s):
        sig_, r_, T_, K_ = (s.asarray(a) for a in (sigma, r, T, K))
        return lambda S_: price(S_, sig_, r_, T_, K_, s.xp)

    entries = [Entry("numpy", "price", lambda: lambda: price(*args, erf=erf), note="scipy.special.erf"),
               Entry("numba", "price", lambda: _numba_price(args), note="math.erf loop"),
               Entry("fd", "grad", lambda: lambda: _fd_grad(args, erf), rtol=1e-5,
                     note="central differences, 8 evaluations (options are independent)"),
               Entry("fd", "jvp", lambda: lambda: _fd_delta(args, erf), rtol=1e-5,
                     note="central difference, 2 evaluations")]
    entries += ad_entries("grad", lambda s: bind(s, s.grad(summed(s), argnums=(0, 1, 2, 3)), S, sigma, r, T))
    entries += ad_entries("jvp", lambda s: bind(s, s.jvp(of_spot(s)), S, ones), note="delta")
    exact = lambda: greeks(*args)  # noqa: E731
    refs = {"price": lambda: price(*args, erf=erf), "grad": exact, "jvp": lambda: exact()[0]}
    return Case(ID, f"N={n}", "N", ("numpy", "price"), entries, refs)


def _numba_price(args):
    fn = njit(price_loop)
    return lambda: fn(*args)


def _fd_grad(args, erf):
    out = []
    for i in range(4):
        h = 1e-6 * np.maximum(1.0, np.abs(args[i]))
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + h, args[i] - h
        out.append((price(*up, erf=erf) - price(*down, erf=erf)) / (2 * h))
    return tuple(out)


def _fd_delta(args, erf):
    S = args[0]
    h = 1e-6 * S
    return (price(S + h, *args[1:], erf=erf) - price(S - h, *args[1:], erf=erf)) / (2 * h)


def targets(records):
    from . import pick
    rows = []
    r = pick(records, ID, "duals", "grad", "N=1000000")
    if r:
        rows.append(("W6 grad/f at N=10⁶ ≤ 1.5 (issue 21, default allocator)", f"{r['ratio']:.2f}",
                     r["ratio"] <= 1.5))
        peers = [p for p in (pick(records, ID, s, "grad", "N=1000000") for s in ("autograd", "torch", "jax-jit")) if p]
        if peers:
            best = min(peers, key=lambda p: p["ratio"])
            rows.append((f"W6 grad N=10⁶: ahead of every peer (best: {best['system']})",
                         f"{r['ratio']:.2f} vs {best['ratio']:.2f}", r["ratio"] <= best["ratio"]))
    return rows
