"""The transformations of API.md §2: shapes, argnums, has_aux, chunking and bad input."""
import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.testing import numerical_jacobian
from finite_differences import central_differences

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3))


def model(x, y):
    return dnp.tanh(W @ x) * y[0] + y[1] ** 2


def test_jvp_returns_value_and_directional_derivative():
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    y = np.array([0.5, 1.5])
    out, t = duals.jvp(lambda x: model(x, y), (x,), (v,))
    np.testing.assert_allclose(out, model(x, y))
    np.testing.assert_allclose(t, numerical_jacobian(lambda x: model(x, y), (x,), 0) @ v, rtol=1e-6)


def test_jvp_tangent_none_marks_a_constant_argument():
    def power_steps(x, n):
        for _ in range(n):
            x = x * 1.5
        return x
    out, t = duals.jvp(power_steps, (2.0, 3), (1.0, None))
    assert out == pytest.approx(2.0 * 1.5 ** 3) and t == pytest.approx(1.5 ** 3)


def test_jvp_of_a_tuple_output_gives_tuples():
    (a, b), (ta, tb) = duals.jvp(lambda x: (x * 2.0, np.sin(x)), (0.5,), (1.0,))
    assert ta == pytest.approx(2.0) and tb == pytest.approx(np.cos(0.5))


def _residual_with_diagnostics(x, n):
    r = np.sin(x) * n
    return r, {"squared": np.sum(r ** 2), "steps": n}


@numba.njit
def _compiled_with_diagnostics(x):
    r = np.sin(x)
    return r, (x.shape[0], np.sum(r ** 2))


def test_jvp_has_aux_returns_output_tangent_and_the_aux_values_as_jax():
    x, v = np.array([0.3, -0.8]), np.array([1.0, 2.0])
    out, tangent, aux = duals.jvp(_residual_with_diagnostics, (x, 3), (v, None), has_aux=True)
    np.testing.assert_allclose(tangent, 3 * np.cos(x) * v, rtol=1e-15)
    assert aux["steps"] == 3 and type(aux["squared"]) is float and aux["squared"] == np.sum(out ** 2)
    out, tangent, aux = duals.jvp(_compiled_with_diagnostics, (x,), (v,), has_aux=True)
    np.testing.assert_allclose(tangent, np.cos(x) * v, rtol=1e-15)
    assert aux == (2, pytest.approx(np.sum(np.sin(x) ** 2), rel=1e-15))
    # an aux traced by an enclosing transformation keeps its derivative there
    assert duals.grad(lambda s: duals.jvp(lambda y: (y * y, y * s), (2.0,), (1.0,), has_aux=True)[2])(5.0) == 2.0
    for f in (lambda y: y, numba.njit(lambda y: y)):
        with pytest.raises(TypeError, match=r"jvp\(has_aux=True\): the function must return a pair"):
            duals.jvp(f, (1.0,), (1.0,), has_aux=True)


def _gaussian_nll_with_residuals(theta, y):
    r = (y - theta[0]) * np.exp(-theta[1])
    return np.sum(0.5 * r ** 2 + theta[1]), {"residuals": r, "n": y.size}


@numba.njit
def _compiled_nll_with_residuals(theta, y):
    r = (y - theta[0]) * np.exp(-theta[1])
    return np.sum(0.5 * r ** 2 + theta[1]), r


@numba.njit
def _compiled_squares_with_count(x):   # a vector output: forward over forward
    return x ** 2, x.shape[0]


