"""The dual scalar type of nopython mode: its Numba type, data model, dtype and boxing.

``DualType(base, lanes)`` is a value type (a ``StructModel``, no heap): a real part of
type ``base`` and ``lanes`` tangent lanes of the same type (one LLVM vector over a float
base, see :mod:`duals.jit.lanes`). ``base`` is a float
type, or another ``DualType`` for nested duals (forward over forward). The nesting depth
is the type's *tag*: ``Dual1`` over floats, ``Dual2`` over ``Dual1`` ... so the two levels
of a Hessian are distinct types and cannot be confused; combining a dual with a dual of
a lower tag treats the lower one as a constant of the higher level.

In Python, a scalar dual is a :class:`duals.Dual`; an array of duals is a NumPy array of
the structured dtype :func:`dual_dtype` (fields ``primal`` and ``tangent``) whose layout is
exactly the struct's, so Numba sees it as ``Array(DualType, ndim, layout)``.

>>> dual_dtype(2).names
('primal', 'tangent')
"""
import functools
import hashlib
import os

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typeconv import Conversion
from numba.core.imputils import lower_constant
from numba.extending import (NativeValue, box, intrinsic, lower_cast, make_attribute_wrapper,
                             models, register_model, typeof_impl, unbox)
from numba.np import numpy_support

from .._overloads import overload, overload_attribute
from .. import derivatives
from .compat import install_dtype_hooks, void_data_offset
from .lanes import LaneVector, as_lanes, lane, lanes_tuple, lanes_type
from .._version import __version__
from ..forward import USER_TRACE, Dual, JVPTrace
from ..reverse import Var


def _source_digest():
    """A digest of the version, the rule table and every source compiled into dual code
    (this package and the formula vocabulary): part of the type key, so cached code compiled
    by another version or with another rule is never reused."""
    h = hashlib.sha256(f"{__version__} numpy {np.__version__}".encode())
    h.update(repr((derivatives.UNARY, derivatives.BINARY, derivatives.CONSTANTS)).encode())
    here = os.path.dirname(__file__)
    paths = [os.path.join(here, name) for name in sorted(os.listdir(here)) if name.endswith(".py")]
    paths += [os.path.join(os.path.dirname(here), name) for name in ("_vocabulary_njit.py", "_vocabulary.py")]
    for path in paths:
        with open(path, "rb") as handle:
            h.update(handle.read())
    return h.hexdigest()[:12]


DIGEST = _source_digest()


class DualType(types.Type):
    """DualType(base, lanes): the Numba type of a dual number with ``lanes`` tangent lanes.

    >>> DualType(types.float64, 3).tag, DualType(DualType(types.float64, 3), 3).tag
    (1, 2)
    """

    def __init__(self, base, lanes):
        self.base = base
        self.lanes = int(lanes)
        self.tag = base.tag + 1 if isinstance(base, DualType) else 1
        self.float = base.float if isinstance(base, DualType) else base
        self.digest = DIGEST  # stored, so a cached signature from another version never matches
        super().__init__(name=f"Dual{self.tag}[{base}, {self.lanes} lanes]")

    @property
    def key(self):
        return (self.base, self.lanes, self.digest)

    @property
    def lanes_type(self):
        return lanes_type(self.base, self.lanes)

    def with_base(self, base):
        """The same kind of dual (lanes, or a tape) over another ``base``."""
        return dual_type(base, self.lanes)

    def unify(self, typingctx, other):
        if isinstance(other, (types.Complex, DualType)) and _is_complex(other):
            if type(self) is not DualType:
                return None   # adjoints and index sets have no complex form
            from .complex_types import complex_of   # a complex value: the complex dual
            return complex_of(self).unify(typingctx, other)
        if isinstance(other, (types.Number, types.Boolean)):
            return self
        if isinstance(other, DualType) and other.tag < self.tag:
            return self
        return None

    def cast_python_value(self, value):
        """A Python number as a constant of this type (lowered with zero lanes)."""
        return float(value)

    def can_convert_from(self, typingctx, other):
        if _is_complex(other):
            return None   # a complex value into a real dual would lose its imaginary part
        if isinstance(other, (types.Number, types.Boolean)):
            return Conversion.safe
        if isinstance(other, DualType) and other.tag < self.tag:
            return Conversion.safe
        if _other_float(other, self):   # float32 <-> float64, as Numba converts its floats
            return Conversion.safe if other.float.bitwidth <= self.float.bitwidth else Conversion.unsafe
        return None


