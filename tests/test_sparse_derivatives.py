"""Sparse Jacobians and Hessians (``sparsity=``) equal the dense ones: every case of the op table
(so every entry of the derivative table), the benchmark's Brusselator written with NumPy and as
an @njit loop, float32, aux outputs, non-finite derivatives, and patterns that change with the point."""
import importlib.util
import pathlib

import numba
import numpy as np
import pytest
import scipy.sparse

import duals
import duals.numpy as dnp
from op_cases import CASES

PARAMS = [pytest.param(c, i, id=f"{c.id}-arg{i}") for c in CASES for i in range(len(c.shapes))]
SMOOTH = [pytest.param(c, i, id=f"{c.id}-arg{i}") for c in CASES if c.smooth
          for i in range(len(c.shapes))]
EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "brusselator_sparse.py"


def _example():
    spec = importlib.util.spec_from_file_location("examples_brusselator_sparse", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flat(J, n):
    return np.asarray(J).reshape(-1, n)


def _same(sparse, dense, tol):
    assert isinstance(sparse, scipy.sparse.csr_array)
    assert sparse.shape == dense.shape
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=tol, atol=tol)


@pytest.mark.parametrize("case,argnum", PARAMS)
def test_sparse_jacobians_equal_the_dense_one(case, argnum):
    args = case.inputs()
    n = int(np.size(args[argnum]))
    dense = _flat(duals.jacfwd(case.fn, argnums=argnum)(*args), n)
    _same(duals.jacfwd(case.fn, argnums=argnum, sparsity="auto")(*args), dense, 1e-12)
    _same(duals.jacrev(case.fn, argnums=argnum, sparsity="auto")(*args), dense, 1e-12)


@pytest.mark.parametrize("case,argnum", SMOOTH)
def test_sparse_hessian_equals_the_dense_one(case, argnum):
    args = case.inputs()
    n = int(np.size(args[argnum]))
    f = lambda *a: dnp.sum(case.fn(*a) ** 2)   # noqa: E731  (scalar, and nonlinear even for linear ops)
    dense = _flat(duals.hessian(f, argnums=argnum)(*args), n)
    H = duals.hessian(f, argnums=argnum, sparsity="auto")(*args)
    _same(H, dense, 1e-10)
    assert (H != H.T).nnz == 0


@pytest.fixture(scope="module")
def brusselator():
    module = _example()
    model = module.Brusselator(7)
    rng = np.random.default_rng(0)
    return module, model, model.y0 + rng.uniform(0.0, 0.5, model.y0.size)


def test_brusselator_numpy_and_njit_sparse_jacobians_equal_the_dense_one(brusselator):
    module, model, y = brusselator
    args = (2.0, y, model.N, model.alpha, model.spot)
    dense = duals.jacfwd(model.rhs, argnums=1)(2.0, y)
    S = duals.sparsity(model.rhs, 2.0, y, argnums=1)
    assert np.array_equal(S.pattern.toarray(), dense != 0)
    assert S.n_colors <= 12 and not S.depends_on_values
    _same(duals.jacfwd(model.rhs, argnums=1, sparsity="auto")(2.0, y), dense, 1e-12)
    _same(duals.jacrev(model.rhs, argnums=1, sparsity=S)(2.0, y), dense, 1e-12)
    _same(duals.jacfwd(module.rhs_loop, argnums=1, sparsity=S)(*args), dense, 1e-12)
    _same(duals.jacrev(module.rhs_loop, argnums=1, sparsity=S.pattern)(*args), dense, 1e-12)


def test_hessian_of_a_brusselator_misfit_equals_the_dense_one(brusselator):
    _, model, y = brusselator
    misfit = lambda y: dnp.sum(model.rhs(2.0, y) ** 2)   # noqa: E731
    H = duals.hessian(misfit, sparsity="auto")(y)
    _same(H, duals.hessian(misfit)(y), 1e-8 * np.abs(H.data).max())