def test_hessian_has_aux_returns_the_hessian_and_the_aux_values_as_jax_in_every_mode():
    theta, y = np.array([0.5, 0.1]), np.array([0.3, 1.2, -0.4, 2.0])
    r = (y - 0.5) * np.exp(-0.1)   # closed form: H = [[n w, 2 w S], [2 w S, 2 w Q]], w = e^(-2 log s)
    w, n = np.exp(-0.2), y.size
    want = np.array([[n * w, 2 * w * np.sum(y - 0.5)], [2 * w * np.sum(y - 0.5), 2 * w * np.sum((y - 0.5) ** 2)]])
    for f, kwargs in [(_gaussian_nll_with_residuals, {}), (_gaussian_nll_with_residuals, {"workers": map}),
                      (_gaussian_nll_with_residuals, {"chunk_size": 1}), (_compiled_nll_with_residuals, {}),
                      (_compiled_nll_with_residuals, {"workers": map})]:
        H, aux = duals.hessian(f, has_aux=True, **kwargs)(theta, y)
        np.testing.assert_allclose(H, want, rtol=1e-14)
        residuals = aux if f is _compiled_nll_with_residuals else aux["residuals"]
        assert type(residuals) is np.ndarray
        np.testing.assert_allclose(residuals, r, rtol=1e-15)
    H, aux = duals.jit.compiled_hessian(_compiled_nll_with_residuals, has_aux=True)(theta, y)
    np.testing.assert_allclose(H, want, rtol=1e-14)
    np.testing.assert_allclose(aux, r, rtol=1e-15)
    H, count = duals.hessian(_compiled_squares_with_count, has_aux=True)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(H, np.array([[[2.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]]]))
    assert count == 2
    # an aux traced by an enclosing transformation keeps its derivative there
    along = duals.jacfwd(lambda s: duals.hessian(_gaussian_nll_with_residuals, has_aux=True)(theta * s, y)[1]["residuals"])
    np.testing.assert_allclose(along(1.0), (-0.5 - 0.1 * (y - 0.5)) * np.exp(-0.1), rtol=1e-14)
    for f in (lambda x: np.sum(x ** 2), numba.njit(lambda x: np.sum(x ** 2))):
        with pytest.raises(TypeError, match=r"hessian\(has_aux=True\): the function must return a pair"):
            duals.hessian(f, has_aux=True)(np.ones(2))
    with pytest.raises(NotImplementedError, match="sparsity= with has_aux=True is not supported"):
        duals.hessian(_gaussian_nll_with_residuals, has_aux=True, sparsity="auto")(theta, y)


@pytest.mark.parametrize("primals,tangents,error,match", [
    ((np.ones(3),), (np.ones(2),), ValueError, r"tangent 0 has shape \(2,\) but primal 0 has shape \(3,\)"),
    ((1.0, 2.0), (1.0,), ValueError, "2 primals but 1 tangents"),
    (np.ones(3), np.ones(3), TypeError, "must be tuples"),
    ((np.array([1, 2]),), (np.array(["a", "b"]),), TypeError, "tangent 0"),
    ((np.ones(1),), (np.array([1 + 1j]),), TypeError, "tangent 0 is complex but its value is real"),
])
def test_jvp_bad_input_names_the_argument(primals, tangents, error, match):
    with pytest.raises(error, match=match):
        duals.jvp(lambda x, *rest: x, primals, tangents)


def test_floats_in_give_floats_out_and_arrays_keep_shape_and_dtype():
    assert isinstance(duals.grad(np.sin)(0.5), float)
    g = duals.grad(lambda x: np.sum(x ** 2))(np.ones(3, dtype=np.float32))
    assert g.dtype == np.float32 and g.shape == (3,)
    J = duals.jacfwd(np.sin)(np.ones((2, 3)))
    assert J.shape == (2, 3, 2, 3) and type(J) is np.ndarray


def test_integer_inputs_give_the_float_gradient():
    assert duals.grad(lambda x: x ** 3)(2) == pytest.approx(12.0)
    np.testing.assert_allclose(duals.grad(lambda x: np.sum(x ** 2))(np.arange(3)), [0.0, 2.0, 4.0])


def test_grad_of_a_non_scalar_output_says_to_use_jacrev():
    with pytest.raises(TypeError, match=r"scalar output, got shape \(3,\); use jacrev or vjp"):
        duals.grad(np.sin)(np.ones(3))


