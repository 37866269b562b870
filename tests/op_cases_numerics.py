"""Derivative cases for ``duals/ops/calculus.py``, ``products.py``, ``statistics.py`` and
``ufuncs.py``: ``diff``, ``gradient``, ``cumprod``, ``trapezoid``, ``polyval``, ``convolve``, ``cross``, ``kron``,
``average``, ``ptp``, ``cov``, ``corrcoef``, ``vander``, ``polyfit``, ``roots``, ``poly``, ``polyadd``/``polysub``/``polymul``/``polyder``/``polyint``, the NaN-ignoring reductions and
order statistics, ``fmax``/``fmin``, ``heaviside``, ``sinc``, the angle conversions,
``nan_to_num``, ``frexp``/``ldexp``, ``modf``, ``divmod``, ``histogram``, ``bincount``, ``where=`` of the reductions and the ufunc methods ``logaddexp.reduce`` and
``multiply.accumulate``, called as plain NumPy.
"""
import numpy as np

import duals.numpy as dnp
from duals.ops.quantile_methods import METHODS
from op_cases import Case

G = ("getitem",)
MASK = np.array([[True, False, True], [False, True, True]])


def _with_nans(x):
    """``x`` with NaN in two fixed entries (the NaN-ignoring functions must skip them)."""
    return np.where(MASK, x, np.nan)


