"""Sparse Jacobians and Hessians: ``duals.jacfwd/jacrev/hessian(f, sparsity=...)`` and ``duals.sparsity``.

``sparsity="auto"`` detects the pattern at the first call for each layout of the arguments
(shapes and dtypes, and the values of the arguments that are not differentiated) and reuses it
with its colouring. A pattern decided by values at its point (``depends_on_values``) is detected
again at every call; while the new pattern lies within the known one the colouring is reused,
otherwise the union of the two is coloured again, so the result always covers the point.
A pattern given by the user is checked at every call with one extra lane.
"""
import collections
import hashlib

import numpy as np

from .. import tree
from ..arguments import Containers, argnums as _argnums, as_input, chunk_lanes, is_compiled, split_aux
from ..core import Tracer, new_level
from ..dependencies import refuse_containers
from ..float_warnings import call_at_user_line
from ..random_states import before_call, one_state
from ..forward import Dual, JVPTrace
from ..reverse import ReverseTrace, Var, backward
from . import compressed, spread
from .patterns import Sparsity, as_sparsity, from_index_sets

__all__ = ["sparsity", "sparse_jacobian", "sparse_hessian"]

CACHED_LAYOUTS = 16   # "auto" keeps the patterns of this many argument layouts per function


def _resolve_workers(workers, who):
    if workers is None:
        return None
    from ..workers import resolve
    return resolve(workers, who)


def _single_argnum(argnums, who):
    if not isinstance(argnums, (int, np.integer)) or isinstance(argnums, bool):
        raise TypeError(f"{who}(sparsity=...): differentiate one argument (argnums an int, got "
                        f"{argnums!r}); concatenate several inputs into one array")
    return int(argnums)


def _input(args, argnum, who):
    argnum = _argnums(argnum, len(args), who)[0][0]
    if Containers.present(args, (argnum,)):
        raise TypeError(f"{who}(sparsity=...): argument {argnum} is a container; a sparse Jacobian "
                        f"has one input array (its columns): concatenate the leaves")
    args = list(args)
    args[argnum] = as_input(args[argnum], who, f"argument {argnum}")
    return args, argnum


def _output(y, who):
    refuse_containers(y, f"{who}(sparsity=...)")
    if not isinstance(y, (Tracer, np.ndarray, float, int, np.number)):
        raise TypeError(f"{who}: the function returned a {type(y).__name__}; return an array")


def _plain_lanes(t, who):
    if isinstance(t, Tracer):
        raise TypeError(f"{who}(sparsity=...) inside another transformation: a scipy.sparse matrix "
                        f"cannot carry derivatives; use the dense form (no sparsity=) there")
    return np.asarray(t)

# ---------------------------------------------------------------- the passes


class _Forward:
    """``f`` pushed along given lanes; the first push keeps the value (and aux)."""

    def __init__(self, f, args, argnum, kwargs, has_aux, chunk_size, who):
        self.f, self.args, self.argnum, self.kwargs = f, args, argnum, kwargs
        self.has_aux, self.chunk_size, self.who = has_aux, chunk_size, who
        self.value = self.aux = None
        self.rows = None

    def __call__(self, seeds):
        x = self.args[self.argnum]
        parts = [self._push(seeds[a:b]) for a, b in self.bounds(*seeds.shape)]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.rows or 0), x.dtype)

    def bounds(self, k, n):
        """The chunks ``(start, stop)`` in which ``k`` seeds of ``n`` entries are pushed."""
        chunk = chunk_lanes(self.chunk_size, k, self.who, size=max(n, self.rows or 1))
        return [(start, min(start + chunk, k)) for start in range(0, k, chunk)]

    def _push(self, seeds):
        k = seeds.shape[0]
        x = self.args[self.argnum]
        trace = JVPTrace(new_level(), lanes=k)
        call = list(self.args)
        call[self.argnum] = Dual._new(x, seeds.reshape((k,) + np.shape(x)), trace)
        before_call()
        y = call_at_user_line(self.f, *call, **self.kwargs)
        if self.has_aux:
            y, aux = split_aux(y, self.who)
            if self.value is None:
                self.aux = _strip(aux, trace)
        _output(y, self.who)
        ours = type(y) is Dual and y._trace is trace
        value = y.primal if ours else y
        if self.value is None:
            self.value = value
            self.rows = int(np.size(value))
        if not ours:
            return np.zeros((k, self.rows), dtype=seeds.dtype)
        return _plain_lanes(y._tangent, self.who).reshape(k, self.rows)


def _strip(aux, trace):
    leaves, treedef = tree.flatten(aux)
    return tree.unflatten(treedef, [a.primal if type(a) is Dual and a._trace is trace else a for a in leaves])


