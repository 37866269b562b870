"""Derivative checks for users who write their own rules, and for the library's own tests.

:func:`check_grads` is the one checker. At first order it compares the Jacobian of each mode
with the other mode and with central finite differences and, on a mismatch, says which entry
is worst, which of the three is the odd one out, and whether ``f`` has a kink or a jump there
(``duals.gradcheck`` is this first order, the short form). Each higher order compares mode
``b`` over mode ``a`` with differences of the derivative by mode ``a``, and so on.
"""

import numpy as np

from . import second_order, transforms, tree
from .arguments import is_compiled
from .random_states import before_call, one_state

__all__ = ["check_grads", "numerical_jacobian", "assert_close", "worst_entry", "GradcheckError"]

_MODES = {"fwd": transforms.jacfwd, "rev": transforms.jacrev}
_NAMES = {"fwd": "jacfwd", "rev": "jacrev"}

# default (atol, rtol) of the first order against finite differences, by input precision
_FD_TOL = {np.dtype(np.float64): (1e-6, 1e-5), np.dtype(np.float32): (2e-3, 2e-2),
           np.dtype(np.float16): (5e-2, 2e-1)}


class GradcheckError(AssertionError):
    """GradcheckError: the derivatives of ``f`` disagree; the message names the worst entry."""


def _as_float64(x):
    return np.asarray(x, dtype=np.float64)


def numerical_jacobian(f, args, argnum, eps=None, dtype=np.float64, relative=False):
    """numerical_jacobian(f, args, argnum, eps=None, dtype=np.float64, relative=False) -> central-difference ∂f/∂args[argnum], ``out + in`` shaped.

    The step is ``eps * max(1, |x|)`` per entry (``eps * |x|`` for a nonzero entry with
    ``relative``), ``eps`` defaulting to the cube root of
    ``dtype``'s machine epsilon (the optimum for central differences). ``f`` is evaluated
    with every argument cast to ``dtype``; the difference quotient divides by the step as
    actually represented in that dtype.

    >>> round(float(numerical_jacobian(lambda x: x ** 2, (3.0,), 0)), 6)
    6.0
    """
    dtype = np.dtype(dtype)
    eps = np.finfo(dtype).eps ** (1 / 3) if eps is None else eps
    x, at = _moved(f, args, argnum, dtype)
    columns = []
    for k in range(x.size):
        size = abs(float(x.flat[k]))
        step = eps * (size if relative and size > 0.0 else max(1.0, size))
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += step
        minus.flat[k] -= step
        before_call()   # (inside check_grads: every evaluation from one realisation of any noise)
        hi = _as_float64(at(plus))
        before_call()
        lo = _as_float64(at(minus))
        columns.append((hi - lo) / (float(plus.flat[k]) - float(minus.flat[k])))
    out_shape = columns[0].shape if columns else np.shape(at(x))
    if not columns:
        return np.zeros(out_shape + x.shape)
    return np.moveaxis(np.stack(columns), 0, -1).reshape(out_shape + x.shape)


def _small_entries(x):
    """Whether ``x`` has a nonzero entry far below 1 in magnitude (where ``eps * max(1, |x|)`` is
    a coarse step)."""
    size = np.abs(np.asarray(x, dtype=np.float64))
    return bool(np.any((size > 0.0) & (size < 1e-2)))


def _moved(f, args, argnum, dtype):
    """(x, at): ``args[argnum]`` as an array of ``dtype``, and ``at(value)`` calling ``f`` with it
    replaced by ``value`` and the other arguments cast to ``dtype``; a number stays a number (a
    compiled function would type a 0-d array)."""
    given = [(lambda v: v) if isinstance(a, np.ndarray) else (lambda v: v[()]) for a in args]
    arrays = [np.asarray(a, dtype=dtype) for a in args]

    def at(value):
        return f(*(given[i](value if i == argnum else a) for i, a in enumerate(arrays)))
    return arrays[argnum], at


