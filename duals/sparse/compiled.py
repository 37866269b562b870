"""Sparse Jacobians and Hessians of ``@numba.njit`` functions.

The compressed evaluations need no new type: forward mode seeds the compiled dual lanes with
the colour indicators (one specialisation per number of lanes), reverse mode pulls one
cotangent per row colour through one compiled recording, and a Hessian is one compiled
recording over duals seeded with the star colours, swept once. Detection of compiled code runs
the unchanged function on index-set lanes (:mod:`duals.sparse.index_lanes`), and of a Hessian
on index duals nested under pair sets (:mod:`duals.sparse.pair_lanes`); a reused pattern is
checked by one extra lane at every call, since compiled code cannot say that it branched on values.

Where the colours and the check lane fit in one compiled call (``COMPILED_LANES``), forward mode
makes that one call: a compiled loop writes the dual argument straight from the colours, and the
entries are read back from the dual output where it lies (:mod:`duals.sparse.gather`).
"""
import numpy as np

from ..arguments import COMPILED_LANES, split_aux
from ..random_states import each_from_one_state
from . import compressed, spread
from .api import _checker, _input, _patterns, _single_argnum

__all__ = ["compiled_jacobian", "compiled_hessian", "compiled_pattern"]


def _jit():
    from ..jit import api, reverse
    return api, reverse


def compiled_pattern(f, args, argnum, hessian, order):
    """The pattern of a dispatcher's Jacobian (or Hessian) at ``args``, from index-set lanes."""
    from .index_lanes import detect_compiled
    return detect_compiled(f, args, argnum, hessian, order)


def _auto(f, has_aux, kind):
    """The detection behind ``sparsity="auto"`` for a dispatcher."""
    from .index_lanes import detect_compiled

    def detect(args, argnum, kwargs):
        if has_aux:
            raise TypeError("sparsity='auto' with has_aux=True needs the output alone for detection "
                            "in compiled code; pass sparsity=duals.sparsity(g, ...) for a g that "
                            "returns only the output")
        return detect_compiled(f, args, argnum, kind == "hessian", "smallest_last")
    return detect


class _CompiledForward:
    """The dispatcher called on dual arrays whose lanes are given seeds."""

    def __init__(self, f, args, argnum, has_aux, who):
        self.f, self.args, self.argnum, self.has_aux, self.who = f, args, argnum, has_aux, who
        self.value = self.aux = None
        self.rows = None

    def __call__(self, seeds):
        return np.concatenate(each_from_one_state(lambda ab: self._push(seeds[ab[0]:ab[1]]),
                                                  self.bounds(*seeds.shape), self.args), axis=0)

    @staticmethod
    def bounds(k, n=None):
        """The chunks ``(start, stop)`` of ``k`` seeds: one compiled call of ``COMPILED_LANES`` lanes each."""
        return [(start, min(start + COMPILED_LANES, k)) for start in range(0, k, COMPILED_LANES)]

    def _push(self, seeds):
        api, _ = _jit()
        x = self.args[self.argnum]
        duals = api.dual_array(x, seeds.reshape((seeds.shape[0],) + np.shape(x)))
        value, _, lanes = self._lanes(duals, seeds.shape[0], seeds.dtype)
        if self.value is None:
            self.value = np.array(value, copy=True)
        return np.ascontiguousarray(lanes.T)

    def seeded(self, colors, k, direction):
        """One compiled call whose ``k`` lanes are the indicators of the colours ``colors`` (and
        whose last lane is ``direction``, when given): its lanes as :class:`compressed.Lanes`,
        read in the output itself where it is one block. One compiled loop writes the argument."""
        from ..jit.seeding import as_duals, float_dtype
        from .gather import seed
        x = np.asarray(self.args[self.argnum])
        count = k + (direction is not None)
        buf = np.empty((x.size, 1 + count), dtype=float_dtype(x))
        seed(x.reshape(-1), colors, np.zeros(0, buf.dtype) if direction is None else direction, buf)
        _, y, lanes = self._lanes(as_duals(buf, x, (count,)), count, buf.dtype)
        return _in_place(y, lanes)

    def _lanes(self, duals, count, dtype):
        """``f`` at the dual argument ``duals``: (its value, the output, its tangent lanes
        ``(rows, count)``, a view of the output where it allows one, else zeros)."""
        api, _ = _jit()
        args = list(self.args)
        args[self.argnum] = duals
        y = api.call_on_duals(self.f, args, self.who)
        if self.has_aux:
            y, aux = split_aux(y, self.who)
            if self.aux is None:
                self.aux = api._strip(aux)
        parts = api._parts(y)
        value = api._plain(y, self.who) if parts is None else parts[0]
        if self.rows is None:
            self.rows = int(np.size(value))
        if parts is None:
            return value, y, np.zeros((self.rows, count), dtype=dtype)
        return value, y, np.asarray(parts[1]).reshape(self.rows, count)


def _in_place(y, lanes):
    """The lanes ``(rows, count)`` of the dual output ``y`` as :class:`compressed.Lanes` over the
    output's own floats where ``y`` is one C-ordered block of duals (primal, then the lanes), else
    over a copy."""
    size = lanes.itemsize
    if (type(y) is np.ndarray and y.ndim and y.flags.c_contiguous and lanes.ndim == 2
            and y.dtype.names == ("primal", "tangent") and y.dtype.itemsize % size == 0
            and lanes.strides == (y.dtype.itemsize, size) and lanes.shape[0] == y.size):
        start = y.dtype.fields["tangent"][1]
        if start % size == 0:
            return compressed.Lanes(y.reshape(-1).view(lanes.dtype), start // size, y.dtype.itemsize // size,
                                    1, lanes.shape[0], lanes.shape[1])
    return compressed.Lanes.stacked(lanes.T)


