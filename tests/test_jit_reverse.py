"""Compiled reverse mode: grad, value_and_grad, vjp, jacrev, hvp and hessian of unchanged @njit code.

Every result is checked against compiled forward mode (an independent interpreter of the same
rules) and against central differences of the plain function; second order against forward
over forward. The table tests iterate duals.derivatives, so a new entry is tested here too.
"""
import gc
import math
import threading

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.jit import fn
from duals.jit.tape import Tape

from finite_differences import central_differences

njit = numba.njit(cache=True)


# ---------------------------------------------------------------- user code, unchanged

@njit
def lorenz_rhs(s, sigma, rho, beta, out):
    out[0] = sigma * (s[1] - s[0])
    out[1] = s[0] * (rho - s[2]) - s[1]
    out[2] = s[0] * s[1] - beta * s[2]


@njit
def lorenz_energy(sigma, rho, beta, state, dt, n):
    s = state.copy()  # a buffer made from the plain state: holds adjoints by promotion
    k1 = np.empty_like(s)
    k2 = np.empty_like(s)
    tmp = np.empty_like(s)
    for _ in range(n):
        lorenz_rhs(s, sigma, rho, beta, k1)
        for i in range(3):
            tmp[i] = s[i] + 0.5 * dt * k1[i]
        lorenz_rhs(tmp, sigma, rho, beta, k2)
        for i in range(3):
            s[i] += dt * k2[i]
    return s[0] ** 2 + s[1] ** 2 + s[2] ** 2


@njit
def lorenz96_misfit(F, x0, steps, dt):
    x = x0.copy()
    n = x.shape[0]
    dxdt = np.empty_like(x)
    for _ in range(steps):
        for i in range(n):
            dxdt[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + F[i]
        for i in range(n):
            x[i] += dt * dxdt[i]
    total = 0.0
    for i in range(n):
        total += 0.5 * (x[i] - 1.0) ** 2
    return total


@njit
def newton_root(a, b):
    """The root of x³ + a x - b by Newton's method (a while loop with a value test)."""
    x = 1.0
    step = 1.0
    while abs(step) > 1e-14:
        step = (x ** 3 + a * x - b) / (3.0 * x ** 2 + a)
        x -= step
    return x


@njit
def piecewise_energy(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            total += math.exp(-x[i]) * math.sin(3.0 * x[i])
        elif x[i] > -0.5:
            total += x[i] ** 2 + math.log1p(x[i] ** 2)
        else:
            total += math.hypot(x[i], 1.0) - abs(x[i])
    return total


@njit
def whole_array_loss(x, w):
    y = np.exp(-x) * w + np.sin(x) ** 2
    return np.sum(y * y) / x.shape[0] + np.sum(x[1:] * x[:-1])


@njit
def grid_energy(u):
    total = 0.0
    for i in range(u.shape[0] - 1):
        for j in range(u.shape[1] - 1):
            total += (u[i + 1, j] - u[i, j]) ** 2 + (u[i, j + 1] - u[i, j]) ** 2 + math.cos(u[i, j])
    return total


@njit
def apply_twice(g, x):
    return g(g(x))


@njit
def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)))


@njit
def mixing(x):
    out = np.zeros(x.shape[0] + 1)  # made by the code: holds adjoints
    for i in range(x.shape[0]):
        out[i] += x[i] * x[(i + 1) % x.shape[0]]
        out[i + 1] += math.tanh(x[i])
    return out


@njit
def with_aux(x, n):
    total = 0.0
    for i in range(n):
        total += x[i] ** 3
    return total, x[0] * 2.0


@njit
def scaled_in_place(x):
    x[0] = x[0] * 3.0  # writes into its (differentiated) input
    return x


@njit
def fails_above_one(x):
    if x[0] > 1.0:
        raise ValueError("x[0] must not exceed 1")
    return x[0] * x[1]


@njit
def solve_energy(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x * x)


RNG = np.random.default_rng(7)