def count_above(x, level=0.5):
    """How many entries exceed ``level``: an integer, as a scientist's loss should not be."""
    return int(np.sum(x > level))


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "hvp"])
def test_an_integer_loss_is_refused_naming_what_it_returned(transform):
    x = np.array([0.3, 0.9])
    call = {"grad": lambda: duals.grad(count_above)(x),
            "value_and_grad": lambda: duals.value_and_grad(count_above)(x),
            "hvp": lambda: duals.hvp(count_above, x, x)}[transform]
    named = "hvp" if transform == "hvp" else "grad"   # value_and_grad says grad, as in its other errors
    with pytest.raises(TypeError, match=rf"^{named} requires a floating-point output, but the function "
                                        r"returned an integer \(int64\).*float\(y\)"):
        call()
    with pytest.raises(TypeError, match="returned a boolean"):
        duals.grad(lambda x: bool(x[0] > x[1]))(x)


def test_hvp_names_itself_when_the_loss_is_not_a_scalar():
    with pytest.raises(TypeError, match=r"^hvp requires a scalar output, got shape \(2,\)"):
        duals.hvp(lambda x: x ** 2, np.ones(2), np.ones(2))


def decay_misfit(p, t, data):
    r = p[0] * np.exp(-t / p[1]) - data
    return 0.5 * np.dot(r, r)


def test_hvp_called_as_jaxs_names_its_own_signature_and_that_works():
    # (viscoelastic trial) hvp(f, (p, t, data), (v,)), as JAX's cookbook writes it, said "pass the
    # arrays as separate arguments" (compiled) or spoke of jvp's tangents (Python); hvp(f, p, t, data)
    # then took t for the direction
    t = np.linspace(0.0, 3.0, 20)
    data, p, v = 2.0 * np.exp(-t / 0.7), np.array([1.8, 0.6]), np.array([1.0, 0.0])
    want = duals.hessian(decay_misfit)(p, t, data) @ v
    for f in (decay_misfit, numba.njit(decay_misfit)):
        with pytest.raises(TypeError, match=r"hvp\(f, x, v, \*args\).*duals.hvp\(f, p, v, t, data\)"):
            duals.hvp(f, (p, t, data), (v,))
        np.testing.assert_allclose(duals.hvp(f, p, v, t, data), want, rtol=1e-12)


def test_a_float_of_a_count_has_the_zero_gradient_and_jacobians_stay_zero():
    x = np.array([0.3, 0.9])
    np.testing.assert_array_equal(duals.grad(lambda x: float(count_above(x)))(x), [0.0, 0.0])
    for jac in (duals.jacfwd, duals.jacrev):   # a Jacobian of integers is zero, as in jacfwd
        np.testing.assert_array_equal(jac(count_above)(x), [0.0, 0.0])


def test_argnums_tuple_gives_a_tuple_of_gradients():
    f = lambda x, y, z: np.sum(x * y) + z  # noqa: E731
    gx, gz = duals.grad(f, argnums=(0, 2))(np.ones(2), np.array([3.0, 4.0]), 1.0)
    np.testing.assert_allclose(gx, [3.0, 4.0])
    assert gz == pytest.approx(1.0)


def test_argnums_out_of_range_is_a_clear_error():
    with pytest.raises(ValueError, match="argnums=3"):
        duals.grad(lambda x: x, argnums=3)(1.0)


def test_value_and_grad_with_aux():
    def f(x):
        return np.sum(x ** 2), {"norm": np.sqrt(np.sum(x ** 2))}
    (value, aux), g = duals.value_and_grad(f, has_aux=True)(np.array([3.0, 4.0]))
    assert value == pytest.approx(25.0) and aux["norm"] == pytest.approx(5.0)
    assert type(aux["norm"]) is not duals.Var
    np.testing.assert_allclose(g, [6.0, 8.0])