def worst_entry(actual, expected, atol, rtol):
    """worst_entry(actual, expected, atol, rtol) -> None if every entry is within tolerance, else a dict.

    The dict holds ``index`` (of the entry exceeding its bound ``atol + rtol·|expected|``
    by the largest factor), ``err``, ``bound``, ``excess`` (err / bound), ``bad`` (how many
    entries fail) and ``size``. NaNs match NaNs and infinities match equal infinities.

    >>> worst_entry(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-6, 1e-6)["index"]
    (1,)
    """
    actual = _as_float64(actual)
    expected = _as_float64(expected)
    both_nan = np.isnan(actual) & np.isnan(expected)
    same_inf = np.isinf(actual) & (actual == expected)
    err = np.where(both_nan | same_inf, 0.0, np.abs(actual - expected))
    bound = atol + rtol * np.abs(np.where(np.isfinite(expected), expected, 0.0))
    bad = ~(err <= bound)
    if not bad.any():
        return None
    excess = np.where(bad, np.nan_to_num(err / np.maximum(bound, 1e-300), nan=np.inf), -1.0)
    i = np.unravel_index(int(np.argmax(excess)), err.shape) if err.ndim else ()
    return {"index": tuple(int(j) for j in i), "err": float(err[i]), "bound": float(bound[i]),
            "excess": float(excess[i]), "bad": int(bad.sum()), "size": int(bad.size)}


