"""Whole-array NumPy expressions on arrays of duals inside @numba.njit code (duals/jit/arrays.py).

The compiled functions are NumPy-style user code, unchanged. Each one's derivatives are
checked against the NumPy path of the very same formula: its Python function (``f.py_func``)
run by ``duals.jacrev`` on traced arrays. The table tests generate one compiled function per
arity from duals.derivatives and ``array_spellings``, so a new entry or spelling is tested here.
"""
import math
import operator

import numba
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.jit import dual_array
from duals.jit.arrays import array_spellings

from finite_differences import central_differences
from lanes import LANES  # one lane count for every jacfwd, so the dual rules compile once for all

njit = numba.njit(cache=True)
RTOL = 1e-12


def assert_close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w)
        return
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13)


def matches_numpy_path(f, *args, argnums=0):
    """jacfwd of the compiled ``f`` equals jacrev of its own Python source on the NumPy path."""
    got = duals.jacfwd(f, argnums=argnums, chunk_size=LANES)(*args)
    assert_close(got, duals.jacrev(f.py_func, argnums=argnums)(*args))


# ---------------------------------------------------------------- user code, unchanged

@njit
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@njit
def broadcast_grid(a, b):
    return np.sin(a) * b - a / b + np.maximum(a, 0.5 * b) + operator.mul(a, b)  # a call: not fused


@njit
def scalar_mixes(x, s):
    return (2.0 * x - x / 3 + (1 - x) ** 2 + 2 ** x) * s + s / x - s ** x + np.hypot(x, s)


@njit
def float_weights(x, w):
    return w * x + x * w - w / x + np.arctan2(w, x)


@njit
def in_place_steps(x, y):
    z = x * 1.0
    z += y
    z -= 0.5
    z *= x
    z /= 2.0
    z **= 2
    return z


@njit
def shift_add_in_place(x):
    z = x.copy()
    tail = z[1:]
    tail += z[:-1]  # overlapping views, updated element by element as Numba does for floats
    return z


@njit
def unary_operators(x):
    return -x + abs(x) * np.abs(x - 1.0)


@njit
def rectified(x):
    return x * (x > 0.0) + (x <= 0.0) * np.exp(x)


@njit
def reductions(x, A, w):
    return (np.sum(x) + x.sum() + np.sum(A) * A.sum() + np.prod(x) * x.prod() + np.mean(x)
            + A.mean() + np.mean(A[0]) + np.dot(x, x) + np.dot(x, w) + np.dot(w, A[1]))


@njit
def add(a, b):
    return a + b


@njit
def add_into(a, b):
    a += b
    return a


@njit
def sums_over_axes(A):
    return np.sum(A, axis=0) * A.sum(axis=1)[0] + A.sum(axis=-1)[1] + A.sum()


@njit
def prod_over_axis(x):
    return np.prod(x, axis=0)


@njit
def mean_over_axis(x):
    return np.mean(x, axis=1)


@njit
def dot_of_matrices(A):
    return np.dot(A, A)


@njit
def float_array_plus_dual(x):
    z = np.ones(x.shape[0])
    z += x
    return z


@njit
def argument_plus_dual(z, x):
    z += x
    return z


# ---------------------------------------------------------------- the motivating example

def test_rosenbrock_gradient_matches_numpy_path():
    x = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(duals.jacfwd(rosenbrock)(x), duals.grad(rosenbrock.py_func)(x), rtol=RTOL)


def test_rosenbrock_hessian_of_nested_dual_arrays_matches_numpy_hessian():
    x = np.array([0.9, -0.4, 1.3])  # three directions: the lanes of the other tests
    np.testing.assert_allclose(duals.jit.compiled_hessian(rosenbrock)(x), duals.hessian(rosenbrock.py_func)(x),
                               rtol=RTOL, atol=1e-10)


# ---------------------------------------------------------------- operands and broadcasting

def test_column_and_row_broadcast_to_a_grid():
    a, b = np.array([[0.3], [-1.2], [2.0]]), np.array([[0.5, 1.5, 2.5, 4.0]])
    matches_numpy_path(broadcast_grid, a, b, argnums=(0, 1))