def test_vjp_gives_one_cotangent_per_primal_shaped_like_it():
    x, y = RNG.standard_normal(3), np.array([0.5, 1.5])
    out, pullback = duals.vjp(model, x, y)
    u = RNG.standard_normal(out.shape)
    gx, gy = pullback(u)
    np.testing.assert_allclose(gx, u @ numerical_jacobian(model, (x, y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, u @ numerical_jacobian(model, (x, y), 1), rtol=1e-6)


def receiver_samples(c, receivers, mask, step):
    """Samples of a field at receiver indices, the masked ones dropped, scaled by a step count."""
    return np.where(mask, c[receivers] ** 2, 0.0) / step


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "njit"])
def test_vjp_holds_integer_and_boolean_primals_constant_with_zero_cotangents(compiled):
    # (index arrays were made floats and traced, so indexing with them failed: a user trial)
    f = numba.njit(receiver_samples) if compiled else receiver_samples
    c = np.linspace(1.0, 2.0, 6)
    receivers, mask, step = np.array([1, 4, 4]), np.array([True, False, True]), 2
    y, pullback = duals.vjp(f, c, receivers, mask, step)
    np.testing.assert_array_equal(y, receiver_samples(c, receivers, mask, step))
    u = np.array([1.0, 10.0, 100.0])
    dc, d_receivers, d_mask, d_step = pullback(u)
    jacobian = central_differences(lambda x: receiver_samples(x, receivers, mask, step), [c], 0)
    np.testing.assert_allclose(dc, u @ jacobian, rtol=1e-8)
    np.testing.assert_array_equal(dc, [0.0, c[1], 0.0, 0.0, 100.0 * c[4], 0.0])   # 2 c u / 2 at the kept ones
    for held, primal in ((d_receivers, receivers), (d_mask, mask)):
        assert held.dtype == np.float64 and held.shape == primal.shape and not held.any()
    assert d_step == 0.0 and type(d_step) is float


def test_vjp_cotangent_of_the_wrong_shape_names_both_shapes():
    _, pullback = duals.vjp(np.sin, np.ones(3))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        pullback(np.ones(2))


@pytest.mark.parametrize("chunk_size", [None, 1, 2, 5])
def test_jacfwd_and_jacrev_agree_for_every_chunk_size(chunk_size):
    x, y = RNG.standard_normal(3), np.array([0.5, 1.5])
    J_fwd = duals.jacfwd(model, argnums=(0, 1), chunk_size=chunk_size)(x, y)
    J_rev = duals.jacrev(model, argnums=(0, 1), chunk_size=chunk_size)(x, y)
    for a, b, argnum in zip(J_fwd, J_rev, (0, 1)):
        assert a.shape == (4,) + (x, y)[argnum].shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a, numerical_jacobian(model, (x, y), argnum), rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_constant_output_is_zero():
    J = duals.jacrev(lambda x: np.ones(2))(np.ones(3))
    assert J.shape == (2, 3) and not J.any()
    assert duals.grad(lambda x: 1.0)(2.0) == 0.0


def test_hvp_equals_hessian_times_vector():
    f = lambda x: np.sum(np.exp(x[:-1]) * np.sin(x[1:]) ** 2)  # noqa: E731
    x, v = RNG.standard_normal(5), RNG.standard_normal(5)
    np.testing.assert_allclose(duals.hvp(f, x, v), duals.hessian(f)(x) @ v, rtol=1e-12)


def test_hvp_holds_extra_arguments_constant_as_scipy_hessp_passes_them():
    def misfit(p, S, v):
        return np.sum((p[0] * S / (p[1] + S) - v) ** 2)
    S, data = np.linspace(0.1, 5.0, 9), np.cos(np.arange(9.0))
    p, u = np.array([1.5, 1.0]), np.array([0.3, -0.7])
    H = duals.hessian(misfit)(p, S, data)
    np.testing.assert_allclose(duals.hvp(misfit, p, u, S, data), H @ u, rtol=1e-12)
    along_u = central_differences(lambda t: duals.grad(misfit)(p + t * u, S, data), [0.0], 0)
    np.testing.assert_allclose(duals.hvp(misfit, p, u, S, data), along_u, rtol=1e-6)
    np.testing.assert_allclose(duals.hvp(misfit, p, u, S, v=data), H @ u, rtol=1e-12)   # keywords too


