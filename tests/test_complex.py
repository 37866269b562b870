"""Complex numbers on the NumPy path: the holomorphic part of the derivative table in every mode,
the convention (JAX's) tested against both peers' numbers, holomorphic=True and its refusals,
and the complex parts (real, imag, conj, abs, angle).

The table's cases are generated from ``duals.derivatives.HOLOMORPHIC``: a new holomorphic entry is
tested here at once. Complex inputs are drawn with the real part in the entry's domain and a
small imaginary part, away from every branch cut of NumPy's principal branches.
"""
import zlib

import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.ops.elementwise import PRIMITIVES

SHAPE = (4,)
H = 1e-6


def sample(name, shape=SHAPE, seed=""):
    """Complex inputs for table entry ``name``: real part from its domain, imaginary part small."""
    entry = derivatives.TABLE[name]
    rng = np.random.default_rng(zlib.crc32((name + seed).encode()))
    lo, hi = entry.domain
    x = rng.uniform(lo, hi, size=shape)
    if entry.away_from_zero:
        x = np.sign(rng.uniform(-1, 1, size=shape)) * rng.uniform(0.3, hi, size=shape)
    y = rng.uniform(-0.4, 0.4, size=shape)
    return x + 1j * y


def central(f, z, direction, h=H):
    """(f(z + h d) - f(z - h d)) / 2h: the derivative along the real direction ``d`` (1 or 1j)."""
    return (f(z + h * direction) - f(z - h * direction)) / (2 * h)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b)))))


def adjoint_gap(f, args, argnum, rng):
    """|Re<c, J t> - Re<vjp(c), t>| for random complex c and t (JAX's convention: the VJP is the
    transpose of the JVP's real-linear map under the pairing Re(c t))."""
    z = args[argnum]
    t = rng.standard_normal(np.shape(z))
    if np.iscomplexobj(z):
        t = t + 1j * rng.standard_normal(np.shape(z))
    tangents = tuple(t if i == argnum else None for i in range(len(args)))
    out, jt = duals.jvp(f, tuple(args), tangents)
    c = rng.standard_normal(np.shape(out)) + 1j * rng.standard_normal(np.shape(out))
    pulled = duals.vjp(f, *args)[1](c)[argnum]
    return abs(np.sum(c * jt).real - np.sum(pulled * t).real), np.sum(np.abs(c * jt))


UNARY = sorted(n for n in derivatives.HOLOMORPHIC if derivatives.TABLE[n].arity == 1)
BINARY = sorted(n for n in derivatives.HOLOMORPHIC if derivatives.TABLE[n].arity == 2)


def test_the_table_has_holomorphic_entries_of_both_arities():
    assert len(UNARY) >= 20 and {"add", "mul", "div", "pow"} <= set(BINARY)


@pytest.mark.parametrize("name", UNARY)
def test_unary_forward_matches_finite_differences_in_both_real_directions(name):
    op = PRIMITIVES[name]
    z = sample(name)
    for direction in (1.0, 1j):
        out, t = duals.jvp(op, (z,), (np.full(SHAPE, direction),))
        close(out, op(z), 1e-15)
        close(t, central(op, z, direction))


# points on the axes, beyond ±1 and between, with either sign of the zero part: the branch cuts of
# NumPy's principal branches (sqrt, log: negative reals; arcsin, arccos, arctanh: real |x| > 1;
# arccosh: real x < 1; arcsinh, arctan: imaginary |y| > 1) and the points beside them
ON_THE_AXES = np.array([complex(r, z) for r in (1.3, -1.3, 0.6, -0.6) for z in (0.0, -0.0)]
                       + [complex(z, i) for i in (1.3, -1.3, 0.6) for z in (0.0, -0.0)])


def along_the_axis(op, step):
    """``op`` at each point of ON_THE_AXES moved by ``step`` along its own axis, the signed zero of
    its other part kept exactly (``z + h`` would turn ``-0.0j`` into ``+0.0j``)."""
    return op(np.array([complex(z.real + step, z.imag) if z.real != 0 else complex(z.real, z.imag + step)
                        for z in ON_THE_AXES]))


