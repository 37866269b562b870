"""Complex numbers inside unchanged @numba.njit code, differentiated by compiled forward mode.

Complex duals (duals/jit/complex_types.py, complex_lanes.py, complex_rules.py) carry complex
tangent lanes. The table tests generate one compiled function per arity from the HOLOMORPHIC
part of duals.derivatives, so a new holomorphic entry is tested here: every entry against
complex central differences along x and along iy, and against the NumPy path's jvp of the very
same Python source. Then the real-linear rules (abs, real, imag, conj, angle, complex()), and
kernels as a Numba user writes them: an RLC impedance sweep (against the closed form), a
two-level Schrödinger system stepped by complex RK4 (against central differences, first and
second order) and a Horner polynomial under holomorphic=True.
"""
import ast
import cmath
import math
import os

import numba
import numpy as np
import pytest

import duals
from duals import derivatives
from duals.jit import complex_rules

from finite_differences import central_differences
from lanes import LANES

njit = numba.njit(cache=True)
H = 1e-6   # central-difference step


def central(f, z, direction, *rest):
    """(f(z + h d) - f(z - h d)) / 2h, entry by entry of f's tuple or array result."""
    up, down = f(z + H * direction, *rest), f(z - H * direction, *rest)
    if isinstance(up, tuple):
        return tuple((np.asarray(u) - np.asarray(d)) / (2 * H) for u, d in zip(up, down))
    return (np.asarray(up) - np.asarray(down)) / (2 * H)


def close(got, want, rtol=1e-12, atol=1e-13):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol, atol)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- the table, generated

HOLOMORPHIC_UNARY = sorted(n for n in derivatives.HOLOMORPHIC if n in derivatives.UNARY)
HOLOMORPHIC_BINARY = sorted(n for n in derivatives.HOLOMORPHIC if n in derivatives.BINARY)
# a point of each entry's principal branch, away from the cuts
POINTS = {"arccosh": 1.7 + 0.4j}


def _numpy_name(name):
    return (derivatives.NUMPY_NAMES.get(name) or (name,))[0]


def _generated(arity):
    """One @njit function applying every holomorphic entry of ``arity`` under its np spelling:
    unary ones to ``z[k]`` (one point per entry), binary ones to ``z, w`` and to constants."""
    if arity == 1:
        items = [f"np.{_numpy_name(n)}(z[{k}])" for k, n in enumerate(HOLOMORPHIC_UNARY)]
        source = f"def table(z):\n    return ({', '.join(items)},)\n"
    else:
        items = []
        for n in HOLOMORPHIC_BINARY:
            f = f"np.{_numpy_name(n)}"
            items += [f"{f}(z, w)", f"{f}(z, 0.7 - 0.2j)", f"{f}(1.3 + 0.5j, w)", f"{f}(z, 2.0)",
                      f"{f}(-1.5, w)"]
        source = f"def table(z, w):\n    return ({', '.join(items)},)\n"
    scope = {"np": np}
    exec(source, scope)
    return numba.njit(scope["table"])


UNARY_TABLE = _generated(1)
BINARY_TABLE = _generated(2)
Z_UNARY = np.array([POINTS.get(n, 0.4 + 0.3j) for n in HOLOMORPHIC_UNARY])


def _unary_lanes(values):
    """Entry k of the unary table depends on z[k] only: its derivative is the jvp along e_k."""
    return tuple(np.asarray(v) for v in values)


@pytest.mark.parametrize("direction", [1.0, 1j], ids=["along x", "along iy"])
def test_every_holomorphic_entry_matches_central_differences(direction):
    t = np.full(Z_UNARY.shape, direction)
    value, tangent = duals.jvp(UNARY_TABLE, (Z_UNARY,), (t,))
    want = central(UNARY_TABLE.py_func, Z_UNARY, direction)
    for k, name in enumerate(HOLOMORPHIC_UNARY):
        close(tangent[k], want[k], rtol=1e-7, atol=1e-8)
        close(value[k], getattr(np, _numpy_name(name))(Z_UNARY[k]), rtol=1e-14, atol=1e-15)


def test_every_holomorphic_entry_matches_the_numpy_path():
    t = np.full(Z_UNARY.shape, 0.6 - 0.8j)
    got = duals.jvp(UNARY_TABLE, (Z_UNARY,), (t,))[1]
    want = duals.jvp(UNARY_TABLE.py_func, (Z_UNARY,), (t,))[1]
    close(_unary_lanes(got), _unary_lanes(want))


