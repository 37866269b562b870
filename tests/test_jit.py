"""Compiled forward mode: unchanged @numba.njit code differentiated with the dual type of duals.jit.

Every compiled function lives at module level with cache=True, so that a warm Numba cache
makes this file fast and each specialisation is compiled once per session. The table tests
(``test_every_unary_entry_*``) iterate duals.derivatives, so a new line there is tested here.
"""
import collections
import cmath
import heapq
import math

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.jit import DualType, extras, fn
from duals.jit._types import DIGEST
from duals.jit.running import transformations_running
from finite_differences import central_differences

njit = numba.njit(cache=True)


# ---------------------------------------------------------------- user code, unchanged

@njit
def lorenz_rhs(s, sigma, rho, beta, out):
    out[0] = sigma * (s[1] - s[0])
    out[1] = s[0] * (rho - s[2]) - s[1]
    out[2] = s[0] * s[1] - beta * s[2]


@njit
def lorenz_rk4(sigma, rho, beta, state, dt, n):
    s = state.copy()
    k1 = np.empty_like(s)
    k2 = np.empty_like(s)
    k3 = np.empty_like(s)
    k4 = np.empty_like(s)
    tmp = np.empty_like(s)
    for _ in range(n):
        lorenz_rhs(s, sigma, rho, beta, k1)
        for i in range(3):
            tmp[i] = s[i] + 0.5 * dt * k1[i]
        lorenz_rhs(tmp, sigma, rho, beta, k2)
        for i in range(3):
            tmp[i] = s[i] + 0.5 * dt * k2[i]
        lorenz_rhs(tmp, sigma, rho, beta, k3)
        for i in range(3):
            tmp[i] = s[i] + dt * k3[i]
        lorenz_rhs(tmp, sigma, rho, beta, k4)
        for i in range(3):
            s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    return s


def lorenz_numpy(sigma, rho, beta, s, dt, n):
    def rhs(s):
        return dnp.stack([sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2]])
    for _ in range(n):
        k1 = rhs(s)
        k2 = rhs(s + 0.5 * dt * k1)
        k3 = rhs(s + 0.5 * dt * k2)
        k4 = rhs(s + dt * k3)
        s = s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return s


@njit
def newton_sqrt(a):
    x = a if a > 1.0 else 1.0
    while abs(x * x - a) > 1e-15 * a:
        x = 0.5 * (x + a / x)
    return x