@pytest.mark.parametrize("name", UNARY)
def test_unary_derivative_on_a_branch_cut_is_that_of_the_side_numpy_takes(name):
    """On a cut the value is one side's limit; the derivative must be that side's, in forward and
    reverse mode (``arcsin(1.3 + 0j)``: one side's derivative is ``+1.2j``, the other's ``-1.2j``)."""
    op = PRIMITIVES[name]
    direction = np.where(ON_THE_AXES.real != 0, 1.0 + 0j, 1j)
    with np.errstate(all="ignore"):
        expected = (along_the_axis(op, 1e-7) - along_the_axis(op, -1e-7)) / 2e-7    # along direction
        forward = duals.jvp(op, (ON_THE_AXES,), (direction,))[1]
        reverse = duals.vjp(op, ON_THE_AXES)[1](np.ones_like(ON_THE_AXES))[0] * direction
    defined = np.isfinite(expected) & (np.abs(expected) < 1e3)     # not at a pole
    assert defined.sum() >= 8
    for got in (forward, reverse):
        close(got[defined], expected[defined], 1e-5)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", [2.5, 0.5 - 1.2j])
def test_binary_derivative_on_a_branch_cut_is_that_of_the_side_numpy_takes(name, other):
    """The first argument on a cut (a non-integer power of ``-1.3 - 0j`` is the lower side's), the
    second a constant: the derivative in the first must be that side's, in forward and reverse mode
    (``pow``'s took the other side's: ``-7.07j`` for ``+7.07j`` at ``(-2 - 0j) ** 2.5``)."""
    op = PRIMITIVES[name]
    y = np.full(ON_THE_AXES.shape, other)
    direction = np.where(ON_THE_AXES.real != 0, 1.0 + 0j, 1j)
    with np.errstate(all="ignore"):
        expected = (along_the_axis(lambda z: op(z, y), 1e-7) - along_the_axis(lambda z: op(z, y), -1e-7)) / 2e-7
        forward = duals.jvp(lambda z: op(z, y), (ON_THE_AXES,), (direction,))[1]
        reverse = duals.vjp(lambda z: op(z, y), ON_THE_AXES)[1](np.ones_like(ON_THE_AXES))[0] * direction
    for got in (forward, reverse):
        close(got, expected, 1e-5)


@pytest.mark.parametrize("name", UNARY)
def test_unary_reverse_is_the_transpose_of_forward(name):
    gap, scale = adjoint_gap(PRIMITIVES[name], [sample(name)], 0, np.random.default_rng(1))
    assert gap <= 1e-12 * scale


@pytest.mark.parametrize("name", UNARY)
def test_unary_holomorphic_jacobians_are_the_complex_derivative(name):
    op = PRIMITIVES[name]
    z = sample(name)
    derivative = central(op, z, 1.0)
    close(np.diag(duals.jacfwd(op, holomorphic=True)(z)), derivative)
    close(np.diag(duals.jacrev(op, holomorphic=True)(z)), derivative)
    close(duals.grad(lambda w: op(w), holomorphic=True)(z[0]), derivative[0])


@pytest.mark.parametrize("name", UNARY)
def test_unary_second_derivative_forward_over_reverse(name):
    op = PRIMITIVES[name]
    z = sample(name)
    first = lambda w: duals.grad(op, holomorphic=True)(w)  # noqa: E731
    expected = central(np.vectorize(first), z, 1.0)
    got = np.diag(duals.hessian(lambda w: dnp.sum(op(w)), holomorphic=True)(z))
    close(got, expected, 1e-5)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("kinds", ["complex-complex", "real-complex", "complex-real"])
def test_binary_forward_and_reverse_in_both_arguments(name, kinds):
    op = PRIMITIVES[name]
    x, y = sample(name, seed="x"), sample(name, seed="y")
    if kinds == "real-complex":
        x = x.real
    if kinds == "complex-real":
        y = y.real
    rng = np.random.default_rng(2)
    for argnum, a in enumerate((x, y)):
        directions = (1.0, 1j) if np.iscomplexobj(a) else (1.0,)
        for d in directions:
            t = np.full(SHAPE, d)
            got = duals.jvp(op, (x, y), (t, None) if argnum == 0 else (None, t))[1]
            shifted = (lambda s: op(s, y)) if argnum == 0 else (lambda s: op(x, s))
            close(got, central(shifted, a, d))
        gap, scale = adjoint_gap(op, [x, y], argnum, rng)
        assert gap <= 1e-12 * scale
        # a real argument's cotangent is real: the real part of what flows back
        pulled = duals.vjp(op, x, y)[1](np.ones(SHAPE, dtype=complex))[argnum]
        assert np.iscomplexobj(pulled) == np.iscomplexobj(a)