def _other_float(fromty, toty):
    """Whether ``fromty`` is ``toty`` over another real float type (the same kind of dual, the
    same lanes at every level): a store into a buffer of the other type converts it."""
    if type(fromty) is not DualType or type(toty) is not DualType or fromty.lanes != toty.lanes:
        return False   # (adjoints and complex duals have layouts of their own)
    if isinstance(fromty.base, DualType) or isinstance(toty.base, DualType):
        return isinstance(fromty.base, DualType) and isinstance(toty.base, DualType) \
            and _other_float(fromty.base, toty.base)
    return isinstance(fromty.base, types.Float) and isinstance(toty.base, types.Float) \
        and fromty.base != toty.base


def _is_complex(t):
    """Whether ``t`` is a complex number type or a dual whose innermost number is complex."""
    return isinstance(getattr(t, "float", t), types.Complex)


def dual_type(base, lanes):
    """dual_type(base, lanes) -> the dual type over ``base``: a :class:`DualType`, or a complex dual
    (:mod:`duals.jit.complex_types`) when the innermost number of ``base`` is complex."""
    if _is_complex(base):
        from .complex_types import ComplexDualType
        return ComplexDualType(base, lanes)
    return DualType(base, lanes)


@register_model(DualType)
class DualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


make_attribute_wrapper(DualType, "re", "_re")
make_attribute_wrapper(DualType, "du", "_du")


@overload_attribute(DualType, "primal")
def _primal(d):
    return lambda d: d._re


@overload_attribute(DualType, "tangent")
def _tangent(d):
    if d.lanes is None:   # an adjoint of compiled reverse mode, met by the user's own Dual
        from numba.core.errors import TypingError
        from .rules import NESTED_IN_COMPILED
        raise TypingError(f"duals.jit: the tangent of {d}, a value of a compiled transformation: "
                          f"{NESTED_IN_COMPILED}")
    if d.lanes == 1:
        if isinstance(d.lanes_type, LaneVector):
            return lambda d: lane(d._du, 0)
        return lambda d: lanes_tuple(d._du)[0]
    return lambda d: lanes_tuple(d._du)


@intrinsic
def make(typingctx, re, du):
    """make(re, du) -> dual with real part ``re`` and lanes ``du`` (``re`` cast to the base).

    ``du`` is a LaneVector over a float base, a tuple of duals over a dual base, or a tape
    reference (:mod:`duals.jit.tape`), which makes an adjoint."""
    if isinstance(du, LaneVector) or (isinstance(du, types.UniTuple) and isinstance(du.dtype, DualType)):
        ret = dual_type(du.dtype, du.count)
    elif getattr(du, "dual_type", None) is not None:   # another lanes type names its dual type
        ret = du.dual_type
    else:
        from .adjoint import AdjointType
        from .tape import TapeRef
        if not isinstance(du, TapeRef):
            return None
        ret = AdjointType(du.base)  # the tangent is a tape node: compiled reverse mode

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ret)(context, builder)
        st.re = context.cast(builder, args[0], sig.args[0], ret.base)
        st.du = args[1]
        return st._getvalue()
    return ret(re, du), codegen


@overload(Dual)
def _ov_dual(primal, tangent):
    """``duals.Dual(primal, tangent)`` inside @njit: a float tangent, or a tuple of lanes."""
    if not isinstance(primal, (types.Float, types.Integer, DualType)):
        return None
    from .running import NESTED_DUAL, transformations_running
    if isinstance(tangent, (types.Float, types.Integer)):
        if isinstance(primal, DualType):   # the code's own inner derivative of a differentiated value
            from numba.core.errors import TypingError
            from .rules import NESTED_IN_COMPILED
            raise TypingError(f"duals.jit: duals.Dual({primal}, {tangent}) makes a derivative of a "
                              f"value that a compiled transformation differentiates: {NESTED_IN_COMPILED}")

        def one_lane(primal, tangent):
            if transformations_running():
                raise ValueError(NESTED_DUAL)
            return make(primal, as_lanes((float(tangent),)))
        return one_lane
    if isinstance(tangent, types.UniTuple) and isinstance(tangent.dtype, (types.Float, DualType)):
        def lanes(primal, tangent):
            if transformations_running():
                raise ValueError(NESTED_DUAL)
            return make(primal, as_lanes(tangent))
        return lanes
    return None


# ---------------------------------------------------------------- casts (promotion to a dual)

