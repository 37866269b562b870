"""The fused reverse-mode rules (duals.ops.fused_vjp) and the walk's in-place sums and reused
buffers (duals.cotangents) give the numbers of the primitives' own rules.

The generated kernels act on float64 arrays of at least ``FUSED_FROM`` entries and NumPy does the
rest; here each path is forced onto the small arrays of the test table (``forced``) and compared
with a walk that runs the rules only (``by_rules``): bit for bit where a partial is written with
``+ - * /`` alone (and always on the NumPy path), to a few ulps where a kernel calls a function
(Numba's libm against NumPy's loops).
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duals
import duals.numpy as dnp
from duals import cotangents, derivatives, reverse, walk
from duals.ops import fused_vjp
from duals.ops.elementwise import PRIMITIVES
from op_cases import BINARY_DOMAIN, CASES, UNARY_DOMAIN
from test_fuzz import PROFILE, _build, programs

CALLS = re.compile(r"[a-z_0-9]+\(")


@pytest.fixture(params=["kernels", "numpy"])
def forced(monkeypatch, request):
    """The fused rules on every size: by the generated kernels, or by NumPy (the small-array path)."""
    monkeypatch.setattr(fused_vjp, "FUSED_FROM", 1 if request.param == "kernels" else 1 << 62)
    monkeypatch.setattr(cotangents, "POOL_FROM", 1)
    monkeypatch.setattr(reverse, "SHELL_FROM", 1)
    return request.param


# the kernels compile on first use (about half a second each on a cold cache): every entry is
# checked through NumPy, and through its kernels a set that covers each kind of partial (a formula
# of x, of out, with a function, 1, -1, a piecewise one) and every variant of the template
KERNELS = {"sqrt", "sin", "reciprocal", "abs", "neg", "mul", "div", "sub", "add", "hypot", "mod"}


def _modes(names):
    return [pytest.param(name, mode, id=f"{name}-{mode}") for name in sorted(names)
            for mode in ("numpy", "kernels") if mode == "numpy" or name in KERNELS]


def by_rules(fn, *args, **kwargs):
    """fn(*args) with the primitives' rules only: no fused rule, no reused buffer, every operand
    kept on the tape (no shells)."""
    saved = walk.RULES, walk.SCALAR_RULES, cotangents.RECYCLE, reverse.READS
    walk.RULES, walk.SCALAR_RULES, cotangents.RECYCLE, reverse.READS = {}, {}, False, {}
    try:
        return fn(*args, **kwargs)
    finally:
        walk.RULES, walk.SCALAR_RULES, cotangents.RECYCLE, reverse.READS = saved


def assert_same(got, expected, exact=True):
    for a, b in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                    np.atleast_1d(expected) if not isinstance(expected, tuple) else expected):
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            scale = np.max(np.abs(b), initial=0.0, where=np.isfinite(b))
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13 * scale)


def _inputs(domain, n, seed):
    rng = np.random.default_rng(seed)
    lo, hi = domain
    return rng.uniform(lo, hi, n)


def _exact(name):
    return not any(CALLS.search(p) for p in derivatives.TABLE[name].partials)


@pytest.mark.parametrize("name,forced", _modes(derivatives.UNARY), indirect=["forced"])
def test_unary_rules_give_the_rules_numbers(forced, name):
    x = _inputs(UNARY_DOMAIN.get(name, derivatives.TABLE[name].domain), 300, 1)
    u = np.cos(np.arange(300.0))
    f = lambda x: np.sum(u * PRIMITIVES[name](x) + 0.5 * PRIMITIVES[name](x[::-1]))  # noqa: E731
    assert_same(duals.grad(f)(x), by_rules(duals.grad(f), x), _exact(name) or forced == "numpy")


@pytest.mark.parametrize("form", ["both", "x only", "y only", "scalar y", "same", "accumulate", "summed"])
@pytest.mark.parametrize("name,forced", _modes(derivatives.BINARY), indirect=["forced"])
def test_binary_rules_give_the_rules_numbers(forced, name, form):
    dom = BINARY_DOMAIN.get(name, derivatives.TABLE[name].domain)
    x, y = _inputs(dom, 300, 2), _inputs(dom, 300, 3)
    u = np.sin(np.arange(300.0))
    op = PRIMITIVES[name]
    f, argnums = {
        "both": (lambda x, y: np.sum(u * op(x, y)), (0, 1)),
        "x only": (lambda x, y: np.sum(u * op(x, y)), 0),
        "y only": (lambda x, y: np.sum(u * op(x, y)), 1),
        "scalar y": (lambda x, y: np.sum(u * op(x, 1.25)), 0),
        "same": (lambda x, y: np.sum(u * op(x, x)), 0),
        "accumulate": (lambda x, y: np.sum(u * op(x, y) * x + op(y, x) * y), (0, 1)),
        "summed": (lambda x, y: np.sum(op(x, y)), (0, 1)),   # one cotangent for every entry
    }[form]
    assert_same(duals.grad(f, argnums=argnums)(x, y), by_rules(duals.grad(f, argnums=argnums), x, y),
                _exact(name) or forced == "numpy")


@pytest.mark.parametrize("name", sorted((KERNELS | {"pow"}) & set(derivatives.BINARY)))
def test_forward_kernels_with_one_number_operand_equal_the_full_array_loop(name):
    """``c * x``, ``x ** c``: the forward kernels hold a number operand (or a broadcast one, as
    a sum's cotangent is) in a register; every entry must equal the loop over two full arrays."""
    dom = BINARY_DOMAIN.get(name, derivatives.TABLE[name].domain)
    n = 5000
    x, v = _inputs(dom, n, 4), np.cos(np.arange(n))
    c = float(_inputs(dom, 1, 5)[0])
    op = PRIMITIVES[name]
    full, tangent = np.full(n, c), np.full(n, 0.5)
    for number in (c, np.broadcast_to(c, (n,))):
        for first in (True, False):
            f = (lambda a, b: op(a, b)) if first else (lambda a, b: op(b, a))
            for t in ((0.5, None) if np.ndim(number) == 0 else (None,)):
                got = duals.jvp(f, (number, x), (t, v))
                want = duals.jvp(f, (full, x), (None if t is None else tangent, v))
                assert_same(got, want, _exact(name))
    # a repeated value whose tangent is not repeated is no number
    varying = np.sin(np.arange(n))
    got = duals.jvp(op, (np.broadcast_to(c, (n,)), x), (varying, v))
    assert_same(got, duals.jvp(op, (full, x), (varying, v)), _exact(name))


def test_structural_zeros_stay_exact_under_where(forced):
    x = np.linspace(-1.0, 1.0, 301)
    f = lambda x: np.sum(np.where(x > 0, np.sqrt(np.abs(x)) * np.log1p(x * x), 0.0))  # noqa: E731
    g = duals.grad(f)(x)
    assert_same(g, by_rules(duals.grad(f), x))
    assert np.all(g[x <= 0] == 0.0) and np.all(np.isfinite(g))


def test_slices_add_into_the_running_cotangent(forced):
    x = np.linspace(-1.5, 1.5, 200)
    f = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2) + np.sum(x[::3] * x[5])  # noqa
    assert_same(duals.grad(f)(x), by_rules(duals.grad(f), x))