CASES = [
    Case("diff", lambda x: np.diff(x), ((5,),), ("difference", "difference_transpose")),
    Case("diff-n2-axis0", lambda x: np.diff(x, n=2, axis=0), ((4, 2),), ("difference", "difference_transpose")),
    # nine entries: eight differences, the row stride at which NumPy 2.4's SIMD negative misreads
    # its input (duals.ops.negative_into); the square makes the second derivative non-zero
    Case("diff-squared-nine", lambda x: np.diff(x) ** 2, ((9,),), ("difference", "difference_transpose")),
    Case("diff-of-one-entry", lambda x: np.sum(np.diff(x, axis=1)) + x, ((3, 1),), ("difference",)),
    Case("diff-prepend-append", lambda x: np.diff(x ** 2, prepend=0.0, append=x[-1:]), ((4,),),
         ("concatenate", "broadcast_to")),
    Case("cumprod", lambda x: np.cumprod(x), ((5,),), ("cumprod", "linear_recurrence")),
    Case("cumprod-axis", lambda x: np.cumprod(x, axis=1), ((2, 4),), ("cumprod", "linear_recurrence")),
    Case("cumprod-accumulate", lambda x: np.multiply.accumulate(x), ((3, 2),), ("cumprod",)),
    Case("maximum-accumulate", lambda x: np.maximum.accumulate(x, axis=1) ** 2, ((3, 5),),
         ("running_extreme", "linear_recurrence", "where")),
    Case("minimum-accumulate-flat", lambda x: np.minimum.accumulate(x.ravel() * x[0, 0], axis=None),
         ((2, 3),), ("running_extreme", "linear_recurrence")),
    # a drawdown as finance code writes it: the running peak minus the value
    Case("maximum-accumulate-drawdown", lambda x: np.max(np.maximum.accumulate(np.cumsum(x)) - np.cumsum(x)),
         ((6,),), ("running_extreme", "cumsum", "max")),
    # a zero among the factors: the products after it are zero, their derivatives are not
    Case("cumprod-through-a-zero", lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0], dtype=x.dtype)),
         ((4,),), ("cumprod", "linear_recurrence")),
    Case("cumsum-accumulate", lambda x: np.add.accumulate(x ** 2, axis=1), ((2, 3),), ("cumsum",)),
    Case("trapezoid-dx", lambda y: np.trapezoid(y, dx=0.5), ((5,),), ("trapezoid",)),
    Case("trapezoid-dx-axis0", lambda y: np.trapezoid(y ** 2, dx=0.3, axis=0), ((4, 2),), ("trapezoid",)),
    Case("trapezoid-x", lambda y, x: np.trapezoid(y, x), ((5,), (5,)), G + ("sum", "sub")),
    Case("trapezoid-x-2d-axis0", lambda y: np.trapezoid(y, np.array([0.0, 0.5, 2.0], dtype=y.dtype), axis=0),
         ((3, 2),), G + ("reshape",)),
    Case("trapezoid-model-curve", lambda a: np.trapezoid(np.exp(-a * np.linspace(0.0, 1.0, 11) ** 2),
                                                         np.linspace(0.0, 1.0, 11)), ((),), ("exp",)),
    Case("polyval", lambda p, x: np.polyval(p, x), ((4,), (3,)), G + ("mul", "add")),
    # NumPy does not look for traced values inside a list: a list of traced coefficients with a plain
    # x needs duals.numpy.polyval
    Case("polyval-list-of-traced", lambda a: dnp.polyval([a, 2.0, a * a], 0.7), ((),), ("mul",)),
    Case("convolve-full", lambda a, v: np.convolve(a, v), ((5,), (3,)), ("convolve",)),
    Case("convolve-same-swapped", lambda a, v: np.convolve(a, v, "same"), ((2,), (4,)), ("convolve",)),
    Case("convolve-valid", lambda a: np.convolve(a, np.array([0.25, 0.5, 0.25], dtype=a.dtype), "valid"),
         ((5,),), ("convolve",)),
    # an even shorter sequence: 'same' starts off-centre, so the correlation of the reverse rule does too
    Case("convolve-same-even", lambda a, v: np.convolve(a, v, "same"), ((6,), (4,)), ("convolve",)),
    Case("convolve-valid-swapped", lambda a, v: np.convolve(a, v, "valid"), ((3,), (5,)), ("convolve",)),
    Case("correlate-valid", lambda a, v: np.correlate(a, v), ((5,), (3,)), ("convolve", "getitem")),
    # a longer second sequence: NumPy centres the 'same' window from the end
    Case("correlate-same-swapped", lambda a, v: np.correlate(a, v, "same"), ((2,), (5,)), ("convolve",)),
    Case("correlate-full-autocorrelation", lambda a: np.correlate(a, a, "full"), ((4,),), ("convolve",)),
    Case("cross", lambda a, b: np.cross(a, b), ((2, 3), (3,)), G + ("mul", "sub", "concatenate")),
    Case("cross-axes", lambda a, b: np.cross(a, b, axisa=0, axisb=0, axisc=0), ((3, 2), (3, 2)),
         G + ("transpose",)),
    Case("kron", lambda a, b: np.kron(a, b), ((2, 2), (2, 3)), ("mul", "reshape")),
    Case("kron-vector-matrix", lambda a, b: np.kron(a, b), ((2,), (2, 2)), ("mul", "reshape")),
    Case("ptp-axis", lambda x: np.ptp(x, axis=1), ((3, 4),), ("max", "min", "sub")),
    Case("ptp-all-keepdims", lambda x: np.ptp(x, keepdims=True) * x, ((2, 3),), ("max", "min")),
    Case("cov-rows", lambda x: np.cov(x), ((3, 5),), ("matmul", "mean")),
    Case("cov-columns-with-y-bias", lambda x, y: np.cov(x, y, rowvar=False, bias=True), ((5, 2), (5,)),
         ("matmul", "concatenate")),
    Case("cov-traced-aweights-fweights", lambda x, w: np.cov(x, fweights=np.array([1, 2, 1, 3]),
                                                             aweights=w * w + 0.5), ((2, 4), (4,)),
         ("matmul", "div")),
    Case("corrcoef", lambda x: np.corrcoef(x), ((3, 6),), ("matmul", "sqrt", "clip")),
    Case("corrcoef-x-y", lambda x, y: np.corrcoef(x, y)[0, 1], ((5,), (5,)), ("sqrt",)),
    Case("vander", lambda x: np.vander(x), ((4,),), ("mul", "stack")),
    Case("vander-increasing-N", lambda x: np.vander(x, 3, increasing=True), ((5,),), ("mul",)),
    # roots: the real parts and moduli, in NumPy's order (complex pairs at these samples)
    Case("roots-real-part", lambda p: np.real(np.roots(p)), ((5,),), ("eigvals",)),
    Case("roots-modulus-of-a-list", lambda a: np.abs(dnp.roots([1.0, a[0], a[1] * a[2], 0.0])),
         ((3,),), ("eigvals",)),
    # a traced zero last coefficient: the root 0 moves with it, and the others too
    Case("roots-traced-zero-last", lambda p: np.real(np.roots(dnp.concatenate([p, p[:1] * 0.0])) * p[0]),
         ((4,),), ("eigvals",)),
    Case("poly-of-roots", lambda r: np.poly(r), ((4,),), ("convolve", "stack")),
    Case("poly-of-a-matrix", lambda a: np.poly(a), ((3, 3),), ("eigvals", "convolve")),
    Case("polyder-twice", lambda p: np.polyder(p * p, 2), ((5,),), ("mul",)),
    # a traced integration constant: NumPy looks for traced values in p only, so dnp.polyint
    Case("polyint-traced-constants", lambda p: dnp.polyint(p, 2, k=p[:2] ** 2), ((4,),), ("concatenate",)),
    Case("polyadd-polysub-lengths", lambda a, b: np.polysub(np.polyadd(a, b * b), a * a), ((2,), (4,)),
         ("concatenate",)),
    Case("polymul", lambda a, b: np.polymul(a, b * b), ((3,), (2,)), ("convolve",)),
    Case("polyfit-y", lambda y: np.polyfit(np.linspace(0.0, 1.0, 6, dtype=y.dtype), y, 2), ((6,),),
         ("matmul",)),
    Case("polyfit-x-y-weights", lambda x, y, w: np.polyfit(np.sort(x) + np.arange(6, dtype=x.dtype), y, 2,
                                                           w=w * w + 0.5), ((6,), (6,), (6,)), ("matmul",)),
    Case("average-plain-weights", lambda x: np.average(x, axis=1, weights=np.array([1.0, 2.0, 0.5],
                                                                                    dtype=x.dtype)),
         ((2, 3),), ("mul", "sum", "div")),
    Case("average-traced-weights", lambda x, w: np.average(x, weights=w * w + 0.5), ((4,), (4,)),
         ("mul", "sum", "div")),
    Case("average-returned", lambda x: np.average(x, axis=0, returned=True)[0], ((3, 2),), ("sum",)),
    Case("nansum", lambda x: np.nansum(_with_nans(x) * x, axis=0), ((2, 3),), ("select", "sum")),
    Case("nanmean", lambda x: np.nanmean(_with_nans(x)), ((2, 3),), ("select", "sum")),
    Case("nanmedian-axis", lambda x: np.nanmedian(_with_nans(x) * x, axis=1), ((2, 3),), ("sort", "select")),
    Case("nanmedian-all-keepdims", lambda x: np.nanmedian(_with_nans(x), keepdims=True) * x, ((2, 3),),
         ("sort",)),
    Case("nanquantile-several-q", lambda x: np.nanquantile(_with_nans(x), [0.2, 0.7], axis=0), ((2, 3),),
         ("sort",)),
    Case("nanquantile-traced-q", lambda x, q: np.nanquantile(_with_nans(x), q * q / (1.0 + q * q), axis=1),
         ((2, 3), ()), ("sort", "div")),
    Case("nanpercentile-every-method", lambda x: np.stack([np.nanpercentile(_with_nans(x), [5.0, 40.0, 95.0], method=m)
                                                           for m in METHODS]), ((2, 3),), ("sort",)),
    Case("nanpercentile", lambda x: np.nanpercentile(_with_nans(x), 40.0), ((2, 3),), ("sort",)),
    Case("nanmax-nanmin", lambda x: np.nanmax(_with_nans(x), axis=1) - np.nanmin(_with_nans(x), axis=1),
         ((2, 3),), ("max", "min", "select")),
    Case("sum-where", lambda x: np.sum(x ** 2, where=MASK, axis=1), ((2, 3),), ("select", "sum")),
    Case("mean-where", lambda x: np.mean(x, where=MASK), ((2, 3),), ("select", "sum")),
    # the other reductions NumPy masks: each left-out entry takes the reduction's identity
    Case("max-where-initial", lambda x: np.max(x, axis=1, where=MASK, initial=-3.0), ((2, 3),),
         ("select", "max", "maximum")),
    Case("min-where-initial", lambda x: np.min(x, where=MASK, initial=3.0), ((2, 3),),
         ("select", "min", "minimum")),
    Case("prod-where", lambda x: np.prod(x, axis=0, where=MASK), ((2, 3),), ("select", "mul")),
    Case("var-where-ddof", lambda x: np.var(x, axis=1, where=MASK, ddof=1), ((2, 3),), ("select", "sum")),
    Case("std-where", lambda x: np.std(x, where=MASK), ((2, 3),), ("select", "sum", "sqrt")),
    Case("logaddexp-reduce", lambda x: np.logaddexp.reduce(x), ((3, 2),), ("exp", "log", "max")),
    Case("fmax-fmin", lambda x, y: np.fmax(x, y) + np.fmin(x, 2.0 * y), ((3,), (3,)),
         ("maximum", "minimum"), smooth=False),
    Case("fmax-ignores-nan", lambda x, y: np.fmax(_with_nans(x), y), ((2, 3), (2, 3)),
         ("maximum", "select"), smooth=False),
    # sinc: the quotient away from 0, the Taylor polynomial within 1/(2 pi) of it, and both at once
    Case("sinc", lambda x: np.sinc(x), ((2, 3),), ("sin", "div")),
    Case("sinc-near-zero", lambda x: np.sinc(x), ((4,),), ("mul", "add"), domain=(-0.15, 0.15)),
    Case("sinc-across-the-switch", lambda x: np.sinc(x * np.array([0.01, 1.0, 0.3], dtype=x.dtype)),
         ((3,),), ("sin", "div", "mul")),
    Case("heaviside-traced-x2", lambda x, h: np.heaviside(np.array([-1.0, 0.0, 2.0]), h) * x, ((3,), ()),
         ("select", "mul")),
    Case("angles", lambda x: np.deg2rad(x) * np.rad2deg(x) + np.radians(x) - np.degrees(x), ((3,),),
         ("mul",)),
    Case("nan_to_num", lambda x: np.nan_to_num(np.log(x)), ((3,),), ("log", "select"), domain=(0.2, 2.0)),
    # frexp: inputs away from the powers of two where the mantissa jumps (the sampled points are not)
    Case("frexp-mantissa", lambda x: np.frexp(x)[0] * np.frexp(x)[1], ((2, 3),), ("mul",)),
    Case("ldexp-of-frexp", lambda x: np.ldexp(*np.frexp(x)) ** 2, ((4,),), ("mul", "square")),
    # histograms: random inputs lie away from the bin edges, where the bin of an entry changes
    Case("histogram-edges-follow-the-extremes", lambda x: np.histogram(x, 4)[1] * np.arange(1.0, 6.0, dtype=x.dtype),
         ((6,),), ("max", "min")),
    Case("histogram-density", lambda x: np.histogram(x, 3, density=True)[0], ((2, 4),), ("max", "min", "difference")),
    Case("histogram-weights", lambda x, w: np.histogram(x, 3, weights=w * w)[0], ((5,), (5,)), ("bin_sum", "bin_read")),
    Case("histogram-weights-given-edges", lambda w: np.histogram(np.array([0.1, -1.0, 0.5, 2.0]),
         np.array([-2.0, 0.0, 0.3, 3.0]), weights=w, density=True)[0], ((4,),), ("cumsum", "difference")),
    Case("histogram-traced-edges", lambda e: np.histogram(np.array([0.1, 0.5, 1.2, 1.9, 2.6]),
         np.cumsum(e) - 1.0, density=True)[0], ((4,),), ("cumsum", "difference"), domain=(0.5, 1.5)),
    # bincount of traced weights: the sum per integer bin (a scatter-add), bins left empty by x
    Case("bincount-weights", lambda w: np.bincount(np.array([3, 0, 3, 1, 0]), weights=w * w, minlength=6),
         ((5,),), ("bin_sum", "bin_read")),
    Case("bincount-weights-then-gather", lambda w: np.bincount(np.array([1, 1, 0]), w)[np.array([1, 0, 1])] * w,
         ((3,),), ("bin_sum", "bin_read")),
    Case("modf", lambda x: np.modf(x)[0] ** 2 * np.modf(x)[1] + np.modf(3.0 * x)[0], ((2, 3),), ("select", "sub")),
    Case("divmod", lambda x, y: np.divmod(x, y)[1] * np.divmod(x, y)[0] + divmod(x, 0.7)[1], ((3,), (3,)),
         ("mod", "floor_divide"), domain=(0.3, 2.0)),
    Case("gradient-1d", lambda x: np.gradient(x), ((5,),), ("edge_first_gradient", "edge_first_gradient_transpose")),
    Case("gradient-1d-scalar-spacing", lambda x: np.gradient(x ** 2, 0.25), ((4,),), ("edge_first_gradient",)),
    Case("gradient-2d-default", lambda x: np.stack(np.gradient(x)), ((3, 4),), ("edge_first_gradient",)),
    Case("gradient-two-entries", lambda x: np.gradient(x, 0.5, axis=0), ((2, 3),), ("edge_first_gradient",)),
    Case("gradient-2d-spacing-per-axis", lambda x: np.stack(np.gradient(x, 0.5, 2.0)), ((4, 3),), G),
    Case("gradient-axis-edge-order-2", lambda x: np.gradient(x, 0.3, axis=1, edge_order=2), ((2, 4),), G),
    Case("gradient-coordinates", lambda x: np.gradient(x, np.array([0.0, 0.5, 1.5, 1.75, 3.0], dtype=x.dtype)),
         ((5,),), G),
    Case("gradient-traced-spacing", lambda x, h: np.gradient(x, h), ((4,), ()), G + ("div",), domain=(0.5, 2.0)),
    Case("gradient-traced-coordinates", lambda x: np.gradient(np.array([1.0, -2.0, 0.5, 3.0], dtype=x.dtype),
                                                             np.cumsum(x), edge_order=2), ((4,),), G,
         domain=(0.5, 1.5)),
]
