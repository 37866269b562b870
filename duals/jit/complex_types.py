"""The complex dual type of nopython mode: a complex value with complex tangent lanes.

``ComplexDualType(base, lanes)`` is a :class:`~duals.jit._types.DualType` whose innermost
number is complex: over ``complex128`` its lanes are :class:`~duals.jit.complex_lanes.ComplexLanes`
(one LLVM vector of ``2 * lanes`` floats), over a complex dual of the level below (forward over
forward) a tuple of those. It is what Numba's promotion of a float to a complex number makes of
a real dual: ``x * 1j``, ``complex(x, y)``, ``cmath.exp(x)`` of a real dual ``x`` give one, and
a real dual meeting a complex one (or a complex constant) is converted first (:func:`to_complex`,
zero imaginary lanes). Arrays of complex duals have the dtype ``dual_dtype(lanes, np.complex128)``
(fields ``primal`` and ``tangent``, complex), whose layout is the struct's.

>>> from numba import types
>>> complex_of(DualType(types.float64, 2))
ComplexDual1[complex128, 2 lanes]
"""
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.core.typeconv import Conversion
from numba.extending import intrinsic, register_model

from .._overloads import overload
from ._types import DIGEST, DualType
from .complex_lanes import ComplexLanes, lto_complex
from .lanes import lanes_type

__all__ = ["ComplexDualType", "complex_of", "is_complex_dual", "to_complex", "has_complex"]


class ComplexDualType(DualType):
    """ComplexDualType(base, lanes): a dual number whose value and tangent lanes are complex.

    >>> ComplexDualType(types.complex128, 3).lanes_type
    ComplexLanes[complex128 x 3]
    """

    # what code that works on float tangent lanes (duals.jit.parts.level_of) says to this type
    lanes_refusal = ("duals.jit: {name} of complex dual numbers is not supported in compiled "
                     "code (complex values work element by element: arithmetic, cmath and np "
                     "functions, abs, real, imag, conj, sums and loops); differentiate this "
                     "function on the NumPy path instead (a plain Python function, not @njit), "
                     "with a compiled piece it calls (a matrix fill) as a primitive whose rules "
                     "call duals.jacfwd of it (docs/custom_rules.md, 'A compiled piece inside "
                     "Python code')")

    def __init__(self, base, lanes):
        self.base = base
        self.lanes = int(lanes)
        self.tag = base.tag + 1 if isinstance(base, DualType) else 1
        self.float = base.float if isinstance(base, DualType) else base
        self.digest = DIGEST
        types.Type.__init__(self, name=f"ComplexDual{self.tag}[{base}, {self.lanes} lanes]")

    @property
    def key(self):
        return ("complex", self.base, self.lanes, self.digest)

    @property
    def lanes_type(self):
        if isinstance(self.base, types.Complex):
            return ComplexLanes(self.base, self.lanes)
        return lanes_type(self.base, self.lanes)

    def unify(self, typingctx, other):
        if isinstance(other, (types.Number, types.Boolean)):
            return self
        if isinstance(other, DualType) and (other.tag < self.tag or _promotes(other, self)):
            return self
        return None

    def cast_python_value(self, value):
        return complex(value)

    def can_convert_from(self, typingctx, other):
        if isinstance(other, (types.Number, types.Boolean)):
            return Conversion.safe
        if isinstance(other, DualType) and (other.tag < self.tag or _promotes(other, self)):
            return Conversion.safe
        return None


@register_model(ComplexDualType)
class ComplexDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


def is_complex_dual(t):
    """is_complex_dual(t) -> whether Numba type ``t`` is a complex dual."""
    return isinstance(t, ComplexDualType)


def has_complex(t):
    """has_complex(t) -> whether ``t`` is a complex number or a complex dual (complex arithmetic)."""
    return isinstance(t, (types.Complex, ComplexDualType))


def complex_of(t):
    """complex_of(t) -> the complex type a float, complex or (complex) dual type ``t`` promotes to."""
    if isinstance(t, ComplexDualType) or isinstance(t, types.Complex):
        return t
    if isinstance(t, DualType) and type(t) is DualType:
        return ComplexDualType(complex_of(t.base), t.lanes)
    if isinstance(t, types.Float):
        return types.complex64 if t == types.float32 else types.complex128
    if isinstance(t, (types.Integer, types.Boolean)):
        return types.complex128
    raise errors.TypingError(f"duals.jit: {t} has no complex counterpart in compiled code")


def _promotes(real, cplx):
    """Whether real dual ``real`` promotes to complex dual ``cplx`` (same level and lanes)."""
    return type(real) is DualType and real.tag == cplx.tag and complex_of(real) == cplx


def to_complex(x):
    """to_complex(x) -> ``x`` as a complex dual when it is a real dual (zero imaginary lanes);
    any other value unchanged (numbers stay numbers: the rules mix them in)."""


@intrinsic
def _promote(typingctx, x):
    """A real dual as the complex dual of its level (imaginary parts zero)."""
    if type(x) is not DualType:
        return None
    ret = complex_of(x)

    def codegen(context, builder, sig, args):
        return promote_value(context, builder, x, ret, args[0])
    return ret(x), codegen


def promote_value(context, builder, fromty, toty, val):
    """The LLVM value of real dual ``val`` (type ``fromty``) as complex dual type ``toty``."""
    src = cgutils.create_struct_proxy(fromty)(context, builder, value=val)
    dst = cgutils.create_struct_proxy(toty)(context, builder)
    dst.re = context.cast(builder, src.re, fromty.base, toty.base)
    sig = toty.lanes_type(fromty.lanes_type)
    lanes = context.compile_internal(builder, lambda t: lto_complex(t), sig, [src.du])
    dst.du = lanes
    return dst._getvalue()


@overload(to_complex)
def _ov_to_complex(x):
    if type(x) is DualType:
        return lambda x: _promote(x)
    return lambda x: x
