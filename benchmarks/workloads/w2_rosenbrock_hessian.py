"""W2: Hessian and Hessian-vector product of Rosenbrock, n = 10, 100, 300; hvp at n = 10⁵."""
import numpy as np

from ..systems import ad_entries, bind
from ..timing import Case, Entry
from .rosenbrock import rosenbrock, rosenbrock_grad, rosenbrock_hessian, rosenbrock_hvp, start

ID = "W2"
TITLE = "Rosenbrock Hessian and hvp"
SIZES = (10, 100, 300)
HVP_ONLY_SIZES = (100_000,)


def cases(quick):
    sizes = SIZES[:1] if quick else SIZES + HVP_ONLY_SIZES
    return [_case(n, with_hessian=n in SIZES) for n in sizes]


def _direction(n):
    return np.cos(np.arange(n, dtype=np.float64))


def _case(n, with_hessian):
    x, v = start(n), _direction(n)
    f = lambda s: (lambda y: rosenbrock(y, s.xp))  # noqa: E731
    entries = [Entry("numpy", "f", lambda: lambda: rosenbrock(x)),
               Entry("analytic", "hvp", lambda: lambda: rosenbrock_hvp(x, v), note="hand-written")]
    entries += ad_entries("grad", lambda s: bind(s, s.grad(f(s)), x))
    if with_hessian:
        entries += ad_entries("hessian", lambda s: bind(s, s.hessian(f(s)), x))
    entries += ad_entries("hvp", lambda s: bind(s, s.hvp(f(s)), x, v))
    refs = {"f": lambda: rosenbrock(x), "grad": lambda: rosenbrock_grad(x),
            "hessian": lambda: rosenbrock_hessian(x), "hvp": lambda: rosenbrock_hvp(x, v)}
    return Case(ID, f"n={n}", "hessian" if with_hessian else "hvp", ("numpy", "f"), entries, refs)


def targets(records):
    from . import pick
    rows = []
    for n in SIZES[1:]:
        h, g = pick(records, ID, "duals", "hessian", f"n={n}"), pick(records, ID, "duals", "grad", f"n={n}")
        if h and g:
            met = h["median_s"] <= 2e-3 if n == 300 else None
            rows.append((f"W2 hessian n={n}" + (" ≤ 2 ms (issue 4)" if n == 300 else ""),
                         f"{h['median_s'] * 1e3:.2f} ms = {h['median_s'] / g['median_s']:.0f} grads", met))
        rows += _vs_best_eager(records, "hessian", f"n={n}")
    r = pick(records, ID, "duals", "hvp", "n=100000")
    if r:
        rows.append(("W2 hvp/f at n=10⁵ ≤ 10 (issues 4, 21)", f"{r['ratio']:.2f}", r["ratio"] <= 10))
    return rows


def _vs_best_eager(records, task, case):
    from . import pick
    mine = pick(records, ID, "duals", task, case)
    peers = [pick(records, ID, s, task, case) for s in ("jax", "torch", "autograd")]
    peers = [p for p in peers if p]
    if not mine or not peers:
        return []
    best = min(peers, key=lambda p: p["median_s"])
    ratio = mine["median_s"] / best["median_s"]
    return [(f"W2 {task} {case}: within 2× of best eager peer ({best['system']})",
             f"{ratio:.2f}× best eager", ratio <= 2.0)]
