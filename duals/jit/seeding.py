"""Dual arguments for compiled code: float buffers seen as duals, reused from call to call.

An argument with ``n`` elements and lane counts ``lanes`` (outermost first) lives in a float
buffer ``(n, 1 + lanes[0], 1 + lanes[1], ...)``: slot ``[e, 0, 0]`` is the primal, ``[e, 1 + k, 0]``
outer lane ``k``, ``[e, 0, 1 + j]`` inner lane ``j``. The buffer is handed to Numba as an array
of dual dtype, or for a scalar as one ``np.void`` element, which the dual type reads in place
(Numba's dispatcher types both without a Python call). :class:`SeededArguments` keeps such
buffers for one layout of arguments, so a call of ``jacfwd`` writes primals and copies the
seeds back instead of building arrays; the copy also undoes whatever the user's code wrote
into its inputs during the previous call.

>>> args = SeededArguments([2.0, np.array([1.0, 3.0])], (3,), start=0)
>>> args.fill([2.0, np.array([1.0, 3.0])])[1]["tangent"].tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
"""
import functools
import math
import types

import numpy as np

from ._types import dual_dtype

__all__ = ["float_dtype", "dual_buffer", "as_duals", "seed_units", "SeededArguments", "layout_key"]


def float_dtype(p):
    """float_dtype(p) -> the float (or complex) dtype of ``p`` (float64 for integers)."""
    dt = p.dtype if isinstance(p, (np.ndarray, np.floating)) else np.asarray(p).dtype
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def nested_dtype(lanes, base):
    """nested_dtype(lanes, base) -> the dual dtype of ``lanes[0]`` outer lanes over ... over ``base``."""
    dt = np.dtype(base)
    for count in reversed(lanes):
        dt = dual_dtype(count, dt)
    return dt


def _primal_slots(lanes):
    return (slice(None),) + (0,) * len(lanes)


def dual_buffer(p, lanes):
    """dual_buffer(p, lanes) -> zeroed buffer ``(n,) + (1 + lanes[i], ...)`` with ``p`` in its primal slots."""
    n = p.size if isinstance(p, np.ndarray) else 1
    buf = np.zeros((n,) + tuple(count + 1 for count in lanes), float_dtype(p))
    buf[_primal_slots(lanes)] = p.reshape(n) if isinstance(p, np.ndarray) else p
    return buf


def as_duals(buf, p, lanes):
    """as_duals(buf, p, lanes) -> the buffer as duals shaped like ``p`` (an ``np.void`` for a scalar)."""
    view = buf.reshape(buf.shape[0], -1).view(nested_dtype(lanes, buf.dtype))[:, 0]
    if isinstance(p, np.ndarray):
        return view.reshape(p.shape)
    return view[0]


def seed_units(buf, offset, level, lanes, start):
    """At ``level``, set lane k of element e to 1 where direction ``start + k`` is element ``offset + e``."""
    n, count = buf.shape[0], lanes[level]
    lo, hi = max(start, offset), min(start + count, offset + n)
    if lo < hi:
        rows = np.arange(lo - offset, hi - offset)
        index = [rows] + [0] * len(lanes)
        index[1 + level] = rows + (1 + offset - start)
        buf[tuple(index)] = 1.0


def layout_key(primals):
    """layout_key(primals) -> what the buffers of these arguments depend on (types, shapes, dtypes)."""
    return tuple([_layout_of(p) for p in primals])


def layout_key_at(args, nums):
    """layout_key_at(args, nums) -> ``(len(args),) + layout_key`` of the arguments at ``nums``
    (one differentiated argument, the common case, without building lists)."""
    if len(nums) == 1:
        return (len(args), _layout_of(args[nums[0]]))
    return (len(args),) + layout_key([args[i] for i in nums])


def driven_entry(driven, known, args):
    """(what ``driven`` keeps for the layout of this call's own arguments, the call's
    ``(nums, single)`` from ``known``), or ``(None, None)``: a compiled driver's entry, found
    before any argument is converted (only a float layout, which needs no conversion, matches)."""
    found = known.get(len(args))
    if found is None:
        return None, None
    return driven.get(layout_key_at(args, found[0])), found


def _layout_of(p):
    return (p.shape, p.dtype.char) if type(p) is np.ndarray else type(p)