def test_scalars_mix_with_dual_arrays_in_both_orders():
    x = np.array([0.4, 1.3, 2.2])
    matches_numpy_path(scalar_mixes, x, 0.7, argnums=(0, 1))  # x and s both duals
    matches_numpy_path(scalar_mixes, x, 0.7, argnums=1)  # x a float array, s a dual


def test_float_array_and_dual_array_in_both_orders():
    x, w = np.array([0.4, -1.3, 2.2]), np.array([2.0, 0.5, -1.0])
    matches_numpy_path(float_weights, x, w)


def test_in_place_operators_write_into_the_left_array():
    x, y = np.array([[0.4, -1.3, 2.2], [1.0, 2.0, 3.0]]), np.array([0.5, 0.0, -0.5])
    matches_numpy_path(in_place_steps, x, y, argnums=(0, 1))  # there, z += y makes a new array
    d = dual_array(y, np.eye(3))
    assert add_into(d, 1.0) is d and np.array_equal(d["primal"], y + 1.0)


def test_in_place_with_an_overlapping_right_side_updates_in_order_like_float_code():
    x = np.array([1.0, 2.0, 4.0, 8.0])  # gives running sums [1, 3, 7, 15]; NumPy: [1, 3, 6, 12]
    got = duals.jacfwd(shift_add_in_place, chunk_size=LANES)(x)
    np.testing.assert_array_equal(got, duals.jacrev(dnp.cumsum)(x))


def test_negation_and_abs_of_arrays():
    matches_numpy_path(unary_operators, np.array([0.4, -1.3, 2.2]))


def test_comparisons_give_boolean_arrays_that_mask_duals():
    matches_numpy_path(rectified, np.array([0.4, -1.3, 2.2, -0.1]))


def test_levels_of_nesting_meet_in_the_higher_one():
    second = dual_array(np.array([1.0, 2.0]), np.array([[1.0, 0.0], [0.0, 1.0]]),
                        inner=(np.array([[1.0, 1.0]]),))  # two outer lanes over one inner lane
    first = dual_array(np.array([3.0, 4.0]), np.array([[1.0, 1.0]]))  # a constant to the outer level
    for got in (add(second, first), add(first, second)):
        assert got.dtype == second.dtype
        np.testing.assert_array_equal(got["primal"]["primal"], [4.0, 6.0])
        np.testing.assert_array_equal(got["primal"]["tangent"], [[2.0], [2.0]])
        np.testing.assert_array_equal(got["tangent"]["primal"], second["tangent"]["primal"])


def test_duals_of_one_level_with_different_lanes_are_refused():
    with pytest.raises(numba.core.errors.TypingError, match="same number of lanes"):
        add(dual_array(np.ones(2), np.ones((2, 2))), dual_array(np.ones(2), np.ones((3, 2))))


@numba.njit
def _cubic_times_rate(x, c):
    return np.sum(x ** 3) * c + np.exp(c)


@numba.njit
def _float64_buffer_of_float32_inputs(x):
    buf = np.zeros(x.size)            # float64, as plain Numba code makes it
    total = 0.0
    for i in range(x.size):
        buf[i] = x[i] * 2.0
    for i in range(x.size):           # float64 meets float32 in every kind of binary operation
        total += buf[i] * x[i] + math.atan2(buf[i], x[i] + 1.0) + max(buf[i], x[i]) + (buf[i] < x[i])
        total += buf[i] ** x[i] if x[i] > 0 else 0.0
    return total + np.sum(buf * x) + np.sum(np.maximum(x, buf))   # and in whole-array operations


