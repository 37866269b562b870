"""A property-based fuzzer for the derivative rules: random compositions of primitives.

Each example draws one or two inputs of broadcastable shapes and a short program of
steps. An element-wise step first maps its operand smoothly into the op's domain (the
domains of ``tests/op_cases.py``), so every op is evaluated where it is smooth; other
steps reduce, reshape, index, concatenate or select, and two change a plain array in
place after an operation used it (the tape must keep what the operation saw). Each program is checked three ways:
``jacfwd == jacrev`` and both against finite differences (``duals.gradcheck``), and the
adjoint identity ``<u, J v> == <Jᵀ u, v>`` between ``jvp`` and ``vjp``.

CI runs a small derandomized budget; ``HYPOTHESIS_PROFILE=large`` runs many more examples.
"""
import os

import numpy as np
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import duals
import duals.numpy as dnp
from duals import derivatives
from duals.ops.elementwise import PRIMITIVES
from op_cases import BINARY_DOMAIN, UNARY_AWAY_FROM_ZERO, UNARY_DOMAIN

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("large", max_examples=2000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# element-wise ops whose derivative policy is not a finite difference of the value
UNARY = sorted(n for n in derivatives.UNARY if n not in derivatives.DISCONTINUOUS)
BINARY = sorted(n for n in derivatives.BINARY if n not in derivatives.DISCONTINUOUS)
KINKED = {"maximum", "minimum"}     # smooth away from ties; ties are excluded with assume()
SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3)]


def squash(x, domain):
    """x mapped smoothly and monotonically into the open interval ``domain``."""
    lo, hi = domain
    return lo + (hi - lo) * dnp.special.expit(x)


def _unary(name, sign):
    def step(x):
        lo, hi = UNARY_DOMAIN.get(name, (-2.0, 2.0))
        if name in UNARY_AWAY_FROM_ZERO:
            lo = max(lo, 0.3)
            return PRIMITIVES[name](sign * squash(x, (lo, hi)))
        return PRIMITIVES[name](squash(x, (lo, hi)))
    return step


def _binary(name, swap, other):
    def step(x, inputs):
        y = inputs[other % len(inputs)]
        try:
            np.broadcast_shapes(np.shape(_value(x)), np.shape(y))
        except ValueError:
            y = dnp.sum(y)        # the program reshaped x: combine with a scalar instead
        dom = BINARY_DOMAIN.get(name, (-2.0, 2.0))
        a, b = squash(x, dom), squash(y * 0.7 + 0.2, dom)
        if name in KINKED:
            gap = np.min(np.abs(np.asarray(_value(a)) - np.asarray(_value(b))))
            assume(gap > 1e-3)
        return PRIMITIVES[name](*((b, a) if swap else (a, b)))
    return step


def _value(x):
    while hasattr(x, "_trace"):
        x = x.primal if hasattr(x, "primal") else x._value
    return x


def _no_ties(x):
    """Whether a max over the last axis is smooth here (its two largest entries differ)."""
    v = np.asarray(_value(x))
    if v.ndim == 0:
        return False
    top = np.sort(v, axis=-1)
    return v.shape[-1] == 1 or bool(np.all(top[..., -1] - top[..., -2] > 1e-3))


def _scale_then_change_the_buffer(x):
    """x times a work buffer that the code then changes in place (the tape must keep 1.3)."""
    buf = np.full(np.shape(_value(x)), 1.3)
    y = x * buf
    buf *= 7.0
    return y


def _add_then_overwrite_with_out(x):
    """x times a constant that an ``out=`` write then overwrites."""
    c = np.linspace(0.5, 1.5, np.size(_value(x))).reshape(np.shape(_value(x)))
    y = dnp.sin(x) * c
    np.multiply(c, -3.0, out=c)
    return y + x * c


