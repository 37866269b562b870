"""Behaviours of duals.numpy's linear algebra that the derivative table cannot express:
NumPy's output shapes, argument forms, error messages, singular matrices and dtypes."""
import numpy as np
import pytest

import duals
import duals.numpy as dnp

rng = np.random.default_rng(42)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, size=shape)


def _well(*shape):
    return _r(*shape) + 3.0 * np.eye(shape[-1])


def _spd(*shape):
    x = _r(*shape)
    return x @ np.swapaxes(x, -1, -2) + 3.0 * np.eye(shape[-1])


def _traced_value(fn, args):
    """``fn`` evaluated with its first argument traced (forward mode), and the plain value."""
    out, _ = duals.jvp(lambda a: fn(a, *args[1:]), (args[0],), (np.ones_like(args[0]),))
    return out


# (name, duals function, numpy function, arguments)
SHAPE_CASES = [
    ("matmul-mat-mat", dnp.matmul, np.matmul, (_r(2, 3), _r(3, 4))),
    ("matmul-mat-vec", dnp.matmul, np.matmul, (_r(2, 3), _r(3))),
    ("matmul-vec-mat", dnp.matmul, np.matmul, (_r(3), _r(3, 4))),
    ("matmul-vec-vec", dnp.matmul, np.matmul, (_r(3), _r(3))),
    ("matmul-vec-stack", dnp.matmul, np.matmul, (_r(3), _r(5, 3, 2))),
    ("matmul-stack-vec", dnp.matmul, np.matmul, (_r(5, 2, 3), _r(3))),
    ("matmul-broadcast", dnp.matmul, np.matmul, (_r(2, 1, 2, 3), _r(4, 3, 2))),
    ("dot-scalar", dnp.dot, np.dot, (np.float64(2.0), _r(3))),
    ("dot-vec-vec", dnp.dot, np.dot, (_r(3), _r(3))),
    ("dot-mat-vec", dnp.dot, np.dot, (_r(2, 3), _r(3))),
    ("dot-vec-stack", dnp.dot, np.dot, (_r(3), _r(4, 3, 2))),
    ("dot-stack-stack", dnp.dot, np.dot, (_r(2, 4, 3), _r(5, 3, 2))),
    ("dot-mat-stack", dnp.dot, np.dot, (_r(4, 3), _r(5, 3, 2))),
    ("vdot", dnp.vdot, np.vdot, (_r(2, 3), _r(3, 2))),
    ("inner-vec", dnp.inner, np.inner, (_r(3), _r(3))),
    ("inner-stack", dnp.inner, np.inner, (_r(2, 4, 3), _r(5, 3))),
    ("outer", dnp.outer, np.outer, (_r(2, 2), _r(3))),
    ("tensordot", dnp.tensordot, np.tensordot, (_r(2, 3, 4), _r(3, 4, 5))),
    ("solve-vec", dnp.linalg.solve, np.linalg.solve, (_well(3, 3), _r(3))),
    ("solve-mat", dnp.linalg.solve, np.linalg.solve, (_well(3, 3), _r(3, 2))),
    ("solve-stack-vec", dnp.linalg.solve, np.linalg.solve, (_well(4, 3, 3), _r(3))),
    ("solve-broadcast", dnp.linalg.solve, np.linalg.solve, (_well(4, 1, 3, 3), _r(2, 3, 2))),
    ("inv", dnp.linalg.inv, np.linalg.inv, (_well(2, 3, 3),)),
    ("det", dnp.linalg.det, np.linalg.det, (_well(3, 3),)),
    ("det-stack", dnp.linalg.det, np.linalg.det, (_well(2, 4, 3, 3),)),
    ("cholesky", dnp.linalg.cholesky, np.linalg.cholesky, (_spd(2, 3, 3),)),
    ("norm-default-3d", dnp.linalg.norm, np.linalg.norm, (_r(2, 3, 4),)),
]
NORM_ARGS = [dict(), dict(ord=1), dict(ord=np.inf), dict(ord=-np.inf), dict(ord=3), dict(ord=0),
             dict(axis=0), dict(axis=-1, keepdims=True), dict(ord=1, axis=1)]
