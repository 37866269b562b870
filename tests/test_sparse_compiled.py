"""Sparsity detection of unchanged @njit code on index-set lanes, and sparse Jacobians and Hessians of it."""
import math

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.sparse.index_lanes import detect_bits, detect_compiled
from duals.sparse.pair_slots import detect_pair_slots
from duals.sparse.slot_lanes import SLOTS, detect_slots


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


@numba.njit(cache=True)
def composition(x, idx, ops):   # output i combines the inputs idx[i] (-1: none) by the ops ops[i]
    out = np.empty(idx.shape[0])
    for i in range(idx.shape[0]):
        acc = 0.0
        for k in range(idx.shape[1]):
            j = idx[i, k]
            if j < 0:
                continue
            if ops[i, k] == 0:
                acc = acc + x[j]
            elif ops[i, k] == 1:
                acc = acc * x[j] - x[j]
            elif ops[i, k] == 2:
                acc = math.sin(acc - 2.0 * x[j])
            else:
                acc = max(acc, x[j])
        out[i] = acc
    return out


def _composition(rng, m, n, most):
    idx = np.full((m, most), -1)
    for i in range(m):
        k = rng.integers(0, most + 1)
        idx[i, :k] = rng.integers(0, n, k)            # repeats too
    expected = np.zeros((m, n), dtype=bool)
    for i, row in enumerate(idx):
        expected[i, row[row >= 0]] = True
    return idx, rng.integers(0, 4, idx.shape), expected


def _as_matrix(found, n):
    if len(found) == 2:                                  # compressed rows
        indptr, cols = found
        rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
        m = indptr.size - 1
    else:
        rows, cols, m = found
    P = np.zeros((m, n), dtype=bool)
    P[rows, cols] = True
    return P


@pytest.mark.parametrize("n", [7, 3000])
def test_slot_detection_is_the_exact_pattern_and_the_bits_one(n):
    rng = np.random.default_rng(n)
    idx, ops, expected = _composition(rng, 60, n, SLOTS + 3)   # repeats keep most sets within the slots
    idx[expected.sum(axis=1) > SLOTS] = -1
    expected[expected.sum(axis=1) > SLOTS] = False
    x = rng.uniform(0.1, 1.0, n)
    args = [x, idx, ops]
    np.testing.assert_array_equal(_as_matrix(detect_slots(composition, args, 0), n), expected)
    np.testing.assert_array_equal(_as_matrix(detect_bits(composition, args, 0), n), expected)
    J = duals.jacfwd(composition)(*args)
    assert not (J != 0)[~expected].any()


def test_an_output_past_the_slots_is_detected_with_bits():
    n = 40
    idx = np.arange(n).reshape(4, 10)                    # ten distinct inputs per output
    ops = np.zeros_like(idx)
    args = [np.ones(n), idx, ops]
    assert detect_slots(composition, args, 0) is None
    expected = np.repeat(np.eye(4, dtype=bool), 10, axis=1)
    np.testing.assert_array_equal(duals.sparsity(composition, *args).pattern.toarray(), expected)


def test_sixteen_slots_serve_past_eight_where_bits_would_take_several_runs():
    n = 1100
    idx = (np.arange(n)[:, None] + np.arange(12)[None, :]) % n   # twelve inputs per output
    args = [np.ones(n), idx, np.zeros_like(idx)]
    assert detect_slots(composition, args, 0) is None
    assert detect_slots(composition, args, 0, slots=16) is not None
    expected = np.zeros((n, n), dtype=bool)
    expected[np.arange(n)[:, None], idx] = True
    np.testing.assert_array_equal(duals.sparsity(composition, *args).pattern.toarray(), expected)


def test_a_set_past_the_slots_that_no_output_keeps_does_not_matter():
    f = numba.njit(lambda x: np.array([math.floor(np.sum(x)) + x[0], x[1]]))
    assert _as_matrix(detect_slots(f, [np.ones(12)], 0), 12).astype(int).tolist() == [
        [1] + [0] * 11, [0, 1] + [0] * 10]


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


# a stoichiometric matrix (a chemistry box model's right-hand side is S @ rates)
STOICHIOMETRY = np.array([[-1.0, 1.0, 0.0, 0.0], [1.0, -1.0, -1.0, 0.0], [0.0, 0.0, 1.0, -2.0],
                          [0.0, 0.0, 0.0, 1.0]])