@pytest.mark.parametrize("name", BINARY)
def test_binary_second_derivative_forward_over_reverse(name):
    op = PRIMITIVES[name]
    z, w = sample(name, seed="x"), sample(name, seed="y")
    f = lambda z: dnp.sum(op(z, w) + op(w, z))  # noqa: E731
    first = duals.grad(f, holomorphic=True)
    expected = central(first, z, np.ones(SHAPE))   # the Hessian is diagonal: its row sums
    got = np.sum(duals.hessian(f, holomorphic=True)(z), axis=1)
    close(got, expected, 1e-5)


# ---------------------------------------------------------------- the convention

Z = 3 + 4j


def test_grad_of_squared_modulus_follows_jax():
    # f(x + iy) = x² + y²: JAX's gradient is ∂f/∂x − i ∂f/∂y = 2x − 2iy
    expected = 2 * Z.real - 1j * (2 * Z.imag)
    assert duals.grad(lambda z: abs(z) ** 2)(Z) == pytest.approx(expected)
    assert duals.grad(lambda z: (z * np.conj(z)).real)(Z) == pytest.approx(expected)
    assert expected == 6 - 8j


def test_pytorch_gradient_is_the_conjugate_of_ours():
    # PyTorch's .grad is the conjugate Wirtinger form ∂f/∂x + i ∂f/∂y (its documented rule),
    # so for a real f it is conj of ours: 6 + 8j at 3 + 4j
    torch_number = 2 * Z.real + 1j * (2 * Z.imag)
    assert np.conj(duals.grad(lambda z: abs(z) ** 2)(Z)) == pytest.approx(torch_number)
    x = duals.Var(Z)
    (abs(x) ** 2).backward()
    assert np.conj(x.grad) == pytest.approx(torch_number)


def test_gradient_is_the_steepest_ascent_direction_conjugated():
    f = lambda z: np.sum(np.abs(np.sin(z)) ** 2 + np.real(z * np.exp(1j * z)))  # noqa: E731
    z = sample("sin")
    g = duals.grad(f)(z)
    for k in range(SHAPE[0]):
        e = np.zeros(SHAPE)
        e[k] = 1.0
        dx = (f(z + H * e) - f(z - H * e)) / (2 * H)
        dy = (f(z + 1j * H * e) - f(z - 1j * H * e)) / (2 * H)
        assert g[k] == pytest.approx(dx - 1j * dy, rel=1e-6, abs=1e-8)


def test_real_input_gets_a_real_gradient_through_complex_intermediates():
    f = lambda x: np.real(np.exp(1j * x)) + np.imag(x * (1 + 2j))  # noqa: E731
    g = duals.grad(f)(0.7)
    assert isinstance(g, float) and g == pytest.approx(-np.sin(0.7) + 2.0)


def test_complex_input_keeps_a_complex_gradient_when_only_its_real_part_is_used():
    g = duals.grad(lambda z: np.sum(np.real(z) ** 2))(np.array([1 + 1j, 2 - 1j]))
    assert g.dtype == complex and np.allclose(g, [2, 4])


def test_a_real_function_of_complex_inputs_second_order_by_hvp():
    f = lambda z: np.sum(np.abs(np.exp(z) + z ** 3) ** 2)  # noqa: E731
    z, v = sample("exp", seed="h"), sample("exp", seed="v")
    grad = duals.grad(f)
    close(duals.hvp(f, z, v), central(grad, z, v, 1e-5), 1e-6)


def test_hessian_of_a_real_function_of_complex_inputs_says_use_hvp():
    with pytest.raises(TypeError, match="holomorphic=True"):
        duals.hessian(lambda z: np.sum(np.abs(z) ** 2))(np.array([1j, 2.0 + 0j]))


def test_jacrev_of_a_real_output_of_complex_inputs_gives_gradient_rows():
    f = lambda z: np.abs(z) ** 2  # noqa: E731
    z = np.array([3 + 4j, 1 - 2j])
    np.testing.assert_allclose(duals.jacrev(f)(z), np.diag(2 * np.conj(z)))