def _zero_lanes(context, toty):
    return context.get_constant_null(toty.lanes_type)


@lower_cast(types.Number, DualType)
@lower_cast(types.Boolean, DualType)
@lower_cast(DualType, DualType)
def _cast_to_dual(context, builder, fromty, toty, val):
    if _is_complex(fromty) and not _is_complex(toty):
        raise TypeError(f"cannot convert {fromty} to {toty}: the imaginary part would be lost")
    if isinstance(fromty, DualType) and fromty.tag == toty.tag and _is_complex(toty):
        from .complex_types import promote_value   # a real dual promoted to the complex one
        return promote_value(context, builder, fromty, toty, val)
    if isinstance(fromty, DualType) and _other_float(fromty, toty):
        return _recast(context, builder, fromty, toty, val)
    if isinstance(fromty, DualType) and fromty.tag >= toty.tag:
        raise TypeError(f"cannot convert {fromty} to {toty}")
    st = cgutils.create_struct_proxy(toty)(context, builder)
    st.re = context.cast(builder, val, fromty, toty.base)
    st.du = _zero_lanes(context, toty)
    return st._getvalue()


def _recast(context, builder, fromty, toty, val):
    """A dual over the other float type, part by part (the lanes of a float base are one LLVM
    vector: one fpext or fptrunc)."""
    source = cgutils.create_struct_proxy(fromty)(context, builder, value=val)
    st = cgutils.create_struct_proxy(toty)(context, builder)
    st.re = context.cast(builder, source.re, fromty.base, toty.base)
    if isinstance(toty.base, DualType):
        lanes = [context.cast(builder, builder.extract_value(source.du, i), fromty.base, toty.base)
                 for i in range(toty.lanes)]
        st.du = context.make_tuple(builder, toty.lanes_type, lanes)
    else:
        vector = context.get_value_type(toty.lanes_type)
        widen = fromty.base.bitwidth < toty.base.bitwidth
        st.du = (builder.fpext if widen else builder.fptrunc)(source.du, vector)
    return st._getvalue()


@lower_constant(DualType)
def _constant_dual(context, builder, ty, pyval):
    """A number as a dual constant with zero lanes (Numba's reductions start from one)."""
    st = cgutils.create_struct_proxy(ty)(context, builder)
    st.re = context.get_constant_generic(builder, ty.base, pyval)
    st.du = _zero_lanes(context, ty)
    return st._getvalue()


# ---------------------------------------------------------------- dtypes of dual arrays

def dual_dtype(lanes, base=np.float64):
    """dual_dtype(lanes, base=np.float64) -> the structured dtype of an array of duals.

    ``base`` is a float dtype or, for nested duals, another dual dtype.

    >>> dual_dtype(3).itemsize
    32
    """
    return _dual_dtype(int(lanes), np.dtype(base))


@functools.lru_cache(maxsize=None)
def _dual_dtype(lanes, base):
    return np.dtype([("primal", base), ("tangent", base, (lanes,))])


# other kinds of dual arrays, by the field names of their dtype: names -> type_of_dtype(dt) (the
# index sets of duals.sparse.index_lanes); such a type gives its dtype back by .numpy_dtype()
DTYPE_KINDS = {}


def type_of_dtype(dt):
    """type_of_dtype(dtype) -> DualType (or AdjointType) or None when ``dt`` is not a dual dtype."""
    if dt.names != ("primal", "tangent"):
        if dt.names in DTYPE_KINDS:
            return DTYPE_KINDS[dt.names](dt)
        return _adjoint_type_of_dtype(dt) if dt.names == ("primal", "node", "tape", "scale") else None
    p = dt.fields["primal"][0]
    t = dt.fields["tangent"][0]
    if t.subdtype is None or t.subdtype[0] != p or len(t.shape) != 1:
        return None
    if p.names is not None:
        base = type_of_dtype(p)
        if base is None:
            return None
    elif p.kind in "fc":
        base = numpy_support.from_dtype(p)
    else:
        return None
    if dt.fields["tangent"][1] != p.itemsize or dt.itemsize != p.itemsize * (1 + t.shape[0]):
        return None
    return dual_type(base, t.shape[0])


def dtype_of_type(t):
    """dtype_of_type(DualType) -> the matching structured dtype."""
    if hasattr(t, "numpy_dtype"):
        return t.numpy_dtype()
    base = dtype_of_type(t.base) if isinstance(t.base, DualType) else numpy_support.as_dtype(t.base)
    if t.lanes is None:
        from .adjoint import adjoint_dtype
        return adjoint_dtype(base)
    return dual_dtype(t.lanes, base)


