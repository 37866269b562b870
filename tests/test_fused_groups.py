"""Groups of element-wise reverse rules run as one kernel (duals.ops.fused_groups) give the walk's
numbers without groups, and every group these tests mean to form does form.

``grouped`` forms groups on every size from the first call (a kernel per structure, compiled
once); ``ungrouped`` runs the same gradient with groups switched off. Sums of several
contributions may round in another order, so the comparison is to 1e-13 of the largest entry;
forward mode (``jacfwd``) and central differences check both.
"""
import threading

import numpy as np
import pytest
from hypothesis import given, settings

import duals
from duals import cotangents, derivatives, reverse
from duals.ops import fused_groups
from duals.ops.elementwise import PRIMITIVES
from op_cases import BINARY_DOMAIN, UNARY_AWAY_FROM_ZERO, UNARY_DOMAIN
from test_fuzz import PROFILE, _build, programs


@pytest.fixture
def grouped(monkeypatch):
    """Groups formed on every size from the first call; the returned list records each group's
    size as it runs."""
    monkeypatch.setattr(fused_groups, "FUSED_FROM", 1)
    monkeypatch.setattr(fused_groups, "FUSE_AFTER", 1)
    monkeypatch.setattr(fused_groups, "FUSE_ENTRIES", 0)
    monkeypatch.setattr(cotangents, "POOL_FROM", 1)
    monkeypatch.setattr(reverse, "SHELL_FROM", 1)    # the tape keeps only what the rules read
    sizes = []
    run = fused_groups.run

    def recorded(root, *args):
        results = run(root, *args)
        if results is not None:
            sizes.append(len(results))
        return results
    monkeypatch.setattr(fused_groups, "run", recorded)
    return sizes


def ungrouped(fn, *args):
    saved = fused_groups.ENABLED
    fused_groups.ENABLED = False
    try:
        return fn(*args)
    finally:
        fused_groups.ENABLED = saved


def assert_close(got, expected):
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        scale = np.max(np.abs(b), initial=0.0)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13 * scale)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def log_likelihood(mu, s, y):
    return np.sum(-0.5 * ((y - mu) / s) ** 2 - np.log(s))


def stencil_energy(u):
    lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
    return np.sum(0.5 * lap * lap + 0.25 * (u[1:-1] ** 2 - 1.0) ** 2)


def shared_intermediate(x, y):
    s = np.sin(x) * y          # s is used twice: a group stops at it
    return np.sum(s * s + np.tanh(s) / (1.0 + y * y))


CASES = {
    "rosenbrock": (rosenbrock, (np.linspace(-1.5, 1.5, 301),)),
    "log-likelihood": (lambda mu, s: log_likelihood(mu, s, np.cos(np.arange(200.0))),
                       (np.sin(np.arange(200.0)), 1.5 + np.cos(np.arange(200.0) / 3.0))),
    "stencil": (stencil_energy, (np.sin(np.linspace(0.0, 3.0, 257)),)),
    "shared intermediate": (shared_intermediate, (np.linspace(0.1, 2.0, 150), np.linspace(-1.0, 1.0, 150))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_realistic_gradients_equal_the_walk_without_groups_and_forward_mode(grouped, name):
    f, args = CASES[name]
    argnums = tuple(range(len(args)))
    gradient = duals.grad(f, argnums)
    got = gradient(*args)
    assert grouped, "no group formed"
    assert_close(got, ungrouped(gradient, *args))
    forward = duals.jacfwd(f, argnums)(*args)
    for a, b in zip(got, forward):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.max(np.abs(b)))
    assert_close(gradient(*args), got)    # and again, from the compiled kernel


@settings(PROFILE)
@given(programs())
def test_random_compositions_equal_the_walk_without_groups(program):
    """The fuzzer's programs (element-wise, broadcasting and structural steps on up to two
    inputs), their gradient with groups formed wherever they can against the walk without."""
    inputs, steps = program
    f = _build(steps)
    argnums = tuple(range(len(inputs)))
    value = f(*inputs)
    weights = np.cos(np.arange(np.size(value))).reshape(np.shape(value))
    loss = lambda *a: np.sum(f(*a) * weights)  # noqa: E731
    expected = ungrouped(duals.grad(loss, argnums), *inputs)
    with pytest.MonkeyPatch.context() as patch:
        for module, name, value in ((fused_groups, "FUSED_FROM", 1), (fused_groups, "FUSE_AFTER", 1),
                                    (fused_groups, "FUSE_ENTRIES", 0), (cotangents, "POOL_FROM", 1),
                                    (reverse, "SHELL_FROM", 1)):
            patch.setattr(module, name, value)
        got = duals.grad(loss, argnums)(*inputs)
    assert_close(got, expected)


def test_rosenbrock_writes_one_slice_into_the_running_cotangent(grouped):
    x = np.linspace(-1.5, 1.5, 101)
    duals.grad(rosenbrock)(x)
    # x[1:] goes into its slice of x's cotangent; the two x[:-1] share one output
    assert grouped == [2]


def _squashed(name, x):
    lo, hi = UNARY_DOMAIN.get(name, (-2.0, 2.0))
    if name in UNARY_AWAY_FROM_ZERO:
        lo = max(lo, 0.3)
    return lo + (hi - lo) * (0.1 + 0.8 * (0.5 + 0.5 * np.tanh(x)))


def _batches(names, size):
    names = sorted(names)
    return [names[k:k + size] for k in range(0, len(names), size)]


UNARY_GROUPED = sorted(n for n in derivatives.UNARY if PRIMITIVES.get(n) in fused_groups._PARTIALS)
BINARY_GROUPED = sorted(n for n in derivatives.BINARY if PRIMITIVES.get(n) in fused_groups._PARTIALS)


def test_every_entry_that_groups_is_checked():
    assert set(UNARY_GROUPED) | set(BINARY_GROUPED) == {
        n for n in derivatives.TABLE if PRIMITIVES.get(n) in fused_groups._PARTIALS}
    assert "mul" in BINARY_GROUPED and "sin" in UNARY_GROUPED


@pytest.mark.parametrize("names", _batches(UNARY_GROUPED, 7), ids="-".join)
def test_unary_entries_inside_a_group(grouped, names):
    """Each entry between a squashing into its domain and a weighting, all in one group."""
    x = np.linspace(-1.0, 1.0, 64)
    w = np.cos(np.arange(64.0))

    def f(x):
        total = 0.0 * x
        for name in names:
            total = total + PRIMITIVES[name](_squashed(name, x)) * w
        return np.sum(total)
    got = duals.grad(f)(x)
    assert grouped and max(grouped) >= 1
    assert_close(got, ungrouped(duals.grad(f), x))
    np.testing.assert_allclose(got, duals.jacfwd(f)(x), rtol=1e-11, atol=1e-11 * np.max(np.abs(got)))


@pytest.mark.parametrize("names", _batches(BINARY_GROUPED, 4), ids="-".join)
def test_binary_entries_inside_a_group(grouped, names):
    x = np.linspace(-1.0, 1.0, 64)
    y = np.linspace(0.5, -0.7, 64)

    def f(x, y):
        total = 0.0 * x
        for name in names:
            lo, hi = BINARY_DOMAIN.get(name, (-2.0, 2.0))
            if derivatives.TABLE[name].away_from_zero:
                lo = max(lo, 0.3)
            a = lo + (hi - lo) * (0.55 + 0.35 * np.tanh(x))
            b = lo + (hi - lo) * (0.45 + 0.35 * np.tanh(y))
            total = total + PRIMITIVES[name](a, b) * (1.0 + 0.5 * y) - 2.0 * PRIMITIVES[name](b, a)
        return np.sum(total)
    got = duals.grad(f, (0, 1))(x, y)
    assert grouped
    assert_close(got, ungrouped(duals.grad(f, (0, 1)), x, y))
    forward = duals.jacfwd(f, (0, 1))(x, y)
    for a, b in zip(got, forward):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11 * np.max(np.abs(b)))