def test_value_grad_hessian_matches_the_separate_transformations():
    f = lambda x: np.sum(np.cos(x) * x ** 3)  # noqa: E731
    x = RNG.standard_normal(4)
    value, g, H = duals.value_grad_hessian(f)(x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(g, duals.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(H, duals.hessian(f)(x), rtol=1e-12)


def test_results_are_never_library_types():
    for result in (duals.grad(np.sin)(1.0), duals.jacfwd(np.sin)(np.ones(2)),
                   duals.jacrev(np.sin)(np.ones(2)), duals.hessian(lambda x: np.sum(x ** 3))(np.ones(2)),
                   duals.jvp(np.sin, (1.0,), (1.0,))[1]):
        assert isinstance(result, (float, np.ndarray)), type(result)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
@pytest.mark.parametrize("transform", [duals.jacfwd, duals.jacrev])
def test_one_chunk_policy_refuses_a_bad_chunk_size_on_every_path(transform, bad):
    import numba
    for f in (np.sin, numba.njit(lambda x: x * 2.0)):
        with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
            transform(f, chunk_size=bad)(np.ones(3))


def test_jacfwd_in_chunks_sees_one_sample_of_numpys_global_generator():
    def noisy(x):
        return (x * (1.0 + 0.1 * np.random.normal(size=x.size))) ** 2
    x = np.linspace(-1.0, 1.0, 7)
    np.random.seed(5)
    scale = (1.0 + 0.1 * np.random.normal(size=7)) ** 2
    after_one_call = np.random.uniform()
    np.random.seed(5)
    J = duals.jacfwd(noisy, chunk_size=2)(x)        # four passes
    np.testing.assert_allclose(J, np.diag(2.0 * x * scale), rtol=1e-12, atol=1e-15)
    assert np.random.uniform() == after_one_call


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev, duals.hessian])
def test_a_masked_array_input_is_refused_not_unmasked(transform):
    """The mask was dropped: value_and_grad of sum(x**2) gave 14 where the plain call gives 10
    (a user trial)."""
    x = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(TypeError, match=r"masked array \(numpy\.ma\).*x\.filled\(value\)"):
        transform(lambda v: np.sum(v ** 2))(x)


def test_second_order_of_an_empty_input_is_empty():
    f = lambda x: np.sum(x ** 2)   # noqa: E731
    x = np.zeros(0)
    assert duals.hvp(f, x, x).shape == (0,)    # it raised an IndexError (a user trial)
    assert duals.hessian(f)(x).shape == (0, 0) and duals.grad(f)(x).shape == (0,)


def test_hessian_names_itself_in_its_errors():
    f = lambda x, y: np.sum(x * y)   # noqa: E731
    x = np.ones(2)
    with pytest.raises(TypeError, match=r"^hessian: argnums=1\.0 \(float\)"):
        duals.hessian(f, argnums=1.0)(x, x)
    with pytest.raises(ValueError, match=r"^hessian: argnums=2 refers to argument 2"):
        duals.hessian(f, argnums=2)(x, x)
    with pytest.raises(ValueError, match=r"argnums counts positional arguments only.*pass an argument positionally"):
        duals.grad(f, argnums=1)(x, y=x)
    with pytest.raises(ValueError, match=r"^hessian: chunk_size must be a positive integer"):
        duals.hessian(f, chunk_size=0)(x, x)
    with pytest.raises(TypeError, match=r"^hessian: the function returned a NoneType"):
        duals.hessian(lambda v: None)(x)


