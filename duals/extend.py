"""duals.extend: declare your own primitives, with their own derivative rules.

A primitive wraps any function computing on plain NumPy values (NumPy, SciPy, a Numba
``@njit`` or ``@vectorize`` function, C code) and gives it a JVP rule and a VJP rule per
differentiable argument. It then works in every mode and nesting of the library
(``jvp``, ``grad``, ``jacfwd``, ``jacrev``, ``hessian``, ``Var.backward``) as long as the
rules are written with ``duals.numpy`` functions (or other primitives), so that they can be
differentiated again. Check the rules with :func:`duals.gradcheck`.

Two ways to declare one:

* :func:`elementwise` for element-wise functions (broadcasting, any number of arguments):
  give the partial derivatives, the library builds both rules.
* :func:`primitive` for anything else: ``def_jvp``/``def_vjp`` per argument.

Rule signatures (``params`` are the keyword arguments of the call, passed through)::

    jvp_rule(t, out, *args, **params) -> tangent of out       (shape of out)
    vjp_rule(g, out, *args, **params) -> cotangent of args[i] (shape of args[i])

``None`` from a rule means a zero derivative. Inside the library tangents and cotangents
carry *leading lane axes* (many directions at once: ``lead_of(t, x)`` of them). By default
a rule never sees them: it is applied lane by lane and sees tangents shaped exactly like
``args[i]`` and cotangents shaped exactly like ``out``. A rule that handles the lanes itself
(most do for free by broadcasting, like ``t * cos(x)``) is declared with ``vectorized=True``
and then runs once for all lanes. Every rule's result is checked against the shape it must
have, and a mismatch raises an error naming the primitive, the rule and the argument.

>>> import numpy as np, duals, duals.numpy as dnp
>>> cube = primitive("cube_doc", lambda x: x ** 3)
>>> _ = cube.def_jvp(0, lambda t, out, x: 3.0 * x ** 2 * t)
>>> _ = cube.def_vjp(0, lambda g, out, x: 3.0 * x ** 2 * g)
>>> float(duals.grad(cube)(2.0)), float(duals.hessian(cube)(2.0))
(12.0, 12.0)
"""
import numpy as np

from .core import REGISTRY, Primitive, Tracer
from .ops import lead_of, shape_of
from .ops.elementwise import align, fill_to, masked
from .ops.reductions import unbroadcast
from .ops.shape import getitem, reshape, stack

__all__ = ["primitive", "elementwise", "CustomPrimitive", "lead_of", "CUSTOM"]

# custom primitives by name; kept apart from the built-in table (core.REGISTRY)
CUSTOM = {}


class CustomPrimitive(Primitive):
    """CustomPrimitive(name, impl, nondiff=()): a user-declared primitive; make one with :func:`primitive`.

    >>> double = primitive("double_doc", lambda x: 2.0 * x)
    >>> float(double(3.0))
    6.0
    """

    def __init__(self, name, impl, nondiff=(), holomorphic=False):
        if not isinstance(name, str) or not name:
            raise TypeError(f"duals.extend: a primitive needs a non-empty string name, got {name!r}")
        if name in REGISTRY:
            raise ValueError(f"duals.extend: {name!r} is a built-in primitive; choose another "
                             f"name for your primitive (for example 'my_{name}')")
        if not callable(impl):
            raise TypeError(f"custom primitive {name!r}: impl must be a function computing on "
                            f"NumPy values, got {type(impl).__name__}")
        super().__init__(name, _checked_impl(name, impl), nondiff, registry=CUSTOM)
        # holomorphic=True transformations refuse it unless its author says its rules are
        # complex-linear in the tangent (a complex derivative exists)
        self.holomorphic = bool(holomorphic)
        self.__doc__ = getattr(impl, "__doc__", None)
        self.__wrapped__ = impl

    def def_jvp(self, argnum, rule=None, *, vectorized=False):
        """def_jvp(argnum, rule=None, *, vectorized=False): register ``rule(t, out, *args, **params)``.

        Returns the primitive; without ``rule`` returns a decorator. The rule returns the
        tangent of the output (shaped like ``out``), or ``None`` for zero.

        >>> p = primitive("sq_jvp_doc", np.square)
        >>> @p.def_jvp(0)
        ... def _(t, out, x):
        ...     return 2.0 * x * t
        >>> import duals
        >>> float(duals.jvp(p, (3.0,), (1.0,))[1])
        6.0
        """
        return self._define("JVP", self.jvps, argnum, rule, vectorized)

    def def_vjp(self, argnum, rule=None, *, vectorized=False):
        """def_vjp(argnum, rule=None, *, vectorized=False): register ``rule(g, out, *args, **params)``.

        Returns the primitive; without ``rule`` returns a decorator. The rule returns the
        cotangent of argument ``argnum`` (shaped like it), or ``None`` for zero.

        >>> p = primitive("sq_vjp_doc", np.square)
        >>> _ = p.def_vjp(0, lambda g, out, x: 2.0 * x * g)
        >>> import duals
        >>> float(duals.grad(p)(3.0))
        6.0
        """
        return self._define("VJP", self.vjps, argnum, rule, vectorized)

    def _define(self, kind, table, argnum, rule, vectorized):
        if not isinstance(argnum, (int, np.integer)) or argnum < 0:
            raise TypeError(f"custom primitive {self.name!r}: def_{kind.lower()}(argnum, rule) "
                            f"takes a non-negative argument position, got {argnum!r}")
        if argnum in self.nondiff:
            raise ValueError(f"custom primitive {self.name!r}: argument {argnum} was declared "
                             f"non-differentiable (nondiff); it takes no {kind} rule")

        def register(rule):
            if not callable(rule):
                raise TypeError(f"custom primitive {self.name!r}: the {kind} rule for argument "
                                f"{argnum} must be a function, got {type(rule).__name__}")
            table[int(argnum)] = _checked_rule(self.name, kind, int(argnum), rule, vectorized)
            return self

        return register if rule is None else register(rule)

    def __repr__(self):
        return f"<duals custom primitive {self.name}>"


