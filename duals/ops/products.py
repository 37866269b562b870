"""Products: ``cross``, ``kron``, ``convolve`` and ``correlate``, composed from multiplication,
``matmul`` and the shape primitives (so they are bilinear in the traced values, with exact
derivatives of every order); polynomials are in :mod:`.polynomials`.

>>> import duals
>>> duals.jacfwd(lambda a: np.convolve(a, np.array([1.0, 1.0])))(np.array([1.0, 2.0])).tolist()
[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
"""
import warnings
from types import SimpleNamespace

import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import along_axis, broadcast as broadcast_sets, union
from . import export, innermost, ndim_of as ndim, shape_of as shape
from .assembly import interleave, operand
from .elementwise import align
from .fused_vjp import READS
from .reductions import unbroadcast
from .shape import broadcast_to, flip, getitem, moveaxis, reshape, stack


def _traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


@export()
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None): the cross product of 3-vectors (or 2-vectors).

    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    if not _traced(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(operand(a), axisa, -1)
    b = moveaxis(operand(b), axisb, -1)
    na, nb = shape(a)[-1], shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)", DeprecationWarning,
                      stacklevel=3)
    A = [getitem(a, (Ellipsis, k)) for k in range(na)] + [None] * (3 - na)
    B = [getitem(b, (Ellipsis, k)) for k in range(nb)] + [None] * (3 - nb)

    def term(i, j):
        return None if A[i] is None or B[j] is None else A[i] * B[j]

    def minus(p, q):
        return p - q if p is not None and q is not None else p if q is None else -q

    c2 = minus(term(0, 1), term(1, 0))
    if na == 2 and nb == 2:
        return c2
    parts = [minus(term(1, 2), term(2, 1)), minus(term(2, 0), term(0, 2)), c2]
    full = np.broadcast_shapes(*[shape(p) for p in parts])
    c = stack([broadcast_to(p, full) for p in parts], axis=-1)
    return moveaxis(c, -1, axisc)


@export()
def kron(a, b):
    """kron(a, b): the Kronecker product, blocks ``a[i, j] * b``.

    >>> kron(np.eye(2), np.ones((1, 2))).tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    """
    if not _traced(a, b):
        return np.kron(a, b)
    a, b = operand(a), operand(b)
    d = max(ndim(a), ndim(b))
    sa = (1,) * (d - ndim(a)) + shape(a)
    sb = (1,) * (d - ndim(b)) + shape(b)
    blocks = reshape(a, interleave(sa, (1,) * d)) * reshape(b, interleave((1,) * d, sb))
    return reshape(blocks, tuple(m * n for m, n in zip(sa, sb)))


def _convolve_impl(a, v, *, start, length):
    """Entries ``start .. start + length`` of the full convolution along the last axis (zero
    outside it); leading axes of ``a`` and ``v`` broadcast."""
    if a.ndim == 1 and v.ndim == 1:
        return _convolve_1d(a, v, start, length)
    n, m = a.shape[-1], v.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-1], v.shape[:-1])
    a = np.broadcast_to(a, batch + (n,)).reshape(-1, n)
    v = np.broadcast_to(v, batch + (m,)).reshape(-1, m)
    if a.shape[0] == 1:
        return _convolve_1d(a[0], v[0], start, length).reshape(batch + (length,))
    out = np.empty((a.shape[0], length), np.result_type(a, v))
    for row, p, q in zip(out, a, v):
        row[...] = _convolve_1d(p, q, start, length)
    return out.reshape(batch + (length,))


def _convolve_1d(a, v, start, length):
    n, m = a.shape[0], v.shape[0]
    for mode, window in _modes(n, m).items():
        if (start, length) == window:
            return np.convolve(a, v, mode)   # NumPy's own value, bit for bit
    full = np.convolve(a, v)
    stop = start + length
    if 0 <= start and stop <= full.shape[0]:
        return full[start:stop]
    out = np.zeros(length, full.dtype)
    lo, hi = max(start, 0), min(stop, full.shape[0])
    if lo < hi:
        out[lo - start:hi - start] = full[lo:hi]
    return out


