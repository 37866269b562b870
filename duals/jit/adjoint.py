"""The adjoint scalar type of compiled reverse mode: a real part and a reference to a tape node.

``AdjointType(base)`` is a :class:`~duals.jit._types.DualType` whose tangent is a
:class:`~duals.jit.tape.TapeRef` instead of lanes, so every rule generated from the derivative
table, every whole-array function written with scalar operations and the promotion of arrays
the code makes itself (:mod:`duals.jit.promotion`) apply to it unchanged: what they compute as
a tangent is recorded as a tape node. ``base`` is a float type, or a dual type for forward over
reverse (Hessians): the partials on the tape are then duals too.

In Python an array of adjoints is a NumPy array of :func:`adjoint_dtype` (fields ``primal``,
``node``, ``tape``, ``scale``: the value is ``scale`` times the node), whose layout is the struct's; a scalar enters compiled code as one
``np.void`` element of such an array and comes back as an :class:`AdjointScalar`.

>>> adjoint_dtype(np.float64).names
('primal', 'node', 'tape', 'scale')
"""
import functools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.extending import box, register_model, unbox

from ._types import DIGEST, DualType, unbox_record
from .tape import TapeRef, emit_push

__all__ = ["AdjointType", "AdjointScalar", "adjoint_dtype", "is_adjoint_dtype", "ADJOINT_FIELDS"]

ADJOINT_FIELDS = ("primal", "node", "tape", "scale")


class AdjointType(DualType):
    """AdjointType(base): the Numba type of a value recorded on a tape (compiled reverse mode).

    >>> AdjointType(types.float64).tag, AdjointType(DualType(types.float64, 2)).tag
    (1, 2)
    """

    def __init__(self, base):
        self.base = base
        self.lanes = None  # no lanes: code that reads tangent lanes refuses adjoints
        self.tag = base.tag + 1 if isinstance(base, DualType) else 1
        self.float = base.float if isinstance(base, DualType) else base
        self.digest = DIGEST
        types.Type.__init__(self, name=f"Adjoint{self.tag}[{base}]")

    @property
    def key(self):
        return ("adjoint", self.base, self.digest)

    @property
    def lanes_type(self):
        return TapeRef(self.base)

    def with_base(self, base):
        return AdjointType(base)


@register_model(AdjointType)
class AdjointModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


def adjoint_dtype(base_dtype):
    """adjoint_dtype(base_dtype) -> the structured dtype of an array of adjoints over ``base_dtype``.

    >>> adjoint_dtype(np.float64).itemsize
    32
    """
    return _adjoint_dtype(np.dtype(base_dtype))


@functools.lru_cache(maxsize=None)
def _adjoint_dtype(base):
    return np.dtype([("primal", base), ("node", np.int64), ("tape", np.uint64), ("scale", base)])


def is_adjoint_dtype(dt):
    """is_adjoint_dtype(dt) -> whether ``dt`` is the dtype of an array of adjoints."""
    return dt.names == ADJOINT_FIELDS


class AdjointScalar:
    """A scalar adjoint returned by compiled code: its value and its node on the tape (a node of
    its own when the reference was a multiple of a node, so a cotangent seeds it directly)."""

    __slots__ = ("primal", "node")

    def __init__(self, primal, node):
        self.primal = primal
        self.node = node

    def __repr__(self):
        return f"AdjointScalar({self.primal!r}, node={self.node})"


@unbox(AdjointType)
def _unbox_adjoint(typ, obj, c):
    """An element of an adjoint array (``np.void``), read in place."""
    def refuse(value_ptr, error_ptr):
        c.pyapi.err_set_string("PyExc_TypeError", "an adjoint scalar enters compiled code only "
                                                  "as an element of an adjoint array")
    return unbox_record(typ, obj, c, refuse)


@box(AdjointType)
def _box_adjoint(typ, val, c):
    st = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    ref = cgutils.create_struct_proxy(typ.lanes_type)(c.context, c.builder, value=st.du)
    primal = c.box(typ.base, st.re)
    exact = cgutils.alloca_once_value(c.builder, ref.node)
    with c.builder.if_then(cgutils.is_not_null(c.builder, ref.node)):
        zero = c.context.get_constant_null(typ.base)
        pushed = emit_push(c.context, c.builder, typ.lanes_type, ref.tape, ref.node,
                           ir.IntType(64)(0), ref.scale, zero)
        c.builder.store(cgutils.create_struct_proxy(typ.lanes_type)(c.context, c.builder, value=pushed).node,
                        exact)
    node = c.box(types.int64, c.builder.load(exact))
    make = c.pyapi.unserialize(c.pyapi.serialize_object(AdjointScalar))
    res = c.pyapi.call_function_objargs(make, [primal, node])
    for obj in (make, primal, node):
        c.pyapi.decref(obj)
    return res