def _close(a, b, rtol=1e-11, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- every entry of the table

def _point(entry, rng):
    lo, hi = entry.domain
    x = rng.uniform(lo, hi)
    if entry.away_from_zero:
        x = rng.choice([-1.0, 1.0]) * rng.uniform(0.3, hi)
    return x


def _table_module(tmp_path_factory):
    """One function per arity: out[k] = fn.<entry k>(x[k] (, y[k])), written to a file."""
    path = tmp_path_factory.mktemp("jit_reverse_table") / "reverse_table.py"
    unary = "".join(f"    out[{k}] = fn.{n}(x[{k}])\n" for k, n in enumerate(derivatives.UNARY))
    binary = "".join(f"    out[{k}] = fn.{n}(x[{k}], y[{k}])\n" for k, n in enumerate(derivatives.BINARY))
    path.write_text("import numba\nimport numpy as np\nfrom duals.jit import fn\n\n"
                    f"@numba.njit\ndef unary(x):\n    out = np.empty(x.shape[0])\n{unary}    return out\n\n"
                    f"@numba.njit\ndef unary_sum(x, w):\n    out = unary(x)\n    return np.sum(out * w)\n\n"
                    f"@numba.njit\ndef binary(x, y):\n    out = np.empty(x.shape[0])\n{binary}    return out\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return _table_module(tmp_path_factory)


def _smooth(names):
    return np.array([not derivatives.TABLE[n].discontinuous for n in names])


def test_every_unary_entry_reverse_equals_forward_and_central_differences(table):
    rng = np.random.default_rng(1)
    x = np.array([_point(derivatives.TABLE[n], rng) for n in derivatives.UNARY])
    rev = duals.jacrev(table["unary"])(x)
    fwd = duals.jacfwd(table["unary"])(x)
    _close(rev, fwd, rtol=1e-14, atol=0)
    assert np.count_nonzero(rev - np.diag(np.diag(rev))) == 0
    fd = np.diag(central_differences(table["unary"], [x], 0))
    keep = _smooth(derivatives.UNARY)
    bad = [(n, r, f) for n, r, f, k in zip(derivatives.UNARY, np.diag(rev), fd, keep)
           if k and not np.isclose(r, f, rtol=1e-6, atol=1e-7)]
    assert not bad, bad


def test_every_binary_entry_reverse_equals_forward_and_central_differences(table):
    rng = np.random.default_rng(2)
    x = np.array([_point(derivatives.TABLE[n], rng) for n in derivatives.BINARY])
    y = np.array([_point(derivatives.TABLE[n], rng) for n in derivatives.BINARY])
    rev = duals.jacrev(table["binary"], argnums=(0, 1))(x, y)
    fwd = duals.jacfwd(table["binary"], argnums=(0, 1))(x, y)
    keep = _smooth(derivatives.BINARY)
    for k, (r, f) in enumerate(zip(rev, fwd)):
        _close(r, f, rtol=1e-14, atol=0)
        fd = np.diag(central_differences(table["binary"], [x, y], k))
        bad = [(n, a, b) for n, a, b, s in zip(derivatives.BINARY, np.diag(r), fd, keep)
               if s and not np.isclose(a, b, rtol=1e-6, atol=1e-7)]
        assert not bad, bad


def test_second_order_of_every_unary_entry_in_both_compiled_modes_equals_the_numpy_path(table):
    from duals.ops.elementwise import PRIMITIVES
    rng = np.random.default_rng(3)
    x = np.array([_point(derivatives.TABLE[n], rng) for n in derivatives.UNARY])
    w = rng.uniform(0.5, 1.5, x.size)
    over_reverse = duals.hessian(table["unary_sum"])(x, w)
    second = [duals.jacfwd(duals.grad(PRIMITIVES[n]))(v) for n, v in zip(derivatives.UNARY, x)]
    _close(over_reverse, np.diag(w * np.array(second)), rtol=1e-12, atol=1e-12)
    # nested duals (what hessian takes for a non-scalar output or complex intermediates)
    _close(duals.jit.compiled_hessian(table["unary_sum"])(x, w), over_reverse, rtol=1e-12, atol=1e-12)
    v = rng.normal(size=x.size)
    unary_sum = table["unary_sum"]
    _close(duals.hvp(numba.njit(lambda x: unary_sum(x, w)), x, v), over_reverse @ v,
           rtol=1e-11, atol=1e-11)


@numba.njit
def _builtin_selections(z):
    return min(z[0], z[1]) * z[1] + max(z[0], 0.0) ** 2 + np.clip(z[0], 0.0, 1.0) * z[1]


def _numpy_selections(z):
    return np.minimum(z[0], z[1]) * z[1] + np.maximum(z[0], 0.0) ** 2 + np.clip(z[0], 0.0, 1.0) * z[1]


@pytest.mark.parametrize("name", [n for n in derivatives.BINARY if derivatives.TABLE[n].selecting] + ["builtins"])
def test_second_order_at_ties_of_selecting_entries_splits_as_the_numpy_path_in_both_modes(name):
    # (a rule of nested duals computed its value with the vocabulary's x if x >= y else y, which
    # took one side whole, inner derivatives too, at a tie: compiled Hessians of min(a, b) * b,
    # np.maximum(a, 0) ** 2 and np.clip at a bound differed from the NumPy path and were not
    # symmetric; a user trial)
    if name == "builtins":
        compiled, python = _builtin_selections, _numpy_selections
    else:
        source = f"def f(z):\n    return fn.{name}(z[0], z[1]) * z[1] + fn.{name}(z[0], 0.0) ** 2 + fn.{name}(1.0, z[1]) * z[0]\n"
        namespace = {"fn": fn}
        exec(source, namespace)
        compiled = numba.njit(namespace["f"])
        op = getattr(np, name)
        python = lambda z: op(z[0], z[1]) * z[1] + op(z[0], 0.0) ** 2 + op(1.0, z[1]) * z[0]   # noqa: E731
    for z in ([0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]):
        z = np.array(z)
        want = duals.hessian(python)(z)
        assert np.array_equal(want, want.T)
        for got in (duals.hessian(compiled)(z), duals.jit.compiled_hessian(compiled)(z),
                    np.column_stack([duals.hvp(compiled, z, e) for e in np.eye(2)])):
            np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- realistic kernels

def test_parameter_gradient_of_an_integrator_that_copies_its_plain_state():
    state = np.array([1.0, 1.0, 1.0])
    args = (10.0, 28.0, 8.0 / 3.0, state, 0.002, 200)
    g = duals.grad(lorenz_energy, argnums=(0, 1, 2))(*args)
    expected = duals.jacfwd(lorenz_energy, argnums=(0, 1, 2))(*args)
    for k in range(3):
        assert g[k] == pytest.approx(expected[k], rel=1e-12)
        assert g[k] == pytest.approx(central_differences(lorenz_energy, list(args), k), rel=1e-6)


def test_eighty_input_gradient_of_lorenz96_equals_forward_lanes():
    F = 8.0 + 0.1 * np.sin(np.arange(40.0))
    x0 = F + 0.01 * np.arange(40.0)
    value, (gF, gx) = duals.value_and_grad(lorenz96_misfit, argnums=(0, 1))(F, x0, 100, 0.01)
    assert value == lorenz96_misfit(F, x0, 100, 0.01)
    fF, fx = duals.jacfwd(lorenz96_misfit, argnums=(0, 1))(F, x0, 100, 0.01)
    _close(gF, fF, rtol=1e-11)
    _close(gx, fx, rtol=1e-11)
    _close(gx, central_differences(lorenz96_misfit, [F, x0, 100, 0.01], 1), rtol=1e-5, atol=1e-6)


def test_a_while_loop_solver_gives_the_implicit_function_derivative():
    a, b = 2.0, 3.0
    x = newton_root(a, b)
    ga, gb = duals.grad(newton_root, argnums=(0, 1))(a, b)
    # x³ + a x - b = 0  =>  dx/da = -x / (3x² + a), dx/db = 1 / (3x² + a)
    assert ga == pytest.approx(-x / (3 * x * x + a), rel=1e-12)
    assert gb == pytest.approx(1.0 / (3 * x * x + a), rel=1e-12)


@pytest.mark.parametrize("kernel, args", [
    (piecewise_energy, (np.linspace(-1.5, 1.5, 9),)),
    (whole_array_loss, (np.linspace(-1.0, 1.0, 7), np.linspace(0.5, 1.5, 7))),
    (grid_energy, (np.linspace(0.0, 2.0, 12).reshape(3, 4),)),
    (softplus_sum, (np.linspace(-2.0, 2.0, 5),)),
])
def test_branches_whole_array_operations_and_two_dimensional_arrays(kernel, args):
    g = duals.grad(kernel)(*args)
    _close(g, duals.jacfwd(kernel)(*args), rtol=1e-12)
    _close(g, central_differences(kernel, list(args), 0), rtol=1e-6, atol=1e-8)


def test_a_function_passed_as_an_argument_is_recorded_too():
    g = duals.grad(apply_twice, argnums=1)(numba.njit(lambda x: x * math.sin(x)), 0.7)
    inner = 0.7 * math.sin(0.7)
    expected = (math.sin(inner) + inner * math.cos(inner)) * (math.sin(0.7) + 0.7 * math.cos(0.7))
    assert g == pytest.approx(expected, rel=1e-13)


def test_jacrev_of_a_vector_output_in_chunks_equals_jacfwd():
    x = np.linspace(-1.0, 1.0, 6)
    expected = duals.jacfwd(mixing)(x)
    for chunk in (None, 1, 4):
        _close(duals.jacrev(mixing, chunk_size=chunk)(x), expected, rtol=1e-14)


def test_has_aux_and_integer_arguments_pass_through():
    x = np.array([1.0, 2.0, 3.0])
    (value, aux), g = duals.value_and_grad(with_aux, has_aux=True)(x, 2)
    assert value == 9.0 and aux == 2.0 and type(aux) is float
    _close(g, [3.0, 12.0, 0.0])
    y, pullback = duals.vjp(with_aux, x, 3, has_aux=False)
    gx, gn = pullback((1.0, 0.5))
    _close(gx, [3.0 + 1.0, 12.0, 27.0])
    assert gn == 0.0


def test_vjp_pulls_back_any_number_of_cotangents_and_checks_their_shape():
    x = np.linspace(0.1, 1.0, 5)
    y, pullback = duals.vjp(mixing, x)
    _close(y, mixing(x))
    J = duals.jacfwd(mixing)(x)
    for _ in range(3):
        w = RNG.normal(size=y.shape)
        _close(pullback(w)[0], w @ J, rtol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        pullback(np.ones(3))


@pytest.mark.parametrize("kernel, n", [(mixing, 6), (whole_array_loss, 5), (piecewise_energy, 8)])
def test_the_adjoint_identity_on_random_directions(kernel, n):
    rng = np.random.default_rng(n)
    args = [rng.uniform(-1.0, 1.0, n)] + ([rng.uniform(0.5, 1.5, n)] if kernel is whole_array_loss else [])
    v = rng.normal(size=n)
    y, jv = duals.jvp(kernel, tuple(args), (v,) + (None,) * (len(args) - 1))
    w = rng.normal(size=np.shape(y))
    _, pullback = duals.vjp(kernel, *args)
    assert np.sum(w * jv) == pytest.approx(np.dot(v, pullback(w)[0]), rel=1e-12)


def test_float32_inputs_give_float32_gradients():
    g = duals.grad(softplus_sum)(np.linspace(-1.0, 1.0, 4, dtype=np.float32))
    assert g.dtype == np.float32
    _close(g, 1.0 / (1.0 + np.exp(-np.linspace(-1.0, 1.0, 4))), rtol=1e-6)


# ---------------------------------------------------------------- second order

def test_hvp_and_hessian_forward_over_reverse_equal_forward_over_forward():
    F = 8.0 + 0.1 * np.sin(np.arange(12.0))
    misfit = numba.njit(lambda x0: lorenz96_misfit(F, x0, 30, 0.01))
    x0 = F + 0.01 * np.arange(12.0)
    H = duals.hessian(misfit)(x0)                      # 12 inputs: forward over reverse
    _close(H, duals.jit.compiled_hessian(misfit)(x0), rtol=1e-10, atol=1e-10)
    _close(H, H.T, rtol=1e-12, atol=1e-12)
    v = np.linspace(-1.0, 1.0, 12)
    _close(duals.hvp(misfit, x0, v), H @ v, rtol=1e-10, atol=1e-10)
    grad_along_v = central_differences(lambda t: duals.grad(misfit)(x0 + t * v), [0.0], 0)
    _close(duals.hvp(misfit, x0, v), grad_along_v, rtol=1e-5, atol=1e-5)


def test_hvp_of_a_dispatcher_holds_extra_arguments_constant():
    F = 8.0 + 0.1 * np.sin(np.arange(12.0))
    misfit = numba.njit(lambda x0, F, steps: lorenz96_misfit(F, x0, steps, 0.01))
    x0, v = F + 0.01 * np.arange(12.0), np.linspace(-1.0, 1.0, 12)
    H = duals.hessian(misfit)(x0, F, 30)
    _close(duals.hvp(misfit, x0, v, F, 30), H @ v, rtol=1e-10, atol=1e-10)
    with pytest.raises(TypeError, match="expected 3, got 2"):
        duals.hvp(misfit, x0, v, F)
    # keyword arguments as grad and jacfwd take them (hvp raised Python's own TypeError)
    keyworded = numba.njit(lambda x0, F, steps=30, dt=0.01: lorenz96_misfit(F, x0, steps, dt))
    _close(duals.hvp(keyworded, x0, v, F, dt=0.01), H @ v, rtol=1e-10, atol=1e-10)
    _close(duals.hvp(keyworded, x0, v, F=F, steps=30), H @ v, rtol=1e-10, atol=1e-10)


def test_hessian_with_tuple_argnums_gives_blocks():
    a, b = np.array([0.3, -0.2]), np.array([0.5, 0.1, 0.9])
    f = numba.njit(lambda a, b: np.sum(a) ** 2 * np.sum(b * b) + a[0] * b[2] ** 3)
    blocks = duals.jit.compiled_hessian_rev(f, argnums=(0, 1))(a, b)
    expected = duals.jit.compiled_hessian(f, argnums=(0, 1))(a, b)
    for row_got, row_expected in zip(blocks, expected):
        for got, want in zip(row_got, row_expected):
            assert got.shape == want.shape
            _close(got, want, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------- safety

def test_memory_stays_flat_over_a_thousand_gradient_calls():
    F = 8.0 + 0.1 * np.sin(np.arange(8.0))
    x0 = F.copy()
    gradient = duals.grad(lorenz96_misfit, argnums=(0, 1))
    gradient(F, x0, 50, 0.01)
    gc.collect()
    before = _resident_bytes()
    for _ in range(1000):
        gradient(F, x0, 50, 0.01)
    gc.collect()
    assert _resident_bytes() - before < 20 * 2 ** 20


def _resident_bytes():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096


def test_threads_record_on_their_own_tapes():
    F = 8.0 + 0.1 * np.sin(np.arange(10.0))
    gradient = duals.grad(lorenz96_misfit, argnums=1)
    starts = [F + 0.01 * k for k in range(8)]
    expected = [gradient(F, x0, 40, 0.01) for x0 in starts]
    results = [None] * len(starts)

    def work(k):
        for _ in range(5):
            results[k] = gradient(F, starts[k], 40, 0.01)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(starts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def test_writes_into_inputs_and_aliased_results_stay_inside_the_call():
    x = np.array([1.0, 2.0])
    J = duals.jacrev(scaled_in_place)(x)
    _close(J, [[3.0, 0.0], [0.0, 1.0]])
    assert x.tolist() == [1.0, 2.0]
    value, pullback = duals.vjp(scaled_in_place, x)
    value[0] = 100.0  # the result is the caller's own array
    _close(pullback(np.ones(2))[0], [3.0, 1.0])
    _close(duals.vjp(scaled_in_place, x)[0], [3.0, 2.0])


@njit
def energy_then_clamped(u):
    """A chain energy, then the boundary clamped in place (a constant stored into the input)."""
    e = 0.0
    for i in range(u.size - 1):
        e += u[i] * u[i + 1]
    u[0] = 0.0
    return e + np.sum(u)


@njit
def first_product(u):
    return u[0] * u[1]


def test_a_constant_stored_into_an_input_leaves_nothing_for_the_next_call():
    # the inputs' buffer is kept per layout and thread: every field of it is written again
    u = np.array([0.5, -1.0, 2.0])
    expected = duals.jacfwd(energy_then_clamped)(u)
    for _ in range(3):
        _close(duals.grad(energy_then_clamped)(u), expected)
        _close(duals.jacrev(first_product)(u), [-1.0, 0.5, 0.0])
        _close(duals.hvp(first_product, u, np.ones(3)), [1.0, 1.0, 0.0])
    assert u.tolist() == [0.5, -1.0, 2.0]


def test_an_exception_inside_compiled_code_propagates_and_the_next_call_works():
    with pytest.raises(ValueError, match="must not exceed 1"):
        duals.grad(fails_above_one)(np.array([2.0, 3.0]))
    _close(duals.grad(fails_above_one)(np.array([0.5, 3.0])), [3.0, 0.5])


@njit
def long_sum_of_squares(a, n):
    total = 0.0
    for k in range(n):
        total += (a * (1.0 + 1e-7 * k)) ** 2
    return total


def test_ten_million_recorded_operations_fit_well_under_a_gibibyte():
    from duals.jit.reverse import _thread_tape
    n = 10_000_000  # one node per iteration: the product and the square scale, the sum records
    g = duals.grad(long_sum_of_squares)(0.5, n)
    k = np.arange(n)
    assert g == pytest.approx(2 * 0.5 * np.sum((1.0 + 1e-7 * k) ** 2), rel=1e-10)
    size = duals.jit.last_recording()
    assert size.nodes == n + 2    # the constant, the input and one node per iteration
    assert size.nbytes == 24 * size.nodes < 2 ** 28  # 240 MiB of nodes for 10⁷ operations
    assert _thread_tape(np.float64).nbytes == 0  # a tape above 64 MiB is freed after a single call


def test_the_last_recording_reports_its_nodes_and_bytes_in_every_compiled_reverse_entry():
    assert duals.grad(long_sum_of_squares)(0.5, 10) > 0
    assert duals.jit.last_recording() == (12, 24, 288)
    duals.jacrev(long_sum_of_squares)(0.5, 100)
    assert duals.jit.last_recording() == (102, 24, 102 * 24)
    duals.vjp(long_sum_of_squares, 0.5, 7)
    assert duals.jit.last_recording().nodes == 9
    duals.hvp(long_sum_of_squares, 0.5, 1.0, 20)   # forward over reverse: one tangent lane
    assert duals.jit.last_recording() == (22, 40, 22 * 40)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(duals.jit.last_recording()))
    thread.start()
    thread.join()
    assert seen == [None]   # each thread reports its own recordings


def test_a_large_tape_is_kept_only_while_consecutive_calls_need_it(monkeypatch):
    from duals.jit import reverse
    from duals.jit.tape import BUFFER
    monkeypatch.setattr(reverse, "KEEP_TAPE_BYTES", 1 << 16)   # "large": above 2,730 nodes
    tape = reverse._thread_tape(np.float64)
    gradient = duals.grad(long_sum_of_squares)
    want = gradient(0.5, 10_000)
    gradient(0.5, 10)                  # a small recording: whatever large was kept is freed
    assert tape.nbytes < 1 << 16
    assert gradient(0.5, 10_000) == want
    assert tape.nbytes == 0            # one large recording does not hold its memory
    assert gradient(0.5, 10_000) == want
    kept = int(tape.header[BUFFER])
    assert tape.nbytes > 0             # the second in a row keeps it for the next
    assert gradient(0.5, 10_000) == want
    assert int(tape.header[BUFFER]) == kept and tape.nbytes > 0
    assert gradient(0.5, 10) == gradient(0.5, 10)
    assert tape.nbytes < 1 << 16       # a small one after them frees it
    monkeypatch.setattr(reverse, "KEEP_LOOP_BYTES", 1 << 17)   # and never above the loop's cap
    for _ in range(3):
        assert gradient(0.5, 10_000) == want
        assert tape.nbytes == 0


def test_the_tape_reports_its_size_and_frees_its_memory():
    tape = Tape(np.float64)
    assert tape.dtype.itemsize == 24  # two 32-bit parents and two partials per recorded operation
    tape.start(10)
    assert tape.recorded == 11
    tape.close()
    tape.start(3)  # a closed tape allocates again
    assert tape.nbytes > 0


@njit
def damped_oscillator_end(p, steps):
    x, v = 1.0, 0.0
    for _ in range(steps):
        v += 1e-4 * (-p[0] * x - p[1] * v)
        x += 1e-4 * v
    return x


def test_a_gradient_does_not_keep_the_adjoints_of_the_whole_tape_alive():
    # the blocks were views of the sweep's adjoint array: a (2,) gradient of a loop of 10⁶ steps
    # held 40 MB (one float per recorded operation) for as long as the caller kept it
    p = np.array([0.5, 0.1])
    g = duals.grad(damped_oscillator_end)(p, 100_000)
    assert g.base is None or g.base.nbytes <= 16
    _, pull = duals.vjp(damped_oscillator_end, p, 100_000)
    assert pull(1.0)[0].base is None or pull(1.0)[0].base.nbytes <= 16


_OUTGROWS = """
import resource, time, numba, numpy as np, duals
@numba.njit
def loop(p, n):
    x = 1.0
    for i in range(n):
        x = x + 1e-9 * p[0] * x
    return x
duals.grad(loop)(np.ones(1), 10)
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + (400 << 20), resource.RLIM_INFINITY))
start = time.perf_counter()
try:
    duals.grad(loop)(np.ones(1), 10 ** 8)
except MemoryError as exc:
    print("MemoryError", "outgrew memory" in str(exc))
"""


@pytest.mark.slow
def test_a_tape_the_allocator_refuses_raises_at_once():
    # after the first refused realloc every later push asked the allocator again: a loop of 10⁸
    # operations took minutes to reach the MemoryError (each of its pushes a failing realloc)
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _OUTGROWS], capture_output=True, text=True, timeout=240)
    assert done.stdout.split() == ["MemoryError", "True"], done.stderr[-2000:]


# ---------------------------------------------------------------- errors

def test_grad_of_a_vector_output_names_the_shape_and_the_way_out():
    with pytest.raises(TypeError, match=r"scalar output, got shape \(7,\); use jacrev or vjp"):
        duals.grad(mixing)(np.ones(6))


def test_functions_without_a_tape_rule_are_refused_with_what_to_do():
    cubic = numba.njit(lambda c: np.polyval(c, 2.0))
    c = np.array([1.0, -2.0, 3.0, 0.5])
    with pytest.raises(TypeError, match="np.polyval of dual numbers is not supported in compiled code; "
                                        r"Numba has none, not even for plain numbers.*polyval\(x, c\[::-1\]\)"):
        duals.grad(cubic)(c)
    _close(duals.grad(cubic.py_func)(c), np.array([8.0, 4.0, 2.0, 1.0]))   # the way out: the Python path
    # or the advice, which Numba compiles for plain numbers too
    reversed_cubic = numba.njit(lambda c: np.polynomial.polynomial.polyval(2.0, c[::-1]))
    _close(duals.grad(reversed_cubic)(c), np.array([8.0, 4.0, 2.0, 1.0]))
    # np.histogram is refused only where its edges would move with the data (a HEP trial: the docs
    # said it was refused outright); with edges or range= Numba's counts have derivative 0
    counted = numba.njit(lambda x: np.sum(np.histogram(x, 4)[0] * x[:4]))
    with pytest.raises(TypeError, match=r"np\.histogram .* bins a number and no range=.*give the edges"):
        duals.grad(counted)(np.linspace(0.0, 1.0, 8))
    ranged = numba.njit(lambda x: np.sum(np.histogram(x, 4, (0.0, 1.0))[0] * x[:4]))
    for transform in (duals.grad, duals.jacfwd):
        _close(transform(ranged)(np.linspace(0.0, 1.0, 8)), np.array([2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]))


@njit
def gaussian_fit(A, b, w):
    x = np.linalg.solve(A + np.diag(w), b)
    r = A @ x - b
    return r @ r + np.linalg.norm(x) + np.linalg.det(A) * np.sum(np.linalg.inv(A) @ w)


@njit
def clipped_profile(x):
    y = np.where(x > 0.3, x ** 2, 0.1)
    return np.dot(y, x) + np.sum(np.ones((2, x.shape[0])) @ y) + np.sum(y @ np.ones((x.shape[0], 3)))


def test_linear_algebra_and_where_on_adjoints_by_loops_equal_the_python_path():
    rng = np.random.default_rng(11)
    A = rng.normal(size=(4, 4)) + 4.0 * np.eye(4)
    b, w = rng.normal(size=4), rng.uniform(0.5, 1.0, 4)
    got = duals.grad(gaussian_fit, argnums=(0, 1, 2))(A, b, w)
    # the Python path on the same source: compiled forward linear algebra costs ~30 s to compile,
    # and test_jit_linalg checks it against the Python path
    want = duals.jacfwd(gaussian_fit.py_func, argnums=(0, 1, 2))(A, b, w)
    for g, f in zip(got, want):
        _close(g, f, rtol=1e-10, atol=1e-12)
    _close(got[1], central_differences(gaussian_fit, [A, b, w], 1), rtol=1e-6, atol=1e-7)
    x = np.linspace(-0.5, 1.5, 5)
    _close(duals.grad(clipped_profile)(x), duals.jacfwd(clipped_profile.py_func)(x), rtol=1e-13)
    H = duals.jit.compiled_hessian_rev(gaussian_fit, argnums=1)(A, b, w)  # adjoints over duals
    gradient_of_b = duals.grad(gaussian_fit, argnums=1)
    _close(H, central_differences(lambda b: gradient_of_b(A, b, w), [b], 0), rtol=1e-6, atol=1e-6)


@njit
def bar_compliance(stiffness, load, by_inverse=False):
    """A clamped bar of springs in series: assemble K, solve K u = f, compliance fᵀu."""
    n = stiffness.shape[0]
    K = np.zeros((n, n))
    for e in range(n):
        K[e, e] += stiffness[e]          # element e joins node e - 1 (clamped for e = 0) and node e
        if e > 0:
            K[e - 1, e - 1] += stiffness[e]
            K[e - 1, e] -= stiffness[e]
            K[e, e - 1] -= stiffness[e]
    u = np.linalg.inv(K) @ load if by_inverse else np.linalg.solve(K, load)
    return load @ u


def test_solve_and_inv_record_a_linear_map_not_an_elimination():
    n = 150
    rng = np.random.default_rng(3)
    k, f = rng.uniform(1.0, 2.0, n), rng.normal(size=n)
    value, got = duals.value_and_grad(bar_compliance)(k, f)
    assert value == pytest.approx(bar_compliance(k, f), rel=1e-13)   # fᵀu summed by a loop
    K = np.diag(k + np.append(k[1:], 0.0)) - np.diag(k[1:], 1) - np.diag(k[1:], -1)
    u = np.linalg.solve(K, f)
    strain = u - np.append(0.0, u[:-1])
    # the adjoint method's dc/dk_e = -(u_e - u_(e-1))², a difference of displacements ~300 times larger
    _close(got, -strain ** 2, rtol=1e-10, atol=1e-11 * np.max(np.abs(u)) ** 2)
    # dU = K⁻¹(df − dK U) by LAPACK's factors: a tridiagonal K's are bidiagonal, and the tape
    # grows as n (elimination on adjoints recorded n³/3 nodes, a dense inverse would n²)
    assert duals.jit.last_recording().nodes < 20 * n
    load_gradient = duals.grad(bar_compliance, argnums=1)(k, f)
    _close(load_gradient, 2.0 * u, rtol=1e-10)
    # inv(K) @ f: dP = −K⁻¹ dK P by the same substitutions, O(n²) nodes for a band (2 n³ dense)
    by_inverse = duals.grad(bar_compliance)(k, f, True)
    _close(by_inverse, got, rtol=1e-8, atol=1e-9 * np.max(np.abs(u)) ** 2)
    assert duals.jit.last_recording().nodes < 6 * n * n


def test_det_slogdet_and_inv_gradients_are_the_closed_forms():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(5, 5)) + 3.0 * np.eye(5)
    A_inv = np.linalg.inv(A)
    det = njit(lambda A: np.linalg.det(A))
    value, got = duals.value_and_grad(det)(A)
    assert value == det(A)
    _close(got, np.linalg.det(A) * A_inv.T, rtol=1e-12)
    log_abs = njit(lambda A: np.linalg.slogdet(A)[1])
    _close(duals.grad(log_abs)(A), A_inv.T, rtol=1e-12)
    inverse = njit(lambda A: np.linalg.inv(A))
    W = rng.normal(size=(5, 5))
    solved, _ = duals.vjp(njit(lambda A, b: np.linalg.solve(A, b)), A, W)
    assert np.array_equal(solved, np.linalg.solve(A, W))     # LAPACK's values, bit for bit
    out, pullback = duals.vjp(inverse, A)
    assert np.array_equal(out, inverse(A))
    _close(pullback(W)[0], -A_inv.T @ W @ A_inv.T, rtol=1e-12)   # d tr(Wᵀ A⁻¹) = −A⁻ᵀ W A⁻ᵀ
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    _close(duals.grad(det)(singular), duals.jacfwd(det)(singular), rtol=1e-12)   # the adjugate
    assert np.abs(duals.grad(det)(singular)).max() > 1.0
    with pytest.raises(np.linalg.LinAlgError, match="second derivative of np.linalg.det at a singular"):
        duals.hessian(det)(singular)
    # the plain slogdet returns (0, -inf) there: the refusal says why, as forward mode's does
    with pytest.raises(np.linalg.LinAlgError, match=r"slogdet has no derivative at a singular matrix"):
        duals.grad(log_abs)(singular)


@njit
def gp_negative_log_likelihood(theta, X, y):
    n = X.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = theta[0] ** 2 * np.exp(-0.5 * (X[i] - X[j]) ** 2 / theta[1] ** 2)
        K[i, i] += theta[2] ** 2
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L, y)
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * alpha @ alpha + 0.5 * logdet + np.linalg.norm(alpha - alpha)


