"""Sparsity detection (duals.dependencies): every primitive has a rule, and the detected pattern
holds every non-zero of the dense Jacobian, on every case of the op table and on random sparse
compositions; where nothing is decided by value it is exactly the structural pattern."""
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.core import REGISTRY
from duals.dependencies import detect
from duals.extend import primitive
from op_cases import CASES

PARAMS = [pytest.param(c, i, id=f"{c.id}-arg{i}") for c in CASES for i in range(len(c.shapes))]


def _pattern(sets):
    P = np.zeros((sets.size, sets.n), dtype=bool)
    for row, columns in enumerate(sets.to_lists()):
        P[row, columns] = True
    return P


def _dense(f, args, argnum):
    J = np.asarray(duals.jacfwd(f, argnums=argnum)(*args))
    return J.reshape(-1, int(np.size(args[argnum])))


def test_every_registered_primitive_has_a_sparsity_rule():
    lacking = sorted(name for name, p in REGISTRY.items() if p.sparsity is None)
    assert not lacking, f"primitives without a sparsity rule (Primitive.def_sparsity): {lacking}"


@pytest.mark.parametrize("case,argnum", PARAMS)
def test_detected_pattern_holds_every_nonzero_of_the_dense_jacobian(case, argnum):
    args = case.inputs()
    sets, _ = detect(case.fn, args, argnum)
    P, J = _pattern(sets), _dense(case.fn, args, argnum)
    assert P.shape == J.shape
    missing = np.argwhere((J != 0) & ~P)
    assert not missing.size, f"{case.name}: entries non-zero but not in the pattern: {missing[:5].tolist()}"


def _random_composition(rng, n):
    """A random sparse function of x (n,) -> (n,) and the steps it took, built from gathers,
    stencils, constant sparse matrices, reductions broadcast back and element-wise functions."""
    steps = []
    for _ in range(rng.integers(2, 6)):
        kind = rng.integers(6)
        if kind == 0:
            perm = rng.permutation(n)
            steps.append(lambda z, perm=perm: z[perm])
        elif kind == 1:
            shift = int(rng.integers(1, n))
            steps.append(lambda z, s=shift: z * dnp.roll(z, s))
        elif kind == 2:
            M = rng.normal(size=(n, n)) * (rng.random((n, n)) < 2.0 / n)
            steps.append(lambda z, M=M: M @ z + z)
        elif kind == 3:
            k = int(rng.integers(1, n))
            steps.append(lambda z, k=k: dnp.concatenate([dnp.sin(z[:k]), dnp.exp(z[k:]) * dnp.sum(z[:2])]))
        elif kind == 4:
            steps.append(lambda z: dnp.tanh(z) + dnp.cumsum(z[::-1])[::-1] * 0.1)
        else:
            idx = rng.integers(0, n, size=n)
            steps.append(lambda z, idx=idx: z[idx] ** 2 + z)

    def f(x):
        for step in steps:
            x = step(x)
        return x
    return f


@pytest.mark.parametrize("seed", range(12))
def test_pattern_of_random_sparse_compositions_is_the_dense_jacobians_nonzeros(seed):
    rng = np.random.default_rng(seed)
    n = 9
    f = _random_composition(rng, n)
    x = rng.uniform(0.5, 1.5, n)
    sets, by_value = detect(f, (x,), 0)
    assert not by_value
    P, J = _pattern(sets), _dense(f, (x,), 0)
    assert not ((J != 0) & ~P).any()
    # generic values: no entry of the structural pattern cancels to an exact zero
    assert np.array_equal(P, J != 0)


def test_pattern_is_structural_where_a_value_is_zero():
    x = np.array([0.0, 1.0, 2.0])
    sets, by_value = detect(lambda x: x * x, (x,), 0)   # 2x is 0 at x = 0: still a dependency
    assert sets.to_lists() == [[0], [1], [2]] and not by_value


def test_a_partial_that_is_literally_zero_in_the_table_gives_no_dependency():
    sets, _ = detect(lambda x: np.sign(x) + np.floor_divide(x, 2.0), (np.array([1.0, -2.0]),), 0)
    assert sets.to_lists() == [[], []]