def _adjoint_type_of_dtype(dt):
    from .adjoint import AdjointType, adjoint_dtype
    p = dt.fields["primal"][0]
    base = type_of_dtype(p) if p.names is not None else (
        numpy_support.from_dtype(p) if p.kind == "f" else None)
    if base is None or dt != adjoint_dtype(p):
        return None
    return AdjointType(base)


install_dtype_hooks(type_of_dtype, dtype_of_type, lambda t: isinstance(t, DualType))


# ---------------------------------------------------------------- duals.Dual in and out of @njit

_TRACES = {1: USER_TRACE}


def _trace(lanes):
    if lanes not in _TRACES:
        _TRACES[lanes] = JVPTrace(USER_TRACE.level, lanes=lanes)
    return _TRACES[lanes]


def _scalar_float(p):
    if isinstance(p, np.ndarray) and p.ndim == 0:
        p = p[()]
    if isinstance(p, (float, np.floating)) and not isinstance(p, np.longdouble):
        return p
    return None


_SCALAR_TYPES = {}


@typeof_impl.register(Dual)
def _typeof_dual(val, c):
    p = val.primal
    t = val._tangent
    if val._trace.level != USER_TRACE.level:   # the result would come back as a user's Dual
        raise TypeError(f"a value traced by duals' forward mode (from jvp, jacfwd or hessian of "
                        f"Python code) was passed to a @numba.njit function, which takes plain "
                        f"numbers and arrays: {_DIFFERENTIATE_IT_ITSELF}")
    if type(p) is float and type(t) is np.ndarray and t.ndim == 1:
        found = _SCALAR_TYPES.get(t.shape[0])
        if found is None:
            found = _SCALAR_TYPES[t.shape[0]] = DualType(types.float64, t.shape[0])
        return found
    if isinstance(p, Dual):
        base = _typeof_dual(p, c)
    elif _scalar_float(p) is not None:
        base = types.float32 if isinstance(_scalar_float(p), np.float32) else types.float64
    elif isinstance(p, (complex, np.complexfloating)) and not isinstance(p, np.clongdouble):
        base = types.complex64 if isinstance(p, np.complex64) else types.complex128
    else:
        raise TypeError(f"an array traced by duals' forward mode (a Dual holding a "
                        f"{type(p).__name__}) was passed to a @numba.njit function, which takes "
                        f"plain numbers and arrays: {_DIFFERENTIATE_IT_ITSELF}")
    if not isinstance(t, np.ndarray) or t.ndim != 1:
        raise TypeError("duals.Dual inside @njit code needs a scalar primal with a 1-d lanes tangent")
    return dual_type(base, t.shape[0])


_DIFFERENTIATE_IT_ITSELF = (
    "differentiate the compiled function itself (duals.jacfwd(njit_fn), duals.grad(njit_fn): "
    "compiled forward and reverse mode), or decorate the calling function with @numba.njit too; "
    "where the caller needs what compiled code lacks (complex linear algebra), make the compiled "
    "function a primitive whose rules call duals.jacfwd of it (docs/custom_rules.md, 'A compiled "
    "piece inside Python code')")


@typeof_impl.register(Var)
def _typeof_var(val, c):
    raise TypeError(f"a value traced by duals' reverse mode (a Var, from grad/vjp/jacrev of Python "
                    f"code) was passed to a @numba.njit function, which takes plain numbers and "
                    f"arrays: {_DIFFERENTIATE_IT_ITSELF}")


def tuple_type(t):
    """The Numba tuple type whose data (in-memory) layout is that of DualType ``t``."""
    base = tuple_type(t.base) if isinstance(t.base, DualType) else t.base
    return types.Tuple((base, types.UniTuple(base, t.lanes)))


def _to_tuple(obj):
    """A Dual (or np.void of dual dtype) as nested tuples ``(primal, (lane, ...))``."""
    if isinstance(obj, Dual):
        p, lanes = obj.primal, obj._tangent
        if type(p) is float and type(lanes) is np.ndarray and lanes.dtype == np.float64:
            return (p, tuple(lanes.tolist()))
    else:
        p, lanes = obj["primal"], obj["tangent"]
    if isinstance(p, (Dual, np.void)):
        return (_to_tuple(p), tuple(_to_tuple(e) for e in lanes))
    if isinstance(p, (complex, np.complexfloating)):
        return (complex(p), tuple(complex(e) for e in lanes))
    return (float(p), tuple(float(e) for e in lanes))


