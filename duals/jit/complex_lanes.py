"""Complex tangent lanes: ``N`` complex lanes held as one LLVM vector of ``2 N`` floats.

A complex dual (:mod:`duals.jit.complex_types`) carries complex tangents. Over a complex base
its lanes are a :class:`ComplexLanes`: ``<2N x double>`` in registers, the real parts of the
lanes in the first half and their imaginary parts in the second (``re0 .. reN-1, im0 .. imN-1``);
in memory ``N`` complex numbers (parts interleaved), exactly the ``tangent`` field of a complex
dual dtype, so an element of an array loads with one vector load and one shuffle. The six lane
operations of :mod:`duals.jit.lanes` take a real or a complex factor: ``t * (a + ib)`` is
``t * a + swap(t) * (-b .. -b, b .. b)`` (``swap`` exchanges the halves, which for ``N`` a
multiple of the register width is a choice of registers), one shuffle and three vector
instructions whatever ``N``.

The layout was measured (Horner's rule at 10^5 complex points, 8 real coefficients, the dual
code alone, best of 7, one thread; ``python -m benchmarks.bench_jit_complex`` repeats the last
two rows): at 1, 4 and 8 lanes, halves as here 1.11, 1.57, 1.82 ms; parts interleaved in
registers (a shuffle inside each register per scaling) 1.12, 1.69, 2.41 ms; two vectors in an
LLVM struct 1.28, 36.6, 57.1 ms (at Numba's default optimisation level 3; 1.32, 1.34, 1.78 ms at
level 1); the same kernel written with pairs of floats, on real duals, 1.02, 1.05, 1.66 ms.

Five more lane operations move between real and complex lanes (the non-holomorphic rules of
``abs``, ``real``, ``conj``, ``angle``, ``complex(a, b)`` need them); over a dual base (nested
duals: lanes are a tuple of duals) they are unrolled tuple expressions:

* ``lre(t)``, ``lim(t)``: the real and imaginary parts (real lanes);
* ``lre_scale(t, s)``: ``Re(t * s)`` (real lanes) for a complex factor ``s``;
* ``lconj(t)``: ``conj(t)``;
* ``lcomplex(a, b)``: ``a + i b`` from two real lanes; ``lto_complex(a)``: ``a + 0i``.

>>> import numba
>>> numba.njit(lambda a, b: lanes_tuple(lscale(lcomplex(as_lanes(a), as_lanes(b)), 1j)))((1.0,), (2.0,))
((-2+1j),)
>>> numba.njit(lambda t: lanes_tuple(lre(as_zlanes(t))))((1 + 2j, 3 - 1j))
(1.0, 3.0)
"""
from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.extending import intrinsic, register_model

from .._overloads import overload
from .lanes import LaneVector, as_lanes, ladd, lanes_tuple, laxpy, lneg, lscale, lsub, lzero, padded  # noqa: F401 (as_lanes: doctest)

__all__ = ["ComplexLanes", "lre", "lim", "lre_scale", "lconj", "lcomplex", "lto_complex", "as_zlanes"]


class ComplexLanes(types.Type):
    """ComplexLanes(dtype, count): ``count`` complex lanes of ``dtype`` (complex128 or complex64)."""

    def __init__(self, dtype, count):
        self.dtype = dtype
        self.count = int(count)
        super().__init__(name=f"ComplexLanes[{dtype} x {self.count}]")

    @property
    def key(self):
        return (self.dtype, self.count)

    @property
    def float(self):
        return self.dtype.underlying_float

    @property
    def dual_type(self):
        from .complex_types import ComplexDualType
        return ComplexDualType(self.dtype, self.count)


def _i32(i):
    return ir.Constant(ir.IntType(32), i)