class _CompiledReverse:
    """One compiled recording; each cotangent of a row colour is pulled back by one sweep."""

    def __init__(self, f, args, argnum, has_aux, who):
        _, reverse = _jit()
        recorded = reverse.compiled_vjp(f, *args, has_aux=has_aux, only=(argnum,))
        self.value, self.pullback = recorded[0], recorded[1]
        self.aux = recorded[2] if has_aux else None
        self.argnum, self.n = argnum, int(np.size(args[argnum]))

    def __call__(self, seeds):
        shape = np.shape(self.value)
        rows = [np.asarray(self.pullback(seed.reshape(shape))[self.argnum]).reshape(self.n) for seed in seeds]
        return np.array(rows, dtype=seeds.dtype).reshape(len(rows), self.n)


def compiled_jacobian(f, argnum, has_aux, chunk_size, sparsity, patterns, who, pool=None):
    """``jacfwd``/``jacrev`` of a dispatcher with ``sparsity=``: a ``csr_array`` ``(out.size, in.size)``.

    With ``"auto"`` a reused pattern is checked by one extra lane (compiled code cannot say
    whether it branched on values) and detected again at this point where the check fails.
    """
    argnum = _single_argnum(argnum, who)
    auto = isinstance(sparsity, str) and sparsity == "auto"
    if auto:
        patterns = _patterns("auto", "jacobian", who, _auto(f, has_aux, "jacobian"), trusted=False)

    def jacobian(*args):
        args, i = _input(args, argnum, who)
        S, exact = patterns(args, i, {})
        try:   # "auto" checks its first call too: the lanes of every call alike, compiled once
            return evaluate(args, i, S, exact and not auto)
        except compressed.PatternMismatch:
            if not auto:
                raise
            return evaluate(args, i, patterns.refresh(args, i, {}), False)

    def evaluate(args, i, S, exact):
        dtype = np.result_type(args[i])
        lines = "rows" if who == "jacfwd" else "columns"
        check = None if exact else _checker(f, args, i, {}, S, "jacobian", who, has_aux, lines)
        if who == "jacfwd":
            push = _CompiledForward(f, args, i, has_aux, who)
            if pool is not None:
                push = spread.forward(pool, _CompiledForward, (f, args, i, has_aux, who), push)

            def checked(seeds):
                lanes = push(seeds)
                _rows_agree(push.rows, S, who)
                return lanes

            def seeded(colors, k, direction):   # one call: the colour lanes and the check lane
                lanes = push.seeded(colors, k, direction)
                _rows_agree(push.rows, S, who)
                return lanes
            one_call = pool is None and compressed.layout(S).k + (check is not None) <= COMPILED_LANES
            J = compressed.columns(S, checked, dtype, check, run=seeded if one_call else None)
        else:
            push = (_CompiledReverse(f, args, i, has_aux, who) if pool is None else
                    spread.compiled_reverse(pool, _CompiledReverse, f, args, i, has_aux, who))
            _rows_agree(int(np.size(push.value)), S, who)
            J = compressed.rows(S, push, dtype, check)
        return (J, push.aux) if has_aux else J

    return jacobian


def _rows_agree(m, S, who):
    from .api import _rows_agree as agree
    agree(m, S, who)


def compiled_hessian(f, argnum, sparsity, patterns, who, pool=None):
    """``hessian`` of a dispatcher with ``sparsity=``: a symmetric ``csr_array`` ``(n, n)``.

    With ``"auto"`` a reused pattern is checked by one extra lane and detected again at this point
    where the check fails (as for Jacobians)."""
    argnum = _single_argnum(argnum, who)
    auto = isinstance(sparsity, str) and sparsity == "auto"
    if auto:
        patterns = _patterns("auto", "hessian", who, _auto(f, False, "hessian"), trusted=False)

    def hessian(*args):
        args, i = _input(args, argnum, who)
        S, exact = patterns(args, i, {})
        try:   # "auto" checks its first call too: the lanes of every call alike, compiled once
            return evaluate(args, i, S, exact and not auto)
        except compressed.PatternMismatch:
            if not auto:
                raise
            return evaluate(args, i, patterns.refresh(args, i, {}), False)

    def evaluate(args, i, S, detected):
        dtype = np.result_type(args[i])
        check = None if detected else _checker(f, args, i, {}, S, "hessian", who, False, "rows")

        lanes = None if pool is None else spread.compiled_hessian(pool, f, args, i, who, _CompiledForward.bounds)

        def push(seeds):   # H @ seeds.T, seeds (k, n): one recording over duals per chunk of lanes
            parts = (each_from_one_state(lambda ab: hessian_lanes(f, args, i, who, seeds[ab[0]:ab[1]]),
                                         _CompiledForward.bounds(seeds.shape[0]), args)
                     if lanes is None else [lanes(seeds)])
            return np.concatenate(parts, axis=0).astype(dtype, copy=False)
        return compressed.symmetric(S, push, dtype, check)

    return hessian


def hessian_lanes(f, args, i, who, block):
    """``block @ H`` for up to ``COMPILED_LANES`` seeds ``block`` (k, n): one compiled recording
    over duals whose lanes are the seeds, and one sweep."""
    from ..jit.reverse_second_order import _dual_sweep
    tangents = _dual_sweep(f, args, [i], who, np.ascontiguousarray(block.T, np.float64))[3]
    return np.asarray(tangents).reshape(-1, block.shape[0]).T
