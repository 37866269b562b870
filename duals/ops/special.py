"""Special functions with SciPy's names. ``erf``, ``erfc`` and ``expit`` come from the
derivative table (they are kernels too); ``logsumexp`` is composed."""
import numpy as np

from . import export, innermost
from .elementwise import PRIMITIVES, stop_gradient, where
from .reductions import max as amax
from .reductions import sum as asum
from .shape import reshape


@export("special.logsumexp")
def logsumexp(a, axis=None, keepdims=False):
    """logsumexp(a, axis=None, keepdims=False): ``log(sum(exp(a)))`` without overflow.

    Its gradient is the softmax of ``a``.

    >>> round(float(logsumexp(np.array([1000.0, 1000.0]))), 6)
    1000.693147
    """
    m = stop_gradient(amax(a, axis=axis, keepdims=True))
    m = where(np.isfinite(np.asarray(innermost(m))), m, 0.0)
    s = asum(PRIMITIVES["exp"](a - m), axis=axis, keepdims=True)
    out = PRIMITIVES["log"](s) + m
    if not keepdims:
        shape = out.shape if hasattr(out, "shape") else ()
        axes = range(len(shape)) if axis is None else [ax % len(shape) for ax in np.atleast_1d(axis)]
        out = reshape(out, tuple(n for i, n in enumerate(shape) if i not in axes))
    return out

