"""SciPy takes the sparse Jacobians: solve_ivp(method="BDF", jac=...) on the 2-D Brusselator and
least_squares(jac=...) on a large residual, against SciPy's own grouped finite differences."""
import importlib.util
import pathlib

import numpy as np
import scipy.sparse
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

import duals
import duals.numpy as dnp

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "brusselator_sparse.py"


def _example():
    spec = importlib.util.spec_from_file_location("examples_brusselator_sparse", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bdf_with_the_duals_sparse_jacobian_matches_scipys_finite_differences():
    module = _example()
    model = module.Brusselator(8)
    jac = duals.jacfwd(model.rhs, argnums=1, sparsity="auto")
    pattern = duals.sparsity(model.rhs, 0.0, model.y0, argnums=1).pattern
    rtol, atol = 1e-6, 1e-8
    ours = solve_ivp(model.rhs, (0.0, 11.5), model.y0, method="BDF", jac=jac, rtol=rtol, atol=atol)
    theirs = solve_ivp(model.rhs, (0.0, 11.5), model.y0, method="BDF", jac_sparsity=pattern,
                       rtol=rtol, atol=atol)
    assert ours.success and theirs.success
    assert isinstance(jac(1.0, model.y0), scipy.sparse.csr_array)
    gap = np.abs(ours.y[:, -1] - theirs.y[:, -1]) / (atol + rtol * np.abs(theirs.y[:, -1]))
    assert gap.max() < 100
    # the exact Jacobian needs no more Jacobian evaluations than the finite-difference one
    assert ours.njev <= theirs.njev + 2


def broyden_tridiagonal(x):
    """Broyden's tridiagonal residual (Moré, Garbow and Hillstrom 1981), zero ends."""
    padded = dnp.concatenate([np.zeros(1), x, np.zeros(1)])
    return (3.0 - 2.0 * x) * x - padded[:-2] - 2.0 * padded[2:] + 1.0


def test_least_squares_on_a_large_residual_with_the_sparse_jacobian():
    n = 5000
    x0 = -np.ones(n)
    jac = duals.jacrev(broyden_tridiagonal, sparsity="auto")
    J0 = jac(x0)
    assert J0.shape == (n, n) and J0.nnz == 3 * n - 2
    ours = least_squares(broyden_tridiagonal, x0, jac=jac, method="trf", tr_solver="lsmr")
    theirs = least_squares(broyden_tridiagonal, x0, jac_sparsity=J0 != 0, method="trf",
                           tr_solver="lsmr")
    assert ours.success and ours.cost < 1e-12
    np.testing.assert_allclose(ours.x, theirs.x, atol=1e-6)
    assert ours.nfev <= theirs.nfev
