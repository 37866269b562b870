"""Second-order reverse kernels (duals.ops.dual_vjp) and the formula calculus behind them
(duals.symbolic) give the numbers of the primitives' own rules.

Every formula of the table is differentiated symbolically and checked against central differences
of the formula itself; the generated kernels are checked against the rules (the fast path turned
off) for a set of entries that covers each kind of partial, with a plain, a dual and a sum's
cotangent, one and several lanes, and non-contiguous operands. The kernels compile on first use
(about half a second each on a cold cache), hence the subset.
"""
import numpy as np
import pytest

import duals
from duals import derivatives, second_order_kernels, symbolic
from duals.ops import dual_vjp
from duals.ops.elementwise import PLAIN, PRIMITIVES, _formula
from op_cases import BINARY_DOMAIN, UNARY_AWAY_FROM_ZERO, UNARY_DOMAIN

# one of each kind of partial: of x, of out, a function call, piecewise, an exp inside
KERNELS = {"square", "sqrt", "sin", "abs", "erf"}
N = 10000


def _points(name, n, seed=0):
    lo, hi = UNARY_DOMAIN[name] if name in UNARY_DOMAIN else BINARY_DOMAIN[name]
    x = np.random.default_rng(seed).uniform(lo, hi, n)
    if name in UNARY_AWAY_FROM_ZERO:
        x = np.sign(x) * np.maximum(np.abs(x), 0.3)
    return x


def _evaluate(formula, names, *values):
    return np.asarray(_formula(formula, names, PLAIN)(*values), dtype=np.float64) * np.ones_like(values[0])


def _central(fn, x, h=1e-6):
    return (fn(x + h) - fn(x - h)) / (2 * h)


@pytest.mark.parametrize("name", sorted(derivatives.UNARY))
def test_a_one_argument_curvature_is_the_derivative_of_its_partial(name):
    value, partial = derivatives.UNARY[name]
    curvature = second_order_kernels.curvature(partial)
    assert curvature is not None
    x = _points(name, 50)
    along_f = lambda x: _evaluate(partial, ("x", "out"), x, _evaluate(value, ("x",), x))  # noqa: E731
    got = _evaluate(curvature, ("x", "out"), x, _evaluate(value, ("x",), x))
    np.testing.assert_allclose(got, _central(along_f, x), rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("name", sorted(derivatives.BINARY))
def test_binary_partials_differentiate_along_either_argument(name):
    value, dx, dy = derivatives.BINARY[name]
    x, y = _points(name, 50, 1), _points(name, 50, 2)
    out = lambda x, y: _evaluate(value, ("x", "y"), x, y)  # noqa: E731
    for partial in (dx, dy):
        at = lambda x, y: _evaluate(partial, ("x", "y", "out"), x, y, out(x, y))  # noqa: E731
        for wrt, rate, moved in (("x", dx, lambda h: at(x + h, y)), ("y", dy, lambda h: at(x, y + h))):
            formula = symbolic.along(partial, wrt, {wrt: "1.0", "out": rate})
            if formula is None:   # x ** y along y: the exponent moves, which the calculus declines
                assert name == "pow" and wrt == "y" and partial == dx
                continue
            got = _evaluate(formula, ("x", "y", "out"), x, y, out(x, y))
            np.testing.assert_allclose(got, (moved(1e-6) - moved(-1e-6)) / 2e-6, rtol=2e-6, atol=2e-7)


def test_the_calculus_declines_what_it_cannot_differentiate():
    assert symbolic.derivative("x ** y", "y") is None
    made = second_order_kernels.DUAL_VJP_NAMES
    assert "pow:x" not in made and "pow:y" in made
    assert symbolic.derivative("gamma(x)", "x") is None   # not a table entry
    assert symbolic.derivative("where(x > 0.0, x * x, -x)", "x") == "where(x > 0.0, x + x, -1.0)"


def _both(fn, *args):
    """fn(*args) by the second-order kernels (checked to run) and by the rules."""
    calls, kernel = [], second_order_kernels.dual_vjp_kernel
    second_order_kernels.dual_vjp_kernel = lambda name: calls.append(name) or kernel(name)
    try:
        fused = fn(*args)
    finally:
        second_order_kernels.dual_vjp_kernel = kernel
    assert calls, "the second-order kernels did not run"
    saved = dual_vjp.FUSED_FROM
    dual_vjp.FUSED_FROM = 1 << 62
    try:
        return fused, fn(*args)
    finally:
        dual_vjp.FUSED_FROM = saved


def _close(got, expected):
    # absolute slack at the rounding of terms of order one: x * (1 / x) has a Hessian of exact
    # zeros that either path computes as a cancellation
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13 * max(1.0, np.max(np.abs(expected))))