@pytest.mark.parametrize("point", [complex(1.3, 0.0), complex(1.3, -0.0), complex(-1.3, 0.0), complex(-1.3, -0.0),
                                   complex(0.0, 1.3), complex(-0.0, 1.3), complex(0.0, -1.3)])
def test_on_a_branch_cut_compiled_code_takes_the_side_of_the_numpy_path(point):
    """tests/test_complex.py checks the NumPy path's side against differences that keep the signed
    zero; compiled code evaluates the same table, with Numba's complex arithmetic."""
    z = np.full(Z_UNARY.shape, point)
    t = np.full(Z_UNARY.shape, 1.0 + 0j if point.real != 0 else 1j)
    with np.errstate(all="ignore"):
        got = np.array(duals.jvp(UNARY_TABLE, (z,), (t,))[1])
        want = np.array(duals.jvp(UNARY_TABLE.py_func, (z,), (t,))[1])
    finite = np.isfinite(want)
    close(got[finite], want[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("argnum", [0, 1], ids=["d/dz", "d/dw"])
@pytest.mark.parametrize("direction", [1.0, 1j], ids=["along x", "along iy"])
def test_binary_holomorphic_entries_with_duals_and_constants(argnum, direction):
    z, w = 0.4 + 0.3j, 0.9 - 0.6j
    tangents = (direction, 0j) if argnum == 0 else (0j, direction)
    value, tangent = duals.jvp(BINARY_TABLE, (z, w), tangents)
    f = BINARY_TABLE.py_func
    want = (central(f, z, direction, w) if argnum == 0
            else central(lambda w, z: f(z, w), w, direction, z))
    close(tangent, want, rtol=1e-7, atol=1e-8)
    close(value, f(z, w), rtol=1e-14, atol=1e-15)
    close(tangent, duals.jvp(f, (z, w), tangents)[1])


def test_the_complex_rules_speak_only_words_numpy_evaluates_on_complex_numbers():
    for name in derivatives.HOLOMORPHIC:
        for formula in (derivatives.TABLE[name].value,) + derivatives.TABLE[name].partials:
            called = {node.func.id for node in ast.walk(ast.parse(formula))
                      if isinstance(node, ast.Call)}
            assert called <= set(complex_rules.WORDS) | {"where"}, (name, formula)


# ---------------------------------------------------------------- cmath and the real-linear rules

@njit
def cmath_spellings(z):
    return (cmath.exp(z), cmath.log(z), cmath.sqrt(z), cmath.sin(z), cmath.cos(z), cmath.tan(z),
            cmath.asin(z), cmath.acos(z), cmath.atan(z), cmath.sinh(z), cmath.cosh(z),
            cmath.tanh(z), cmath.asinh(z), cmath.atanh(z), cmath.log10(z), cmath.log(z, 2.0))


@njit
def real_linear(z):
    r, phi = cmath.polar(z)
    return (abs(z), z.real, z.imag, z.conjugate(), np.conj(z), np.real(z), np.imag(z),
            np.abs(z), np.angle(z), cmath.phase(z), r, phi, cmath.rect(abs(z), 0.3) * z)


@pytest.mark.parametrize("direction", [1.0, 1j, 0.6 - 0.8j], ids=["along x", "along iy", "oblique"])
def test_cmath_and_real_linear_functions_match_central_differences(direction):
    z = -0.7 + 0.4j
    for f in (cmath_spellings, real_linear):
        value, tangent = duals.jvp(f, (z,), (direction,))
        close(tangent, central(f.py_func, z, direction), rtol=1e-7, atol=1e-8)
        close(value, f.py_func(z), rtol=1e-14, atol=1e-15)


@njit
def current_injection_power(x):
    current = 0j                       # a plain complex number first, a dual after the loop's first pass
    for k in range(x.size):
        current += x[k] * np.exp(1j * x[k])
    return (current * current.conjugate()).real


@njit
def conjugated_real_sum(x):
    total = 0.0
    for k in range(x.size):
        total += x[k] * x[k]
    return total.conjugate() * 2.0


def test_the_conjugate_method_of_a_loop_carried_number_that_becomes_a_dual():
    # (Numba could not unify the plain number's conjugate method with the dual's: a user trial)
    x = np.array([0.3, 0.7, 1.1])
    want = central_differences(current_injection_power.py_func, [x], 0)
    close(duals.jacfwd(current_injection_power)(x), want, rtol=1e-7, atol=1e-9)
    close(duals.grad(current_injection_power)(x), want, rtol=1e-7, atol=1e-9)
    for transform in (duals.jacfwd, duals.grad):
        np.testing.assert_array_equal(transform(conjugated_real_sum)(x), 4.0 * x)


@njit
def total_injection(angles):
    return np.sum(np.exp(1j * angles) * (1.0 - 0.5j))


def test_grad_of_a_complex_output_of_compiled_code_says_what_to_take_instead():
    # (compiled grad of complex code goes to forward mode, which called float() on the output)
    for transform in (duals.grad, duals.value_and_grad):
        for f in (total_injection, total_injection.py_func):
            with pytest.raises(TypeError, match=r"^grad requires a real scalar output, got a complex "
                                                r"one; .*holomorphic=True.*np\.real\(y\)"):
                transform(f)(np.array([0.0, -0.1, 0.2]))


@njit
def from_parts(a, b):
    z = complex(a, b) ** 2 + complex(a) * 1j + complex(2.0, b) / complex(a, 3.0)
    return abs(z) + z.imag * a


def test_complex_of_real_duals_and_mixing_with_real_ones():
    a, b = 0.3, 0.8
    got = duals.jacfwd(from_parts, argnums=(0, 1), chunk_size=LANES)(a, b)
    close(got, (central(from_parts.py_func, a, 1.0, b),
                central(lambda b, a: from_parts.py_func(a, b), b, 1.0, a)), rtol=1e-7, atol=1e-8)


def test_abs_at_zero_follows_the_policy_of_abs_and_angle_has_no_derivative_there():
    """angle'(0) was 0 in compiled code and NaN on the NumPy path (a user trial): NaN on both."""
    f = njit(lambda z: (abs(z), np.angle(z), abs(z * z)))
    d_abs, d_angle, d_abs_square = duals.jvp(f, (0j,), (1 + 1j,))[1]
    assert d_abs == d_abs_square == 0.0 and np.isnan(d_angle)
    with np.errstate(all="ignore"):
        assert np.isnan(duals.jvp(f.py_func, (np.array(0j),), (np.array(1 + 1j),))[1][1])


def test_a_complex_dual_is_made_inside_njit_and_returned_as_a_dual():
    d = njit(lambda z: duals.Dual(z, 1j) * z + duals.Dual(2.0, 1.0))(1 + 2j)
    assert isinstance(d, duals.Dual)
    assert d.primal == (1 + 2j) ** 2 + 2.0 and d.tangent == 1j * (1 + 2j) + 1.0


# ---------------------------------------------------------------- user kernels

@njit
def rlc_magnitude(p, w):
    """|Z(w)| of a series RLC circuit at every frequency: a Numba user's loop."""
    R, L, C = p[0], p[1], p[2]
    out = np.empty(w.size)
    for k in range(w.size):
        z = R + 1j * w[k] * L + 1.0 / (1j * w[k] * C)
        out[k] = abs(z)
    return out


def test_rlc_impedance_sensitivities_match_the_closed_form():
    p = np.array([50.0, 1e-3, 1e-6])
    w = np.logspace(3, 6, 7)
    R, L, C = p
    X = w * L - 1.0 / (w * C)
    m = np.hypot(R, X)
    want = np.stack([R / m, X * w / m, X / (w * C * C) / m], axis=-1)
    jacobian = duals.jacfwd(rlc_magnitude, chunk_size=LANES)
    for _ in range(4):   # from the third call a compiled driver runs it: the same numbers
        close(jacobian(p, w), want, rtol=1e-12)
    close(rlc_magnitude(p, w), m, rtol=1e-14)   # the plain call is Numba's own


@njit
def schrodinger_rhs(psi, g, detuning):
    """-i H psi for H = [[d/2, g], [g, -d/2]]."""
    out = np.empty_like(psi)
    out[0] = -1j * (0.5 * detuning * psi[0] + g * psi[1])
    out[1] = -1j * (g * psi[0] - 0.5 * detuning * psi[1])
    return out


@njit
def rabi_population(g, detuning, T, steps):
    """|psi_1(T)|^2 of a driven two-level system from psi = (1, 0), by complex RK4."""
    psi = np.zeros(2, dtype=np.complex128)
    psi[0] = 1.0
    dt = T / steps
    for _ in range(steps):
        k1 = schrodinger_rhs(psi, g, detuning)
        k2 = schrodinger_rhs(psi + 0.5 * dt * k1, g, detuning)
        k3 = schrodinger_rhs(psi + 0.5 * dt * k2, g, detuning)
        k4 = schrodinger_rhs(psi + dt * k3, g, detuning)
        psi = psi + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return abs(psi[1]) ** 2


def test_schrodinger_rk4_population_derivatives_match_central_differences():
    p, n = np.array([0.8, 0.3, 2.0]), 40     # coupling, detuning, final time
    f = rabi_population.py_func
    first = duals.jacfwd(rabi_population, argnums=(0, 1, 2), chunk_size=LANES)(*p, n)
    close(first, tuple((f(*(p + H * e), n) - f(*(p - H * e), n)) / (2 * H) for e in np.eye(3)),
          rtol=1e-7, atol=1e-9)
    h = 1e-4
    second = duals.hessian(rabi_population)(*p, n)     # d²P/dg²
    close(second, (f(p[0] + h, *p[1:], n) - 2 * f(*p, n) + f(p[0] - h, *p[1:], n)) / h ** 2,
          rtol=1e-5, atol=1e-7)


@njit
def horner(c, z):
    """p(z) = c[0] + c[1] z + ... at every point of z."""
    out = np.zeros_like(z)
    for i in range(z.size):
        acc = c[c.size - 1] + 0.0 * z[i]
        for k in range(c.size - 2, -1, -1):
            acc = acc * z[i] + c[k]
        out[i] = acc
    return out


def test_holomorphic_jacobian_of_horner_is_the_derivative_polynomial():
    c = np.array([1.0 - 1j, 0.5j, -2.0, 0.25 + 0.5j])
    z = np.array([0.3 + 0.4j, -1.1 + 0.2j, 2.0 - 0.5j])
    dz, dc = duals.jacfwd(horner, argnums=(0, 1), holomorphic=True)(c, z)
    derivative = sum(k * c[k] * z ** (k - 1) for k in range(1, c.size))
    close(dc, np.diag(derivative))
    close(dz, np.stack([z ** k for k in range(c.size)], axis=-1))


def test_jvp_of_complex_arrays_with_complex_tangents():
    c = np.array([1.0 - 1j, 0.5j, -2.0, 0.25 + 0.5j])
    z = np.array([0.3 + 0.4j, -1.1 + 0.2j])
    t = np.array([1j, 0.5 - 0.5j])
    value, tangent = duals.jvp(horner, (c, z), (None, t))
    close(value, horner.py_func(c, z))
    close(tangent, sum(k * c[k] * z ** (k - 1) for k in range(1, c.size)) * t)


@njit
def spectrum_energy(x):
    """Σ |Σ_k x_k e^{-i w_j k}|^2 over a few frequencies: complex arrays, sums and np.abs."""
    n = x.size
    phases = np.exp(-1j * np.outer(np.arange(3) * 0.7, np.arange(n) * 1.0))
    out = np.zeros(3, dtype=np.complex128)
    for j in range(3):
        out[j] = np.sum(phases[j] * x)
    return np.sum(np.abs(out) ** 2) + np.sum(np.real(out * np.conj(out)))


def test_complex_arrays_sums_and_abs_in_a_real_function():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    got = duals.jacfwd(spectrum_energy, chunk_size=LANES)(x)
    want = [central(lambda v: spectrum_energy.py_func(x + v * e), 0.0, 1.0) for e in np.eye(4)]
    close(got, want, rtol=1e-7, atol=1e-8)


@njit
def array_functions(x):
    z = x * 1j + x[::-1] * 0.1 + 0.5
    return np.abs(np.sort(z)), np.abs(np.cumsum(z)), np.abs(np.prod(z)), z.sum().imag


def test_sorting_and_cumulative_sums_of_complex_dual_arrays():
    x = np.array([0.9, 0.3, 0.5])
    got = duals.jacfwd(array_functions, chunk_size=LANES)(x)
    want = tuple(np.stack(c, axis=-1) for c in zip(*[central(array_functions.py_func, x, e)
                                                      for e in np.eye(3)]))
    close(got, want, rtol=1e-7, atol=1e-8)


def test_jacfwd_of_real_inputs_with_complex_outputs_is_complex():
    f = njit(lambda x: np.exp(1j * x) * x[0])
    x = np.array([0.3, -0.5, 1.2])
    want = np.diag(1j * np.exp(1j * x) * x[0])
    want[:, 0] += np.exp(1j * x)
    jacobian = duals.jacfwd(f, chunk_size=LANES)
    for _ in range(4):   # the compiled driver of later calls keeps the complex block
        got = jacobian(x)
        assert got.dtype == np.complex128
        close(got, want)


def test_hessian_of_a_complex_output_is_complex():
    f = njit(lambda x: np.exp(1j * x[0] * x[1]))
    a, b = x = np.array([0.3, 0.7])
    e = np.exp(1j * a * b)
    cross = 1j * e - a * b * e
    close(duals.hessian(f)(x), np.array([[-(b * b) * e, cross], [cross, -(a * a) * e]]))


def test_hessian_of_many_inputs_with_complex_intermediates_runs_forward_over_forward():
    f = njit(lambda x: abs(np.sum(np.exp(1j * x) * x)) ** 2)
    x = np.linspace(0.1, 1.0, 9)   # the tape holds real numbers: forward over forward at any size
    h = 1e-4
    f0 = f.py_func
    e = np.eye(x.size) * h
    want = np.array([[(f0(x + a + b) - f0(x + a - b) - f0(x - a + b) + f0(x - a - b)) / (4 * h * h)
                      for b in e] for a in e])
    close(duals.hessian(f, chunk_size=LANES)(x), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- what raises

def test_holomorphic_true_refuses_a_function_without_a_complex_derivative():
    f = njit(lambda z: z * np.conj(z) + z)
    with pytest.raises(ValueError, match="not complex-differentiable at this point"):
        duals.jacfwd(f, holomorphic=True)(np.array([0.3 + 0.4j, 1.0 + 0j]))


def test_complex_inputs_without_holomorphic_raise_as_in_jax():
    f = njit(lambda z: z * z)
    with pytest.raises(TypeError, match="holomorphic=True"):
        duals.jacfwd(f)(np.array([1j]))


@pytest.mark.parametrize("call, message", [
    (lambda: duals.jacfwd(njit(lambda x: x * x), holomorphic=True)(np.ones(2)), "needs complex inputs"),
    (lambda: duals.jacfwd(njit(lambda z: abs(z)), holomorphic=True)(1j), "needs complex outputs"),
    (lambda: duals.jvp(njit(lambda x: x * 2.0), (1.0,), (1j,)), "tangent 0 is complex"),
], ids=["real input", "real output", "complex tangent of a real primal"])
def test_complex_entry_errors(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("body, message", [
    (lambda z: math.sin(z), "math.sin takes real numbers"),
    (lambda z: z.real < z.imag or z < 1j, "not ordered"),
    (lambda z: np.sign(z), "np.sign of a complex dual"),
    (lambda z: np.linalg.solve(np.eye(2) + 0j, np.ones(2) * z)[0], "np.linalg.solve of complex dual"),
    (lambda z: (np.ones(2) * z).real[0], "np.real"),
], ids=["math", "order", "sign", "linalg", "array attribute"])
def test_unsupported_complex_code_raises_one_line_naming_it(body, message):
    with pytest.raises(TypeError, match=message) as info:
        duals.jvp(numba.njit(body), (0.3 + 0.4j,), (1.0,))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("transform", [duals.grad, duals.jacrev, duals.hessian],
                         ids=["grad", "jacrev", "hessian"])
def test_compiled_reverse_mode_and_hessian_refuse_complex_inputs(transform):
    f = njit(lambda z: abs(z) ** 2)   # never the derivative along the real axis alone
    with pytest.raises(TypeError, match="argument 0 is complex"):
        transform(f)(3 + 4j)


def test_compiled_reverse_mode_refuses_complex_intermediates_and_says_to_use_jacfwd():
    with pytest.raises(TypeError, match="jacfwd") as info:
        duals.jacrev(rlc_magnitude)(np.array([50.0, 1e-3, 1e-6]), np.array([1e3]))
    assert "\n" not in str(info.value)


@njit
def summed_power(p, w):
    total = 0.0
    for k in range(w.size):
        total += abs(p[k % p.size] + 1j * w[k] * p[(k + 1) % p.size]) ** 2
    return total


def test_jacobian_auto_of_many_inputs_with_complex_intermediates_falls_back_to_forward_lanes():
    p, w = np.linspace(1.0, 2.0, 300), np.linspace(0.1, 1.0, 300)   # 300 inputs: auto tries the tape
    jac = duals.jacobian(summed_power)
    for _ in range(2):
        np.testing.assert_array_equal(jac(p, w), duals.jacfwd(summed_power)(p, w))
    assert jac.mode_for(p, w) == "fwd"      # the mode it took, once the tape refused the code
    with pytest.raises(TypeError, match="compiled forward mode only"):
        duals.jacobian(summed_power, mode="rev")(p, w)


def test_float_of_a_complex_dual_says_it_would_drop_the_imaginary_part():
    doubled = numba.njit(lambda z: float(z * 2.0))
    with pytest.raises(TypeError, match=r"float\(\) of a complex dual number would drop its imaginary part"):
        duals.jvp(doubled, (1.0 + 2.0j,), (1.0 + 0.0j,))


@njit
def field_energy(x):
    z = complex(x[0], x[1])
    return abs(cmath.sin(z)) ** 2 + (cmath.exp(1j * x[2] * z)).real, z.imag


def test_reverse_entry_points_of_complex_code_answer_by_forward_mode():
    """Compiled reverse mode refuses complex intermediates; hessian answered by forward lanes but
    grad, value_and_grad, hvp and value_grad_hessian raised (a user trial)."""
    energy = njit(lambda x: field_energy(x)[0])
    x, v = np.array([0.3, -0.7, 1.2]), np.array([1.0, 2.0, 3.0])
    expected = np.array([central(lambda h: energy.py_func(x + h * e), 0.0, 1.0) for e in np.eye(3)])
    close(duals.grad(energy)(x), expected, rtol=1e-7, atol=1e-8)
    (value, imag), gradient = duals.value_and_grad(field_energy, has_aux=True)(x)
    assert value == energy(x) and imag == -0.7
    close(gradient, expected, rtol=1e-7, atol=1e-8)
    H = duals.hessian(energy)(x)
    close(duals.hvp(energy, x, v), H @ v, rtol=1e-12, atol=1e-12)
    value, gradient, hessian = duals.value_grad_hessian(energy)(x)
    close(gradient, expected, rtol=1e-7, atol=1e-8)
    close(hessian, H, rtol=1e-12, atol=1e-12)


@njit
def shifted_magnitude(x):         # a complex buffer the code makes, a real value stored into it
    c = np.empty(2, dtype=np.complex128)
    c[0] = x
    c[1] = 2.0j
    return abs(c[0] + c[1]) ** 2  # x² + 4


@njit
def shifted_magnitude_of_an_array(x):
    c = np.array([x, 2.0j])
    return abs(c[0] + c[1]) ** 2


def test_a_complex_buffer_the_code_makes_answers_reverse_entry_points_by_forward_mode():
    # the buffer became an array of complex adjoints and the store was "no implementation of
    # setitem" (a user trial, the cubic of an equation of state solved by hand)
    for f in (shifted_magnitude, shifted_magnitude_of_an_array):
        assert duals.grad(f)(3.0) == 6.0 == duals.value_and_grad(f)(3.0)[1]
        for name, call in (("vjp", lambda: duals.vjp(f, 3.0)), ("jacrev", lambda: duals.jacrev(f)(3.0))):
            with pytest.raises(TypeError, match=f"^{name}: complex numbers are differentiated by "
                                                f"compiled forward mode only.*use duals.jacfwd"):
                call()


@njit
def frequency_response(p, w):   # |x₂(ω)|² of a damped two-mass chain: Z x = f, Z = K - ω² M + iωC
    K = np.array([[p[0] + p[1], -p[1]], [-p[1], p[1]]])
    Z = K - w * w * np.eye(2) + 1j * w * p[2] * np.eye(2)
    x = np.linalg.solve(Z, np.array([1.0 + 0j, 0.0 + 0j]))
    return abs(x[1]) ** 2


def test_a_refusal_of_the_forward_fallback_names_the_transformation_called():
    # grad answers complex intermediates by forward lanes; their refusal said "jacfwd: ..."
    for name, call in (("grad", lambda: duals.grad(frequency_response)(np.array([2.0, 1.0, 0.1]), 0.7)),
                       ("hvp", lambda: duals.hvp(frequency_response, np.array([2.0, 1.0, 0.1]),
                                                 np.ones(3), 0.7))):
        with pytest.raises(TypeError, match=rf"^{name}: np\.linalg\.solve of complex dual numbers"):
            call()


@njit
def injected_power(angles, admittance):
    voltage = np.exp(1j * angles)
    return np.real(voltage * np.conj(admittance @ voltage))


@njit
def injected_power_by_dot(angles, admittance):
    voltage = np.exp(1j * angles)
    return np.real(voltage * np.conj(np.dot(admittance, voltage)))


@njit
def thin_film_reflectance(d, wavelength):   # transfer matrices multiplied as optics code does
    M = np.eye(2, dtype=np.complex128)
    for j in range(d.size):
        delta = 2 * np.pi * 1.46 * d[j] / wavelength
        layer = np.empty((2, 2), dtype=np.complex128)
        layer[0, 0], layer[0, 1] = np.cos(delta), 1j * np.sin(delta) / 1.46
        layer[1, 0], layer[1, 1] = 1j * 1.46 * np.sin(delta), np.cos(delta)
        M = M @ layer
    return np.abs((M[0, 0] - M[1, 1]) / (M[0, 0] + M[1, 1])) ** 2


@njit
def phased_correlation(p, a0, v0):
    return np.abs(np.correlate(a0 * p[0], v0 * np.exp(1j * p[1]))) ** 2


def test_correlate_of_complex_duals_is_refused_under_its_own_name():
    # it named np.convolve, which np.correlate calls (a spectroscopy trial)
    a0, v0 = np.array([1 + 1j, 2 - 1j, 0.5 + 0j, -1 + 2j]), np.array([1 + 0.5j, -0.3 + 1j])
    with pytest.raises(TypeError, match=r"^jacfwd: np\.correlate of complex dual numbers is not supported"):
        duals.jacfwd(phased_correlation)(np.array([1.0, 0.3]), a0, v0)


def test_a_matrix_product_of_complex_duals_is_refused_by_name_for_at_as_for_dot():
    # both operands complex duals: Numba's own @ took the call and failed in np.dot(a, b, out)
    # with "no implementation of dot(...)" (an optics trial)
    with pytest.raises(TypeError, match=r"^jacfwd: A @ B of complex dual numbers is not supported in compiled code"):
        duals.jacfwd(thin_film_reflectance)(np.array([95.0, 60.0]), 550.0)
    # (Numba's own @ took the call, its dtypes differing, and failed deep inside: a user trial)
    admittance = np.array([[2 - 5j, -1 + 3j], [-1 + 3j, 1 - 4j]])
    for f, name in ((injected_power, r"A @ B"), (injected_power_by_dot, r"np\.dot")):
        with pytest.raises(TypeError, match=rf"^jacfwd: {name} of complex dual numbers is not supported "
                                            rf"in compiled code.*NumPy path"):
            duals.jacfwd(f)(np.array([0.0, -0.1]), admittance)


def test_grad_holomorphic_of_a_dispatcher_points_to_compiled_jacfwd_holomorphic():
    """It advised differentiating the Python function, where jacfwd(holomorphic=True) of the very
    dispatcher works (a user trial's Helmholtz response)."""
    response = numba.njit(lambda k: cmath.exp(1j * k * 0.7) / (k * k + 1.0))
    k = 12.0 + 0.3j
    exact = cmath.exp(1j * k * 0.7) * (0.7j / (k * k + 1) - 2 * k / (k * k + 1) ** 2)
    assert abs(duals.jacfwd(response, holomorphic=True)(k) - exact) < 1e-12 * abs(exact)
    with pytest.raises(NotImplementedError, match=r"duals\.jacfwd\(f, holomorphic=True\) of the dispatcher"):
        duals.grad(response, holomorphic=True)(k)


@njit
def warburg_real_part(tau, w):
    """A finite-length Warburg element's real part, as an EIS fit writes it."""
    s = 1j * w
    return (30.0 / cmath.sqrt(s) * cmath.tanh(cmath.sqrt(s * tau))).real


def test_cmath_values_are_the_plain_calls_where_numpys_overflow_or_take_another_branch():
    # (EIS trial) the rules computed cmath.tanh's value with Numba's np.tanh, NaN past Re z ≈ 355
    # (sinh / cosh): every Jacobian entry of a diffusion element was NaN from ~500 Hz on; and
    # cmath.acosh's with np.arccosh, which takes the other branch below the cut
    tau = 100.0
    for w in (2 * np.pi * 1e-3, 2 * np.pi * 1e2, 2 * np.pi * 1e5):
        value, slope = duals.jvp(warburg_real_part, (tau, w), (1.0, 0.0))
        decay = cmath.exp(-2.0 * cmath.sqrt(1j * w * tau))
        sech_squared = 4.0 * decay / (1.0 + decay) ** 2
        assert value == warburg_real_part(tau, w)   # d/dτ = 15 sech²(u) / √τ (rules: 1 − tanh²)
        close(slope, (15.0 * sech_squared / math.sqrt(tau)).real, rtol=1e-10, atol=1e-15)
    tanh_of = njit(lambda x: cmath.tanh(complex(x, 1.0)))
    assert duals.jvp(tanh_of, (400.0,), (1.0,)) == (tanh_of(400.0), 0j)
    acosh = njit(lambda z: cmath.acosh(z))
    for z in (complex(-2.0, -0.0), complex(1.0, 1e-200), complex(0.3, -0.7)):
        value, slope = duals.jvp(acosh, (z,), (1 + 0j,))
        assert value == acosh(z) == cmath.acosh(z)
        assert slope == 1 / (cmath.sqrt(z - 1.0) * cmath.sqrt(z - -1.0))   # (- -1.0 keeps -0.0: the side)


def test_a_complex_power_on_its_branch_cut_has_the_derivative_of_the_side_its_value_takes():
    # (Heston trial) z ** 2.5 at -2 - 0j is the lower side's value, and its derivative was the upper
    # side's (-7.07j for +7.07j; for z ** (0.5 - 1.2j) 1800 times too large): the rule's guard
    # x + (x == 0) turned -0.0j into +0.0j
    power = numba.njit(lambda z, p: z ** p)
    for exponent in (2.5, 0.5 - 1.2j):
        for z in (complex(-2.0, -0.0), complex(-2.0, 0.0)):
            value, slope = duals.jvp(power, (z, exponent), (1 + 0j, 0 * exponent))
            assert value == power(z, exponent)
            expected = (power(complex(-2.0 + 1e-6, z.imag), exponent)
                        - power(complex(-2.0 - 1e-6, z.imag), exponent)) / 2e-6
            close(slope, expected, rtol=1e-7)


def test_a_complex_partial_that_divides_by_zero_is_inf_or_nan_not_an_exception():
    # (EIS trial) sqrt'(0) = 0.5 / 0j raised ZeroDivisionError from Numba's complex division: the
    # NumPy path gives NaN (inf + nan j), as real compiled code gives math.sqrt'(0) = inf
    root = njit(lambda tau, w: cmath.sqrt(1j * w * tau).real)
    log_modulus = njit(lambda x: cmath.log(complex(x, 0.0)).real)
    assert np.isnan(duals.jacfwd(root)(0.0, 10.0))
    value, slope = duals.jvp(log_modulus, (0.0,), (1.0,))
    assert value == -np.inf and np.isnan(slope)
    with pytest.raises(ZeroDivisionError):   # the user's own division by zero still raises as written
        duals.jvp(njit(lambda z: 1.0 / z), (0j,), (1 + 0j,))


def test_interp_of_complex_data_is_refused_naming_its_parts_which_give_the_derivative():
    # (EM trial: measured S-parameters) it said an array operation got a single dual number
    refused = numba.njit(lambda x, xp, fp: abs(np.interp(x, xp, fp)) ** 2)
    by_parts = numba.njit(lambda x, xp, fp: abs(np.interp(x, xp, fp.real) + 1j * np.interp(x, xp, fp.imag)) ** 2)
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([1.0 + 2.0j, 3.0 - 1.0j, 0.0])
    with pytest.raises(TypeError, match=r"np.interp of complex fp .*np.interp\(x, xp, fp.real\) \+ 1j"):
        duals.grad(refused)(0.4, xp, fp)
    close(duals.grad(by_parts)(0.4, xp, fp), 2.4, rtol=1e-14)   # d|1 + 2j + (2 - 3j) x|^2 / dx at 0.4
    assert by_parts(0.4, xp, fp) == refused(0.4, xp, fp)


@numba.njit(cache=True)
def impedance_fill(p):
    A = np.empty((3, 3), dtype=np.complex128)
    for i in range(3):
        for j in range(3):
            A[i, j] = cmath.exp(-1j * p[1] * abs(i - j) * p[0]) + (3.0 if i == j else 0.0)
    return A


def test_a_compiled_fill_solved_in_python_names_the_primitive_route_from_both_sides():
    # (EM trial) the Python caller was told to compile itself, and compiled, to go back to Python
    b = np.array([1.0, 0.0, 0.0], dtype=complex)
    where = r"primitive whose rules call duals.jacfwd of it \(docs/custom_rules\.md, 'A compiled piece inside"
    with pytest.raises(TypeError, match=where):
        duals.grad(lambda p: np.real(np.linalg.solve(impedance_fill(p), b)[0]))(np.array([0.5, 6.0]))
    with pytest.raises(TypeError, match=where):
        duals.grad(numba.njit(lambda p: np.linalg.solve(impedance_fill(p), b)[0].real))(np.array([0.5, 6.0]))
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "custom_rules.md")) as f:
        assert "### A compiled piece inside Python code" in f.read()
