"""Cells of forward_vs_reverse.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# Forward versus reverse mode: what a Jacobian costs

For $f:\mathbb{R}^n\to\mathbb{R}^m$, forward mode (`duals.jacfwd`) pushes one tangent per
*input* direction through $f$; reverse mode (`duals.jacrev`) records $f$ on a tape once and pulls
one cotangent per *output* back through it. Counting sweeps, forward mode costs about $n$
evaluations of $f$ and reverse mode about $m$, plus the tape, which forward mode does not need.

This notebook puts that counting argument next to measurements taken while it runs:

1. the cost of a Jacobian as the shape of $f$ goes from tall to wide, for `jacfwd`, `jacrev` and
   compiled forward mode (`duals.jacfwd` of a `@numba.njit` function), against the counts $n$ and
   $m$; the crossover is computed from the timings;
2. the rule of `duals.jacobian(mode="auto")` checked against the faster mode on a grid of shapes;
3. the cheap gradient principle: `grad(f)` costs a bounded multiple of `f`;
4. memory: the tape against forward mode, measured with `tracemalloc`;
5. the Hessian three ways.

**How it measures.** BLAS and Numba run on one thread each (pinned below with `threadpoolctl`
and `numba.set_num_threads`, and printed), so a busy machine cannot multiply a single timing by
starting threads. Every time is the best of many short samples, each sample a loop whose length is
calibrated first to last a fixed minimum, with the garbage collector off, as `timeit` does: on a
busy machine some samples run undisturbed, and the minimum is one of them. The
sizes are small so that the whole notebook runs in about a minute. Absolute times belong to this
machine and this run; the text below describes only what the figures show and refers to the
printed values for every number.
"""),
("code", common + r'''
import gc, os
import numba
from threadpoolctl import threadpool_info, threadpool_limits

numba.set_num_threads(1)       # Numba's own pool (duals' kernels are serial anyway); loads its threading layer
threadpool_limits(limits=1)    # then every BLAS / OpenMP pool loaded in this process: one thread
pools = ", ".join(f"{p['internal_api']} ({p['user_api']}) {p['num_threads']}" for p in threadpool_info())
print(f"threads: {pools}; numba {numba.get_num_threads()}")

def best_time(fn, repeat=15, target=0.002, budget=0.3):
    """Seconds per call of fn(): the best of up to `repeat` samples, each a loop of `number` calls
    lasting at least `target` seconds (`number` is calibrated first, by doubling). Short samples,
    many of them: on a busy machine some sample runs undisturbed, and the minimum is that one.
    Sampling stops early, after three samples, once `budget` seconds are spent."""
    fn()                                            # warm-up: compiles kernels, fills caches
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= target:
            break
        number *= 2
    best, spent = np.inf, 0.0
    gc.collect(); gc.disable()                      # like timeit: no collector pauses in a sample
    try:
        for k in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            dt = time.perf_counter() - t0
            best, spent = min(best, dt / number), spent + dt
            if k >= 2 and spent > budget:
                break
    finally:
        gc.enable()
    return best

try:
    from tqdm.auto import tqdm                      # optional: progress bars for the sweeps
except ImportError:
    tqdm = None

def progress(items, label):
    """`items`, with a tqdm progress bar when tqdm is installed and a person runs the notebook;
    notebooks/build.py and the tests set DUALS_NOTEBOOK_BUILD=1, so no bar is saved in the outputs."""
    if tqdm is None or os.environ.get("DUALS_NOTEBOOK_BUILD"):
        return items
    return tqdm(items, desc=label, leave=False)
'''),
("md", r"""
## 1. The test function, three ways

A small "layer": $f(x) = \tanh(A\sin x) + 0.1\,(Bx)^2$ with fixed random $A, B\in\mathbb{R}^{m\times n}$.
Its Jacobian is dense, so no mode can exploit sparsity. `f_numpy` is written with NumPy (for
`jacfwd` and `jacrev`), `f_compiled` with loops under `@numba.njit` (for compiled forward mode:
`duals.jacfwd` runs the unchanged compiled function on dual numbers, a fixed number of directions
per call, printed below). Compiled reverse mode does not exist yet, so it is not in the figures.
All three Jacobians agree:
"""),
("code", r'''
rng = np.random.default_rng(0)

def make_problem(n, m):
    A = rng.standard_normal((m, n)) / np.sqrt(n)
    B = rng.standard_normal((m, n)) / np.sqrt(n)
    return rng.standard_normal(n), A, B

def f_numpy(x, A, B):
    return np.tanh(A @ np.sin(x)) + 0.1 * (B @ x) ** 2

@numba.njit(cache=True)
def f_compiled(x, A, B):
    m, n = A.shape
    s = np.sin(x)
    out = np.empty(m)
    for i in range(m):
        a = 0.0
        b = 0.0
        for j in range(n):
            a += A[i, j] * s[j]
            b += B[i, j] * x[j]
        out[i] = np.tanh(a) + 0.1 * b * b
    return out

jac_fwd, jac_rev, jac_compiled = duals.jacfwd(f_numpy), duals.jacrev(f_numpy), duals.jacfwd(f_compiled)
x, A, B = make_problem(20, 3)
t0 = time.perf_counter()
Jc = jac_compiled(x, A, B)
first_call = time.perf_counter() - t0
Jf, Jr = jac_fwd(x, A, B), jac_rev(x, A, B)
print("Jacobian shape:", Jf.shape)
print(f"max |jacfwd - jacrev| = {np.abs(Jf - Jr).max():.1e},  max |compiled - jacrev| = {np.abs(Jc - Jr).max():.1e}")
print(f"first compiled call (Numba compiles the dual version, unless its disk cache has it): {first_call:.1f} s")
from duals.arguments import COMPILED_LANES
print(f"compiled jacfwd pushes {COMPILED_LANES} directions per call")
'''),
("md", r"""
## 2. From tall to wide with $n\cdot m$ fixed

With the product $n\cdot m$ fixed (printed below), the matrices hold the same number of entries at
every point, so $f$ costs about the same everywhere and only the shape changes, from one input and
many outputs to many inputs and one output. The counting argument predicts `jacfwd` to cost about
$n$ evaluations of $f$ and `jacrev` about $m$, so the two would meet at $n = m$. Compiled forward
mode is timed from the printed lane count of inputs on (with fewer inputs its lane count, and so
its compiled specialisation, would change with $n$). For each point we also ask `duals.jacobian`
which mode its `"auto"` rule picks.
"""),
("code", r'''
NM = 1024
ns = [2 ** k for k in range(0, 11)]
t_f, t_fwd, t_rev, t_cmp, auto_pick = [], [], [], [], []
for n in progress(ns, "n·m fixed"):
    m = NM // n
    x, A, B = make_problem(n, m)
    t_f.append(best_time(lambda: f_numpy(x, A, B)))
    t_fwd.append(best_time(lambda: jac_fwd(x, A, B)))
    t_rev.append(best_time(lambda: jac_rev(x, A, B)))
    t_cmp.append(best_time(lambda: jac_compiled(x, A, B)) if n >= COMPILED_LANES else np.nan)
    auto_pick.append(duals.jacobian(f_numpy).mode_for(x, A, B))
ns, t_f, t_fwd, t_rev, t_cmp = map(np.array, (ns, t_f, t_fwd, t_rev, t_cmp))
ms = NM // ns

# where each mode wins: forward at every n up to n_fwd, reverse at every n from n_rev on; the
# crossover is where a straight line through log(t_fwd / t_rev) against log n, fitted from n_fwd
# to n_rev, changes sign (between two neighbouring points it is their interpolation)
r = np.log(t_fwd / t_rev)
assert r[0] < 0 < r[-1], "forward should win with one input and reverse with one output"
rev_wins = r > 0
n_fwd = int(ns[np.cumsum(rev_wins) == 0].max())
n_rev = int(ns[np.cumsum(~rev_wins[::-1])[::-1] == 0].min())
between = (ns >= n_fwd) & (ns <= n_rev)
slope, intercept = np.polyfit(np.log(ns[between]), r[between], 1)
n_cross = float(np.exp(-intercept / slope))
n_auto = int(ns[auto_pick.index("rev")])
print(f"n·m = {NM}; the counting argument's crossover: n = m = {np.sqrt(NM):.0f}")
print(f"jacfwd was faster at every n up to {n_fwd}, jacrev at every n from {n_rev} on; "
      f"measured crossover n ≈ {n_cross:.0f} (m ≈ {NM / n_cross:.0f})")
print(f"duals.jacobian(mode='auto') takes reverse mode from n = {n_auto} on this sweep")
print(f"n = 1,    m = {NM}: jacrev / jacfwd = {t_rev[0] / t_fwd[0]:.0f}x")
print(f"n = {NM}, m = 1:    jacfwd / jacrev = {t_fwd[-1] / t_rev[-1]:.0f}x")

def growth(counts, cost, least=128):
    """slope of log(cost) against log(count) where the count is at least `least`"""
    keep = (counts >= least) & np.isfinite(cost)
    return np.polyfit(np.log(counts[keep]), np.log(cost[keep]), 1)[0]
print(f"growth exponent of time(J)/time(f) where the count is >= 128 (the counting argument: 1): "
      f"jacfwd {growth(ns, t_fwd / t_f):.2f} in n, jacrev {growth(ms, t_rev / t_f):.2f} in m, "
      f"compiled jacfwd {growth(ns, t_cmp / t_f):.2f} in n")
print(f"compiled jacfwd / jacfwd: {t_cmp[ns == COMPILED_LANES][0] / t_fwd[ns == COMPILED_LANES][0]:.2f} at n = {COMPILED_LANES}, "
      f"{t_cmp[-1] / t_fwd[-1]:.2f} at n = {NM}")
'''),
("code", r'''
fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.4))
ax.loglog(ns, t_fwd * 1e3, "o-", label="jacfwd")
ax.loglog(ns, t_rev * 1e3, "s-", label="jacrev")
ax.loglog(ns, t_cmp * 1e3, "^-", label="jacfwd of @njit f (compiled)")
ax.loglog(ns, t_f * 1e3, ":", color="gray", label="f itself (NumPy)")
picked = np.where(np.array(auto_pick) == "fwd", t_fwd, t_rev)
ax.loglog(ns, picked * 1e3, "o", ms=13, mfc="none", mec="k", label="mode='auto' picks")
ax.axvline(n_cross, color="k", lw=0.8, ls="--")
if n_rev > 2 * n_fwd:
    ax.axvspan(n_fwd, n_rev, color="gray", alpha=0.15, lw=0)   # neither mode faster at every n here
ax.text(n_cross * 1.1, t_f.min() * 1e3 * 2, f"measured crossover\nn ≈ {n_cross:.0f}", fontsize=9)
ax.set_xlabel(f"n inputs  (m = {NM} / n outputs)")
ax.set_ylabel("time per Jacobian [ms]")
ax.set_title(f"measured: Jacobian of f, n·m = {NM}")
ax.set_ylim(top=ax.get_ylim()[1] * 8)
ax.legend(fontsize=8, ncol=2, loc="upper center")

bx.loglog(ns, t_fwd / t_f, "o-", label="jacfwd, measured")
bx.loglog(ns, t_rev / t_f, "s-", label="jacrev, measured")
bx.loglog(ns, t_cmp / t_f, "^-", label="compiled jacfwd, measured")
bx.loglog(ns, ns, "--", color="C0", label="counting: n sweeps of f")
bx.loglog(ns, ms, "--", color="C1", label="counting: m sweeps of f")
bx.set_xlabel(f"n inputs  (m = {NM} / n outputs)")
bx.set_ylabel("cost in evaluations of f: time(J) / time(f)")
bx.set_title("measured cost next to the counting argument")
bx.set_ylim(top=bx.get_ylim()[1] * 8)
bx.legend(fontsize=8, ncol=2, loc="upper center")
plt.tight_layout(); plt.show()
'''),
("md", r"""
On the left, `jacfwd` costs about the same while fixed per-call work dominates and then grows with
$n$; `jacrev` falls as $m$ shrinks and then levels off. They cross at the printed crossover
(dashed; a grey band, if any, spans the sizes where neither mode won at every point, the two being
within noise there): forward mode is faster for $n \ll m$, reverse mode for $m \ll n$. The measured crossover need not
sit at the counting argument's $n = m$, because the two modes' fixed costs differ (reverse mode
first records a tape, in Python). The hollow circles mark the mode `duals.jacobian(mode="auto")`
picks: at both ends of the sweep they sit on the lower curve, and the printed line says where on
this sweep the rule switches to reverse mode.

On the right the same times are divided by the time of one evaluation of $f$ and drawn next to the
counting argument (dashed: $n$ and $m$ evaluations). Where the count is large the measured curves
rise with it (compare the printed growth exponents with the count's 1); where it is small they
flatten onto a floor of fixed work per call, far above the count, because one evaluation of $f$ at
these sizes is only a few NumPy calls. Compiled forward mode runs the loops of `f_compiled` with no
Python in between: it is far cheaper than `jacfwd` where few directions are pushed, and its
advantage shrinks as $n$ grows (the printed ratios), since it pushes a fixed number of directions
per call while `jacfwd` pushes all the directions of a chunk through each NumPy operation at once.

## 3. The `"auto"` rule against the measured winner

`duals.jacobian(f, mode="auto")` takes reverse mode when the inputs outnumber both a fixed count and
a multiple of the outputs (the constants are printed below, from `duals.transforms`). A single
line through shape space tests only one point of that rule, so here both modes are timed on a grid
of $(n, m)$:
"""),
("code", r'''
from duals.transforms import REVERSE_FROM, REVERSE_RATIO
print(f"rule: reverse mode when n > {REVERSE_FROM} and n > {REVERSE_RATIO} m, forward mode otherwise")

grid = [8, 32, 128, 512]
cells = [(n, m) for n in grid for m in grid]
rows = []
for n, m in progress(cells, "grid"):
    x, A, B = make_problem(n, m)
    tf = best_time(lambda: jac_fwd(x, A, B))
    tr = best_time(lambda: jac_rev(x, A, B))
    rows.append((n, m, tf, tr, duals.jacobian(f_numpy).mode_for(x, A, B)))

print(f"\n{'n':>5} {'m':>5} {'jacfwd ms':>10} {'jacrev ms':>10} {'faster':>7} {'auto':>5} {'auto / best':>12}")
cost = []
for n, m, tf, tr, pick in rows:
    faster = "fwd" if tf < tr else "rev"
    ratio = (tf if pick == "fwd" else tr) / min(tf, tr)
    cost.append(ratio)
    print(f"{n:5d} {m:5d} {tf * 1e3:10.3f} {tr * 1e3:10.3f} {faster:>7} {pick:>5} {ratio:12.2f}")
agree = sum(c == 1.0 for c in cost)
CLEAR = 1.5
clear = [(row, c) for row, c in zip(rows, cost) if max(row[2] / row[3], row[3] / row[2]) > CLEAR]
print(f"\nauto picked the faster mode at {agree} of {len(rows)} shapes; "
      f"where it did not, its pick took at most {max(cost):.2f}x the faster mode's time")
print(f"shapes where one mode was more than {CLEAR}x faster than the other: {len(clear)}; "
      f"auto picked that mode at {sum(c == 1.0 for _, c in clear)} of them")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7.5, 5.6))
n_, m_, tf_, tr_ = (np.array([row[k] for row in rows]) for k in range(4))
advantage = np.log2(tf_ / tr_)                      # > 0: reverse mode was faster
limit = np.abs(advantage).max()
for pick, marker in (("fwd", "o"), ("rev", "s")):
    sel = np.array([row[4] == pick for row in rows])
    points = ax.scatter(n_[sel], m_[sel], c=advantage[sel], cmap="coolwarm", vmin=-limit, vmax=limit,
                        s=260, marker=marker, edgecolors="k")
    ax.plot([], [], marker, mfc="white", mec="k", ms=12, label=f"auto picks {pick}")
m_line = np.geomspace(grid[0] / 2, grid[-1] * 2, 200)
ax.plot(np.maximum(REVERSE_FROM, REVERSE_RATIO * m_line), m_line, "k-", lw=1,
        label=f"rule boundary: reverse right of it (n > {REVERSE_FROM}, n > {REVERSE_RATIO} m)")
ax.set_xscale("log"); ax.set_yscale("log")
ax.set_xlim(grid[0] / 2, grid[-1] * 2); ax.set_ylim(grid[0] / 2, grid[-1] * 8)
ax.set_xlabel("n inputs"); ax.set_ylabel("m outputs")
ax.set_title("which mode was faster, and what the auto rule picks")
bar = fig.colorbar(points, ax=ax)
bar.set_label("log2(time jacfwd / time jacrev):  > 0 reverse faster")
ax.legend(fontsize=8, loc="upper left")
plt.tight_layout(); plt.show()
'''),
("md", r"""
Red: reverse mode was faster; blue: forward mode was; the paler the colour, the closer the two
modes. Circles mark the shapes where the rule picks forward mode, squares reverse mode, and the
black line is the rule's boundary. Where the outputs far outnumber the inputs (top left) the cells
are blue, and where the inputs far outnumber the outputs (bottom right) red, as the counting
argument says. The printed summary gives the verdict for this run: at how many shapes the rule
picked the faster mode, how many of the shapes where one mode was clearly faster it got right, and
the most its pick cost anywhere on the grid.

## 4. The cheap gradient principle

For a scalar $f:\mathbb{R}^n\to\mathbb{R}$ ($m = 1$), reverse mode gives the whole gradient for a
bounded multiple of the cost of $f$, whatever $n$ is. Forward mode needs $n$ directions, so its cost
ratio grows with $n$.
"""),
("code", r'''
def loss(x):
    y = np.sin(x) * np.exp(-0.1 * x * x)
    return np.sum(np.log1p(y * y)) + 0.5 * np.sum(np.tanh(x) ** 2)

g_rev, g_fwd = duals.grad(loss), duals.jacfwd(loss)
ns_g = [10 ** k for k in range(1, 6)]
ratio_rev, ratio_fwd, ns_fwd = [], [], []
for n in progress(ns_g, "grad / f"):
    x = rng.standard_normal(n)
    tf = best_time(lambda: loss(x))
    ratio_rev.append(best_time(lambda: g_rev(x)) / tf)
    if n <= 1000:
        ratio_fwd.append(best_time(lambda: g_fwd(x)) / tf)
        ns_fwd.append(n)
x = rng.standard_normal(50)
print("grad and jacfwd agree:", np.allclose(g_rev(x), g_fwd(x)))
for n, q in zip(ns_g, ratio_rev):
    print(f"n = {n:>7}:  time(grad) / time(f) = {q:6.2f}")
print(f"time(grad) / time(f) from n = {ns_g[0]} to {ns_g[-1]}: between {min(ratio_rev):.2f} and {max(ratio_rev):.2f}; "
      f"time(jacfwd) / time(f) grew {ratio_fwd[-1] / ratio_fwd[0]:.0f}x from n = {ns_fwd[0]} to {ns_fwd[-1]}")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(ns_g, ratio_rev, "o-", label="reverse: grad(f)")
ax.loglog(ns_fwd, ratio_fwd, "s-", label="forward: jacfwd(f)")
ax.set_xlabel("n inputs (one output)"); ax.set_ylabel("time(gradient) / time(f)")
ax.set_title("cheap gradient principle"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The reverse-mode ratio stays within the printed band over the whole range of $n$ (it is largest
for small $n$, where recording the tape in Python costs more than the arithmetic), while the
forward-mode ratio grows with $n$.

## 5. Memory: the tape against forward mode

Reverse mode keeps the values its backward pass needs, so its memory grows with the *depth* of the
computation. Forward mode carries one tangent next to each value and drops both once they are used.
The peak of `tracemalloc` for a chain of $K$ element-wise steps on $n$ values shows it (tracemalloc
sees NumPy's allocations; compiled code allocates outside it, so compiled mode is not measured here):
"""),
("code", r'''
n_mem = 100_000
def chain(K):
    def f(x):
        for _ in range(K):
            x = np.sin(x) * 1.01 + 0.1
        return np.sum(x)
    return f

def peak_mib(fn):
    fn()                                    # warm-up outside the measurement
    tracemalloc.start(); tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20

x = rng.standard_normal(n_mem)
v = np.ones_like(x)
Ks = [1, 2, 4, 8, 16, 32]
mem_rev, mem_fwd = [], []
for K in progress(Ks, "memory"):
    f = chain(K)
    mem_rev.append(peak_mib(lambda: duals.grad(f)(x)))
    mem_fwd.append(peak_mib(lambda: duals.jvp(f, (x,), (v,))))
array_mib = x.nbytes / 2 ** 20
per_step_rev = np.polyfit(Ks, mem_rev, 1)[0]
per_step_fwd = np.polyfit(Ks, mem_fwd, 1)[0]
print(f"one array of n = {n_mem} float64: {array_mib:.2f} MiB")
for K, a, b in zip(Ks, mem_rev, mem_fwd):
    print(f"K = {K:>3}:  tape (grad) peak {a:7.2f} MiB   forward (jvp) peak {b:6.2f} MiB")
print(f"growth per step: tape {per_step_rev:.2f} MiB = {per_step_rev / array_mib:.1f} arrays of n; "
      f"forward {per_step_fwd:.3f} MiB = {per_step_fwd / array_mib:.2f} arrays of n")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(Ks, mem_rev, "o-", label="reverse mode (tape), grad")
ax.plot(Ks, mem_fwd, "s-", label="forward mode, jvp")
ax.set_xlabel("depth K (element-wise steps)"); ax.set_ylabel("peak traced memory [MiB]")
ax.set_title(f"memory of one derivative, n = {n_mem}"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The tape's peak grows linearly with the depth (the printed growth per step, in arrays of size $n$:
the values each step saves); forward mode's peak stays flat. That is the price reverse mode pays
for its cheap gradient, and what `duals.checkpoint` trades back for recomputation.

## 6. The Hessian three ways

`duals.hessian` is forward-over-reverse: one reverse sweep for the gradient, pushed forward along
$n$ directions. Reverse-over-reverse records a tape of the backward pass itself; forward-over-forward
nests $n$ tangents inside $n$ tangents. All three give the same matrix:
"""),
("code", r'''
def energy(x):
    return np.sum(np.sin(x) ** 2 * np.cos(x[::-1])) + 0.25 * np.sum(x ** 4)

ways = {
    "fwd-over-rev (hessian)": duals.hessian(energy),
    "rev-over-rev": duals.jacrev(duals.jacrev(energy)),
    "fwd-over-fwd": duals.jacfwd(duals.jacfwd(energy)),
}
x = rng.standard_normal(30)
H = {k: h(x) for k, h in ways.items()}
ref = H["fwd-over-rev (hessian)"]
for k, h in H.items():
    print(f"{k:24s} max |H - H_fwd-over-rev| = {np.abs(h - ref).max():.2e}, symmetric: {np.allclose(h, h.T)}")

ns_h = [4, 16, 64, 128]
t_h = {k: [] for k in ways}
for n in progress(ns_h, "hessian"):
    x = rng.standard_normal(n)
    for k, h in ways.items():
        t_h[k].append(best_time(lambda: h(x)))
for k in ways:
    t_h[k] = np.array(t_h[k])
    print(f"{k:24s} n={ns_h[-1]}: {t_h[k][-1] * 1e3:8.2f} ms  "
          f"({t_h[k][-1] / t_h['fwd-over-rev (hessian)'][-1]:.2f}x fwd-over-rev)")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
for (k, t), mk in zip(t_h.items(), "o^s"):
    ax.loglog(ns_h, t * 1e3, mk + "-", label=k)
ax.set_xlabel("n inputs"); ax.set_ylabel("time per Hessian [ms]")
ax.set_title("Hessian of a scalar function of n variables"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The printed ratios compare the three compositions at the largest $n$ on this machine.
Forward-over-reverse is the default (`duals.hessian`): it needs no tape of a tape, and its cost is
$n$ gradient-sized sweeps. When only products $H v$ are needed (Newton–CG), `duals.hvp` gives one
for a small multiple of one gradient, without forming $H$.
"""),
    ]
