"""K1 (issue 2): the fused value-and-tangent kernel against the NumPy two-step."""
import numpy as np

from ..systems import Duals, load
from ..timing import Case, Entry

ID = "K1"
TITLE = "fused element-wise kernels vs NumPy two-step"
SIN_SIZES = (10, 100, 1000, 10_000, 100_000, 1_000_000)
EXP_SIZES = (1000, 1_000_000)
MUL_LANES, MUL_SIZE = 8, 100_000


def cases(quick):
    if quick:
        return [_unary_case("sin", 10), _mul_case(MUL_LANES, 10)]
    return ([_unary_case("sin", n) for n in SIN_SIZES] + [_unary_case("exp", n) for n in EXP_SIZES]
            + [_mul_case(MUL_LANES, MUL_SIZE)])


_NUMPY = {"sin": (np.sin, np.cos), "exp": (np.exp, np.exp)}


def _unary_case(op, n):
    rng = np.random.default_rng(1)
    x, t = rng.uniform(-2, 2, n), rng.standard_normal(n)
    value, deriv = _NUMPY[op]
    ts = t[None, :]

    def fused(allocate):
        kern = load(Duals).duals.kernels.kernel(op, "jvp")
        outs, touts = np.empty(n), np.empty((1, n))

        def run():
            o, to = (np.empty(n), np.empty((1, n))) if allocate else (outs, touts)
            kern(x, ts, o, to)
            return to
        return run

    def via_jvp():
        duals, fn = load(Duals).duals, getattr(np, op)
        return lambda: duals.jvp(fn, (x,), (t,))[1]

    entries = [Entry("numpy", f"{op} jvp", lambda: lambda: (value(x), deriv(x) * t)[1],
                     note=f"np.{op}(x), np.{deriv.__name__}(x) * t"),
               Entry("kernel", f"{op} jvp", lambda: fused(True), note="outputs allocated per call"),
               Entry("kernel-prealloc", f"{op} jvp", lambda: fused(False), note="outputs reused"),
               Entry("duals", f"{op} jvp", via_jvp, note="duals.jvp(np.%s, ...)" % op)]
    refs = {f"{op} jvp": lambda: deriv(x) * t}
    return Case(ID, f"{op} n={n}", op, ("numpy", f"{op} jvp"), entries, refs)


def _mul_case(lanes, n):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    tx, ty = rng.standard_normal((lanes, n)), rng.standard_normal((lanes, n))

    def fused(allocate):
        kern = load(Duals).duals.kernels.kernel("mul", "jvp")
        outs, touts = np.empty(n), np.empty((lanes, n))

        def run():
            o, to = (np.empty(n), np.empty((lanes, n))) if allocate else (outs, touts)
            kern(x, y, tx, ty, o, to)
            return to
        return run

    entries = [Entry("numpy", "mul jvp", lambda: lambda: (x * y, tx * y + x * ty)[1],
                     note="x * y, tx * y + x * ty"),
               Entry("kernel", "mul jvp", lambda: fused(True), note="outputs allocated per call"),
               Entry("kernel-prealloc", "mul jvp", lambda: fused(False), note="outputs reused")]
    refs = {"mul jvp": lambda: tx * y + x * ty}
    return Case(ID, f"mul {lanes} lanes n={n}", "mul", ("numpy", "mul jvp"), entries, refs)


def targets(records):
    rows = []
    for r in records:
        if r["workload"] != ID or r["system"] != "kernel" or not r["ratio"]:
            continue
        goal = 0.5 if r["task"] == "mul jvp" else 1.0
        if r["task"] == "exp jvp":
            goal = None
        text = "≥ 2× faster than NumPy" if goal == 0.5 else ("as fast as NumPy" if goal else "(report only)")
        rows.append((f"K1 {r['case']}: kernel {text} (issue 2)", f"{r['ratio']:.2f}× NumPy time",
                     (r["ratio"] <= goal) if goal else None))
    return rows