@njit
def interpolated_forcing(t, xp, fp):
    return np.sum(np.interp(t, xp, fp) ** 2)


def test_cholesky_slogdet_interp_and_norm_at_zero_on_adjoints():
    X = np.linspace(0.0, 3.0, 6)
    y, theta = np.sin(X), np.array([1.1, 0.7, 0.3])
    got = duals.grad(gp_negative_log_likelihood)(theta, X, y)
    _close(got, duals.jacfwd(gp_negative_log_likelihood)(theta, X, y), rtol=1e-11)
    _close(got, central_differences(gp_negative_log_likelihood, [theta, X, y], 0), rtol=1e-6)
    H = duals.jit.compiled_hessian_rev(gp_negative_log_likelihood)(theta, X, y)
    gradient = duals.grad(gp_negative_log_likelihood)
    _close(H, central_differences(lambda p: gradient(p, X, y), [theta], 0), rtol=1e-6, atol=1e-7)
    xp, fp = np.linspace(0.0, 1.0, 5), np.array([0.0, 1.0, 0.5, 2.0, 1.0])
    for t in (np.array([0.1, 0.3, 0.55, 0.9]), np.array([0.0, 0.25, 1.0, 1.2, -0.1])):  # knots, outside
        got = duals.grad(interpolated_forcing, argnums=(0, 1, 2))(t, xp, fp)
        for g, f in zip(got, duals.jacfwd(interpolated_forcing, argnums=(0, 1, 2))(t, xp, fp)):
            _close(g, f, rtol=1e-13, atol=1e-15)
    inside = np.array([0.1, 0.3, 0.55, 0.9])
    _close(got[2], central_differences(interpolated_forcing, [t, xp, fp], 2), rtol=1e-6)
    _close(duals.grad(interpolated_forcing)(inside, xp, fp),
           central_differences(interpolated_forcing, [inside, xp, fp], 0), rtol=1e-6)


