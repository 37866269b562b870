"""Special functions with SciPy's names. ``erf``, ``erfc`` and ``expit`` come from the
derivative table (they are kernels too); ``logsumexp``, ``ndtr``, ``logit``, ``log_expit``, ``xlogy``
and ``xlog1py`` are composed; ``gammaln``, ``digamma``/``polygamma``, ``log_ndtr`` and the inverses
``ndtri``, ``erfinv``, ``erfcinv`` take their values from SciPy. SciPy's own ufuncs (``scipy.special.erf(x)`` on a traced ``x``) reach these by
identity (:func:`scipy_ufuncs`)."""
import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import elementwise_rule
from . import dtype_of, export, innermost
from .elementwise import PRIMITIVES, masked, stop_gradient, where
from .reductions import max as amax
from .reductions import sum as asum
from .shape import broadcast_to, reshape


@export("special.logsumexp")
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False): ``log(sum(b * exp(a)))``
    without overflow, with SciPy's arguments (``b`` weights, which may be traced too;
    ``return_sign`` also returns the sign of the sum and takes the log of its magnitude).

    Its gradient is the softmax of ``a`` (weighted by ``b``).

    >>> round(float(logsumexp(np.array([1000.0, 1000.0]))), 6)
    1000.693147
    >>> round(float(logsumexp(np.array([0.0, 0.0]), b=np.array([3.0, 1.0]))), 6)   # log 4
    1.386294
    """
    m, peak = _peak(a, axis)
    terms = PRIMITIVES["exp"](a - m)
    if b is not None:
        terms = b * terms
    s = asum(terms, axis=axis, keepdims=True)
    sign = None
    if return_sign:
        sign = np.sign(np.asarray(innermost(s)))
        s = PRIMITIVES["abs"](s)
    # a sum of entries that are all -inf stays -inf under any finite change of them (or of b):
    # slope 0 there, not log's 0/0 = NaN (which a Jacobian would spread to the other sums)
    vanished = peak == -np.inf
    if np.any(vanished):
        s = where(vanished, 1.0, s)
    out = PRIMITIVES["log"](s) + m
    if np.any(vanished):
        out = where(vanished, -np.inf, out)
    if not keepdims:
        shape = out.shape if hasattr(out, "shape") else ()
        axes = range(len(shape)) if axis is None else [ax % len(shape) for ax in np.atleast_1d(axis)]
        kept = tuple(n for i, n in enumerate(shape) if i not in axes)
        out = reshape(out, kept)
        sign = None if sign is None else sign.reshape(kept)
    return out if sign is None else (out, sign)


def _peak(a, axis):
    """(m, its value): the largest entry along ``axis`` (kept dims), held constant, 0 where it is
    not finite: what log-sum-exp shifts by (the result does not depend on the shift)."""
    m = stop_gradient(amax(a, axis=axis, keepdims=True))
    peak = np.asarray(innermost(m))
    return where(np.isfinite(peak), m, 0.0), peak


@export("special.softmax")
def softmax(x, axis=None):
    """softmax(x, axis=None): ``exp(x) / sum(exp(x))`` over ``axis`` (all entries when None), as
    SciPy's, computed as ``exp(log_softmax(x))``.

    >>> softmax(np.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return PRIMITIVES["exp"](log_softmax(x, axis=axis))


@export("special.log_softmax")
def log_softmax(x, axis=None):
    """log_softmax(x, axis=None): ``x - logsumexp(x)`` over ``axis``, as SciPy's.

    >>> round(float(log_softmax(np.array([0.0, 0.0]))[0]), 6)
    -0.693147
    """
    shifted = x - _peak(x, axis)[0]    # (x - logsumexp(x) would round at the scale of x)
    return shifted - PRIMITIVES["log"](asum(PRIMITIVES["exp"](shifted), axis=axis, keepdims=True))


# ---------------------------------------------------------------- SciPy's special functions
# Composed from the table where that is exact; gammaln, digamma/polygamma and log_ndtr have no
# NumPy spelling, so their values come from SciPy (imported when first computed: SciPy stays an
# optional dependency) and their derivatives are the next function of the family.

_SQRT_HALF = 0.7071067811865476
_LOG_SQRT_2PI = 0.9189385332046728


@export("special.ndtr")
def ndtr(x):
    """ndtr(x): the standard normal CDF, ``erfc(-x / sqrt 2) / 2``.

    >>> float(ndtr(0.0))
    0.5
    """
    if np.result_type(dtype_of(x)).kind == "c":
        raise TypeError("duals' ndtr is computed for real numbers only (through erfc) and got complex "
                        "values; scipy.special.ndtr itself computes complex values, without a derivative")
    return 0.5 * PRIMITIVES["erfc"](-_SQRT_HALF * x)


@export("special.logit")
def logit(x):
    """logit(x): ``log(x / (1 - x))``, the inverse of ``expit``.

    >>> float(logit(0.5))
    0.0
    """
    return PRIMITIVES["log"](x) - PRIMITIVES["log1p"](-x)


@export("special.log_expit")
def log_expit(x):
    """log_expit(x): ``log(expit(x))`` as ``-logaddexp(0, -x)``, accurate in both tails (a Bernoulli
    log-likelihood's ``log p``; ``log_expit(-x)`` is ``log(1 - p)``).

    >>> float(log_expit(0.0)) == -float(np.log(2.0))
    True
    """
    return -PRIMITIVES["logaddexp"](0.0, -x)


@export("special.xlogy")
def xlogy(x, y):
    """xlogy(x, y): ``x * log(y)``, and 0 where ``x == 0``. Its slope in ``x`` stays ``log(y)`` there
    (the function is linear in ``x``), 0 where ``x == 0`` and ``log(y)`` is not finite (as PyTorch).

    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    return _times_log(x, y, "log")


@export("special.xlog1py")
def xlog1py(x, y):
    """xlog1py(x, y): ``x * log1p(y)``, and 0 where ``x == 0`` (slope in ``x`` as :func:`xlogy`'s).

    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    return _times_log(x, y, "log1p")


def _times_log(x, y, log):
    zero = np.asarray(innermost(x)) == 0
    if np.any(zero) and not isinstance(x, Tracer):
        # data (an empty bin's count): 0 whatever y is, in every order, and y's log is not taken
        # there (its second derivative 0 · -1/y² was NaN for y < 1e-154, with overflow warnings)
        neutral = 1.0 if log == "log" else 0.0
        return where(zero, 0.0, x * PRIMITIVES[log](where(zero, neutral, y)))
    with np.errstate(divide="ignore", invalid="ignore"):   # the branch not taken, as in SciPy
        logy = PRIMITIVES[log](y)
        if not np.any(zero):
            return x * logy
        off = zero & ~np.isfinite(np.asarray(innermost(logy)))
        out = x * where(off, 0.0, logy)
        return where(zero, out + 0.0, out)   # (+0.0: SciPy's 0 where x is 0, not 0 · log(0.5) = -0)


def _scipy_special():
    try:
        import scipy.special
    except ImportError:
        raise ImportError("duals.numpy.special.gammaln, digamma, polygamma, log_ndtr, ndtri, erfinv and "
                          "erfcinv compute "
                          "their values with SciPy: pip install scipy") from None
    return scipy.special


def _unary(name, impl, partial):
    """An element-wise primitive computing ``impl(x, **params)``, whose derivative is ``partial(x, out, **params)``."""
    prim = Primitive(name, impl)
    prim.elementwise = True
    prim.def_sparsity(elementwise_rule(True))
    prim.def_jvp(0, lambda t, out, x, **kw: partial(x, out, **kw) * t)
    prim.def_vjp(0, lambda g, out, x, unreached=None, **kw: masked(partial(x, out, **kw) * g, unreached))
    return prim


def _from_scipy(name):
    def impl(x, **kw):
        out = getattr(_scipy_special(), name)(*([kw["n"]] if "n" in kw else []), x)
        dtype = np.result_type(x)
        return (out.astype(dtype) if dtype == np.float32 else out)[()]   # (polygamma computes in float64)
    return impl


polygamma_p = _unary("polygamma", _from_scipy("polygamma"), lambda x, out, *, n: polygamma_p(x, n=n + 1))
gammaln_p = _unary("gammaln", _from_scipy("gammaln"), lambda x, out: polygamma_p(x, n=0))

# log_ndtr's slope g = φ(x)/Φ(x) is exp(log φ - log Φ) until far into the lower tail, where the
# two logs cancel (x = -10⁴: 5e7 each, the slope 1e4), and so do the derivatives: g' = -g q with
# the gap q = x + g ~ 1/|x|, and q' = 1 - g q. Below x = -5 they come from the continued fraction
# of Mills' ratio instead: with t = -x, r = 2/(t + 3/(t + ...)) and c = 1/(t + r) (40 terms: exact
# to rounding from t = 5 on), g = t + c, q = c and q' = c (r - c), each to full precision.
_LOWER_TAIL = -5.0


def _tail(t):
    r = np.zeros_like(t)
    for k in range(40, 1, -1):
        r = k / (t + r)
    c = 1.0 / (t + r)
    return c, r


def _slope_gap_bend(x):
    """(g, q, q') of log_ndtr at ``x`` (see above)."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        slope = np.exp(-0.5 * flat * flat - _LOG_SQRT_2PI - _scipy_special().log_ndtr(flat))
        gap = flat + slope
        bend = 1.0 - slope * gap
    tail = flat < _LOWER_TAIL
    if np.any(tail):
        c, r = _tail(-flat[tail])
        slope[tail], gap[tail], bend[tail] = c - flat[tail], c, c * (r - c)
    return tuple(part.reshape(x.shape)[()] for part in (slope, gap, bend))


log_ndtr_slope_p = _unary("log_ndtr_slope", lambda x: _slope_gap_bend(x)[0],
                          lambda x, out: -out * log_ndtr_gap_p(x))
log_ndtr_gap_p = _unary("log_ndtr_gap", lambda x: _slope_gap_bend(x)[1], lambda x, out: log_ndtr_bend_p(x))
log_ndtr_bend_p = _unary("log_ndtr_bend", lambda x: _slope_gap_bend(x)[2],   # q'' = g q² - g q'
                         lambda x, out: log_ndtr_slope_p(x) * (log_ndtr_gap_p(x) ** 2 - out))
log_ndtr_p = _unary("log_ndtr", _from_scipy("log_ndtr"), lambda x, out: log_ndtr_slope_p(x))

# the inverses of ndtr, erf and erfc: the derivative is one over the function's at the value,
# written in the value so that it differentiates again (inf at the ends of the domain, as the limit)
_SQRT_2PI = 2.5066282746310002
_SQRT_PI_OVER_2 = 0.886226925452758
ndtri_p = _unary("ndtri", _from_scipy("ndtri"), lambda x, out: _SQRT_2PI * PRIMITIVES["exp"](0.5 * out * out))
erfinv_p = _unary("erfinv", _from_scipy("erfinv"), lambda x, out: _SQRT_PI_OVER_2 * PRIMITIVES["exp"](out * out))
erfcinv_p = _unary("erfcinv", _from_scipy("erfcinv"),
                   lambda x, out: -_SQRT_PI_OVER_2 * PRIMITIVES["exp"](out * out))


@export("special.gammaln")
def gammaln(x):
    """gammaln(x): ``log|Γ(x)|``; its derivative is ``digamma``. Needs SciPy.

    >>> round(float(gammaln(5.0)), 6)   # log(4!)
    3.178054
    """
    return gammaln_p(x)


@export("special.polygamma")
def polygamma(n, x):
    """polygamma(n, x): the n-th derivative of ``digamma``; its derivative is ``polygamma(n + 1, x)``.

    >>> round(float(polygamma(1, 1.0)), 6)   # π²/6
    1.644934
    """
    from ..core import Tracer
    if isinstance(n, Tracer):
        raise TypeError("polygamma(n, x): the order n is a whole number and is not differentiated; "
                        "pass it as a plain int (or an array of ints), e.g. n = 1")
    order = np.asarray(n)
    if order.ndim:   # SciPy broadcasts an array of orders against x
        shape = np.broadcast_shapes(order.shape, np.shape(x))
        return polygamma_p(broadcast_to(x, shape), n=np.broadcast_to(order, shape).copy())
    return polygamma_p(x, n=order.item())   # (a fractional n gives NaN, as SciPy)


@export("special.digamma", "special.psi")
def digamma(x):
    """digamma(x): ``d/dx log Γ(x)``, ``polygamma(0, x)``. Needs SciPy.

    >>> round(float(digamma(1.0)), 6)   # -γ
    -0.577216
    """
    return polygamma_p(x, n=0)


@export("special.log_ndtr")
def log_ndtr(x):
    """log_ndtr(x): ``log(ndtr(x))``, accurate far into the lower tail (SciPy's value).

    >>> round(float(log_ndtr(0.0)), 6)
    -0.693147
    """
    return log_ndtr_p(x)


@export("special.ndtri")
def ndtri(p):
    """ndtri(p): the inverse of ``ndtr``, the standard normal quantile (SciPy's value);
    its derivative is ``sqrt(2π) exp(ndtri(p)² / 2)``.

    >>> round(float(ndtri(0.975)), 6)
    1.959964
    """
    return ndtri_p(p)


@export("special.erfinv")
def erfinv(y):
    """erfinv(y): the inverse of ``erf`` on (-1, 1) (SciPy's value); its derivative is
    ``(sqrt(π) / 2) exp(erfinv(y)²)``.

    >>> float(erfinv(0.0))
    0.0
    """
    return erfinv_p(y)


@export("special.erfcinv")
def erfcinv(y):
    """erfcinv(y): the inverse of ``erfc`` on (0, 2) (SciPy's value); its derivative is
    ``-(sqrt(π) / 2) exp(erfcinv(y)²)``.

    >>> round(float(erfcinv(0.5)), 6)
    0.476936
    """
    return erfcinv_p(y)


def scipy_ufuncs():
    """scipy_ufuncs() -> {scipy ufunc: duals function}, when SciPy is already imported (else {})."""
    import sys
    module = sys.modules.get("scipy.special")
    if module is None:
        return {}
    names = {"erf": PRIMITIVES["erf"], "erfc": PRIMITIVES["erfc"], "expit": PRIMITIVES["expit"],
             "ndtr": ndtr, "logit": logit, "log_expit": log_expit, "xlogy": xlogy, "xlog1py": xlog1py,
             "gammaln": gammaln, "psi": digamma, "log_ndtr": log_ndtr, "ndtri": ndtri, "erfinv": erfinv,
             "erfcinv": erfcinv}
    return {getattr(module, n): f for n, f in names.items() if hasattr(module, n)}