def test_an_intermediate_that_is_also_an_output_keeps_its_cotangent(grouped):
    x = np.linspace(0.1, 1.0, 50)

    def f(x):
        a = np.sin(x) * 2.0
        return a, np.sum(a * a + x)        # a is an output and feeds the sum
    (out, total), pullback = duals.vjp(f, x)
    u = np.cos(np.arange(50.0))
    got = pullback((u, 1.0))[0]
    expected = ungrouped(lambda: duals.vjp(f, x)[1]((u, 1.0))[0])
    assert_close(got, expected)
    np.testing.assert_allclose(got, np.cos(x) * 2.0 * u + 8.0 * np.sin(x) * np.cos(x) + 1.0, rtol=1e-12)


def test_retained_gradients_inside_a_chain_are_kept(grouped):
    x = np.linspace(0.1, 1.0, 40)

    def run():
        v = duals.Var(x)
        a = v * 3.0 + 1.0
        a.retain_grad()
        b = np.tanh(a) * a
        np.sum(b * b).backward()
        return v.grad, a.grad
    got = run()
    assert_close(got, ungrouped(run))
    a = x * 3.0 + 1.0
    b = np.tanh(a) * a
    da = 2.0 * b * (np.tanh(a) + a / np.cosh(a) ** 2)
    np.testing.assert_allclose(got[1], da, rtol=1e-12)
    np.testing.assert_allclose(got[0], 3.0 * da, rtol=1e-12)


def test_a_value_changed_in_place_is_still_refused(grouped):
    v = duals.Var(np.linspace(0.1, 1.0, 30))
    a = np.sin(v) * 2.0
    b = a * a
    a.value[0] = 5.0         # a's saved value is needed by a * a
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        np.sum(b + 1.0).backward()


def test_walking_a_retained_graph_twice_gives_the_same_gradient(grouped):
    v = duals.Var(np.linspace(-1.0, 1.0, 80))
    loss = np.sum((v - v ** 3) * np.cos(v) / (2.0 + v * v))
    loss.backward(retain_graph=True)
    first = v.grad.copy()
    loss.backward()
    np.testing.assert_allclose(v.grad, 2.0 * first, rtol=1e-14)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_threads_share_a_structure_and_get_their_own_numbers(grouped):
    xs = [np.linspace(-1.0, 1.0, 500) * (k + 1) / 4.0 for k in range(4)]
    expected = [ungrouped(duals.grad(rosenbrock), x) for x in xs]
    got = [None] * 4

    def work(k):
        for _ in range(20):
            got[k] = duals.grad(rosenbrock)(xs[k])
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(got, expected):
        assert_close(a, b)


def test_a_structure_compiles_only_once_it_has_carried_enough_entries(monkeypatch):
    monkeypatch.setattr(fused_groups, "_SEEN", {})
    monkeypatch.setattr(fused_groups, "FUSE_ENTRIES", 3 * 8192)
    x = np.linspace(-1.0, 1.0, 8193)
    gradient = duals.grad(rosenbrock)
    compiled = lambda: [k for k in fused_groups._SEEN.values() if type(k) is not tuple]  # noqa: E731
    gradient(x)
    gradient(x)
    assert not compiled()
    gradient(x)
    assert len(compiled()) == 1