@njit
def regularised_residual(A, b):
    """A column of A as the right-hand side (a strided 1-d view) and norms of every order."""
    x = np.linalg.solve(A, b + A[:, 0])
    r = A @ x - b
    return (np.linalg.norm(r, 1) + np.linalg.norm(x, np.inf) + np.linalg.norm(x, 3)
            + np.linalg.norm(A, 1) + np.linalg.norm(A, -np.inf) + np.linalg.norm(x, -np.inf))


def test_solve_of_a_strided_vector_and_norms_of_every_order_on_adjoints():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 4)) + 4.0 * np.eye(4)
    b = rng.normal(size=4)
    got = duals.grad(regularised_residual, argnums=(0, 1))(A, b)
    want = duals.jacfwd(regularised_residual.py_func, argnums=(0, 1))(A, b)
    for g, w, k in zip(got, want, (0, 1)):
        _close(g, w, rtol=1e-12, atol=1e-14)
        _close(g, central_differences(regularised_residual, [A, b], k), rtol=1e-6, atol=1e-7)
    # the matrix 2-norms from the singular values (they were refused)
    two_norms = njit(lambda A: np.linalg.norm(A, 2) - 3.0 * np.linalg.norm(A, -2))
    python = lambda A: dnp.linalg.norm(A, 2) - 3.0 * dnp.linalg.norm(A, -2)  # noqa: E731
    _close(duals.grad(two_norms)(A), duals.grad(python)(A), rtol=1e-12)
    _close(duals.jacfwd(two_norms)(A), duals.grad(python)(A), rtol=1e-12)
    _close(duals.hessian(two_norms)(A), duals.hessian(python)(A), rtol=1e-10, atol=1e-12)