class _Reverse:
    """``f`` recorded once; ``pull(seeds)`` pulls several cotangents back together."""

    def __init__(self, f, args, argnum, kwargs, has_aux, chunk_size, who):
        trace = ReverseTrace(new_level())
        x = args[argnum]
        self.leaf = Var._leaf(x, trace)
        call = list(args)
        call[argnum] = self.leaf
        before_call()
        y = call_at_user_line(f, *call, **kwargs)
        self.aux = None
        if has_aux:
            y, aux = split_aux(y, who)
            leaves, treedef = tree.flatten(aux)
            self.aux = tree.unflatten(treedef, [a._value if type(a) is Var and a._trace is trace else a
                                                for a in leaves])
        _output(y, who)
        self.traced = type(y) is Var and y._trace is trace
        self.y = y
        self.value = y._value if self.traced else y
        self.n, self.chunk_size, self.who = int(np.size(x)), chunk_size, who

    def __call__(self, seeds):
        k, m = seeds.shape
        if not self.traced:
            return np.zeros((k, self.n), dtype=seeds.dtype)
        return np.concatenate([self._pull(seeds[a:b]) for a, b in self.bounds(k, m)], axis=0)

    def bounds(self, k, m):
        """The chunks ``(start, stop)`` in which ``k`` cotangents of ``m`` entries are pulled."""
        return reverse_bounds(self.chunk_size, k, m, self.n, self.who)

    def _pull(self, part):
        if not self.traced:
            return np.zeros((part.shape[0], self.n), dtype=part.dtype)
        grads = backward([(self.y, part.reshape((part.shape[0],) + np.shape(self.value)))],
                         retain_graph=True)
        g = grads.get(id(self.leaf))
        return (np.zeros((part.shape[0], self.n), part.dtype) if g is None
                else _plain_lanes(g, self.who).reshape(part.shape[0], self.n))


def reverse_bounds(chunk_size, k, m, n, who):
    """The chunks ``(start, stop)`` of ``k`` cotangents that reverse mode pulls back together."""
    chunk = chunk_lanes(chunk_size, k, who, size=max(m, n))
    return [(start, min(start + chunk, k)) for start in range(0, k, chunk)]

# ---------------------------------------------------------------- detection and the "auto" cache


def _jacobian_pattern(f, args, argnum, kwargs, has_aux, order):
    from ..dependencies import detect
    target = (lambda *a, **kw: split_aux(f(*a, **kw), "sparsity")[0]) if has_aux else f
    sets, by_value = detect(target, args, argnum, kwargs)
    return from_index_sets(sets, int(np.size(args[argnum])), "jacobian", order, by_value)


def _hessian_pattern(f, args, argnum, kwargs, order):
    from ..dependencies import detect
    from ..transforms import grad
    sets, by_value = detect(grad(f, argnums=argnum), args, argnum, kwargs)
    return from_index_sets(sets, int(np.size(args[argnum])), "hessian", order, by_value)


RAW_BYTES = 1 << 20   # constant arrays up to this size are compared by content before being hashed
_RAW = object()       # marks an array's content in a raw key (see _Patterns._key)


def _fingerprint(value, keep, raw=False):
    """A hashable summary of an argument that is held constant: its content for arrays and
    numbers; for other objects their identity (``keep`` holds them so the identity stays theirs).
    With ``raw``, an array of at most ``RAW_BYTES`` gives its bytes instead of their digest
    (:func:`_digested` turns such a summary into the plain one)."""
    if isinstance(value, np.ndarray):
        content = np.ascontiguousarray(value).view(np.uint8)
        if raw and content.nbytes <= RAW_BYTES:
            return (_RAW, value.shape, value.dtype.str, content.tobytes())
        return ("array", value.shape, value.dtype.str, _digest(content))
    if value is None or isinstance(value, (bool, int, float, complex, str, np.number)):
        return ("value", type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_fingerprint(v, keep, raw) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, _fingerprint(v, keep, raw)) for k, v in sorted(value.items(), key=repr))
    keep.append(value)
    return ("object", id(value))


def _digest(content):
    return hashlib.blake2b(content, digest_size=16).digest()


def _digested(summary):
    """The plain fingerprint of a raw one: each array's bytes replaced by their digest."""
    if type(summary) is not tuple:
        return summary
    if summary and summary[0] is _RAW:
        return ("array", summary[1], summary[2], _digest(summary[3]))
    return tuple(_digested(part) for part in summary)


