"""Forward mode: the dual number ``a + bε`` and the JVP trace that interprets primitives on it.

A :class:`Dual` holds a primal value and a tangent. Internally the tangent always carries
one leading *lanes* axis (``tangent.shape == (lanes,) + primal.shape``) so that ``jacfwd``
pushes many directions in one pass; a user-made ``Dual(a, b)`` has one lane, and
``.tangent`` gives it back in the shape it was given.
"""
import numpy as np

from . import core as _core
from .core import Trace, Tracer, bind
from .validation import check_numeric_dtype, check_real_tangent


class JVPTrace(Trace):
    """JVPTrace(level, lanes): one forward-mode transformation pushing ``lanes`` directions."""

    __slots__ = ("lanes",)

    def __init__(self, level, lanes=1):
        self.level = level
        self.lanes = lanes
        self.closed = False

    def process(self, prim, args, params, reported=False):
        if self.closed:
            raise _core.escaped()
        if _core.ANOMALY is not None and not reported:  # tell detect_anomaly which rule runs
            return _core.ANOMALY.within("forward", prim, None, self.process, prim, args, params, True)
        primals = []
        tangents = []
        raw = True
        for a in args:
            if type(a) is Dual and a._trace is self:
                primals.append(a.primal)
                tangents.append(a._tangent)
                raw = raw and not isinstance(a.primal, Tracer) and not isinstance(a._tangent, Tracer)
            else:
                primals.append(a)
                tangents.append(None)
                raw = raw and not isinstance(a, Tracer)
        if raw and prim.fused_jvp is not None:
            fused = prim.fused_jvp(primals, tangents, **params)
            if fused is not None:   # None: the fast path declines, the rules below apply
                out, tangent = fused
                if _core.ANOMALY is not None:
                    _core.ANOMALY.forward(prim, primals, out, tangent)
                return Dual._new(out, tangent, self)
        out = bind(prim, *primals, **params)
        if _core.ANOMALY is not None:
            _core.ANOMALY.now("tangent")   # the primal is computed: the JVP rules run
        if prim.jvp_all is not None:
            return Dual._new(out, prim.jvp_all(tangents, out, *primals, **params), self)
        tangent = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            rule = prim.jvps.get(i)
            if rule is None:
                raise NotImplementedError(
                    f"primitive {prim.name!r} has no JVP rule for argument {i}; "
                    f"forward mode cannot differentiate through it")
            contribution = rule(t, out, *primals, **params)
            if contribution is not None:
                tangent = contribution if tangent is None else _add(tangent, contribution)
        if tangent is None:
            return out
        if _core.ANOMALY is not None:
            _core.ANOMALY.forward(prim, primals, out, tangent)
        return Dual._new(out, tangent, self)


def _add(a, b):
    from .ops.elementwise import add
    return add(a, b)


USER_TRACE = JVPTrace(level=2, lanes=1)


class Dual(Tracer):
    """Dual(primal, tangent): the dual number ``primal + tangent·ε`` with ``ε² = 0``.

    ``primal`` and ``tangent`` are floats or NumPy arrays of one shape. Arithmetic,
    NumPy functions and methods act on both parts at once.

    >>> d = Dual(2.0, 1.0)
    >>> (d * d + 3.0 * d).tangent   # d/dx (x² + 3x) at x = 2
    7.0
    """

    __slots__ = ("primal", "_tangent", "_trace")

    def _outlives_transformations(self):   # a user's own Dual (duals.Dual(...)): an object
        return self._trace.level == USER_TRACE.level

    def __init__(self, primal, tangent):
        if isinstance(primal, Tracer) or isinstance(tangent, Tracer):
            raise TypeError("Dual(primal, tangent) takes plain floats or arrays; "
                            "nest transformations with duals.jvp instead")
        p = np.asarray(primal)
        check_numeric_dtype(p, "Dual primal")
        check_numeric_dtype(np.asarray(tangent), "Dual tangent")
        check_real_tangent(p, tangent, "Dual tangent")
        t = np.asarray(tangent, dtype=p.dtype if p.dtype.kind in "fc" else np.float64)
        if t.shape != p.shape:
            raise ValueError(f"Dual: tangent shape {t.shape} does not match primal shape "
                             f"{p.shape}; give one tangent entry per primal entry")
        self.primal = primal if isinstance(primal, (float, np.ndarray)) else p[()] if p.ndim == 0 else p
        self._tangent = t[None]
        self._trace = USER_TRACE
        self._family = None

    @classmethod
    def _new(cls, primal, tangent, trace):
        d = object.__new__(cls)
        d.primal = primal
        d._tangent = tangent
        d._trace = trace
        d._family = None
        return d

    def _under(self):
        return self.primal

    @property
    def tangent(self):
        """The tangent; a leading lanes axis is shown only when there are several lanes."""
        t = self._tangent
        if self._trace.lanes == 1 and not isinstance(t, Tracer):
            t = t[0]
            return float(t) if t.ndim == 0 and t.dtype == np.float64 else t[()] if t.ndim == 0 else t
        if self._trace.lanes == 1:
            return t[0]
        return t

    def __repr__(self):
        primal = float(self.primal) if type(self.primal) is np.float64 else self.primal
        return f"Dual({primal!r}, {self.tangent!r})"