STRUCTURAL = {
    "buffer-changed-after-use": _scale_then_change_the_buffer,
    "out-overwrites-a-constant": _add_then_overwrite_with_out,
    "sum-last": lambda x: dnp.sum(x, axis=-1) if np.ndim(_value(x)) else x,
    "mean-all": lambda x: dnp.mean(x),
    "cumsum": lambda x: dnp.cumsum(x, axis=-1) if np.ndim(_value(x)) else x,
    "max-last": lambda x: dnp.max(x, axis=-1) if _no_ties(x) else x,
    "transpose": lambda x: dnp.transpose(x),
    "ravel": lambda x: dnp.ravel(x),
    "flip": lambda x: dnp.flip(x),
    "getitem": lambda x: x[..., :1] if np.ndim(_value(x)) else x,
    "concatenate": lambda x: dnp.concatenate([dnp.ravel(x), dnp.ravel(x) * 2.0]),
    "logsumexp": lambda x: dnp.special.logsumexp(x, axis=-1) if np.ndim(_value(x)) else x,
    "where": lambda x: dnp.where(np.arange(np.size(_value(x))).reshape(np.shape(_value(x))) % 2 == 0,
                                 x, x * x),
    "broadcast": lambda x: dnp.broadcast_to(x, (2,) + np.shape(_value(x))),
}


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 2))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["unary", "unary", "binary", "structural"]))
        if kind == "unary":
            name = draw(st.sampled_from(UNARY))
            steps.append((f"{name}", _unary(name, draw(st.sampled_from([-1.0, 1.0]))), False))
        elif kind == "binary":
            name = draw(st.sampled_from(BINARY))
            swap, other = draw(st.booleans()), draw(st.integers(0, 1))
            steps.append((f"{name}(swap={swap}, input {other})", _binary(name, swap, other), True))
        else:
            name = draw(st.sampled_from(sorted(STRUCTURAL)))
            steps.append((name, STRUCTURAL[name], False))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1.5, 1.5, size=s) for s in shapes]
    return inputs, steps


def _build(steps):
    def f(*inputs):
        x = inputs[0]
        for _, step, needs_inputs in steps:
            x = step(x, inputs) if needs_inputs else step(x)
        return x
    return f


@settings(PROFILE)
@given(programs())
def test_random_compositions_agree_in_every_mode_and_with_finite_differences(program):
    inputs, steps = program
    note(f"program: {[s[0] for s in steps]} on shapes {[np.shape(x) for x in inputs]}")
    f = _build(steps)
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        f(*inputs)        # every op inside its domain: no warnings, no NaN
    assert duals.gradcheck(f, *inputs)


@settings(PROFILE)
@given(programs(), st.integers(0, 2 ** 16))
def test_random_compositions_satisfy_the_adjoint_identity(program, seed):
    inputs, steps = program
    note(f"program: {[s[0] for s in steps]} on shapes {[np.shape(x) for x in inputs]}")
    f = _build(steps)
    rng = np.random.default_rng(seed)
    vs = tuple(rng.standard_normal(np.shape(x)) for x in inputs)
    y, jv = duals.jvp(f, tuple(inputs), vs)
    u = rng.standard_normal(np.shape(y))
    _, pullback = duals.vjp(f, *inputs)
    jtu = pullback(u)
    lhs = float(np.sum(u * jv))
    rhs = float(sum(np.sum(a * b) for a, b in zip(jtu, vs)))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs), abs(rhs)), (lhs, rhs)


@settings(PROFILE)
@given(programs(), st.integers(0, 2 ** 16))
def test_random_compositions_nest_to_second_and_third_order_without_confusion(program, seed):
    """The transformations composed on random programs: hessian (forward over reverse) against
    reverse over forward, forward over forward and differences of the gradient; a third-order
    directional derivative against differences of hvp."""
    inputs, steps = program
    note(f"program: {[s[0] for s in steps]} on shapes {[np.shape(x) for x in inputs]}")
    f = _build(steps)
    x = inputs[0]
    if len(inputs) > 1:
        rest = inputs[1:]

        def energy(z):
            return dnp.sum(dnp.sin(f(z, *rest)))
    else:
        def energy(z):
            return dnp.sum(dnp.sin(f(z)))
    H = np.asarray(duals.hessian(energy)(x))
    size = int(np.size(x))
    flat = H.reshape(size, size)
    for other in (duals.jacrev(duals.jacfwd(energy)), duals.jacfwd(duals.jacfwd(energy))):
        np.testing.assert_allclose(np.asarray(other(x)).reshape(size, size), flat, rtol=1e-9,
                                   atol=1e-11 * max(1.0, float(np.max(np.abs(flat)))))
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-11 * max(1.0, float(np.max(np.abs(flat)))))
    gradient = duals.grad(energy)
    h = 1e-5 * max(1.0, float(np.max(np.abs(x))))
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(np.shape(x))
    along = (np.asarray(gradient(x + h * v)) - np.asarray(gradient(x - h * v))) / (2 * h)
    np.testing.assert_allclose(np.asarray(duals.hvp(energy, x, v)), along, rtol=1e-4,
                               atol=1e-6 * max(1.0, float(np.max(np.abs(along)))))
    third = duals.jvp(lambda z: duals.hvp(energy, z, v), (x,), (v,))[1]     # D³f[v, v, ·]
    along3 = (np.asarray(duals.hvp(energy, x + h * v, v)) - np.asarray(duals.hvp(energy, x - h * v, v))) / (2 * h)
    np.testing.assert_allclose(np.asarray(third), along3, rtol=1e-4, atol=1e-5 * max(1.0, float(np.max(np.abs(along3)))))