def test_a_string_norm_order_is_refused_with_what_numba_compiles_instead():
    # Numba's own norm takes no 'fro'/'nuc' (its plain call raises at run time); both modes said
    # something else ("use duals.jacfwd", which refused too)
    frobenius = njit(lambda p: np.linalg.norm(p.reshape(4, 3), "fro"))
    p = np.random.default_rng(3).normal(size=12)
    for transform in (duals.grad, duals.jacfwd):
        with pytest.raises(TypeError, match=r"takes no string ord .* np\.sum\(np\.linalg\.svd\(M\)\[1\]\)"):
            transform(frobenius)(p)
    nuclear = njit(lambda p: np.sum(np.linalg.svd(p.reshape(4, 3))[1]) + np.linalg.norm(p.reshape(4, 3)))
    U, _, Vt = np.linalg.svd(p.reshape(4, 3), full_matrices=False)
    exact = (U @ Vt + p.reshape(4, 3) / np.linalg.norm(p)).ravel()
    _close(duals.grad(nuclear)(p), exact, rtol=1e-12)
    _close(duals.jacfwd(nuclear)(p), exact, rtol=1e-12)


@njit
def angular_momentum_misfit(omega, positions, masses, target):
    momentum = np.sum(masses.reshape((-1, 1)) * np.cross(positions, np.cross(omega, positions)), axis=0)
    return np.sum((momentum - target) ** 2)


