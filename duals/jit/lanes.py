"""The tangent lanes of a dual, and their arithmetic: ``t * s``, ``t1 * s1 + t2 * s2``, ``t1 ± t2``, ``-t``.

Over a float base the lanes are a :class:`LaneVector`: an LLVM vector ``<N x double>`` (its
length padded to a power of two) in registers (Numba keeps LLVM's SLP vectoriser off, so scalar
code over lanes would stay scalar), stored in memory as ``[N x double]``, exactly the
``tangent`` field of a dual dtype.
Each helper is then one vector instruction sequence, a dual passes to a non-inlined call in
vector registers, and an array element loads with one vector load. Over a dual base
(nested duals) the lanes are a ``UniTuple`` and the helpers are unrolled tuple expressions
that use the inner dual's own arithmetic (they also accept tuples of floats).

>>> import numba
>>> numba.njit(lambda t, s: lscale(t, s))((1.0, 2.0), 3.0)
(3.0, 6.0)
"""
from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.extending import intrinsic, register_model
from .._overloads import overload

__all__ = ["LaneVector", "padded", "lscale", "laxpy", "ladd", "lsub", "lneg", "lzero", "as_lanes", "lanes_tuple"]


class LaneVector(types.Type):
    """LaneVector(dtype, count): ``count`` float lanes held as one LLVM vector."""

    def __init__(self, dtype, count):
        self.dtype = dtype
        self.count = int(count)
        super().__init__(name=f"Lanes[{dtype} x {self.count}]")

    @property
    def key(self):
        return (self.dtype, self.count)


def padded(count):
    """padded(count) -> the power of two from ``count`` on: the length of a LaneVector's register
    vector.

    >>> [padded(n) for n in (1, 2, 3, 5, 16)]
    [1, 2, 4, 8, 16]
    """
    return 1 << max(count - 1, 0).bit_length()


