"""Second-order reverse rules of element-wise functions as one pass over dual arrays.

Forward over reverse (``hvp``, ``hessian`` of NumPy code) walks the tape with dual numbers: the
rule ``g · ∂f/∂x`` then evaluates the partial on duals (a kernel per operation of its formula) and
multiplies by ``g`` (one more), each a pass over the arrays and a temporary. For float64 arrays of
at least :data:`~duals.ops.FUSED_FROM` entries, when the operands are duals of the trace that ``g``
belongs to or plain values, of the output's shape (a plain one may be a number), the rules made
here run one generated kernel (:func:`duals.second_order_kernels.dual_vjp_kernel`) instead, whose curvature
terms are the table's partials differentiated by :mod:`duals.symbolic`. Anything else (nested
tracers, complex values, broadcast operands, marks of structural zeros, ``detect_anomaly``)
declines, and the primitive's rules run as before.

>>> import numpy as np, duals
>>> x = np.linspace(0.1, 1.0, 5000)
>>> bool(np.allclose(duals.hvp(lambda x: np.sum(np.sin(x)), x, np.ones_like(x)), -np.sin(x)))
True
"""
import numpy as np

from .. import core as _core
from .. import derivatives, second_order_kernels
from ..forward import Dual
from . import FUSED_FROM, flat_cotangent

_F64 = np.dtype(np.float64)
_NUMBERS = (float, np.float64)


class _Declined(Exception):
    """The fast path does not apply; the primitive's rules run."""


def rule(name, argnum=0):
    """rule(name, argnum=0) -> ``fused(g, out, *args)``: the dual of ``g · ∂f/∂args[argnum]`` for
    table entry ``name``, or None where the fast path does not apply; None (no rule) where the
    partial is a constant or a bare operand (nothing to fuse), selects an argument, or has no
    curvature formula."""
    entry = derivatives.TABLE[name]
    partial = entry.partials[argnum]
    if partial in ("0.0", "1.0", "-1.0", "x", "y") or name in derivatives.SELECTING:
        return None
    if entry.arity == 1:
        key, ready = name, second_order_kernels.curvature(partial) is not None
    else:
        key = f"{name}:{'xy'[argnum]}"
        ready = second_order_kernels.curvatures(name, "xy"[argnum]) is not None
    if not ready:
        return None
    second_order_kernels.DUAL_VJP_NAMES.append(key)

    def fused(g, out, *args):
        if type(out) is not Dual or _core.ANOMALY is not None:
            return None
        trace = out._trace
        outs = out.primal
        if type(outs) is not np.ndarray or outs.dtype != _F64 or outs.size < FUSED_FROM:
            return None
        try:
            operands = [_parts(a, trace, outs.shape, full=k == argnum) for k, a in enumerate(args)]
            gs, tgs = _parts(g, trace, None, full=True)
        except _Declined:
            return None
        # g may lead with axes of one entry (jacrev's rows of a scalar): the result keeps them
        if gs.size != outs.size or gs.shape[gs.ndim - outs.ndim:] != outs.shape:
            return None
        tangents = [t for _, t in operands] + [tgs]
        lanes = next((t.shape[0] for t in tangents if t is not None), None)
        if lanes is None or any(t is not None and t.shape[0] != lanes for t in tangents):
            return None
        n = outs.size
        gi, tgi = np.empty(gs.shape), np.empty((lanes,) + gs.shape)
        flat = [(v.reshape(-1), None if t is None else t.reshape(lanes, n)) for v, t in operands]
        second_order_kernels.dual_vjp_kernel(key)(
            *[part for pair in flat for part in pair], outs.reshape(n), flat_cotangent(gs),
            None if tgs is None else tgs.reshape(lanes, n), gi.reshape(n), tgi.reshape(lanes, n))
        return Dual._new(gi, tgi, trace)
    return fused


def preferred(name, argnum, rules):
    """preferred(name, argnum, rules) -> the VJP rule ``rules`` of argument ``argnum`` of table entry
    ``name``, asking :func:`rule`'s kernel first where there is one (and no marks of structural
    zeros: those the rules handle)."""
    fused = rule(name, argnum)
    if fused is None:
        return rules

    def vjp(g, out, *args, unreached=None, **params):
        if unreached is None:
            found = fused(g, out, *args)   # forward over reverse on large arrays: one pass
            if found is not None:
                return found
        return rules(g, out, *args, unreached=unreached, **params)
    return vjp


def _parts(a, trace, shape, full):
    """``(values, tangent or None)`` of an operand: a dual of ``trace`` over float64 arrays of
    ``shape``, or a plain float64 array of it (or a number, unless ``full``)."""
    if type(a) is Dual:
        if a._trace is not trace:
            raise _Declined
        values, tangent = a.primal, a._tangent
        if (type(tangent) is not np.ndarray or tangent.dtype != _F64
                or tangent.shape[1:] != np.shape(values)):
            raise _Declined
    else:
        values, tangent = a, None
        if not full and type(a) in _NUMBERS:
            return np.array((a,)), None
    if type(values) is not np.ndarray or values.dtype != _F64 or (
            shape is not None and values.shape != shape):
        raise _Declined
    return values, tangent