def assert_close(actual, expected, atol, rtol, what):
    """assert_close(actual, expected, atol, rtol, what): raise AssertionError naming the worst entry."""
    actual = _as_float64(actual)
    expected = _as_float64(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: shape {actual.shape} != expected {expected.shape}")
    w = worst_entry(actual, expected, atol, rtol)
    if w is not None:
        i = w["index"]
        raise AssertionError(
            f"{what}: worst entry {i}: got {actual[i]!r}, expected {expected[i]!r} "
            f"(|diff| {w['err']:.3g} > atol {atol:g} + rtol {rtol:g}·|expected|); "
            f"{w['bad']} of {w['size']} entries out of tolerance")


def check_grads(f, args, order=2, modes=("fwd", "rev"), atol=None, rtol=None, eps=None,
                who="check_grads"):
    """check_grads(f, args, order=2, modes=("fwd", "rev")): every mode combination against finite differences.

    ``f`` returns an array or a tuple/list/dict of arrays (first order) or an array (higher
    orders); an argument may be a tuple/list/dict of arrays (its leaves are numbered as the
    arguments in the messages, in order). The difference step is ``eps · max(1, |x|)``, ``eps``
    the cube root of the input dtype's machine epsilon; first-order ``atol``/``rtol`` default by dtype (1e-6/1e-5 for
    float64, 2e-3/2e-2 for float32) and loosen by 10^1.5 per further order; the exact modes
    are held to ``sqrt(machine epsilon)`` against each other. Raises :class:`GradcheckError`
    (an ``AssertionError``) naming the modes, the argument and the worst entry; returns
    ``True`` when everything agrees. Complex arguments and outputs are checked as pairs of real
    numbers (:func:`as_real_map`): all four real partials of every complex entry. A Numba
    dispatcher is checked in compiled mode: its second order is ``duals.hessian`` against
    differences of its compiled gradient (one scalar output; compiled code goes no higher).

    >>> import numpy as np
    >>> check_grads(np.sin, (np.array([0.1, 0.7]),), order=2)
    True
    """
    if not args:
        raise TypeError(f"{who}: give at least one argument to differentiate at")
    # every call of f (each mode, each difference) starts from the random states and argument
    # arrays the first began with: a function that draws noise is checked for one realisation
    with one_state(args):
        return _check_grads(f if is_compiled(f) else _announced(f), args, order, modes, atol, rtol, eps, who)


def _announced(f):
    """``f`` announcing each call to :func:`duals.random_states.one_state` (compiled code's
    derivatives announce their own calls, and a wrapper would hide the dispatcher)."""
    def call(*args, **kwargs):
        before_call()
        return f(*args, **kwargs)
    return call


def _leaf_names(args):
    """The name of each leaf of ``args`` in ``tree.flatten``'s order: ``argument 1['zn']`` for an
    entry of a dict given as argument 1, ``argument 0`` for an array."""
    return [path for i, a in enumerate(args) for path in tree.leaf_paths(a, f"argument {i}")]


def _check_grads(f, args, order, modes, atol, rtol, eps, who, names=None):
    if any(isinstance(a, (tuple, list, dict)) for a in args):   # containers: leaf by leaf
        leaves, treedef = tree.flatten(list(args))
        return _check_grads(lambda *flat: f(*tree.unflatten(treedef, list(flat))), tuple(leaves),
                            order, modes, atol, rtol, eps, who, _leaf_names(args))
    names = names or [f"argument {i}" for i in range(len(args))]
    if _any_complex(f, args):
        f, args = as_real_map(f, args)
    for m in modes:
        if m not in _MODES:
            raise ValueError(f"{who}: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    args = tuple(_checked_input(a, names[i], who, f) for i, a in enumerate(args))
    fd_dtype = np.result_type(*args)
    low = max((np.dtype(a.dtype) for a in args), key=lambda d: np.finfo(d).eps)
    d_atol, d_rtol = _FD_TOL.get(low, (1e-6, 1e-5))
    first_atol = d_atol if atol is None else float(atol)
    first_rtol = d_rtol if rtol is None else float(rtol)
    ad_tol = float(np.sqrt(np.finfo(low).eps))
    before_call()
    leaves, treedef = tree.flatten(f(*args))
    for k, y in enumerate(leaves):
        if np.asarray(y).dtype.kind not in "fiu":
            raise TypeError(f"{who}: output {k} of f has dtype {np.asarray(y).dtype}; "
                            f"return real float arrays")
        single = treedef is None

        # f itself when it has one output: a Numba dispatcher takes the compiled modes, which a
        # wrapper would hide
        fk = f if single else (lambda *a, k=k: tree.flatten(f(*a))[0][k])

        for i in range(len(args)):
            where = f"d f/d({names[i]})" if single else f"d(output {k})/d({names[i]})"
            _first_order(fk, args, i, where, modes, eps, first_atol, first_rtol, ad_tol,
                         fd_dtype, who)
            if order > 1 and is_compiled(f):
                _compiled_second_order(f, args, i, order, single and np.ndim(y) == 0, atol, rtol, eps, who,
                                       names[i])
                continue
            for m in modes if order > 1 else ():
                _check(_MODES[m](fk, argnums=i), args, i, order - 1, modes, (m,), atol, rtol, eps, names[i])
    return True


def _compiled_second_order(f, args, i, order, scalar, atol, rtol, eps, who, name):
    """A Numba dispatcher's second order: duals.hessian (compiled, forward over reverse) against
    differences of its compiled gradient; compiled transformations do not nest further."""
    if order > 2:
        raise TypeError(f"{who}: compiled code is differentiated to second order at most "
                        f"(duals.hessian, duals.hvp): check order=2, or order={order} on the "
                        f"function's Python version (f.py_func, when its NumPy calls allow)")
    if not scalar:
        raise TypeError(f"{who}: order=2 of a Numba dispatcher checks duals.hessian, which takes a "
                        f"function with one scalar output; check order=1 here")
    # grad: compiled code with complex intermediates answers it by forward lanes, jacrev refuses
    expected = numerical_jacobian(transforms.grad(f, argnums=i), args, i, eps)
    what = f"{who}: hessian (compiled) w.r.t. {name}"
    assert_close(second_order.hessian(f, argnums=i)(*args), expected, *_order_tolerances(2, atol, rtol), what)


def _order_tolerances(level, atol, rtol):
    """(atol, rtol) of a derivative of order ``level`` against finite differences: the given
    ones, else 1e-6 and 1e-5 loosened by 10^1.5 per order above the first (finite differences
    lose about a third of the digits per order)."""
    return (atol if atol is not None else 10.0 ** (-6 + 1.5 * (level - 1)),
            rtol if rtol is not None else 10.0 ** (-5 + 1.5 * (level - 1)))


def _checked_input(a, name, who, f=None):
    if hasattr(a, "_trace"):
        raise TypeError(f"{who}: {name} is a traced value; call {who} on plain "
                        f"floats or arrays (outside jvp/grad)")
    arr = np.asarray(a)
    kind = arr.dtype.kind
    if kind in "iub":
        fixed = (f"{who}(numba.njit(lambda x: f(x, n)), x) (a compiled function takes no "
                 f"values traced in Python)" if hasattr(f, "py_func") else f"{who}(lambda x: f(x, n), x)")
        raise TypeError(
            f"{who}: {name} has dtype {arr.dtype}; {who} differentiates every argument, and "
            f"derivatives and finite differences need float inputs. An integer that counts or "
            f"indexes (steps, n) is held fixed by closing over it: {fixed}; a real number is "
            f"passed as a float (2.0, not 2, or np.asarray(x, dtype=float))")
    if kind != "f":
        raise TypeError(f"{who}: {name} has dtype {arr.dtype}; pass float or complex "
                        f"arrays")
    return arr[()] if arr.ndim == 0 else arr


def _any_complex(f, args):
    if any(np.iscomplexobj(a) and not hasattr(a, "_trace") for a in args):
        return True
    before_call()
    leaves = tree.flatten(f(*args))[0]
    return any(np.iscomplexobj(y) for y in leaves)


def as_real_map(f, args):
    """as_real_map(f, args) -> (g, real_args): ``f`` seen as a map between real arrays, each complex
    argument and output replaced by its real and imaginary parts along a new last axis.

    Derivatives of ``g`` are the real Jacobians of ``f`` (all four real partials of a complex
    entry), so ``check_grads`` checks complex code with them in every mode and order.

    >>> g, (x,) = as_real_map(lambda z: z * z, (np.array([1j]),))
    >>> x.tolist(), g(x).tolist()
    ([[0.0, 1.0]], [[-1.0, 0.0]])
    """
    from . import numpy as dnp
    complex_args = [np.iscomplexobj(a) for a in args]
    real_args = tuple(np.stack([np.real(a), np.imag(a)], axis=-1) if c else a
                      for a, c in zip(args, complex_args))

    def split(y):
        if np.iscomplexobj(y):
            return dnp.stack([dnp.real(y), dnp.imag(y)], axis=-1)
        return y

    def g(*parts):
        rebuilt = [p[..., 0] + 1j * p[..., 1] if c else p for p, c in zip(parts, complex_args)]
        leaves, treedef = tree.flatten(f(*rebuilt))
        return tree.unflatten(treedef, [split(y) for y in leaves])

    return g, real_args


# (f smooth on both sides, so no one-sided differences disagree: see _kinks for a kink of f itself)
_OR_KINK = ("or f is written through kinks that cancel at exactly this point (abs, sign, copysign, "
            "maximum, minimum or clip at its switch, where duals takes the policy's derivative: "
            "np.sign(x) * np.minimum(np.abs(x), c) has derivative 0 at x = 0, not 1; see "
            "docs/non_differentiable.md), or f is badly conditioned here (pass a larger atol/rtol)")


def _jacobians(f, args, i, modes):
    """{mode's name: its Jacobian}; compiled code with complex intermediates, which compiled
    reverse mode refuses (forward mode only), is checked by the forward modes alone."""
    jacs = {}
    for m in modes:
        try:
            jacs[_NAMES[m]] = np.asarray(_MODES[m](f, argnums=i)(*args), dtype=np.float64)
        except TypeError as error:
            from .jit.complex_rules import FORWARD_ONLY
            if m != "rev" or FORWARD_ONLY not in str(error) or len(set(modes)) == 1:
                raise
    return jacs


def _first_order(f, args, i, where, modes, eps, atol, rtol, ad_tol, fd_dtype, who):
    """Each mode's Jacobian against the other mode and central differences, with a diagnosis."""
    jacs = _jacobians(f, args, i, modes)
    step = eps if eps is not None else np.finfo(np.asarray(args[i]).dtype).eps ** (1 / 3)
    num = numerical_jacobian(f, args, i, eps=step, dtype=fd_dtype)
    if any(j.shape != num.shape for j in jacs.values()):
        shapes = ", ".join(f"{name} has shape {j.shape}" for name, j in jacs.items())
        raise GradcheckError(f"{who} {where}: {shapes}, finite differences {num.shape}; a rule "
                             f"returned a wrongly shaped derivative")
    out_nd = num.ndim - np.ndim(args[i])

    def values(idx):
        return ", ".join([f"{name} {_v(j[idx])}" for name, j in jacs.items()]
                         + [f"finite differences {_v(num[idx])}"])

    for name, jac in jacs.items():
        bad = ~np.isfinite(jac)
        if bad.any():
            # an infinite derivative is the cause; NaNs are often inf · 0 in the other lanes
            pick = np.isinf(jac) if np.isinf(jac).any() else bad
            idx = tuple(int(j) for j in np.argwhere(pick)[0])
            raise GradcheckError(
                f"{who} {where}: {name} is {_v(jac[idx])} at {_at(idx, out_nd)} ({values(idx)}): "
                f"f is not differentiable at this point (an infinite or undefined derivative, "
                f"e.g. sqrt or log at 0, or f itself is not finite); check a point inside the domain")

    gaps = _kinks(f, args, i, step, fd_dtype, atol, rtol, num)
    if gaps is not None:
        idx, left, right = gaps
        raise GradcheckError(
            f"{who} {where}: f is not differentiable at this point: at {_at(idx, out_nd)} "
            f"the one-sided differences are {left:.6g} (left) and {right:.6g} (right) and stay "
            f"apart as the step shrinks (a kink or jump such as abs(0), a max/min tie or a "
            f"branch); there {values(idx).replace('finite', 'central finite')}. Check the "
            f"derivative at a point where f is smooth")

    fd_gaps = {name: worst_entry(j, num, atol, rtol) for name, j in jacs.items()}
    if eps is None and any(fd_gaps.values()) and _small_entries(args[i]):
        # the step eps·max(1, |x|) is large against an entry far below 1 (a capacitance of 2e-5
        # beside resistances of 50): differences again with steps relative to those entries
        num = numerical_jacobian(f, args, i, eps=step, dtype=fd_dtype, relative=True)
        fd_gaps = {name: worst_entry(j, num, atol, rtol) for name, j in jacs.items()}
    checks = [(f"{name} vs finite differences", w, atol, rtol) for name, w in fd_gaps.items()]
    ad = None
    if len(jacs) == 2:
        ad = worst_entry(jacs["jacrev"], jacs["jacfwd"], ad_tol, ad_tol)
        checks.insert(0, ("jacfwd vs jacrev", ad, ad_tol, ad_tol))
    failed = [c for c in checks if c[1] is not None]
    if not failed:
        return
    label, w, a_tol, r_tol = max(failed, key=lambda c: c[1]["excess"])
    idx = w["index"]
    tolerance = (f"|diff| {w['err']:.3g} > tolerance {w['bound']:.3g} "
                 f"(atol {a_tol:g} + rtol {r_tol:g}·|reference|)")
    count = f"{w['bad']} of {w['size']} entries out of tolerance"
    if ad is not None:
        fwd_ok, rev_ok = fd_gaps["jacfwd"] is None, fd_gaps["jacrev"] is None
        culprit = ("; jacfwd matches finite differences, so a VJP rule is wrong" if fwd_ok and not rev_ok
                   else "; jacrev matches finite differences, so a JVP rule is wrong" if rev_ok and not fwd_ok
                   else "")
        hint = ("jacfwd and jacrev disagree, so a JVP rule and its VJP rule are not transposes "
                "of each other (or one mishandles the leading lane axes)" + culprit)
    elif len(jacs) == 2:
        hint = ("jacfwd and jacrev agree with each other but not with finite differences: a "
                "derivative rule is wrong, " + _OR_KINK)
    else:
        hint = "the derivative disagrees with finite differences: a derivative rule is wrong, " + _OR_KINK
    raise GradcheckError(f"{who} {where}: {label} mismatch at {_at(idx, out_nd)}: {values(idx)}; "
                         f"{tolerance}; {count}. {hint}")


def _check(f, args, argnum, order, modes, path, atol, rtol, eps, name):
    if order == 0:
        return
    tol_a, tol_r = _order_tolerances(len(path) + 1, atol, rtol)
    expected = numerical_jacobian(f, args, argnum, eps)
    for m in modes:
        jac = _MODES[m](f, argnums=argnum)
        what = f"check_grads: {' over '.join(reversed(path + (m,)))} derivative w.r.t. {name}"
        assert_close(jac(*args), expected, tol_a, tol_r, what)
        _check(jac, args, argnum, order - 1, modes, path + (m,), atol, rtol, eps, name)


def _v(x):
    return repr(float(x))


def _at(idx, out_nd):
    return f"output index {tuple(idx[:out_nd])}, input index {tuple(idx[out_nd:])}"


def _kinks(f, args, i, eps, dtype, atol, rtol, central):
    """None, or (index, left, right) of the entry whose one-sided differences stay furthest apart.

    For smooth ``f`` the gap between the right and the left difference is ``h·|f''|`` and
    shrinks with the step ``h``; at a kink or a jump it does not.
    """
    x, at = _moved(f, args, i, dtype)

    def value(k, delta):
        moved = x.copy()
        moved.reshape(-1)[k] += delta
        before_call()
        return np.asarray(at(moved), dtype=np.float64)

    before_call()
    center = np.asarray(at(x), dtype=np.float64)
    tiny = np.finfo(dtype).eps
    worst = None
    for k in range(x.size):
        h = eps * max(1.0, abs(float(x.reshape(-1)[k])))
        sides = []
        for step in (h, h / 8):
            right = (value(k, step) - center) / step
            left = (center - value(k, -step)) / step
            sides.append((left, right, np.abs(right - left)))
        slope = np.abs(np.take(central.reshape(center.shape + (-1,)), k, axis=-1))
        # tolerance of the comparison, plus the rounding noise of the smaller step
        scale = atol + rtol * slope + 100 * tiny * (np.abs(center) + 1.0) / (h / 8)
        kink = (sides[0][2] > scale) & (sides[1][2] > 0.5 * sides[0][2])
        if kink.any():
            ratio = np.where(kink, sides[1][2] / scale, -1.0)
            j = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.ndim else ()
            if worst is None or ratio[j] > worst[0]:
                in_idx = np.unravel_index(k, x.shape) if x.ndim else ()
                idx = tuple(int(a) for a in j) + tuple(int(a) for a in in_idx)
                worst = (ratio[j], idx, float(sides[1][0][j]), float(sides[1][1][j]))
    return None if worst is None else worst[1:]
