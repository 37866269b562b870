"""Real parts and tangent lanes of dual arrays as arrays of the level below, and back.

A dual array of shape ``S`` whose elements carry ``L`` lanes lies in memory as an array of
shape ``S + (1 + L,)`` of its base type (floats, or duals of the level below for nested
duals). :func:`split` copies out the real part (shape ``S``) and the lanes, lanes last (shape
``S + (L,)``), so a rule can hand them to BLAS and LAPACK with the lanes as extra columns;
:func:`join` and :func:`join_scalar` assemble a dual result from such arrays.

Each function takes the dual type ``T`` of the level being differentiated (a Numba type, passed
as a value): an operand that is not a dual of that level is a constant there, so
``split`` returns it with ``None`` tangents, and the helpers below treat ``None`` as zero
without doing any work for it. :func:`real_values` copies out the plain floats under every
dual layer (what sorting and searching compare).

>>> import numba, numpy as np
>>> from duals.jit import DualType, dual_array
>>> T = DualType(numba.float64, 2)
>>> f = numba.njit(lambda a: split(a, T)[1])
>>> f(dual_array(np.array([1.0, 2.0]), np.array([[1.0, 0.0], [3.0, 4.0]]))).tolist()
[[1.0, 3.0], [0.0, 4.0]]
"""
import numpy as np
from numba.core import errors, types
from numba.extending import intrinsic

from .._overloads import overload, register_jitable
from ._types import DualType
from .rules import binary_choice

__all__ = ["split", "join", "join_scalar", "plus", "minus", "negated", "add_into", "flat",
           "transposed_lanes", "lanes_left", "lanes_right", "level_of", "is_dual_array", "element", "real_values"]


def element(t):
    """The element type of an operand (an array's dtype or the scalar type itself)."""
    return t.dtype if isinstance(t, types.Array) else t


def is_dual_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, DualType)


def level_of(name, *operands, scalar_operations=False):
    """level_of(name, *operand types) -> the dual type of the highest level among the operands'
    elements (None when there is none); duals of one level with different lanes raise.

    Adjoints (compiled reverse mode) raise unless ``scalar_operations``: the function is written
    with scalar dual arithmetic only, which the tape records."""
    found = None
    for t in operands:
        e = element(t)
        if isinstance(e, DualType) and getattr(e, "lanes_refusal", None):   # lanes of another kind
            raise errors.TypingError(e.lanes_refusal.format(name=name))
        if isinstance(e, DualType) and e.lanes is None and not scalar_operations:
            raise errors.TypingError(
                f"duals.jit: {name} works on the tangent lanes of dual arrays, which compiled "
                f"reverse mode (the tape) does not have; differentiate this function with "
                f"duals.jacfwd (compiled forward mode), or write {name} with loops and scalar "
                f"operations, which the tape records")
        if isinstance(e, DualType):
            if found is None or e.tag > found.tag:
                found = e
            elif e.tag == found.tag and e != found:
                binary_choice(name, found, e, None, None, None)  # raises: same level, other lanes
    return found


def at_level(t, T):
    """Whether operand type ``t`` is a dual (array or scalar) of the level of ``T``."""
    e = element(t)
    return isinstance(e, DualType) and e.tag == T.tag


# ---------------------------------------------------------------- the layout, seen from Numba

@intrinsic
def _base_dtype(typingctx, a):
    """The dtype of the level below a dual array's elements (what its lanes are made of)."""
    if not is_dual_array(a):
        return None

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()
    return types.DType(a.dtype.base)(a), codegen


def split(a, T):
    """split(a, T) -> (real part, lanes ``a.shape + (L,)``) of a dual array of ``T``'s level, both
    C-contiguous copies; ``(a, None)`` for any other operand (a constant at that level)."""


def join(re, du, T):
    """join(re, du, T) -> the dual array of type ``T`` with real part ``re`` and lanes ``du``
    (shape ``re.shape + (L,)``, or None for zero lanes)."""


