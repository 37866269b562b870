"""Second-order reverse rules of one-argument element-wise functions as one pass over dual arrays.

Forward over reverse (``hvp``, ``hessian`` of NumPy code) walks the tape with dual numbers: the
rule ``g · f'(x)`` then evaluates the partial ``f'(x)`` on duals (a kernel per operation of its
formula) and multiplies by ``g`` (one more), each a pass over the arrays and a temporary. For
float64 arrays of at least :data:`~duals.ops.FUSED_FROM` entries, when ``x`` is a dual of
the trace that ``g`` belongs to (or ``g`` is plain), :func:`rule` runs one generated kernel
(:func:`duals.kernels.dual_vjp_kernel`) instead, whose curvature term is the table's partial
differentiated by :mod:`duals.symbolic`. Anything else (nested tracers, complex values, marks of
structural zeros, ``detect_anomaly``) declines, and the primitive's rules run as before.

>>> import numpy as np, duals
>>> x = np.linspace(0.1, 1.0, 5000)
>>> bool(np.allclose(duals.hvp(lambda x: np.sum(np.sin(x)), x, np.ones_like(x)), -np.sin(x)))
True
"""
import numpy as np

from .. import core as _core
from .. import derivatives, kernels
from ..forward import Dual
from . import FUSED_FROM

_F64 = np.dtype(np.float64)


def rule(name):
    """rule(name) -> ``fused(g, out, x)``: the dual of ``g · f'(x)`` for table entry ``name``, or
    None where the fast path does not apply; None if the entry's partial has no curvature formula."""
    partial, = derivatives.TABLE[name].partials
    if partial == "0.0" or kernels.curvature(partial) is None:
        return None
    kernels.DUAL_VJP_NAMES.append(name)

    def fused(g, out, x):
        if type(x) is not Dual or type(out) is not Dual or _core.ANOMALY is not None:
            return None
        trace = x._trace
        xs, txs = x.primal, x._tangent
        if (out._trace is not trace or type(xs) is not np.ndarray or xs.dtype != _F64
                or xs.size < FUSED_FROM or type(txs) is not np.ndarray or txs.dtype != _F64
                or type(out.primal) is not np.ndarray or out.primal.shape != xs.shape):
            return None
        gs, tgs = (g.primal, g._tangent) if type(g) is Dual else (g, None)
        # g may lead with axes of one entry (jacrev's rows of a scalar): the result keeps them
        if (type(gs) is not np.ndarray or gs.dtype != _F64 or gs.size != xs.size
                or gs.shape[gs.ndim - xs.ndim:] != xs.shape):
            return None
        n, lanes = xs.size, txs.shape[0]
        if tgs is not None and (g._trace is not trace or type(tgs) is not np.ndarray
                                or tgs.dtype != _F64 or tgs.shape != (lanes,) + gs.shape):
            return None
        gx, tgx = np.empty(gs.shape), np.empty((lanes,) + gs.shape)
        kernels.dual_vjp_kernel(name)(
            xs.reshape(n), txs.reshape(lanes, n), out.primal.reshape(n), _values(gs, n),
            None if tgs is None else tgs.reshape(lanes, n), gx.reshape(n), tgx.reshape(lanes, n))
        return Dual._new(gx, tgx, trace)
    return fused


def _values(g, n):
    """``g`` flat: length ``n``, or length 1 when every entry is one number (a sum's cotangent)."""
    if g.ndim and not any(g.strides):
        return g.reshape(-1)[:1]
    return g.reshape(n)