@njit
def branchy_sum(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            acc += x[i] * x[i]
        else:
            acc -= math.sin(x[i])
    return acc


def branchy_numpy(x):
    return dnp.sum(dnp.where(x > 0.0, x * x, -dnp.sin(x)))


@njit
def mathy(x, y):
    return (math.exp(x) * math.log(y) + math.atan2(x, y) + math.hypot(x, y) + x ** y
            + math.sqrt(y) / math.cosh(x) + np.tanh(x * y) + abs(x - 2.0 * y) + 2 ** x
            - max(x, y) * min(x, 0.5) + math.erf(x) + np.expm1(y) / (1 + x))


def mathy_numpy(x, y):
    return (dnp.exp(x) * dnp.log(y) + dnp.arctan2(x, y) + dnp.hypot(x, y) + x ** y
            + dnp.sqrt(y) / dnp.cosh(x) + dnp.tanh(x * y) + dnp.abs(x - 2.0 * y) + 2 ** x
            - dnp.maximum(x, y) * dnp.minimum(x, 0.5) + duals.special.erf(x) + dnp.expm1(y) / (1 + x))


@njit
def beyond_the_table(x, y):
    return (max(x, y, 0.1) + min(x, 2.0 * y, 3.0) + math.log(x, 2.0) + math.log(y, x)
            + math.floor(x) + round(y) + math.copysign(x, -1.0) + np.clip(x, 0.0, 0.8)
            + x % y + x // y + (x if x else y) + np.rint(y) * x)


def beyond_the_table_numpy(x, y):
    return (dnp.maximum(dnp.maximum(x, y), 0.1) + dnp.minimum(dnp.minimum(x, 2.0 * y), 3.0)
            + dnp.log(x) / dnp.log(2.0) + dnp.log(y) / dnp.log(x) + dnp.floor(x) + dnp.round(y)
            - dnp.abs(x) + dnp.clip(x, 0.0, 0.8) + x % y + x // y + x + dnp.rint(y) * x)


@njit
def matvec(A, x):
    out = np.empty(A.shape[0], dtype=x.dtype)
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        out[i] = acc
    return out


@njit
def outer_tanh(x):
    n = x.shape[0]
    out = np.zeros((n, n), dtype=x.dtype)
    for i in range(n):
        for j in range(n):
            out[i, j] = math.tanh(x[i] * x[j]) + 0.5 * x[i]
    return out


@njit
def rosenbrock(x):
    acc = 0.0
    for i in range(x.shape[0] - 1):
        acc += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return acc


def rosenbrock_numpy(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@njit
def slicing_and_iteration(x):
    y = x[1:].copy()
    z = np.zeros_like(x)
    acc = 0.0
    for v in y:
        acc += v * v
    for i in range(z.shape[0]):
        z[i] = acc * x[i]
    w = np.empty(2, dtype=x.dtype)
    w[0] = 1.0            # a float stored into a dual array becomes a constant dual
    w[1] = z[-1]
    return z, w


@njit
def predicates(x):
    total = 0.0
    if math.isnan(x) or not math.isfinite(x):
        return total
    if x >= 1.0 and x != 3.0:
        total = x * 3.0
    else:
        total = -x
    return total


@njit
def make_dual(p, t):
    return duals.Dual(p, t)


@njit
def dual_parts(d):
    return d.primal, d.tangent, d * d


@njit
def doubles_its_input_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return x


@njit
def identity(x):
    return x


@njit
def three_lane_square(p):
    d = duals.Dual(p, (1.0, 2.0, 3.0))
    e = d * d
    return e.primal, e.tangent


@njit
def square_of(d):
    return d * d


@njit
def writes_into_float_array(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]
    return out


@njit
def writes_into_float_array_argument(out, a):
    for i in range(out.shape[0]):
        out[i] = a * i
    return out


@njit
def buffer_from_scalar_dtype(a, b):
    out = np.empty(2, dtype=a.dtype)
    out[0] = a * b
    out[1] = a + b
    return out


@njit
def converts_to_float(x):
    return float(x) * 2.0


@njit
def uses_ldexp(x):
    return math.ldexp(x, 2)


@njit
def distinct_levels(x):
    """The number of distinct values times the first: a set of the entries."""
    seen = set()
    for v in x:
        seen.add(v)
    return len(seen) * x[0]


@njit
def memoised_squares(x):
    cache = {}
    total = 0.0
    for v in x:
        if v not in cache:
            cache[v] = v * v
        total += cache[v]
    return total


# ---------------------------------------------------------------- Lorenz, the motivating case

LORENZ = (10.0, 28.0, 8.0 / 3.0, np.array([1.0, 1.0, 1.0]), 0.01, 60)
LORENZ_JAC = duals.jacfwd(lorenz_rk4, argnums=(0, 1, 2, 3))


def test_lorenz_jacfwd_matches_jacrev_of_numpy_version():
    got = LORENZ_JAC(*LORENZ)
    want = duals.jacrev(lorenz_numpy, argnums=(0, 1, 2, 3))(*LORENZ)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_lorenz_jacfwd_matches_central_differences():
    sigma, rho, beta, x0, dt, n = LORENZ
    got = LORENZ_JAC(*LORENZ)
    p = np.array([sigma, rho, beta, *x0])
    h = 1e-6
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        a, b = p + e, p - e
        fd = (lorenz_rk4(a[0], a[1], a[2], a[3:], dt, n) - lorenz_rk4(b[0], b[1], b[2], b[3:], dt, n)) / (2 * h)
        col = got[k] if k < 3 else got[3][:, k - 3]
        np.testing.assert_allclose(col, fd, rtol=1e-6, atol=1e-7)


def test_lorenz_jvp_is_the_jacobian_times_the_direction():
    sigma, rho, beta, x0, dt, n = LORENZ
    v = (0.3, -1.0, 2.0, np.array([0.5, 0.0, -0.25]))
    value, tangent = duals.jvp(lorenz_rk4, LORENZ, v + (None, None))
    J = LORENZ_JAC(*LORENZ)
    np.testing.assert_allclose(value, lorenz_rk4(*LORENZ), rtol=1e-14)
    want = J[0] * v[0] + J[1] * v[1] + J[2] * v[2] + J[3] @ v[3]
    np.testing.assert_allclose(tangent, want, rtol=1e-11, atol=1e-13)


def test_jacfwd_chunks_give_the_same_jacobian():
    chunked = duals.jacfwd(lorenz_rk4, argnums=(0, 1, 2, 3), chunk_size=4)(*LORENZ)
    for g, w in zip(chunked, LORENZ_JAC(*LORENZ)):
        np.testing.assert_allclose(g, w, rtol=1e-13)


# ---------------------------------------------------------------- control flow and arrays

def test_newton_iteration_inside_gives_the_derivative_of_the_solution():
    for a in (0.3, 2.0, 9.0):
        value, d = duals.jvp(newton_sqrt, (a,), (1.0,))
        assert value == pytest.approx(math.sqrt(a), rel=1e-14)
        assert d == pytest.approx(0.5 / math.sqrt(a), rel=1e-12)


def test_branches_and_accumulator_from_zero_match_numpy_gradient():
    x = np.array([0.5, -1.2, 2.0, -0.1, 0.7])
    got = duals.jacfwd(branchy_sum)(x)
    np.testing.assert_allclose(got, duals.grad(branchy_numpy)(x), rtol=1e-14)
    assert isinstance(got, np.ndarray) and got.shape == x.shape


def test_math_functions_mixed_with_floats_and_ints_match_numpy_version():
    for x, y in ((0.3, 1.7), (1.2, 0.8)):
        got = duals.jacfwd(mathy, argnums=(0, 1))(x, y)
        want = duals.jacfwd(mathy_numpy, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_functions_composed_from_the_table_match_the_numpy_path():
    for x, y in ((0.55, 0.35), (1.7, 0.6)):
        got = duals.jacfwd(beyond_the_table, argnums=(0, 1))(x, y)
        want = duals.jacfwd(beyond_the_table_numpy, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        want2 = duals.hessian(beyond_the_table_numpy, argnums=(0, 1))(x, y)
        for hessian in (duals.hessian, duals.jit.compiled_hessian):   # over reverse, over forward
            got2 = hessian(beyond_the_table, argnums=(0, 1))(x, y)
            np.testing.assert_allclose(np.array(got2, dtype=float), np.array(want2, dtype=float), rtol=1e-10)


def test_two_dimensional_arrays_and_tuple_argnums():
    rng = np.random.default_rng(0)
    A, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    dA, dx = duals.jacfwd(matvec, argnums=(0, 1))(A, x)
    wA, wx = duals.jacrev(lambda A, x: dnp.sum(A * x[None, :], axis=1), argnums=(0, 1))(A, x)
    assert dA.shape == (3, 3, 4) and dx.shape == (3, 4)
    np.testing.assert_allclose(dA, wA, atol=1e-14)
    np.testing.assert_allclose(dx, wx, atol=1e-14)


def test_two_dimensional_output_shape_and_values():
    x = np.array([0.2, -0.5, 1.1])
    got = duals.jacfwd(outer_tanh)(x)
    want = duals.jacfwd(lambda x: dnp.tanh(x[:, None] * x[None, :]) + 0.5 * x[:, None]
                        + 0.0 * x[None, :])(x)
    assert got.shape == (3, 3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_wide_input_is_chunked_into_several_passes():
    x = np.linspace(-1.0, 1.5, 21)  # more directions than one pass carries
    got = duals.jacfwd(rosenbrock)(x)
    np.testing.assert_allclose(got, duals.grad(rosenbrock_numpy)(x), rtol=1e-12)


def test_slicing_iteration_copy_zeros_like_and_float_stores():
    x = np.array([1.0, 2.0, 3.0])
    (z, w), (dz, dw) = duals.jvp(slicing_and_iteration, (x,), (np.array([1.0, 0.0, 1.0]),))
    acc = 13.0
    np.testing.assert_allclose(z, acc * x)
    np.testing.assert_allclose(dz, 6.0 * x + acc * np.array([1.0, 0.0, 1.0]))
    np.testing.assert_allclose(w, [1.0, z[-1]])
    np.testing.assert_allclose(dw, [0.0, dz[-1]])


def test_dual_scalar_dtype_makes_a_dual_buffer():
    da, db = duals.jacfwd(buffer_from_scalar_dtype, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose(da, [3.0, 1.0])
    np.testing.assert_allclose(db, [2.0, 1.0])


def test_comparisons_and_predicates_use_the_real_part():
    assert duals.jvp(predicates, (2.0,), (1.0,)) == (6.0, 3.0)
    assert duals.jvp(predicates, (3.0,), (1.0,)) == (-3.0, -1.0)
    assert duals.jvp(predicates, (0.5,), (1.0,)) == (-0.5, -1.0)


def test_constant_arguments_pass_through_unchanged():
    sigma, rho, beta, x0, dt, n = LORENZ
    _, t_int = duals.jvp(lorenz_rk4, (sigma, rho, beta, x0, dt, n), (1.0, 0.0, 0.0, np.zeros(3), None, None))
    np.testing.assert_allclose(t_int, LORENZ_JAC(*LORENZ)[0], rtol=1e-12)


def test_has_aux_returns_the_primal_of_the_aux():
    f = duals.jacfwd(dual_parts, has_aux=True)
    with pytest.raises(TypeError):
        f(2.0)  # dual_parts returns three values, not (out, aux)


def test_float_input_gives_float_result():
    out = duals.jacfwd(newton_sqrt)(4.0)
    assert np.ndim(out) == 0 and float(out) == pytest.approx(0.25)


# ---------------------------------------------------------------- second order

def test_hessian_of_compiled_code_matches_numpy_hessian():
    x = np.array([0.9, 1.1, 0.7, 1.3])
    np.testing.assert_allclose(duals.hessian(rosenbrock)(x), duals.hessian(rosenbrock_numpy)(x),
                               rtol=1e-12)


def test_hessian_of_scalar_function_with_math_calls():
    want = duals.hessian(mathy_numpy, argnums=(0, 1))(0.3, 1.7)
    for hessian in (duals.hessian, duals.jit.compiled_hessian):   # over reverse, over forward
        got = hessian(mathy, argnums=(0, 1))(0.3, 1.7)
        np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-10)


def test_nested_duals_are_distinct_tagged_types():
    inner = DualType(numba.float64, 2)
    outer = DualType(inner, 2)
    assert (inner.tag, outer.tag) == (1, 2) and inner != outer
    assert DIGEST in repr(inner.key)


# ---------------------------------------------------------------- duals.Dual inside @njit

def test_dual_created_passed_in_and_returned():
    d = make_dual(2.0, 3.0)
    assert isinstance(d, duals.Dual) and (d.primal, d.tangent) == (2.0, 3.0)
    p, t, sq = dual_parts(duals.Dual(2.0, 3.0))
    assert (p, t) == (2.0, 3.0)
    assert (sq.primal, sq.tangent) == (4.0, 12.0)


def test_dual_with_lanes_tuple_inside_njit_returns_its_tangent_as_a_tuple():
    assert three_lane_square(2.0) == (4.0, (4.0, 8.0, 12.0))


@njit
def derivative_of_plus(x):
    y = duals.Dual(1.0, 1.0)   # d/dy (x + y) at y = 1, inside compiled code
    return (x + y).tangent


@njit
def times_inner_derivative(x):
    return x[0] * derivative_of_plus(x[0])   # x · 1: its derivative is 1


@njit
def scaled_lgamma(x, c):
    return math.lgamma(x[0]) * c


@pytest.mark.parametrize("transform", [
    lambda f, x: duals.jacfwd(f)(x), lambda f, x: duals.jvp(f, (x,), (np.ones(1),)),
    lambda f, x: duals.hessian(f)(x), lambda f, x: duals.grad(f)(x),
    lambda f, x: duals.jacrev(f)(x), lambda f, x: duals.hvp(f, x, np.ones(1))])
def test_a_dual_made_in_compiled_code_never_mixes_with_a_transformations_own(transform):
    # one-lane duals made inside the code have the type of jvp's own: adding their lanes would
    # give d/dx [x · d/dy (x + y)] = 2 (and a value of 4); every transformation refuses instead
    x = np.array([2.0])
    assert times_inner_derivative(x) == 2.0   # the plain call runs the inner derivative
    with pytest.raises((ValueError, TypeError), match="nested inside compiled code"):
        transform(times_inner_derivative, x)
    assert times_inner_derivative(x) == 2.0 and derivative_of_plus(duals.Dual(2.0, 1.0)) == 2.0


@njit
def newton_with_its_own_derivative(target, x):
    for _ in range(30):   # solve x(y) ** 3 = target with the slope from a Dual of the iterate
        d = duals.Dual(x, 1.0) ** 3
        x = x - (d.primal - target) / d.tangent
    return x


@pytest.mark.parametrize("transform", [duals.jacfwd, duals.grad])
def test_a_dual_made_of_a_differentiated_value_says_nested_derivatives_are_not_supported(transform):
    assert newton_with_its_own_derivative(8.0, 1.0) == pytest.approx(2.0)
    with pytest.raises(TypeError, match=r"duals\.Dual\((Dual1|Adjoint1)\[float64.*makes a derivative of a value .*"
                                        r"write the inner derivative as a formula"):
        transform(newton_with_its_own_derivative, argnums=1)(8.0, 1.0)


@numba.njit
def transformation_running_seen_by_compiled_code():
    return transformations_running()


def test_compiled_code_reads_the_count_of_running_transformations():
    # the count is a list's length read in place: a wrong address would never refuse a Dual
    from duals.jit import running
    assert not transformation_running_seen_by_compiled_code()
    assert running.counted(transformation_running_seen_by_compiled_code)
    assert running.counted(running.counted, transformation_running_seen_by_compiled_code)
    assert not transformation_running_seen_by_compiled_code()
    fallback = running._CountedList()     # (for an interpreter whose list length is not found)
    fallback.append(None)
    fallback.append(None)
    fallback.pop()
    assert running._CountedList.count.value == len(fallback) == 1
    fallback.pop()
    assert running._CountedList.count.value == 0


def test_the_count_of_running_transformations_survives_threads():
    # a lost update of the process-wide count would refuse every later Dual made in compiled code
    from concurrent.futures import ThreadPoolExecutor
    from duals.jit.running import transformations_running_now
    x = np.array([0.3, 0.4])
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: duals.jacfwd(scaled_lgamma)(x, 2.0), range(200)))
    assert not transformations_running_now()
    assert derivative_of_plus(duals.Dual(2.0, 1.0)) == 2.0


@pytest.mark.parametrize("transform", [
    lambda f, x, c: duals.jacfwd(f)(x, c), lambda f, x, c: duals.hessian(f)(x, c),
    lambda f, x, c: duals.grad(f)(x, c), lambda f, x, c: duals.hvp(f, x, np.ones(1), c),
    lambda f, x, c: duals.jvp(f, (x, c), (np.ones(1), None))])
def test_a_users_dual_argument_to_a_compiled_transformation_is_refused(transform):
    # its tangent was added to d/dx: lgamma(x) c with c = 2 + ε gave ψ(x)·2 + lgamma(x)
    with pytest.raises(TypeError, match="is a duals.Dual"):
        transform(scaled_lgamma, np.array([2.5]), duals.Dual(2.0, 1.0))


Pair = collections.namedtuple("Pair", "scale shift")


@numba.njit
def scaled_by_first_item(x, p):
    return x * p[0][0] + p[1]


def _typed_list_of(item):
    from numba.typed import List
    out = List()
    out.append(item)
    return out


@pytest.mark.parametrize("holder", [
    lambda c: (Pair((c,), 1.0),), lambda c: (((c,), 1.0),), lambda c: ([(c, 1.0)], 1.0),
    lambda c: ((_typed_list_of(c),), 1.0), lambda c: (((duals.jit.dual_array(np.array([2.0]), np.eye(1)),),), 1.0),
    lambda c: (((duals.jit.dual_array(np.array([2.0, 1.0]), np.eye(2))[0],),), 1.0),
    lambda c: (({c},), 1.0)],
    ids=["namedtuple", "nested tuple", "list of tuples", "typed List", "dual array", "its element", "set"])
@pytest.mark.parametrize("transform", [duals.jacfwd, duals.hessian, duals.grad])
def test_a_users_dual_anywhere_inside_an_argument_is_refused(holder, transform):
    # its tangent was added to d/dx: x * p[0][0] with a Dual 2 + eps there gave 5, not 2
    with pytest.raises(TypeError, match="is a duals.Dual"):
        transform(scaled_by_first_item)(3.0, *holder(duals.Dual(2.0, 1.0)))


GLOBAL_DUAL = duals.Dual(2.0, 1.0)


@numba.njit
def times_global_dual(x):
    return x * GLOBAL_DUAL


def test_a_dual_in_a_global_of_compiled_code_is_refused_with_the_way_out():
    # Numba freezes a global as a constant: the message named traced values and duals.jacfwd
    with pytest.raises(Exception, match="global variable of @numba.njit code .* argument"):
        times_global_dual(3.0)
    with pytest.raises(Exception, match="global or closure variable"):   # (it spoke of lanes only)
        duals.grad(times_global_dual)(3.0)


def test_plain_values_inside_arguments_pass_the_refusal_of_duals():
    assert duals.jacfwd(scaled_by_first_item)(3.0, Pair((2.0,), 1.0)) == 2.0
    assert duals.grad(scaled_by_first_item)(3.0, (_typed_list_of(2.0), 1.0)) == 2.0


def test_an_element_of_a_dual_array_is_a_dual_scalar_argument():
    arr = duals.jit.dual_array(np.array([1.0, 2.0]), np.eye(2))
    d = square_of(arr[1])   # an np.void of dual dtype, read in place by the compiled code
    assert isinstance(d, duals.Dual) and d.primal == 4.0
    np.testing.assert_array_equal(d.tangent, [0.0, 4.0])


# ---------------------------------------------------------------- entry points reuse their buffers

def test_inputs_written_in_place_do_not_leak_into_the_next_call():
    jac = duals.jacfwd(doubles_its_input_in_place)
    for _ in range(3):
        np.testing.assert_array_equal(jac(np.array([1.0, 2.0])), 2.0 * np.eye(2))
    for _ in range(3):
        value, tangent = duals.jvp(doubles_its_input_in_place, (np.array([1.0, 2.0]),), (np.array([1.0, -1.0]),))
        np.testing.assert_array_equal(value, [2.0, 4.0])
        np.testing.assert_array_equal(tangent, [2.0, -2.0])


def test_results_never_alias_the_reused_buffers():
    first = duals.jacfwd(identity)(np.array([3.0]))
    value, tangent = duals.jvp(identity, (np.array([3.0]),), (np.array([1.0]),))
    duals.jacfwd(identity)(np.array([5.0]))
    duals.jvp(identity, (np.array([7.0]),), (np.array([2.0]),))
    assert first.tolist() == [[1.0]] and value.tolist() == [3.0] and tangent.tolist() == [1.0]


def test_threads_calling_one_jacobian_get_their_own_buffers():
    import threading
    jac = duals.jacfwd(outer_tanh)
    xs = [np.array([0.1, -0.2, 0.3]) * k for k in range(1, 7)]
    want = [jac(x) for x in xs]
    mismatches = []

    def work():
        for _ in range(100):
            mismatches.extend(k for k, x in enumerate(xs) if not np.array_equal(jac(x), want[k]))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


def test_float32_inputs_give_float32_derivatives():
    x = np.array([0.2, -0.5, 1.1], dtype=np.float32)
    J = duals.jacfwd(outer_tanh)(x)
    assert J.dtype == np.float32
    np.testing.assert_allclose(J, duals.jacfwd(outer_tanh)(x.astype(np.float64)), rtol=1e-6, atol=1e-6)
    _, t = duals.jvp(outer_tanh, (x,), (np.ones(3, np.float32),))
    assert t.dtype == np.float32
    energy = numba.njit(lambda x: np.sum(np.sin(x) * x))   # a scalar computed in float64 on duals
    for transform in (duals.jacfwd, duals.grad, duals.hessian):
        assert transform(energy)(x).dtype == np.float32


# ---------------------------------------------------------------- every entry of the table

def _points(name):
    return (-0.4, 0.6, 1.7)


def _generated(tmp_path_factory):
    """One compiled function per arity calling every entry as fn.<name> (written to a file)."""
    path = tmp_path_factory.mktemp("jit_table") / "table_funcs.py"
    unary = ", ".join(f"fn.{n}(x)" for n in derivatives.UNARY)
    binary = ", ".join(f"fn.{n}(x, y)" for n in derivatives.BINARY)
    path.write_text("import numba\nfrom duals.jit import fn\n\n"
                    f"@numba.njit\ndef unary(x):\n    return ({unary},)\n\n"
                    f"@numba.njit\ndef binary(x, y):\n    return ({binary},)\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return _generated(tmp_path_factory)


def _array_path(name, primals, tangents):
    from duals.ops.elementwise import PRIMITIVES
    with np.errstate(all="ignore"):
        return duals.jvp(PRIMITIVES[name], primals, tangents)


def test_every_unary_entry_matches_the_array_path(table):
    bad = []
    for x in _points(None):
        with np.errstate(all="ignore"):
            values, tangents = duals.jvp(table["unary"], (x,), (1.0,))
        for name, v, t in zip(derivatives.UNARY, values, tangents):
            wv, wt = _array_path(name, (x,), (1.0,))
            if not (np.allclose(v, wv, rtol=1e-13, equal_nan=True)
                    and np.allclose(t, wt, rtol=1e-13, equal_nan=True)):
                bad.append((name, x, (v, t), (wv, wt)))
    assert not bad, bad


@pytest.mark.parametrize("which", ["both", "x only", "y only"])
def test_every_binary_entry_matches_the_array_path(table, which):
    tx, ty = {"both": (1.0, 0.5), "x only": (1.0, None), "y only": (None, 0.5)}[which]
    bad = []
    for x, y in ((0.6, 1.7), (1.3, 0.4), (0.8, 0.8)):
        with np.errstate(all="ignore"):
            values, tangents = duals.jvp(table["binary"], (x, y), (tx, ty))
        for name, v, t in zip(derivatives.BINARY, values, tangents):
            wv, wt = _array_path(name, (x, y), (0.0 if tx is None else tx, 0.0 if ty is None else ty))
            if not (np.allclose(v, wv, rtol=1e-13) and np.allclose(t, wt, rtol=1e-13)):
                bad.append((name, (x, y), (v, t), (wv, wt)))
    assert not bad, bad


def test_every_entry_has_a_compiled_spelling():
    from duals.jit.rules import spellings
    for name in list(derivatives.UNARY) + list(derivatives.BINARY):
        assert callable(getattr(fn, name)), name
    assert np.sin in spellings("sin") and math.asinh in spellings("arcsinh")
    assert extras.table_maximum in spellings("maximum") and pow in spellings("pow")
    assert max not in spellings("maximum")   # (Python's choice at a NaN: test_builtin_min_and_max_...)


def tied_builtins(x):
    return (5.0 * max(x[0], 0.5) + 7.0 * min(x[1], x[2]) + max(0.5, x[0]) ** 2 + max(x[1], x[2], x[0])
            + min(x[2], x[1], 3.0, x[0], 2.0, x[0]))   # (five and more arguments compile too)


def tied_numpy(x):
    return (5.0 * np.maximum(x[0], 0.5) + 7.0 * np.minimum(x[1], x[2]) + np.maximum(0.5, x[0]) ** 2
            + np.max(dnp.stack([x[1], x[2], x[0]]))       # a tie of n arguments: 1/n each
            + np.min(dnp.stack([x[2], x[1], 3.0, x[0], 2.0, x[0]])))


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev])
def test_builtin_max_and_min_in_compiled_code_split_ties_like_np_maximum(transform):
    # (Python's own built-ins return the first of equal arguments: docs/non_differentiable.md)
    # three and more arguments split a tie of n evenly, as np.max: they folded pairwise, so
    # max(x, y, 1.0) and max(1.0, x, y) at x = y = 1 differed (a traffic trial)
    for x in (np.array([0.5, 1.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([0.5, 0.5, 2.0])):
        np.testing.assert_allclose(transform(njit(tied_builtins))(x), transform(tied_numpy)(x),
                                   rtol=1e-14, atol=1e-15)


def first_arrival(x):
    # an eikonal sweep's update: times start at inf, and a candidate from two infinite neighbours is
    # inf - inf = NaN, which Python's min passes over (min(a, b) is a unless b < a)
    t = np.inf
    candidate = (t + t + math.sqrt(2.0 * x[0] * x[0] - (t - t) ** 2)) / 2.0
    t = min(t, candidate)
    latest = max(-np.inf, candidate)
    return min(t, 3.0 * x[0]) + max(latest, x[1] * x[1]) + min(x[0], math.nan) + max(x[1], math.nan, x[0])


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev, duals.hessian])
def test_builtin_min_and_max_of_duals_pass_over_a_nan_as_the_plain_call_does(transform):
    # (eikonal trial) they took np.minimum's NaN: every traveltime's derivative NaN where the plain
    # call was finite, and grad 0.0 for 1.0 with no NaN to warn
    x = np.array([0.7, 1.3])
    compiled = njit(first_arrival)
    expected = {duals.hessian: np.diag([0.0, 2.0])}.get(transform, np.array([3.0 + 1.0, 2.0 * x[1] + 1.0]))
    np.testing.assert_allclose(transform(compiled)(x), expected, rtol=1e-15, atol=0.0)
    assert duals.jvp(compiled, (x,), (np.ones(2),))[0] == compiled(x) == first_arrival(x)
    propagated = njit(lambda x: np.minimum(x[0], math.nan) + np.maximum(math.nan, x[1]))   # NumPy's NaN
    assert np.isnan(duals.jvp(propagated, (x,), (np.ones(2),))[0]) and np.isnan(propagated(x))


def nan_ignoring_extremes(x):
    pair = np.fmin(x[0], math.nan) + np.fmax(math.nan, x[1]) + np.fmin(x[0], x[1])
    return pair + np.sum(2.0 * np.fmin(x, np.array([math.nan, 0.5]))) + np.sum(np.fmax(x, 1.0))


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev])
def test_np_fmin_and_fmax_of_duals_ignore_a_nan_on_either_side_as_on_the_numpy_path(transform):
    # (eikonal trial) they were refused in compiled code, with advice (np.maximum) that keeps the NaN
    x = np.array([0.7, 1.3])
    np.testing.assert_array_equal(transform(njit(nan_ignoring_extremes))(x), [4.0, 2.0])
    np.testing.assert_array_equal(transform(njit(nan_ignoring_extremes))(x), duals.grad(nan_ignoring_extremes)(x))
    assert njit(nan_ignoring_extremes)(x) == nan_ignoring_extremes(x)


def defensive_asarray(params):
    b = np.asarray(params, dtype=np.float64)   # the array itself, as NumPy returns it
    b[1] = b[0] * 2.0
    return params[1] * b[0]


def test_np_asarray_with_the_inputs_float_dtype_is_the_array_of_duals_itself():
    # (viscoelastic trial) it was refused, advising np.argsort and np.partition
    p = np.array([3.0, 1.0])
    for transform in (duals.jacfwd, duals.grad):
        np.testing.assert_array_equal(transform(njit(defensive_asarray))(p), [12.0, 0.0])
    np.testing.assert_array_equal(duals.hessian(njit(defensive_asarray))(p), [[4.0, 0.0], [0.0, 0.0]])
    narrowing = numba.njit(lambda x: np.asarray(x, dtype=np.float32)[0] * 2.0)
    with pytest.raises(TypeError, match=r"np.asarray\(x, dtype=float32\) of duals over float64: .*drop dtype="):
        duals.jacfwd(narrowing)(p)


# ---------------------------------------------------------------- bad input

def squares_in_a_list_of_floats(x):
    out = [0.0] * x.size
    for k in range(x.size):
        out[k] = x[k] ** 2
    return out[0] + out[-1]


def squares_in_a_list_of_duals(x):
    out = [x[0]] * x.size
    for k in range(x.size):
        out[k] = x[k] ** 2
    return out[0] + out[-1]


def heap_ordered_by_plain_keys(x):
    heap = [(0.0, 0)]
    for k in range(x.size):
        heapq.heappush(heap, (duals.stop_gradient(x[k]), k))
    total = 0.0
    while len(heap) > 0:
        _, k = heapq.heappop(heap)
        total = 2.0 * total + x[k]
    return total


def test_a_dual_stored_into_a_list_of_plain_numbers_names_spellings_that_work():
    # (eikonal trial: a fast-marching heap [(0.0, i0)] of arrival times) the message said only
    # "this construct is not supported on duals"
    x = np.array([3.0, 1.0, 2.0])
    for transform, values in ((duals.jacfwd, "dual numbers"), (duals.grad, "the adjoints of compiled reverse mode")):
        with pytest.raises(TypeError, match=rf"for {values}: a dual stored into a list made of plain numbers.*"
                                            r"\[x\[0\]\] \* n.*duals.stop_gradient\(t\)"):
            transform(njit(squares_in_a_list_of_floats))(x)
        np.testing.assert_array_equal(transform(njit(squares_in_a_list_of_duals))(x), [6.0, 0.0, 4.0])
        np.testing.assert_array_equal(transform(njit(heap_ordered_by_plain_keys))(x), [9.0, 4.0, 2.0])


def test_a_buffer_made_with_np_empty_holds_duals():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(duals.jacfwd(writes_into_float_array)(x), 2.0 * np.eye(2))
    assert writes_into_float_array(x).dtype == np.float64


def test_an_argument_array_the_code_stores_duals_into_is_promoted_and_left_untouched():
    out = np.ones(3)
    np.testing.assert_array_equal(duals.jacfwd(writes_into_float_array_argument, argnums=1)(out, 2.0),
                                  [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(duals.jacrev(writes_into_float_array_argument, argnums=1)(out, 2.0),
                                  [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(out, np.ones(3))  # the caller's array: not written by derivatives


def test_a_function_without_a_rule_and_a_one_line_rewrite_names_the_rewrite():
    # (a probabilistic-programming trial: np.where and np.maximum were advised for logaddexp2)
    pair = njit(lambda x: np.logaddexp2(x[0], x[1]))
    x = np.array([0.3, 0.5])
    with pytest.raises(TypeError, match=r"np\.logaddexp2 has no derivative rule .*write "
                                        r"np\.logaddexp\(x \* LN2, y \* LN2\) / LN2"):
        duals.grad(pair)(x)
    LN2 = math.log(2.0)
    rewritten = njit(lambda x: np.logaddexp(x[0] * LN2, x[1] * LN2) / LN2)
    assert rewritten(x) == pytest.approx(pair(x), rel=1e-15)
    np.testing.assert_allclose(duals.grad(rewritten)(x), central_differences(pair.py_func, (x,), 0), rtol=1e-8)


def test_math_function_without_rule_is_named():
    assert uses_ldexp(2.5) == 10.0
    with pytest.raises(TypeError, match=r"math\.ldexp has no derivative rule"):
        duals.jvp(uses_ldexp, (2.5,), (1.0,))
    # a function Numba lacks for plain floats too is not called a missing derivative (a user
    # trial followed that advice for math.remainder, which plain Numba cannot compile either)
    wrapped = njit(lambda th: math.remainder(th, 2.0 * math.pi))
    with pytest.raises(TypeError, match=r"cannot compile <lambda> even for plain numbers.*remainder"):
        duals.grad(wrapped)(7.0)
    # a table entry's math spelling Numba lacks (math.fmod): the plain call and the derivative
    # name NumPy's spelling, not duals' overload as the only candidate that did "No match"
    wrap = njit(lambda d, box: math.fmod(d, box))
    with pytest.raises(numba.core.errors.TypingError, match=r"Numba has no math\.fmod for plain numbers; write np\.fmod"):
        wrap(7.5, 2.0)
    with pytest.raises(TypeError, match=r"^grad: Numba has no math\.fmod for plain numbers; write np\.fmod"):
        duals.grad(wrap)(7.5, 2.0)


@njit
def bearing_error(angles, target_degrees):
    """Angles converted both ways, on numbers and on arrays."""
    total = 0.0
    for a in angles:
        total += (math.degrees(a) - target_degrees) ** 2
    return total + np.sum(np.deg2rad(np.rad2deg(angles)) * np.radians(target_degrees))


def test_angle_conversions_are_products_by_their_constant():
    angles = np.array([0.1, 0.7, -0.4])
    want = 2.0 * (np.degrees(angles) - 30.0) * 180.0 / np.pi + np.radians(30.0)
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_allclose(transform(bearing_error)(angles, 30.0), want, rtol=1e-14)
    np.testing.assert_allclose(central_differences(bearing_error, (angles, 30.0), 0), want, rtol=1e-7)


@njit
def gps_time_of_week(t, week_seconds):
    """Seconds since the GPS epoch split into week and time of week, as navigation code does."""
    week, tow = divmod(t[0], week_seconds)
    days, seconds = np.divmod(t[1], 86400.0)
    return tow * 2.0 + week * t[0] + days * seconds


def test_divmod_is_floor_division_and_remainder():
    # (GNSS trial) divmod of a dual was refused as "no implementation" where // and % worked
    t = np.array([1.4e9 + 0.25, 200000.5])
    week, days = t[0] // 604800.0, t[1] // 86400.0
    want = np.array([2.0 + week, days])
    for transform in (duals.grad, duals.jacfwd):
        np.testing.assert_array_equal(transform(gps_time_of_week)(t, 604800.0), want)


@njit
def bode_phase_degrees(p, w):
    impedance = p[0] + 1.0 / (1.0 / p[1] + p[2] * (1j * w) ** p[3])
    return np.angle(impedance, deg=True)


def test_the_angle_of_a_complex_dual_array_in_degrees():
    # (EIS trial) np.angle(Z, deg=True) of an array was "no implementation"; angle(Z) alone worked
    p, w = np.array([10.0, 50.0, 2e-5, 0.85]), np.logspace(0, 4, 5)
    np.testing.assert_allclose(duals.jacfwd(bode_phase_degrees)(p, w),
                               duals.jacfwd(bode_phase_degrees.py_func)(p, w), rtol=1e-12, atol=1e-12)


def test_a_set_or_dict_of_duals_is_refused_saying_to_key_by_the_value():
    x = np.array([1.0, 2.0, 1.0])
    assert distinct_levels(x) == 2.0 and memoised_squares(x) == 6.0  # the plain calls are fine
    for f in (distinct_levels, memoised_squares):
        with pytest.raises(TypeError, match=r"^jacfwd: a dual number cannot be a set element or a dict "
                                            r"key.*duals\.stop_gradient\(x\).*test_jit\.py, line \d+\)$") as info:
            duals.jacfwd(f)(x)
        assert "\n" not in str(info.value)


@njit
def second_difference_with_a_typo(p):
    return (p[2:] - 2.0 * p[1:-1] + p[:-2]).summ()      # the failing line: not the caller's


@njit
def calls_a_helper_with_a_typo(c):
    return np.sum(c * second_difference_with_a_typo(c))


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd])
def test_an_error_in_a_called_helper_names_the_helpers_line(transform):
    # (it named the caller's line, the outermost of the user's places in Numba's text: a user trial)
    import inspect
    line = inspect.getsourcelines(second_difference_with_a_typo.py_func)[1] + 2
    with pytest.raises(TypeError, match=rf"even for plain numbers.*summ.*test_jit\.py, line {line}\)$"):
        transform(calls_a_helper_with_a_typo)(np.linspace(1.0, 2.0, 6))


def test_float_of_a_dual_is_the_identity_with_its_derivative_in_every_mode():
    x = 2.5
    assert float(central_differences(converts_to_float, (x,), 0)) == pytest.approx(2.0, rel=1e-8)
    assert duals.jvp(converts_to_float, (x,), (1.0,))[1] == 2.0
    assert duals.grad(converts_to_float)(x) == 2.0
    assert duals.hessian(converts_to_float)(x) == 0.0
    p = np.array([0.3, 1.7])
    assert np.array_equal(duals.grad(scaled_first_entry)(p), [2.0 * p[1], 2.0 * p[0]])
    assert np.allclose(central_differences(scaled_first_entry, (p,), 0), [2.0 * p[1], 2.0 * p[0]])
    assert np.array_equal(duals.jacfwd(scaled_first_entry)(p), duals.grad(scaled_first_entry)(p))


@njit
def scaled_first_entry(p):
    a = float(p[0])           # how Numba code often takes a number out of an array
    return float(2.0 * a * p[1])


@numba.njit
def decay_for(k, T, dt):
    n = int(T / dt)          # the number of steps: a step function of T and dt
    y = 1.0
    for _ in range(n):
        y -= dt * k * y
    return y


@numba.njit
def value_alone(x):
    return duals.stop_gradient(x[0]) * x[1] + np.sum(duals.stop_gradient(x) * x)


@numba.njit
def value_alone_of_a_view(a):
    return np.sum(duals.stop_gradient(a.T[1:, :]) * a.T[1:, :])


def test_int_of_a_dual_truncates_with_derivative_zero_and_stop_gradient_runs_in_both_calls():
    args = (0.5, 1.005, 0.01)     # T / dt = 100.5: away from a step, where differences see one
    for transform in (duals.grad, duals.jacfwd):
        got = transform(decay_for, argnums=(0, 1, 2))(*args)
        assert got[1] == 0.0                     # T moves only the step count
        for i in (0, 2):
            assert got[i] == pytest.approx(float(central_differences(decay_for, args, i, 1e-7)), rel=1e-6)
    python_version = duals.grad(decay_for.py_func, argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(python_version, duals.grad(decay_for, argnums=(0, 1, 2))(*args), rtol=1e-13)
    x = np.array([1.0, 2.0, 3.0])
    assert value_alone(x) == 16.0                # the plain call: stop_gradient is the identity
    np.testing.assert_array_equal(duals.grad(value_alone)(x), [1.0, 3.0, 3.0])
    np.testing.assert_array_equal(duals.jacfwd(value_alone)(x), [1.0, 3.0, 3.0])
    np.testing.assert_array_equal(duals.hessian(value_alone)(x), np.zeros((3, 3)))
    a = np.arange(6.0).reshape(2, 3)
    expected = np.where(np.arange(3) > 0, a, 0.0)        # the stopped values, where they multiply
    np.testing.assert_array_equal(duals.grad(value_alone_of_a_view)(a), expected)
    np.testing.assert_array_equal(duals.jacfwd(value_alone_of_a_view)(a), expected)


@njit
def sum_of_squares_of(x):
    return np.sum(x ** 2)


@njit
def variance_of(x):
    return np.var(x)


def test_a_0d_array_argument_is_one_dual_number_inside_compiled_code():
    x = np.array(2.0)   # (Numba 0.68's plain call takes it; 0.60's does not)
    for transform in (duals.grad, duals.jacfwd):   # np.sum of one number is that number, as in Numba
        assert float(transform(sum_of_squares_of)(x)) == 4.0
        with pytest.raises(TypeError, match=r"var\("):   # Numba's np.var takes arrays only
            transform(variance_of)(x)
    assert duals.grad(sum_of_squares_of)(x.reshape(1)).tolist() == [4.0]


@numba.njit
def misspelled(x):
    return np.sum(x) * undefined_scale  # noqa: F821


@numba.njit
def summed_rows(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * 2.0
    return s


@pytest.mark.parametrize("transform", [duals.jacfwd, duals.grad], ids=["forward", "reverse"])
def test_a_function_that_does_not_compile_for_plain_numbers_is_named_as_the_fault(transform):
    with pytest.raises(TypeError, match=r"cannot compile misspelled even for plain numbers, so the "
                                        r"error is in the function.*undefined_scale"):
        transform(misspelled)(np.ones(2))
    with pytest.raises(TypeError, match=r"summed_rows even for plain numbers.*iadd\(float64, array"):
        transform(summed_rows)(np.ones((2, 2)))     # a 2-d array where the code expects 1-d
    assert transform(summed_rows)(np.ones(3)).tolist() == [2.0, 2.0, 2.0]
    # Numba's min/max/mean/prod methods take no axis (the summary line was Numba's "- Resolution
    # failure for literal arguments:" header; geometry trial)
    nearest = numba.njit(lambda D: np.sum(D.min(axis=1)))
    with pytest.raises(TypeError, match=r"plain numbers.*x\.min\(axis=\.\.\.\).*Write np\.min\(x, axis=k\)"):
        transform(nearest)(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"plain numbers.*no implementation of npy_max\(array\(float64, 2d, C\), "
                                        r"Literal\[int\]\(1\)\)"):
        transform(numba.njit(lambda D: np.sum(D.max(1))))(np.ones((2, 3)))


def test_non_dispatcher_is_refused_with_a_clear_error():
    from duals.jit import compiled_hessian, compiled_jacfwd, compiled_jvp
    with pytest.raises(TypeError, match="numba.njit"):
        compiled_jvp(lambda x: x, (1.0,), (1.0,))
    with pytest.raises(TypeError, match="numba.njit"):
        compiled_jacfwd(np.sin)
    with pytest.raises(TypeError, match="numba.njit"):
        compiled_hessian(lambda x: x)


@numba.njit
def weighted_total(p, w):
    return np.sum(p * w)


def test_traced_arrays_handed_to_njit_code_by_python_code_say_to_differentiate_it_itself():
    p, w = np.array([1.0, 2.0, 3.0]), np.ones(3)
    for transform, kind in ((duals.jacfwd, "forward mode"), (duals.grad, "reverse mode")):
        with pytest.raises(TypeError, match=f"traced by duals' {kind}.*differentiate the compiled "
                                            r"function itself \(duals.jacfwd\(njit_fn\)"):
            transform(lambda p: weighted_total(p, w))(p)
    np.testing.assert_array_equal(duals.grad(weighted_total)(p, w), w)  # the way out


def test_a_traced_scalar_handed_to_njit_code_is_refused_not_returned_as_a_users_dual():
    """It came back as a Dual of the user's level, which jacfwd took for a constant (zero)."""
    square = numba.njit(lambda t: t * t)
    for transform in (duals.jacfwd, duals.hessian):
        with pytest.raises(TypeError, match="traced by duals' (forward|reverse) mode.*differentiate the compiled"):
            transform(lambda x: square(x[0]))(np.array([1.5]))
    assert square(duals.Dual(1.5, 1.0)).tangent == 3.0   # a user's own Dual still runs


@njit
def root_squared(x):
    s = math.sqrt(x[0] + x[1])
    return s * s + math.sqrt(x[1])


@njit
def ratio(x):
    return x[0] / x[1]


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev"])
def test_a_partial_dividing_by_zero_is_inf_or_nan_as_in_python_mode(transform):
    """sqrt'(0) = 0.5 / 0: the rule follows NumPy's arithmetic in compiled code too (it raised
    ZeroDivisionError from inside the rule); a division the user wrote raises as in the plain call."""
    x = np.array([0.0, 0.0])
    python = lambda x: np.sqrt(x[0] + x[1]) ** 2 + np.sqrt(x[1])   # noqa: E731
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = getattr(duals, transform)(python)(x)
        got = getattr(duals, transform)(root_squared)(x)
    np.testing.assert_array_equal(got, expected)
    assert not np.isfinite(got).any()
    with pytest.raises(ZeroDivisionError):
        ratio(np.array([1.0, 0.0]))
    with pytest.raises(ZeroDivisionError):
        getattr(duals, transform)(ratio)(np.array([1.0, 0.0]))


@njit
def noisy_energy(x):
    s = 0.0
    for i in range(x.size):
        s += (x[i] * (1.0 + 0.1 * np.random.normal())) ** 2
    return s


@njit
def next_normal():
    return np.random.normal()


@njit
def seeded_normals(seed, n):
    np.random.seed(seed)
    return np.array([np.random.normal() for _ in range(n)])


def test_a_function_drawing_from_numbas_global_generator_sees_one_sample_in_every_pass():
    """20 inputs: jacfwd runs two passes of lanes and hessian blocks of columns; each pass starts
    from the random state the first did, and leaves it where one plain call does."""
    x = np.linspace(-1.0, 1.0, 20)
    scale = (1.0 + 0.1 * seeded_normals(3, 20)) ** 2
    seeded_normals(3, 0)
    noisy_energy(x)
    after_one_call = next_normal()
    for transform, expected in ((duals.jacfwd, 2.0 * x * scale), (duals.grad, 2.0 * x * scale),
                                (duals.hessian, np.diag(2.0 * scale))):
        seeded_normals(3, 0)
        np.testing.assert_allclose(transform(noisy_energy)(x), expected, rtol=1e-12, atol=1e-15)
    seeded_normals(3, 0)
    duals.jacfwd(noisy_energy)(x)
    assert next_normal() == after_one_call


def test_every_pass_starts_from_the_cached_second_normal_numba_held_at_the_call():
    """Numba's np.random.normal draws normals in pairs and keeps the second for the next call:
    a derivative started after an odd number of draws must give every pass that cached normal
    (Numba's own get_state/set_state drop it, and a second pass drew shifted noise: columns
    16..19 of a 20-input Jacobian belonged to other samples)."""
    x = np.linspace(-1.0, 1.0, 20)
    normals = seeded_normals(3, 21)
    scale = (1.0 + 0.1 * normals[1:]) ** 2
    for transform, expected in ((duals.jacfwd, 2.0 * x * scale), (duals.grad, 2.0 * x * scale),
                                (duals.hessian, np.diag(2.0 * scale))):
        seeded_normals(3, 1)                     # one normal drawn, its pair cached
        np.testing.assert_allclose(transform(noisy_energy)(x), expected, rtol=1e-12, atol=1e-15)
        assert next_normal() == seeded_normals(3, 22)[-1]   # left where one plain call leaves it
    from duals.random_states import _NUMBA_STATE_BYTES
    from numba.core import cpu
    from numba.cpython.randomimpl import rnd_state_t
    assert _NUMBA_STATE_BYTES == rnd_state_t.get_abi_size(cpu.CPUContext(numba.core.typing.Context()).target_data)


@njit
def noisy_moments(s):
    out = np.empty(2)
    out[0] = np.sum(s * (1.0 + 0.1 * np.random.standard_normal(s.size)) ** 2)
    out[1] = out[0] * out[0]
    return out


@njit
def noisy_phase(p):
    z = 0.0 + 0.0j
    for _ in range(20):
        z = z * cmath.exp(1j * p[0] * 0.1) + p[1] * np.random.normal()
    return (z * z.conjugate()).real


@njit
def noisy_step(x, p):
    return x - p[0] * x * 0.01 + p[1] * 0.1 * np.random.standard_normal(x.size)


@njit
def mean_square(x, p):
    return np.sum(x * x) / x.size


@njit
def noisy_loop(x, p):
    for _ in range(30):
        x = noisy_step(x, p)
    return mean_square(x, p)


def _one_realisation(call, plain):
    """(call's result from seed 3, whether it left Numba's generator where one ``plain()`` does)."""
    seeded_normals(3, 0)
    plain()
    after_one_call = next_normal()
    seeded_normals(3, 0)
    result = call()
    return result, next_normal() == after_one_call


def test_derivatives_made_of_several_calls_take_every_call_from_one_realisation_of_the_noise():
    """Entry points that call f more than once for one answer (a look at the output, a first try
    that falls back, a value then a derivative, a loop run then recorded by segments) gave a
    derivative of the next realisation, or mixed two, and left the generator further on."""
    s, p = np.array([0.2, 0.25, 0.3]), np.array([0.7, 0.3])
    reference, _ = _one_realisation(lambda: duals.jit.compiled_hessian(noisy_moments)(s), lambda: noisy_moments(s))
    got, left = _one_realisation(lambda: duals.hessian(noisy_moments)(s), lambda: noisy_moments(s))
    np.testing.assert_allclose(got, reference, rtol=1e-12)      # vector output: the fallback's Hessian
    assert left
    reference, _ = _one_realisation(lambda: duals.jacfwd(noisy_moments)(s), lambda: noisy_moments(s))
    got, left = _one_realisation(lambda: duals.jacobian(noisy_moments)(s), lambda: noisy_moments(s))
    np.testing.assert_allclose(got, reference, rtol=1e-14)      # mode="auto" looks at the output first
    assert left
    got, left = _one_realisation(lambda: duals.sensitivity.local(noisy_moments, s), lambda: noisy_moments(s))
    value, _ = _one_realisation(lambda: noisy_moments(s), lambda: None)
    np.testing.assert_allclose(got.jacobian, reference, rtol=1e-14)
    np.testing.assert_allclose(got.value, value, rtol=1e-14)
    assert left
    reference, _ = _one_realisation(lambda: duals.jacfwd(noisy_phase)(p), lambda: noisy_phase(p))
    value, _ = _one_realisation(lambda: noisy_phase(p), lambda: None)
    (v, g), left = _one_realisation(lambda: duals.value_and_grad(noisy_phase)(p), lambda: noisy_phase(p))
    np.testing.assert_allclose(g, reference, rtol=1e-14)         # complex intermediates: forward mode
    assert v == value and left
    reference, _ = _one_realisation(lambda: duals.hessian(noisy_energy)(s), lambda: noisy_energy(s))
    (v, g, H), left = _one_realisation(lambda: duals.value_grad_hessian(noisy_energy)(s), lambda: noisy_energy(s))
    np.testing.assert_allclose(H, reference, rtol=1e-14)
    assert v == _one_realisation(lambda: noisy_energy(s), lambda: None)[0] and left
    x0 = np.linspace(-1.0, 1.0, 6)
    reference, _ = _one_realisation(lambda: duals.grad(noisy_loop, argnums=(0, 1))(x0, p), lambda: noisy_loop(x0, p))
    (v, got), left = _one_realisation(lambda: duals.jit.loop_value_and_grad(noisy_step, mean_square, 30, segment=7)(x0, p),
                                      lambda: noisy_loop(x0, p))
    np.testing.assert_allclose(got[0], reference[0], rtol=1e-12)  # each segment recorded on its own draws
    np.testing.assert_allclose(got[1], reference[1], rtol=1e-12)
    assert left


@njit
def noisy_energy_drawn_by_numpy(x):
    s = 0.0
    for i in range(x.size):
        with numba.objmode(noise="float64"):      # NumPy's own global generator, through Python
            noise = np.random.normal()
        s += (x[i] * (1.0 + 0.1 * noise)) ** 2
    return s


def test_compiled_code_that_draws_from_numpys_generator_through_objmode_sees_one_sample_in_every_pass():
    # passes of compiled code hold only Numba's generators, which is all nopython code can reach
    # (NumPy's cost ~0.2 ms a call to hold); code that reaches Python through objmode holds all
    x = np.linspace(-1.0, 1.0, 20)
    np.random.seed(5)
    scale = (1.0 + 0.1 * np.random.normal(size=20)) ** 2
    for transform, expected in ((duals.jacfwd, 2.0 * x * scale), (duals.hessian, np.diag(2.0 * scale))):
        np.random.seed(5)
        np.testing.assert_allclose(transform(noisy_energy_drawn_by_numpy)(x), expected, rtol=1e-12, atol=1e-15)
        assert np.random.normal() == pytest.approx(np.random.RandomState(5).normal(size=21)[-1], abs=0)


def test_what_compiled_code_may_reach_of_python_is_judged_conservatively():
    from duals.jit.python_reach import may_reach_python
    x = np.ones(3)
    assert not may_reach_python(noisy_energy, (x,))                # Numba's generator only
    assert not may_reach_python(njit(lambda x: noisy_energy(x) + 1.0), (x,))   # a compiled callee
    assert may_reach_python(noisy_energy_drawn_by_numpy, (x,))     # objmode
    assert may_reach_python(njit(lambda x: noisy_energy_drawn_by_numpy(x)), (x,))   # through a callee
    assert may_reach_python(noisy_energy, (x, object()))           # an object it is given
    plain_python = lambda v: v   # noqa: E731
    assert may_reach_python(njit(lambda x: x * 2.0), (x, plain_python))


@njit
def alternating_sweep(x, order):
    order[:] = order[::-1].copy()           # the sweep direction alternates at every call
    s = 0.0
    for k in range(order.shape[0]):
        s += x[order[k]] ** 3 * (k + 1.0)
    return s


def test_every_pass_starts_from_the_argument_arrays_the_first_did():
    """jacfwd with more lanes than one pass, and compiled Hessians in blocks of columns, call the
    kernel once per pass; one that changes an argument array saw another state in each pass
    (columns of one derivative from different calls: a user trial). One plain call leaves
    ``order`` reversed, so f = sum_k x[n-1-k]^3 (k+1)."""
    n = 20
    x = np.linspace(0.1, 1.0, n)
    weights = n - np.arange(n)
    for transform, expected in ((duals.jacfwd, 3.0 * x ** 2 * weights), (duals.grad, 3.0 * x ** 2 * weights),
                                (duals.hessian, np.diag(6.0 * x * weights))):
        order = np.arange(n)
        np.testing.assert_allclose(transform(alternating_sweep)(x, order), expected, rtol=1e-12)
        np.testing.assert_array_equal(order, np.arange(n)[::-1])    # as one plain call leaves it
    order = np.arange(n)
    np.testing.assert_allclose(duals.jacfwd(alternating_sweep.py_func, chunk_size=4)(x, order),
                               3.0 * x ** 2 * weights, rtol=1e-12)
    np.testing.assert_array_equal(order, np.arange(n)[::-1])


@njit
def decay_series(p, n):
    x = np.empty(n)
    x[0] = 1.0
    for i in range(1, n):
        x[i] = x[i - 1] * (1.0 - 0.01 * p[0])
    return x


@njit
def exp_list_sum(x):
    values = numba.typed.List.empty_list(numba.types.float64)
    for v in x:
        values.append(math.exp(v))
    return sum(values)


@njit
def noisy_mean(mu, sigma):
    np.random.seed(0)
    return np.random.normal(mu, sigma)


@numba.experimental.jitclass([("k", numba.types.float64)])
class Spring:
    def __init__(self, k):
        self.k = k


@njit
def spring_energy(x, k):
    return 0.5 * Spring(k).k * np.sum(x * x)


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.hessian])
def test_a_dual_stored_in_a_float_field_is_named_at_every_order(transform):
    # (a nested dual's type name, Dual2[Dual1[...], ...], once fell through to Numba's LLVM dump)
    with pytest.raises(TypeError, match=r"a dual \((Dual|Adjoint)\d\[.*\]\) stored where the code fixes the type float64"):
        transform(spring_energy, argnums=1)(np.array([0.3, -0.7]), 1.7)


@njit
def add_links(lengths, q, p):
    angle = 0.0
    for i in range(q.shape[0]):
        angle += q[i]
        p[0] += lengths[i] * math.cos(angle)
        p[1] += lengths[i] * math.sin(angle)
    return p


@numba.experimental.jitclass([("lengths", numba.types.float64[:])])
class PlanarArm:
    def __init__(self, lengths):
        self.lengths = lengths

    def tip(self, q):
        return add_links(self.lengths, q, np.zeros(2))   # made by the method: not promoted

    def tip_of_inputs_dtype(self, q):
        return add_links(self.lengths, q, np.zeros(2, q.dtype))   # what the refusal advises

    def reach_of_scaled_links(self, s):    # a buffer for a scalar input, as the refusal advises
        scaled = np.empty(self.lengths.size, np.asarray(s).dtype)
        for i in range(self.lengths.size):
            scaled[i] = s * self.lengths[i]
        return np.sum(scaled)


@njit
def arm_tip(q, arm):
    return arm.tip(q)


@njit
def arm_tip_of_inputs_dtype(q, arm):
    return arm.tip_of_inputs_dtype(q)


def test_a_buffer_a_jitclass_method_makes_is_refused_with_advice_that_works():
    # (the refusal advised a copy of an argument, which does not apply; a user trial)
    arm, q = PlanarArm(np.array([1.0, 0.8])), np.array([0.3, 0.5])
    s1, s12, c1, c12 = math.sin(0.3), math.sin(0.8), math.cos(0.3), math.cos(0.8)
    want = np.array([[-s1 - 0.8 * s12, -0.8 * s12], [c1 + 0.8 * c12, 0.8 * c12]])
    for transform in (duals.jacfwd, duals.jacrev):
        with pytest.raises(TypeError, match=r"inside a jitclass method.*np\.zeros\(n, x\.dtype\) for an "
                                            r"array x, np\.zeros\(n, np\.asarray\(t\)\.dtype\) for a number t"):
            transform(arm_tip)(q, arm)
        np.testing.assert_allclose(transform(arm_tip_of_inputs_dtype)(q, arm), want, rtol=1e-14)
    # (np.asarray of a dual number was "Resolution failure for literal arguments")
    reach = njit(lambda s, arm: arm.reach_of_scaled_links(s))
    assert reach(2.0, arm) == 3.6
    for transform in (duals.jacfwd, duals.grad):
        assert transform(reach)(2.0, arm) == 1.8


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "average", "max", "min", "amax", "amin",
                                  "nanmax", "nanmin"])
def test_numpy_reductions_of_one_dual_number_are_that_number_as_numbas_of_a_float(name):
    namespace = {"np": np}
    exec(f"def f(x):\n    return np.{name}(x[0] * x[1]) * x[1]", namespace)
    f = numba.njit(namespace["f"])   # (not cached: no file to cache for)
    x = np.array([1.5, -2.0])
    want = central_differences(f, [x], 0)
    for transform in (duals.jacfwd, duals.grad):
        np.testing.assert_allclose(transform(f)(x), want, rtol=1e-8)
    np.testing.assert_allclose(duals.hessian(f)(x), duals.hessian(f.py_func)(x), rtol=1e-12)


@njit
def sampled_energy(c, receivers):
    return np.sum(c[receivers] ** 2)


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev])
def test_an_index_array_named_in_argnums_is_named_with_the_way_out(transform):
    # (the check of the plain call ran on the indices made float, and said the function had a bug)
    c, receivers = np.linspace(1.0, 2.0, 6), np.array([1, 4])
    with pytest.raises(TypeError, match=r"sampled_energy needs integers in argument 1.*leave it out of argnums"):
        transform(sampled_energy, argnums=(0, 1))(c, receivers)
    np.testing.assert_array_equal(transform(sampled_energy)(c, receivers), [0, 2 * c[1], 0, 0, 2 * c[4], 0])