@register_model(LaneVector)
class LaneVectorModel(models.DataModel):
    """In registers and arguments ``<P x T>``, ``P = padded(N)``, the lanes past ``N`` defined
    (zero, or a splatted scalar's copies); in memory ``[N x T]`` (no padding, alignment of T).

    LLVM widens a vector of another length to the next power of two and leaves the added
    lanes undefined: they held whatever a register last held (often integers, which read as
    subnormal floats), and a vector instruction with a subnormal lane takes a microcode assist:
    a loop calling an ``@njit`` helper ran 6-50x slower at 3, 5, 6 or 7 lanes than at 4 or 8 (a
    neuroscience trial; ``benchmarks/lane_counts.py``). The padded lanes cost nothing LLVM did
    not already compute."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type)
        element = dmm.lookup(fe_type.dtype).get_value_type()
        count = fe_type.count
        self._vector = ir.VectorType(element, padded(count))
        self._array = ir.ArrayType(element, count)
        self._narrow = ir.VectorType(element, count)

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
        out = ir.Constant(self._array, ir.Undefined)
        for i in range(self._fe_type.count):
            out = builder.insert_value(out, builder.extract_element(value, _index(i)), i)
        return out

    def from_data(self, builder, value):
        out = ir.Constant(self._vector, None)
        for i in range(self._fe_type.count):
            out = builder.insert_element(out, builder.extract_value(value, i), _index(i))
        return out

    def load_from_data_pointer(self, builder, ptr, align=None):
        if self._narrow == self._vector:
            return builder.load(builder.bitcast(ptr, self._vector.as_pointer()), align=align or 1)
        narrow = builder.load(builder.bitcast(ptr, self._narrow.as_pointer()), align=align or 1)
        return _widened(builder, narrow, self._vector.count)


def _widened(builder, narrow, width):
    """The ``<N x T>`` vector ``narrow`` as ``<width x T>``, the added lanes zero."""
    count = narrow.type.count
    if count == width:
        return narrow
    mask = [i if i < count else count for i in range(width)]   # lane N of the pair: a zero
    return builder.shuffle_vector(narrow, ir.Constant(narrow.type, None),
                                  ir.Constant(ir.VectorType(ir.IntType(32), width), mask))


def _index(i):
    return ir.Constant(ir.IntType(32), i)


def lanes_type(base, count):
    """lanes_type(base, count) -> the Numba type of ``count`` lanes over ``base``."""
    if isinstance(base, types.Float):
        return LaneVector(base, count)
    return types.UniTuple(base, count)


# ---------------------------------------------------------------- conversions

def as_lanes(t):
    """as_lanes(t) -> the lanes of a tuple ``t`` (a LaneVector for floats)."""
    return t


def lanes_tuple(t):
    """lanes_tuple(t) -> the lanes ``t`` as a tuple."""
    return t


@intrinsic
def _tuple_to_vector(typingctx, t):
    ret = LaneVector(t.dtype, t.count)

    def codegen(context, builder, sig, args):
        out = context.get_constant_null(ret)
        for i in range(t.count):
            item = context.cast(builder, builder.extract_value(args[0], i), t.dtype, ret.dtype)
            out = builder.insert_element(out, item, _index(i))
        return out
    return ret(t), codegen


@intrinsic
def _vector_to_tuple(typingctx, v):
    ret = types.UniTuple(v.dtype, v.count)

    def codegen(context, builder, sig, args):
        out = ir.Constant(context.get_value_type(ret), ir.Undefined)
        for i in range(v.count):
            out = builder.insert_value(out, builder.extract_element(args[0], _index(i)), i)
        return out
    return ret(v), codegen


@overload(as_lanes)
def _ov_as_lanes(t):
    if isinstance(t, types.UniTuple) and isinstance(t.dtype, (types.Float, types.Integer)):
        return lambda t: _tuple_to_vector(t)
    if isinstance(t, (types.UniTuple, LaneVector)):
        return lambda t: t


@overload(lanes_tuple)
def _ov_lanes_tuple(t):
    if isinstance(t, LaneVector):
        return lambda t: _vector_to_tuple(t)
    if isinstance(t, types.UniTuple):
        return lambda t: t


@overload(len)
def _ov_len(t):
    if isinstance(t, LaneVector):
        n = t.count
        return lambda t: n


@intrinsic
def lane(typingctx, v, i):
    """lane(v, i) -> element ``i`` of a LaneVector."""
    if not isinstance(v, LaneVector) or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        index = builder.trunc(args[1], ir.IntType(32)) if args[1].type.width > 32 else args[1]
        return builder.extract_element(args[0], index)
    return v.dtype(v, i), codegen


# ---------------------------------------------------------------- arithmetic (Python reference)

def lscale(t, s):
    """lscale(t, s) -> t * s lane by lane (``s`` a scalar of the base type)."""
    return tuple(e * s for e in t)


def laxpy(t1, s1, t2, s2):
    """laxpy(t1, s1, t2, s2) -> t1 * s1 + t2 * s2 lane by lane."""
    return tuple(a * s1 + b * s2 for a, b in zip(t1, t2))


def lpick(t1, s1, t2, s2):
    """lpick(t1, s1, t2, s2) -> t1 * s1 + t2 * s2 for the partials of a selecting entry (1, ½ or
    0): a 0 is a branch not taken, whose lanes (or tape node) are left out, so an infinite tangent
    or adjoint there adds nothing instead of ``0 · inf``. Lanes of index sets (sparsity
    detection, ``union_lanes``) keep both: the pattern holds for every value."""
    if s1 == 0.0:
        return lscale(t2, s2)
    return lscale(t1, s1) if s2 == 0.0 else laxpy(t1, s1, t2, s2)


@overload(lpick)
def _ov_lpick(t1, s1, t2, s2):
    if getattr(t1, "union_lanes", False):
        return lambda t1, s1, t2, s2: laxpy(t1, s1, t2, s2)

    def picked(t1, s1, t2, s2):
        if s1 == 0.0:
            return lscale(t2, s2)
        if s2 == 0.0:
            return lscale(t1, s1)
        return laxpy(t1, s1, t2, s2)
    return picked


def ladd(t1, t2):
    """ladd(t1, t2) -> t1 + t2 lane by lane."""
    return tuple(a + b for a, b in zip(t1, t2))


def lsub(t1, t2):
    """lsub(t1, t2) -> t1 - t2 lane by lane."""
    return tuple(a - b for a, b in zip(t1, t2))


def lneg(t):
    """lneg(t) -> -t lane by lane."""
    return tuple(-e for e in t)


def lzero(t):
    """lzero(t) -> lanes of zeros of the same type as ``t``."""
    return tuple(e * 0.0 for e in t)


# ---------------------------------------------------------------- LaneVector: vector instructions

def _splat(builder, value, n):
    vec = ir.VectorType(value.type, n)
    v = builder.insert_element(ir.Constant(vec, ir.Undefined), value, _index(0))
    return builder.shuffle_vector(v, ir.Constant(vec, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), n), [0] * n))


def _def_vector(name, nargs, body):
    """An intrinsic over LaneVectors and scalars (splatted); ``body(builder, vectors, scalars)``."""
    def typer(typingctx, *args):
        t = args[0]
        sig = t(*args)

        def codegen(context, builder, sig, llargs):
            vecs, scalars = [], []
            for ty, val in zip(sig.args, llargs):
                if isinstance(ty, LaneVector):
                    vecs.append(val)
                else:
                    scalars.append(_splat(builder, context.cast(builder, val, ty, t.dtype), padded(t.count)))
            return body(builder, vecs, scalars)
        return sig, codegen

    params = ", ".join(f"a{i}" for i in range(nargs))
    namespace = {"typer": typer}
    exec(f"def {name}(typingctx, {params}):\n    return typer(typingctx, {params})\n", namespace)
    return intrinsic(namespace[name])


# "contract" lets LLVM fuse a product into the sum that consumes it (one FMA, one rounding
# instead of two), also across helpers: ``ladd(t, lscale(k, c))``. Tangent arithmetic is
# throughput-bound at several lanes, so this is ~15 % of a compiled Jacobian (W4, 6 lanes).
# Primal arithmetic stays unfused, bit for bit the plain function's.
_CONTRACT = ("contract",)
_vscale = _def_vector("_vscale", 2, lambda b, v, s: b.fmul(v[0], s[0], flags=_CONTRACT))
_vaxpy = _def_vector("_vaxpy", 4, lambda b, v, s: b.fadd(b.fmul(v[0], s[0], flags=_CONTRACT),
                                                        b.fmul(v[1], s[1], flags=_CONTRACT),
                                                        flags=_CONTRACT))
_vadd = _def_vector("_vadd", 2, lambda b, v, s: b.fadd(v[0], v[1], flags=_CONTRACT))
_vsub = _def_vector("_vsub", 2, lambda b, v, s: b.fsub(v[0], v[1], flags=_CONTRACT))
_vneg = _def_vector("_vneg", 1, lambda b, v, s: b.fneg(v[0]))


@intrinsic
def _vzero(typingctx, t):
    def codegen(context, builder, sig, args):
        return context.get_constant_null(sig.return_type)
    return t(t), codegen


# ---------------------------------------------------------------- UniTuple: unrolled expressions

_UNROLLED = {
    "lscale": ("t, s", "t[{i}] * s"),
    "laxpy": ("t1, s1, t2, s2", "t1[{i}] * s1 + t2[{i}] * s2"),
    "ladd": ("t1, t2", "t1[{i}] + t2[{i}]"),
    "lsub": ("t1, t2", "t1[{i}] - t2[{i}]"),
    "lneg": ("t", "-t[{i}]"),
    "lzero": ("t", "t[{i}] * 0.0"),
}
_unrolled_cache = {}


def _unrolled(name, n):
    key = (name, n)
    if key not in _unrolled_cache:
        params, expr = _UNROLLED[name]
        body = ", ".join(expr.format(i=i) for i in range(n))
        namespace = {}
        exec(f"def {name}_{n}({params}):\n    return ({body},)\n", namespace)
        _unrolled_cache[key] = namespace[f"{name}_{n}"]
    return _unrolled_cache[key]


def _register(name, vector_impl):
    def choose(t, *rest):
        if isinstance(t, LaneVector):
            return vector_impl
        if isinstance(t, types.UniTuple):
            return _unrolled(name, t.count)
        return None

    params = _UNROLLED[name][0]
    namespace = {"choose": choose}
    exec(f"def ov({params}):\n    return choose({params})\n", namespace)
    overload(globals()[name])(namespace["ov"])


_register("lscale", lambda t, s: _vscale(t, s))
_register("laxpy", lambda t1, s1, t2, s2: _vaxpy(t1, s1, t2, s2))
_register("ladd", lambda t1, t2: _vadd(t1, t2))
_register("lsub", lambda t1, t2: _vsub(t1, t2))
_register("lneg", lambda t: _vneg(t))
_register("lzero", lambda t: _vzero(t))
