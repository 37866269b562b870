"""Cells of ode_sensitivities.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# Sensitivities of ODE models with `duals.sensitivity`

Four questions a modeller asks, each answered by one call:

1. **How does every state respond to every parameter over time?** `solve_ivp` returns SciPy's
   solution plus `sensitivity[i, j, k] = ∂y_i(t_k)/∂p_j`, here for Robertson's stiff kinetics.
2. **Which parameter drives an epidemic's peak, and its timing?** The same call with an event
   at the peak gives the peak's sensitivities and the derivative of the peak time; `local`'s
   table and tornado chart show them normalised.
3. **Forward or adjoint?** The cost of the gradient of a misfit as the number of parameters
   grows.
4. **Global measures without finite differences:** DGSM of the Ishigami function from exact
   gradients, against its closed form and against SALib's finite-difference scheme.
"""),
("code", common + r'''
try:                                    # one BLAS thread, so that the timings below mean something
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=1)
except ImportError:
    pass
import math
import numba
import scipy.integrate
import scipy.stats
from duals.sensitivity import solve_ivp, adjoint_gradient, dgsm, LocalSensitivity

@numba.njit(cache=True)
def robertson(t, y, k):
    """y1 -> y2 (k1), 2 y2 -> y2 + y3 (k2), y2 + y3 -> y1 + y3 (k3)"""
    out = np.empty_like(y)
    out[0] = -k[0] * y[0] + k[2] * y[1] * y[2]
    out[1] = k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2
    out[2] = k[1] * y[1] ** 2
    return out

k = np.array([0.04, 3.0e7, 1.0e4])
y0 = np.array([1.0, 0.0, 0.0])
times = np.geomspace(1e-5, 1e5, 61)
t0 = time.perf_counter()
res = solve_ivp(robertson, (0.0, 1e5), y0, k, method="BDF", t_eval=times, rtol=1e-7,
                atol=1e-12, names=["k1", "k2", "k3"])
print(f"BDF with sensitivities: {res.nfev} evaluations of the augmented system, "
      f"{res.njev} exact Jacobians, {time.perf_counter() - t0:.2f} s (first call compiles)")
print("y", res.y.shape, " sensitivity", res.sensitivity.shape, " columns", res.parameter_names)
'''),
("md", r"""
The sensitivities were integrated together with the state (one augmented system of
3 · (1 + 3) unknowns, so the step-size control covers them), with `J_y S + J_p` from one
compiled call of `robertson` on dual numbers per evaluation and the exact Jacobian of the
augmented system for BDF. A check against central differences of whole solves at a tight
tolerance:
"""),
("code", r'''
def solve(k):
    return scipy.integrate.solve_ivp(robertson, (0.0, 1e5), y0, method="Radau", t_eval=times[::10],
                                     rtol=1e-11, atol=1e-16, args=(k,)).y

worst = 0.0
for j in range(3):
    h = 1e-4 * k[j]
    e = np.zeros(3); e[j] = h
    fd = (solve(k + e) - solve(k - e)) / (2 * h)
    worst = max(worst, np.abs(res.sensitivity[:, j, ::10] - fd).max() / np.abs(fd).max())
print(f"largest difference to central differences, relative to each column's scale: {worst:.1e}")
'''),
("md", r"""
Rate constants span nine orders of magnitude, so the raw derivatives are not comparable. The
normalised sensitivities $(k_j / y_i)\,\partial y_i/\partial k_j$ are: "1 % more of $k_j$ gives
that many % more of $y_i$".
"""),
("code", r'''
normalised = res.sensitivity * k[None, :, None] / res.y[:, None, :]
fig, axs = plt.subplots(1, 3, figsize=(14, 3.8), sharex=True)
for i, ax in enumerate(axs):
    for j, name in enumerate(res.parameter_names):
        ax.semilogx(res.t, normalised[i, j], label=name)
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_title(f"species y{i + 1}")
    ax.set_xlabel("time t (log scale)")
    ax.set_ylabel(f"(k_j / y{i + 1}) ∂y{i + 1}/∂k_j")
axs[0].legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
## An epidemic: the peak and its timing

SEIR in population fractions, `p` a dict of named rates. The event `I' = σE - γI = 0` (crossing
downwards) marks the peak; `solve_ivp` reports the state's sensitivities there
(`sensitivity_events`) and the derivative of the event time (`t_events_sensitivity`). At the peak
`I' = 0`, so the sensitivity of the peak value is the sensitivity of `I` at that time.
"""),
("code", r'''
def seir(t, y, p):
    s, e, i = y[0], y[1], y[2]
    infection = p["beta"] * s * i
    return dnp.stack([-infection, infection - p["sigma"] * e, p["sigma"] * e - p["gamma"] * i,
                      p["gamma"] * i])

def peak(t, y, p):
    return p["sigma"] * y[1] - p["gamma"] * y[2]
peak.direction = -1

rates = {"beta": 0.6, "sigma": 0.25, "gamma": 0.2}
state0 = [0.999, 0.0, 0.001, 0.0]
days = np.linspace(0.0, 160.0, 161)
epi = solve_ivp(seir, (0.0, 160.0), state0, rates, t_eval=days, events=peak, rtol=1e-8, atol=1e-11)
i_peak, t_peak = epi.y_events[0][0, 2], epi.t_events[0][0]
jac = np.stack([epi.sensitivity_events[0][0, 2], epi.t_events_sensitivity[0][0]])
table = LocalSensitivity([i_peak, t_peak], list(rates.values()), jac,
                         ["peak prevalence", "day of peak"], epi.parameter_names)
print(table)
'''),
("code", r'''
def peak_by_solve(r):
    def at_peak(t, y):
        return peak(t, y, r)
    at_peak.direction = -1
    sol = scipy.integrate.solve_ivp(lambda t, y: np.asarray(seir(t, y, r)), (0.0, 160.0), state0,
                                    events=at_peak, rtol=1e-11, atol=1e-14)
    return np.array([sol.y_events[0][0, 2], sol.t_events[0][0]])

worst = 0.0
for j, name in enumerate(rates):
    h = 1e-5 * rates[name]
    up, down = dict(rates), dict(rates)
    up[name] += h; down[name] -= h
    fd = (peak_by_solve(up) - peak_by_solve(down)) / (2 * h)
    worst = max(worst, np.max(np.abs(jac[:, j] - fd) / np.abs(fd)))
print(f"peak value and peak day, largest relative difference to central differences: {worst:.1e}")
'''),
("code", r'''
fig, axs = plt.subplots(1, 2, figsize=(13, 3.8))
for j, name in enumerate(epi.parameter_names):
    axs[0].plot(epi.t, epi.sensitivity_to(name)[2], label=f"∂I/∂{name}")
axs[0].axvline(t_peak, color="k", ls=":", lw=1, label="peak")
axs[0].set_xlabel("day"); axs[0].set_ylabel("∂I(t)/∂p (fraction per unit rate)")
axs[0].set_title("sensitivity of the infected fraction"); axs[0].legend()
table.plot(ax=axs[1])
plt.tight_layout(); plt.show()
'''),
("md", r"""
## Forward sensitivities or the adjoint?

Forward sensitivities carry one lane per parameter through every evaluation; the adjoint solves
once forward and once backward with one vector-Jacobian product per evaluation, whatever the
number of parameters. For a misfit of the final state of a random mass-action network (8
species, R reactions, each with its own rate constant, a Python right-hand side):
"""),
("code", r'''
def network(n_species, n_reactions, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(n_species, size=n_reactions)
    c = (a + 1 + rng.integers(n_species - 1, size=n_reactions)) % n_species
    b = rng.integers(n_species, size=n_reactions)
    produce = np.zeros((n_species, n_reactions))
    np.add.at(produce, (c, np.arange(n_reactions)), 1.0)
    np.add.at(produce, (a, np.arange(n_reactions)), -1.0)
    np.add.at(produce, (b, np.arange(n_reactions)), -1.0)
    def fun(t, y, p):                       # reaction r: a_r + b_r -> c_r at rate p_r y_a y_b
        return produce @ (p * y[a] * y[b])
    return fun, np.exp(rng.uniform(np.log(0.05), np.log(2.0), n_reactions)), rng.uniform(0.5, 1.5, n_species)

def timed(fn):
    """(seconds, result) of the second call: the first one compiles and caches"""
    fn()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result

sizes = [10, 40, 160, 640]
cost = {"plain solve": [], "forward sensitivities": [], "adjoint": []}
for R in sizes:
    fun, p, y_init = network(8, R, seed=3)
    target = 0.9 * y_init
    misfit = lambda t, y: dnp.sum((y - target) ** 2)
    opts = dict(rtol=1e-6, atol=1e-9)
    def by_forward():
        r = solve_ivp(fun, (0.0, 10.0), y_init, p, t_eval=[10.0], **opts)
        return 2 * (r.y[:, -1] - target) @ r.sensitivity[:, :, -1]
    def by_adjoint():
        return adjoint_gradient(fun, (0.0, 10.0), y_init, p, misfit, **opts).gradient
    t_plain, _ = timed(lambda: scipy.integrate.solve_ivp(lambda t, y: fun(t, y, p), (0.0, 10.0),
                                                         y_init, **opts))
    t_forward, g_forward = timed(by_forward)
    t_adjoint, g_adjoint = timed(by_adjoint)
    for label, value in zip(cost, (t_plain, t_forward, t_adjoint)):
        cost[label].append(value)
    gap = np.abs(g_forward - g_adjoint).max() / np.abs(g_forward).max()
    print(f"R = {R:4d}: forward {t_forward:.3f} s, adjoint {t_adjoint:.3f} s, plain "
          f"{t_plain * 1e3:.1f} ms; the two gradients differ by {gap:.1e} (relative)")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(6.5, 4))
for label, values in cost.items():
    ax.loglog(sizes, values, "o-", label=label)
ax.set_xlabel("number of parameters (rate constants)")
ax.set_ylabel("wall time per gradient [s]")
ax.set_title("gradient of a misfit: forward vs adjoint (Python fun)")
ax.legend(); plt.tight_layout(); plt.show()
'''),
("md", r"""
The forward cost grows with the parameters (lanes, and an augmented system of
`8 · (1 + R)` unknowns); the adjoint's hardly does. With a `@numba.njit` right-hand side the
picture changes: forward lanes are compiled and cheap, while the adjoint's vector-Jacobian
products still need compiled reverse mode, which duals does not have yet (it then uses the
Jacobian by compiled lanes), so forward sensitivities are the faster route there
(`benchmarks/sensitivity.py` measures both).

## Global measures: DGSM of the Ishigami function

`dgsm` takes one exact gradient per point; SALib's DGSM takes `N (D + 1)` model runs and forward
differences (its `finite_diff` sampler perturbs each input by `delta` times its value). The
closed form: $v_i = E[(\partial f/\partial x_i)^2]$ over $U(-\pi, \pi)^3$.
"""),
("code", r'''
a_, b_ = 7.0, 0.1
def ishigami(X):
    return dnp.sin(X[:, 0]) + a_ * dnp.sin(X[:, 1]) ** 2 + b_ * X[:, 2] ** 4 * dnp.sin(X[:, 0])

pi = math.pi
v_exact = np.array([0.5 * (1 + 2 * b_ * pi ** 4 / 5 + b_ ** 2 * pi ** 8 / 9), a_ ** 2 / 2,
                    8 * b_ ** 2 * pi ** 6 / 7])
problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-pi, pi]] * 3}
N = 4096
t0 = time.perf_counter()
exact_gradients = dgsm(ishigami, problem, N, seed=0, vectorized=True)
t_duals = time.perf_counter() - t0

