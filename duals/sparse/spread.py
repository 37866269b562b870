"""``workers=`` for sparse Jacobians and Hessians: the compressed lanes, in the serial chunks, on workers.

:mod:`duals.sparse.compressed` asks a *push* for ``seeds @ Jᵀ`` (one seed per colour, the check
lane included), and again for the colours whose lanes hold an inf or a NaN. The serial push
objects cut the seeds into chunks (their ``bounds``) and evaluate one chunk at a time.
:class:`SpreadLanes` is a push whose chunks are tasks: each task builds the serial object again
where it runs (a reverse-mode one then records ``f`` once per task) and evaluates its chunks by
the serial object's own method, so the lanes are the serial ones bit for bit. Detecting the
pattern and colouring it stay in the caller.
"""
import numpy as np

from ..random_states import each_from_one_state, untouched_call
from ..transforms import grad
from ..workers import BLOCKS_PER_WORKER, check_untraced

__all__ = ["SpreadLanes", "forward", "reverse", "compiled_reverse", "compiled_hessian", "GradientOf",
           "chunk_lanes_task"]


class SpreadLanes:
    """SpreadLanes(pool, make, spec, method, local, ...): a push whose chunks run on ``pool``.

    ``make(*spec)`` builds the serial push object in a task, ``method`` names its evaluation of
    one chunk; ``local.bounds(k, n)`` gives the serial chunks of ``k`` seeds (``local.rows`` is kept
    current, as the serial object's is). ``value``, ``rows`` and ``aux`` are the first chunk's, as
    the serial object keeps them; ``value`` may be given (reverse mode: a plain evaluation).
    """

    def __init__(self, pool, make, spec, method, local, per_worker=BLOCKS_PER_WORKER, value=None):
        self.pool, self.make, self.spec, self.method = pool, make, spec, method
        self.local, self.per_worker = local, per_worker
        self.value, self.aux = value, None
        self.rows = None if value is None else int(np.size(value))

    def __call__(self, seeds):
        k, n = seeds.shape
        bounds = self.local.bounds(k, n)
        results = self.pool.run(chunk_lanes_task, (self.make, self.spec, self.method),
                                [seeds[a:b] for a, b in bounds], per_worker=self.per_worker,
                                describe=lambda block: f"{sum(len(c) for c in block)} lanes")
        lanes, value, aux = results[0]
        if self.rows is None and value is not None:
            self.value, self.rows = value, int(np.size(value))
            self.local.rows = self.rows
        if self.aux is None:
            self.aux = aux
        return np.concatenate([r[0] for r in results], axis=0)


def chunk_lanes_task(make, spec, method, chunks):
    """A worker's task: the serial push object built here, its ``method`` on each chunk ->
    [(lanes, its value, its aux)] (value and aux for the first chunk only)."""
    push = make(*spec)
    evaluate = getattr(push, method)

    def one(numbered):
        number, chunk = numbered
        lanes = evaluate(chunk)
        first = number == 0
        return (lanes, getattr(push, "value", None) if first else None,
                getattr(push, "aux", None) if first else None)
    return each_from_one_state(one, enumerate(chunks), spec)


def forward(pool, make, spec, local, kwargs=None):
    """Forward lanes (``make`` is ``_Forward`` or ``_CompiledForward``, built from ``spec``:
    ``(f, args, ...)``, whose ``_push`` evaluates a chunk)."""
    check_untraced(spec[1], kwargs, local.who)
    return SpreadLanes(pool, make, spec, "_push", local)


class _ReverseChunks:
    """The serial chunking of reverse-mode cotangents, without a recording here."""

    def __init__(self, chunk_size, n, who):
        self.chunk_size, self.n, self.who, self.rows = chunk_size, n, who, None

    def bounds(self, k, m):
        from .api import reverse_bounds
        return reverse_bounds(self.chunk_size, k, m, self.n, self.who)


class _EachSeed:
    """Compiled reverse mode sweeps every cotangent on its own: any cut gives the same bits."""

    rows = None

    @staticmethod
    def bounds(k, m):
        return [(j, j + 1) for j in range(k)]


def _plain_value(f, args, kwargs, has_aux, who):
    from ..arguments import split_aux
    y = untouched_call(f, args, kwargs)   # (the tasks start from the arguments as given)
    return np.asarray(split_aux(y, who)[0] if has_aux else y)


def reverse(pool, make, f, args, argnum, kwargs, has_aux, chunk_size, who):
    """Reverse mode of Python code (``make`` is ``_Reverse``): each task records ``f`` once and
    pulls its chunks; one plain evaluation here tells the output's size."""
    check_untraced(args, kwargs, who)
    value = _plain_value(f, args, kwargs, has_aux, who)
    local = _ReverseChunks(chunk_size, int(np.size(args[argnum])), who)
    return SpreadLanes(pool, make, (f, args, argnum, kwargs, has_aux, chunk_size, who), "_pull",
                       local, per_worker=1, value=value)


def compiled_reverse(pool, make, f, args, argnum, has_aux, who):
    """Reverse mode of a dispatcher (``make`` is ``_CompiledReverse``): one recording per task."""
    value = _plain_value(f, args, {}, has_aux, who)
    return SpreadLanes(pool, make, (f, args, argnum, has_aux, who), "__call__", _EachSeed(),
                       per_worker=1, value=value)


class _HessianLanes:
    """``lanes(block)``: ``block @ H`` of a dispatcher, by ``compiled.hessian_lanes``."""

    def __init__(self, f, args, argnum, who):
        self.f, self.args, self.argnum, self.who = f, args, argnum, who

    def lanes(self, block):
        from .compiled import hessian_lanes
        return hessian_lanes(self.f, self.args, self.argnum, self.who, block)


class _FixedChunks:
    """Chunks that do not depend on the output (``bounds(k, n)`` given)."""

    def __init__(self, bounds):
        self.bounds, self.rows = bounds, None


def compiled_hessian(pool, f, args, argnum, who, bounds):
    """The Hessian lanes of a dispatcher, in the chunks ``bounds(k)``: one recording over duals each."""
    return SpreadLanes(pool, _HessianLanes, (f, args, argnum, who), "lanes",
                       _FixedChunks(lambda k, n: bounds(k)))


class GradientOf:
    """``grad(function, argnums=argnum)`` as an object that ``workers=`` can pickle."""

    def __init__(self, function, argnum):
        self.function, self.argnum = function, argnum

    def __call__(self, *args, **kwargs):
        return grad(self.function, argnums=self.argnum)(*args, **kwargs)
