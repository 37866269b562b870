"""Sparsity detection of unchanged @njit code on index-set lanes, and sparse Jacobians of it."""
import math

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.sparse.index_lanes import detect_compiled


@numba.njit(cache=True)
def stencil(x):
    out = np.empty_like(x)
    n = x.size
    for i in range(n):
        out[i] = math.sin(x[i]) * x[(i + 1) % n] - 2.0 * x[i - 1] ** 2
    return out


@numba.njit(cache=True)
def branchy(x):
    out = np.empty(x.size - 1)
    for i in range(x.size - 1):
        out[i] = x[i] * 3.0 if x[i] > 0 else x[i + 1] * 2.0
    return out


@numba.njit(cache=True)
def solves(x):
    A = np.diag(x) + 1.0
    return np.linalg.solve(A, x)


@numba.njit(cache=True)
def energy(x):
    return np.sum(x[1:] * x[:-1])


def _pattern(f, x):
    return detect_compiled(f, [x], 0, False, "natural").pattern.toarray()


@pytest.mark.parametrize("n", [5, 70, 300, 1500])   # one word, four, sixteen, and two passes
def test_compiled_detection_is_the_dense_jacobians_nonzeros(n):
    x = np.linspace(0.1, 1.0, n)
    assert np.array_equal(_pattern(stencil, x), duals.jacfwd(stencil)(x) != 0)


def test_compiled_detection_matches_the_numpy_path_on_the_brusselator():
    import importlib.util
    import pathlib
    import sys
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "brusselator_sparse.py"
    spec = importlib.util.spec_from_file_location("examples_brusselator_sparse", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    model = module.Brusselator(9)
    args = (2.0, model.y0, model.N, model.alpha, model.spot)
    S = duals.sparsity(module.rhs_loop, *args, argnums=1)
    assert (S.pattern != duals.sparsity(model.rhs, 2.0, model.y0, argnums=1).pattern).nnz == 0
    J = duals.jacfwd(module.rhs_loop, argnums=1, sparsity="auto")(*args)
    np.testing.assert_allclose(J.toarray(), duals.jacfwd(model.rhs, argnums=1)(2.0, model.y0), rtol=1e-13)


def test_compiled_branches_give_the_pattern_at_the_point_and_auto_follows_the_point():
    x = np.array([1.0, -1.0, 2.0, 3.0])
    assert _pattern(branchy, x).astype(int).tolist() == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0]]
    for jac in (duals.jacfwd, duals.jacrev):
        sparse = jac(branchy, sparsity="auto")
        for point in (x, -x, np.array([-1.0, 1.0, -2.0, 3.0])):
            np.testing.assert_array_equal(sparse(point).toarray(), duals.jacfwd(branchy)(point))


def test_linear_algebra_on_index_sets_asks_for_a_pattern():
    with pytest.raises(NotImplementedError, match="linalg.solve .* pass sparsity= a pattern"):
        duals.sparsity(solves, np.ones(3))


def test_compiled_hessian_detection_asks_for_a_pattern():
    with pytest.raises(NotImplementedError, match="pass sparsity= a pattern"):
        duals.hessian(energy, sparsity="auto")(np.ones(4))
    pattern = duals.sparsity(lambda x: dnp.sum(x[1:] * x[:-1]), np.ones(4), hessian=True)
    H = duals.hessian(energy, sparsity=pattern)(np.arange(1.0, 5.0))
    np.testing.assert_allclose(H.toarray(), duals.hessian(energy)(np.arange(1.0, 5.0)))


def test_a_scalar_output_is_refused_clearly():
    with pytest.raises((TypeError, NotImplementedError), match="scalar|array output"):
        duals.sparsity(energy, np.ones(4))