def salib_style(N, delta, seed=0):
    """SALib's scheme: N base points, each with D forward-difference neighbours."""
    X = scipy.stats.qmc.Sobol(3, seed=seed).random(N) * 2 * pi - pi
    f = lambda X: np.sin(X[:, 0]) + a_ * np.sin(X[:, 1]) ** 2 + b_ * X[:, 2] ** 4 * np.sin(X[:, 0])
    base = f(X)
    vi = []
    for j in range(3):
        Xp = X.copy(); Xp[:, j] = np.clip(X[:, j] * (1 + delta), -pi, pi)
        vi.append(np.mean(((f(Xp) - base) / (Xp[:, j] - X[:, j])) ** 2))
    return np.array(vi), N * 4

t0 = time.perf_counter()
vi_fd, runs = salib_style(N, 0.01)
t_fd = time.perf_counter() - t0
print(f"closed form  vi = {np.round(v_exact, 4)}")
print(f"duals        vi = {np.round(exact_gradients['vi'], 4)}  ({N} gradients, {t_duals * 1e3:.0f} ms)")
print(f"FD (SALib)   vi = {np.round(vi_fd, 4)}  ({runs} model runs, {t_fd * 1e3:.0f} ms)")
print(exact_gradients)
'''),
("code", r'''
deltas = np.geomspace(1e-7, 1e-1, 7)
errors = np.array([np.abs(salib_style(N, d)[0] - v_exact) / v_exact for d in deltas])
exact_error = np.abs(exact_gradients["vi"] - v_exact) / v_exact
fig, ax = plt.subplots(figsize=(6.5, 4))
for j in range(3):
    line, = ax.loglog(deltas, errors[:, j], "o-", label=f"finite differences, x{j + 1}")
    ax.axhline(exact_error[j], color=line.get_color(), ls="--", lw=1)
ax.set_xlabel("finite-difference step delta (relative to x)")
ax.set_ylabel("relative error of vi against the closed form")
ax.set_title(f"DGSM vi from {N} Sobol' points (dashed: exact gradients)")
ax.legend(fontsize=8); plt.tight_layout(); plt.show()
print("relative error of vi with exact gradients:", np.array2string(exact_error, precision=1))
'''),
("md", r"""
With exact gradients the only error left is the sampling error of the `N` points (the dashed
lines). Finite differences add their step error on top, which shrinks with `delta` until the
sampling error (or, for smaller steps still, rounding) takes over; a good `delta` has to be
found per model, and every point costs `D + 1` model runs, which is what counts when a model run
is a whole ODE solve.
"""),
    ]
