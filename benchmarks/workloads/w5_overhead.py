"""W5: per-op overhead on a 0-d input, y = sin(y)*0.9 + 0.1 repeated K = 100, 1000 times."""
import math

from ..numerics import njit
from ..systems import AD_SYSTEMS, Duals, Torch, ad_entries, bind, load
from ..timing import Case, Entry

ID = "W5"
TITLE = "per-op overhead, 0-d chain of sin(y)*0.9 + 0.1"
REPEATS = (100, 1000)
X0 = 0.5
OPS_PER_REPEAT = 3   # sin, mul, add


def chain(y, K, xp=math):
    """chain(y, K) -> y after K repetitions of sin(y)*0.9 + 0.1."""
    for _ in range(K):
        y = xp.sin(y) * 0.9 + 0.1
    return y


def chain_loop(y, K):
    """chain_loop(y, K) -> the same, for Numba."""
    for _ in range(K):
        y = math.sin(y) * 0.9 + 0.1
    return y


def chain_derivative(y, K):
    """chain_derivative(y, K) -> d chain / dy, the product of 0.9 cos(y_k)."""
    d = 1.0
    for _ in range(K):
        d *= 0.9 * math.cos(y)
        y = math.sin(y) * 0.9 + 0.1
    return d


def cases(quick):
    return [_case(K) for K in (REPEATS[:1] if quick else REPEATS)]


def _case(K):
    ops = OPS_PER_REPEAT * K
    entries = [Entry("python", "f", lambda: lambda: chain(X0, K), note="math.sin on floats", ops=ops),
               Entry("numba", "f", lambda: _numba_f(K), ops=ops),
               Entry("fd", "grad", lambda: lambda: (chain(X0 + 1e-6, K) - chain(X0 - 1e-6, K)) / 2e-6,
                     rtol=None, ops=ops, note="central difference; cannot resolve a derivative of ~1e-14")]
    entries += ad_entries("grad", lambda s: bind(s, s.grad(lambda y: chain(y, K, s.xp)), X0), ops=ops)
    entries += ad_entries("jvp", lambda s: bind(s, s.jvp(lambda y: chain(y, K, s.xp)), X0, 1.0), ops=ops)
    entries += [Entry("duals-tape", "grad", lambda: _duals_tape(K), ops=ops, note="Var(...).backward()"),
                Entry("torch-tape", "grad", lambda: _torch_tape(K), ops=ops, note="requires_grad, .backward()")]
    exact = lambda: chain_derivative(X0, K)  # noqa: E731
    refs = {"f": lambda: chain(X0, K), "grad": exact, "jvp": exact}
    return Case(ID, f"K={K}", "K", ("python", "f"), entries, refs)


def _numba_f(K):
    fn = njit(chain_loop)
    return lambda: fn(X0, K)


def _duals_tape(K):
    duals, xp = load(Duals).duals, load(Duals).xp

    def run():
        x = duals.Var(X0)
        chain(x, K, xp).backward()
        return x.grad
    return run


def _torch_tape(K):
    torch = load(Torch).torch

    def run():
        x = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
        chain(x, K, torch).backward()
        return x.grad
    return run


def targets(records):
    from . import pick
    rows = []
    for K in REPEATS:
        case = f"K={K}"
        for task in ("grad", "jvp"):
            mine = pick(records, ID, "duals", task, case)
            if not mine:
                continue
            for peer in ("autograd", "jax"):
                theirs = pick(records, ID, peer, task, case)
                if theirs:
                    rows.append((f"W5 {case} {task}: fewer µs/op than {peer} eager",
                                 f"{mine['us_per_op']:.2f} vs {theirs['us_per_op']:.2f} µs/op",
                                 mine["us_per_op"] < theirs["us_per_op"]))
            if task == "grad":
                for system, peer in (("duals", "torch-tape"), ("duals-tape", "torch-tape")):
                    ours, theirs = pick(records, ID, system, task, case), pick(records, ID, peer, task, case)
                    if ours and theirs:
                        rows.append((f"W5 {case} {system} grad: ≤ PyTorch eager per op (issue 21)",
                                     f"{ours['us_per_op']:.2f} vs {theirs['us_per_op']:.2f} µs/op",
                                     ours["us_per_op"] <= theirs["us_per_op"]))
            rows.append((f"W5 {case} {task}: ≤ 5 µs/op (issues 2, 3, 21)", f"{mine['us_per_op']:.2f} µs/op",
                         mine["us_per_op"] <= 5.0))
    return rows