def _from_tuple(tup):
    """The inverse of :func:`_to_tuple`: a :class:`duals.Dual` (nested for nested duals)."""
    p, lanes = tup
    if isinstance(p, tuple):
        inner = _from_tuple(p)
        dt = dtype_of_type(_typeof_dual(inner, None))
        return Dual._new(inner, np.array(list(lanes), dtype=dt), _trace(len(lanes)))
    dtype = np.complex128 if isinstance(p, complex) else np.float64
    return Dual._new(p, np.array(lanes, dtype=dtype), _trace(len(lanes)))


VOID_DATA_OFFSET = void_data_offset(np.zeros(2, dual_dtype(1)))


def _record_pointer(c, obj):
    """(is_record, data pointer) for ``obj``: an ``np.void`` is read in place; anything else
    (a :class:`duals.Dual`) has ``is_record`` false."""
    check = cgutils.get_or_insert_function(
        c.builder.module, ir.FunctionType(ir.IntType(32), [c.pyapi.pyobj]), "PyObject_CheckBuffer")
    is_buffer = c.builder.icmp_signed("!=", c.builder.call(check, [obj]), ir.Constant(ir.IntType(32), 0))
    if VOID_DATA_OFFSET is None:
        return is_buffer, None
    slot = c.builder.gep(obj, [ir.Constant(ir.IntType(64), VOID_DATA_OFFSET)])
    return is_buffer, c.builder.load(c.builder.bitcast(slot, c.pyapi.voidptr.as_pointer()))


def unbox_record(typ, obj, c, otherwise):
    """The native value of ``typ`` read in place from ``obj``, an element (``np.void``) of an
    array of its dtype; ``otherwise(value_ptr, error_ptr)`` emits the code for any other object
    (it stores the value and the error flag)."""
    ll = c.context.get_value_type(typ)
    model = c.context.data_model_manager[typ]
    value_ptr = cgutils.alloca_once_value(c.builder, ll(None))
    error_ptr = cgutils.alloca_once_value(c.builder, cgutils.true_bit)
    is_record, data = _record_pointer(c, obj)
    with c.builder.if_else(is_record, likely=True) as (record, other):
        with record:
            buf = None
            if data is None:
                buf = c.pyapi.alloca_buffer()
                data = c.pyapi.extract_record_data(obj, buf)
            with c.builder.if_then(cgutils.is_not_null(c.builder, data), likely=True):
                ptr = c.builder.bitcast(data, model.get_data_type().as_pointer())
                c.builder.store(model.load_from_data_pointer(c.builder, ptr, align=1), value_ptr)
                c.builder.store(cgutils.false_bit, error_ptr)
                if buf is not None:
                    c.pyapi.release_buffer(buf)
        with other:
            otherwise(value_ptr, error_ptr)
    return NativeValue(c.builder.load(value_ptr), is_error=c.builder.load(error_ptr))


@unbox(DualType)
def _unbox_dual(typ, obj, c):
    """An element of a dual array (``np.void``) is loaded from its memory; a :class:`duals.Dual`
    goes through :func:`_to_tuple` and Numba's tuple unboxing."""
    model = c.context.data_model_manager[typ]

    def dual_object(value_ptr, error_ptr):
        helper = c.pyapi.unserialize(c.pyapi.serialize_object(_to_tuple))
        tup = c.pyapi.call_function_objargs(helper, [obj])
        c.pyapi.decref(helper)
        with c.builder.if_then(cgutils.is_not_null(c.builder, tup), likely=True):
            native = c.unbox(tuple_type(typ), tup)
            data = c.context.data_model_manager[tuple_type(typ)].as_data(c.builder, native.value)
            c.builder.store(model.from_data(c.builder, data), value_ptr)
            c.builder.store(native.is_error, error_ptr)
            c.pyapi.decref(tup)
    return unbox_record(typ, obj, c, dual_object)


@box(DualType)
def _box_dual(typ, val, c):
    data = c.context.data_model_manager[typ].as_data(c.builder, val)
    tup = c.box(tuple_type(typ), c.context.data_model_manager[tuple_type(typ)].from_data(c.builder, data))
    helper = c.pyapi.unserialize(c.pyapi.serialize_object(_from_tuple))
    res = c.pyapi.call_function_objargs(helper, [tup])
    c.pyapi.decref(helper)
    c.pyapi.decref(tup)
    return res
