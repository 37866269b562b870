"""A property-based fuzzer for compiled code: random programs run by one @njit register machine.

Compiling a random function per example would cost seconds each, so the random part is data: a
program is an int64 array of instructions ``(op, dst, a, b)`` that one @njit interpreter runs on
a register array (the inputs, then scratch registers it fills). The interpreter is ordinary Numba
code: a loop dispatching on ``op``, ``math.*`` calls, a loop-carried update, branches on values,
``max``, slices reduced by ``np.sum``/``np.dot``, registers overwritten, swapped and accumulated
in place, a slice scaled as an array, a call into another @njit function, a second buffer written
and read back. A second machine's registers are the rows of an array and its instructions NumPy
functions (sorting, interpolation, solves, eigenvalues, convolution, ...). Every example is checked
across the compiled modes (``jacfwd`` lanes against ``jacrev``'s tape; ``grad`` of an energy
against both; for the scalar machine ``hessian`` forward over the tape against forward over
forward and ``hvp``) and against central differences wherever the program is smooth at the point
(two step sizes agree).

CI runs a small derandomized budget; ``HYPOTHESIS_PROFILE=large`` runs many more examples.
"""
import math
import os

import numba
import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import duals

settings.register_profile("jit-ci", max_examples=30, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("jit-large", max_examples=1000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = settings.get_profile("jit-large" if os.environ.get("HYPOTHESIS_PROFILE") == "large" else "jit-ci")

INPUTS, REGISTERS, OUTPUTS = 4, 8, 3
OPS = ("add", "sub", "mul", "div", "sin", "gauss", "log1p", "sqrt", "tanh", "accumulate", "max",
       "branch", "atan2", "power", "sum", "dot", "swap", "loop", "hypot", "scale_slice", "helper",
       "buffer")


@numba.njit(cache=True)
def _helper(a, b):
    return a * math.cos(b) + math.exp(-b * b)


@numba.njit(cache=True)
def run(x, program):
    v = np.zeros(REGISTERS)
    w = np.zeros(REGISTERS)
    for i in range(x.shape[0]):
        v[i] = x[i]
    for k in range(program.shape[0]):
        op, d, a, b = program[k, 0], program[k, 1], program[k, 2], program[k, 3]
        if op == 0:
            v[d] = v[a] + v[b]
        elif op == 1:
            v[d] = v[a] - v[b]
        elif op == 2:
            v[d] = v[a] * math.tanh(v[b])
        elif op == 3:
            v[d] = v[a] / (1.5 + v[b] * v[b])
        elif op == 4:
            v[d] = math.sin(v[a])
        elif op == 5:
            v[d] = math.exp(-v[a] * v[a])
        elif op == 6:
            v[d] = math.log1p(v[a] * v[a])
        elif op == 7:
            v[d] = math.sqrt(2.0 + math.cos(v[a]))
        elif op == 8:
            v[d] = math.tanh(v[a] + 0.5 * v[b])
        elif op == 9:
            v[d] += 0.5 * v[a] * math.tanh(v[b])
        elif op == 10:
            v[d] = max(v[a], v[b])
        elif op == 11:
            if v[a] > v[b]:
                v[d] = 2.0 * v[a]
            else:
                v[d] = v[b] - 1.0
        elif op == 12:
            v[d] = math.atan2(v[a], 1.0 + v[b] * v[b])
        elif op == 13:
            v[d] = (v[a] * v[a] + 0.5) ** (0.3 * math.tanh(v[b]))
        elif op == 14:
            lo = min(a, b)
            v[d] = np.sum(v[lo:max(a, b) + 1]) / (max(a, b) + 1 - lo)
        elif op == 15:
            k = REGISTERS - max(a, b)
            v[d] = np.dot(v[a:a + k], v[b:b + k]) / k
        elif op == 16:
            t = v[a]
            v[a] = v[b]
            v[b] = t
        elif op == 17:
            for _ in range(b + 1):
                v[d] = 0.9 * math.sin(v[d]) + 0.1 * v[a]
        elif op == 18:
            v[d] = math.hypot(v[a], v[b] + 2.0)
        elif op == 19:
            v[d:] = v[d:] * (0.5 + 0.25 * math.tanh(v[a]))
        elif op == 20:
            v[d] = _helper(v[a], v[b])
        else:
            w[d] = v[a] * v[b]
            v[b] = 0.5 * (w[d] + w[a])
    return v[REGISTERS - OUTPUTS:].copy()


@numba.njit(cache=True)
def energy(x, program):
    y = run(x, program)
    return np.sum(y * y) + y[0] * y[-1]


ROWS, WIDTH = 6, 4      # the array machine's registers: rows of a (ROWS, WIDTH) array
ARRAY_OPS = ("cumsum", "sort", "clip", "where", "interp", "solve", "matmul", "roll", "gauss",
             "maximum", "mean", "diff", "reverse", "tanh", "norm", "max", "prod", "hypot", "arctan2",
             "eigvalsh", "convolve", "median", "outer_row", "cosh")
GRID = np.linspace(-3.0, 3.0, 7)
TABLE = np.sin(GRID) + 0.3 * GRID
MIXING = np.array([[0.9, -0.2, 0.1, 0.0], [0.3, 0.8, 0.0, -0.1], [0.0, 0.2, 1.1, 0.3], [-0.4, 0.0, 0.1, 0.7]])


@numba.njit(cache=True)
def run_arrays(x, program):
    V = np.zeros((ROWS, WIDTH))
    V[:x.shape[0]] = x
    for k in range(program.shape[0]):
        op, d, a, b = program[k, 0], program[k, 1], program[k, 2], program[k, 3]
        if op == 0:
            V[d] = np.cumsum(V[a]) / WIDTH
        elif op == 1:
            V[d] = np.sort(V[a] + 0.1 * V[b])
        elif op == 2:
            V[d] = np.clip(V[a], -0.8, 0.9)
        elif op == 3:
            V[d] = np.where(V[a] > 0.0, V[a], 0.1 * V[b])
        elif op == 4:
            V[d] = np.interp(np.tanh(V[a]) * 2.5, GRID, TABLE)
        elif op == 5:
            M = 3.0 * np.eye(WIDTH) + 0.1 * np.outer(V[b], V[b])
            V[d] = np.linalg.solve(M, V[a])
        elif op == 6:
            V[d] = MIXING @ V[a]
        elif op == 7:
            V[d] = np.roll(V[a], b)
        elif op == 8:
            V[d] = np.exp(-V[a] ** 2)
        elif op == 9:
            V[d] = np.maximum(V[a], V[b])
        elif op == 10:
            V[d] = np.mean(V[a]) + V[b]
        elif op == 11:
            V[d] = np.diff(np.concatenate((V[a], V[b, :1])))
        elif op == 12:
            V[d] = V[a][::-1].copy()
        elif op == 13:
            V[d] = np.tanh(V[a] + V[b])
        elif op == 14:
            V[d] = np.linalg.norm(V[a]) * np.tanh(V[b])
        elif op == 15:
            V[d] = np.max(V[a]) - V[b]
        elif op == 16:
            V[d] = V[a] * np.prod(1.0 + 0.1 * np.tanh(V[b]))
        elif op == 17:
            V[d] = np.hypot(V[a], V[b] + 2.0)
        elif op == 18:
            V[d] = np.arctan2(V[a], 1.5 + V[b] ** 2)
        elif op == 19:
            S = np.outer(V[a], V[a]) + np.diag(np.arange(WIDTH) + V[b])
            V[d] = np.linalg.eigvalsh(S) / WIDTH
        elif op == 20:
            V[d] = np.convolve(V[a], np.array([0.25, 0.5, 0.25]))[1:WIDTH + 1]
        elif op == 21:
            V[d] = np.median(V[a]) * V[b]
        elif op == 22:
            V[d] += 0.5 * V[a] * V[b, b % WIDTH]
        else:
            V[d] = np.cosh(0.5 * V[a]) - 1.0
    return V[ROWS - 2:]


@numba.njit(cache=True)
def energy_arrays(x, program):
    Y = run_arrays(x, program)
    return np.sum(Y * Y) + np.sum(Y[0] * Y[1])


@st.composite
def _programs(draw, names, registers, longest, shape):
    """(x of ``shape``, a program of up to ``longest`` instructions over ``names`` and ``registers``)."""
    n = draw(st.integers(1, longest))
    register = st.integers(0, registers - 1)
    program = np.array([[names.index(draw(st.sampled_from(names))), draw(register), draw(register), draw(register)]
                        for _ in range(n)], dtype=np.int64).reshape(n, 4)
    seed = draw(st.integers(0, 2 ** 16))
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape), program


def examples():
    return _programs(OPS, REGISTERS, 14, INPUTS)


def array_examples():
    return _programs(ARRAY_OPS, ROWS, 10, (2, WIDTH))


def _described(program, names=OPS):
    return "; ".join(f"{names[op]} -> v{d} (v{a}, v{b})" for op, d, a, b in program)


def _central(f, x, h):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(columns, axis=-1)


def _smooth_differences(f, x):
    """Central differences of ``f`` at ``x``, or None where two step sizes disagree (a branch, a
    max or a swap decided differently within the step: the program is not smooth there)."""
    coarse, fine = _central(f, x, 1e-4), _central(f, x, 1e-5)
    if not np.allclose(coarse, fine, rtol=1e-4, atol=1e-6):
        return None
    return fine


def _close(a, b, scale=1.0):
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * max(1.0, scale))