def _modes(n, m):
    """{mode: (first entry of the full convolution, length)} of NumPy's three modes."""
    short, long = min(n, m), max(n, m)
    return {"full": (0, n + m - 1), "same": ((short - 1) // 2, long), "valid": (short - 1, long - short + 1)}


convolve_p = Primitive("convolve", _convolve_impl)


def _convolve_vjp(g, out, x, other, start):
    """Cotangent of ``x`` in ``conv(x, other)`` (or ``conv(other, x)``): a correlation of ``g`` with
    ``other``, itself a convolution with ``other`` reversed."""
    n, m = shape(x)[-1], shape(other)[-1]
    c = convolve_p(g, flip(other, -1), start=m - 1 - start, length=n)
    # c has the shape of ``out`` with ``n`` entries on the last axis; sum away the batch axes x lacks
    return unbroadcast(c, SimpleNamespace(shape=shape(out)[:-1] + (n,)), shape(x))


def _convolve_fused_jvp(primals, tangents, *, start, length):
    """Two 1-D sequences with plain tangent lanes: NumPy's convolution of the value and of each
    lane, without the rules' alignment and second bind (the same calls, so the same numbers);
    batched operands decline to the rules."""
    a, v = primals
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        return None
    tangent = None
    for t, first, second in ((tangents[0], None, v), (tangents[1], a, None)):
        if t is None:
            continue
        if len(t) == 0:
            return None
        rows = [_convolve_1d(row if first is None else first, row if second is None else second,
                             start, length) for row in t]
        term = rows[0][None] if len(rows) == 1 else np.stack(rows)
        tangent = term if tangent is None else tangent + term
    return _convolve_1d(a, v, start, length), tangent


convolve_p.def_jvp(0, lambda t, out, a, v, *, start, length: convolve_p(
    align(t, a, out), v, start=start, length=length))
convolve_p.def_jvp(1, lambda t, out, a, v, *, start, length: convolve_p(
    a, align(t, v, out), start=start, length=length))
convolve_p.def_vjp(0, lambda g, out, a, v, *, start, length: _convolve_vjp(g, out, a, v, start))
convolve_p.def_vjp(1, lambda g, out, a, v, *, start, length: _convolve_vjp(g, out, v, a, start))
convolve_p.fused_jvp = _convolve_fused_jvp
# the cotangent of one sequence reads the other one only
READS[convolve_p] = lambda inputs: frozenset(
    name for name, other in (("y", inputs[0]), ("x", inputs[1])) if other is not None)


def _convolution_pairs(length, start, n, m):
    """(k, i): output entry k reads entry i of an operand of n entries convolved with one of m."""
    k = np.arange(length)
    dst, src = [], []
    for d in range(min(n, m)):   # loop over the shorter operand's offsets
        i = start + k - d if m <= n else np.full(length, d)
        keep = (0 <= i) & (i < n) & (0 <= start + k - i) & (start + k - i < m)
        dst.append(k[keep])
        src.append(i[keep])
    return np.concatenate(dst), np.concatenate(src)


def _convolve_sparsity(sets, out, a, v, *, start, length):
    s = np.shape(innermost(out))
    parts = []
    for p, (n, m) in zip(sets, ((shape(a)[-1], shape(v)[-1]), (shape(v)[-1], shape(a)[-1]))):
        if p is not None:
            dst, src = _convolution_pairs(length, start, n, m)
            parts.append(along_axis(broadcast_sets(p, s[:-1] + (n,)), len(s) - 1, s, dst, src))
    return union(parts, s)


convolve_p.def_sparsity(_convolve_sparsity)


@export()
def convolve(a, v, mode="full"):
    """convolve(a, v, mode="full"): the discrete linear convolution of two 1-D sequences.

    One primitive: NumPy's ``convolve`` for the value; the derivative in each sequence is a
    convolution with the other, and the transpose a correlation. Modes ``full``, ``same`` and
    ``valid`` as in NumPy.

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    if not _traced(a, v):
        return np.convolve(a, v, mode)
    a, v, start, length = _sequences(a, v, mode)
    return convolve_p(a, v, start=start, length=length)


def _sequences(a, v, mode):
    """(a, v as 1-D operands, first entry of the full convolution that ``mode`` keeps, length);
    NumPy's errors for empty sequences and unknown modes."""
    a = reshape(operand(a), (-1,)) if ndim(a) != 1 else operand(a)
    v = reshape(operand(v), (-1,)) if ndim(v) != 1 else operand(v)
    n, m = shape(a)[0], shape(v)[0]
    if min(n, m) == 0:
        raise ValueError("v cannot be empty" if n else "a cannot be empty")
    modes = _modes(n, m)
    if mode not in modes:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    return (a, v) + modes[mode]


@export()
def correlate(a, v, mode="valid"):
    """correlate(a, v, mode="valid"): NumPy's cross-correlation ``c[k] = Σ_n a[n + k] · conj(v[n])``.

    The convolution of ``a`` with ``v`` reversed (and conjugated), so it differentiates as
    :func:`convolve` does. Modes ``valid``, ``same`` and ``full`` as in NumPy.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [3.5]
    """
    if not _traced(a, v):
        return np.correlate(a, v, mode)
    from .complex_parts import conj
    a, v, start, length = _sequences(a, v, mode)
    n, m = shape(a)[0], shape(v)[0]
    if mode == "same" and m > n:   # NumPy centres the longer sequence's window from its end
        start = (n - 1) - (n - 1) // 2
    if np.result_type(innermost(v)).kind == "c":
        v = conj(v)
    return convolve_p(a, flip(v, -1), start=start, length=length)
