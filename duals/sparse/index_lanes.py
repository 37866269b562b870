"""Sparsity detection of unchanged ``@numba.njit`` code: duals whose lanes are sets of inputs.

Compiled forward mode computes every operation as ``make(f(x), lscale(x._du, f'(x)))`` and
friends: the rules generated from the derivative table only ever call the six lane operations
of :mod:`duals.jit.lanes` on the tangent. :class:`IndexBits` is a "tangent" that is a set of
input positions, ``words`` 64-bit words of bits: every lane operation is a bitwise OR (a
scaling keeps the set, whatever the factor: the pattern is structural) and ``lzero`` the empty
set. :class:`IndexDualType` is the dual over it, so the user's compiled code, run on an array
of :func:`index_dtype`, computes its values as usual and the inputs each entry depends on.

Branches the code takes on values (``if x > 0``) give the pattern at the given point; the
generated ``maximum``/``minimum`` rules keep both sides (a structural superset). Compiled code
cannot tell the pattern that it read a value, so a pattern found this way is checked at every
later call of ``sparsity="auto"`` by one extra lane, and detected again where the check fails.
Constructs that work on float lanes (linear algebra on dual arrays, through LAPACK) cannot run
on index sets: detection then raises and asks for a pattern. :func:`detect_compiled` first runs
the code once on sets of a few input numbers (:mod:`duals.sparse.slot_lanes`), and on these bits
only where an output depends on more inputs than those hold. Hessian patterns run the code on
index duals nested under pair sets (:mod:`duals.sparse.pair_slots`, :mod:`duals.sparse.pair_lanes`).

>>> import numba
>>> f = numba.njit(lambda x: x[1:] * x[:-1])
>>> detect_compiled(f, [np.ones(4)], 0, False, "natural").pattern.toarray().astype(int).tolist()
[[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
"""
import functools
import hashlib
import os

import numpy as np
from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.core.datamodel import models
from numba.extending import box, intrinsic, register_model, unbox

from .._overloads import overload
from ..jit import _types as dual_types
from ..jit.lanes import ladd, laxpy, lneg, lscale, lsub, lzero
from .patterns import Sparsity

__all__ = ["IndexBits", "IndexDualType", "index_dtype", "detect_compiled", "detect_bits", "seed_bits", "bit_pairs"]

def _lanes_digest():
    """The compiled-mode digest and the sources of the index-set lanes: part of their types' keys,
    so code cached for these types by another version of them is never reused."""
    h = hashlib.sha256(dual_types.DIGEST.encode())
    here = os.path.dirname(__file__)
    for name in ("index_lanes.py", "slot_lanes.py", "pair_lanes.py", "pair_slots.py"):
        with open(os.path.join(here, name), "rb") as handle:
            h.update(handle.read())
    return h.hexdigest()[:12]


DIGEST = _lanes_digest()
WORDS = (1, 4, 16)
MORE_SLOTS = 16   # the second try on input numbers where bits would take several runs   # set sizes compiled for: 64, 256 or 1024 inputs per pass
FIELDS = ("primal", "sets")


class IndexBits(types.Type):
    """IndexBits(words): a set of input positions held as ``words`` 64-bit words."""

    union_lanes = True   # a selecting rule keeps both operands' sets (duals.jit.lanes.lpick)

    def __init__(self, words):
        self.words = int(words)
        super().__init__(name=f"IndexBits[{self.words} words]")

    @property
    def key(self):
        return self.words

    @property
    def dual_type(self):
        return IndexDualType(self.words)


