"""The parts of complex numbers: ``real``, ``imag``, ``conj`` and the complex rules of ``abs``;
``angle`` is composed from them.

Convention (JAX's, see docs/complex.md): a cotangent ``c`` of a complex value stands for the real
linear functional ``t ↦ Re(c·t)``, so each VJP below is the transpose of its JVP's real-linear map,
and a real value's cotangent is real. With ``t`` a tangent of ``z`` and ``c`` a cotangent:

* ``real``: ``t ↦ Re t``; ``c ↦ Re c`` (as ``Re(c Re t) = Re(Re(c) t)``);
* ``imag``: ``t ↦ Im t``; ``c ↦ -i Re c`` (as ``Im t = Re(-i t)``);
* ``conj``: ``t ↦ conj t``; ``c ↦ conj c`` (as ``Re(c conj t) = Re(conj(c) t)``);
* ``abs``: ``t ↦ Re(conj(z) t) / |z|``; ``c ↦ Re(c) conj(z) / |z|``, and ``0`` at ``z = 0``, the
  policy of the real ``abs'(0) = 0``.

``abs`` (and the 2-norm, :mod:`duals.ops.norms`) remember their argument: :func:`square` of a
modulus that is 0 takes the square from it, so ``abs(x) ** 2`` there has the square's second
derivatives, not the chain rule's through ``abs'(0) = 0``.

None of these is holomorphic: under ``holomorphic=True`` they raise (duals.holomorphic). On real
values ``real`` and ``conj`` are the value itself and ``imag`` a constant zero: no primitive runs.
"""
import numpy as np

from ..core import Primitive, Tracer, views
from ..index_sets import elementwise_rule
from . import NAMESPACE, dtype_of, export, innermost, is_complex, shape_of as shape
from .elementwise import PRIMITIVES, div, mul, select, where
from .fused_vjp import READS


def _part(name, impl, jvp, vjp):
    prim = Primitive(name, impl)
    prim.elementwise = True
    prim.holomorphic = False
    prim.def_jvp(0, lambda t, out, z: jvp(t))
    prim.def_vjp(0, lambda g, out, z, unreached=None: vjp(g))
    prim.def_sparsity(elementwise_rule(True))
    return prim


real_p = _part("real", np.real, lambda t: real_p(t), lambda g: _as_complex(real_p(g)))
imag_p = _part("imag", np.imag, lambda t: imag_p(t), lambda g: mul(real_p(g), -1j))
views(real_p, imag_p)   # views of a complex array's memory, as NumPy's z.real
conj_p = _part("conj", np.conjugate, lambda t: conj_p(t), lambda g: conj_p(g))


def _as_complex(g):
    """A real cotangent as the complex number it is, so that a complex input's cotangent keeps its
    dtype (``Re c + 0i``)."""
    return g if is_complex(g) else mul(g, 1.0 + 0.0j)


@export("real")
def real(z):
    """real(z): the real part; a real ``z`` is returned as it is.

    >>> float(real(3 + 4j))
    3.0
    """
    return real_p(z) if is_complex(z) else z


@export("imag")
def imag(z):
    """imag(z): the imaginary part; for a real ``z`` a constant zero of its shape.

    >>> float(imag(3 + 4j))
    4.0
    """
    if is_complex(z):
        return imag_p(z)
    return np.zeros(shape(z), dtype=dtype_of(z) if dtype_of(z).kind == "f" else np.float64)[()]


@export("conj", "conjugate")
def conj(z):
    """conj(z): the complex conjugate; a real ``z`` is returned as it is.

    >>> complex(conj(3 + 4j))
    (3-4j)
    """
    return conj_p(z) if is_complex(z) else NAMESPACE["copy"](z) if isinstance(z, Tracer) else z


@export("angle")
def angle(z, deg=False):
    """angle(z, deg=False): the argument of ``z``, ``arctan2(imag z, real z)``; for real ``z`` a
    constant (0 or π). At ``z = 0`` the derivative does not exist (NaN from arctan2's rule).

    >>> float(angle(1j))
    1.5707963267948966
    """
    if not is_complex(z):
        return np.angle(innermost(z), deg=deg)
    a = PRIMITIVES["arctan2"](imag_p(z), real_p(z))
    return a * (180.0 / np.pi) if deg else a


