"""Every primitive, over the table of shapes and dtypes: forward against finite differences,
reverse against forward, the adjoint identity, and second order in every mode pairing."""
import numpy as np
import pytest

import duals
from duals.core import REGISTRY
from duals.ops import elementwise
from duals.testing import assert_close, check_grads, numerical_jacobian
from op_cases import CASES, EXEMPT

DTYPES = [np.float64, np.float32]
PARAMS = [pytest.param(c, i, id=f"{c.id}-arg{i}") for c in CASES for i in range(len(c.shapes))]


def test_every_registered_primitive_is_covered_by_a_case():
    covered = {p for c in CASES for p in c.prims} | set(EXEMPT)
    missing = sorted(set(REGISTRY) - covered)
    assert not missing, f"primitives with no test case in tests/op_cases*.py: {missing}"


def test_every_primitive_has_jvp_and_vjp_rules():
    lacking = [name for name, p in REGISTRY.items()
               if not (p.jvps or p.jvp_all) or not (p.vjps or p.vjp_all)]
    assert not lacking, f"primitives without JVP or VJP rules: {lacking}"


def test_fixed_arity_primitives_have_a_vjp_rule_wherever_they_have_a_jvp_rule():
    for name, p in REGISTRY.items():
        if p.jvps and p.vjp_all is None:
            assert set(p.jvps) == set(p.vjps), name


# (case, argnum, dtype): float32 only for the cases that declare it (the others are float64 only)
PARAMS_BY_DTYPE = [pytest.param(c, i, d, id=f"{c.id}-arg{i}-{'f64' if d is np.float64 else 'f32'}")
                   for c in CASES for i in range(len(c.shapes)) for d in DTYPES
                   if d is np.float64 or c.float32]


@pytest.mark.parametrize("path", ["kernels", "rules"])
@pytest.mark.parametrize("case,argnum,dtype", PARAMS_BY_DTYPE)
def test_forward_mode_matches_finite_differences(case, argnum, dtype, path, monkeypatch):
    # element-wise operations run their fused kernels from FUSED_FROM entries, the rules below
    monkeypatch.setattr(elementwise, "FUSED_FROM", 0 if path == "kernels" else 1 << 62)
    args = case.inputs(dtype)
    expected = numerical_jacobian(case.fn, case.inputs(np.float64), argnum)
    got = duals.jacfwd(case.fn, argnums=argnum)(*args)
    assert np.result_type(got) == dtype or np.ndim(got) == 0
    tol = 1e-6 if dtype is np.float64 else 2e-3
    assert_close(got, expected, tol, tol, f"jacfwd of {case.name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("case,argnum", PARAMS)
def test_reverse_mode_equals_forward_mode(case, argnum, dtype):
    args = case.inputs(dtype)
    fwd = duals.jacfwd(case.fn, argnums=argnum)(*args)
    rev = duals.jacrev(case.fn, argnums=argnum)(*args)
    tol = 1e-12 if dtype is np.float64 else 1e-5
    assert_close(rev, fwd, tol, tol, f"jacrev vs jacfwd of {case.name}")


@pytest.mark.parametrize("case,argnum", PARAMS)
def test_adjoint_identity_between_jvp_and_vjp(case, argnum):
    args = case.inputs()
    rng = np.random.default_rng(0)
    v = rng.standard_normal(np.shape(args[argnum]))

    def f(x):
        return case.fn(*args[:argnum], x, *args[argnum + 1:])

    y, jv = duals.jvp(f, (args[argnum],), (v,))
    u = rng.standard_normal(np.shape(y))
    _, pullback = duals.vjp(f, args[argnum])
    (jtu,) = pullback(u)
    lhs = float(np.sum(u * jv))
    rhs = float(np.sum(jtu * v))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs)), (lhs, rhs)


@pytest.mark.parametrize("case,argnum", [p for p in PARAMS if p.values[0].smooth])
def test_second_order_derivatives_in_every_mode_pairing(case, argnum):
    args = case.inputs()
    check_grads(lambda x: case.fn(*args[:argnum], x, *args[argnum + 1:]), (args[argnum],), order=2)


@pytest.mark.parametrize("case,argnum", [p for p in PARAMS if p.values[0].smooth])
def test_hessian_equals_every_other_composition_and_is_symmetric(case, argnum):
    args = case.inputs()
    w = np.random.default_rng(1).standard_normal(np.shape(case.fn(*args)))

    def scalar(x):
        return duals.numpy.sum(case.fn(*args[:argnum], x, *args[argnum + 1:]) * w)

    x = args[argnum]
    H = duals.hessian(scalar)(x)
    n = x.size
    assert_close(np.reshape(H, (n, n)), np.reshape(H, (n, n)).T, 1e-10, 1e-10, "hessian symmetry")
    for name, other in [("jacrev(jacrev)", duals.jacrev(duals.jacrev(scalar))),
                        ("jacrev(jacfwd)", duals.jacrev(duals.jacfwd(scalar))),
                        ("jacfwd(jacfwd)", duals.jacfwd(duals.jacfwd(scalar)))]:
        assert_close(other(x), H, 1e-10, 1e-10, f"{name} vs hessian of {case.name}")
