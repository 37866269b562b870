"""W1: gradient of Rosenbrock's function, n = 10, 10³, 10⁵ (ratio to f)."""
import numpy as np

from ..numerics import central_gradient, njit
from ..systems import AD_SYSTEMS, ad_entries, bind
from ..timing import Case, Entry
from .rosenbrock import rosenbrock, rosenbrock_grad, rosenbrock_loop, start

ID = "W1"
TITLE = "Rosenbrock gradient"
SIZES = (10, 1000, 100_000)
FD_MAX_N = 1000   # central differences cost 2n evaluations of f


def cases(quick):
    return [_case(n) for n in (SIZES[:1] if quick else SIZES)]


def _case(n):
    x = start(n)
    entries = [
        Entry("numpy", "f", lambda: lambda: rosenbrock(x)),
        Entry("numba", "f", lambda: _numba_f(x)),
        Entry("analytic", "grad", lambda: lambda: rosenbrock_grad(x), note="hand-written gradient"),
    ]
    entries += ad_entries("grad", lambda s: bind(s, s.grad(lambda y: rosenbrock(y, s.xp)), x))
    if n <= FD_MAX_N:
        entries.append(Entry("fd", "grad", lambda: lambda: central_gradient(rosenbrock, x),
                             rtol=1e-4, note="central differences, 2n evaluations"))
    refs = {"f": lambda: rosenbrock(x), "grad": lambda: rosenbrock_grad(x)}
    return Case(ID, f"n={n}", "n", ("numpy", "f"), entries, refs)


def _numba_f(x):
    fn = njit(rosenbrock_loop)
    return lambda: fn(x)


def targets(records):
    from . import pick
    rows = []
    for n in SIZES:
        r = pick(records, ID, "duals", "grad", f"n={n}")
        if r:
            met = (r["ratio"] <= 3.0) if n == 100_000 else None
            rows.append((f"W1 grad/f at n={n}" + (" ≤ 3 (issue 21, default allocator)" if n == 100_000 else ""),
                         f"{r['ratio']:.2f}", met))
    return rows