@njit
def weighted_pair_sum(x, i, j, n):
    t = 0.0
    for k in range(n):
        t += x[i] * x[j] * k
    return t


def test_integers_given_tangents_are_all_named_counts_as_well_as_indices():
    # (eikonal trial) it said "argument 1, 2, which holds" and not that a loop count needs it too, so
    # fixing what it listed led to a second error (naming whole-valued scalars blamed a frequency 3e8)
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"needs integers in arguments 1 and 2, which hold .*leave them out .*"
                                        r"and so a loop count \(range\(n\)\) too"):
        duals.jvp(weighted_pair_sum, (x, 0, 2, 4), (np.ones(3), 0, 0, 0))
    assert duals.jvp(weighted_pair_sum, (x, 0, 2, 4), (np.ones(3), None, None, None)) == (18.0, 24.0)


def test_what_the_code_fixes_as_a_float_or_an_integer_is_named_with_the_way_out():
    with pytest.raises(TypeError, match=r"decay_series needs integers in argument 1.*tangent None"):
        duals.jvp(decay_series, (np.array([2.0]), 5), (np.ones(1), 0.0))
    with pytest.raises(TypeError, match=r"typed container declared with float elements.*typed\.List\(\)"):
        duals.jacfwd(exp_list_sum)(np.array([0.3, -0.7]))
    with pytest.raises(TypeError, match=r"np\.random's parameters must be plain.*mu \+ sigma \* np\.random\.normal\(\)"):
        duals.grad(noisy_mean, argnums=(0, 1))(0.5, 2.0)
    with pytest.raises(TypeError, match=r"argument 1 \(of type object\) is not a number.*out of argnums"):
        duals.grad(lambda x, p: x, argnums=1)(1.0, object())