@register_model(IndexBits)
class IndexBitsModel(models.DataModel):
    """In registers ``<W x i64>`` (one OR instruction per union); in memory ``[W x i64]``."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type)
        self._vector = ir.VectorType(ir.IntType(64), fe_type.words)
        self._array = ir.ArrayType(ir.IntType(64), fe_type.words)

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
        for i in range(self._fe_type.words):
            out = builder.insert_value(out, builder.extract_element(value, ir.IntType(32)(i)), i)
        return out

    def from_data(self, builder, value):
        out = ir.Constant(self._vector, ir.Undefined)
        for i in range(self._fe_type.words):
            out = builder.insert_element(out, builder.extract_value(value, i), ir.IntType(32)(i))
        return out

    def load_from_data_pointer(self, builder, ptr, align=None):
        return self.from_data(builder, builder.load(ptr, align=align))


class IndexDualType(dual_types.DualType):
    """IndexDualType(words): a float value and the set of inputs it depends on."""

    # what code that works on float tangent lanes (duals.jit.parts.level_of) says to this type
    lanes_refusal = ("duals.jit: {name} works on the float tangent lanes of dual arrays, and "
                     "sparsity detection runs the code on index sets instead")

    def __init__(self, words):
        self.base = types.float64
        self.words = int(words)
        self.lanes = self.words        # one 8-byte slot per word after the value (array views)
        self.tag = 1
        self.float = types.float64
        self.digest = DIGEST
        types.Type.__init__(self, name=f"IndexDual[{self.words} words]")

    @property
    def key(self):
        return ("index sets", self.words, self.digest)

    @property
    def lanes_type(self):
        return IndexBits(self.words)

    def with_base(self, base):
        return self

    def numpy_dtype(self):
        return index_dtype(self.words)


@register_model(IndexDualType)
class IndexDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("re", fe_type.base), ("du", fe_type.lanes_type)])


@functools.lru_cache(maxsize=None)
def index_dtype(words):
    """index_dtype(words) -> the dtype of an array of index duals: a value and ``words`` uint64 words."""
    return np.dtype([("primal", np.float64), ("sets", np.uint64, (int(words),))])


def _type_of_dtype(dt):
    sets = dt.fields["sets"][0]
    if dt.fields["primal"][0] != np.float64 or sets.subdtype is None or sets.subdtype[0] != np.uint64:
        return None
    return IndexDualType(sets.shape[0])


dual_types.DTYPE_KINDS[FIELDS] = _type_of_dtype

# ---------------------------------------------------------------- the six lane operations: unions


@intrinsic
def _union(typingctx, a, b):
    if not isinstance(a, IndexBits) or a != b:
        return None

    def codegen(context, builder, sig, args):
        return builder.or_(args[0], args[1])
    return a(a, b), codegen


@intrinsic
def _empty(typingctx, a):
    def codegen(context, builder, sig, args):
        return context.get_constant_null(a)
    return a(a), codegen


@overload(lscale)
def _ov_lscale(t, s):
    if isinstance(t, IndexBits):
        return lambda t, s: t


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    if isinstance(t1, IndexBits):
        return lambda t1, s1, t2, s2: _union(t1, t2)


@overload(ladd)
def _ov_ladd(t1, t2):
    if isinstance(t1, IndexBits):
        return lambda t1, t2: _union(t1, t2)


@overload(lsub)
def _ov_lsub(t1, t2):
    if isinstance(t1, IndexBits):
        return lambda t1, t2: _union(t1, t2)


@overload(lneg)
def _ov_lneg(t):
    if isinstance(t, IndexBits):
        return lambda t: t


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, IndexBits):
        return lambda t: _empty(t)


def unbox_element(typ, obj, c):
    """An element of an array of the type's dtype (``np.void``), read in place; any other object
    (a Python number or dual) cannot carry index sets and is refused."""
    def other(value_ptr, error_ptr):
        c.pyapi.err_set_string("PyExc_TypeError", f"sparsity detection: a {typ} argument must be an "
                                                  f"element of an array of its dtype")
    return dual_types.unbox_record(typ, obj, c, other)


unbox(IndexDualType)(unbox_element)


@box(IndexDualType)
def _box_index_dual(typ, val, c):
    c.pyapi.err_set_string("PyExc_TypeError", "sparsity detection of compiled code: the function "
                                              "returned a scalar; return an array")
    return cgutils.get_null_value(c.pyapi.pyobj)

# ---------------------------------------------------------------- detection


def seed_bits(words, inputs):
    """seed_bits(words, inputs): row ``inputs[l]`` of ``words`` (m, W) uint64 gets bit ``l`` (in place).

    >>> w = np.zeros((3, 1), np.uint64); seed_bits(w, np.array([2, 0])); w.ravel().tolist()
    [2, 0, 1]
    """
    if _bit_pairs_kernel is None:
        _compile_bit_pairs()
    _seed_kernel(words, inputs)


def _seed_bits(words, inputs):
    for local in range(inputs.size):
        words[inputs[local], local // 64] = np.uint64(1) << np.uint64(local % 64)


def bit_pairs(words, offset=0):
    """bit_pairs(words, offset=0) -> (rows, cols): the set bits of ``words`` (m, W) uint64, bit ``b``
    of word ``w`` of row ``r`` as ``(r, offset + 64 w + b)``, in row order (compiled on first use).

    >>> bit_pairs(np.array([[5], [0], [2]], np.uint64))
    (array([0, 0, 2]), array([0, 2, 1]))
    """
    if _bit_pairs_kernel is None:
        _compile_bit_pairs()
    return _bit_pairs_kernel(words, offset)


@intrinsic
def _lowest(typingctx, w):
    """The position of the lowest set bit of a non-zero word."""
    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.IntType(1)(1))
    return types.intp(types.uint64), codegen


@intrinsic
def _without_lowest(typingctx, w):
    """The word without its lowest set bit."""
    def codegen(context, builder, sig, args):
        return builder.and_(args[0], builder.sub(args[0], ir.IntType(64)(1)))
    return types.uint64(types.uint64), codegen


@intrinsic
def _count(typingctx, w):
    """The number of set bits of a word."""
    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


def _bit_pairs(words, offset):
    m, width = words.shape
    total = 0
    for r in range(m):
        for w in range(width):
            total += _count(words[r, w])
    rows = np.empty(total, np.int64)
    cols = np.empty(total, np.int64)
    k = 0
    for r in range(m):
        for w in range(width):
            v = words[r, w]
            while v != 0:
                rows[k] = r
                cols[k] = offset + 64 * w + _lowest(v)
                k += 1
                v = _without_lowest(v)
    return rows, cols


_bit_pairs_kernel = _seed_kernel = None


def _compile_bit_pairs():
    global _bit_pairs_kernel, _seed_kernel
    from .._numba_cache import cached_njit
    _seed_kernel = cached_njit(nogil=True)(_seed_bits)
    _bit_pairs_kernel = cached_njit(nogil=True)(_bit_pairs)


def _refused(f, reason):
    name = getattr(f, "__name__", "the function")
    return NotImplementedError(
        f"sparsity detection of the compiled function {name!r} {reason}; pass sparsity= a pattern "
        f"(a boolean or scipy.sparse matrix, or duals.sparsity of a NumPy version of the function)")


def detect_compiled(f, args, argnum, hessian, order):
    """detect_compiled(f, args, argnum, hessian, order) -> the Jacobian's (or Hessian's) Sparsity at ``args``.

    ``f`` runs once on sets of at most 8 inputs (:func:`duals.sparse.slot_lanes.detect_slots`);
    where an output's set overflows, on 16 slots when bits would take several runs (more than
    1024 inputs), then on bits (:func:`detect_bits`). For a Hessian see
    :func:`duals.sparse.pair_lanes.detect_hessian`.
    """
    from ..jit.calling import _check_dispatcher
    from .slot_lanes import detect_slots
    if hessian:
        from .pair_lanes import detect_hessian
        return detect_hessian(f, args, argnum, order)
    f = _check_dispatcher(f, "sparsity")
    x = args[argnum]
    if not isinstance(x, np.ndarray):
        raise _refused(f, "needs an array argument (here a scalar)")
    import scipy.sparse
    found = detect_slots(f, args, argnum)
    if found is None and x.size > 64 * WORDS[-1]:   # bits would take several runs: more slots first
        found = detect_slots(f, args, argnum, slots=MORE_SLOTS)
    if found is None:
        row, col, m = detect_bits(f, args, argnum)
        pattern = scipy.sparse.csr_array((np.ones(row.size, dtype=bool), (row, col)), shape=(m, x.size))
    else:
        indptr, indices = found
        pattern = scipy.sparse.csr_array((np.ones(indices.size, dtype=bool), indices, indptr),
                                         shape=(indptr.size - 1, x.size))
        pattern.has_canonical_format = True    # sorted rows without repeats
        return Sparsity.trusted(pattern, "jacobian", order)
    return Sparsity(pattern, "jacobian", order, depends_on_values=False)


def detect_bits(f, args, argnum):
    """detect_bits(f, args, argnum) -> (rows, cols, m): the Jacobian's pattern at ``args`` from
    runs on :func:`index_dtype` arrays, one per 64·W inputs (W words per entry)."""
    from ..jit.calling import call_on_duals
    x = args[argnum]
    n = x.size
    words = next((w for w in WORDS if 64 * w >= n), WORDS[-1])
    rows, cols, m = [], [], 0
    for start in range(0, max(n, 1), 64 * words):
        seeded = np.zeros(x.shape, index_dtype(words))
        seeded["primal"] = x
        seed_bits(seeded.reshape(-1)["sets"], np.arange(start, min(n, start + 64 * words)))
        call = list(args)
        call[argnum] = seeded
        try:
            y = call_on_duals(f, call, "sparsity")
        except (TypeError, errors.NumbaError) as exc:   # duals.jit says why, as a TypeError
            raise _refused(f, f"cannot run it on index sets ({exc})") from exc
        if not (isinstance(y, np.ndarray) and y.dtype.names == FIELDS):
            if isinstance(y, np.ndarray) and y.dtype.kind == "f":   # nothing depends on x
                m = y.size
                continue
            raise _refused(f, f"returned a {type(y).__name__}; it needs one array output")
        row, col = bit_pairs(y.reshape(-1)["sets"], start)
        rows.append(row)
        cols.append(col)
        m = y.size
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    col = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    return row, col, m


def _set_level(*ts):
    """The element type of the arrays of index sets among the operands, or None."""
    from ..jit.adjoint_arrays import is_index_set
    for t in ts:
        if isinstance(t, types.Array) and is_index_set(t.dtype):
            return t.dtype
    return None


def _install_products():
    """``@``, ``np.dot`` and ``np.matmul`` on arrays of index sets, by loops (a constant operand's
    exact zeros carry no dependency, as on the NumPy path): ``S @ rates`` of a stoichiometric
    matrix is detected, not refused."""
    import operator
    from ..jit.adjoint_arrays import products_by_loops
    for function in (np.dot, np.matmul, operator.matmul):
        overload(function, target="cpu")(products_by_loops(_set_level))


_install_products()
