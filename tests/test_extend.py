"""duals.extend: user primitives work in every mode and nesting, and bad rules fail clearly."""
import numba
import numpy as np
import pytest
import scipy.special as sp

import duals
import duals.numpy as dnp
from duals.core import REGISTRY
from duals.testing import check_grads

# polygamma(n, x) with derivative polygamma(n + 1, x): differentiable to any order
polygamma = duals.extend.primitive("test_polygamma", lambda x, *, n: sp.polygamma(n, x))
polygamma.def_jvp(0, lambda t, out, x, *, n: polygamma(x, n=n + 1) * t, vectorized=True)
polygamma.def_vjp(0, lambda g, out, x, *, n: polygamma(x, n=n + 1) * g, vectorized=True)
gammaln = duals.extend.elementwise("test_gammaln", sp.gammaln, lambda out, x: polygamma(x, n=0))

X = np.array([0.6, 1.5, 3.2])


def test_elementwise_primitive_passes_gradcheck():
    assert duals.gradcheck(gammaln, X)


def test_rules_written_with_primitives_differentiate_again_in_every_mode_pairing():
    check_grads(lambda x: gammaln(x) * x, (X,), order=2)


def test_hessian_of_a_custom_primitive_equals_its_closed_form():
    H = duals.hessian(lambda x: dnp.sum(gammaln(x)))(X)
    np.testing.assert_allclose(H, np.diag(sp.polygamma(1, X)), rtol=1e-12)


def test_static_keyword_parameters_reach_impl_and_rules():
    np.testing.assert_allclose(duals.grad(lambda x: dnp.sum(polygamma(x, n=2)))(X), sp.polygamma(3, X))


def test_elementwise_binary_primitive_broadcasts_in_every_mode():
    # a beta-like log: gammaln(x) + gammaln(y) - gammaln(x + y), as one primitive
    lbeta = duals.extend.elementwise(
        "test_lbeta", sp.betaln,
        lambda out, x, y: polygamma(x, n=0) - polygamma(x + y, n=0),
        lambda out, x, y: polygamma(y, n=0) - polygamma(x + y, n=0))
    assert duals.gradcheck(lbeta, np.array([[0.5], [2.0]]), np.array([1.0, 1.5, 3.0]))
    check_grads(lbeta, (np.array([[0.5], [2.0]]), np.array([1.0, 1.5])), order=2)


def test_per_lane_rules_see_tangents_shaped_like_the_argument():
    seen = []

    def jvp(t, out, x):
        seen.append(np.shape(t))
        return dnp.cumsum(t)           # cumsum over the value's axis: wrong if lanes leaked in

    def vjp(g, out, x):
        seen.append(np.shape(g))
        return dnp.flip(dnp.cumsum(dnp.flip(g)))

    csum = duals.extend.primitive("test_cumsum", np.cumsum).def_jvp(0, jvp).def_vjp(0, vjp)
    x = np.arange(4.0)
    np.testing.assert_allclose(duals.jacfwd(csum)(x), np.tril(np.ones((4, 4))))
    np.testing.assert_allclose(duals.jacrev(csum)(x), np.tril(np.ones((4, 4))))
    assert set(seen) == {(4,)}
    assert duals.gradcheck(csum, x)


