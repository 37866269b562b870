"""K2 (issue 2): jvp of a chain of 20 element-wise ops on 10⁵ elements vs the plain function."""
import numpy as np

from ..numerics import central_directional, njit
from ..systems import ad_entries, bind
from ..timing import Case, Entry

ID = "K2"
TITLE = "jvp of a 20-op element-wise chain"
SIZES = (100_000,)
QUICK_SIZE = 100


def chain20(x, xp=np):
    """chain20(x) -> 20 element-wise ops (sin, mul, exp, add, log, tanh, cos, ...) of x."""
    y = xp.sin(x)                      # 1
    y = y * x                          # 2
    y = xp.exp(y)                      # 3
    y = y + 1.0                        # 4
    y = xp.log(y)                      # 5
    y = xp.tanh(y)                     # 6
    y = y * y                          # 7
    y = xp.cos(y)                      # 8
    y = y - x                          # 9
    y = y * 0.5                        # 10
    y = xp.sqrt(y * y + 1.0)           # 11, 12, 13
    y = y / (x * x + 2.0)              # 14, 15, 16
    y = xp.arctan(y)                   # 17
    y = y * y                          # 18
    return xp.exp(-y)                  # 19, 20


def chain20_loop(x):
    """chain20_loop(x) -> the same, element by element (for Numba)."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        y = np.tanh(np.log(np.exp(np.sin(v) * v) + 1.0))
        y = (np.cos(y * y) - v) * 0.5
        y = np.arctan(np.sqrt(y * y + 1.0) / (v * v + 2.0))
        out[i] = np.exp(-(y * y))
    return out


def complex_step(x, t, h=1e-30):
    """complex_step(x, t) -> J·t to round-off, by one complex evaluation."""
    return chain20(x + 1j * h * t).imag / h


def cases(quick):
    return [_case(n) for n in ((QUICK_SIZE,) if quick else SIZES)]


def _case(n):
    rng = np.random.default_rng(4)
    x, t = rng.uniform(-1, 1, n), rng.standard_normal(n)
    entries = [Entry("numpy", "f", lambda: lambda: chain20(x)),
               Entry("numba", "f", lambda: _numba_f(x)),
               Entry("fd", "jvp", lambda: lambda: central_directional(chain20, x, t), rtol=1e-6,
                     note="central difference, 2 evaluations")]
    entries += ad_entries("jvp", lambda s: bind(s, s.jvp(lambda y: chain20(y, s.xp)), x, t))
    refs = {"f": lambda: chain20(x), "jvp": lambda: complex_step(x, t)}
    return Case(ID, f"n={n}", "n", ("numpy", "f"), entries, refs)


def _numba_f(x):
    fn = njit(chain20_loop)
    return lambda: fn(x)


def targets(records):
    from . import pick
    r = pick(records, ID, "duals", "jvp", "n=100000")
    return [("K2 jvp/f at n=10⁵ ≤ 3 (issue 2)", f"{r['ratio']:.2f}", r["ratio"] <= 3.0)] if r else []
