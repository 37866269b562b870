"""W3: Jacobian of tanh(W @ x + b), (n, m) = (10, 1000), (1000, 10), (300, 300)."""
import numpy as np

from ..numerics import central_jacobian, njit
from ..systems import ad_entries, bind
from ..timing import Case, Entry

ID = "W3"
TITLE = "dense Jacobian of tanh(W @ x + b)"
SHAPES = ((10, 1000), (1000, 10), (300, 300))


def cases(quick):
    return [_case(n, m) for n, m in (SHAPES[:1] if quick else SHAPES)]


def layer(x, W, b, xp=np):
    """layer(x, W, b) -> tanh(W @ x + b)."""
    return xp.tanh(W @ x + b)


def layer_loop(x, W, b):
    """layer_loop(x, W, b) -> tanh(W @ x + b) as loops (for Numba)."""
    out = np.empty(W.shape[0])
    for i in range(W.shape[0]):
        acc = b[i]
        for j in range(W.shape[1]):
            acc += W[i, j] * x[j]
        out[i] = np.tanh(acc)
    return out


def layer_jacobian(x, W, b):
    """layer_jacobian(x, W, b) -> the exact Jacobian diag(1 - y²) W."""
    y = np.tanh(W @ x + b)
    return (1.0 - y * y)[:, None] * W


def _case(n, m):
    rng = np.random.default_rng(3)
    W = rng.standard_normal((m, n)) / np.sqrt(n)
    b = rng.standard_normal(m) * 0.1
    x = rng.standard_normal(n)

    def closed(s):
        Ws, bs = s.asarray(W), s.asarray(b)
        return lambda y: layer(y, Ws, bs, s.xp)

    entries = [Entry("numpy", "f", lambda: lambda: layer(x, W, b)),
               Entry("numba", "f", lambda: _numba_f(x, W, b)),
               Entry("fd", "jacobian", lambda: lambda: central_jacobian(lambda y: layer(y, W, b), x),
                     rtol=1e-6, note="central differences, 2n evaluations")]
    entries += ad_entries("jacfwd", lambda s: bind(s, s.jacfwd(closed(s)), x))
    entries += ad_entries("jacrev", lambda s: bind(s, s.jacrev(closed(s)), x))
    exact = lambda: layer_jacobian(x, W, b)  # noqa: E731
    refs = {"f": lambda: layer(x, W, b), "jacobian": exact, "jacfwd": exact, "jacrev": exact}
    return Case(ID, f"n={n},m={m}", "shape", ("numpy", "f"), entries, refs)


def _numba_f(x, W, b):
    fn = njit(layer_loop)
    return lambda: fn(x, W, b)


def targets(records):
    from . import pick
    rows = []
    t, jit = pick(records, ID, "duals", "jacfwd", "n=10,m=1000"), pick(records, ID, "jax-jit", "jacfwd", "n=10,m=1000")
    if t:
        rows.append(("W3 jacfwd n=10,m=1000 within 1.5× of JAX jit (issue 21)",
                     f"{t['median_s'] * 1e6:.0f} µs" + (f" vs jax-jit {jit['median_s'] * 1e6:.0f} µs "
                                                        f"({t['median_s'] / jit['median_s']:.2f}×)" if jit else ""),
                     (t["median_s"] <= 1.5 * jit["median_s"]) if jit else None))
    for n, m in SHAPES:
        case = f"n={n},m={m}"
        peers = [pick(records, ID, s, task, case) for s in ("jax", "torch", "autograd") for task in ("jacfwd", "jacrev")]
        peers = [p for p in peers if p]
        for mode in ("jacfwd", "jacrev"):
            ours = pick(records, ID, "duals", mode, case)
            if ours and peers:
                best = min(peers, key=lambda p: p["median_s"])
                ratio = ours["median_s"] / best["median_s"]
                rows.append((f"W3 {mode} {case}: within 2× of best eager peer ({best['system']} {best['task']})",
                             f"{ratio:.2f}×", ratio <= 2.0))
    return rows