def join_scalar(re, du, T):
    """join_scalar(re, du, T) -> the dual number of type ``T`` with real part ``re`` and lanes
    ``du`` (an array of ``L`` entries, or None)."""


def _level(t):
    if not isinstance(t, types.TypeRef) or not isinstance(t.instance_type, DualType):
        raise errors.TypingError("duals.jit: internal: expected a dual type as the level")
    return t.instance_type


@overload(split)
def _ov_split(a, T):
    level = _level(T)
    if not (is_dual_array(a) and a.dtype.tag == level.tag):
        return lambda a, T: (a, None)
    width = 1 + a.dtype.lanes

    def impl(a, T):
        c = np.ascontiguousarray(a)
        v = c.view(_base_dtype(c)).reshape(c.size * width)
        re = np.empty(a.shape, v.dtype)
        du = np.empty(a.shape + (width - 1,), v.dtype)
        r, d = re.reshape(c.size), du.reshape(c.size * (width - 1))
        for i in range(c.size):
            r[i] = v[i * width]
            for lane in range(width - 1):
                d[i * (width - 1) + lane] = v[i * width + 1 + lane]
        return re, du
    return impl


@overload(join)
def _ov_join(re, du, T):
    level = _level(T)
    width = 1 + level.lanes
    if _none(du):
        def constant(re, du, T):
            out = np.empty(re.shape, level)
            out[...] = re
            return out
        return constant

    def impl(re, du, T):
        if du.shape != re.shape + (width - 1,):
            raise ValueError("duals.jit: internal: lanes of another shape than the real part")
        out = np.empty(re.shape, level)
        v = out.view(_base_dtype(out)).reshape(out.size * width)
        r, d = flat(re), flat(du)
        for i in range(r.size):
            v[i * width] = r[i]
            for lane in range(width - 1):
                v[i * width + 1 + lane] = d[i * (width - 1) + lane]
        return out
    return impl


@overload(join_scalar)
def _ov_join_scalar(re, du, T):
    level = _level(T)
    width = 1 + level.lanes

    if _none(du):
        def constant(re, du, T):
            out = np.zeros(1, level)
            out.view(_base_dtype(out))[0] = re
            return out[0]
        return constant

    def impl(re, du, T):
        out = np.empty(1, level)
        v = out.view(_base_dtype(out)).reshape((1, width))
        v[0, 0] = re
        for k in range(width - 1):  # a loop: slice assignment compiles Numba's shape-error text
            v[0, 1 + k] = du[k]
        return out[0]
    return impl


# ---------------------------------------------------------------- real parts as floats

def real_values(x):
    """real_values(x) -> the plain floats under every dual layer of a dual array (a copy)."""


@overload(real_values)
def _ov_real_values(x):
    if not is_dual_array(x):
        return lambda x: x
    floats = x.dtype.float
    width = _floats_per_element(x.dtype)

    def impl(x):
        c = np.ascontiguousarray(x)
        return np.ascontiguousarray(c.view(floats).reshape(x.shape + (width,))[..., 0])
    return impl


def _floats_per_element(t):
    """How many floats one dual of type ``t`` holds (its first one is the innermost real part)."""
    if isinstance(t, DualType) and t.lanes is None:  # an adjoint: its base, node, tape, scale (a base)
        return 2 * _floats_per_element(t.base) + 2
    if isinstance(t, DualType):
        return (1 + t.lanes) * _floats_per_element(t.base)
    return 1



# ---------------------------------------------------------------- tangent arithmetic, None = zero

def plus(x, y):
    """plus(x, y) -> x + y, where None is a zero that costs nothing."""


def minus(x, y):
    """minus(x, y) -> x - y, where None is a zero that costs nothing."""


def lanes_left(da, b):
    """lanes_left(da, b) -> ``out[..., l] = da[..., l] @ b``: lanes ``da`` (m, k, L) times a matrix
    ``b`` (k, n), as one matrix product (m·L, k) @ (k, n); None for ``da`` None."""