def test_jacfwd_of_complex_outputs_of_real_inputs():
    J = duals.jacfwd(lambda x: np.exp(1j * x))(np.array([0.3, 0.5]))
    np.testing.assert_allclose(J, np.diag(1j * np.exp(1j * np.array([0.3, 0.5]))))


def test_vjp_projects_a_complex_cotangent_of_a_real_output():
    y, pullback = duals.vjp(lambda z: np.abs(z), Z)
    assert pullback(1.0 + 5.0j)[0] == pytest.approx(np.conj(Z) / abs(Z))


# ---------------------------------------------------------------- the parts

@pytest.mark.parametrize("f", [np.real, np.imag, np.conj, np.abs, np.angle,
                               lambda z: z.real, lambda z: z.imag, lambda z: z.conj()],
                         ids=["real", "imag", "conj", "abs", "angle", ".real", ".imag", ".conj"])
def test_parts_forward_and_reverse(f):
    z = np.array([3 + 4j, -1 + 0.5j, 0.2 - 2j])
    for d in (1.0, 1j):
        close(duals.jvp(f, (z,), (np.full(3, d),))[1], central(f, z, d))
    gap, scale = adjoint_gap(f, [z], 0, np.random.default_rng(3))
    assert gap <= 1e-12 * scale


def test_abs_at_complex_zero_has_derivative_zero():
    assert duals.grad(lambda z: np.abs(z))(0j) == 0
    assert duals.jvp(np.abs, (0j,), (1 + 1j,))[1] == 0


def test_astype_complex_of_a_traced_real_value():
    g = duals.grad(lambda x: np.real(x.astype(complex) * 1j * 1j))(2.0)
    assert g == pytest.approx(-1.0)


# ---------------------------------------------------------------- what raises

def test_grad_of_a_complex_output_needs_holomorphic():
    with pytest.raises(TypeError, match="real scalar output.*holomorphic=True"):
        duals.grad(np.sin)(Z)


def test_jacfwd_of_complex_inputs_needs_holomorphic():
    with pytest.raises(TypeError, match="jacfwd: input 0 is complex.*holomorphic=True"):
        duals.jacfwd(np.sin)(np.array([Z]))


def test_jacrev_of_complex_outputs_names_jacfwd_for_real_inputs_and_holomorphic_for_complex_ones():
    with pytest.raises(TypeError, match=r"jacrev: output 0 is complex\. Of real inputs, duals\.jacfwd .*"
                                        r"holomorphic=True"):
        duals.jacrev(lambda x: x * 1j)(np.array([1.0]))
    # (what it names works: an MRI trial followed holomorphic=True for real inputs, refused twice)
    np.testing.assert_array_equal(duals.jacfwd(lambda x: x * 1j)(np.array([1.0])), [[1j]])


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev])
def test_holomorphic_needs_complex_inputs(transform):
    with pytest.raises(TypeError, match="holomorphic=True.* needs complex inputs"):
        transform(np.sin, holomorphic=True)(np.array(1.0))


@pytest.mark.parametrize("name,f", [("abs", np.abs), ("real", np.real), ("imag", np.imag),
                                    ("conj", np.conj), ("imag", np.angle)])
@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd, duals.jacrev])
def test_holomorphic_refuses_a_non_holomorphic_function_naming_the_primitive(name, f, transform):
    with pytest.raises(TypeError, match=f"applies {name}, which is not holomorphic"):
        transform(lambda z: f(z) * z, holomorphic=True)(Z)


@pytest.mark.parametrize("f", [np.sign, np.maximum.reduce, lambda z: np.maximum(z, 1.0),
                               lambda z: dnp.special.erf(z)], ids=["sign", "max", "maximum", "erf"])
def test_real_only_functions_refuse_complex_values(f):
    with pytest.raises(TypeError, match="no complex derivative|real numbers only"):
        duals.grad(lambda z: np.real(np.sum(f(z))))(np.array([Z, 1j]))


def test_var_backward_needs_a_real_output():
    x = duals.Var(Z)
    with pytest.raises(TypeError, match="real scalar output"):
        (x * x).backward()
    (x * x).backward(gradient=np.array(1.0 + 0j))
    assert x.grad == pytest.approx(2 * Z)


