"""The arguments of the compiled entry points: checked inputs and tangents, keyword arguments
given by position, and arrays that share memory.

>>> import numba, numpy as np
>>> positional(numba.njit(lambda x, n=3: x * n), (1.0,), {}, "grad")
(1.0, 3)
"""
import weakref

import numpy as np

from ..arguments import argnums as _argnums

from .calling import _input, _shape

_NDARRAY = np.ndarray


def _checked_pair(p, t, i):
    """A differentiable primal and its tangent, or a clear error (shapes, dtypes)."""
    p = _input(p, "jvp", f"primal {i}")
    if np.asarray(p).dtype.kind == "c":   # a complex input: complex tangents (a real one is cast)
        t = np.asarray(t)
        if t.dtype.kind not in "fiuc":
            raise TypeError(f"jvp: tangent {i} has dtype {t.dtype}; give a complex tangent")
        t = t.astype(np.asarray(p).dtype)
        t = t if t.ndim else t[()]
    elif not (type(t) is float or (type(t) is np.ndarray and t.dtype.kind == "f")):
        t = np.asarray(t)
        if t.dtype.kind == "c":
            raise TypeError(f"jvp: tangent {i} is complex but primal {i} is real ({np.asarray(p).dtype}); "
                            f"a real input moves in real directions only: give a real tangent, or "
                            f"make primal {i} complex")
        if t.dtype.kind not in "fiu":
            raise TypeError(f"jvp: tangent {i} has dtype {t.dtype}; give a float tangent")
    if _shape(t) != _shape(p):
        raise ValueError(f"jvp: tangent {i} has shape {_shape(t)} but primal {i} has shape "
                         f"{_shape(p)}; they must match")
    return p, t


def _refuse_half(x, who, what):
    if np.result_type(x) == np.float16:
        raise TypeError(f"{who}: {what} is float16, which the tangent lanes of compiled forward mode "
                        f"cannot hold (Numba has no half-precision vectors); pass x.astype(np.float32), "
                        f"or take grad/jacrev (the compiled tape takes float16) or the NumPy path")


def _inputs(f, args, argnums, who, known=None, lanes=False):
    """(args as a list with the differentiated ones checked, their indices, single?) for a call
    of ``f``; ``known`` caches the normalised argnums per argument count; ``lanes``: for compiled
    forward mode, which cannot take float16."""
    found = None if known is None else known.get(len(args))
    if found is None:
        found = _argnums(argnums, len(args), who)
        if known is not None:
            known[len(args)] = found
    nums, single = found
    check_aliases(f, args, nums, who)
    args = list(args)
    for i in nums:
        args[i] = _input(args[i], who, f"argument {i}")
        if lanes:
            _refuse_half(args[i], who, f"argument {i}")
    return args, nums, single


def positional(f, args, kwargs, who):
    """``args`` and the keyword arguments ``kwargs`` of a call of ``f`` as positional arguments
    (defaults filled in): the compiled entries take arguments by position, and their ``argnums``
    may name one given by keyword. Where each comes from is worked out once per way of calling
    (number of positional arguments and keyword names), so a call in a loop costs a tuple."""
    key = (len(args), tuple(kwargs))
    try:
        plans = _PLANS.setdefault(f, {})
    except TypeError:   # not weakly referable: no plan kept
        plans = {}
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _positional_plan(f, *key)
    if plan is False:
        return _bound(f, args, kwargs, who)
    return tuple(args[k] if kind is _POSITIONAL else kwargs[k] if kind is _KEYWORD else k
                 for kind, k in plan)


_PLANS = weakref.WeakKeyDictionary()   # function -> {(positional count, keyword names): plan}
_POSITIONAL, _KEYWORD, _DEFAULT = "positional", "keyword", "default"


def _positional_plan(f, count, names):
    """Per parameter of ``f``, (_POSITIONAL, index), (_KEYWORD, name) or (_DEFAULT, value) for a
    call with ``count`` positional arguments and keywords ``names``; False when such a call must
    be bound by :func:`inspect.Signature.bind` (``*args``, ``**kwargs``, or a call it refuses)."""
    import inspect
    parameters = list(inspect.signature(getattr(f, "py_func", f)).parameters.values())
    plan, unused = [], set(names)
    for j, p in enumerate(parameters):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return False
        if j < count and p.kind is not p.KEYWORD_ONLY:
            plan.append((_POSITIONAL, j))
        elif p.name in unused and p.kind is not p.POSITIONAL_ONLY:
            plan.append((_KEYWORD, p.name))
            unused.discard(p.name)
        elif p.default is not p.empty and j >= count:
            plan.append((_DEFAULT, p.default))
        else:
            return False
    return False if unused or count > len(parameters) else plan


def _bound(f, args, kwargs, who):
    """:func:`positional` by :func:`inspect.Signature.bind`, which names what is wrong."""
    import inspect
    signature = inspect.signature(getattr(f, "py_func", f))
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{who}: {exc} ({getattr(f, '__name__', 'f')}{signature})") from None
    bound.apply_defaults()
    out = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{who}: a Numba function takes no **{name}")
        out.extend(value if kind is inspect.Parameter.VAR_POSITIONAL else (value,))
    return tuple(out)


def check_aliases(f, args, nums, who):
    """Refuse array arguments that share memory (``f(c, c)``, or ``c`` and a view of it) when the
    function writes into one of them and one of them runs on a copy: a differentiated argument,
    or one of two distinct plain float arrays (the promoting copy gives each its own array of
    duals when the function stores derivatives into an argument).

    A write through one would then not show through the other as it does in the plain call.
    Where such arguments are found (rarely), ``f`` runs once plainly on separate copies of them:
    if it leaves them unchanged it cannot tell them apart, and the derivative is the plain call's."""
    arrays = 0
    for b in args:
        if type(b) is _NDARRAY:
            arrays += 1
    if arrays < 2:   # (the common case, first: W4's compiled jacfwd is a few microseconds a call)
        return
    shared = set()
    for i, a in enumerate(args):
        if type(a) is not _NDARRAY:
            continue
        differentiated = i in nums
        for j in range(i + 1, len(args)):
            b = args[j]
            if type(b) is not _NDARRAY:
                continue
            copied = differentiated or j in nums or (b is not a and a.dtype.kind in "fc"
                                                     and b.dtype.kind in "fc")
            if copied and (b is a or np.may_share_memory(a, b)):
                shared.update((i, j))
    if not shared:
        return
    copies = list(args)
    for k in shared:
        copies[k] = args[k].copy()
    try:
        f(*copies)
    except Exception:   # noqa: BLE001  (the derivative's own call raises it again, with its message)
        return
    written = sorted(k for k in shared if not np.array_equal(copies[k], args[k], equal_nan=True))
    if written:
        pair = sorted(shared)
        copied = ("a differentiated argument is among them" if shared & set(nums) else
                  "the arrays that receive derivatives are copies")
        raise ValueError(
            f"{who}: arguments {', '.join(map(str, pair))} share memory (the same array, or views of "
            f"one), the function writes into argument {written[0]}, and {copied}: compiled "
            f"derivatives run the function on copies, so the write would not show through the "
            f"other as in the plain call. Pass separate arrays (x.copy()) for them")


def _size(x):
    return x.size if isinstance(x, np.ndarray) else 1
