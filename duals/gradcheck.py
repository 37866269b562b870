"""gradcheck: forward mode, reverse mode and finite differences compared entry by entry.

The two exact modes must agree with each other to rounding, and both must agree with
central finite differences to the accuracy finite differences allow. On a mismatch the
error names the worst entry (output and input index), the three values there and the
tolerance, and says which of the three is the odd one out. When one-sided differences
show a kink or a jump at that entry, it says that ``f`` is not differentiable there.
"""
import numpy as np

from . import tree
from .testing import numerical_jacobian, worst_entry
from .transforms import jacfwd, jacrev

__all__ = ["gradcheck", "GradcheckError"]


class GradcheckError(AssertionError):
    """GradcheckError: the derivatives of ``f`` disagree; the message names the worst entry."""


# default (atol, rtol) against finite differences, by the precision of the inputs
_FD_TOL = {np.dtype(np.float64): (1e-6, 1e-5), np.dtype(np.float32): (2e-3, 2e-2),
           np.dtype(np.float16): (5e-2, 2e-1)}


def gradcheck(f, *args, eps=None, atol=None, rtol=None):
    """gradcheck(f, *args, eps=None, atol=None, rtol=None) -> True, or raises GradcheckError naming the worst entry.

    Compares ``jacfwd(f)``, ``jacrev(f)`` and central finite differences with respect to
    every argument. The difference step is ``eps · max(1, |x|)`` with ``eps`` the cube root
    of the input dtype's machine epsilon; ``atol``/``rtol`` bound ``|AD − FD|`` by
    ``atol + rtol·|FD|`` (defaults by dtype: 1e-6/1e-5 for float64, 2e-3/2e-2 for float32).
    The two exact modes are held to ``sqrt(machine epsilon)``. ``f`` may return an array
    or a tuple/list/dict of arrays. Integer arguments are refused: close over them.

    >>> import numpy as np
    >>> gradcheck(lambda x, y: np.sin(x) * y, np.array([0.1, 0.5]), 2.0)
    True
    """
    if not args:
        raise TypeError("gradcheck(f, *args): give at least one argument to differentiate at")
    args = tuple(_checked_input(a, i) for i, a in enumerate(args))
    fd_dtype = np.result_type(*args)
    low = max((np.dtype(a.dtype) for a in args), key=lambda d: np.finfo(d).eps)
    d_atol, d_rtol = _FD_TOL.get(low, (1e-6, 1e-5))
    atol = d_atol if atol is None else float(atol)
    rtol = d_rtol if rtol is None else float(rtol)
    ad_tol = float(np.sqrt(np.finfo(low).eps))

    value = f(*args)
    leaves, treedef = tree.flatten(value)
    for k, y in enumerate(leaves):
        if np.asarray(y).dtype.kind not in "fiu":
            raise TypeError(f"gradcheck: output {k} of f has dtype {np.asarray(y).dtype}; "
                            f"return real float arrays")
        single = treedef is None

        def fk(*a, k=k, single=single):
            out = f(*a)
            return out if single else tree.flatten(out)[0][k]

        for i in range(len(args)):
            where = f"d(output {k})/d(argument {i})" if not single else f"d f/d(argument {i})"
            _compare(fk, args, i, where, eps, atol, rtol, ad_tol, fd_dtype)
    return True


def _checked_input(a, i):
    if hasattr(a, "_trace"):
        raise TypeError(f"gradcheck: argument {i} is a traced value; call gradcheck on plain "
                        f"floats or arrays (outside jvp/grad)")
    arr = np.asarray(a)
    kind = arr.dtype.kind
    if kind in "iub":
        raise TypeError(
            f"gradcheck: argument {i} has dtype {arr.dtype}; derivatives and finite "
            f"differences need float inputs. Pass a float (2.0, not 2) or "
            f"np.asarray(x, dtype=float); to hold an integer fixed, close over it: "
            f"gradcheck(lambda x: f(x, n), x)")
    if kind != "f":
        raise TypeError(f"gradcheck: argument {i} has dtype {arr.dtype}; pass real float "
                        f"arrays (duals differentiates real-valued code only)")
    return arr[()] if arr.ndim == 0 else arr