def test_jvp_of_a_real_primal_refuses_a_complex_tangent():
    with pytest.raises(TypeError, match="tangent 0 is complex but its value is real"):
        duals.jvp(np.sin, (1.0,), (1j,))


# ---------------------------------------------------------------- checking complex code

def test_check_grads_checks_complex_code_as_a_real_map():
    from duals.testing import check_grads
    assert check_grads(lambda z: np.exp(z) * np.conj(z), (sample("exp"),), order=2)
    assert check_grads(lambda x, z: np.abs(x * z) ** 2, (np.array([0.5, 2.0, 1.0, 3.0]), sample("mul")), order=2)


def test_check_grads_catches_a_wrong_complex_rule():
    from duals.extend import primitive
    from duals.testing import GradcheckError, check_grads

    wrong_conj = primitive("wrong_conj_test", np.conj)
    wrong_conj.def_jvp(0, lambda t, out, z: t)        # the derivative of conj is conj(t), not t
    wrong_conj.def_vjp(0, lambda g, out, z: g)
    with pytest.raises(GradcheckError):
        check_grads(wrong_conj, (np.array([1 + 1j]),), order=1)


def test_iscomplexobj_reads_the_value_of_a_traced_argument():
    assert duals.grad(lambda x: np.real(x * 1j * 1j) if np.iscomplexobj(x) else -x)(1 + 0j) == -1


@pytest.mark.parametrize("transform", [duals.jacfwd, duals.jacrev])
def test_sparse_jacobians_refuse_complex_inputs(transform):
    with pytest.raises(TypeError, match="sparsity=...\\) takes real inputs"):
        transform(np.sin, sparsity="auto")(np.array([Z, 1j]))


def test_sparse_jacrev_refuses_complex_outputs():
    with pytest.raises(TypeError, match="returns complex values"):
        duals.jacrev(lambda x: np.exp(1j * x), sparsity="auto")(np.ones(2))


def test_dual_numbers_with_complex_parts():
    d = duals.Dual(1 + 2j, 1j)
    assert (d * d).tangent == pytest.approx(2 * (1 + 2j) * 1j)
    assert np.exp(d).tangent == pytest.approx(np.exp(1 + 2j) * 1j)
    with pytest.raises(TypeError, match="complex but its value is real"):
        duals.Dual(1.0, 1j)


def test_scalar_results_are_python_numbers():
    value, g = duals.value_and_grad(lambda z: z * z, holomorphic=True)(1 + 1j)
    assert type(value) is complex and type(g) is complex and g == 2 + 2j
    assert type(duals.grad(lambda x: np.real(np.exp(1j * x)))(0.5)) is float


@pytest.mark.parametrize("n", [2, 5000], ids=["small", "fused-size"])
def test_power_of_a_negative_real_base_to_a_complex_exponent(n):
    # the derivative in the exponent is out * log(x) on the complex plane: log(-2) = log 2 + iπ
    x = np.where(np.arange(n) % 2 == 0, -2.0, 3.0)
    y = np.resize(np.array([0.5 + 1j, 1.5 - 0.5j]), n)
    f = lambda y: x ** y  # noqa: E731
    expected = f(y) * np.log(x + 0j)
    close(duals.jvp(f, (y,), (np.ones(n) + 0j,))[1], expected, 1e-12)
    c = np.resize(np.array([1 - 2j, 0.5 + 1j]), n)
    close(duals.vjp(f, y)[1](c)[0], c * expected, 1e-12)


def test_jacobian_auto_takes_reverse_mode_for_complex_inputs_of_a_real_function():
    z = np.array([3 + 4j, 1 - 2j])
    jac = duals.jacobian(lambda z: np.abs(z) ** 2)
    assert jac.mode_for(z) == "rev"
    np.testing.assert_allclose(jac(z), np.diag(2 * np.conj(z)))
    assert duals.jacobian(np.sin, holomorphic=True).mode_for(z) == "fwd"


def test_holomorphic_detects_a_branch_on_the_real_part_but_not_a_comparison():
    with pytest.raises(TypeError, match="applies real"):
        duals.grad(lambda z: z if z.real > 0 else z ** 2, holomorphic=True)(Z)
    # documented: a comparison reads the value without a primitive; the branch taken is differentiated
    assert duals.grad(lambda z: z if z > 1 else z ** 2, holomorphic=True)(Z) == 1