def lanes_right(a, db):
    """lanes_right(a, db) -> ``out[..., l] = a @ db[..., l]``: a matrix ``a`` (m, k) times lanes
    ``db`` (k, n, L), as one matrix product (m, k) @ (k, n·L); None for ``db`` None."""


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


# Tangent arithmetic is written as flat loops over C-ordered copies: an n-d array expression
# makes LLVM emit a broadcasting loop nest for every stride case (about ten thousand
# instructions at -O3 for one 3-d division), and every caller's module optimises it again.

@register_jitable
def flat(x):
    """The entries of ``x`` as a 1-d array (a view when ``x`` is C-contiguous)."""
    return np.ascontiguousarray(x).reshape(x.size)


@register_jitable
def _same_shape(x, y):
    if x.shape != y.shape:
        raise ValueError("duals.jit: internal: tangent lanes of different shapes")


@register_jitable
def _sum(x, y):
    _same_shape(x, y)
    out = np.empty(x.shape, x.dtype)
    o, a, b = flat(out), flat(x), flat(y)
    for i in range(o.size):
        o[i] = a[i] + b[i]
    return out


@register_jitable
def _difference(x, y):
    _same_shape(x, y)
    out = np.empty(x.shape, x.dtype)
    o, a, b = flat(out), flat(x), flat(y)
    for i in range(o.size):
        o[i] = a[i] - b[i]
    return out


@register_jitable
def negated(x):
    """negated(x) -> ``-x`` as a flat loop."""
    out = np.empty(x.shape, x.dtype)
    o, a = flat(out), flat(x)
    for i in range(o.size):
        o[i] = -a[i]
    return out


@register_jitable
def add_into(out, x):
    """add_into(out, x) -> ``out += x`` (``out`` C-contiguous) as a flat loop."""
    _same_shape(out, x)
    o, a = out.reshape(out.size), flat(x)
    for i in range(o.size):
        o[i] += a[i]


def _flat_loops(x, y):
    return x.dtype == y.dtype and x.ndim == y.ndim


@overload(plus)
def _ov_plus(x, y):
    if _none(x):
        return lambda x, y: y
    if _none(y):
        return lambda x, y: x
    if _flat_loops(x, y):
        return _sum
    return lambda x, y: x + y


@overload(minus)
def _ov_minus(x, y):
    if _none(y):
        return lambda x, y: x
    if _none(x):
        return lambda x, y: negated(y)
    if _flat_loops(x, y):
        return _difference
    return lambda x, y: x - y


@overload(lanes_left)
def _ov_lanes_left(da, b):
    if _none(da):
        return lambda da, b: None

    def impl(da, b):
        m, k, lanes = da.shape
        t = _last_two_swapped(da).reshape((m * lanes, k))
        out = np.dot(t, np.ascontiguousarray(b))
        return _last_two_swapped(out.reshape((m, lanes, out.shape[1])))
    return impl


@register_jitable
def transposed_lanes(x):
    """transposed_lanes(x) -> the lanes ``x`` (m, n, L) of a matrix as those of its transpose (n, m, L), C-ordered."""
    m, n, lanes = x.shape
    out = np.empty((n, m, lanes), x.dtype)
    for i in range(m):
        for j in range(n):
            for lane in range(lanes):
                out[j, i, lane] = x[i, j, lane]
    return out


@register_jitable
def _last_two_swapped(x):
    """``x.transpose((0, 2, 1))`` as a C-ordered copy."""
    p, q, r = x.shape
    out = np.empty((p, r, q), x.dtype)
    for i in range(p):
        for j in range(q):
            for k in range(r):
                out[i, k, j] = x[i, j, k]
    return out


@overload(lanes_right)
def _ov_lanes_right(a, db):
    if _none(db):
        return lambda a, db: None

    def impl(a, db):
        k, n, lanes = db.shape
        out = np.dot(np.ascontiguousarray(a), db.reshape((k, n * lanes)))
        return out.reshape((out.shape[0], n, lanes))
    return impl