def test_float32_input_gives_a_float32_matrix():
    x = np.linspace(1.0, 2.0, 6, dtype=np.float32)
    J = duals.jacfwd(lambda x: x[1:] * x[:-1], sparsity="auto")(x)
    assert J.dtype == np.float32
    H = duals.hessian(lambda x: dnp.sum(x[1:] * x[:-1] ** 2), sparsity="auto")(x)
    assert H.dtype == np.float32


def test_aux_comes_back_with_the_sparse_jacobian():
    f = lambda x: (dnp.sin(x) * 2.0, {"norm": dnp.sum(x * x)})   # noqa: E731
    x = np.array([0.5, 1.0])
    for jac in (duals.jacfwd, duals.jacrev):
        J, aux = jac(f, has_aux=True, sparsity="auto")(x)
        np.testing.assert_allclose(J.toarray(), np.diag(2 * np.cos(x)))
        assert aux == {"norm": 1.25}


def test_matrix_shapes_flatten_in_c_order():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    f = lambda x: x.T * 2.0   # noqa: E731
    J = duals.jacfwd(f, sparsity="auto")(x)
    assert J.shape == (6, 6)
    np.testing.assert_array_equal(J.toarray(), duals.jacfwd(f)(x).reshape(6, 6))
    assert duals.jacfwd(lambda x: dnp.sum(x), sparsity="auto")(x).shape == (1, 6)


def test_a_constant_output_gives_an_empty_matrix():
    J = duals.jacfwd(lambda x: np.ones(3), sparsity="auto")(np.ones(2))
    assert J.shape == (3, 2) and J.nnz == 0


def test_infinite_derivatives_do_not_leak_into_other_columns_of_their_colour():
    L = np.diag(np.full(4, -2.0)) + np.diag(np.ones(3), 1) + np.diag(np.ones(3), -1)
    f = lambda x: L @ dnp.sqrt(x)   # noqa: E731  (sqrt'(0) = inf; 0 * inf = NaN outside the stencil)
    x = np.array([0.0, 1.0, 2.0, 3.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for jac in (duals.jacfwd, duals.jacrev):   # each mode as its dense self, NaNs included
            dense = jac(f)(x)
            assert np.isnan(dense).any() and np.isinf(dense).any()
            np.testing.assert_array_equal(jac(f, sparsity="auto")(x).toarray(), dense)


SPRINGS = np.array([[0, 1], [1, 2]])


def spring_energy(x):
    X = x.reshape(-1, 3)
    d = X[SPRINGS[:, 0]] - X[SPRINGS[:, 1]]
    length = np.sqrt(np.sum(d * d, axis=1))
    return 0.5 * np.sum(np.array([10.0, 20.0]) * (length - np.array([0.5, 0.9])) ** 2)


def test_a_sparse_hessian_with_a_nan_row_is_the_dense_one_nans_included():
    """Two coincident particles (a zero-length spring: sqrt'(0)) make their gradient rows NaN;
    the sparse Hessian mirrored them into NaN columns, over the finite entries of the other spring
    (H[6, 3] = -19.16 became NaN: a cloth trial), where the dense one keeps them."""
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.2, 0.1])
    with np.errstate(divide="ignore", invalid="ignore"):
        dense = duals.hessian(spring_energy)(x)
        sparse = duals.hessian(spring_energy, sparsity="auto")(x).toarray()
    assert np.isnan(dense[:6]).all() and np.isfinite(dense[6:]).all()
    np.testing.assert_array_equal(np.isnan(sparse), np.isnan(dense))
    np.testing.assert_allclose(sparse[6:], dense[6:], rtol=1e-14, atol=1e-14)


