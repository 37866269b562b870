"""Derivative checks for users who write their own rules, and for the library's own tests.

:func:`check_grads` compares every combination of modes up to ``order`` with central
finite differences: the first derivative by each mode against differences of ``f``, the
second derivative by mode ``b`` over mode ``a`` against differences of the first
derivative by mode ``a``, and so on.
"""

import numpy as np

from . import transforms

__all__ = ["check_grads", "numerical_jacobian", "assert_close", "worst_entry"]

_MODES = {"fwd": transforms.jacfwd, "rev": transforms.jacrev}


def _as_float64(x):
    return np.asarray(x, dtype=np.float64)


def numerical_jacobian(f, args, argnum, eps=None, dtype=np.float64):
    """numerical_jacobian(f, args, argnum, eps=None, dtype=np.float64) -> central-difference ∂f/∂args[argnum], ``out + in`` shaped.

    The step is ``eps * max(1, |x|)`` per entry, ``eps`` defaulting to the cube root of
    ``dtype``'s machine epsilon (the optimum for central differences). ``f`` is evaluated
    with every argument cast to ``dtype``; the difference quotient divides by the step as
    actually represented in that dtype.

    >>> round(float(numerical_jacobian(lambda x: x ** 2, (3.0,), 0)), 6)
    6.0
    """
    dtype = np.dtype(dtype)
    eps = np.finfo(dtype).eps ** (1 / 3) if eps is None else eps
    args = [np.asarray(a, dtype=dtype) for a in args]
    x = args[argnum]
    columns = []
    for k in range(x.size):
        step = eps * max(1.0, abs(float(x.flat[k])))
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += step
        minus.flat[k] -= step
        hi = _as_float64(f(*(args[:argnum] + [plus] + args[argnum + 1:])))
        lo = _as_float64(f(*(args[:argnum] + [minus] + args[argnum + 1:])))
        columns.append((hi - lo) / (float(plus.flat[k]) - float(minus.flat[k])))
    out_shape = columns[0].shape if columns else np.shape(f(*args))
    if not columns:
        return np.zeros(out_shape + x.shape)
    return np.moveaxis(np.stack(columns), 0, -1).reshape(out_shape + x.shape)


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


def check_grads(f, args, order=2, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """check_grads(f, args, order=2, modes=("fwd", "rev")): every mode combination against finite differences.

    Raises ``AssertionError`` naming the modes, the argument and the worst entry; returns
    ``True`` when everything agrees.

    >>> import numpy as np
    >>> check_grads(np.sin, (np.array([0.1, 0.7]),), order=2)
    True
    """
    args = tuple(_as_float64(a) for a in args)
    for m in modes:
        if m not in _MODES:
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    for argnum in range(len(args)):
        _check(f, args, argnum, order, modes, (), atol, rtol, eps)
    return True


def _check(f, args, argnum, order, modes, path, atol, rtol, eps):
    if order == 0:
        return
    # finite differences lose about a third of the digits per order
    level = len(path) + 1
    tol_a = atol if atol is not None else 10.0 ** (-6 + 1.5 * (level - 1))
    tol_r = rtol if rtol is not None else 10.0 ** (-5 + 1.5 * (level - 1))
    expected = numerical_jacobian(f, args, argnum, eps)
    for m in modes:
        jac = _MODES[m](f, argnums=argnum)
        what = f"check_grads: {' over '.join(reversed(path + (m,)))} derivative w.r.t. argument {argnum}"
        assert_close(jac(*args), expected, tol_a, tol_r, what)
        _check(jac, args, argnum, order - 1, modes, path + (m,), atol, rtol, eps)