MATRIX_NORM_ARGS = [dict(), dict(ord="fro"), dict(ord=1), dict(ord=-1), dict(ord=np.inf),
                    dict(ord=-np.inf), dict(ord="fro", axis=(2, 0)), dict(ord=1, axis=(0, 1), keepdims=True),
                    dict(axis=None, keepdims=True)]


@pytest.mark.parametrize("name,fn,np_fn,args", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_values_and_shapes_equal_numpys_for_plain_and_traced_inputs(name, fn, np_fn, args):
    expected = np_fn(*args)
    plain = fn(*args)
    assert not isinstance(plain, duals.core.Tracer)
    np.testing.assert_allclose(plain, expected, rtol=1e-12, atol=1e-12)
    traced = _traced_value(fn, args)
    assert np.shape(traced) == np.shape(expected)
    np.testing.assert_allclose(traced, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs", NORM_ARGS, ids=str)
def test_vector_norms_equal_numpys(kwargs):
    x = _r(3, 4) if "axis" in kwargs else _r(5)
    expected = np.linalg.norm(x, **kwargs)
    got = _traced_value(lambda a: dnp.linalg.norm(a, **kwargs), (x,))
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("kwargs", MATRIX_NORM_ARGS, ids=str)
def test_matrix_norms_equal_numpys(kwargs):
    x = _r(3, 4, 2) if isinstance(kwargs.get("axis"), tuple) and 2 in kwargs["axis"] else _r(3, 4)
    expected = np.linalg.norm(x, **kwargs)
    got = _traced_value(lambda a: dnp.linalg.norm(a, **kwargs), (x,))
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_matrix_two_and_nuclear_norms_have_the_singular_vector_gradients():
    a = _r(4, 3)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    g2 = duals.grad(lambda a: dnp.linalg.norm(a, 2))(a)
    np.testing.assert_allclose(g2, np.outer(u[:, 0], vt[0]), rtol=1e-8, atol=1e-10)
    gnuc = duals.jacrev(lambda a: dnp.linalg.norm(a, "nuc"))(a)
    np.testing.assert_allclose(gnuc, u @ vt, rtol=1e-8, atol=1e-10)
    assert float(duals.jvp(lambda a: dnp.linalg.norm(a, 2), (a,), (a,))[0]) == np.linalg.norm(a, 2)


@pytest.mark.parametrize("n", [5, 7, 9])
def test_two_and_nuclear_norms_stay_exact_at_ill_conditioned_matrices(n):
    # through the Gram matrix's eigenvalues (the condition number squared) the smallest singular
    # value's derivative was 21 % off at a 7×7 Hilbert matrix and 98 % at 9×9
    a = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1.0)
    u, s, vt = np.linalg.svd(a)
    for ord, exact in ((2, np.outer(u[:, 0], vt[0])), (-2, np.outer(u[:, -1], vt[-1])), ("nuc", u @ vt)):
        f = lambda a: dnp.linalg.norm(a, ord)  # noqa: E731
        for mode in (duals.grad, duals.jacfwd):
            np.testing.assert_allclose(mode(f)(a), exact, rtol=1e-9, atol=1e-12)


def test_nuclear_and_minus_two_norms_at_a_rank_deficient_matrix_take_the_zero_singular_values_slope_zero():
    # sqrt of a Gram eigenvalue of 0 gave NaN in reverse, ±inf forward; the singular values'
    # policy (slope 0 at a zero singular value, as abs'(0)) gives U_r V_rᵀ for 'nuc', 0 for -2
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for mode in (duals.grad, duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(mode(lambda a: dnp.linalg.norm(a, "nuc"))(a), u[:, :2] @ vt[:2],
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(mode(lambda a: dnp.linalg.norm(a, -2))(a), np.zeros_like(a))


def test_norm_derivative_at_zero_is_zero_in_every_mode():
    z = np.zeros(3)
    for ord_ in (None, 2, 3, 1.5):
        f = lambda x: dnp.linalg.norm(x, ord_)  # noqa: E731
        assert np.array_equal(duals.jacfwd(f)(z), np.zeros(3))
        assert np.array_equal(duals.grad(f)(z), np.zeros(3))
    assert np.array_equal(duals.grad(lambda x: dnp.linalg.norm(x, "fro"))(np.zeros((2, 2))), np.zeros((2, 2)))


@pytest.mark.parametrize("ord_", [0.5, -1.5, "nuc", 2, -2])
def test_orders_with_infinite_partials_at_zero_are_zero_there_in_every_mode_too(ord_):
    """|x|^p with p < 1 and the singular values (sqrt of the Gram eigenvalues) have infinite
    partials at 0: reverse mode met them as 0 * inf (NaN where forward mode gave 0), and the
    matrix orders were NaN in both modes where the sum of svdvals, the same function, gives 0."""
    z = np.zeros(3) if isinstance(ord_, float) else np.zeros((2, 3))
    f = lambda x: dnp.linalg.norm(x, ord_)  # noqa: E731
    with np.errstate(divide="ignore"):
        assert f(z) == np.linalg.norm(z, ord_) == 0.0
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            assert np.array_equal(transform(f)(z), np.zeros_like(z)), transform.__name__


def test_a_zero_matrix_in_a_stack_has_derivative_zero_and_the_others_theirs():
    a = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    J = duals.jacrev(lambda s: dnp.linalg.norm(s, "nuc", axis=(1, 2)))(np.stack([a, np.zeros((2, 3))]))
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(J[0, 0], u @ vt, rtol=1e-8)
    np.testing.assert_array_equal(J[1], 0.0)


def test_norm_derivative_is_zero_only_for_the_zero_rows_of_a_batch():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    for jac in (duals.jacfwd, duals.jacrev):
        J = jac(lambda a: dnp.linalg.norm(a, axis=1))(x)
        np.testing.assert_allclose(J[0], 0.0)
        np.testing.assert_allclose(J[1], [[0.0, 0.0], [0.6, 0.8]])


def test_norm_inf_splits_ties_evenly():
    g = duals.grad(lambda x: dnp.linalg.norm(x, np.inf))(np.array([1.0, -2.0, 2.0]))
    np.testing.assert_allclose(g, [0.0, -0.5, 0.5])

# ---------------------------------------------------------------- slogdet


def test_slogdet_sign_is_a_plain_array_and_matches_numpy():
    a = np.stack([_well(3, 3), -_well(3, 3)])
    traced_logdet = _traced_value(lambda m: dnp.linalg.slogdet(m)[1], (a,))
    s, ld = dnp.linalg.slogdet(a)
    es, eld = np.linalg.slogdet(a)
    np.testing.assert_array_equal(s, es)
    np.testing.assert_allclose(ld, eld, rtol=1e-12)
    np.testing.assert_allclose(traced_logdet, eld, rtol=1e-12)
    assert list(es) == [1.0, -1.0]

    def f(m):
        result = dnp.linalg.slogdet(m)
        assert not isinstance(result.sign, duals.core.Tracer)
        np.testing.assert_array_equal(result.sign, es)
        return dnp.sum(result.logabsdet)

    np.testing.assert_allclose(duals.grad(f)(a), np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-10)


def test_slogdet_unpacks_like_numpy():
    sign, logabsdet = dnp.linalg.slogdet(-np.eye(3))
    assert sign == -1.0 and logabsdet == 0.0

# ---------------------------------------------------------------- singular and indefinite matrices


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("fn", [lambda a: dnp.linalg.solve(a, np.ones(2)), dnp.linalg.inv],
                         ids=["solve", "inv"])
def test_singular_matrix_raises_linalgerror_for_value_and_derivatives(fn):
    with pytest.raises(np.linalg.LinAlgError):
        fn(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError):
        duals.jacfwd(fn)(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError):
        duals.jacrev(fn)(SINGULAR)


def cofactors(a):
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("a", [SINGULAR, np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [2.0, 4.0, 6.0]]),
                               np.zeros((3, 3)), np.array([[0.0, 1.0], [0.0, 0.0]])],
                         ids=["rank-1-2x2", "rank-2-3x3", "zero", "nilpotent"])
def test_det_of_a_singular_matrix_has_the_cofactors_as_derivative(a):
    """det is a polynomial: at a singular matrix its gradient is the cofactor matrix (the
    adjugate transposed, from the SVD); it raised LinAlgError from inside NumPy before."""
    assert dnp.linalg.det(a) == 0.0
    for transform in (duals.grad, duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(dnp.linalg.det)(a), cofactors(a), atol=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="second derivative of det at a singular matrix"):
        duals.hessian(dnp.linalg.det)(a)


def test_det_of_a_stack_with_one_singular_matrix_differentiates_both():
    well = np.array([[2.0, 1.0], [1.0, 3.0]])
    got = duals.jacrev(lambda s: np.sum(np.linalg.det(s)))(np.stack([SINGULAR, well]))
    np.testing.assert_allclose(got, [cofactors(SINGULAR), cofactors(well)], atol=1e-14)


def test_slogdet_of_singular_matrix_is_minus_inf_and_its_derivative_raises():
    assert dnp.linalg.slogdet(SINGULAR).logabsdet == -np.inf
    with pytest.raises(np.linalg.LinAlgError):
        duals.grad(lambda a: dnp.linalg.slogdet(a)[1])(SINGULAR)


def test_cholesky_of_indefinite_matrix_raises_linalgerror():
    with pytest.raises(np.linalg.LinAlgError):
        duals.jacfwd(dnp.linalg.cholesky)(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_cholesky_ignores_the_upper_triangle_like_numpy():
    a = _spd(3, 3)
    a_up = a + np.triu(_r(3, 3), 1)
    np.testing.assert_allclose(_traced_value(dnp.linalg.cholesky, (a_up,)), np.linalg.cholesky(a_up))
    g = duals.grad(lambda m: dnp.sum(dnp.linalg.cholesky(m)))(a_up)
    assert np.all(np.triu(g, 1) == 0.0)


def test_cholesky_upper_is_the_transpose_of_lower():
    a = _spd(3, 3)
    np.testing.assert_allclose(_traced_value(lambda m: dnp.linalg.cholesky(m, upper=True), (a,)),
                               np.linalg.cholesky(a).T, rtol=1e-12)


def test_det_gradient_is_det_times_inverse_transpose():
    a = _well(3, 3)
    np.testing.assert_allclose(duals.grad(dnp.linalg.det)(a), np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)

# ---------------------------------------------------------------- error messages


@pytest.mark.parametrize("fn,shapes,pattern", [
    (dnp.matmul, ((2, 3), (4, 2)), r"matmul: shapes \(2, 3\) and \(4, 2\) do not align"),
    (dnp.matmul, ((2, 3), (4,)), r"matmul: shapes \(2, 3\) and \(4,\) do not align"),
    (dnp.matmul, ((2, 2, 3), (3, 3, 2)), r"batch axes of shapes \(2, 2, 3\) and \(3, 3, 2\)"),
    (dnp.matmul, ((), (3,)), r"matmul: operands must have at least one axis, got shapes \(\) and \(3,\)"),
    (dnp.dot, ((2, 3), (2,)), r"shapes \(2, 3\) and \(2,\)"),
    (dnp.inner, ((2, 3), (2,)), r"inner: shapes \(2, 3\) and \(2,\)"),
    (dnp.vdot, ((2, 3), (5,)), r"vdot: shapes \(2, 3\) and \(5,\)"),
    (lambda a, b: dnp.tensordot(a, b, axes=([1], [1])), ((2, 3), (3, 2)),
     r"tensordot: shape-mismatch .* shape \(2, 3\) .* shape \(3, 2\)"),
    (lambda a, b: dnp.einsum("ij,jk->ik", a, b), ((2, 3), (4, 2)), r"einsum: index 'j' has size 3 .* and 4"),
    (dnp.linalg.solve, ((3, 3), (2,)), r"linalg.solve: shapes \(3, 3\) and \(2,\) do not align"),
    (dnp.linalg.solve, ((3, 3), (2, 2)), r"linalg.solve: shapes \(3, 3\) and \(2, 2\) do not align"),
])
@pytest.mark.parametrize("traced", [False, True], ids=["plain", "traced"])
def test_shape_mismatch_raises_naming_both_shapes(fn, shapes, pattern, traced):
    args = [_r(*s) if s else np.float64(1.0) for s in shapes]
    with pytest.raises(ValueError, match=pattern):
        if traced:
            duals.jacfwd(lambda a: fn(a, *args[1:]))(args[0])
        else:
            fn(*args)


@pytest.mark.parametrize("fn", [dnp.linalg.inv, dnp.linalg.det, dnp.linalg.cholesky,
                                lambda a: dnp.linalg.slogdet(a)[1]], ids=["inv", "det", "cholesky", "slogdet"])
def test_non_square_matrix_raises_naming_the_shape(fn):
    with pytest.raises(np.linalg.LinAlgError, match=r"square .* got shape \(2, 3\)"):
        duals.jacfwd(fn)(_r(2, 3))


def test_einsum_errors_name_the_problem():
    x = _r(2, 2)
    with pytest.raises(ValueError, match="names 2 operands but 1"):
        duals.jacfwd(lambda a: dnp.einsum("ij,jk", a))(x)
    with pytest.raises(ValueError, match="output index 'k' appears in no input"):
        duals.jacfwd(lambda a: dnp.einsum("ij->k", a))(x)
    with pytest.raises(ValueError, match="do not match operand shape"):
        duals.jacfwd(lambda a: dnp.einsum("ijk->i", a))(x)

# ---------------------------------------------------------------- operators and mixed operands


def test_traced_at_plain_and_plain_at_traced_in_both_orders():
    W = _r(4, 3)
    x = _r(3)
    y = _r(4)
    np.testing.assert_allclose(duals.jacfwd(lambda v: W @ v)(x), W)
    np.testing.assert_allclose(duals.jacrev(lambda v: W @ v)(x), W)
    np.testing.assert_allclose(duals.jacfwd(lambda v: v @ W)(y), W.T)
    np.testing.assert_allclose(duals.jacrev(lambda v: v @ W)(y), W.T)
    np.testing.assert_allclose(duals.jacfwd(lambda M: M @ x)(W), np.einsum("ij,k->ijk", np.eye(4), x))
    np.testing.assert_allclose(duals.jacrev(lambda M: y @ M)(W), np.einsum("i,jk->kij", y, np.eye(3)))


def test_numpy_functions_on_traced_values_reach_the_library():
    a = _well(3, 3)
    b = _r(3)
    g = duals.grad(lambda m: np.linalg.det(m) + np.sum(np.linalg.solve(m, b)) + np.trace(np.linalg.inv(m))
                   + np.dot(b, np.matmul(m, b)) + np.einsum("ii", m) + np.linalg.norm(m))(a)
    g2 = duals.grad(lambda m: dnp.linalg.det(m) + dnp.sum(dnp.linalg.solve(m, b))
                    + dnp.trace(dnp.linalg.inv(m)) + dnp.dot(b, dnp.matmul(m, b)) + dnp.einsum("ii", m)
                    + dnp.linalg.norm(m))(a)
    np.testing.assert_allclose(g, g2)


def test_tape_var_matmul_records_a_matmul_node():
    W = _r(2, 3)
    x = duals.Var(_r(3))
    y = W @ x
    assert y.grad_fn.name in ("ReshapeBackward", "MatmulBackward")
    dnp.sum(y).backward()
    np.testing.assert_allclose(x.grad, W.sum(axis=0))


def test_user_dual_matmul():
    d = duals.Dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    out = np.array([[1.0, 2.0], [3.0, 4.0]]) @ d
    np.testing.assert_allclose(out.primal, [5.0, 11.0])
    np.testing.assert_allclose(out.tangent, [1.0, 3.0])

# ---------------------------------------------------------------- argument forms


def test_tensordot_axes_forms_agree_with_numpy():
    a, b = _r(2, 3, 4), _r(4, 3, 2)
    for axes in (0, 1, ([1, 2], [1, 0]), ((2,), (0,)), (2, 0), np.array([[1], [1]])):
        expected = np.tensordot(a, b, axes=axes)
        got = _traced_value(lambda x: dnp.tensordot(x, b, axes=axes), (a,))
        assert np.shape(got) == expected.shape, axes
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


EINSUM_FORMS = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("ba", ((2, 3),)),
    ("ii", ((3, 3),)),
    ("ii->i", ((3, 3),)),
    ("iji->j", ((3, 2, 3),)),
    ("i,i", ((3,), (3,))),
    ("i,i->i", ((3,), (3,))),
    ("i,j", ((2,), (3,))),
    ("ij->", ((2, 3),)),
    ("...ij,...jk->...ik", ((5, 1, 2, 3), (4, 3, 2))),
    ("...j,j", ((2, 3, 4), (4,))),
    ("i...->...", ((2, 3, 4),)),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("ij,ij,ij->j", ((2, 3), (2, 3), (2, 3))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("ij,k->ik", ((2, 3), (4,))),
    ("i,i->i", ((1,), (3,))),
    (",i->i", ((), (3,))),
    ("ij , jk -> ik", ((2, 3), (3, 4))),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_FORMS, ids=[f[0] for f in EINSUM_FORMS])
def test_einsum_forms_agree_with_numpy(subscripts, shapes):
    ops = [_r(*s) if s else np.float64(0.7) for s in shapes]
    expected = np.einsum(subscripts, *ops)
    got = _traced_value(lambda x, *rest: dnp.einsum(subscripts, x, *rest), ops)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # every operand differentiable: reverse equals forward
    for i in range(len(ops)):
        def f(x, i=i):
            return dnp.einsum(subscripts, *ops[:i], x, *ops[i + 1:])
        np.testing.assert_allclose(duals.jacrev(f)(ops[i]), duals.jacfwd(f)(ops[i]), rtol=1e-12, atol=1e-12)


def test_einsum_sublist_form_agrees_with_numpy():
    a, b = _r(2, 3), _r(3, 4)
    expected = np.einsum(a, [0, 1], b, [1, 2], [0, 2])
    got = _traced_value(lambda x: dnp.einsum(x, [0, 1], b, [1, 2], [0, 2]), (a,))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    got = _traced_value(lambda x: dnp.einsum(x, [Ellipsis, 1], b, [1, 2]), (a,))
    np.testing.assert_allclose(got, np.einsum(a, [Ellipsis, 1], b, [1, 2]), rtol=1e-12)

# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("fn,args", [
    (dnp.matmul, (_r(2, 3), _r(3))),
    (dnp.linalg.solve, (_well(3, 3), _r(3))),
    (dnp.linalg.inv, (_well(3, 3),)),
    (dnp.linalg.det, (_well(3, 3),)),
    (lambda a: dnp.linalg.slogdet(a)[1], (_well(3, 3),)),
    (dnp.linalg.cholesky, (_spd(3, 3),)),
    (dnp.linalg.norm, (_r(3),)),
    (lambda a, b: dnp.einsum("ij,j->i", a, b), (_r(2, 3), _r(3))),
], ids=["matmul", "solve", "inv", "det", "slogdet", "cholesky", "norm", "einsum"])
def test_float32_in_gives_float32_values_and_derivatives(fn, args):
    args32 = [a.astype(np.float32) for a in args]
    value = _traced_value(fn, args32)
    assert np.result_type(value) == np.float32
    assert duals.jacfwd(fn)(*args32).dtype == np.float32
    assert duals.jacrev(fn)(*args32).dtype == np.float32


