"""``einsum``, composed from ``tensordot``-style contractions: each pair of operands is aligned
by transposes and reshapes and contracted with ``matmul``, so every mode and order follows.
"""
import collections
import string

import numpy as np

from . import export, ndim_of as ndim, shape_of as shape
from .linalg import _as_operand, _traced, matmul_p
from .reductions import sum as _sum
from .shape import getitem, reshape, transpose


def _sublist(sub):
    return "".join("..." if s is Ellipsis else string.ascii_letters[int(s)] for s in sub)


def _einsum_spec(args):
    """(input labels per operand, output labels, operands) from either calling convention."""
    if isinstance(args[0], str):
        subscripts, operands = args[0], list(args[1:])
    else:
        rest = list(args)
        out = rest.pop() if len(rest) % 2 else None
        operands, terms = rest[0::2], [_sublist(s) for s in rest[1::2]]
        subscripts = ",".join(terms) + ("" if out is None else "->" + _sublist(out))
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands but {len(operands)} were given")
    operands = [_as_operand(o) for o in operands]
    labels, ell = [], 0
    for term, op in zip(terms, operands):
        nd = ndim(op)
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise ValueError(f"einsum: invalid subscripts {term!r}")
        if "..." in term:
            pre, post = term.split("...")
            k = nd - len(pre) - len(post)
            if k < 0:
                raise ValueError(f"einsum: subscripts {term!r} have more indices than operand shape {shape(op)}")
            ell = max(ell, k)
            term_labels = list(pre) + [str(k - 1 - j) for j in range(k)] + list(post)
        else:
            term_labels = list(term)
        if len(term_labels) != nd or not all(c in string.ascii_letters for c in term.replace("...", "")):
            raise ValueError(f"einsum: subscripts {term!r} do not match operand shape {shape(op)}")
        labels.append(term_labels)
    if arrow:
        if "..." in rhs:
            pre, post = rhs.split("...")
            out = list(pre) + [str(ell - 1 - j) for j in range(ell)] + list(post)
        else:
            out = list(rhs)
        seen = [c for lab in labels for c in lab]
        for c in out:
            if c not in seen:
                raise ValueError(f"einsum: output index {c!r} appears in no input of {subscripts!r}")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscripts {rhs!r} repeat an index")
    else:
        counts = collections.Counter(c for lab in labels for c in lab if not c.isdigit())
        out = [str(ell - 1 - j) for j in range(ell)] + sorted(c for c, n in counts.items() if n == 1)
    sizes = {}
    for lab, op in zip(labels, operands):
        for c, n in zip(lab, shape(op)):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: index {c!r} has size {sizes[c]} in one operand and {n} in "
                                 f"another (shapes {[shape(o) for o in operands]})")
            sizes[c] = max(sizes.get(c, 1), n)
    return labels, out, operands


def _prepare(x, labels, keep):
    """Diagonals for repeated labels, then sums over labels that are not in ``keep``."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        others = [k for k in range(len(labels)) if k not in (i, j)]
        n = min(shape(x)[i], shape(x)[j])
        idx = np.arange(n)
        x = getitem(transpose(x, others + [i, j]), (Ellipsis, idx, idx))
        labels = [labels[k] for k in others] + [c]
    drop = tuple(k for k, c in enumerate(labels) if c not in keep)
    if drop:
        x = _sum(x, axis=drop)
        labels = [c for c in labels if c in keep]
    return x, labels


def _contract(x, lx, y, ly, keep):
    x, lx = _prepare(x, lx, keep | set(ly))
    y, ly = _prepare(y, ly, keep | set(lx))
    sx, sy = dict(zip(lx, shape(x))), dict(zip(ly, shape(y)))
    contr = [c for c in lx if c in ly and c not in keep]
    for c in contr:  # a length-1 axis against a longer one: sum the longer one first
        if sx[c] != sy[c]:
            if sx[c] == 1:
                y, sy[c] = _sum(y, axis=ly.index(c), keepdims=True), 1
            else:
                x, sx[c] = _sum(x, axis=lx.index(c), keepdims=True), 1
    batch = [c for c in lx if c in ly and c in keep]
    fx = [c for c in lx if c not in ly]
    fy = [c for c in ly if c not in lx]
    bx, by = [sx[c] for c in batch], [sy[c] for c in batch]
    if not contr:
        xs = transpose(x, [lx.index(c) for c in batch + fx])
        ys = transpose(y, [ly.index(c) for c in batch + fy])
        xs = reshape(xs, tuple(bx + [sx[c] for c in fx] + [1] * len(fy)))
        ys = reshape(ys, tuple(by + [1] * len(fx) + [sy[c] for c in fy]))
        return xs * ys, batch + fx + fy
    k = int(np.prod([sx[c] for c in contr], dtype=int))
    xm = reshape(transpose(x, [lx.index(c) for c in batch + fx + contr]), tuple(bx) + (-1, k))
    ym = reshape(transpose(y, [ly.index(c) for c in batch + contr + fy]), tuple(by) + (k, -1))
    r = matmul_p(xm, ym)
    full = tuple(shape(r)[:len(batch)]) + tuple(sx[c] for c in fx) + tuple(sy[c] for c in fy)
    return reshape(r, full), batch + fx + fy


@export()
def einsum(*operands, optimize=False):
    """einsum(subscripts, *operands): Einstein summation, as ``numpy.einsum`` (also the
    interleaved ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` form); contracted pairwise, left to right.

    >>> einsum("ij,j->i", np.eye(2), np.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    if not operands:
        raise ValueError("einsum: no subscripts given")
    labels, out, ops = _einsum_spec(operands)
    if not _traced(*ops):
        return np.einsum(*operands, optimize=optimize)
    x, lx = ops[0], labels[0]
    for i in range(1, len(ops)):
        keep = set(out).union(*[set(lab) for lab in labels[i + 1:]])
        x, lx = _contract(x, lx, ops[i], labels[i], keep)
    x, lx = _prepare(x, lx, set(out))
    return transpose(x, [lx.index(c) for c in out])