@pytest.mark.parametrize("cotangent", ["plain", "dual", "one number", "strided"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_hvp_by_the_kernels_gives_the_rules_numbers(name, cotangent):
    f = PRIMITIVES[name]
    x = _points(name, N, 3)
    w = np.cos(np.arange(N))
    v = np.sin(np.arange(N) + 0.5)
    loss = {"plain": lambda x: np.sum(w * f(x)),
            "dual": lambda x: np.sum(x * f(x)),
            "one number": lambda x: np.sum(f(x)),
            "strided": lambda x: np.sum(w[::2] * f(x[::2]))}[cotangent]
    fused, rules = _both(lambda: duals.hvp(loss, x, v))
    _close(fused, rules)


@pytest.mark.parametrize("name", ["sin", "sqrt"])
def test_hessians_by_the_kernels_take_every_lane(name):
    f = PRIMITIVES[name]
    a = np.abs(np.cos(np.arange(3 * N).reshape(N, 3))) + 0.5   # f acts on N entries with 3 lanes
    loss = lambda p: np.sum(np.cos(np.arange(N)) * f(a @ p)) + np.sum(f(a @ p)) * p[0]  # noqa: E731
    p = np.array([0.3, 0.2, 0.4])
    fused, rules = _both(lambda: duals.hessian(loss)(p))
    _close(fused, rules)
    np.testing.assert_allclose(fused, fused.T, rtol=1e-12)
    fd = np.array([_central(lambda s: duals.grad(loss)(p + s * e), 0.0, 1e-5) for e in np.eye(3)])
    np.testing.assert_allclose(fused, fd, rtol=1e-6)


BINARY_KERNELS = {"div", "pow", "mod"}


# "x only" where x has no kernel (x ** y: the exponent of its partial moves; mod: partial 1, g
# passes on) would run the rules alone
@pytest.mark.parametrize("name,form", [(name, form) for name in sorted(BINARY_KERNELS)
                                       for form in ("both", "x only", "y only", "number", "dual cotangent")
                                       if form != "x only"
                                       or f"{name}:x" in second_order_kernels.DUAL_VJP_NAMES])
def test_hvp_of_two_argument_functions_by_the_kernels_gives_the_rules_numbers(name, form):
    f = PRIMITIVES[name]
    x, y = _points(name, N, 6), _points(name, N, 7)
    w = np.cos(np.arange(N))
    v = np.sin(np.arange(2 * N) + 0.5)
    loss = {"both": lambda p: np.sum(w * f(p[:N], p[N:])),
            "x only": lambda p: np.sum(w * f(p[:N], y)),
            "y only": lambda p: np.sum(w * f(x, p[N:])),
            "number": lambda p: np.sum(w * f(p[:N], 1.25)) + np.sum(w * f(1.25, p[N:])),
            "dual cotangent": lambda p: np.sum(p[N:] * f(p[:N], p[N:]))}[form]
    p = np.concatenate([x, y])
    fused, rules = _both(lambda: duals.hvp(loss, p, v))
    _close(fused, rules)


def test_hessians_of_two_argument_functions_take_every_lane():
    a = np.abs(np.cos(np.arange(3 * N).reshape(N, 3))) + 0.5
    b = np.abs(np.sin(np.arange(3 * N).reshape(N, 3))) + 0.5
    w = np.cos(np.arange(N))
    loss = lambda p: np.sum(w * ((a @ p) / (b @ p))) + np.sum(np.mod(a @ p, b @ p + 1.0))  # noqa: E731
    p = np.array([0.3, 0.2, 0.4])
    fused, rules = _both(lambda: duals.hessian(loss)(p))
    _close(fused, rules)
    fd = np.array([_central(lambda s: duals.grad(loss)(p + s * e), 0.0, 1e-5) for e in np.eye(3)])
    np.testing.assert_allclose(fused, fd, rtol=1e-5, atol=1e-6 * np.max(np.abs(fd)))


def test_two_dimensional_and_transposed_operands():
    x = _points("sin", 5000, 4).reshape(50, 100)
    v = np.cos(x)
    h, rules = _both(lambda: duals.hvp(lambda x: np.sum(np.sin(x.T) * x.T[::-1]), x, v))
    _close(h, rules)
    # d²/dx² of sin(x_ij) x_kl where (k, l) mirrors (i, j): the closed form from the product rule
    mirror = x[:, ::-1]
    expected = -np.sin(x) * mirror * v + np.cos(x) * v[:, ::-1] + np.cos(mirror) * v[:, ::-1]
    _close(h, expected)


def test_a_nested_trace_takes_the_rules():
    # third order: the outer jvp's duals hold tracers, so the kernels decline and the rules run
    x = _points("sin", N, 5)
    third = duals.jvp(lambda x: duals.hvp(lambda x: np.sum(np.sin(x)), x, np.ones(N)),
                      (x,), (np.ones(N),))[1]
    _close(third, -np.cos(x))