@njit
def stationary_gap(P):
    Q = np.linalg.matrix_power(P, 6)
    return np.sum((Q[0] - Q[-1]) ** 2)


def test_cross_products_and_matrix_powers_on_adjoints_equal_the_python_path():
    rng = np.random.default_rng(8)
    omega, r, m, target = rng.normal(size=3), rng.normal(size=(4, 3)), rng.uniform(0.5, 2.0, 4), rng.normal(size=3)
    got = duals.grad(angular_momentum_misfit, argnums=(0, 1, 2))(omega, r, m, target)
    want = duals.grad(angular_momentum_misfit.py_func, argnums=(0, 1, 2))(omega, r, m, target)
    for g, w in zip(got, want):
        _close(g, w, rtol=1e-12, atol=1e-13)
    P = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    _close(duals.grad(stationary_gap)(P), duals.grad(stationary_gap.py_func)(P), rtol=1e-11, atol=1e-15)
    _close(duals.grad(stationary_gap)(P), central_differences(stationary_gap, [P], 0), rtol=1e-6, atol=1e-9)


@njit
def deconvolution_misfit(signal, kernel, observed):
    """A blurred signal against observations, in NumPy's three modes."""
    blurred = np.convolve(signal, kernel, "same")
    return (np.sum((blurred - observed) ** 2) + 0.1 * np.sum(np.convolve(signal, kernel) ** 2)
            + np.sum(np.convolve(kernel, signal, "valid")))