def test_maximum_depends_on_the_selected_side_at_the_point_and_says_so():
    x = np.array([-1.0, 2.0, 0.0])
    sets, by_value = detect(lambda x: np.maximum(x, 0.0) + np.maximum(x[::-1], x), (x,), 0)
    assert by_value
    # entry 0: 0 wins over x[0] = -1, and x[2] = 0 over x[0]; entry 2 ties max(x[2], 0) (both
    # sides, split evenly) and x[2] = 0 beats x[0] = -1
    assert sets.to_lists() == [[2], [1], [2]]


def test_comparisons_and_bool_mark_the_pattern_as_decided_by_value():
    assert detect(lambda x: dnp.where(x > 0, x, 0.0), (np.ones(2),), 0)[1]
    assert detect(lambda x: x if x[0] > 0 else -x, (np.ones(2),), 0)[1]
    assert detect(lambda x: x[np.argmax(x)], (np.array([1.0, 3.0]),), 0)[1]


# branches decided on values that leave the trace as plain arrays (derivative zero): the pattern
# must still be marked as this point's, or "auto" reuses it where the branch flips (a user trial)
PLAIN_DECISIONS = {
    "sign": lambda u: np.sign(u) > 0,
    "floor_divide": lambda u: u // 1.0 >= 0,
    "divmod": lambda u: np.divmod(u, 1.0)[0] >= 0,
    "copysign": lambda u: np.copysign(1.0, u) > 0,
    "stop_gradient": lambda u: duals.stop_gradient(u) > 0,
}


@pytest.mark.parametrize("name", sorted(PLAIN_DECISIONS))
def test_a_decision_on_a_plain_result_of_traced_values_is_by_value(name):
    decide = PLAIN_DECISIONS[name]

    def upwind(u):
        return dnp.where(decide(u), u * (u - dnp.roll(u, 1)), u * (dnp.roll(u, -1) - u))
    u = np.sin(np.linspace(0.0, 2 * np.pi, 8, endpoint=False)) + 0.1
    assert detect(upwind, (u,), 0)[1]
    for jac in (duals.jacfwd, duals.jacrev):
        auto = jac(upwind, sparsity="auto")
        for point in (u, -u):      # every upwind direction flips
            np.testing.assert_allclose(auto(point).toarray(), jac(upwind)(point), rtol=1e-15, atol=1e-15)


def test_arrays_shaped_like_a_traced_value_do_not_read_it():
    for like in (np.zeros_like, np.ones_like, np.empty_like, lambda u: np.full_like(u, 2.0)):
        assert not detect(lambda u: like(u) * 0.0 + u[::-1], (np.ones(3),), 0)[1]


def test_a_constant_mask_is_not_a_decision_by_value():
    mask = np.array([True, False, True])
    sets, by_value = detect(lambda x: dnp.where(mask, x, 2.0 * x[::-1]), (np.ones(3),), 0)
    assert not by_value and sets.to_lists() == [[0], [1], [2]]


def test_matmul_skips_the_exact_zeros_of_a_constant_matrix():
    L = np.diag(np.full(5, -2.0)) + np.diag(np.ones(4), 1) + np.diag(np.ones(4), -1)
    sets, _ = detect(lambda u: L @ np.sin(u), (np.ones(5),), 0)
    assert np.array_equal(_pattern(sets), L != 0)


def test_a_product_with_a_constant_zero_depends_on_nothing_there():
    scale = np.array([2.0, 0.0, -1.0])     # a plain argument: part of the pattern's cache key
    sets, by_value = detect(lambda x, s: s * np.sin(x), (np.ones(3), scale), 0)
    assert sets.to_lists() == [[0], [], [2]] and not by_value
    sets, _ = detect(lambda x: 0.0 * x[::-1] + x, (np.ones(3),), 0)
    assert sets.to_lists() == [[0], [1], [2]]
    sets, _ = detect(lambda x: x * x, (np.zeros(2),), 0)   # a traced zero is not a constant one
    assert sets.to_lists() == [[0], [1]]