def chained_slices(x):
    """Rosenbrock's sum plus strided, overlapping and one-entry slices of the same input."""
    return (np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
            + np.sum(x[::3] * x[2:3]) + np.sum(np.sin(x[4:-2]) * x[3:-3] ** 2))


def grid_slices(x):
    """A 5-point Laplacian energy on a grid: four shifted slices of one 2-d input."""
    lap = x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4.0 * x[1:-1, 1:-1]
    return np.sum(lap ** 2 * np.cos(x[1:-1, 1:-1]))


@pytest.mark.parametrize("f, x", [(chained_slices, np.linspace(-1.5, 1.5, 40)),
                                  (grid_slices, np.linspace(-1.0, 1.0, 42).reshape(6, 7))],
                         ids=["1-d", "2-d"])
def test_slices_add_into_the_running_cotangent_under_forward_mode(forced, f, x):
    """hvp and hessian run the walk on duals: each slice's cotangent is added into the running dual
    cotangent in place; the numbers are the rules' own (sums in the same order), and the Hessian
    agrees with central differences of the gradient."""
    v = np.cos(np.arange(x.size, dtype=float)).reshape(x.shape)
    first = duals.hvp(f, x, v)
    kept = first.copy()
    assert_same(first, by_rules(duals.hvp, f, x, v))
    duals.hvp(f, 0.5 * x, v[::-1].copy())   # later walks must not write into an earlier result
    np.testing.assert_array_equal(first, kept)
    hess = duals.hessian(f)(x)
    assert_same(hess, by_rules(lambda: duals.hessian(f)(x)))
    h, n = 1e-6, x.size
    gradient = duals.grad(f)
    columns = [(gradient(x + h * e.reshape(x.shape)) - gradient(x - h * e.reshape(x.shape))) / (2 * h)
               for e in np.eye(n)]
    np.testing.assert_allclose(hess.reshape(n, n), np.array(columns).reshape(n, n).T, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("forced", ["numpy"], indirect=True)
@pytest.mark.parametrize("case", [c for c in CASES if not c.name.startswith("checkpoint")],
                         ids=lambda c: c.id)
def test_every_case_of_the_table_gives_the_rules_numbers(forced, case):
    args = case.inputs()
    rng = np.random.default_rng(5)
    u = rng.standard_normal(np.shape(case.fn(*args)))
    argnums = tuple(range(len(args)))
    f = lambda *a: np.sum(u * case.fn(*a))  # noqa: E731
    assert_same(duals.grad(f, argnums)(*args), by_rules(duals.grad(f, argnums), *args), exact=False)


@settings(PROFILE)
@given(programs())
def test_random_compositions_give_the_rules_numbers(program):
    inputs, steps = program
    f = _build(steps)
    argnums = tuple(range(len(inputs)))
    loss = lambda *a: np.sum(f(*a) * 1.5)  # noqa: E731
    saved = fused_vjp.FUSED_FROM, cotangents.POOL_FROM, reverse.SHELL_FROM
    fused_vjp.FUSED_FROM = cotangents.POOL_FROM = reverse.SHELL_FROM = 1
    try:
        got = duals.grad(loss, argnums)(*inputs)
    finally:
        fused_vjp.FUSED_FROM, cotangents.POOL_FROM, reverse.SHELL_FROM = saved
    assert_same(got, by_rules(duals.grad(loss, argnums), *inputs), exact=False)


def test_a_cotangent_passed_on_to_two_values_is_written_by_neither(forced):
    x = np.linspace(0.1, 2.0, 100)

    def f(x):
        s = (np.sin(x) + np.cos(x)) ** 2     # add passes one cotangent to sin and cos
        return np.sum(s * x + (x - s) * 3.0)

    assert_same(duals.grad(f)(x), by_rules(duals.grad(f), x))


@pytest.mark.parametrize("form", ["chain", "negations", "slices", "accumulated", "summed", "retained"])
def test_scaled_cotangents_give_the_rules_numbers(forced, form):
    """``100 * x``, ``x / 4``, ``-x``, ``a - b`` hand their cotangent on with a number that
    multiplies it; the next rule multiplies it in. Every consumer (a kernel, a slice, a running
    sum, a rule that declines, a retained gradient) must give the rules' numbers, bit for bit."""
    x = np.linspace(0.1, 2.0, 120)
    u = np.cos(np.arange(120.0))
    f = {
        "chain": lambda x: np.sum(u * np.sin(-(3.0 * (x / 4.0)) * 100.0) - 0.5 * np.exp(2.0 * x)),
        "negations": lambda x: np.sum(u * ((1.0 - x) ** 2 - (-x) ** 3 + (x - (2.0 - x) * 3.0))),
        "slices": lambda x: np.sum(u[1:] * (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
                                   - 3.0 * x[::-2].sum() * x[5:9].sum()),
        "accumulated": lambda x: np.sum(u * (2.0 * x - 3.0 * x + np.sin(x) - (x / 7.0) * u)),
        "summed": lambda x: np.sum(-(4.0 * (x - 2.5)) / 3.0) + np.sum(np.maximum(-x, -1.0) * 2.0),
    }.get(form)
    if form == "retained":
        def run():
            v = duals.Var(x)
            y = -(v * 3.0)
            y.retain_grad()
            z = 2.0 * y
            z.retain_grad()
            np.sum(u * np.sin(z) - y / 5.0).backward()
            return v.grad, y.grad, z.grad
        got = run()
        assert_same(got, by_rules(run))
        assert all(a.flags.writeable for a in got)
        return
    got = duals.grad(f)(x)
    assert_same(got, by_rules(duals.grad(f), x), exact=forced == "numpy" or form in ("negations", "slices"))
    np.testing.assert_allclose(got, duals.jacfwd(f)(x), rtol=1e-12, atol=1e-12)


def test_a_gradient_is_an_array_of_its_own():
    """A sum's cotangent is one number for all entries (a read-only broadcast); the gradient
    returned is a writable array of its own, as NumPy's results are."""
    x = np.linspace(0.0, 1.0, 2 * fused_vjp.FUSED_FROM)
    for f in (lambda x: np.sum(x), lambda x: np.sum(100.0 * x - 1.0), lambda x: np.sum(-x / 3.0)):
        g = duals.grad(f)(x)
        assert g.flags.writeable and g.flags.c_contiguous and np.all(g == g[0])
        g *= 2.0      # a user's in-place update
        v = duals.Var(x)
        f(v).backward()
        assert v.grad.flags.writeable


def test_values_the_user_keeps_are_not_reused(forced):
    x = duals.Var(np.linspace(0.1, 2.0, 100))
    y = x * 2.0
    z = np.sin(y)
    view = z.value[10:20]
    kept = (y.value.copy(), z.value.copy(), view.copy())
    loss = np.sum(z * z * y)
    loss.backward()
    np.testing.assert_array_equal(y.value, kept[0])
    np.testing.assert_array_equal(z.value, kept[1])
    np.testing.assert_array_equal(view, kept[2])
    x2 = duals.Var(np.linspace(0.1, 2.0, 100))
    by_rules(lambda: np.sum(np.sin(x2 * 2.0) ** 2 * (x2 * 2.0)).backward())
    np.testing.assert_array_equal(x.grad, x2.grad)


def test_aux_values_are_not_reused(forced):
    x = np.linspace(0.1, 2.0, 100)

    def f(x):
        y = np.exp(x) * 3.0
        return np.sum(np.sin(y) * y), (y, np.sin(y))

    (value, (y, s)), g = duals.value_and_grad(f, has_aux=True)(x)
    np.testing.assert_array_equal(y, np.exp(x) * 3.0)
    np.testing.assert_array_equal(s, np.sin(np.exp(x) * 3.0))
    assert_same(g, by_rules(duals.grad(lambda x: f(x)[0]), x))


def test_retained_gradients_and_repeated_backward_are_the_rules(forced):
    def run():
        x = duals.Var(np.linspace(0.1, 2.0, 100))
        y = np.sin(x) * x
        y.retain_grad()
        loss = np.sum(y * y + y)
        loss.backward(retain_graph=True)
        loss.backward()
        return x.grad, y.grad

    assert_same(run(), by_rules(run))


def test_only_an_output_nothing_else_refers_to_is_recycled():
    cotangents.release_buffers()   # the thread's pool, kept between walks: empty for this test
    store = cotangents.Cotangents(None, recycle=True)

    class Node:
        def __init__(self, out):
            self.out = out

        def free(self):
            self.out = None

    kept = np.zeros(cotangents.POOL_FROM)
    store.free(Node(kept))
    store.free(Node(np.zeros(cotangents.POOL_FROM)[::1]))       # a view: its base is elsewhere
    store.free(Node(np.zeros(cotangents.POOL_FROM + 1)))        # nothing else holds it
    assert [a.size for free in store.pool.values() for a in free] == [cotangents.POOL_FROM + 1]
    assert store.alloc((cotangents.POOL_FROM + 1,)).size == cotangents.POOL_FROM + 1
    assert store.pool.nbytes == 0


def test_the_pool_outlives_a_walk_within_its_bound_and_serves_the_next_forward_pass():
    cotangents.release_buffers()
    x = np.linspace(0.1, 2.0, 2 * cotangents.POOL_FROM)
    f = lambda x: np.sum(np.sin(x) * x + x * x)  # noqa: E731
    expected = np.cos(x) * x + np.sin(x) + 2 * x
    np.testing.assert_allclose(duals.grad(f)(x), expected, rtol=1e-14)
    pool = cotangents._thread_pool()
    kept = {id(a) for free in pool.values() for a in free}
    assert kept and pool.nbytes <= cotangents.KEEP_BYTES
    v = duals.Var(x)
    recorded = np.sin(v) * v                                 # recorded into a kept buffer
    assert id(recorded._value) in kept
    del v, recorded
    out, pullback = duals.vjp(lambda x: np.sin(x) * x, x)
    np.testing.assert_array_equal(out, np.sin(x) * x)
    out[:] = 0.0   # an array of its own: the pullback reads the recorded values, not this
    np.testing.assert_allclose(pullback(np.ones_like(x))[0], np.cos(x) * x + np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(duals.grad(f)(x), expected, rtol=1e-14)
    saved = cotangents.KEEP_BYTES
    cotangents.KEEP_BYTES = 0
    try:
        cotangents.release_buffers()
        duals.grad(f)(x)
        assert cotangents._thread_pool().nbytes == 0
    finally:
        cotangents.KEEP_BYTES = saved


def test_values_a_caller_keeps_are_never_lent_to_a_later_call():
    """Across calls the thread's pool lends buffers to new recordings: a Var's .grad, the value of
    an intermediate the caller kept (has_aux, a retained graph) must stay as they were."""
    n = 2 * cotangents.POOL_FROM
    x, z = np.linspace(0.1, 2.0, n), np.linspace(-1.0, 1.0, n)
    f = lambda x: np.sum(np.sin(x) * x + x * x)  # noqa: E731
    v = duals.Var(x)
    y = np.sin(v) * v
    kept = y.value
    loss = np.sum(y + v * v)
    loss.backward(retain_graph=True)
    first = v.grad.copy()
    (_, aux), _ = duals.value_and_grad(lambda x: (f(x), np.cos(x) * x), has_aux=True)(x)
    aux_copy, kept_copy = aux.copy(), kept.copy()
    for _ in range(3):                         # later recordings on other inputs take pooled buffers
        duals.grad(f)(z)
        duals.vjp(lambda x: np.cos(x) * x, z)[1](np.ones(n))
    np.testing.assert_array_equal(aux, aux_copy)
    np.testing.assert_array_equal(kept, kept_copy)
    np.testing.assert_array_equal(v.grad, first)
    loss.backward()                            # the retained graph's saved values are intact
    np.testing.assert_allclose(v.grad, 2 * first, rtol=1e-15)


def test_threads_each_keep_their_own_pool():
    from concurrent.futures import ThreadPoolExecutor
    n = 2 * cotangents.POOL_FROM
    f = lambda x: np.sum(np.sin(x) * x + x * x)  # noqa: E731
    points = [np.linspace(0.1, 2.0, n) + k for k in range(8)]

    def gradients(k):
        return [duals.grad(f)(points[(k + j) % 8]) for j in range(8)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(gradients, range(8)))
    for k, grads in enumerate(results):
        for j, g in enumerate(grads):
            x = points[(k + j) % 8]
            np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x) + 2 * x, rtol=1e-14)


def test_large_arrays_take_the_fused_path():
    x = np.linspace(0.1, 2.0, 2 * fused_vjp.FUSED_FROM)
    f = lambda x: np.sum(np.sqrt(x) * x / (1.0 + x) - x ** 2)  # noqa: E731
    assert_same(duals.grad(f)(x), by_rules(duals.grad(f), x))
    exact = 1.5 * np.sqrt(x) / (1.0 + x) - x * np.sqrt(x) / (1.0 + x) ** 2 - 2 * x
    np.testing.assert_allclose(duals.grad(f)(x), exact, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", sorted(derivatives.TABLE))
def test_rules_on_numbers_give_the_rules_numbers(name):
    entry = derivatives.TABLE[name]
    lo, hi = UNARY_DOMAIN.get(name, BINARY_DOMAIN.get(name, entry.domain))
    point = (lo + 0.3 * (hi - lo), lo + 0.8 * (hi - lo))[:entry.arity]
    argnums = tuple(range(entry.arity))
    f = lambda *a: PRIMITIVES[name](*a) * 1.5 + PRIMITIVES[name](*a[::-1])  # noqa: E731
    assert_same(duals.grad(f, argnums)(*point), by_rules(duals.grad(f, argnums), *point))
    g = lambda x: PRIMITIVES[name](*(x,) * entry.arity)  # noqa: E731
    assert_same(duals.grad(g)(np.array(point[0])), by_rules(duals.grad(g), np.array(point[0])))


def test_a_cotangent_is_reused_only_when_the_walk_alone_holds_it():
    cotangents.release_buffers()   # the thread's pool, kept between walks: empty for this test
    store = cotangents.Cotangents(None, recycle=True)
    kept = [np.zeros(cotangents.POOL_FROM)]
    g = kept[0]
    store.done(g)                       # the list still refers to it
    g = np.zeros(cotangents.POOL_FROM + 2)
    store.done(g)                       # only this variable does
    assert [a.size for free in store.pool.values() for a in free] == [cotangents.POOL_FROM + 2]


def test_the_tape_keeps_only_the_operands_the_rules_read(monkeypatch):
    monkeypatch.setattr(reverse, "SHELL_FROM", 1)
    x = duals.Var(np.linspace(0.5, 1.5, 10))
    y = np.exp(x)           # exp' = out: keeps its output, not its argument
    z = y * 3.0 + x         # mul by a constant keeps the constant; add keeps nothing
    kept = lambda a: not (isinstance(a, np.ndarray) and a.ndim and not any(a.strides))  # noqa: E731
    assert [kept(a) for a in y.grad_fn.args] == [False] and kept(y.grad_fn.out)
    assert not any(kept(a) for a in z.grad_fn.args) and not kept(z.grad_fn.out)
    np.sum(z).backward()
    np.testing.assert_allclose(x.grad, 3.0 * np.exp(x.value) + 1.0, rtol=1e-15)


_INDEX_PARTS = st.one_of(st.integers(-4, 3), st.builds(slice, st.none() | st.integers(-5, 5),
                                                        st.none() | st.integers(-5, 5),
                                                        st.sampled_from([None, 1, 1, 2, -1])),
                         st.just(Ellipsis), st.none())


@settings(PROFILE)
@given(programs(), st.integers(0, 2**32 - 1))
def test_results_stay_as_they_were_after_later_calls_reuse_the_pool(program, seed):
    """Buffers outlive a walk in the thread's pool; a gradient, an output or a value handed to the
    caller must never be one of them: later calls on other inputs leave earlier results alone."""
    inputs, steps = program
    f = _build(steps)
    argnums = tuple(range(len(inputs)))
    loss = lambda *a: np.sum(f(*a) * 1.5)  # noqa: E731
    rng = np.random.default_rng(seed)
    moved = [a * (1.0 + 0.1 * rng.standard_normal(np.shape(a))) for a in inputs]
    saved = fused_vjp.FUSED_FROM, cotangents.POOL_FROM, reverse.SHELL_FROM
    fused_vjp.FUSED_FROM = cotangents.POOL_FROM = reverse.SHELL_FROM = 1
    try:
        grads = duals.grad(loss, argnums)(*inputs)
        out, pullback = duals.vjp(f, *inputs)
        copies = [np.copy(g) for g in grads], np.copy(out)
        pulled = pullback(np.ones_like(out))
        pulled_copies = [np.copy(g) for g in pulled]
        for _ in range(2):
            duals.grad(loss, argnums)(*moved)
            duals.vjp(f, *moved)[1](np.ones_like(out))
    finally:
        fused_vjp.FUSED_FROM, cotangents.POOL_FROM, reverse.SHELL_FROM = saved
    for got, copy in zip(list(grads) + [out] + list(pulled), copies[0] + [copies[1]] + pulled_copies):
        np.testing.assert_array_equal(got, copy)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(_INDEX_PARTS, max_size=3))
def test_the_cotangent_of_a_basic_index_is_zero_outside_it(shape, parts):
    """The scatter of ``x[index]``'s cotangent writes zeros only outside a box of ranges; it must
    equal zeros with the box written, for every basic index NumPy accepts."""
    from duals.ops.shape import _scatter_impl
    index = tuple(parts)
    x = np.zeros(shape)
    try:
        picked = x[index]
    except IndexError:
        return
    if parts.count(Ellipsis) > 1:
        return
    g = np.arange(1.0, np.size(picked) + 1).reshape(np.shape(picked))
    want = np.zeros(shape)
    want[index] = g
    np.testing.assert_array_equal(_scatter_impl(g, index=index, shape=tuple(shape)), want)