def test_holomorphic_jacobians_in_chunks_and_by_workers_are_the_same():
    z = np.array([1 + 1j, 2 - 0.5j, 0.3j])
    f = lambda z: np.exp(z) * np.roll(z, 1)  # noqa: E731
    J = duals.jacfwd(f, holomorphic=True)(z)
    np.testing.assert_allclose(duals.jacfwd(f, holomorphic=True, chunk_size=2)(z), J)
    np.testing.assert_allclose(duals.jacrev(f, holomorphic=True, chunk_size=1)(z), J)
    np.testing.assert_allclose(duals.jacfwd(f, holomorphic=True, chunk_size=1, workers=map)(z), J)



def test_hessian_of_a_real_function_of_complex_inputs_names_itself_and_hvp():
    with pytest.raises(TypeError, match=r"^hessian: input 0 is complex.*use hvp\(f, z, v\)"):
        duals.hessian(lambda z: np.sum(np.abs(z) ** 2))(np.array([1 + 1j, 2.0]))


def test_stop_gradient_is_a_constant_for_the_holomorphic_check_in_every_mode():
    z = np.array([2.0 + 1.0j])
    scaled = lambda z: z * np.abs(duals.stop_gradient(z))  # noqa: E731
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(scaled, holomorphic=True)(z), [[abs(2 + 1j)]], rtol=1e-15)
    np.testing.assert_allclose(duals.hessian(lambda z: np.sum(z * scaled(z)), holomorphic=True)(z),
                               [[2 * abs(2 + 1j)]], rtol=1e-15)
    with pytest.raises(TypeError, match="applies abs, which is not holomorphic"):
        duals.jacrev(lambda z: z * np.abs(z), holomorphic=True)(z)


def test_a_custom_primitive_runs_under_holomorphic_only_when_declared_holomorphic():
    """|z|² as a custom primitive with correct rules has no complex derivative: holomorphic=True
    took it for holomorphic and returned 0.6 (forward) and 0.6 - 1j (reverse) at 0.3 + 0.5j."""
    from duals.extend import elementwise, primitive
    z = np.array([0.3 + 0.5j])
    squared_modulus = primitive("trial_squared_modulus", lambda w: (w * np.conj(w)).real)
    squared_modulus.def_jvp(0, lambda t, out, w: 2.0 * (np.conj(w) * t).real)
    squared_modulus.def_vjp(0, lambda g, out, w: 2.0 * g * w)
    for transform in (duals.jacfwd, duals.jacrev):
        with pytest.raises(TypeError, match="custom primitive trial_squared_modulus, which is not "
                                            "declared holomorphic.*holomorphic=True"):
            transform(squared_modulus, holomorphic=True)(z)
    close(duals.grad(lambda w: dnp.sum(squared_modulus(w)))(z), 2.0 * z)    # JAX's convention
    cube = elementwise("trial_cube", lambda w: w ** 3, lambda out, w: 3.0 * w ** 2, holomorphic=True)
    for transform in (duals.jacfwd, duals.jacrev):
        close(np.diag(transform(cube, holomorphic=True)(z)), 3.0 * z ** 2)


def test_interpolated_complex_data_has_the_complex_slope_in_the_query_point_and_the_grid():
    # (EM trial: measured S-parameters) the plain complex data was cast to float64: the value came from
    # NumPy but the derivative kept the real part of the slope (jvp 2 for 2 - 3j)
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([1.0 + 2.0j, 3.0 - 1.0j, 0.0 + 0.0j])
    at = lambda x: np.interp(x, xp, fp)   # noqa: E731
    assert duals.jvp(at, (0.4,), (1.0,)) == (at(0.4), 2.0 - 3.0j)
    for part in (np.real, np.imag, lambda z: np.abs(z) ** 2):
        close(duals.grad(lambda x: part(at(x)))(0.4), central(lambda x: part(at(x)), 0.4, 1.0), 1e-8)
        scaled = lambda s: part(np.interp(0.4, s * xp, fp))   # noqa: E731
        close(duals.jacrev(scaled)(1.0), central(scaled, 1.0, 1.0), 1e-8)