@numba.njit(cache=True)
def box_model(y, k):
    rates = k * np.array([y[0], y[1], y[1] * y[2], y[2] * y[2] * y[3]])
    return STOICHIOMETRY @ rates


def box_model_numpy(y, k):
    return STOICHIOMETRY @ (k * dnp.array([y[0], y[1], y[1] * y[2], y[2] * y[2] * y[3]]))


def test_a_product_with_a_constant_matrix_is_detected_through_its_nonzeros():
    # it was refused ("no implementation of _impl(... SlotDual[8] ...)"; an atmospheric-chemistry
    # trial); the constant's exact zeros carry no dependency, as on the NumPy path
    y, k = np.array([1.0, 0.5, 0.2, 0.3]), np.array([0.04, 3e7, 1e4, 2.0])
    want = duals.sparsity(box_model_numpy, y, k).pattern.toarray()
    assert not want.all()
    np.testing.assert_array_equal(duals.sparsity(box_model, y, k).pattern.toarray(), want)
    dense = duals.jacfwd(box_model)(y, k)
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_array_equal(transform(box_model, sparsity="auto")(y, k).toarray(), dense)
    loss = numba.njit(lambda y, k: np.sum(box_model(y, k) ** 2))
    np.testing.assert_array_equal(duals.sparsity(loss, y, k, hessian=True).pattern.toarray(),
                                  duals.sparsity(lambda y, k: dnp.sum(box_model_numpy(y, k) ** 2), y, k,
                                                 hessian=True).pattern.toarray())