def primitive(name, impl, *, nondiff=(), holomorphic=False):
    """primitive(name, impl, *, nondiff=(), holomorphic=False) -> CustomPrimitive: a new primitive computing ``impl`` on plain values.

    ``impl(*arrays, **params)`` receives plain NumPy values only and returns one float
    array. Positions in ``nondiff`` are never differentiated (masks, integer orders).
    Give the rules with ``.def_jvp(argnum, rule)`` and ``.def_vjp(argnum, rule)``.
    ``holomorphic=True`` says the function has a complex derivative that the rules use, so
    ``holomorphic=True`` transformations may run it (they refuse it otherwise).

    >>> import scipy.special, duals
    >>> lgam = primitive("lgamma_doc", scipy.special.gammaln)
    >>> _ = lgam.def_vjp(0, lambda g, out, x: g * scipy.special.digamma(x))  # first order only
    >>> round(float(duals.grad(lgam)(2.0)), 6)  # digamma(2) = 1 - Euler's gamma
    0.422784
    """
    if name in CUSTOM and CUSTOM[name].__wrapped__ is not impl:
        CUSTOM.pop(name)   # re-declaring a name (a re-run notebook cell) replaces it
    return CustomPrimitive(name, impl, nondiff, holomorphic)


def elementwise(name, impl, *partials, nondiff=(), holomorphic=False):
    """elementwise(name, impl, *partials, nondiff=(), holomorphic=False) -> CustomPrimitive for an element-wise function.

    ``impl(*arrays, **params)`` maps broadcast arguments entry by entry. ``partials[i]``
    is ``d(out, *args, **params)``, the partial derivative with respect to argument ``i``
    (written with ``duals.numpy`` functions or other primitives so it differentiates
    again); ``None`` marks a zero derivative. Broadcasting and lanes are handled for you.

    >>> import duals
    >>> softplus = elementwise("softplus_doc", lambda x: np.logaddexp(0.0, x),
    ...                        lambda out, x: duals.special.expit(x))
    >>> round(float(duals.grad(softplus)(0.0)), 6)
    0.5
    """
    p = primitive(name, impl, nondiff=nondiff, holomorphic=holomorphic)
    p.elementwise = True   # a branch not taken passes its exact zeros through it, as the table's
    for i, d in enumerate(partials):
        if i in p.nondiff:
            continue
        if d is None:
            p.def_jvp(i, lambda t, out, *args, **params: None, vectorized=True)
            p.def_vjp(i, lambda g, out, *args, **params: None, vectorized=True)
            continue
        if not callable(d):
            raise TypeError(f"elementwise {name!r}: the partial derivative for argument {i} must "
                            f"be a function d(out, *args), got {type(d).__name__}")
        p.def_jvp(i, _elementwise_jvp(name, i, d), vectorized=True)
        p.def_vjp(i, _elementwise_vjp(name, i, d), vectorized=True)
    return p