def test_logaddexp_has_both_second_derivatives_where_its_arguments_are_equal():
    # its value at x == y was x + log 2, so nested duals lost y's inner derivative there (a
    # compiled Hessian of logaddexp(v0, v1) at v0 = v1 came out [[0, 0], [-0.5, 0.5]])
    f = njit(lambda v: np.logaddexp(v[0], v[1]))
    v = np.array([0.3, 0.3])
    np.testing.assert_allclose(duals.hessian(f)(v), [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-15)
    np.testing.assert_allclose(duals.hessian(f)(v), duals.hessian(lambda v: np.logaddexp(v[0], v[1]))(v))
    g = njit(lambda x: np.logaddexp(x[0], 0.5 * x[0]))
    assert duals.hessian(g)(np.zeros(1))[0, 0] == pytest.approx(0.0625, rel=1e-15)
    assert np.logaddexp(np.inf, np.inf) == fn.logaddexp(np.inf, np.inf) == np.inf


def _gating_rates(v, m, h, g, e):
    return g * m ** 3 * h * (v - e), 0.1 * math.exp(-v / 30.0) * (1.0 - m), 0.07 * math.exp(-v / 20.0) * (1.0 - h)


def _euler_calling(rates):
    @numba.njit
    def euler(g, e, v0, m0, h0, n):
        v, m, h = v0, m0, h0
        for _ in range(n):
            current, dm, dh = rates(v, m, h, g, e)
            v, m, h = v - 0.01 * current, m + 0.01 * dm, h + 0.01 * dh
        return v + m + h
    return euler


_euler_with_a_helper = _euler_calling(numba.njit(_gating_rates))
_euler_inlined = _euler_calling(numba.njit(inline="always")(_gating_rates))


@pytest.mark.parametrize("lanes", [3, 5])
def test_duals_of_any_lane_count_pass_through_calls_as_through_inlined_code(lanes):
    # lanes are padded to a power of two in registers and at calls (LLVM's own widening left
    # the added lanes undefined: subnormal garbage made a helper's call 17-50x slower at 3, 5,
    # 6, 7 lanes; a neuroscience trial); the numbers are those of the inlined code, bit for bit
    args = (1.2, 0.5, -0.3, 0.05, 0.6, 200)
    argnums = tuple(range(lanes))
    np.testing.assert_array_equal(duals.jacfwd(_euler_with_a_helper, argnums=argnums)(*args),
                                  duals.jacfwd(_euler_inlined, argnums=argnums)(*args))
    got = duals.jacfwd(_euler_with_a_helper, argnums=argnums)(*args)
    for i in argnums:
        np.testing.assert_allclose(got[i], central_differences(_euler_with_a_helper, args, i), rtol=1e-6)