class _Patterns:
    """The patterns of ``sparsity="auto"``, one per layout of the arguments (see the module doc).

    Calling it gives ``(Sparsity, whether it is exact at this point)``. A ``trusted`` detection
    says when it read a value; an untrusted one (compiled code) cannot, so a pattern it reuses
    is not exact (the caller checks it, and calls :meth:`refresh` where the check fails).
    """

    def __init__(self, detect, trusted=True):
        self.detect = detect
        self.trusted = trusted
        self.known = collections.OrderedDict()
        self.last = None   # (raw key, key, the objects it names) of the last call

    def _key(self, args, argnum, kwargs, keep):
        """The layout of the arguments; constants that are those of the last call, byte for byte,
        are not hashed again (an ODE solver calls with the same constants every time)."""
        x = args[argnum]
        raw = (argnum, np.shape(x), np.result_type(x).str,
               tuple(_fingerprint(a, keep, raw=True) for i, a in enumerate(args) if i != argnum),
               _fingerprint(dict(kwargs), keep, raw=True))
        last = self.last
        if last is not None and last[0] == raw:
            return last[1]
        key = _digested(raw)
        self.last = (raw, key, list(keep))
        return key

    def __call__(self, args, argnum, kwargs):
        keep = []
        key = self._key(args, argnum, kwargs, keep)
        known = self.known.get(key)
        if known is not None and not known[0].depends_on_values:
            self.known.move_to_end(key)
            return known[0], self.trusted
        return self._detect(key, known, keep, args, argnum, kwargs), True

    def refresh(self, args, argnum, kwargs):
        """Detect again at this point; the known pattern grows to hold the new one."""
        keep = []
        key = self._key(args, argnum, kwargs, keep)
        return self._detect(key, self.known.get(key), keep, args, argnum, kwargs)

    def _detect(self, key, known, keep, args, argnum, kwargs):
        fresh = self.detect(args, argnum, kwargs)
        if known is not None:
            if known[0].contains(fresh):
                return known[0]
            fresh = known[0] | fresh
        self.known[key] = (fresh, keep)
        while len(self.known) > CACHED_LAYOUTS:
            self.known.popitem(last=False)
        return fresh


def _patterns(sparsity, kind, who, detect, trusted=True):
    """A function (args, argnum, kwargs) -> (Sparsity, whether exact at this point): the "auto"
    cache over ``detect(args, argnum, kwargs)``, or the user's pattern, validated."""
    if isinstance(sparsity, str) and sparsity == "auto":
        return _Patterns(detect, trusted)
    if isinstance(sparsity, Sparsity):
        as_sparsity(sparsity, kind, sparsity.shape[1], who)   # the kind, at once
    return lambda args, argnum, kwargs: (as_sparsity(sparsity, kind, int(np.size(args[argnum])), who), False)


def _explain(f, args, argnum, kwargs, S, kind, has_aux=False):
    """Name entries the user's pattern lacks, from a detection at this point when one is possible."""
    advice = ("pass sparsity='auto' (detected at every new layout), or a pattern that holds every "
              "entry that can be non-zero")

    def explain(bad):
        try:
            if is_compiled(f):
                from .compiled import compiled_pattern
                here = compiled_pattern(f, args, argnum, kind == "hessian", S.order)
            else:
                here = (_hessian_pattern(f, args, argnum, kwargs, S.order) if kind == "hessian"
                        else _jacobian_pattern(f, args, argnum, kwargs, has_aux, S.order))
        except NotImplementedError:   # detection cannot run this code: 'auto' is no way out
            return ("pass a pattern that holds every entry that can be non-zero (sparsity "
                    "detection cannot run this function, so sparsity='auto' cannot either)")
        except Exception:   # noqa: BLE001 - the explanation must not hide the error it explains
            return advice
        if here.shape != S.shape:
            return advice
        lacking = (here.pattern > S.pattern).tocoo()
        pairs = list(zip(lacking.row.tolist(), lacking.col.tolist()))[:6]
        if not pairs:   # (no entry lacking: the lanes disagree where a derivative is inf or NaN)
            return ("the pattern detected at this point lacks nothing, so the compressed lanes and "
                    "the check disagree in values, where a derivative is not finite at this point "
                    "(inf or NaN); compute the dense matrix there (no sparsity=)")
        return (f"the pattern detected at this point has entries yours lacks, e.g. {pairs}; "
                + advice)
    return explain


def _checker(f, args, argnum, kwargs, S, kind, who, has_aux, lines):
    return compressed.Check(who, _explain(f, args, argnum, kwargs, S, kind, has_aux), lines)

# ---------------------------------------------------------------- the transformations


