"""Derivative cases for ``duals/ops/sorting.py``: ``sort``, ``unique``, ``median``, ``percentile``/``quantile``
(the data and a traced ``q``) and ``interp`` (traced ``x``, ``xp`` and/or ``fp``), called as plain NumPy
(``np.sort(x)`` reaches duals through ``__array_function__``).

Inputs are drawn at random, so ties (where these functions have a kink) have probability zero;
the tie policy itself is tested in ``test_numpy_coverage.py``.
"""
import numpy as np

import duals.numpy as dnp
from duals.ops.quantile_methods import CONTINUOUS, METHODS
from op_cases import Case

G = ("getitem",)
S = ("sort", "permute")
XP = np.linspace(-3.0, 3.0, 7)   # knots at the integers: the inputs in (-2, 2) fall between them
PERIODIC_XP = np.array([1.3, 0.4, 2.1, 3.3])   # unsorted; 3.3 is 0.8 modulo the period 2.5

CASES = [
    Case("sort-last-axis", lambda x: np.sort(x) * np.arange(1.0, 4.0, dtype=x.dtype), ((2, 3),), S),
    Case("sort-axis0", lambda x: np.sort(x, axis=0), ((4, 2),), S),
    Case("sort-flattened-squared", lambda x: np.sort(x, axis=None) ** 2, ((2, 3),), G + ("square",)),
    Case("sort-then-diff", lambda x: np.diff(np.sort(x)), ((5,),), G + ("sub",)),
    Case("unique", lambda x: np.unique(x) ** 2, ((2, 3),), G + ("square",)),
    Case("unique-with-repeats", lambda x: np.unique(np.concatenate([x, x[::-1]])), ((4,),), G),
    Case("unique-rows-with-counts", lambda x: np.unique(np.vstack([x, x]), axis=0, return_counts=True)[0]
         * np.unique(np.vstack([x, x]), axis=0, return_counts=True)[1][:, None], ((2, 3),), G),
    Case("median-odd", lambda x: np.median(x), ((5,),), G),
    Case("median-even-axis", lambda x: np.median(x, axis=1), ((3, 4),), G + ("add", "div")),
    Case("median-keepdims-tuple-axis", lambda x: np.median(x, axis=(0, 2), keepdims=True) * x,
         ((2, 3, 2),), G + ("transpose", "reshape")),
    Case("percentile-many-q", lambda x: np.percentile(x, [10.0, 50.0, 95.0], axis=0), ((5, 2),),
         G + ("select",)),
    Case("quantile-scalar-q", lambda x: np.quantile(x, 0.3), ((6,),), G),
    Case("quantile-traced-q", lambda q: np.quantile(np.array([0.5, -1.0, 2.0, 0.25, 1.5], dtype=q.dtype), q),
         ((3,),), G + ("mul",), domain=(0.05, 0.95)),
    Case("quantile-data-and-q", lambda x, q: np.quantile(x, q, axis=1), ((2, 5), ()), G,
         domain=(0.05, 0.95)),
    Case("quantile-every-method", lambda x: np.stack([np.quantile(x, [0.02, 0.3, 0.5, 0.97], axis=0, method=m)
                                                      for m in METHODS]), ((7, 2),), G),
    Case("quantile-traced-q-continuous-methods",
         lambda x, q: np.stack([np.quantile(x, q, axis=1, method=m) for m in ("linear",) + tuple(CONTINUOUS)]),
         ((2, 5), ()), G, domain=(0.05, 0.95)),
    Case("interp-x", lambda x: np.interp(x, XP, np.sin(XP)), ((4,),), G + ("select",), float32=False),
    Case("interp-fp", lambda fp: np.interp(np.array([-2.5, 0.3, 1.7, 4.0]), XP, fp), ((7,),), G,
         float32=False),
    Case("interp-x-and-fp", lambda x, fp: np.interp(x, XP, fp ** 2, left=0.0), ((2, 2), (7,)),
         G + ("square",), float32=False),
    # traced knots: increasing for the sampled offsets (a step of 1 plus at most 0.3 either way)
    Case("interp-knots", lambda d: np.interp(np.array([-0.5, 0.4, 1.3, 2.2, 3.9]),
                                             np.arange(4.0, dtype=d.dtype) + d, np.array([1.0, 3.0, 2.0, 5.0])),
         ((4,),), G + ("div", "sub"), domain=(-0.3, 0.3), float32=False),
    Case("interp-x-knots-and-values", lambda x, d, fp: np.interp(x, np.arange(4.0) + 0.3 * d, fp),
         ((3,), (4,), (4,)), G + ("div", "sub"), domain=(0.2, 2.8), float32=False),
    # a periodic table in any order, with a wrap-around segment between its last and first knots
    Case("interp-periodic", lambda x, fp: np.interp(3.0 * x, PERIODIC_XP, fp, period=-2.5), ((5,), (4,)),
         G + ("mod", "select", "concatenate"), float32=False),
    # NumPy dispatches interp on x, xp and fp only: a traced ``right`` alone needs duals.numpy.interp
    Case("interp-traced-right", lambda x, r: dnp.interp(3.0 * x, XP, np.cos(XP), right=r), ((4,), ()),
         G + ("select",), float32=False),
]