@settings(PROFILE)
@given(examples())
def test_random_compiled_programs_agree_in_every_mode_and_with_finite_differences(example):
    x, program = example
    note(_described(program))
    y = run(x, program)
    assert np.all(np.isfinite(y))
    forward = duals.jacfwd(run)(x, program)
    reverse = duals.jacrev(run)(x, program)
    scale = float(np.max(np.abs(forward), initial=1.0))
    _close(reverse, forward, scale)
    gradient = duals.grad(energy)(x, program)
    _close(gradient, (2.0 * y + np.array([y[-1]] + [0.0] * (OUTPUTS - 2) + [y[0]])) @ forward, scale)
    differences = _smooth_differences(lambda z: run(z, program), x)
    if differences is not None:
        np.testing.assert_allclose(forward, differences, rtol=1e-5, atol=1e-6 * scale)


@settings(PROFILE)
@given(examples(), st.integers(0, 2 ** 16))
def test_random_compiled_programs_second_order_agrees_forward_over_forward_and_over_reverse(example, seed):
    x, program = example
    note(_described(program))
    hessian = duals.hessian(energy)(x, program)        # a scalar: forward over the compiled tape
    y, jacobian = run(x, program), duals.jacfwd(run)(x, program)
    second = duals.hessian(run)(x, program)            # a vector: forward over forward
    expected = 2.0 * (jacobian.T @ jacobian + np.tensordot(y, second, axes=1))
    expected += np.outer(jacobian[0], jacobian[-1]) + np.outer(jacobian[-1], jacobian[0])
    expected += y[0] * second[-1] + y[-1] * second[0]
    scale = float(np.max(np.abs(expected), initial=1.0))
    _close(hessian, expected, scale)
    v = np.random.default_rng(seed).standard_normal(INPUTS)
    _close(duals.hvp(energy, x, v, program), expected @ v, scale)
    gradient = duals.grad(energy)
    differences = _smooth_differences(lambda z: gradient(z, program), x)
    if differences is not None:
        np.testing.assert_allclose(hessian, differences, rtol=1e-5, atol=1e-6 * scale)


