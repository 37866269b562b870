"""Cells of forward_vs_reverse.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# Forward versus reverse mode: what a Jacobian costs

For $f:\mathbb{R}^n\to\mathbb{R}^m$, forward mode (`duals.jacfwd`) pushes one tangent per
*input* direction through $f$, reverse mode (`duals.jacrev`) pulls one cotangent per *output*
back through the recorded tape. So forward mode costs about $n$ evaluations of $f$ and reverse mode
about $m$ — plus the tape, which forward mode does not need.

This notebook measures that, on this machine, while it runs:

1. Jacobian cost as $n$ and $m$ sweep (with $n\cdot m$ fixed, then each alone), and the crossover
   where one mode starts to win — computed from the timings, not typed;
2. the *cheap gradient principle*: `grad(f)` costs a constant multiple of `f`, however large $n$ is;
3. memory: the tape (reverse mode) against forward mode, measured with `tracemalloc`;
4. the Hessian three ways: forward-over-reverse (`duals.hessian`), reverse-over-reverse and
   forward-over-forward.

Sizes are kept small so the notebook runs in well under a minute; absolute times depend on the
machine, the *shapes* of the curves do not.
"""),
("code", common + r'''
import gc

def best_time(fn, repeat=3, min_time=0.02):
    """Best-of-`repeat` wall time of fn(), each sample looping until min_time has passed."""
    fn()  # warm-up: compiles kernels, fills caches
    best = np.inf
    gc.collect(); gc.disable()    # like timeit: no garbage-collector pauses inside a sample
    try:
        for _ in range(repeat):
            k, t0 = 0, time.perf_counter()
            while True:
                fn(); k += 1
                dt = time.perf_counter() - t0
                if dt >= min_time:
                    break
            best = min(best, dt / k)
    finally:
        gc.enable()
    return best

def progress(items, label=""):
    """A plain text progress bar for the sweeps (works in any front end, and in CI logs)."""
    items = list(items)
    n, t0 = len(items), time.perf_counter()
    for i, item in enumerate(items):
        yield item
        done = int(30 * (i + 1) / n)
        sys.stdout.write(f"\r{label:<14}[{'#' * done}{'.' * (30 - done)}] {i + 1}/{n}  "
                         f"{time.perf_counter() - t0:5.1f} s")
        sys.stdout.flush()
    sys.stdout.write("\n")

print("duals", duals.__version__ if hasattr(duals, "__version__") else "")
'''),
("md", r"""
## 1. The test function

A small "layer": $f(x) = \tanh(A\sin x) + 0.1\,(Bx)^2$ with fixed random $A, B\in\mathbb{R}^{m\times n}$.
Its Jacobian is dense, so neither mode can exploit sparsity. Both modes agree to rounding:
"""),
("code", r'''
rng = np.random.default_rng(0)

def make_f(n, m):
    A = rng.standard_normal((m, n)) / np.sqrt(n)
    B = rng.standard_normal((m, n)) / np.sqrt(n)
    def f(x):
        return np.tanh(A @ np.sin(x)) + 0.1 * (B @ x) ** 2
    return f

f = make_f(5, 3)
x = rng.standard_normal(5)
Jf, Jr = duals.jacfwd(f)(x), duals.jacrev(f)(x)
print("Jacobian shape:", Jf.shape)
print("max |jacfwd - jacrev| =", np.abs(Jf - Jr).max())
'''),
("md", r"""
## 2. Sweep with $n\cdot m$ fixed

With $n\cdot m = 4096$ fixed, evaluating $f$ costs about the same at every point of the sweep;
only the *shape* changes, from tall ($n=1$, $m=4096$) to wide ($n=4096$, $m=1$).
Forward mode should get more expensive as $n$ grows and reverse mode cheaper.
"""),
("code", r'''
NM = 4096
ns = [2 ** k for k in range(0, 13)]
t_fwd, t_rev, t_f = [], [], []
for n in progress(ns, "n*m fixed"):
    m = NM // n
    f = make_f(n, m)
    x = rng.standard_normal(n)
    t_f.append(best_time(lambda: f(x), repeat=5))
    t_fwd.append(best_time(lambda: duals.jacfwd(f)(x), repeat=5))
    t_rev.append(best_time(lambda: duals.jacrev(f)(x), repeat=5))
t_fwd, t_rev, t_f = map(np.array, (t_fwd, t_rev, t_f))

# crossover: where log(t_fwd / t_rev) changes sign, interpolated linearly in log n
r = np.log(t_fwd / t_rev)
i = int(np.argmax(r > 0))          # first n at which reverse mode is faster
assert r[0] < 0 < r[-1] and i > 0, "expected forward to win at n=1 and reverse at m=1"
ln = np.log(ns)
n_cross = float(np.exp(ln[i - 1] + (ln[i] - ln[i - 1]) * (-r[i - 1]) / (r[i] - r[i - 1])))
print(f"crossover at n ≈ {n_cross:.0f} inputs (m ≈ {NM / n_cross:.0f} outputs)")
print(f"at n=1,    m={NM}: jacrev / jacfwd = {t_rev[0] / t_fwd[0]:6.1f}x slower")
print(f"at n={NM}, m=1:    jacfwd / jacrev = {t_fwd[-1] / t_rev[-1]:6.1f}x slower")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4.2))
ax.loglog(ns, t_fwd * 1e3, "o-", label="jacfwd (forward)")
ax.loglog(ns, t_rev * 1e3, "s-", label="jacrev (reverse)")
ax.loglog(ns, t_f * 1e3, ":", color="gray", label="f itself")
ax.axvline(n_cross, color="k", lw=0.8, ls="--")
ax.text(n_cross * 1.1, ax.get_ylim()[1] * 0.5, f"crossover\nn ≈ {n_cross:.0f}", fontsize=9)
ax.set_xlabel("n (inputs);  m = 4096 / n outputs")
ax.set_ylabel("time per Jacobian [ms]")
ax.set_title("Jacobian of f: R^n → R^m with n·m = 4096")
ax.legend(); plt.tight_layout(); plt.show()
'''),
("md", r"""
The printed crossover is where the two curves meet; to its left (few inputs, many outputs)
forward mode wins, to its right (many inputs, few outputs) reverse mode wins. If one reverse
sweep cost exactly one forward sweep it would sit at $n = m = 64$; the printed value shows how far
the tape's bookkeeping and the batching of directions move it on this machine (the timings are
wall-clock, so it moves a little from run to run).

## 3. Each dimension alone

Now hold one side at 16 and sweep the other. Since $f$ itself gets dearer as either side grows,
the cost is shown in units of one evaluation of $f$: by the counting argument `jacfwd` should
grow with $n$ and not with $m$, and `jacrev` the other way round.
"""),
("code", r'''
sizes = [2 ** k for k in range(2, 12)]
sweep = {}
for which in ("n", "m"):
    tf_, tr_, t0_ = [], [], []
    for s in progress(sizes, f"sweep {which}"):
        n, m = (s, 16) if which == "n" else (16, s)
        f = make_f(n, m)
        x = rng.standard_normal(n)
        t0_.append(best_time(lambda: f(x), repeat=3, min_time=0.03))
        tf_.append(best_time(lambda: duals.jacfwd(f)(x), repeat=3, min_time=0.03))
        tr_.append(best_time(lambda: duals.jacrev(f)(x), repeat=3, min_time=0.03))
    # cost in units of one evaluation of f (f itself gets dearer as n or m grows)
    sweep[which] = (np.array(tf_) / np.array(t0_), np.array(tr_) / np.array(t0_))

def loglog_slope(xs, ts, k=6):
    """slope of log(cost) against log(size) over the k largest sizes"""
    return np.polyfit(np.log(xs[-k:]), np.log(ts[-k:]), 1)[0]

slopes = {}
for which in ("n", "m"):
    tf_, tr_ = sweep[which]
    slopes[which] = (loglog_slope(sizes, tf_), loglog_slope(sizes, tr_))
    print(f"sweep {which} (other side = 16): growth exponent of time(J)/time(f) over the largest sizes: "
          f"jacfwd {slopes[which][0]:.2f}, jacrev {slopes[which][1]:.2f}")
'''),
("code", r'''
fig, axs = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, which in zip(axs, ("n", "m")):
    tf_, tr_ = sweep[which]
    ax.loglog(sizes, tf_, "o-", label="jacfwd")
    ax.loglog(sizes, tr_, "s-", label="jacrev")
    ax.set_xlabel(f"{which}  (the other dimension = 16)")
    ax.set_title(f"sweeping {which}")
    ax.legend()
axs[0].set_ylabel("time(Jacobian) / time(f)")
plt.tight_layout(); plt.show()
'''),
("md", r"""
Both modes push many directions through $f$ *together* (`chunk_size` lanes per sweep), so
one sweep is a few large array operations rather than many small ones. The cost of pushing one
direction at a time:
"""),
("code", r'''
f = make_f(8, 512)
x = rng.standard_normal(8)
t_default = best_time(lambda: duals.jacrev(f)(x))
t_one = best_time(lambda: duals.jacrev(f, chunk_size=1)(x))
print(f"jacrev, n=8, m=512: default chunk {t_default * 1e3:.2f} ms, chunk_size=1 {t_one * 1e3:.2f} ms "
      f"({t_one / t_default:.1f}x slower)")
print("same Jacobian:", np.allclose(duals.jacrev(f)(x), duals.jacrev(f, chunk_size=1)(x)))
'''),
("md", r"""
Compare the printed growth exponents with the counting argument (exponent 1 for the mode whose
number of sweeps grows, 0 for the other). Deviations come from fixed per-call overhead at
small sizes and from how well each sweep batches its directions (`chunk_size`) into matrix products.

## 4. The cheap gradient principle

For a scalar $f:\mathbb{R}^n\to\mathbb{R}$ reverse mode gives the whole gradient for a constant
multiple of the cost of $f$ — independent of $n$. Forward mode needs $n$ directions, so its
cost ratio grows like $n$.
"""),
("code", r'''
def loss(x):
    y = np.sin(x) * np.exp(-0.1 * x * x)
    return np.sum(np.log1p(y * y)) + 0.5 * np.sum(np.tanh(x) ** 2)

g_rev, g_fwd = duals.grad(loss), duals.jacfwd(loss)
ns_g = [10 ** k for k in range(1, 7)]
ratio_rev, ratio_fwd, ns_fwd = [], [], []
for n in progress(ns_g, "grad/f"):
    x = rng.standard_normal(n)
    tf = best_time(lambda: loss(x))
    ratio_rev.append(best_time(lambda: g_rev(x)) / tf)
    if n <= 1000:
        ratio_fwd.append(best_time(lambda: g_fwd(x), repeat=2) / tf)
        ns_fwd.append(n)
x = rng.standard_normal(50)
print("grad and jacfwd agree:", np.allclose(g_rev(x), g_fwd(x)))
for n, r in zip(ns_g, ratio_rev):
    print(f"n = {n:>8}:  time(grad) / time(f) = {r:6.2f}")
big = [r for n, r in zip(ns_g, ratio_rev) if n >= 10 ** 4]
print(f"for n >= 1e4 the ratio stays within [{min(big):.2f}, {max(big):.2f}]")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(ns_g, ratio_rev, "o-", label="reverse: grad(f)")
ax.loglog(ns_fwd, ratio_fwd, "s-", label="forward: jacfwd(f)")
ax.set_xlabel("n"); ax.set_ylabel("time(gradient) / time(f)")
ax.set_title("cheap gradient principle"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
For small $n$ the ratio is dominated by per-call overhead of the tape (building nodes in Python);
once $n$ is large enough for the array arithmetic to dominate, the reverse-mode ratio stays flat
(the printed range for $n\ge 10^4$), while forward mode keeps growing with $n$.

## 5. Memory: the tape against forward mode

Reverse mode must keep the intermediate values that the backward pass needs, so its memory grows
with the *depth* of the computation. Forward mode carries one tangent next to each value and
can drop both as soon as they are used. We measure the peak of `tracemalloc` for a chain of
$K$ element-wise steps on $n = 10^5$ values.
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
Ks = [1, 2, 4, 8, 16, 32, 64]
mem_rev, mem_fwd = [], []
for K in progress(Ks, "memory"):
    f = chain(K)
    mem_rev.append(peak_mib(lambda: duals.grad(f)(x)))
    mem_fwd.append(peak_mib(lambda: duals.jvp(f, (x,), (v,))))
array_mib = x.nbytes / 2 ** 20
per_step = np.polyfit(Ks, mem_rev, 1)[0]
print(f"one array of n = {n_mem}: {array_mib:.2f} MiB")
for K, a, b in zip(Ks, mem_rev, mem_fwd):
    print(f"K = {K:>3}:  tape (grad) peak {a:7.2f} MiB   forward (jvp) peak {b:6.2f} MiB")
print(f"tape grows by {per_step:.2f} MiB per step = {per_step / array_mib:.1f} arrays of size n per step; "
      f"forward mode at K={Ks[-1]} uses {mem_fwd[-1] / mem_fwd[0]:.2f}x its K=1 memory")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(Ks, mem_rev, "o-", label="reverse mode (tape), grad")
ax.plot(Ks, mem_fwd, "s-", label="forward mode, jvp")
ax.set_xlabel("depth K (element-wise steps)"); ax.set_ylabel("peak traced memory [MiB]")
ax.set_title(f"memory for n = {n_mem}"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The tape's peak grows linearly with depth (the printed MiB per step: the saved inputs of each
step); forward mode's peak stays flat. That is the price reverse mode pays for its cheap gradient
— and what `duals.checkpoint` trades back for recomputation.

## 6. The Hessian three ways

`duals.hessian` is forward-over-reverse: one reverse sweep for the gradient, pushed forward along
$n$ directions. Reverse-over-reverse records a tape of the backward pass itself; forward-over-forward
needs $n^2$-sized nested tangents. All three give the same matrix:
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

ns_h = [4, 16, 64, 256]
t_h = {k: [] for k in ways}
for n in progress(ns_h, "hessian"):
    x = rng.standard_normal(n)
    for k, h in ways.items():
        t_h[k].append(best_time(lambda: h(x), repeat=2))
for k in ways:
    t_h[k] = np.array(t_h[k])
    print(f"{k:24s} n={ns_h[-1]}: {t_h[k][-1] * 1e3:8.2f} ms  "
          f"({t_h[k][-1] / t_h['fwd-over-rev (hessian)'][-1]:.2f}x fwd-over-rev)")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
for (k, t), mk in zip(t_h.items(), "o^s"):
    ax.loglog(ns_h, t * 1e3, mk + "-", label=k)
ax.set_xlabel("n"); ax.set_ylabel("time per Hessian [ms]")
ax.set_title("Hessian of a scalar function of n variables"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The printed ratios at the largest $n$ compare the three compositions on this machine.
Forward-over-reverse is the usual default (`duals.hessian`): it needs no tape of a tape, and its
cost is $n$ gradient-sized sweeps. When only products $H v$ are needed (Newton–CG), `duals.hvp`
gives one of them for a small multiple of one gradient, without forming $H$.
"""),
    ]
