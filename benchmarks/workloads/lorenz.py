"""The Lorenz system integrated by RK4: scalar code for every system, and its exact sensitivities."""
import numpy as np

DT = 0.01
START = np.array([10.0, 28.0, 8.0 / 3.0, 1.0, 1.0, 1.0])   # σ, ρ, β, x₀, y₀, z₀


def rk4_step(x, y, z, sigma, rho, beta):
    """rk4_step(x, y, z, σ, ρ, β) -> (x, y, z) after one RK4 step of size DT."""
    k1x, k1y, k1z = sigma * (y - x), x * (rho - z) - y, x * y - beta * z
    x2, y2, z2 = x + 0.5 * DT * k1x, y + 0.5 * DT * k1y, z + 0.5 * DT * k1z
    k2x, k2y, k2z = sigma * (y2 - x2), x2 * (rho - z2) - y2, x2 * y2 - beta * z2
    x3, y3, z3 = x + 0.5 * DT * k2x, y + 0.5 * DT * k2y, z + 0.5 * DT * k2z
    k3x, k3y, k3z = sigma * (y3 - x3), x3 * (rho - z3) - y3, x3 * y3 - beta * z3
    x4, y4, z4 = x + DT * k3x, y + DT * k3y, z + DT * k3z
    k4x, k4y, k4z = sigma * (y4 - x4), x4 * (rho - z4) - y4, x4 * y4 - beta * z4
    return (x + DT / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x),
            y + DT / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y),
            z + DT / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z))


def lorenz(p, steps, stack=np.stack):
    """lorenz(p, steps) -> final (x, y, z) from p = (σ, ρ, β, x₀, y₀, z₀), Python loop."""
    sigma, rho, beta, x, y, z = p[0], p[1], p[2], p[3], p[4], p[5]
    for _ in range(steps):
        x, y, z = rk4_step(x, y, z, sigma, rho, beta)
    return stack([x, y, z])


def lorenz_compiled(p, steps):
    """lorenz_compiled(p, steps) -> the same, written for ``@numba.njit`` (unchanged for duals)."""
    sigma, rho, beta, x, y, z = p[0], p[1], p[2], p[3], p[4], p[5]
    for _ in range(steps):
        k1x = sigma * (y - x)
        k1y = x * (rho - z) - y
        k1z = x * y - beta * z
        x2 = x + 0.5 * DT * k1x
        y2 = y + 0.5 * DT * k1y
        z2 = z + 0.5 * DT * k1z
        k2x = sigma * (y2 - x2)
        k2y = x2 * (rho - z2) - y2
        k2z = x2 * y2 - beta * z2
        x3 = x + 0.5 * DT * k2x
        y3 = y + 0.5 * DT * k2y
        z3 = z + 0.5 * DT * k2z
        k3x = sigma * (y3 - x3)
        k3y = x3 * (rho - z3) - y3
        k3z = x3 * y3 - beta * z3
        x4 = x + DT * k3x
        y4 = y + DT * k3y
        z4 = z + DT * k3z
        k4x = sigma * (y4 - x4)
        k4y = x4 * (rho - z4) - y4
        k4z = x4 * y4 - beta * z4
        x = x + DT / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        y = y + DT / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y)
        z = z + DT / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z)
    out = np.zeros_like(p[:3])
    out[0] = x
    out[1] = y
    out[2] = z
    return out


def _rhs_and_derivatives(s, p):
    x, y, z = s
    sigma, rho, beta = p
    f = np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])
    ds = np.array([[-sigma, sigma, 0.0], [rho - z, -1.0, -x], [y, x, -beta]])
    dp = np.zeros((3, 6))
    dp[:, :3] = [[y - x, 0.0, 0.0], [0.0, x, 0.0], [0.0, 0.0, -z]]
    return f, ds, dp


def lorenz_sensitivity(p, steps):
    """lorenz_sensitivity(p, steps) -> exact 3×6 Jacobian by the hand-written tangent-linear RK4."""
    s, params = np.array(p[3:], dtype=float), np.array(p[:3], dtype=float)
    T = np.zeros((3, 6))
    T[:, 3:] = np.eye(3)
    for _ in range(steps):
        ks, dks = [], []
        for c in (0.0, 0.5, 0.5, 1.0):
            stage = s + c * DT * ks[-1] if ks else s
            dstage = T + c * DT * dks[-1] if dks else T
            f, ds, dp = _rhs_and_derivatives(stage, params)
            ks.append(f)
            dks.append(ds @ dstage + dp)
        s = s + DT / 6.0 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3])
        T = T + DT / 6.0 * (dks[0] + 2 * dks[1] + 2 * dks[2] + dks[3])
    return T


def jax_fori(jax, steps):
    """jax_fori(jax, steps) -> p -> final state, the loop as ``lax.fori_loop`` (what a JAX user jits)."""
    jnp = jax.numpy

    def run(p):
        def body(_, state):
            return rk4_step(*state, p[0], p[1], p[2])
        return jnp.stack(jax.lax.fori_loop(0, steps, body, (p[3], p[4], p[5])))
    return run