def _compare(f, args, i, where, eps, atol, rtol, ad_tol, fd_dtype):
    fwd = np.asarray(jacfwd(f, argnums=i)(*args), dtype=np.float64)
    rev = np.asarray(jacrev(f, argnums=i)(*args), dtype=np.float64)
    step = eps if eps is not None else np.finfo(np.asarray(args[i]).dtype).eps ** (1 / 3)
    num = numerical_jacobian(f, args, i, eps=step, dtype=fd_dtype)
    if fwd.shape != num.shape or rev.shape != num.shape:
        raise GradcheckError(f"gradcheck {where}: jacfwd has shape {fwd.shape}, jacrev "
                             f"{rev.shape}, finite differences {num.shape}; a rule returned "
                             f"a wrongly shaped derivative")
    out_nd = num.ndim - np.ndim(args[i])

    for name, jac in (("jacfwd", fwd), ("jacrev", rev)):
        bad = ~np.isfinite(jac)
        if bad.any():
            # an infinite derivative is the cause; NaNs are often inf · 0 in the other lanes
            pick = np.isinf(jac) if np.isinf(jac).any() else bad
            idx = tuple(int(j) for j in np.argwhere(pick)[0])
            raise GradcheckError(
                f"gradcheck {where}: {name} is {_v(jac[idx])} at {_at(idx, out_nd)} (jacfwd "
                f"{_v(fwd[idx])}, jacrev {_v(rev[idx])}, finite differences {_v(num[idx])}): f is not "
                f"differentiable at this point (an infinite or undefined derivative, e.g. sqrt "
                f"or log at 0, or f itself is not finite); check a point inside the domain")

    gaps = _kinks(f, args, i, step, fd_dtype, atol, rtol, num)
    if gaps is not None:
        idx, left, right = gaps
        raise GradcheckError(
            f"gradcheck {where}: f is not differentiable at this point: at {_at(idx, out_nd)} "
            f"the one-sided differences are {left:.6g} (left) and {right:.6g} (right) and stay "
            f"apart as the step shrinks (a kink or jump such as abs(0), a max/min tie or a "
            f"branch); there jacfwd gives {_v(fwd[idx])}, jacrev {_v(rev[idx])}, central "
            f"differences {_v(num[idx])}. Check the derivative at a point where f is smooth")

    ad = worst_entry(rev, fwd, ad_tol, ad_tol)
    checks = [("jacfwd vs jacrev", ad, ad_tol, ad_tol)]
    checks.append(("jacfwd vs finite differences", worst_entry(fwd, num, atol, rtol), atol, rtol))
    checks.append(("jacrev vs finite differences", worst_entry(rev, num, atol, rtol), atol, rtol))
    failed = [c for c in checks if c[1] is not None]
    if not failed:
        return
    label, w, a_tol, r_tol = max(failed, key=lambda c: c[1]["excess"])
    idx = w["index"]
    values = (f"jacfwd {_v(fwd[idx])}, jacrev {_v(rev[idx])}, finite differences {_v(num[idx])}")
    tolerance = (f"|diff| {w['err']:.3g} > tolerance {w['bound']:.3g} "
                 f"(atol {a_tol:g} + rtol {r_tol:g}·|reference|)")
    count = f"{w['bad']} of {w['size']} entries out of tolerance"
    if ad is not None:
        fwd_ok = worst_entry(fwd, num, atol, rtol) is None
        rev_ok = worst_entry(rev, num, atol, rtol) is None
        culprit = ("; jacfwd matches finite differences, so a VJP rule is wrong" if fwd_ok and not rev_ok
                   else "; jacrev matches finite differences, so a JVP rule is wrong" if rev_ok and not fwd_ok
                   else "")
        hint = ("jacfwd and jacrev disagree, so a JVP rule and its VJP rule are not transposes "
                "of each other (or one mishandles the leading lane axes)" + culprit)
    else:
        hint = ("jacfwd and jacrev agree with each other but not with finite differences: a "
                "derivative rule is probably wrong (or pass a larger atol/rtol if f is badly "
                "conditioned here)")
    raise GradcheckError(f"gradcheck {where}: {label} mismatch at {_at(idx, out_nd)}: {values}; "
                         f"{tolerance}; {count}. {hint}")


def _v(x):
    return repr(float(x))


def _at(idx, out_nd):
    return f"output index {tuple(idx[:out_nd])}, input index {tuple(idx[out_nd:])}"


def _kinks(f, args, i, eps, dtype, atol, rtol, central):
    """None, or (index, left, right) of the entry whose one-sided differences stay furthest apart.

    For smooth ``f`` the gap between the right and the left difference is ``h·|f''|`` and
    shrinks with the step ``h``; at a kink or a jump it does not.
    """
    args = [np.asarray(a, dtype=dtype) for a in args]
    x = args[i]

    def value(k, delta):
        moved = x.copy()
        moved.reshape(-1)[k] += delta
        return np.asarray(f(*(args[:i] + [moved] + args[i + 1:])), dtype=np.float64)

    center = np.asarray(f(*args), dtype=np.float64)
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