def test_hessian_of_log_det_is_minus_inverse_kronecker_product():
    a = _spd(3, 3)
    H = duals.hessian(lambda m: dnp.linalg.slogdet(m)[1])(a)
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(H, -np.einsum("li,jk->ijkl", inv, inv), rtol=1e-10, atol=1e-12)

# ---------------------------------------------------------------- lanes


RULE_ARGS = {
    "matmul": (_r(2, 1, 2, 3), _r(3, 3, 2)),
    "solve": (_well(3, 3), _r(2, 3, 2)),
    "det": (_well(2, 3, 3),),
    "slogdet": (_well(3, 3),),
    "cholesky": (_spd(2, 3, 3),),
}


@pytest.mark.parametrize("name", sorted(RULE_ARGS))
def test_rules_accept_any_number_of_lane_axes(name):
    prim = duals.core.REGISTRY[name]
    args = RULE_ARGS[name]
    out = prim(*args)
    for i, x in enumerate(args):
        for kind, rule, like in (("jvp", prim.jvps[i], x), ("vjp", prim.vjps[i], out)):
            t = _r(2, 3, *np.shape(like))
            got = rule(t, out, *args)
            for lane in np.ndindex(2, 3):
                np.testing.assert_allclose(got[lane], rule(t[lane], out, *args), rtol=1e-12, atol=1e-12,
                                           err_msg=f"{name} {kind} rule of argument {i}, lane {lane}")