def test_copies_of_traced_values_keep_their_derivative_and_pickling_one_is_refused():
    # copy.deepcopy (to leave the caller's parameters alone), copy.copy, dataclasses.asdict: the
    # object copy carried the trace but not the recording, a silent zero derivative
    import copy
    import dataclasses
    import pickle

    @dataclasses.dataclass
    class Params:
        k: object
        c: object

    x = np.array([0.5, 1.5])
    for copied in (copy.copy, copy.deepcopy, lambda p: copy.deepcopy({"params": p, "name": "run"})["params"]):
        f = lambda p: np.sum(copied(p) ** 2)  # noqa: E731
        for transform in (duals.grad, duals.jacfwd, duals.jacrev):
            np.testing.assert_array_equal(transform(f)(x), 2 * x)
    as_dict = lambda p: (lambda d: d["k"] ** 2 * d["c"])(dataclasses.asdict(Params(k=p[0], c=p[1])))  # noqa: E731
    np.testing.assert_allclose(duals.grad(as_dict)(x), [2 * x[0] * x[1], x[0] ** 2])
    with pytest.raises(TypeError, match="a traced value cannot be pickled"):
        duals.grad(lambda p: np.sum(pickle.loads(pickle.dumps(p))))(x)
    d = duals.Dual(2.0, 1.0)   # a user's Dual and an imperative Var stay objects that pickle
    assert pickle.loads(pickle.dumps(d)).tangent == 1.0 and copy.deepcopy(d).primal == 2.0
    v = duals.Var(np.ones(2))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).value, np.ones(2))


def test_duals_numpy_reductions_take_python_lists_as_numpy_does():
    # a list's shape was read as 0-d: dnp.sum([0.1, 0.2, 0.3]) gave the list back
    for name in ("sum", "mean", "max", "min", "prod", "cumsum", "std", "var", "nansum", "nanmean",
                 "nanmax", "nanmin", "nanprod", "nanstd", "nanvar", "cumprod"):
        np.testing.assert_allclose(getattr(dnp, name)([0.1, 0.2, 0.4]), getattr(np, name)([0.1, 0.2, 0.4]))
    assert dnp.std([1.0, 2.0, 4.0], ddof=1) == np.std([1.0, 2.0, 4.0], ddof=1)
    np.testing.assert_array_equal(duals.grad(lambda p: dnp.sum([p[0] ** 2, p[1] ** 2]))(np.array([1.0, 2.0])),
                                  [2.0, 4.0])


def test_a_numpy_matrix_input_is_refused_since_its_products_would_change_meaning():
    # m * m is a matrix product for np.matrix and entry by entry for a traced array
    with pytest.raises(TypeError, match="numpy.matrix, whose \\* and \\*\\* are matrix products"):
        duals.grad(lambda m: np.sum(m * m))(np.matrix([[1.0, 2.0], [3.0, 4.0]]))


def test_a_transformed_function_pickles_as_the_transformation_of_its_function():
    # a process pool pickles what it maps: grad(f) was a closure ("Can't pickle local object")
    import pickle
    for transform in (duals.grad, duals.jacfwd, duals.jacrev, duals.hessian, duals.value_and_grad):
        made = transform(np.sin, argnums=0) if transform is not duals.value_and_grad else transform(np.sin)
        again = pickle.loads(pickle.dumps(made))
        np.testing.assert_array_equal(np.asarray(again(0.3), dtype=object), np.asarray(made(0.3), dtype=object))
        assert again.__name__ == "sin" and "sin" in repr(again)


def test_a_keyword_argument_named_like_duals_own_parameters_reaches_the_function():
    # f=3.0 collided with call_at_user_line's own parameter f
    loss = lambda y, f=1.0, call=0.0: np.sum(y ** 2) * f + call  # noqa: E731
    y = np.ones(2)
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_array_equal(transform(loss)(y, f=3.0, call=1.0), [6.0, 6.0])
    np.testing.assert_array_equal(duals.hvp(loss, y, y, f=3.0), [6.0, 6.0])
    np.testing.assert_array_equal(duals.jacfwd(lambda y: dnp.diff(y, append=[y[0], 2.0]))(y)[-2], [1.0, -1.0])