def test_convolutions_on_adjoints_equal_the_python_path_in_every_mode():
    rng = np.random.default_rng(9)
    signal, kernel, observed = rng.normal(size=8), rng.normal(size=3), rng.normal(size=8)
    got = duals.grad(deconvolution_misfit, argnums=(0, 1))(signal, kernel, observed)
    want = duals.grad(deconvolution_misfit.py_func, argnums=(0, 1))(signal, kernel, observed)
    for g, w in zip(got, want):
        _close(g, w, rtol=1e-12, atol=1e-13)
    _close(got[1], central_differences(deconvolution_misfit, [signal, kernel, observed], 1), rtol=1e-6)


def test_a_plain_python_function_is_not_a_dispatcher():
    with pytest.raises(TypeError, match="expected a Numba dispatcher"):
        duals.jit.compiled_grad(lambda x: x)


def test_values_traced_by_an_enclosing_python_transformation_are_refused_clearly():
    with pytest.raises(TypeError, match="traced by an enclosing duals transformation"):
        duals.jacfwd(lambda p: duals.grad(softplus_sum)(p * np.ones(2)))(1.0)


@njit
def poisson_log_likelihood_terms(u, theta):
    s = 0.0
    for i in range(u.shape[0]):
        s += math.exp(theta[0] + u[i]) - theta[1] * u[i] + 0.5 * u[i] ** 2
    return s


def test_the_refusal_of_a_compiled_gradient_inside_jacfwd_names_a_hessian_block_that_gives_it():
    # (Laplace trial) d/dtheta of grad_u f: its advice was only grad(fn.py_func), which fails for
    # code written with math.* (the usual Numba style)
    u, theta = np.linspace(-1.0, 1.0, 5), np.array([0.1, 0.5])
    with pytest.raises(TypeError, match=r"H\[0\]\[1\] of duals.hessian\(fn, argnums=\(0, 1\)\)") as refused:
        duals.jacfwd(lambda t: duals.grad(poisson_log_likelihood_terms)(u, t))(theta)
    assert "math.* takes Python numbers only" in str(refused.value)
    block = duals.hessian(poisson_log_likelihood_terms, argnums=(0, 1))(u, theta)[0][1]
    np.testing.assert_allclose(block, np.stack([np.exp(theta[0] + u), -np.ones(5)], axis=1), rtol=1e-14)


@njit
def scaled_square_sum(x, c):
    return c * np.sum(x * x)


@pytest.mark.parametrize("inner", [duals.grad, duals.jacfwd, duals.jacrev, duals.hessian])
@pytest.mark.parametrize("outer", [duals.grad, duals.jacfwd])
def test_a_traced_value_in_an_argument_not_differentiated_names_the_enclosing_transformation(outer, inner):
    # (an MD trajectory whose forces are grad(njit energy), differentiated with respect to the
    # potential's parameter: the parameter reaches the compiled entry as a pass-through argument)
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"argument 1 is a value traced by an enclosing .*py_func"):
        outer(lambda c: np.sum(inner(scaled_square_sum)(x, c)))(3.0)
    python_path = outer(lambda c: np.sum(inner(scaled_square_sum.py_func)(x, c)))(3.0)
    assert np.isclose(python_path, np.sum(inner(scaled_square_sum)(x, 1.0)))


@njit
def barrier_payoff(S, B, K):
    """np.where on scalars, as a knock-out indicator is written; Numba's own np.where of floats
    gives 0-d arrays, which arithmetic then meets"""
    total = 0.0
    for i in range(S.shape[0]):
        total += np.where(S[i] < B, max(S[i] - K, 0.0) ** 2, 0.0) * np.where(S[i] > 0.5 * B, 1.0, 0.5)
    return total + np.sin(np.where(B > 1.0, 2.0, 3.0) * K) - (np.where(K > 1.0, 2.0, 3.0) < K)