def test_float32_and_float64_duals_of_one_call_promote_to_float64_as_numba_does():
    # (they were refused: plain code that works on float32 inputs must differentiate unchanged)
    x32 = np.linspace(0.1, 1.0, 7).astype(np.float32)
    J = duals.jacfwd(_cubic_times_rate, argnums=(0, 1))(x32, 1.0)
    want = duals.jacfwd(_cubic_times_rate.py_func, argnums=(0, 1))(x32.astype(np.float64), 1.0)
    assert J[0].dtype == np.float32
    np.testing.assert_allclose(J[0], want[0], rtol=1e-6)
    assert J[1] == pytest.approx(want[1], rel=1e-6)
    value, slope = duals.jvp(_cubic_times_rate, (x32, np.float32(1.0)),
                             (np.ones(7, np.float32), np.float32(0.0)))
    assert slope == pytest.approx(3.0 * np.sum(x32 ** 2), rel=1e-5)
    f = _float64_buffer_of_float32_inputs
    x64 = x32.astype(np.float64)
    for how in ("jacfwd", "grad"):
        np.testing.assert_allclose(getattr(duals, how)(f)(x32), central_differences(f, [x64], 0),
                                   rtol=1e-5, err_msg=how)
    np.testing.assert_allclose(duals.hessian(f)(x32), duals.hessian(f)(x64), rtol=2e-6, atol=1e-6)


# ---------------------------------------------------------------- reductions

def test_sum_prod_mean_and_dot_reduce_to_a_dual():
    rng = np.random.default_rng(1)
    x, A, w = rng.normal(size=4), rng.normal(size=(3, 4)), rng.normal(size=4)
    matches_numpy_path(reductions, x, A, w, argnums=(0, 1))


def test_sums_over_an_axis_differentiate():  # duals/jit/reductions.py, on every supported Numba
    A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    matches_numpy_path(sums_over_axes, A)


# ---------------------------------------------------------------- clear errors

def test_prod_and_mean_over_an_axis_match_the_numpy_path():  # duals/jit/array_functions.py
    for f in (prod_over_axis, mean_over_axis):
        matches_numpy_path(f, np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))


def test_dot_of_matrices_of_duals_matches_the_numpy_path():  # duals/jit/linalg.py
    matches_numpy_path(dot_of_matrices, np.array([[0.5, -1.0], [1.5, 0.25]]))


def test_incompatible_shapes_raise_value_error():
    for f in (add, add_into):
        with pytest.raises(ValueError, match="broadcast"):
            duals.jacfwd(f, argnums=(0, 1), chunk_size=LANES)(np.ones(3), np.ones(4))


def test_in_place_cannot_grow_the_left_array():
    with pytest.raises(ValueError, match="must broadcast to the shape of the left one, which cannot grow"):
        duals.jacfwd(add_into, argnums=(0, 1), chunk_size=LANES)(np.ones(3), np.ones((2, 3)))


def test_in_place_dual_into_an_array_the_code_made_holds_duals():
    np.testing.assert_array_equal(duals.jacfwd(float_array_plus_dual)(np.ones(3)), np.eye(3))


def test_in_place_dual_into_an_argument_array_promotes_a_copy_of_it():
    z = np.ones(3)
    np.testing.assert_array_equal(duals.jacfwd(argument_plus_dual, argnums=1)(z, np.ones(3)), np.eye(3))
    np.testing.assert_array_equal(z, np.ones(3))  # the caller's array is not written


# ---------------------------------------------------------------- every entry of the table

def _calls(table, args):
    """[(name, call source)]: each entry of ``table`` through one array spelling (a ufunc if
    it has one: the spelling Numba fuses into loops); every spelling is typed in the last test."""
    found = []
    for name in table:
        spelled = sorted(array_spellings(name), key=lambda f: not isinstance(f, np.ufunc))
        if spelled:
            f = spelled[0]
            module = "np" if isinstance(f, np.ufunc) else f.__module__.lstrip("_")  # _operator
            found.append((name, f"{module}.{f.__name__}({args})"))
    return found


UNARY_CALLS = _calls(derivatives.UNARY, "x")
BINARY_CALLS = _calls(derivatives.BINARY, "x, y")