def sparse_jacobian(f, argnums=0, has_aux=False, chunk_size=None, sparsity="auto", mode="fwd",
                    workers=None):
    """The function behind ``duals.jacfwd/jacrev(f, sparsity=...)``: returns ``scipy.sparse.csr_array``
    of shape ``(out.size, in.size)`` (with ``has_aux``, ``(J, aux)``). ``workers=`` runs the
    chunks of compressed lanes elsewhere (:mod:`duals.sparse.spread`)."""
    who = "jacfwd" if mode == "fwd" else "jacrev"
    argnum = _single_argnum(argnums, who)
    pool = _resolve_workers(workers, who)
    patterns = _patterns(sparsity, "jacobian", who,
                         lambda a, i, kw: _jacobian_pattern(f, a, i, kw, has_aux, "smallest_last"))
    if is_compiled(f):
        from .compiled import compiled_jacobian
        return _from_one_state(compiled_jacobian(f, argnum, has_aux, chunk_size, sparsity, patterns, who, pool))

    def jacobian(*args, **kwargs):
        args, i = _input(args, argnum, who)
        S, detected = patterns(args, i, kwargs)
        dtype = np.result_type(args[i])
        check = None if detected else _checker(f, args, i, kwargs, S, "jacobian", who, has_aux,
                                               "rows" if mode == "fwd" else "columns")
        if mode == "fwd":
            push = _Forward(f, args, i, kwargs, has_aux, chunk_size, who)
            if pool is not None:
                push = spread.forward(pool, _Forward, (f, args, i, kwargs, has_aux, chunk_size, who),
                                      push, kwargs)
            J = compressed.columns(S, _matching(push, S, who), dtype, check)
        else:
            pull = (_Reverse(f, args, i, kwargs, has_aux, chunk_size, who) if pool is None else
                    spread.reverse(pool, _Reverse, f, args, i, kwargs, has_aux, chunk_size, who))
            _rows_agree(int(np.size(pull.value)), S, who)
            J = compressed.rows(S, pull, dtype, check)
            push = pull
        return (J, push.aux) if has_aux else J

    jacobian.__name__ = f"sparse_{who}"
    return _from_one_state(jacobian)


def _from_one_state(derivative):
    """``derivative`` whose every call of the user's function (detection, passes, checks) starts
    from the random states and argument arrays the first began with, as the dense passes do
    (:func:`duals.random_states.each_from_one_state`)."""
    def held(*args, **kwargs):
        with one_state(args + tuple(kwargs.values())):
            return derivative(*args, **kwargs)
    held.__name__ = derivative.__name__
    return held


def _rows_agree(m, S, who):
    if S.shape[0] != m:
        raise ValueError(f"{who}: the sparsity pattern has {S.shape[0]} rows but the function has "
                         f"{m} outputs; the pattern's shape is (output entries, input entries)")


def _matching(push, S, who):
    """``push`` that checks, on its first evaluation, that the output has the pattern's rows."""
    def checked(seeds):
        lanes = push(seeds)
        _rows_agree(push.rows, S, who)
        return lanes
    return checked


def sparse_hessian(f, argnums=0, sparsity="auto", workers=None):
    """The function behind ``duals.hessian(f, sparsity=...)``: a symmetric ``csr_array`` ``(n, n)``."""
    who = "hessian"
    argnum = _single_argnum(argnums, who)
    pool = _resolve_workers(workers, who)
    patterns = _patterns(sparsity, "hessian", who,
                         lambda a, i, kw: _hessian_pattern(f, a, i, kw, "smallest_last"))
    if is_compiled(f):
        from .compiled import compiled_hessian
        return _from_one_state(compiled_hessian(f, argnum, sparsity, patterns, who, pool))
    from ..transforms import grad
    gradient = grad(f, argnums=argnum) if pool is None else spread.GradientOf(f, argnum)

    def hessian(*args, **kwargs):
        args, i = _input(args, argnum, who)
        S, detected = patterns(args, i, kwargs)
        dtype = np.result_type(args[i])
        check = None if detected else _checker(f, args, i, kwargs, S, "hessian", who, False, "rows")
        push = _Forward(gradient, args, i, kwargs, False, None, who)
        if pool is not None:
            push = spread.forward(pool, _Forward, (gradient, args, i, kwargs, False, None, who), push,
                                  kwargs)
        return compressed.symmetric(S, push, dtype, check)

    hessian.__name__ = "sparse_hessian"
    return _from_one_state(hessian)


def sparsity(f, *args, argnums=0, hessian=False, order="smallest_last"):
    """The sparsity pattern of ``f``'s Jacobian (or Hessian) at ``args``, with its colourings."""
    who = "sparsity"
    argnum = _single_argnum(argnums, who)
    args, i = _input(args, argnum, who)
    if is_compiled(f):
        from .compiled import compiled_pattern
        return compiled_pattern(f, args, i, hessian, order)
    if hessian:
        return _hessian_pattern(f, args, i, {}, order)
    return _jacobian_pattern(f, args, i, {}, False, order)