# ---------------------------------------------------------------- abs of complex values

abs_p = PRIMITIVES["abs"]
_real_rules = (abs_p.jvps[0], abs_p.vjps[0])


def _over_modulus(x, out):
    """x / |z| for a real ``x``, and 0 where z = 0 (the policy abs'(0) = 0)."""
    at_zero = np.asarray(innermost(out)) == 0.0
    if not at_zero.any():
        return div(x, out)
    return select(at_zero, np.zeros((), dtype=dtype_of(out)), div(x, where(at_zero, 1.0, out)))


def _abs_jvp(t, out, z):
    if not is_complex(z):
        return _real_rules[0](t, out, z)
    return _over_modulus(real_p(mul(conj_p(z), t)), out)     # Re(conj(z) t) / |z|


def _abs_vjp(g, out, z, unreached=None):
    if not is_complex(z):
        return _real_rules[1](g, out, z, unreached=unreached)
    return mul(_over_modulus(real(g), out), conj_p(z))       # Re(g) conj(z) / |z|


abs_p.def_jvp(0, _abs_jvp)
abs_p.def_vjp(0, _abs_vjp)
# the tape keeps what the rules read: the complex rule reads |z| besides z
READS[abs_p] = lambda inputs: frozenset(("x", "out")) if inputs[0] is not None else frozenset()


# ---------------------------------------------------------------- squares of moduli

def absolute(x):
    """absolute(x): ``|x|``, which remembers ``x`` so that its square is smooth at 0 (:func:`square`).

    >>> float(absolute(-3.0))
    3.0
    """
    out = abs_p(x)
    if isinstance(out, Tracer):
        square_is(out, squared_modulus, x)
    return out


def square_is(modulus, function, argument):
    """Record on the traced ``modulus`` (``|z|``, a 2-norm) that its square is ``function(argument)``
    (``function`` None: ``argument`` itself), a form that is smooth where the modulus is 0."""
    modulus._square = (function, argument)


def square(x):
    """square(x): ``x * x``; where ``x`` is a modulus at 0 (``abs(z)``, ``np.linalg.norm(v)``), the
    square from the smooth form its maker recorded (``|z|²`` from ``z``).

    ``abs'(0) = 0`` (the kink's policy) makes the chain rule give ``abs(x) ** 2`` the second
    derivative 0 at ``x = 0``, where ``x ** 2`` has 2 (a Newton step from ``w = 0`` of a loss with
    ``norm(w) ** 2`` lost its Hessian's ``2I``; an absent reflection's ``|F|²``, its curvature);
    the values, and everything away from 0, are the square's.

    >>> float(square(3.0))
    9.0
    """
    made = getattr(x, "_square", None)
    if made is None:
        return square_p(x)
    at_zero = np.asarray(innermost(x)) == 0.0
    if not at_zero.any():
        return square_p(x)
    function, argument = made
    smooth = argument if function is None else function(argument)
    return select(at_zero, smooth, square_p(x))


square_p = PRIMITIVES["square"]
for _name in ("abs", "absolute"):
    NAMESPACE[_name] = absolute
NAMESPACE["square"] = square


def squared_modulus(z):
    """squared_modulus(z): ``|z|²`` as a real value, ``Re(z conj z)`` (``z * z`` for real ``z``).

    >>> float(squared_modulus(3 + 4j))
    25.0
    """
    return real_p(mul(z, conj_p(z))) if is_complex(z) else mul(z, z)


@export("iscomplexobj", value_only=True)
def iscomplexobj(x):
    """iscomplexobj(x): whether ``x`` has a complex dtype (of its value; no derivative).

    >>> iscomplexobj(1j), iscomplexobj(1.0)
    (True, False)
    """
    return is_complex(x)


@export("isrealobj", value_only=True)
def isrealobj(x):
    """isrealobj(x): whether ``x`` does not have a complex dtype (no derivative).

    >>> isrealobj(1.0)
    True
    """
    return not is_complex(x)