def test_auto_detects_again_where_the_pattern_depends_on_the_point():
    f = lambda x: dnp.maximum(x, 0.0) * x[::-1]   # noqa: E731
    jac = duals.jacfwd(f, sparsity="auto")
    for x in (np.array([1.0, -1.0, 2.0]), np.array([-1.0, 1.0, -2.0]), np.array([3.0, 2.0, 1.0])):
        np.testing.assert_array_equal(jac(x).toarray(), duals.jacfwd(f)(x))


def test_auto_detects_again_for_other_values_of_a_constant_argument():
    f = lambda x, index: x[index] * 2.0   # noqa: E731
    jac = duals.jacfwd(f, sparsity="auto")
    x = np.arange(1.0, 5.0)
    for index in (np.array([0, 1]), np.array([3, 2])):
        np.testing.assert_array_equal(jac(x, index).toarray(), duals.jacfwd(f)(x, index))


def test_a_pattern_with_extra_entries_gives_explicit_zeros():
    f = lambda x: x * 3.0   # noqa: E731
    J = duals.jacfwd(f, sparsity=np.ones((3, 3), dtype=bool))(np.ones(3))
    np.testing.assert_array_equal(J.toarray(), 3.0 * np.eye(3))
    assert J.nnz == 9


def test_user_hessian_pattern_given_as_upper_triangle_is_made_symmetric():
    f = lambda x: dnp.sum(x[1:] * x[:-1])   # noqa: E731
    upper = np.eye(4, k=1, dtype=bool) | np.eye(4, dtype=bool)
    H = duals.hessian(f, sparsity=scipy.sparse.csr_array(upper))(np.ones(4))
    np.testing.assert_array_equal(H.toarray(), duals.hessian(f)(np.ones(4)))


@numba.njit(cache=True)
def _chain_loop(x):
    out = np.empty(x.size - 1)
    for i in range(x.size - 1):
        out[i] = x[i] * np.sin(x[i + 1])
    return out


@numba.njit(cache=True)
def _chain_energy(x):
    s = 0.0
    for i in range(x.size - 1):
        s += x[i] ** 2 * x[i + 1]
    return s


def test_compiled_function_with_a_given_pattern():
    x = np.linspace(0.5, 1.5, 7)
    S = duals.sparsity(lambda x: x[:-1] * dnp.sin(x[1:]), x)
    dense = duals.jacfwd(_chain_loop)(x)
    _same(duals.jacfwd(_chain_loop, sparsity=S)(x), dense, 1e-14)
    _same(duals.jacrev(_chain_loop, sparsity=S)(x), dense, 1e-14)
    HS = duals.sparsity(lambda x: dnp.sum(x[:-1] ** 2 * x[1:]), x, hessian=True)
    _same(duals.hessian(_chain_energy, sparsity=HS)(x), duals.hessian(_chain_energy)(x), 1e-13)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("sparsity", ["auto", "given"])
def test_every_call_starts_from_the_arguments_the_first_did(compiled, sparsity):
    # (a function that reverses an argument in place: detection, passes and the check each saw
    # another order, and "auto" returned a wrong Jacobian; a user trial)
    import workers_helpers as h
    sweep = h.compiled_alternating_sweep if compiled else h.alternating_sweep
    energy = h.compiled_alternating_energy if compiled else h.alternating_energy
    x = np.linspace(0.1, 1.2, 8)
    full = "auto" if sparsity == "auto" else np.ones((8, 8), dtype=bool)
    dense = duals.jacfwd(sweep, chunk_size=2)(x, np.arange(8))
    for jac in (duals.jacfwd, duals.jacrev):
        order = np.arange(8)
        np.testing.assert_allclose(jac(sweep, sparsity=full, chunk_size=2)(x, order).toarray(), dense,
                                   rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(order, np.arange(8)[::-1])   # where one plain call leaves it
    np.testing.assert_allclose(duals.hessian(energy, sparsity=full)(x, np.arange(8)).toarray(),
                               duals.hessian(energy)(x, np.arange(8)), rtol=1e-12, atol=1e-12)