@register_model(ComplexLanes)
class ComplexLanesModel(models.DataModel):
    """In registers ``<2N x T>`` (real parts, then imaginary parts); in memory ``[N x {T, T}]``
    (N complex numbers, parts interleaved)."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type)
        element = dmm.lookup(fe_type.float).get_value_type()
        self._element = element
        self._vector = ir.VectorType(element, 2 * fe_type.count)
        self._array = ir.ArrayType(ir.LiteralStructType([element, element]), fe_type.count)

    def get_value_type(self):
        return self._vector

    def get_data_type(self):
        return self._array

    def get_argument_type(self):
        return self._vector

    def get_return_type(self):
        return self._vector

    def as_argument(self, builder, value):
        return value

    def from_argument(self, builder, value):
        return value

    def as_return(self, builder, value):
        return value

    def from_return(self, builder, value):
        return value

    def as_data(self, builder, value):
        n = self._fe_type.count
        out = ir.Constant(self._array, ir.Undefined)
        for i in range(n):
            for part in (0, 1):
                out = builder.insert_value(out, builder.extract_element(value, _i32(part * n + i)),
                                           [i, part])
        return out

    def from_data(self, builder, value):
        n = self._fe_type.count
        out = ir.Constant(self._vector, ir.Undefined)
        for i in range(n):
            for part in (0, 1):
                out = builder.insert_element(out, builder.extract_value(value, [i, part]),
                                             _i32(part * n + i))
        return out

    def load_from_data_pointer(self, builder, ptr, align=None):
        n = self._fe_type.count
        flat = builder.load(builder.bitcast(ptr, self._vector.as_pointer()), align=align or 1)
        return _shuffle(builder, flat, ir.Constant(self._vector, ir.Undefined),
                        [2 * i for i in range(n)] + [2 * i + 1 for i in range(n)])


# ---------------------------------------------------------------- vector helpers

def _shuffle(builder, a, b, mask):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(ir.IntType(32), len(mask)), mask))


def _splat(builder, value, n):
    vec = ir.VectorType(value.type, 1)
    v = builder.insert_element(ir.Constant(vec, ir.Undefined), value, _i32(0))
    return _shuffle(builder, v, ir.Constant(vec, ir.Undefined), [0] * n)


def _parts(context, builder, ty, val, float_type):
    """(real, imaginary) scalar parts of a factor of type ``ty`` as ``float_type`` (imag None if real)."""
    if isinstance(ty, types.Complex):
        c = context.make_complex(builder, ty, value=val)
        re = context.cast(builder, c.real, ty.underlying_float, float_type)
        im = context.cast(builder, c.imag, ty.underlying_float, float_type)
        return re, im
    return context.cast(builder, val, ty, float_type), None


def _cmul(context, builder, t, lanes_ty, s, s_ty):
    """Lanes ``t`` (a ``<2N x T>`` value) times the scalar factor ``s`` of type ``s_ty``."""
    n = 2 * lanes_ty.count
    a, b = _parts(context, builder, s_ty, s, lanes_ty.float)
    out = builder.fmul(t, _splat(builder, a, n))
    if b is None:
        return out
    half = n // 2
    swapped = _shuffle(builder, t, ir.Constant(t.type, ir.Undefined),
                       [(i + half) % n for i in range(n)])
    pair = ir.Constant(ir.VectorType(b.type, 2), ir.Undefined)
    pair = builder.insert_element(pair, builder.fneg(b), _i32(0))
    pair = builder.insert_element(pair, b, _i32(1))
    alternating = _shuffle(builder, pair, ir.Constant(pair.type, ir.Undefined), [0] * half + [1] * half)
    return builder.fadd(out, builder.fmul(swapped, alternating))


def _factor(s):
    return isinstance(s, (types.Float, types.Integer, types.Boolean, types.Complex))


@intrinsic
def _zscale(typingctx, t, s):
    if not (isinstance(t, ComplexLanes) and _factor(s)):
        return None

    def codegen(context, builder, sig, args):
        return _cmul(context, builder, args[0], t, args[1], s)
    return t(t, s), codegen


@intrinsic
def _zaxpy(typingctx, t1, s1, t2, s2):
    if not (isinstance(t1, ComplexLanes) and t1 == t2 and _factor(s1) and _factor(s2)):
        return None

    def codegen(context, builder, sig, args):
        return builder.fadd(_cmul(context, builder, args[0], t1, args[1], s1),
                            _cmul(context, builder, args[2], t2, args[3], s2))
    return t1(t1, s1, t2, s2), codegen


def _vector_op(name, body):
    def typer(typingctx, *args):
        if not all(isinstance(a, ComplexLanes) and a == args[0] for a in args):
            return None

        def codegen(context, builder, sig, llargs):
            return body(builder, llargs)
        return args[0](*args), codegen
    namespace = {"typer": typer}
    params = "a" if name == "_zneg" else "a, b"
    exec(f"def {name}(typingctx, {params}):\n    return typer(typingctx, {params})\n", namespace)
    return intrinsic(namespace[name])


_zadd = _vector_op("_zadd", lambda b, v: b.fadd(v[0], v[1]))
_zsub = _vector_op("_zsub", lambda b, v: b.fsub(v[0], v[1]))
_zneg = _vector_op("_zneg", lambda b, v: b.fneg(v[0]))


@intrinsic
def _zzero(typingctx, t):
    def codegen(context, builder, sig, args):
        return context.get_constant_null(sig.return_type)
    return t(t), codegen


@overload(lscale)
def _ov_lscale(t, s):
    if isinstance(t, ComplexLanes):
        return lambda t, s: _zscale(t, s)


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if isinstance(t1, ComplexLanes):
        return lambda t1, s1, t2, s2: _zaxpy(t1, s1, t2, s2)


@overload(ladd)
def _ov_ladd(t1, t2):
    if isinstance(t1, ComplexLanes):
        return lambda t1, t2: _zadd(t1, t2)


@overload(lsub)
def _ov_lsub(t1, t2):
    if isinstance(t1, ComplexLanes):
        return lambda t1, t2: _zsub(t1, t2)


@overload(lneg)
def _ov_lneg(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zneg(t)


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zzero(t)


# ---------------------------------------------------------------- between real and complex lanes

def lre(t):
    """lre(t) -> the real parts of complex lanes ``t`` (real lanes)."""


def lim(t):
    """lim(t) -> the imaginary parts of complex lanes ``t`` (real lanes)."""


def lre_scale(t, s):
    """lre_scale(t, s) -> ``Re(t * s)`` lane by lane (real lanes), ``s`` a complex factor."""


def lconj(t):
    """lconj(t) -> the complex conjugates of lanes ``t``."""


def lcomplex(a, b):
    """lcomplex(a, b) -> complex lanes ``a + i b`` from real lanes ``a`` and ``b``."""


def lto_complex(a):
    """lto_complex(a) -> complex lanes ``a + 0i`` from real lanes ``a``."""


@intrinsic
def _zpart(typingctx, t, part):
    """The real (part 0) or imaginary (part 1) parts of complex lanes as a LaneVector."""
    if not isinstance(t, ComplexLanes) or not isinstance(part, types.IntegerLiteral):
        return None
    which = part.literal_value
    ret = LaneVector(t.float, t.count)

    def codegen(context, builder, sig, args):
        return _shuffle(builder, args[0], ir.Constant(args[0].type, None),
                        _real_lanes(which * t.count, t.count))
    return ret(t, part), codegen


def _real_lanes(first, n):
    """The shuffle mask of ``n`` lanes from ``first`` on of a ``<2N x T>`` pair's first vector,
    as a LaneVector (padded with lanes of the zero second vector)."""
    return [first + i for i in range(n)] + [2 * n] * (padded(n) - n)


@intrinsic
def _zre_scale(typingctx, t, s):
    if not (isinstance(t, ComplexLanes) and _factor(s)):
        return None
    ret = LaneVector(t.float, t.count)

    def codegen(context, builder, sig, args):
        n = t.count
        zeros = ir.Constant(args[0].type, None)
        re = _shuffle(builder, args[0], zeros, _real_lanes(0, n))
        a, b = _parts(context, builder, s, args[1], t.float)
        out = builder.fmul(re, _splat(builder, a, padded(n)))
        if b is None:
            return out
        im = _shuffle(builder, args[0], zeros, _real_lanes(n, n))
        return builder.fsub(out, builder.fmul(im, _splat(builder, b, padded(n))))
    return ret(t, s), codegen


@intrinsic
def _zconj(typingctx, t):
    if not isinstance(t, ComplexLanes):
        return None

    def codegen(context, builder, sig, args):
        signs = ir.Constant(args[0].type, [1.0] * t.count + [-1.0] * t.count)
        return builder.fmul(args[0], signs)
    return t(t), codegen


@intrinsic
def _zjoin(typingctx, a, b):
    """Complex lanes from real LaneVectors ``a`` (real parts) and ``b`` (imaginary parts)."""
    if not (isinstance(a, LaneVector) and a == b):
        return None
    ret = ComplexLanes(types.complex128 if a.dtype == types.float64 else types.complex64, a.count)

    def codegen(context, builder, sig, args):
        n, width = a.count, padded(a.count)
        return _shuffle(builder, args[0], args[1], list(range(n)) + [width + i for i in range(n)])
    return ret(a, b), codegen


def _unrolled(name, n, params, expr):
    body = ", ".join(expr.format(i=i) for i in range(n))
    namespace = {"lcomplex": lcomplex, "lto_complex": lto_complex}
    from .complex_types import to_complex
    namespace["to_complex"] = to_complex
    exec(f"def {name}_{n}({params}):\n    return ({body},)\n", namespace)
    return namespace[f"{name}_{n}"]


@overload(lre)
def _ov_lre(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zpart(t, 0)
    if isinstance(t, types.UniTuple):
        return _unrolled("lre", t.count, "t", "t[{i}].real")


@overload(lim)
def _ov_lim(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zpart(t, 1)
    if isinstance(t, types.UniTuple):
        return _unrolled("lim", t.count, "t", "t[{i}].imag")


@overload(lre_scale)
def _ov_lre_scale(t, s):
    if isinstance(t, ComplexLanes):
        return lambda t, s: _zre_scale(t, s)
    if isinstance(t, types.UniTuple):
        return _unrolled("lre_scale", t.count, "t, s", "(t[{i}] * s).real")


@overload(lconj)
def _ov_lconj(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zconj(t)
    if isinstance(t, types.UniTuple):
        return _unrolled("lconj", t.count, "t", "t[{i}].conjugate()")


@overload(lcomplex)
def _ov_lcomplex(a, b):
    if isinstance(a, LaneVector):
        return lambda a, b: _zjoin(a, b)
    if isinstance(a, types.UniTuple):
        return _unrolled("lcomplex", a.count, "a, b", "complex(a[{i}], b[{i}])")


@overload(lto_complex)
def _ov_lto_complex(a):
    if isinstance(a, LaneVector):
        return lambda a: _zjoin(a, lzero(a))
    if isinstance(a, types.UniTuple):
        return _unrolled("lto_complex", a.count, "a", "to_complex(a[{i}])")


# ---------------------------------------------------------------- tuples of complex numbers

@intrinsic
def _tuple_to_zlanes(typingctx, t):
    ret = ComplexLanes(types.complex128, t.count)

    def codegen(context, builder, sig, args):
        out = ir.Constant(context.get_value_type(ret), ir.Undefined)
        for i in range(t.count):
            item = context.cast(builder, builder.extract_value(args[0], i), t.dtype, ret.dtype)
            c = context.make_complex(builder, ret.dtype, value=item)
            out = builder.insert_element(out, c.real, _i32(i))
            out = builder.insert_element(out, c.imag, _i32(t.count + i))
        return out
    return ret(t), codegen


@intrinsic
def _zlanes_to_tuple(typingctx, v):
    ret = types.UniTuple(v.dtype, v.count)

    def codegen(context, builder, sig, args):
        out = ir.Constant(context.get_value_type(ret), ir.Undefined)
        for i in range(v.count):
            c = context.make_complex(builder, v.dtype)
            c.real = builder.extract_element(args[0], _i32(i))
            c.imag = builder.extract_element(args[0], _i32(v.count + i))
            out = builder.insert_value(out, c._getvalue(), i)
        return out
    return ret(v), codegen


def as_zlanes(t):
    """as_zlanes(t) -> complex lanes from a tuple of complex numbers."""


@overload(as_zlanes)
def _ov_as_zlanes(t):
    if isinstance(t, types.UniTuple) and isinstance(t.dtype, (types.Complex, types.Float, types.Integer)):
        return lambda t: _tuple_to_zlanes(t)


@overload(lanes_tuple)
def _ov_lanes_tuple(t):
    if isinstance(t, ComplexLanes):
        return lambda t: _zlanes_to_tuple(t)


@overload(len)
def _ov_len(t):
    if isinstance(t, ComplexLanes):
        n = t.count
        return lambda t: n

