"""``holomorphic=True``: the checks of the transformations and the traces that detect a
non-holomorphic primitive; and the transformations' other checks of complex values.

Under ``holomorphic=True`` a transformation returns the complex derivative ``df/dz``. That needs
complex inputs and (for ``grad`` and ``jacrev``) complex outputs, which :func:`require_complex`
checks, and a function that is complex-differentiable. Every primitive says whether it is
(:attr:`duals.core.Primitive.holomorphic`); the traces below refuse, naming it, one that is not
(``abs``, ``real``, ``imag``, ``conj``, ``angle``, ``eigh``, a real-only function) when it is
applied to a value they trace. What is not detected: a function made of holomorphic primitives
that is still not holomorphic through its control flow (``z if z > 1 else z ** 2``: a comparison
reads the value without a primitive; ``z.real > 0`` is detected, ``real`` being applied).

>>> import numpy as np, duals
>>> complex(duals.grad(lambda z: z ** 2, holomorphic=True)(1j))
2j
"""
import numpy as np

from . import tree
from .arguments import argnums as argnums_of
from .core import Tracer
from .forward import Dual, JVPTrace
from .ops import is_complex
from .reverse import ReverseTrace, Var


def _refuse(prim, who):
    from .extend import CustomPrimitive
    if isinstance(prim, CustomPrimitive):
        raise TypeError(
            f"{who}(holomorphic=True): the function applies the custom primitive {prim.name}, which "
            f"is not declared holomorphic; if it has a complex derivative and its rules compute "
            f"with it (docs/custom_rules.md), declare it with duals.extend.primitive(..., "
            f"holomorphic=True); otherwise drop holomorphic=True")
    raise TypeError(
        f"{who}(holomorphic=True): the function applies {prim.name}, which is not holomorphic "
        f"(it has no complex derivative), to a value being differentiated, so df/dz does not exist. "
        f"Drop holomorphic=True: grad and vjp give the derivative of a real-valued function of "
        f"complex inputs, jvp the real-linear directional derivative (docs/complex.md)")


class HolomorphicJVPTrace(JVPTrace):
    """HolomorphicJVPTrace(level, lanes, who): forward mode that refuses non-holomorphic primitives."""

    __slots__ = ("who",)

    def __init__(self, level, lanes=1, who="jacfwd"):
        super().__init__(level, lanes)
        self.who = who

    def process(self, prim, args, params, reported=False):
        if not prim.holomorphic:
            for a in args:
                if type(a) is Dual and a._trace is self:
                    _refuse(prim, self.who)
        return JVPTrace.process(self, prim, args, params, reported)


class HolomorphicReverseTrace(ReverseTrace):
    """HolomorphicReverseTrace(level, who): a tape that refuses non-holomorphic primitives."""

    __slots__ = ("who",)

    def __init__(self, level, who="jacrev"):
        super().__init__(level)
        self.who = who

    def process(self, primitive, args, params, reported=False):
        if not primitive.holomorphic:
            for a in args:
                if type(a) is Var and a._trace is self:
                    _refuse(primitive, self.who)
        return ReverseTrace.process(self, primitive, args, params, reported)


def require_complex(values, who, what):
    """require_complex(values, who, what): under ``holomorphic=True`` every value must be complex."""
    for k, v in enumerate(values):
        if not is_complex(v):
            raise TypeError(f"{who}(holomorphic=True) needs complex {what}, but {what[:-1]} {k} has "
                            f"dtype {np.result_type(v)}; pass complex values (x.astype(complex)) or "
                            f"drop holomorphic=True")


def refuse_complex(values, who, what):
    """refuse_complex(values, who, what): without ``holomorphic=True``, ``who`` takes no complex ``what``."""
    for k, v in enumerate(values):
        if is_complex(v) and what == "outputs":
            raise TypeError(
                f"{who}: output {k} is complex. Of real inputs, duals.jacfwd gives its Jacobian "
                f"(d Re f/dx + i d Im f/dx), or take {who} of the real and imaginary parts (lambda x: "
                f"f(x).real); of complex inputs where f is holomorphic, pass holomorphic=True for "
                f"df/dz (docs/complex.md)")
        if is_complex(v):
            raise TypeError(
                f"{who}: {what[:-1]} {k} is complex; the derivative of a function of complex numbers "
                f"is either complex (df/dz, which exists for a holomorphic function: pass "
                f"holomorphic=True) or that of the real and imaginary parts (pass them as real "
                f"arrays, or use jvp/vjp, whose convention docs/complex.md states)")


# ---------------------------------------------------------------- complex values elsewhere


def complex_like(t, value):
    """complex_like(t, value): a tangent (or cotangent) of a complex value as a complex array
    where only real numbers reached it (``x + 0j`` of a real ``x`` keeps ``x``'s real tangent).

    >>> complex_like(np.ones(1), np.array([1j])).dtype
    dtype('complex128')
    """
    if isinstance(t, Tracer) or not is_complex(value) or is_complex(t):
        return t
    return np.asarray(t).astype(np.result_type(t, value.dtype if isinstance(value, Tracer) else value))


def real_sparse(jacobian, argnums, who):
    """real_sparse(jacobian, argnums, who): a sparse Jacobian that refuses complex inputs (sparsity= differentiates real code)."""
    def checked(*args, **kwargs):
        nums = argnums_of(argnums, len(args), who)[0]
        if any(is_complex(leaf) for i in nums for leaf in tree.flatten(args[i])[0]):
            raise TypeError(f"{who}(sparsity=...) takes real inputs; for complex ones use the dense "
                            f"{who} (holomorphic=True for df/dz), or pass the real and imaginary "
                            f"parts as real arrays")
        return jacobian(*args, **kwargs)
    for name in ("mode_for",):
        if hasattr(jacobian, name):
            setattr(checked, name, getattr(jacobian, name))
    return checked


class RealOutputs:
    """``f`` refusing complex outputs (sparse reverse mode pulls back real cotangents only); a
    class, so that ``workers=`` can pickle it."""

    def __init__(self, function, has_aux):
        self.function, self.has_aux = function, has_aux

    def __call__(self, *args, **kwargs):
        result = self.function(*args, **kwargs)
        out = result[0] if self.has_aux and isinstance(result, (tuple, list)) else result
        if any(is_complex(y) for y in tree.flatten(out)[0]):
            raise TypeError("jacrev(sparsity=...): the function returns complex values; use the "
                            "dense jacrev (holomorphic=True for df/dz), or return the real and "
                            "imaginary parts as real arrays")
        return result