def test_np_where_of_scalars_and_the_0d_arrays_it_gives_in_both_modes():
    args = (np.array([1.0, 1.4, 2.6, 1.9]), 2.5, 0.8)
    want = duals.grad(barrier_payoff.py_func, argnums=(0, 1, 2))(*args)
    for transform in (duals.grad, duals.jacfwd):
        for g, w in zip(transform(barrier_payoff, argnums=(0, 1, 2))(*args), want):
            _close(g, w, rtol=1e-14, atol=0)
    _close(duals.hessian(barrier_payoff)(args[0], *args[1:]), duals.hessian(barrier_payoff.py_func)(*args),
           rtol=1e-13, atol=1e-15)
    _close(want[0], central_differences(barrier_payoff, list(args), 0), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- long loops, checkpointed

@njit
def damped_step(x, p):
    return x + 0.05 * (p[0] * np.sin(x[::-1]) - p[1] * x * x)


@njit
def final_misfit(x, p):
    return np.sum((x - 0.5) ** 2) + p[0] * x[0]


@njit
def whole_loop(x0, p, steps):
    x = x0                      # a plain argument, rebound below to hold derivatives
    for _ in range(steps):
        x = damped_step(x, p)
    return final_misfit(x, p)


@pytest.mark.parametrize("segment", [1, 7, 40, 1000])
def test_a_loop_checkpointed_by_segments_gives_the_whole_loop_gradient(segment):
    x0, p = np.linspace(0.1, 0.9, 5), np.array([1.3, 0.7])
    value, (dx0, dp) = duals.jit.loop_value_and_grad(damped_step, final_misfit, 40, segment)(x0, p)
    assert value == pytest.approx(whole_loop(x0, p, 40), rel=1e-14)
    expected = duals.grad(whole_loop, argnums=(0, 1))(x0, p, 40)
    _close(dx0, expected[0], rtol=1e-12)
    _close(dp, expected[1], rtol=1e-12)
    _close(dp, central_differences(whole_loop, [x0, p, 40], 1), rtol=1e-6)


@njit
def damped_step_in_float32(x, p):
    return x + np.float32(0.05) * (p[0] * np.sin(x[::-1]) - p[1] * x * x)


def test_float32_loops_give_float32_gradients_of_the_float32_or_promoted_loop():
    x0, p = np.linspace(0.1, 0.9, 5).astype(np.float32), np.array([1.3, 0.7], np.float32)
    # a float64 constant promotes the state after the first step, as in the user's own loop
    value, (dx0, dp) = duals.jit.loop_value_and_grad(damped_step, final_misfit, 40, 7)(x0, p)
    promoted = duals.jit.loop_value_and_grad(damped_step, final_misfit, 40, 7)(x0.astype(np.float64), p)
    assert dx0.dtype == dp.dtype == np.float32 and value == promoted[0]
    _close(dx0, promoted[1][0].astype(np.float32), rtol=0)
    _close(dp, promoted[1][1].astype(np.float32), rtol=0)
    # a float32 step keeps the state float32 throughout
    value, (dx0, dp) = duals.jit.loop_value_and_grad(damped_step_in_float32, final_misfit, 40, 7)(x0, p)
    whole = njit(lambda x, p: final_misfit(_steps(x, p), p))
    expected = duals.grad(whole, argnums=(0, 1))(x0, p)
    assert dx0.dtype == dp.dtype == np.float32 and value == pytest.approx(whole(x0, p), rel=1e-6)
    _close(dx0, expected[0], rtol=1e-5)
    _close(dp, expected[1], rtol=1e-5)


@njit
def _steps(x, p):
    for _ in range(40):
        x = damped_step_in_float32(x, p)
    return x


def test_a_plain_argument_rebound_to_hold_derivatives_is_promoted_in_both_modes():
    x0, p = np.linspace(0.1, 0.9, 5), np.array([1.3, 0.7])
    _close(duals.grad(whole_loop, argnums=1)(x0, p, 30), duals.jacfwd(whole_loop, argnums=1)(x0, p, 30),
           rtol=1e-12)
    _close(duals.jacfwd(whole_loop, argnums=1)(x0, p, 30),
           central_differences(whole_loop, [x0, p, 30], 1), rtol=1e-6)


def test_checkpointed_loop_arguments_are_checked():
    with pytest.raises(ValueError, match="segment must be a positive integer"):
        duals.jit.loop_value_and_grad(damped_step, final_misfit, 10, segment=0)
    with pytest.raises(ValueError, match="steps must be a non-negative integer"):
        duals.jit.loop_value_and_grad(damped_step, final_misfit, 2.5)
    with pytest.raises(TypeError, match="must be a float array"):
        duals.jit.loop_value_and_grad(damped_step, final_misfit, 3)(np.ones(5), 1.0)
    with pytest.raises(TypeError, match=r"could not run step\(x, p\).*missing a required argument: 'extra'"):
        duals.jit.loop_value_and_grad(step_with_extra, final_misfit, 3)(np.ones(5), np.ones(2))
    with pytest.raises(TypeError, match=r"got function; decorate it with @numba.njit \(it works on compiled code only\)"):
        duals.jit.loop_value_and_grad(damped_step.py_func, final_misfit, 3)


@njit
def step_with_extra(x, p, extra):
    return x * p[0] + extra


@njit
def count_above(x):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            count += 1
    return count


def test_an_integer_result_is_refused_by_grad_and_hvp_as_in_python_mode():
    x = np.array([0.3, 0.9])
    for call in (lambda: duals.grad(count_above)(x), lambda: duals.value_and_grad(count_above)(x)):
        with pytest.raises(TypeError, match=r"grad requires a floating-point output, but the function "
                                            r"returned an integer \(int64\)"):
            call()
    with pytest.raises(TypeError, match="hvp requires a floating-point output"):
        duals.hvp(count_above, x, x)
    np.testing.assert_array_equal(duals.jacrev(count_above)(x), [0.0, 0.0])
    np.testing.assert_array_equal(duals.jacfwd(count_above)(x), [0.0, 0.0])


@numba.njit
def parts_of_real(x):
    return np.sum(np.real(x) * x) + np.imag(x[1]) * x[0] + np.sum(np.angle(x) * x) + np.conj(x[2]) * x[1]


def test_real_imag_angle_conj_of_real_adjoints_are_as_forward_mode():
    x = np.array([1.0, -2.0, 0.5])
    _close(duals.grad(parts_of_real)(x), duals.jacfwd(parts_of_real)(x), rtol=1e-15, atol=0.0)
    _close(duals.grad(parts_of_real)(x), central_differences(parts_of_real, [x], 0), rtol=1e-8, atol=1e-8)
    _close(duals.hessian(parts_of_real)(x), duals.jit.compiled_hessian(parts_of_real)(x), rtol=1e-15, atol=0.0)


# ---------------------------------------------------------------- zeros that are only numerical

@njit
def weighted_mixture_term(x):
    """exp(log(w) - s) + s: a mixture's zero weight w = x[0] through its logarithm."""
    t = math.log(x[0])
    return math.exp(t - x[1]) + x[1]


@njit
def speed_computed_and_not_used(v):
    speed = math.sqrt(v[0] * v[0] + v[1] * v[1])   # recorded, unused: nothing depends on it
    if speed > 1e300:
        return speed
    return v[0] * 3.0 + v[1]


@njit
def components(v):
    out = np.empty(2)
    out[0] = v[0] * 2.0
    out[1] = math.sqrt(v[1])   # sqrt'(0) = inf, in the second output only
    return out


def test_a_zero_that_is_only_numerical_meets_an_infinite_partial_as_in_every_mode():
    # (a probabilistic-programming trial) compiled grad skipped every zero adjoint, so exp'(-inf) = 0
    # times log'(0) = inf gave the exact-looking 0.0 for a derivative that is 0.607, where the
    # NumPy path and compiled forward mode give NaN
    x = np.array([0.0, 0.5])
    with np.errstate(all="ignore"):
        python = duals.grad(lambda x: np.exp(np.log(x[0]) - x[1]) + x[1])(x)
    for transform in (duals.grad, duals.jacrev, duals.jit.compiled_hessian):
        got = transform(weighted_mixture_term)(x)
        assert np.isnan(got.ravel()[0]), transform
    assert np.isnan(python[0]) and python[1] == 1.0
    # a node nothing depends on adds nothing even through an infinite partial (a speed at rest)
    v = np.zeros(2)
    np.testing.assert_array_equal(duals.grad(speed_computed_and_not_used)(v), [3.0, 1.0])
    # neither does a row of the Jacobian that does not reach it, nor a zero cotangent
    v = np.array([1.0, 0.0])
    J = duals.jacrev(components)(v)
    np.testing.assert_array_equal(J[0], [2.0, 0.0])
    assert np.isinf(J[1, 1])
    pulled = duals.vjp(components, v)[1](np.array([1.0, 0.0]))[0]
    np.testing.assert_array_equal(pulled, [2.0, 0.0])
    assert not np.signbit(pulled).any()   # 0.0, not the sweep's untouched -0.0


@njit
def monthly_survival(x):
    q = min(x, 1.0)          # a mortality rate capped at 1: the cap binds at x = 2
    p = 1.0 - q              # exactly 0, and constant near x = 2
    return x + p ** 0.5      # sqrt'(0) = inf, reached only through the branch not taken


@njit
def monthly_survival_of_arrays(x):
    p = 1.0 - np.minimum(x, 1.0)
    return np.sum(x + np.sqrt(p))


def test_a_branch_min_does_not_take_passes_no_infinite_adjoint_on():
    # (actuarial trial) the losing side of min was recorded with partial 0, and 0 · inf = NaN
    # came back to x; the NumPy path's min gives the branch not taken nothing at all
    assert duals.grad(monthly_survival)(2.0) == 1.0
    assert duals.jacrev(monthly_survival)(2.0) == 1.0
    assert duals.hessian(monthly_survival)(2.0) == 0.0
    x = np.array([2.0, 0.75])
    expected = np.array([1.0, 1.0 - 0.5 / np.sqrt(0.25)])
    np.testing.assert_array_equal(duals.grad(monthly_survival_of_arrays)(x), expected)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(duals.grad(monthly_survival_of_arrays.py_func)(x), expected)
