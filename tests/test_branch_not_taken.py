"""The branch that ``where``, ``maximum``/``minimum``, ``clip``, ``max`` and indexing do not take
contributes exactly zero, in every mode and order, even where its own derivative is inf or NaN.

The singular points are found from the derivative table itself: for every entry, the points of
a small grid where its derivative is not finite. At each, the entry is evaluated inside a
construct that does not select it, and forward mode, reverse mode and every second-order
pairing must agree, with finite numbers.
"""
import itertools
import warnings

import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.ops.elementwise import PRIMITIVES, _formula
from op_cases import BINARY_DOMAIN, UNARY_DOMAIN

GRID = (-1.0, 0.0, 1.0)


def _quiet(func, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return func(*args)


def _unary_singular_points():
    for name, (value, deriv) in derivatives.UNARY.items():
        if name in derivatives.DISCONTINUOUS or deriv == "0.0":
            continue
        d = _formula(deriv, ("x", "out"))
        for s in GRID:
            x = np.array([s])
            slope = _quiet(d, x, _quiet(PRIMITIVES[name].impl, x))
            if not np.all(np.isfinite(slope)):
                yield name, s


def _binary_singular_points():
    for name, (value, dx, dy) in derivatives.BINARY.items():
        if name in derivatives.DISCONTINUOUS:
            continue
        partials = [_formula(p, ("x", "y", "out")) for p in (dx, dy) if p != "0.0"]
        for xs, ys in itertools.product(GRID, GRID):
            x, y = np.array([xs]), np.array([ys])
            out = _quiet(PRIMITIVES[name].impl, x, y)
            if not all(np.all(np.isfinite(_quiet(p, x, y, out))) for p in partials):
                yield name, xs, ys


def _regular(domain):
    lo, hi = domain
    return np.array([lo + 0.3 * (hi - lo), lo + 0.7 * (hi - lo)])


UNARY_POINTS = sorted(set(_unary_singular_points()))
BINARY_POINTS = sorted(set(_binary_singular_points()))
TAKEN = np.array([False, True, True])


def test_the_table_has_singular_points_to_test():
    names = {n for n, _ in UNARY_POINTS}
    assert {"sqrt", "log", "arcsin", "arccos", "arctanh", "reciprocal", "cbrt"} <= names
    assert {"div", "pow", "arctan2"} <= {p[0] for p in BINARY_POINTS}   # (hypot is finite at 0)


def _all_modes_agree(f, x, expected_grad):
    """f scalar: every first- and second-order mode, compared with each other and with ``expected_grad``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy warns about the untaken branch's value
        fwd = duals.jacfwd(f)(x)
        results = {"grad": duals.grad(f)(x), "jacrev": duals.jacrev(f)(x), "jacfwd": fwd}
        v = duals.Var(x)
        f(v).backward()
        results["Var.backward"] = v.grad
        for mode, g in results.items():
            assert np.all(np.isfinite(g)), (mode, g)
            np.testing.assert_allclose(g, expected_grad, rtol=1e-12, atol=1e-12, err_msg=mode)
        H = duals.jacfwd(duals.jacfwd(f))(x)
        assert np.all(np.isfinite(H)), H
        second = {"hessian": duals.hessian(f)(x), "jacrev(jacrev)": duals.jacrev(duals.jacrev(f))(x),
                  "jacrev(jacfwd)": duals.jacrev(duals.jacfwd(f))(x),
                  "value_grad_hessian": duals.value_grad_hessian(f)(x)[2]}
        direction = np.linspace(0.5, 1.5, x.size)
        second["hvp"] = duals.hvp(f, x, direction)
        for mode, h in second.items():
            want = H @ direction if mode == "hvp" else H
            np.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-10, err_msg=mode)
        return H


@pytest.mark.parametrize("name,s", UNARY_POINTS, ids=lambda p: str(p))
def test_where_branch_not_taken_at_a_singular_point_is_exactly_zero(name, s):
    op = PRIMITIVES[name]
    x = np.concatenate([[s], _regular(UNARY_DOMAIN.get(name, (-2.0, 2.0)))])
    f = lambda x: dnp.sum(dnp.where(TAKEN, op(x), 0.0))  # noqa: E731
    expected = np.concatenate([[0.0], duals.jacfwd(lambda r: dnp.sum(op(r)))(x[1:])])
    H = _all_modes_agree(f, x, expected)
    assert np.all(H[0] == 0.0) and np.all(H[:, 0] == 0.0)


@pytest.mark.parametrize("name,s", UNARY_POINTS, ids=lambda p: str(p))
def test_index_that_skips_a_singular_point_gives_exactly_zero(name, s):
    op = PRIMITIVES[name]
    x = np.concatenate([[s], _regular(UNARY_DOMAIN.get(name, (-2.0, 2.0)))])
    f = lambda x: dnp.sum(op(x)[1:] ** 2)  # noqa: E731
    expected = np.concatenate([[0.0], duals.jacfwd(lambda r: dnp.sum(op(r) ** 2))(x[1:])])
    _all_modes_agree(f, x, expected)


def _value_at(name, s):
    return float(_quiet(PRIMITIVES[name].impl, np.float64(s)))


# a bound can only win against a finite value
FINITE_POINTS = [(n, s) for n, s in UNARY_POINTS if np.isfinite(_value_at(n, s))]


@pytest.mark.parametrize("name,s", FINITE_POINTS, ids=lambda p: str(p))
def test_maximum_minimum_and_clip_that_do_not_select_a_singular_point_give_zero(name, s):
    op = PRIMITIVES[name]
    at = _value_at(name, s)
    x = np.concatenate([[s], _regular(UNARY_DOMAIN.get(name, (-2.0, 2.0)))])
    mask = np.array([1.0, 0.0, 0.0])
    low, high = at - 1.0, at + 1.0    # at the singular point the bound wins; elsewhere the op
    for f in (lambda x: dnp.sum(dnp.maximum(op(x), high * mask - 1e9 * (1 - mask))),
              lambda x: dnp.sum(dnp.minimum(op(x), low * mask + 1e9 * (1 - mask))),
              lambda x: dnp.sum(dnp.clip(op(x), high * mask - 1e9 * (1 - mask), 1e9))):
        expected = np.concatenate([[0.0], duals.jacfwd(lambda r: dnp.sum(op(r)))(x[1:])])
        _all_modes_agree(f, x, expected)


@pytest.mark.parametrize("name,xs,ys", BINARY_POINTS, ids=lambda p: str(p))
def test_where_branch_not_taken_at_a_singular_point_of_a_binary_entry(name, xs, ys):
    op = PRIMITIVES[name]
    regular = _regular(BINARY_DOMAIN.get(name, (-2.0, 2.0)))
    x = np.concatenate([[xs], regular])
    y = np.concatenate([[ys], regular[::-1]])
    both = np.concatenate([x, y])
    f = lambda z: dnp.sum(dnp.where(TAKEN, op(z[:3], z[3:]), 0.0))  # noqa: E731
    fwd = duals.jacfwd(f)(both)
    assert fwd[0] == 0.0 and fwd[3] == 0.0
    _all_modes_agree(f, both, fwd)


def test_the_reported_sqrt_of_abs_case():
    f = lambda x: np.where(x > 0, np.sqrt(np.abs(x)), 0.0)  # noqa: E731
    x = np.array([0.0, 1.0, -2.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        J = duals.jacfwd(f)(x)
        np.testing.assert_array_equal(duals.jacrev(f)(x), J)
    np.testing.assert_allclose(np.diag(J), [0.0, 0.5, 0.0, 0.25])


def test_x_log_x_with_the_usual_guard():
    def entropy(p):
        return -np.sum(np.where(p > 0, p * np.log(p), 0.0))
    p = np.array([0.0, 0.25, 0.75])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = duals.grad(entropy)(p)
        H = duals.hessian(entropy)(p)
    np.testing.assert_allclose(g, [0.0, -(np.log(0.25) + 1), -(np.log(0.75) + 1)])
    np.testing.assert_allclose(H, np.diag([0.0, -4.0, -1 / 0.75]))


def test_a_numerical_zero_is_not_a_branch():
    """(sqrt x)² at 0: the chain rule meets 0 · inf, and the honest answer is NaN, not 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(duals.grad(lambda x: np.sqrt(x) ** 2)(0.0))
        assert np.isnan(duals.jacfwd(lambda x: np.sqrt(x) ** 2)(0.0))


def test_the_guard_of_a_power_at_exponent_zero_keeps_the_mixed_second_derivative():
    # ∂x of x ** y was a constant 0 wherever y = 0, so ∂²/∂x∂y was 0 there instead of 1/x (the
    # SABR term (F K) ** ((1 - beta) / 2) at beta = 1); at x = y = 0 the limit 0 stays
    import numba
    power = lambda v: v[0] ** v[1]   # noqa: E731
    x, y = 2.0, 0.0
    want = np.array([[y * (y - 1) * x ** (y - 2), x ** (y - 1) * (1 + y * np.log(x))],
                     [x ** (y - 1) * (1 + y * np.log(x)), x ** y * np.log(x) ** 2]])
    for hessian in (duals.hessian, lambda f: duals.jacrev(duals.jacrev(f)), lambda f: duals.jacfwd(duals.jacfwd(f)),
                    lambda f: duals.hessian(numba.njit(f)), lambda f: duals.jit.compiled_hessian(numba.njit(f))):
        np.testing.assert_allclose(hessian(power)(np.array([x, y])), want, rtol=1e-15, atol=0)
    # third order through the exponent y - 1 = 0 of the first derivative: d/dy of ∂²/∂x² at y = 1
    third = duals.jacfwd(duals.hessian(power))(np.array([2.0, 1.0]))
    assert third[0, 0, 1] == third[0, 1, 0] == third[1, 0, 0] == pytest.approx(0.5, rel=1e-15)
    # element-wise on large arrays (the fused kernels): the Hessian-vector product along y
    n = 5000
    v = np.concatenate([np.full(n, 2.0), np.zeros(n)])
    hv = duals.jvp(duals.grad(lambda a: np.sum(a[:n] ** a[n:])), (v,), (np.concatenate([np.zeros(n), np.ones(n)]),))[1]
    np.testing.assert_allclose(hv[:n], 0.5, rtol=1e-15)
    # at x = y = 0 the branches not taken compute no 0 ** -1 (a divide-by-zero warning from every mode)
    origin, compiled = np.array([0.0, 0.0]), numba.njit(power)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            assert transform(power)(origin).tolist() == transform(compiled)(origin).tolist() == [0.0, 0.0]
        assert not duals.jacfwd(duals.jacfwd(power))(origin).any()
        for hessian in (duals.hessian(power), duals.hessian(compiled), duals.jit.compiled_hessian(compiled)):
            assert not hessian(origin).any()
        zeros = np.zeros(2 * n)
        assert not np.any(duals.grad(lambda a: np.sum(a[:n] ** a[n:]))(zeros))


def test_arcsin_and_arccos_at_one_have_the_one_sided_infinite_slope_of_their_sign():
    # -(x - 1) is -0.0 at x = 1, so sqrt gave -0.0 and arcsin'(1) -inf (a two-link arm's elbow
    # angle at full extension by the law of cosines; a biomechanics trial)
    import numba
    for f, sign in ((np.arcsin, 1.0), (np.arccos, -1.0)):
        compiled = numba.njit(lambda x, f=f: f(x))
        for transform in (duals.grad, duals.jacfwd):
            with np.errstate(divide="ignore"):
                assert transform(f)(1.0) == transform(compiled)(1.0) == sign * np.inf
                assert transform(f)(-1.0) == sign * np.inf


def _soft_dtw_corner():
    import numba

    @numba.njit
    def corner(x):
        R = np.full(3, np.inf)          # a soft-DTW table's boundary, made by the code
        R[0] = x[0]                     # a dual stored: the inf entries become constant duals
        return R[0] ** 2 + np.logaddexp(np.logaddexp(-R[1], -R[2]), -x[0])
    return corner


def test_logaddexp_of_two_constant_infinities_has_zero_derivative_in_every_mode():
    # ∂ logaddexp = expit(x - y) was expit(-inf + inf) = NaN there, and forward mode's zero
    # tangent times NaN made every lane NaN (an optimal-transport trial's soft-DTW): the limit
    # along x = y is the tie's ½
    x = np.array([1.5])
    python = lambda x: x[0] ** 2 + np.logaddexp(np.logaddexp(-np.inf, -np.inf), -x[0])  # noqa: E731
    compiled = _soft_dtw_corner()
    for f in (python, compiled):
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            np.testing.assert_allclose(transform(f)(x), [2.0], rtol=1e-15)
        np.testing.assert_allclose(duals.hessian(f)(x), [[2.0]], rtol=1e-15)
    assert duals.jvp(compiled, (x,), (np.ones(1),))[1] == 2.0
    inf = np.array([np.inf, np.inf])
    np.testing.assert_array_equal(duals.jacfwd(lambda v: np.logaddexp(v[0], v[1]))(-inf), [0.5, 0.5])


# x ** y at x = 0 follows the limits (docs/non_differentiable.md): a convention, not a derivative
_CONVENTIONS = {"pow": lambda x, y: x == 0.0}


@pytest.mark.parametrize("name", [n for n in derivatives.BINARY if n not in derivatives.DISCONTINUOUS])
def test_mixed_second_derivatives_of_every_binary_entry_are_symmetric_on_special_lines(name):
    # a guard in a partial (where(c, constant, formula)) that fires on a whole line, not a point,
    # drops the formula's derivative along that line: pow's at y = 0 did
    f = PRIMITIVES[name]
    grid = (-1.0, 0.0, 0.5, 1.0, 2.0)
    for x, y in itertools.product(grid, grid):
        if _CONVENTIONS.get(name, lambda x, y: False)(x, y):
            continue
        H = _quiet(duals.hessian(lambda v: f(v[0], v[1])), np.array([x, y]))
        if np.all(np.isfinite(H)):
            assert H[0, 1] == pytest.approx(H[1, 0], rel=1e-12, abs=1e-14), (name, x, y, H)


def _range_of_polar(p):
    return dnp.array([np.hypot(p[0], p[1]), np.arctan2(p[1], p[0])])[0] ** 2 + p[0]


def _roots_joined_then_skipped(x):
    return np.sum(np.concatenate([np.sqrt(x[:1]), x ** 2 + x])[1:])


def _columns_stacked_then_skipped(x):
    return np.sum(dnp.stack([np.sqrt(x), x ** 2], axis=1)[:, 1])


@pytest.mark.parametrize("f,x", [(_range_of_polar, np.zeros(2)), (_roots_joined_then_skipped, np.zeros(2)),
                                 (_columns_stacked_then_skipped, np.zeros(3))],
                         ids=["dnp.array", "concatenate", "stack-axis-1"])
def test_an_entry_joined_by_concatenate_or_stack_and_skipped_by_an_index_contributes_zero(f, x):
    # the index's structural zero passes through the join to the element-wise rule, so its
    # infinite or undefined partial (hypot, arctan2, sqrt at 0) is not multiplied in: 0 · inf
    # made the gradient NaN in reverse mode where forward mode was exact
    want = _quiet(duals.jacfwd(f), x)
    assert np.all(np.isfinite(want))
    for transform in (duals.grad, duals.jacrev):
        np.testing.assert_array_equal(_quiet(transform(f), x), want)
    assert np.all(np.isfinite(_quiet(duals.hessian(f), x)))


# rows of data with a NaN (rays that miss a lens: sqrt of a negative discriminant), reduced along
# an axis and then dropped: the dropped rows' NaN partials must not reach the gradient
_REDUCTIONS = {
    "sum": lambda a: np.sum(a, axis=1),
    "mean": lambda a: np.mean(a, axis=1),
    "matmul-vector": lambda a: a @ np.ones(2),
    "matmul-matrix": lambda a: (a @ np.array([[1.0, 2.0, 0.5], [3.0, -1.0, 1.0]]))[:, 1],
    "vector-matmul": lambda a: np.ones(2) @ a.T,
    "norm": lambda a: np.linalg.norm(a, axis=1),
    "einsum": lambda a: np.einsum("ij,ij->i", a, a),
    "max": lambda a: np.max(a, axis=1),
    "cumsum": lambda a: np.cumsum(a, axis=1)[:, -1],
    "sort": lambda a: np.sort(a, axis=1)[:, 0],
    "median": lambda a: np.median(a, axis=1),
    "take-along-axis": lambda a: np.take_along_axis(a, np.array([[1], [1], [0]]), axis=1)[:, 0] + a[:, 0],
}
_ROWS = np.array([[1.0, 2.0], [np.nan, 5.0], [4.0, 7.0]])
_KEPT = np.isfinite(_ROWS).all(axis=1)


@pytest.mark.parametrize("reduce", list(_REDUCTIONS.values()), ids=list(_REDUCTIONS))
@pytest.mark.parametrize("drop", ["index", "where", "nansum"])
def test_rows_reduced_along_an_axis_then_dropped_contribute_exactly_zero(reduce, drop):
    # reverse mode (grad, Var, hessian's inner pass) gave NaN where forward mode was exact: the
    # structural zero of the dropped rows stopped at the reduction (an optics trial)
    def loss(c):
        per_row = reduce((_ROWS - c) ** 2)
        if drop == "index":
            return np.sum(per_row[_KEPT])
        if drop == "where":
            return np.sum(np.where(_KEPT, per_row, 0.0))
        return np.nansum(per_row)
    c = 0.7
    want = _quiet(duals.jacfwd(loss), c)
    assert np.isfinite(want)
    h = 1e-6
    fd = _quiet(lambda: (loss(c + h) - loss(c - h)) / (2 * h))
    assert want == pytest.approx(fd, rel=1e-6, abs=1e-6)
    assert _quiet(duals.grad(loss), c) == pytest.approx(want, rel=1e-13, abs=1e-13)
    v = duals.Var(np.array(c))
    _quiet(lambda: loss(v).backward())
    assert float(v.grad) == pytest.approx(want, rel=1e-13, abs=1e-13)
    H = _quiet(duals.hessian(loss), c)
    assert H == pytest.approx(_quiet(duals.jacfwd(duals.jacfwd(loss)), c), rel=1e-12, abs=1e-12)


_BATCHED = np.arange(12.0).reshape(2, 3, 2)
_BATCHED[1, 2, 0] = np.nan
_BATCHED_KEPT = np.isfinite(_BATCHED).all(axis=-1)
_WEIGHTS = np.array([[[1.0], [2.0]]])   # (1, 2, 1): broadcast over the batch


@pytest.mark.parametrize("loss", [
    lambda c: np.sum(np.where(_BATCHED_KEPT[..., None], ((_BATCHED - c) ** 2) @ (_WEIGHTS * c), 0.0)),
    lambda c: np.sum(np.where(_BATCHED_KEPT[:, None, :], (_WEIGHTS[0].T * c) @ np.swapaxes((_BATCHED - c) ** 2, -1, -2), 0.0)),
], ids=["rows-of-a", "columns-of-b"])
def test_a_product_whose_other_factor_is_traced_keeps_the_dropped_rows_out(loss):
    # the cotangent of the traced factor is aᵀ g (or g bᵀ): the NaN of a dropped row met its
    # structural zero inside the product, 0 · NaN
    want = _quiet(duals.jacfwd(loss), 0.5)
    assert np.isfinite(want) and want == pytest.approx(_quiet(lambda: (loss(0.5 + 1e-6) - loss(0.5 - 1e-6)) / 2e-6), rel=1e-6)
    assert _quiet(duals.grad(loss), 0.5) == pytest.approx(want, rel=1e-13)
    assert _quiet(duals.hessian(loss), 0.5) == pytest.approx(_quiet(duals.jacfwd(duals.jacfwd(loss)), 0.5), rel=1e-12)