@pytest.fixture(scope="module")
def table():
    """The compiled functions ``unary(x)`` and ``binary(x, y)`` returning every call's result, in
    a file written by the library's loader of generated code (Numba's cache finds it again)."""
    from duals.kernels import load_generated
    source = "import operator\n\nimport numba\nimport numpy as np\n"
    for function, args, calls in (("unary", "x", UNARY_CALLS), ("binary", "x, y", BINARY_CALLS)):
        source += (f"\n\n@numba.njit(cache=True)\ndef {function}({args}):\n"
                   f"    return ({', '.join(call for _, call in calls)},)\n")
    return load_generated("test_jit_arrays_table", source)


def _mismatches(calls, results, primals, lanes):
    """The calls whose values and lanes differ from the NumPy path's (``lanes[i]``: the tangent
    lanes of ``primals[i]`` as a matrix, directions by columns; None for a float array)."""
    from duals.ops.elementwise import PRIMITIVES
    bad = []
    for (name, call), got in zip(calls, results):
        nums = tuple(i for i, t in enumerate(lanes) if t is not None)
        with np.errstate(all="ignore"):
            value = PRIMITIVES[name](*primals)
            blocks = duals.jacfwd(PRIMITIVES[name], argnums=nums)(*primals)
        want = sum(block @ lanes[i] for i, block in zip(nums, blocks))
        if not (np.allclose(got["primal"], value, rtol=RTOL, equal_nan=True)
                and np.allclose(got["tangent"], want, rtol=RTOL, equal_nan=True)):
            bad.append((call, got, value, want))
    return bad


def test_every_unary_entry_on_a_dual_array_matches_the_array_path(table):
    x = np.array([-0.4, 0.6, 1.7])
    with np.errstate(all="ignore"):
        results = table.unary(dual_array(x, np.eye(LANES)))
    assert len(results) == len(UNARY_CALLS)
    assert not _mismatches(UNARY_CALLS, results, (x,), (np.eye(LANES),))


@pytest.mark.parametrize("which", ["both", "x only", "y only"])
def test_every_binary_entry_on_dual_and_float_arrays_matches_the_array_path(table, which):
    x, y = np.array([0.6, 1.3, 0.8]), np.array([1.7, 0.4, 0.8])
    mixed = np.array([[0.5, 1.0, 0.0], [0.0, -1.0, 2.0], [1.0, 0.0, 0.5]])
    lanes = {"both": (np.eye(LANES), mixed), "x only": (np.eye(LANES), None),
             "y only": (None, mixed)}[which]
    args = [p if t is None else dual_array(p, t.T) for p, t in zip((x, y), lanes)]
    with np.errstate(all="ignore"):
        results = table.binary(*args)
    assert len(results) == len(BINARY_CALLS)
    assert not _mismatches(BINARY_CALLS, results, (x, y), lanes)


def test_every_array_spelling_of_every_entry_is_typed_for_dual_arrays():
    from numba.core.registry import cpu_target
    from duals.jit import DualType
    context = cpu_target.typing_context
    context.refresh()
    array = numba.types.Array(DualType(numba.float64, LANES), 1, "C")
    missing = []
    for table, args in ((derivatives.UNARY, (array,)), (derivatives.BINARY, (array, array))):
        for name in table:
            for f in array_spellings(name):
                sig = context.resolve_function_type(context.resolve_value_type(f), args, {})
                if sig is None or sig.return_type != array:
                    missing.append((name, f))
    assert not missing, missing


@numba.njit
def _doubled(x):
    return x * 2.0


@numba.njit
def _squared_norm(x):
    return np.sum(x ** 2)


def test_empty_inputs_give_empty_derivatives_in_every_compiled_mode():
    empty = np.ones(0)
    value, tangent = duals.jvp(_doubled, (empty,), (empty,))
    assert value.shape == tangent.shape == (0,)
    assert duals.jacfwd(_doubled)(empty).shape == duals.jacrev(_doubled)(empty).shape == (0, 0)
    assert duals.jacfwd(_squared_norm)(empty).shape == duals.grad(_squared_norm)(empty).shape == (0,)
    assert duals.hessian(_squared_norm)(empty).shape == (0, 0)