def test_the_register_machine_runs_every_instruction():
    """Each op once, so the fuzzer's interpreter compiles every branch in every mode."""
    program = np.array([[k, (3 + k) % REGISTERS, k % REGISTERS, (k + 5) % REGISTERS]
                        for k in range(len(OPS))], dtype=np.int64)
    x = np.array([0.3, -0.7, 1.1, 0.45])
    forward = duals.jacfwd(run)(x, program)
    _close(duals.jacrev(run)(x, program), forward)
    differences = _smooth_differences(lambda z: run(z, program), x)
    assert differences is not None
    np.testing.assert_allclose(forward, differences, rtol=1e-5, atol=1e-7)
    assert math.isfinite(energy(x, program))


@settings(PROFILE)
@given(array_examples())
def test_random_compiled_array_programs_agree_in_every_mode_and_with_finite_differences(example):
    """NumPy functions inside compiled code, composed at random on rows of a register array (second
    order is the scalar machine's: compiling this one over nested types would double the file's time)."""
    x, program = example
    note(_described(program, ARRAY_OPS))
    Y = run_arrays(x, program)
    assert np.all(np.isfinite(Y))
    forward = duals.jacfwd(run_arrays)(x, program)           # 8 lanes
    reverse = duals.jacrev(run_arrays)(x, program)
    scale = float(np.max(np.abs(forward), initial=1.0))
    _close(reverse, forward, scale)
    weights = 2.0 * Y + Y[::-1]
    _close(duals.grad(energy_arrays)(x, program), np.tensordot(weights, forward, axes=2), scale)
    differences = _smooth_differences(lambda z: run_arrays(z.reshape(x.shape), program).ravel(), x.ravel())
    if differences is not None:
        np.testing.assert_allclose(forward.reshape(differences.shape), differences, rtol=1e-5, atol=1e-6 * scale)
