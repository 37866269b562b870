"""Reading compressed lanes back: the compiled loops, the lanes read in place in a compiled output,
the check lane on every path, non-finite lanes, and matrices that share nothing with the cache."""
import math
import pickle

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.sparse import Sparsity
from test_sparse_derivatives import _chain_loop as chain_loop


def chain(x):
    return x[:-1] * dnp.sin(x[1:])


@numba.njit(cache=True)
def sqrt_stencil(x):   # sqrt'(0) = inf, and 0 * inf = NaN in the rows outside the stencil
    r = np.sqrt(x)
    out = np.empty_like(x)
    n = x.size
    for i in range(n):
        out[i] = -2.0 * r[i] + (r[i - 1] if i > 0 else 0.0) + (r[i + 1] if i + 1 < n else 0.0)
    return out


@numba.njit(cache=True)
def transposed_output(x):   # an output that is not one C-ordered block
    out = np.empty((3, x.size // 3))
    for i in range(x.size):
        out[i % 3, i // 3] = x[i] * x[(i + 1) % x.size]
    return out.T


@numba.njit(cache=True)
def wide(x):   # each output reads twenty inputs: twenty colours and more, several compiled calls
    out = np.empty_like(x)
    n = x.size
    for i in range(n):
        s = 0.0
        for j in range(20):
            s += math.sin(x[(i + j) % n])
        out[i] = s * x[i]
    return out


X = np.linspace(0.5, 1.5, 9)


def _dense(f, x):
    return duals.jacfwd(f)(x).reshape(-1, x.size)


def test_a_given_pattern_missing_an_entry_of_compiled_code_raises_on_both_sides():
    lacking = np.eye(8, 9, k=1, dtype=bool)          # the (i, i) entries are missing
    for jac, where in ((duals.jacfwd, "rows"), (duals.jacrev, "columns")):
        with pytest.raises(ValueError, match=rf"misses entries .* \(in {where} \[0, 1, 2"):
            jac(chain_loop, sparsity=lacking)(X)


def test_a_given_pattern_of_compiled_code_with_extra_entries_is_the_dense_jacobian():
    given = np.eye(8, 9, dtype=bool) | np.eye(8, 9, k=1, dtype=bool) | np.eye(8, 9, k=2, dtype=bool)
    for jac in (duals.jacfwd, duals.jacrev):
        J = jac(chain_loop, sparsity=given)(X)
        assert J.nnz == given.sum()
        np.testing.assert_array_equal(J.toarray(), _dense(chain_loop, X))


def test_compiled_infinite_derivatives_do_not_leak_into_other_columns_of_their_colour():
    x = np.array([0.0, 1.0, 2.0, 0.0, 3.0, 4.0])
    sparse = duals.jacfwd(sqrt_stencil, sparsity="auto")
    with np.errstate(divide="ignore", invalid="ignore"):
        dense = duals.jacfwd(sqrt_stencil)(x)
        assert np.isnan(dense).any() and np.isinf(dense).any()
        for _ in range(2):                            # detected, then reused and checked
            np.testing.assert_array_equal(sparse(x).toarray(), dense)


@numba.njit(cache=True)
def spring_loop(x, rest, k):
    energy = 0.0
    for s in range(2):
        a, b = 3 * s, 3 * s + 3
        dx, dy, dz = x[a] - x[b], x[a + 1] - x[b + 1], x[a + 2] - x[b + 2]
        energy += 0.5 * k[s] * (math.sqrt(dx * dx + dy * dy + dz * dz) - rest[s]) ** 2
    return energy


def test_a_compiled_sparse_hessian_with_a_nan_row_is_the_dense_one_nans_included():
    # (cloth trial) two coincident particles: hessian(sparsity="auto") raised PatternMismatch on its
    # first call ("entries yours lacks, e.g. []; pass sparsity='auto'"): the NaN rows mirrored into
    # columns made the finite rows of the other spring NaN, which its check lane is not
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.2, 0.1])
    rest, k = np.array([0.5, 0.9]), np.array([10.0, 20.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        dense = duals.hessian(spring_loop)(x, rest, k)
        sparse = duals.hessian(spring_loop, sparsity="auto")
        for _ in range(2):                            # detected, then reused and checked
            got = sparse(x, rest, k).toarray()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(dense))
            np.testing.assert_allclose(got[6:], dense[6:], rtol=1e-14, atol=1e-14)
    assert np.isnan(dense[:6]).all() and np.isfinite(dense[6:]).all()


def test_compiled_jacrev_of_infinite_derivatives_is_one_pullback_per_row_dense_or_sparse():
    """A row's pullback gives the exact 0 where the row does not depend on a column whose
    derivative is infinite (not 0 * inf = NaN); the dense compiled jacrev, whose rows share one
    sweep, and the sparse one, whose rows share colours, give the same."""
    x = np.array([0.0, 1.0, 2.0, 0.0, 3.0, 4.0])
    sparse = duals.jacrev(sqrt_stencil, sparsity="auto")
    with np.errstate(divide="ignore", invalid="ignore"):
        _, pull = duals.vjp(sqrt_stencil, x)
        rows = np.array([pull(e)[0] for e in np.eye(x.size)])
        assert np.isinf(rows).any() and (rows == 0).any()
        np.testing.assert_array_equal(duals.jacrev(sqrt_stencil)(x), rows)
        for _ in range(2):                            # detected, then reused and checked
            np.testing.assert_array_equal(sparse(x).toarray(), rows)


def test_lanes_of_an_output_that_is_not_one_block_are_read_from_a_copy():
    x = np.linspace(0.1, 1.2, 12)
    sparse = duals.jacfwd(transposed_output, sparsity="auto")
    for _ in range(2):
        np.testing.assert_array_equal(sparse(x).toarray(), _dense(transposed_output, x))


def test_more_colours_than_one_compiled_call_holds():
    x = np.linspace(0.1, 2.0, 40)
    sparse = duals.jacfwd(wide, sparsity="auto")
    assert duals.sparsity(wide, x).n_colors + 1 > 16
    for _ in range(2):
        np.testing.assert_allclose(sparse(x).toarray(), _dense(wide, x), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("f", [chain, chain_loop], ids=["numpy", "njit"])
def test_the_matrix_shares_no_array_with_the_pattern_or_the_next_matrix(f):
    S = duals.sparsity(chain, X)
    before = S.pattern.copy()
    for jac in (duals.jacfwd, duals.jacrev):
        sparse = jac(f, sparsity=S)
        J = sparse(X)
        expected = J.toarray()
        J.data[:4] = 0.0
        J.eliminate_zeros()                           # rewrites indices and indptr in place
        J.indices[:] = 0
        np.testing.assert_array_equal(sparse(X).toarray(), expected)
        assert (S.pattern != before).nnz == 0


@pytest.mark.parametrize("jac", [duals.jacfwd, duals.jacrev], ids=["jacfwd", "jacrev"])
def test_the_matrix_is_a_valid_canonical_csr_array(jac):
    J = jac(chain_loop, sparsity="auto")(X)
    J.check_format(full_check=True)
    assert J.has_canonical_format and J.dtype == np.float64
    again = J.copy()
    again.has_canonical_format = False
    again.sum_duplicates()
    np.testing.assert_array_equal(again.indices, J.indices)
    dense = _dense(chain_loop, X)
    np.testing.assert_allclose(J @ X, dense @ X, rtol=1e-15)
    np.testing.assert_array_equal(J.tocsc().toarray(), dense)
    np.testing.assert_array_equal((J + J).toarray(), 2.0 * dense)


def test_a_constant_array_changed_in_place_is_seen():
    f = lambda x, index: x[index] * 2.0   # noqa: E731
    jac = duals.jacfwd(f, sparsity="auto")
    x, index = np.arange(1.0, 5.0), np.array([0, 1])
    np.testing.assert_array_equal(jac(x, index).toarray(), _dense(lambda x: f(x, index), x))
    index[:] = [3, 2]
    np.testing.assert_array_equal(jac(x, index).toarray(), _dense(lambda x: f(x, index), x))


def test_a_user_pattern_given_once_is_checked_at_each_point():
    f = lambda x: dnp.maximum(x, 0.0) * 2.0   # noqa: E731
    S = Sparsity(np.eye(2, dtype=bool) * np.array([True, False]))
    jac = duals.jacfwd(f, sparsity=S)
    np.testing.assert_array_equal(jac(np.array([1.0, -1.0])).toarray(), [[2.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"misses entries .* \(in rows \[1\]"):
        jac(np.array([1.0, 1.0]))


def test_a_pickled_pattern_leaves_its_layouts_behind_and_still_serves():
    S = duals.sparsity(chain, X)
    J = duals.jacfwd(chain_loop, sparsity=S)(X)
    assert S._layouts
    again = pickle.loads(pickle.dumps(S))
    assert not again._layouts and len(pickle.dumps(S)) == len(pickle.dumps(again))
    np.testing.assert_array_equal(duals.jacfwd(chain_loop, sparsity=again)(X).toarray(), J.toarray())