def cutoff_pair_energy(x, rc=2.0):
    i, j = np.triu_indices(len(x), 1)
    d = x[i] - x[j]
    r2 = np.sum(d * d, axis=1)
    s6 = (1.0 / r2) ** 3
    return np.sum(np.where(r2 < rc * rc, 4 * (s6 * s6 - s6), 0.0))


def cutoff_pair_forces(x, rc=2.0):
    d = x[:, None, :] - x[None, :, :]
    r2 = (d ** 2).sum(-1) + np.eye(len(x))
    s6 = (1 / r2) ** 3
    fm = np.where((r2 < rc * rc) & ~np.eye(len(x), dtype=bool), 24 * (2 * s6 * s6 - s6) / r2, 0.0)
    return (fm[:, :, None] * d).sum(1)


def test_a_cutoff_potential_keeps_only_the_pairs_inside_the_cutoff():
    # (the 0.0 a where picked beyond the cut-off multiplied the pair's distance vector, whose
    # inputs stayed in the pattern: 2763 entries for 864 non-zeros, 57 colours of 81; a user trial)
    grid = np.arange(3) * 2.0
    x = np.array([[a, b, c] for a in grid for b in grid for c in grid])
    x += 0.3 * np.random.default_rng(0).normal(size=x.shape)
    H = duals.hessian(cutoff_pair_energy)(x).reshape(81, 81)
    J = duals.jacfwd(cutoff_pair_forces)(x).reshape(81, 81)
    for f, dense, hessian in ((cutoff_pair_energy, H, True), (cutoff_pair_forces, J, False)):
        found = duals.sparsity(f, x, hessian=hessian)
        assert found.depends_on_values
        np.testing.assert_array_equal(found.pattern.toarray(), dense != 0)
    sparse_hessian = duals.hessian(cutoff_pair_energy, sparsity="auto")
    for point in (x, x * 0.95):     # other pairs inside the cut-off: detected again
        np.testing.assert_allclose(sparse_hessian(point).toarray(),
                                   duals.hessian(cutoff_pair_energy)(point).reshape(81, 81), rtol=1e-12, atol=1e-12)


def test_matmul_of_two_traced_operands_is_structural():
    sets, _ = detect(lambda x: x.reshape(2, 2) @ x.reshape(2, 2), (np.zeros(4),), 0)
    assert sets.to_lists()[0] == [0, 1, 2]


def test_sort_depends_on_every_tied_entry():
    sets, by_value = detect(lambda x: np.sort(x), (np.array([3.0, 1.0, 3.0]),), 0)
    assert by_value and sets.to_lists() == [[1], [0, 2], [0, 2]]


def test_a_custom_primitive_without_a_rule_depends_on_everything():
    p = primitive("sparse_test_shift", lambda x: np.roll(x, 1))
    p.def_jvp(0, lambda t, out, x: dnp.roll(t, 1))
    sets, _ = detect(lambda x: p(x[:3]) * x[3], (np.ones(5),), 0)
    assert sets.to_lists() == [[0, 1, 2, 3]] * 3


def test_checkpoint_is_detected_through_its_function():
    f = duals.checkpoint(lambda x: x[1:] * x[:-1])
    sets, _ = detect(f, (np.ones(4),), 0)
    assert sets.to_lists() == [[0, 1], [1, 2], [2, 3]]


def test_hessian_pattern_is_the_pattern_of_the_gradient():
    f = lambda x: np.sum(x[1:] ** 2 * x[:-1]) + np.sum(np.exp(x[:2]))   # noqa: E731
    x = np.arange(1.0, 6.0)
    S = duals.sparsity(f, x, hessian=True)
    H = duals.hessian(f)(x)
    P = S.pattern.toarray()
    assert np.array_equal(P, P.T) and np.array_equal(P, H != 0)
    assert not S.depends_on_values


