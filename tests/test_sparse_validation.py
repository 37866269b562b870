"""The user's sparsity patterns are checked, and bad input gets an error that says what to do."""
import numba
import numpy as np
import pytest
import scipy.sparse

import duals
import duals.numpy as dnp
from duals.sparse import Sparsity

X = np.arange(1.0, 6.0)


def chain(x):
    return x[1:] * x[:-1] + dnp.sin(x[1:])


def test_a_pattern_missing_a_nonzero_raises_and_names_entries():
    lacking = np.eye(4, 5, k=1, dtype=bool)        # the (i, i) entries are missing
    for jac, where in ((duals.jacfwd, "rows"), (duals.jacrev, "columns")):
        with pytest.raises(ValueError, match=rf"misses entries .* \(in {where} .*\(0, 0\)"):
            jac(chain, sparsity=lacking)(X)


@numba.njit(cache=True)
def _chain_compiled(x):
    return x[1:] * x[:-1]


@numba.njit(cache=True)
def _block_solves(x):
    out = np.empty(x.size)
    for k in range(0, x.size, 2):
        M = np.empty((2, 2))
        M[0, 0], M[0, 1], M[1, 0], M[1, 1] = 2.0 + x[k] ** 2, 0.3, 0.3, 1.0
        r = np.linalg.solve(M, x[k:k + 2])
        out[k], out[k + 1] = r[0], r[1]
    return out


def test_a_compiled_functions_missing_entries_are_named_and_auto_advised_only_where_it_runs():
    """Compiled code got no entries named, and sparsity='auto' was advised also for code that
    detection cannot run (np.linalg.solve), where following it raised (a user trial)."""
    with pytest.raises(ValueError, match=r"misses entries .* e\.g\. \[\(0, 1\), .*pass sparsity='auto'"):
        duals.jacfwd(_chain_compiled, sparsity=np.eye(4, 5, dtype=bool))(X)
    x = np.linspace(0.1, 1.0, 6)
    with pytest.raises(ValueError, match=r"misses entries .*sparsity detection cannot run this function, "
                                         r"so sparsity='auto' cannot either") as caught:
        duals.jacfwd(_block_solves, sparsity=np.eye(6, dtype=bool))(x)
    assert "pass sparsity='auto'" not in str(caught.value)


def test_a_check_that_fails_with_no_entry_lacking_says_so_instead_of_advising_auto():
    # (cloth trial) a failed check where the detected pattern lacked nothing said "entries yours
    # lacks, e.g. []; pass sparsity='auto'", raised by sparsity='auto' itself
    from duals.sparse.api import _explain
    f = lambda x: x[1:] * x[:-1]   # noqa: E731
    x = np.linspace(1.0, 2.0, 5)
    said = _explain(f, (x,), 0, {}, duals.sparsity(f, x), "jacobian")(np.array([0]))
    assert "lacks nothing" in said and "not finite" in said and "sparsity='auto'" not in said


def test_a_missing_entry_shared_with_a_column_of_its_colour_is_caught():
    # entry (0, 2) is missing, and column 2 shares colour 0 with column 0 in the given pattern
    f = lambda x: dnp.stack([x[0] + x[2], x[1]])   # noqa: E731
    given = np.array([[1, 0, 0], [0, 1, 0]], dtype=bool)
    assert Sparsity(given).colors.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="misses entries"):
        duals.jacfwd(f, sparsity=given)(np.ones(3))


def test_a_hessian_pattern_missing_an_entry_raises():
    f = lambda x: dnp.sum(x[1:] * x[:-1] ** 2)   # noqa: E731
    with pytest.raises(ValueError, match="misses entries"):
        duals.hessian(f, sparsity=np.eye(5, dtype=bool))(X)


def test_a_pattern_detected_at_another_point_is_checked_here():
    f = lambda x: dnp.maximum(x, 0.0) * 2.0   # noqa: E731
    S = duals.sparsity(f, np.array([1.0, -1.0]))
    assert S.depends_on_values
    with pytest.raises(ValueError, match="misses entries"):
        duals.jacfwd(f, sparsity=S)(np.array([1.0, 1.0]))


def test_the_wrong_number_of_columns_raises():
    with pytest.raises(ValueError, match="has 4 columns but the input has 5 entries"):
        duals.jacfwd(chain, sparsity=np.ones((4, 4), dtype=bool))(X)


def test_the_wrong_number_of_rows_raises():
    for jac in (duals.jacfwd, duals.jacrev):
        with pytest.raises(ValueError, match="has 3 rows but the function has 4 outputs"):
            jac(chain, sparsity=np.ones((3, 5), dtype=bool))(X)


def test_a_jacobian_pattern_is_refused_for_a_hessian():
    S = duals.sparsity(chain, X)
    with pytest.raises(ValueError, match="hessian=True"):
        duals.hessian(lambda x: dnp.sum(chain(x)), sparsity=S)


def test_a_non_square_hessian_pattern_is_refused():
    with pytest.raises(ValueError, match="square"):
        duals.hessian(lambda x: dnp.sum(x * x), sparsity=np.ones((2, 3), dtype=bool))(np.ones(3))


def test_other_strings_and_types_are_refused():
    with pytest.raises(ValueError, match="'auto'"):
        duals.jacfwd(chain, sparsity="dense")(X)
    with pytest.raises(TypeError, match="scipy.sparse"):
        duals.jacfwd(chain, sparsity=3)(X)
    with pytest.raises(ValueError, match="2-D"):
        duals.jacfwd(chain, sparsity=np.ones(5, dtype=bool))(X)


def test_several_argnums_and_containers_are_refused():
    with pytest.raises(TypeError, match="one argument"):
        duals.jacfwd(lambda x, y: x * y, argnums=(0, 1), sparsity="auto")
    with pytest.raises(TypeError, match="container"):
        duals.jacfwd(lambda p: p["a"] * 2.0, sparsity="auto")({"a": X})
    with pytest.raises(TypeError, match="one output array"):
        duals.jacfwd(lambda x: (x, x), sparsity="auto")(X)


def test_scipy_sparse_patterns_of_any_format_are_accepted():
    dense = duals.jacfwd(chain)(X)
    for fmt in ("csr", "csc", "coo", "lil"):
        given = scipy.sparse.random(4, 5, density=0.0, format=fmt) + scipy.sparse.csr_array(dense != 0)
        J = duals.jacfwd(chain, sparsity=given.asformat(fmt))(X)
        np.testing.assert_allclose(J.toarray(), dense)


def test_sparse_inside_another_transformation_is_refused():
    jac = duals.jacfwd(chain, sparsity="auto")
    with pytest.raises(TypeError, match="cannot carry derivatives"):
        duals.grad(lambda x: jac(x).sum())(X)


def test_a_too_dense_pattern_says_so():
    from duals import index_sets
    old = index_sets.MAX_PAIRS
    index_sets.MAX_PAIRS = 100
    try:
        with pytest.raises(MemoryError, match="not sparse"):
            duals.sparsity(lambda x: np.outer(x, x).ravel(), np.ones(20))
    finally:
        index_sets.MAX_PAIRS = old


def test_sparsity_object_reports_its_colourings():
    S = duals.sparsity(chain, X)
    assert S.pattern.dtype == bool and S.shape == (4, 5) and S.nnz == 8
    assert S.n_colors == 2 and S.n_row_colors == 2
    assert "jacobian 4x5" in repr(S)
    union = S | Sparsity(np.eye(4, 5, dtype=bool))
    assert union.contains(S) and not S.contains(Sparsity(np.ones((4, 5), dtype=bool)))
