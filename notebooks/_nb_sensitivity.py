"""Cells of sensitivity_analysis.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# Sensitivity analysis of an ODE model, end to end

A model $\dot y = F(y, p)$ is integrated numerically; we want $\partial y(t)/\partial p$ — how every
state at every time responds to every parameter. With `duals` the integrator is differentiated
as written: here it is an ordinary `@numba.njit` RK4 loop, and `duals.jacfwd` runs it compiled on
dual numbers (forward mode: one tangent lane per parameter, which is the right mode for few
parameters and many outputs).

The workflow:
1. write the model and the integrator (plain NumPy / Numba);
2. `duals.jacfwd` → sensitivities of the whole trajectory;
3. plot them over time, normalise them, use them (a Gauss–Newton parameter fit);
4. compare with finite differences: their error against the step $h$ is a V-shaped curve,
   while the dual result is exact to rounding.
"""),
("code", common + r'''
import numba

@numba.njit
def lotka_volterra(y0, y1, p):
    """prey y0, predators y1; p = (alpha, beta, delta, gamma)"""
    return p[0] * y0 - p[1] * y0 * y1, p[2] * y0 * y1 - p[3] * y1

@numba.njit
def trajectory(p, y_init, n_steps, dt):
    """RK4; returns the states at t = dt, 2 dt, ..., n_steps dt, shape (n_steps, 2)"""
    out = np.empty((n_steps, 2), dtype=p.dtype)
    a = y_init[0] + 0.0 * p[0]      # make the state the same (dual) type as p
    b = y_init[1] + 0.0 * p[0]
    for k in range(n_steps):
        k1a, k1b = lotka_volterra(a, b, p)
        k2a, k2b = lotka_volterra(a + 0.5 * dt * k1a, b + 0.5 * dt * k1b, p)
        k3a, k3b = lotka_volterra(a + 0.5 * dt * k2a, b + 0.5 * dt * k2b, p)
        k4a, k4b = lotka_volterra(a + dt * k3a, b + dt * k3b, p)
        a = a + dt / 6.0 * (k1a + 2.0 * k2a + 2.0 * k3a + k4a)
        b = b + dt / 6.0 * (k1b + 2.0 * k2b + 2.0 * k3b + k4b)
        out[k, 0] = a
        out[k, 1] = b
    return out

p_true = np.array([1.0, 0.4, 0.1, 0.4])
names = ["alpha", "beta", "delta", "gamma"]
y_init = np.array([10.0, 5.0])
dt, n_steps = 0.02, 1500
t = dt * np.arange(1, n_steps + 1)
Y = trajectory(p_true, y_init, n_steps, dt)
print("trajectory shape", Y.shape, " final state", Y[-1])
'''),
("md", r"""
## Sensitivities of the whole trajectory

`jacfwd` differentiates with respect to argument 0 (`p`); the initial state, the step count and
the step size pass through unchanged. The result has shape `out.shape + p.shape`.
"""),
("code", r'''
jac = duals.jacfwd(trajectory)
t0 = time.perf_counter(); S = jac(p_true, y_init, n_steps, dt); t_first = time.perf_counter() - t0
t0 = time.perf_counter(); S = jac(p_true, y_init, n_steps, dt); t_again = time.perf_counter() - t0
t0 = time.perf_counter(); trajectory(p_true, y_init, n_steps, dt); t_plain = time.perf_counter() - t0
print("sensitivity array shape", S.shape, "(time step, state, parameter)")
print(f"first call (compiles for duals) {t_first:.2f} s; next call {t_again * 1e3:.2f} ms; "
      f"plain integration {t_plain * 1e3:.3f} ms")
'''),
("code", r'''
fig, axs = plt.subplots(1, 3, figsize=(14, 3.8))
axs[0].plot(t, Y[:, 0], label="prey"); axs[0].plot(t, Y[:, 1], label="predators")
axs[0].set_title("trajectory"); axs[0].set_xlabel("t"); axs[0].set_ylabel("population"); axs[0].legend()
for j, name in enumerate(names):
    axs[1].plot(t, S[:, 0, j], label=name)
    axs[2].plot(t, S[:, 1, j], label=name)
axs[1].set_title("∂ prey(t) / ∂p"); axs[2].set_title("∂ predators(t) / ∂p")
axs[1].set_ylabel("sensitivity ∂ prey(t) / ∂p"); axs[2].set_ylabel("sensitivity ∂ predators(t) / ∂p")
for ax in axs[1:]:
    ax.set_xlabel("t"); ax.axhline(0, color="k", lw=0.5); ax.legend(fontsize=8)
plt.tight_layout(); plt.show()
'''),
("md", r"""
The sensitivities oscillate with the populations and their envelope grows with time: a change of
parameter shifts the period, so the phase error accumulates. Normalised sensitivities
$(p_j / y_i)\,\partial y_i/\partial p_j$ (a relative change of output per relative change of
parameter) make the parameters comparable; here is their largest magnitude over the run, and
the time-averaged magnitude:
"""),
("code", r'''
norm_S = S * p_true[None, None, :] / Y[:, :, None]
print(f"{'':10s}" + "".join(f"{n:>10s}" for n in names))
for i, state in enumerate(["prey", "predators"]):
    print(f"{state + ' max':10s}" + "".join(f"{np.abs(norm_S[:, i, j]).max():10.2f}" for j in range(4)))
    print(f"{state + ' mean':10s}" + "".join(f"{np.abs(norm_S[:, i, j]).mean():10.2f}" for j in range(4)))
'''),
("md", r"""
## Using the sensitivities: a Gauss–Newton fit

The Jacobian of the residuals is exactly the sensitivity array. From noisy observations and a
wrong initial guess, a few Gauss–Newton steps $p \leftarrow p - (J^TJ)^{-1}J^Tr$ recover the
parameters:
"""),
("code", r'''
obs_rng = np.random.default_rng(1)
every = 25
Y_obs = Y[::every] * (1 + 0.02 * obs_rng.standard_normal(Y[::every].shape))

def residual(p):
    return (trajectory(p, y_init, n_steps, dt)[::every] - Y_obs).ravel()

p = np.array([1.15, 0.45, 0.09, 0.35])
history = [np.sum(residual(p) ** 2)]
for it in range(8):
    J = jac(p, y_init, n_steps, dt)[::every].reshape(-1, 4)
    step = np.linalg.lstsq(J, residual(p), rcond=None)[0]
    p = p - step
    history.append(np.sum(residual(p) ** 2))
print("fitted p :", p)
print("true   p :", p_true)
print("sum of squared residuals per iteration:", np.array(history))
'''),
("md", r"""
## Finite differences against the exact derivative

Take one number, $\partial\,\mathrm{prey}(T)/\partial\alpha$ at the final time $T$. Forward
differences have truncation error $O(h)$ and central differences $O(h^2)$, while rounding error
grows like $\varepsilon/h$: the total error against $h$ is a V. The dual number result has
no $h$ at all.

As the reference for the error we use the dual result; to show that it is itself right, it is
also compared with a Richardson extrapolation of central differences.
"""),
("code", r'''
def prey_T(alpha):
    q = p_true.copy(); q[0] = alpha
    return trajectory(q, y_init, n_steps, dt)[-1, 0]

exact = S[-1, 0, 0]
hs = 10.0 ** np.arange(-1, -15.5, -0.25)
a0 = p_true[0]
err_fwd = np.array([abs((prey_T(a0 + h) - prey_T(a0)) / h - exact) for h in hs]) / abs(exact)
err_cen = np.array([abs((prey_T(a0 + h) - prey_T(a0 - h)) / (2 * h) - exact) for h in hs]) / abs(exact)

D = lambda h: (prey_T(a0 + h) - prey_T(a0 - h)) / (2 * h)
richardson = (16 * D(1e-4) - D(2e-4)) / 15
eps = np.finfo(float).eps
print(f"dual (exact)         d prey(T)/d alpha = {exact:.12f}")
print(f"Richardson central FD                  = {richardson:.12f}   rel. diff {abs(richardson - exact) / abs(exact):.1e}")
i_f, i_c = np.argmin(err_fwd), np.argmin(err_cen)
print(f"forward FD: best h = {hs[i_f]:.1e} (theory ~ sqrt(eps) = {np.sqrt(eps):.1e}), best rel. error {err_fwd[i_f]:.1e}")
print(f"central FD: best h = {hs[i_c]:.1e} (theory ~ eps^(1/3) = {eps ** (1 / 3):.1e}), best rel. error {err_cen[i_c]:.1e}")
print(f"at h = 1e-12: forward rel. error {err_fwd[np.argmin(abs(hs - 1e-12))]:.1e}, "
      f"central {err_cen[np.argmin(abs(hs - 1e-12))]:.1e}")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4.5))
floor = eps / 2
ax.loglog(hs, np.maximum(err_fwd, floor), "o-", ms=3, label="forward difference")
ax.loglog(hs, np.maximum(err_cen, floor), "s-", ms=3, label="central difference")
ax.loglog(hs, hs * err_fwd[0] / hs[0], "k:", lw=0.8, label="slope 1 (truncation)")
ax.loglog(hs, hs ** 2 * err_cen[0] / hs[0] ** 2, "k--", lw=0.8, label="slope 2 (truncation)")
ax.axhline(eps, color="C3", lw=1.5, label="dual numbers: exact (error at rounding, ~eps)")
ax.set_ylim(1e-17, 10); ax.invert_xaxis()
ax.set_xlabel("step h"); ax.set_ylabel("relative error of ∂ prey(T)/∂α")
ax.set_title("finite differences: the V of truncation vs cancellation"); ax.legend(fontsize=8)
plt.tight_layout(); plt.show()
'''),
("md", r"""
Compare the printed best step sizes with the textbook estimates $\sqrt\varepsilon$ and
$\varepsilon^{1/3}$ (they assume derivatives of order one, so they are only a guide): even at the
best $h$ finite differences lose digits, and the best $h$ is not known in advance. Below it,
smaller $h$ makes things *worse* (the printed errors at $h=10^{-12}$). The dual-number sensitivity costs one
compiled pass with four tangent lanes, needs no step size, and gives every
$\partial y_i(t_k)/\partial p_j$ at once.
"""),
    ]