def _partial(name, i, d, out, args, params):
    value = d(out, *args, **params)
    s, o = shape_of(value), shape_of(out)
    try:
        ok = np.broadcast_shapes(s, o) == o
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"elementwise {name!r}: the partial derivative for argument {i} has shape "
                         f"{s}, which does not broadcast to the output's shape {o}; return one "
                         f"value per output entry")
    return value


def _elementwise_jvp(name, i, d):
    def rule(t, out, *args, **params):
        lead = shape_of(t)[:lead_of(t, args[i])]
        return fill_to(_partial(name, i, d, out, args, params) * align(t, args[i], out), lead, out)
    return rule


def _elementwise_vjp(name, i, d):
    def rule(g, out, *args, unreached=None, **params):   # (unreached: a branch not taken, zeros)
        return unbroadcast(masked(_partial(name, i, d, out, args, params) * g, unreached), out,
                           shape_of(args[i]))
    return rule


def _checked_impl(name, impl):
    def run(*args, **params):
        out = impl(*args, **params)
        if isinstance(out, Tracer):
            raise TypeError(
                f"custom primitive {name!r}: impl returned a traced value. impl must compute on "
                f"the plain values it receives; do not close over values that are being "
                f"differentiated, pass them as arguments instead")
        if isinstance(out, (tuple, list)):
            raise TypeError(f"custom primitive {name!r}: impl returned a {type(out).__name__}; a "
                            f"primitive has one array output, declare one primitive per output")
        a = np.asarray(out)
        if a.dtype.kind not in "fc":
            raise TypeError(f"custom primitive {name!r}: impl returned dtype {a.dtype}; return "
                            f"float or complex values (for example out.astype(float))")
        return a if a.ndim else a[()]
    run.__name__ = getattr(impl, "__name__", name)
    return run


def _checked_rule(name, kind, argnum, rule, vectorized):
    """The rule wrapped with the lane handling and a check of the shape it returns."""
    def apply(d, out, *args, **params):
        # the tangent belongs to args[argnum] (JVP), the cotangent to out (VJP)
        base, target = (args[argnum], out) if kind == "JVP" else (out, args[argnum])
        lead = shape_of(d)[:lead_of(d, base)]
        if vectorized or not lead:
            return _check(rule(d, out, *args, **params), lead, target, shape_of(base))
        n = int(np.prod(lead))
        flat = reshape(d, (n,) + shape_of(base))
        parts = [_check(rule(getitem(flat, k), out, *args, **params), (), target, shape_of(base))
                 for k in range(n)]
        if all(p is None for p in parts):
            return None
        zero = np.zeros(shape_of(target), dtype=np.result_type(_plain(out)))
        parts = [zero if p is None else p for p in parts]
        return reshape(stack(parts), lead + shape_of(target))

    def _check(result, lead, target, given):
        if result is None:
            return None
        expected = tuple(lead) + shape_of(target)
        if shape_of(result) != expected:
            what = "the output" if kind == "JVP" else f"argument {argnum}"
            per = "tangent" if kind == "JVP" else "cotangent"
            lanes = f" ({len(lead)} leading lane axes {tuple(lead)} + the shape of {what})" if lead else ""
            raise ValueError(
                f"custom primitive {name!r}: the {kind} rule for argument {argnum} returned a "
                f"{per} of shape {shape_of(result)}, but {what} has shape {shape_of(target)}; "
                f"expected {expected}{lanes}. Return one entry per entry of {what}"
                + ("" if kind == "JVP" else " (sum over the axes it was broadcast along)")
                + (", or declare the rule without vectorized=True to get one lane at a time"
                   if vectorized and lead else "")
                + (f". Argument {argnum} has shape {given}, smaller than the output: its tangent "
                   f"arrives as {tuple(lead) + tuple(given)}, lanes first, so align its axes before "
                   f"broadcasting (t[..., None] for a scalar argument)"
                   if kind == "JVP" and vectorized and lead and len(given) < len(shape_of(target)) else ""))
        return result

    apply.__name__ = getattr(rule, "__name__", f"{name}_{kind.lower()}_{argnum}")
    apply.__wrapped__ = rule
    return apply


def _plain(x):
    while isinstance(x, Tracer):
        x = x.primal if hasattr(x, "primal") else x._value
    return x
