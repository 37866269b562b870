"""detect_anomaly: find where the first NaN or infinity was born.

Inside ``with detect_anomaly():`` every value a primitive computes, every tangent forward
mode pushes and every cotangent the backward walk pulls is checked; the first one holding
a NaN or an infinity raises :class:`AnomalyError` naming the primitive, the mode
(forward / reverse), what was not finite (value, tangent, cotangent) and the file and line
of *your* code that created the operation (frames inside ``duals`` and NumPy are skipped).
For reverse mode the creation site is recorded when the tape records the node, so the
error of a cotangent points at the line of the forward computation.

Outside the context nothing is recorded or checked: the interpreters test one module
attribute, ``duals.core.ANOMALY``, which is ``None`` unless the context is active. The
hooks are ``core.bind`` (values computed on plain arrays), ``JVPTrace.process`` (fused
value-and-tangent kernels and rule results), ``Node.__init__`` (creation sites) and the
backward walk (each rule's cotangent). When a NaN is first produced inside a derivative
rule (``0.5 / out`` in ``sqrt``'s rule at 0), the error names the primitive whose rule was
running: the interpreters report each step to the checker explicitly (``within``/``now``).
"""
import contextlib
import os
import sys
import weakref

import numpy as np

from . import core

__all__ = ["detect_anomaly", "AnomalyError"]

_SKIP = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
         os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


class AnomalyError(FloatingPointError):
    """AnomalyError: a NaN or infinity appeared inside ``detect_anomaly()``.

    Attributes: ``primitive`` (name), ``mode`` ("forward", "reverse" or "none"), ``kind``
    ("value", "tangent" or "cotangent") and ``site`` (``(filename, lineno, function)`` or None).
    """

    def __init__(self, message, primitive, mode, kind, site):
        super().__init__(message)
        self.primitive, self.mode, self.kind, self.site = primitive, mode, kind, site


@contextlib.contextmanager
def detect_anomaly():
    """detect_anomaly(): inside it the first NaN or inf in a value, tangent or cotangent raises AnomalyError.

    >>> import numpy as np, duals
    >>> with detect_anomaly(), np.errstate(divide="ignore"):
    ...     try:
    ...         duals.grad(lambda x: np.sqrt(x))(0.0)
    ...     except AnomalyError as e:
    ...         print(e.primitive, e.mode, e.kind)
    sqrt reverse cotangent
    """
    previous = core.ANOMALY
    core.ANOMALY = previous if previous is not None else _Checker()
    try:
        yield
    finally:
        core.ANOMALY = previous


def _finite(x):
    if isinstance(x, core.Tracer) or x is None:
        return True   # a traced value's own numbers are checked where they are computed
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    if a.dtype.kind not in "fc":
        return True
    return bool(np.isfinite(a).all())


def _bad_word(x):
    a = np.asarray(x)
    return "nan" if np.isnan(a).any() else "inf"


def _user_site(frame):
    """(filename, lineno, function) of the first frame outside duals and NumPy."""
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_SKIP):
            return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


class _Checker:
    """The hooks the interpreters call while ``detect_anomaly`` is active."""

    def __init__(self):
        self.sites = weakref.WeakKeyDictionary()   # Node -> creation site
        # what the interpreters are doing, outermost first: [kind, prim, node, caller's frame];
        # kind is "forward"/"tangent" (JVPTrace), "record" (ReverseTrace), "walk"/"cotangent"
        self.running = []

    # -- the context the interpreters report explicitly ---------------------------------------
    def within(self, kind, prim, node, func, *args):
        """Run ``func(*args)`` as an interpreter step of ``kind`` on ``prim`` (or ``node``)."""
        self.running.append([kind, prim, node, sys._getframe(2)])
        try:
            return func(*args)
        finally:
            self.running.pop()

    def now(self, kind, node=None):
        """The innermost interpreter step moves on: its primal is done (``"tangent"``), or the
        walk reached ``node`` (``"cotangent"``)."""
        top = self.running[-1]
        top[0] = kind
        if node is not None:
            top[1], top[2] = node.prim, node

    # -- hooks -------------------------------------------------------------------
    def impl(self, prim, args, params):
        """core.bind on plain values: compute, then check the value."""
        out = prim.impl(*args, **params)
        if not _finite(out):
            self._raise(("value", prim, None), out, args, sys._getframe(1))
        return out

    def forward(self, prim, primals, out, tangent):
        """JVPTrace.process: check a fused kernel's value and any rule's tangent."""
        if not _finite(out):
            self._raise(("value", prim, None), out, primals, sys._getframe(2), "forward")
        if not _finite(tangent):
            self._raise(("tangent", prim, None), tangent, primals, sys._getframe(2), "forward")

    def record(self, node):
        """Node.__init__: remember the user's line that created the node."""
        self.sites[node] = _user_site(sys._getframe(2))

    def cotangent(self, node, argnum, g):
        """The backward walk: check the cotangent a VJP rule returned."""
        if not _finite(g):
            self._raise(("cotangent", node.prim, node), g, node.args or (), sys._getframe(2))

    # -- the report --------------------------------------------------------------
    def _raise(self, inner, bad, inputs, frame, mode=None):
        outer, modes = self._context()
        modes.add(mode)
        kind, prim, node = outer[:3] if outer is not None else inner
        if kind == "cotangent":
            mode = "reverse"
        elif kind == "tangent":
            mode = "forward"
        else:
            mode = " and ".join(m for m in ("forward", "reverse") if m in modes) or "none"
        site = self.sites.get(node) if node is not None else None
        # the user's line: seen from the running rule's interpreter frame, not from inside the rule
        live = _user_site(outer[3] if outer is not None else frame)
        where = site or live
        word = _bad_word(bad)
        text = f"detect_anomaly: {word} in the {kind} of primitive {prim.name!r} ({mode} mode"
        text += ")" if kind == "value" else f", computed by its {'JVP' if kind == 'tangent' else 'VJP'} rule)"
        if where is not None:
            text += f", created at {where[0]}:{where[1]} (in {where[2]})"
        if node is not None and site is None:
            text += " (the node was recorded before detect_anomaly() was entered; its line is unknown)"
        if outer is not None and inner[:2] != (kind, prim):
            text += (f"; the first non-finite number was the {inner[0]} of {inner[1].name!r} "
                     f"inside that rule")
            # the rule's own intermediates say nothing of the operation's inputs: its recorded
            # arguments do (the cotangent coming in was checked at the node before)
            inputs = (node.args or ()) if node is not None else ()
        if any(not _finite(a) for a in inputs if not isinstance(a, core.Tracer)):
            text += ("; the operation's inputs were already not finite, so the NaN/inf was "
                     "produced before: check the arguments and any plain NumPy code")
        elif kind == "value":
            text += "; its inputs were finite: the argument is outside the function's domain"
        else:
            text += ("; its inputs were finite: the derivative is infinite or undefined here "
                     "(a point where the function is not differentiable, like sqrt or log at 0)")
        raise AnomalyError(text, prim.name, mode, kind, where)

    def _context(self):
        """The outermost derivative rule running, and the modes active (from ``running``)."""
        outer, modes = None, set()
        for kind, prim, node, caller in self.running:
            modes.add("forward" if kind in ("forward", "tangent") else "reverse")
            if outer is None and kind in ("tangent", "cotangent"):
                outer = (kind, prim, node, caller)
        return outer, modes