class SeededArguments:
    """SeededArguments(primals, lanes, start): unit seeds for directions ``start ...`` over all arguments.

    Direction ``d`` is element ``d - offset`` of the argument whose elements start at
    ``offset`` (arguments are numbered one after another). With two lane levels, the outer
    lanes start at ``start[0]`` and the inner at ``start[1]`` (forward over forward).
    Arguments of one float dtype share one buffer, so restoring the seeds is one copy.
    ``fill(primals)`` restores the seeds and writes the primals; ``write(primals, tangents)``
    (one lane) writes primals and tangents; both return the duals. With ``reusable=False``
    the primals are written at once and the writers are not generated (one call's buffers).
    """

    def __init__(self, primals, lanes, start, reusable=True):
        starts = start if isinstance(start, tuple) else (start,) * len(lanes)
        groups, rows = {}, []  # dtype -> row count; per argument (dtype, first row, count)
        for p in primals:
            n = p.size if isinstance(p, np.ndarray) else 1
            dt = float_dtype(p)
            rows.append((dt, groups.get(dt, 0), n))
            groups[dt] = groups.get(dt, 0) + n
        buffers = {dt: np.zeros((count,) + tuple(c + 1 for c in lanes), dt) for dt, count in groups.items()}
        offset = 0
        for dt, row, n in rows:
            block = buffers[dt][row:row + n]
            for level, level_start in enumerate(starts):
                seed_units(block, offset, level, lanes, level_start)
            offset += n
        self.pairs = [(buf, buf.copy()) for buf in buffers.values()]
        flat = {dt: buf.reshape(buf.shape[0], math.prod(buf.shape[1:])) for dt, buf in buffers.items()}
        views = {dt: f.view(nested_dtype(lanes, dt))[:, 0] for dt, f in flat.items()}
        self.duals = []
        for p, (dt, row, n) in zip(primals, rows):
            if isinstance(p, np.ndarray):
                self.duals.append(views[dt][row:row + n].reshape(p.shape))
            else:
                self.duals.append(views[dt][row])
        if reusable:
            self.fill = _writer(primals, rows, flat, self.pairs, self.duals, tangents=False)
            self.write = _writer(primals, rows, flat, (), self.duals, tangents=True)
        else:
            for p, (dt, row, n) in zip(primals, rows):
                flat[dt][row:row + n, 0] = p.reshape(-1) if isinstance(p, np.ndarray) else p


def _writer(primals, rows, flat, pairs, duals, tangents):
    """A straight-line function writing primals (and, with ``tangents``, one tangent lane) into
    the flat buffers, generated once per layout: a loop with type tests cost more than the writes.

    ``fill(primals)`` first restores the seeds; ``write(primals, tangents)`` writes lane 1."""
    names = {"duals": duals, "copyto": np.copyto}
    lines = [f"def writer(P{', T' if tangents else ''}):"]
    for k, (buf, seed) in enumerate(pairs):
        names[f"buf{k}"], names[f"seed{k}"] = buf, seed
        lines.append(f"    copyto(buf{k}, seed{k})")
    for k, (p, (dt, row, n)) in enumerate(zip(primals, rows)):
        names[f"F{k}"] = flat[dt]
        if isinstance(p, np.ndarray):
            whole = "" if p.ndim == 1 else ".reshape(-1)"
            lines.append(f"    F{k}[{row}:{row + n}, 0] = P[{k}]{whole}")
            if tangents:
                lines.append(f"    F{k}[{row}:{row + n}, 1] = T[{k}]{whole}")
        else:
            lines.append(f"    F{k}[{row}, 0] = P[{k}]")
            if tangents:
                lines.append(f"    F{k}[{row}, 1] = T[{k}]")
    lines.append("    return duals")
    return types.FunctionType(_compiled_writer("\n".join(lines)), names, "writer")


@functools.lru_cache(maxsize=512)
def _compiled_writer(source):
    """The code of a writer's source, compiled once: a transformation made afresh at every call
    (``duals.jacfwd(f)(x)`` in a loop) generated and compiled its writers every time (~0.1 ms
    each); only the buffers they write into, their globals, are its own."""
    namespace = {}
    exec(source, namespace)
    return namespace["writer"].__code__
