"""W7: gradient of a Lorenz-96 misfit w.r.t. its forcing and initial state (80 inputs), compiled reverse mode.

Lorenz-96 with n = 40 variables, dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F_i (cyclic),
F_i = 8 + 0.1 sin(i), x0_i = F_i + 0.01 i, classical RK4, dt = 0.01, 1000 steps, written with
loops and ``np.empty_like`` as a Numba user writes it; loss = ½ Σ (x_i(T) - 1)². Also the
Hessian-vector product of that loss, and the 6-input Lorenz of W4 (gradient of Σ x(T)²) by the
compiled tape and by compiled forward lanes, to show where the modes cross.
"""
import numpy as np

from ..numerics import central_gradient, njit
from ..systems import Duals, Jax, load
from ..timing import Case, Entry
from .lorenz import START, lorenz_compiled

ID = "W7"
TITLE = "Compiled reverse mode: Lorenz-96 gradient (80 inputs), its hvp, and W4's 6 inputs"
N, STEPS, DT = 40, 1000, 0.01
FORCING = 8.0 + 0.1 * np.sin(np.arange(N))
STATE = FORCING + 0.01 * np.arange(N)
THETA = np.concatenate([FORCING, STATE])
DIRECTION = np.cos(np.arange(2 * N))


def rhs(x, F, out):
    n = x.shape[0]
    for i in range(n):
        out[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + F[i]


def make_misfit(rhs):
    def misfit(theta, steps):
        n = theta.shape[0] // 2
        F = theta[:n]
        x = theta[n:].copy()
        k1 = np.empty_like(x)
        k2 = np.empty_like(x)
        k3 = np.empty_like(x)
        k4 = np.empty_like(x)
        tmp = np.empty_like(x)
        for _ in range(steps):
            rhs(x, F, k1)
            for i in range(n):
                tmp[i] = x[i] + 0.5 * DT * k1[i]
            rhs(tmp, F, k2)
            for i in range(n):
                tmp[i] = x[i] + 0.5 * DT * k2[i]
            rhs(tmp, F, k3)
            for i in range(n):
                tmp[i] = x[i] + DT * k3[i]
            rhs(tmp, F, k4)
            for i in range(n):
                x[i] = x[i] + DT / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
        total = 0.0
        for i in range(n):
            total += 0.5 * (x[i] - 1.0) ** 2
        return total
    return misfit


def _compiled(cache=True):
    return njit(make_misfit(njit(rhs, cache=cache)), cache=cache)


def _lorenz_energy():
    final_state = njit(lorenz_compiled)

    def lorenz_energy(p, steps):
        s = final_state(p, steps)
        return s[0] * s[0] + s[1] * s[1] + s[2] * s[2]
    return njit(lorenz_energy, cache=False)


def cases(quick):
    steps = 100 if quick else STEPS
    return [_gradient_case(steps), _hvp_case(steps), _crossing_case(steps)]


def _reference_gradient(steps):
    duals = load(Duals).duals
    return duals.jacfwd(_compiled())(THETA, steps)  # compiled forward lanes: another interpreter


def _gradient_case(steps):
    entries = [
        Entry("numba", "f", lambda: _plain(steps), rtol=None),
        Entry("duals-njit", "gradient", lambda: _duals_grad(steps),
              note="duals.grad of the unchanged @njit loss: compiled tape; first call compiles (no disk cache)"),
        Entry("duals-njit fwd", "gradient", lambda: _duals_jacfwd(steps), note="duals.jacfwd: 80 compiled lanes"),
        Entry("jax-jit", "gradient", lambda: _jax_grad(steps), rtol=1e-5,
              note="jit(grad) of the same model over lax.fori_loop, jnp.roll for the cyclic indices "
                   "(another order of operations: the chaotic model amplifies rounding to ~1e-6)"),
        Entry("fd", "gradient", lambda: _fd(steps), rtol=None,
              note="central differences, 160 runs; timing only: on this chaotic model (|∇| ~ 1e9) "
                   "they are wrong in every digit"),
    ]
    return Case(ID, f"gradient, N={steps}", "task", ("numba", "f"), entries,
                {"gradient": lambda: _reference_gradient(steps)})


def _hvp_case(steps):
    def reference():  # forward over forward: no tape (central differences fail on this chaos)
        import duals.jit
        return duals.jit.compiled_hessian(_compiled())(THETA, steps) @ DIRECTION
    entries = [
        Entry("numba", "f", lambda: _plain(steps), rtol=None),
        Entry("duals-njit", "hvp", lambda: _duals_hvp(steps), rtol=1e-8,
              note="duals.hvp: one recording over 1-lane duals and one sweep (forward over reverse)"),
        Entry("jax-jit", "hvp", lambda: _jax_hvp(steps), rtol=1e-5, note="jit(jvp(grad)) over lax.fori_loop"),
    ]
    return Case(ID, f"hvp, N={steps}", "task", ("numba", "f"), entries,
                {"hvp": reference})


def _crossing_case(steps):
    def reference():
        duals = load(Duals).duals
        return duals.jacfwd(_lorenz_energy())(START, steps)
    entries = [
        Entry("numba", "f", lambda: (lambda fn: lambda: fn(START, steps))(_lorenz_energy()), rtol=None),
        Entry("duals-njit", "gradient", lambda: _w4(steps, "grad"), note="compiled tape (reverse)"),
        Entry("duals-njit fwd", "gradient", lambda: _w4(steps, "jacfwd"), note="6 compiled lanes (forward)"),
    ]
    return Case(ID, f"W4 Lorenz, 6 inputs, N={steps}", "task", ("numba", "f"), entries,
                {"gradient": reference})


def _plain(steps):
    fn = _compiled()
    return lambda: fn(THETA, steps)


def _duals_grad(steps):
    grad = load(Duals).duals.grad(_compiled(cache=False))  # first call = compile
    return lambda: grad(THETA, steps)


def _duals_jacfwd(steps):
    jac = load(Duals).duals.jacfwd(_compiled())
    return lambda: jac(THETA, steps)


def _duals_hvp(steps):
    duals, fn = load(Duals).duals, _compiled()
    loss = njit(lambda theta: fn(theta, steps))
    return lambda: duals.hvp(loss, THETA, DIRECTION)


def _w4(steps, how):
    duals, fn = load(Duals).duals, _lorenz_energy()
    transform = getattr(duals, how)(fn)
    return lambda: transform(START, steps)


def _jax_loss(jax, steps):
    jnp = jax.numpy

    def rhs(x, F):
        return (jnp.roll(x, -1) - jnp.roll(x, 2)) * jnp.roll(x, 1) - x + F

    def loss(theta):
        F, x = theta[:N], theta[N:]

        def step(_, x):
            k1 = rhs(x, F)
            k2 = rhs(x + 0.5 * DT * k1, F)
            k3 = rhs(x + 0.5 * DT * k2, F)
            k4 = rhs(x + DT * k3, F)
            return x + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        x = jax.lax.fori_loop(0, steps, step, x)
        return 0.5 * jnp.sum((x - 1.0) ** 2)
    return loss


def _jax_grad(steps):
    system = load(Jax)
    fn = system.jax.jit(system.jax.grad(_jax_loss(system.jax, steps)))
    theta = system.asarray(THETA)
    return lambda: system.finish(fn(theta))


def _jax_hvp(steps):
    system = load(Jax)
    jax = system.jax
    g = jax.grad(_jax_loss(jax, steps))
    fn = jax.jit(lambda x, v: jax.jvp(g, (x,), (v,))[1])
    theta, v = system.asarray(THETA), system.asarray(DIRECTION)
    return lambda: system.finish(fn(theta, v))


def _fd(steps):
    fn = _compiled()
    return lambda: central_gradient(lambda th: fn(th, steps), THETA)


def targets(records):
    from . import pick
    rows = []
    case = f"gradient, N={STEPS}"
    mine, jax = (pick(records, ID, s, "gradient", case) for s in ("duals-njit", "jax-jit"))
    if mine:
        rows.append(("W7 compiled grad ≤ 5× @njit f (issue 16)", f"{mine['ratio']:.2f}×", mine["ratio"] <= 5.0))
        rows.append(("W7 first call (compile) ≤ 3 s", f"{mine['first_call_s']:.2f} s", mine["first_call_s"] <= 3.0))
    if mine and jax:
        rows.append(("W7 compiled grad faster than JAX jit(grad)",
                     f"{mine['median_s'] * 1e3:.2f} ms vs {jax['median_s'] * 1e3:.2f} ms",
                     mine["median_s"] < jax["median_s"]))
    hvp = pick(records, ID, "duals-njit", "hvp", f"hvp, N={STEPS}")
    if hvp:
        rows.append(("W7 hvp ≤ 12× @njit f (issue 16)", f"{hvp['ratio']:.2f}×", hvp["ratio"] <= 12.0))
    return rows