def test_numba_compiled_impl_works_as_a_primitive():
    @numba.njit(cache=False)
    def cube_loop(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = x[i] ** 3
        return out

    cube = duals.extend.elementwise("test_numba_cube", cube_loop, lambda out, x: 3.0 * x * x)
    assert duals.gradcheck(cube, np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(duals.hessian(lambda x: dnp.sum(cube(x)))(np.array([0.5, 2.0])),
                               np.diag([3.0, 12.0]))


def test_works_with_the_imperative_tape():
    x = duals.Var(X.copy())
    dnp.sum(gammaln(x)).backward()
    np.testing.assert_allclose(x.grad, sp.digamma(X), rtol=1e-12)


def test_jvp_rule_returning_the_wrong_shape_names_primitive_and_argument():
    p = duals.extend.primitive("test_bad_jvp", np.sin).def_jvp(0, lambda t, out, x: dnp.sum(t))
    with pytest.raises(ValueError, match=r"'test_bad_jvp': the JVP rule for argument 0 returned a "
                                         r"tangent of shape \(\), but the output has shape \(3,\)"):
        duals.jacfwd(p)(X)


def test_vjp_rule_returning_the_wrong_shape_names_primitive_and_argument():
    p = duals.extend.primitive("test_bad_vjp", lambda x, y: x * y)
    p.def_vjp(1, lambda g, out, x, y: g * x)        # forgets to sum over y's broadcast axis
    with pytest.raises(ValueError, match=r"'test_bad_vjp': the VJP rule for argument 1 .* shape "
                                         r"\(2, 3\), but argument 1 has shape \(3,\)"):
        duals.grad(lambda y: dnp.sum(p(np.ones((2, 3)), y)))(np.ones(3))


def test_vectorized_rule_that_mishandles_lanes_is_caught_with_a_hint():
    p = duals.extend.primitive("test_bad_lanes", np.sin)
    p.def_jvp(0, lambda t, out, x: dnp.cos(x) * dnp.sum(t, axis=0), vectorized=True)
    with pytest.raises(ValueError, match="without vectorized=True"):
        duals.jacfwd(p)(X)


def test_missing_rule_is_named():
    p = duals.extend.primitive("test_no_vjp", np.sin).def_jvp(0, lambda t, out, x: dnp.cos(x) * t)
    with pytest.raises(NotImplementedError, match="'test_no_vjp' has no VJP rule for argument 0"):
        duals.grad(p)(0.3)


def test_custom_primitives_stay_out_of_the_builtin_registry():
    assert "test_gammaln" not in REGISTRY
    assert duals.extend.CUSTOM["test_gammaln"] is gammaln


def test_builtin_names_are_refused():
    with pytest.raises(ValueError, match="'sin' is a built-in primitive"):
        duals.extend.primitive("sin", np.sin)


def test_impl_returning_integers_is_refused():
    p = duals.extend.primitive("test_int_impl", lambda x: np.floor(x).astype(int))
    with pytest.raises(TypeError, match="'test_int_impl': impl returned dtype int"):
        p(1.5)


def test_gradcheck_catches_a_wrong_custom_rule():
    wrong = duals.extend.elementwise("test_wrong_gammaln", sp.gammaln, lambda out, x: polygamma(x, n=1))
    with pytest.raises(AssertionError, match="agree with each other but not with finite differences"):
        duals.gradcheck(wrong, X)


def test_a_vectorized_rule_for_a_broadcast_argument_is_told_to_align_its_lanes():
    from duals.extend import primitive
    scaled = primitive("scaled_by", lambda a, b: a * b)
    scaled.def_jvp(0, lambda t, out, a, b: b * t, vectorized=True)
    scaled.def_jvp(1, lambda t, out, a, b: a * t, vectorized=True)   # needs a * t[..., None]
    with pytest.raises(ValueError, match=r"Argument 1 has shape \(\), smaller than the output.*t\[\.\.\., None\]"):
        duals.jacfwd(lambda b: scaled(np.array([0.3, 0.8, 1.4]), b))(2.0)
    scaled.def_jvp(1, lambda t, out, a, b: a * t[..., None], vectorized=True)
    np.testing.assert_allclose(duals.jacfwd(lambda b: scaled(np.array([0.3, 0.8, 1.4]), b))(2.0), [0.3, 0.8, 1.4])


def test_a_branch_not_taken_through_a_custom_elementwise_primitive_passes_exact_zeros():
    # (EM trial: a custom Hankel-function primitive over R = sqrt(dx**2 + dy**2) + eye, its diagonal
    # masked by np.where) grad and jacrev were NaN where jacfwd and the table's np.cos are exact:
    # the branch's zeros met sqrt'(0) = inf behind the custom primitive
    cosine = duals.extend.elementwise("cosine_behind_a_branch", np.cos, lambda out, x: -np.sin(x))
    x = np.array([0.0, 1.0])

    def ring(a, kernel):
        d = a * x[:, None] - a * x[None, :]
        R = np.sqrt(d ** 2) + np.eye(2)
        return np.sum(np.where(np.eye(2, dtype=bool), 0.0, kernel(R)))
    for transform in (duals.grad, duals.jacfwd, duals.jacrev):
        assert transform(lambda a: ring(a, cosine))(1.5) == transform(lambda a: ring(a, np.cos))(1.5)
    np.testing.assert_allclose(duals.grad(lambda a: ring(a, cosine))(1.5), -2 * np.sin(1.5), rtol=1e-14)
    assert duals.grad(lambda x: np.where(x > 0, cosine(np.sqrt(x)), 1.0))(0.0) == 0.0