@numba.njit(cache=True)
def rosenbrock_chain(x):
    s = 0.0
    for i in range(x.size - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_chain_numpy(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit(cache=True)
def grid_energy(u):   # a 2-D periodic Dirichlet energy with a nonlinear potential
    n, m = u.shape
    e = 0.0
    for i in range(n):
        for j in range(m):
            dx = u[(i + 1) % n, j] - u[i, j]
            dy = u[i, (j + 1) % m] - u[i, j]
            e += 0.5 * (dx * dx + dy * dy) + 0.25 * u[i, j] ** 4 - math.cos(u[i, j])
    return e


def grid_energy_numpy(u):
    dx = dnp.roll(u, -1, axis=0) - u
    dy = dnp.roll(u, -1, axis=1) - u
    return dnp.sum(0.5 * (dx * dx + dy * dy) + 0.25 * u ** 4 - dnp.cos(u))


@numba.njit(cache=True)
def band_pairs(x):   # pairwise terms within a band of width 2
    e = 0.0
    for i in range(x.size):
        for k in (1, 2):
            if i + k < x.size:
                e += math.exp(-(x[i] - x[i + k]) ** 2) * x[i]
    return e


def band_pairs_numpy(x):
    return (dnp.sum(dnp.exp(-(x[:-1] - x[1:]) ** 2) * x[:-1])
            + dnp.sum(dnp.exp(-(x[:-2] - x[2:]) ** 2) * x[:-2]))


@numba.njit(cache=True)
def rod_energy(x):   # a 1-D chain: springs between neighbours, a quartic on site, and the square
    e = 0.0          # of the sum of the first twelve (a set past the slots: detected on bits)
    for i in range(x.size - 1):
        e += (x[i + 1] - x[i]) ** 2 + 0.1 * x[i] ** 4
    return e + np.sum(x[:12]) ** 2


@numba.njit(cache=True)
def branchy_energy(x):
    e = 0.0
    for i in range(x.size - 1):
        e += x[i] * x[i + 1] if x[i] > 0 else x[i] ** 3
    return e


HESSIAN_CASES = [(rosenbrock_chain, rosenbrock_chain_numpy, (9,)),
                 (grid_energy, grid_energy_numpy, (5, 4)),
                 (band_pairs, band_pairs_numpy, (8,))]


@pytest.mark.parametrize("f, numpy_f, shape", HESSIAN_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_compiled_hessian_pattern_is_the_numpy_paths_and_the_dense_hessians_nonzeros(f, numpy_f, shape):
    x = np.random.default_rng(3).uniform(0.2, 1.0, shape)
    S = duals.sparsity(f, x, hessian=True)
    assert S.kind == "hessian" and S.shape == (x.size, x.size)
    assert (S.pattern != duals.sparsity(numpy_f, x, hessian=True).pattern).nnz == 0
    dense = duals.hessian(f)(x).reshape(x.size, x.size)
    np.testing.assert_array_equal(S.pattern.toarray(), dense != 0)


@pytest.mark.parametrize("f, numpy_f, shape", HESSIAN_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_compiled_sparse_hessian_auto_is_the_dense_hessian(f, numpy_f, shape):
    x = np.random.default_rng(4).uniform(-1.0, 1.0, shape)
    H = duals.hessian(f, sparsity="auto")(x)
    assert H.format == "csr" and H.shape == (x.size, x.size)
    np.testing.assert_allclose(H.toarray(), duals.hessian(f)(x).reshape(x.size, x.size), rtol=1e-13, atol=0)


@pytest.mark.parametrize("n", [30, 1100])   # bits in one run, and in three (pairs of 512-input blocks)
def test_compiled_hessian_past_the_slots_is_detected_with_bits(n):
    x = np.random.default_rng(5).uniform(0.2, 1.0, n)
    assert detect_pair_slots(rod_energy, [x], 0) is None
    expected = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1
    expected[:12, :12] = True
    np.testing.assert_array_equal(duals.sparsity(rod_energy, x, hessian=True).pattern.toarray(), expected)


def test_compiled_hessian_slots_list_every_pair_once():
    x = np.random.default_rng(6).uniform(0.2, 1.0, (6, 5))
    indptr, indices, value = detect_pair_slots(grid_energy, [x], 0)
    assert value == pytest.approx(grid_energy(x))
    P = _as_matrix((indptr, indices), x.size)
    assert np.array_equal(P, P.T)
    for r in range(x.size):
        row = indices[indptr[r]:indptr[r + 1]]
        assert (np.diff(row) > 0).all()
    np.testing.assert_array_equal(P, duals.sparsity(grid_energy_numpy, x, hessian=True).pattern.toarray())


def test_compiled_hessian_branches_give_the_pattern_at_the_point_and_auto_follows_the_point():
    x = np.array([1.0, -1.0, 2.0, 3.0])
    S = duals.sparsity(branchy_energy, x, hessian=True)
    assert S.pattern.toarray().astype(int).tolist() == [[0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
    sparse = duals.hessian(branchy_energy, sparsity="auto")
    for point in (x, -x, np.array([-1.0, 1.0, -2.0, 3.0])):
        np.testing.assert_array_equal(sparse(point).toarray(), duals.hessian(branchy_energy)(point))


def test_compiled_hessian_pattern_keeps_the_pairs_of_values_the_output_does_not_use():
    @numba.njit
    def unused(x):
        waste = x[0] * x[1]   # noqa: F841  computed, never used: its pair stays in the pattern
        return x[2] ** 3
    P = duals.sparsity(unused, np.ones(3), hessian=True).pattern.toarray()
    assert P.astype(int).tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]


def test_compiled_hessian_of_a_vector_output_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="a Hessian needs a scalar output"):
        duals.sparsity(stencil, np.ones(4), hessian=True)
    pattern = duals.sparsity(lambda x: dnp.sum(x[1:] * x[:-1]), np.ones(4), hessian=True)
    H = duals.hessian(energy, sparsity=pattern)(np.arange(1.0, 5.0))
    np.testing.assert_allclose(H.toarray(), duals.hessian(energy)(np.arange(1.0, 5.0)))


def test_a_scalar_output_is_refused_clearly():
    with pytest.raises((TypeError, NotImplementedError), match="scalar|array output"):
        duals.sparsity(energy, np.ones(4))


@numba.njit
def spring_forces(u, elements):     # assembly over a connectivity table: an integer argument
    r = np.zeros(u.size)
    for e in range(elements.shape[0]):
        a, b = elements[e, 0], elements[e, 1]
        k = (u[b] - u[a]) ** 3
        r[a] -= k
        r[b] += k
    return r


def test_sparse_jacrev_of_a_kernel_with_an_index_table_argument():
    """The recording took the integer table for an input and promoted it to adjoints, so the
    kernel's own indexing failed, blamed on the kernel (a user trial)."""
    u = np.linspace(0.1, 0.9, 6) ** 2
    elements = np.array([[i, i + 1] for i in range(5)])
    dense = duals.jacfwd(spring_forces)(u, elements)
    for sparsity in ("auto", duals.sparsity(spring_forces, u, elements)):
        np.testing.assert_allclose(duals.jacrev(spring_forces, sparsity=sparsity)(u, elements).toarray(),
                                   dense, rtol=1e-14, atol=1e-14)