def test_a_hessian_pattern_through_slices_of_slices_is_structural():
    """The gradient's walk read a value to learn a shape (the marks of structurally zero
    cotangents through a slice), which told the detection its pattern was decided by values:
    hessian(sparsity='auto') of a collocation Lagrangian detected again at every call (a user
    trial; the sparse Hessian was slower than the dense one)."""
    def lagrangian(z, lam):
        X = z.reshape(-1, 2)
        F = np.stack([X[:, 1], -np.sin(X[:, 0])], axis=1)
        defects = X[1:] - X[:-1] - 0.05 * (F[1:] + F[:-1])
        return np.dot(lam, np.sin(defects).ravel())

    z, lam = np.linspace(0.0, 1.0, 12), np.linspace(1.0, 2.0, 10)
    assert not duals.sparsity(lambda x: np.sum(np.sin((x[1:] * 3.0)[:2])), z, hessian=True).depends_on_values
    S = duals.sparsity(lagrangian, z, lam, hessian=True)
    assert not S.depends_on_values
    H = duals.hessian(lagrangian)(z, lam)
    assert np.array_equal(S.pattern.toarray(), H != 0)


def test_a_norm_is_decided_by_values_only_where_it_meets_a_zero_vector():
    """np.linalg.norm read its value to find zero vectors (where its derivative is 0), so every
    pattern through it was 'decided by values' and sparsity='auto' detected again at every call:
    twice the time of a bundle adjustment's Jacobian (a user trial); now only a zero vector does."""
    rows = lambda x: np.linalg.norm(x.reshape(-1, 3), axis=1)   # noqa: E731
    x = np.arange(1.0, 13.0)
    S = duals.sparsity(rows, x)
    assert not S.depends_on_values
    assert np.array_equal(S.pattern.toarray(), np.kron(np.eye(4), np.ones((1, 3))) > 0)
    assert duals.sparsity(lambda v: np.linalg.norm(v, ord=3), x).depends_on_values is False
    at_zero = x.copy()
    at_zero[3:6] = 0.0
    assert duals.sparsity(rows, at_zero).depends_on_values
    assert duals.sparsity(lambda v: np.linalg.norm(v.reshape(-1, 3), ord=3, axis=1), at_zero).depends_on_values


def test_a_bincount_assembly_is_not_decided_by_the_weights_values():
    """np.bincount read its traced weights' values for NumPy's checks of them, so a force assembly
    written with it (the advice of the np.add.at refusal) was 'decided by values' and
    sparsity='auto' detected again at every call (a cloth trial: 2.2x the call)."""
    springs = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])

    def forces(x):
        f = np.sin(x[springs[:, 0]] - x[springs[:, 1]])
        return np.bincount(springs[:, 1], weights=f, minlength=4) - np.bincount(springs[:, 0], weights=f, minlength=4)

    x = np.array([0.1, 0.5, 0.2, 0.9])
    S = duals.sparsity(forces, x)
    assert not S.depends_on_values
    assert np.array_equal(S.pattern.toarray(), duals.jacfwd(forces)(x) != 0)


def test_detection_costs_a_few_evaluations_not_one_per_input():
    calls = []

    def f(x):
        calls.append(1)
        return x[1:] - x[:-1]
    duals.sparsity(f, np.ones(1000))
    assert len(calls) == 1


@pytest.mark.parametrize("seed", range(5))
def test_union_by_compiled_merge_is_the_union_of_the_sets_entry_by_entry(seed):
    from duals.index_sets import IndexSets, union
    rng = np.random.default_rng(seed)
    n, size = 30, 40

    def random_sets():
        rows = [np.unique(rng.integers(0, n, rng.integers(0, 6))) for _ in range(size)]
        indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])]).astype(np.int64)
        return IndexSets((size,), n, indptr, np.concatenate(rows).astype(np.int64)), rows

    parts = [random_sets() for _ in range(3)]
    merged = union([p for p, _ in parts])
    expected = [sorted(set().union(*(rows[k].tolist() for _, rows in parts))) for k in range(size)]
    assert merged.to_lists() == expected
    assert merged.indptr[-1] == merged.indices.size
