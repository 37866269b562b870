"""Cells of local_derivatives.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# Local derivatives you can see

The backward pass of every network multiplies *local derivatives*: the slope of each operation at
the point where it was evaluated. Four pictures of that one number:

1. activation functions and their slopes (computed by forward mode, not typed formulas), with a
   slider when widgets are available;
2. vanishing gradients: the product of many slopes below one, through a stack of $L$ layers;
3. learning rates: exact gradients, and gradient descent still diverges when the step exceeds
   $2/L$;
4. a NaN that the forward pass does not show, and `duals.detect_anomaly()` finding it.
"""),
("code", common + r'''
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))

def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + dnp.maximum(x, 0.0)

def gelu(x):   # tanh approximation
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))

activations = {
    "sigmoid": sigmoid,
    "tanh": np.tanh,
    "relu": lambda x: dnp.maximum(x, 0.0),
    "softplus": softplus,
    "gelu": gelu,
}

def slope(fn, xs):
    """element-wise derivative by one forward-mode pass: tangent 1 in every entry"""
    return duals.jvp(fn, (xs,), (np.ones_like(xs),))[1]

xs = np.linspace(-6.0, 6.0, 1201)       # contains 0 exactly
slopes = {k: slope(fn, xs) for k, fn in activations.items()}
print("slopes checked against reverse mode at 5 points:",
      all(np.allclose([duals.grad(fn)(float(v)) for v in (-3.0, -0.5, 0.25, 1.0, 4.0)],
                      slope(fn, np.array([-3.0, -0.5, 0.25, 1.0, 4.0]))) for fn in activations.values()))
'''),
("md", r"""
## 1. Activation functions and their slopes
"""),
("code", r'''
fig, axs = plt.subplots(1, 2, figsize=(12, 4))
for k, fn in activations.items():
    axs[0].plot(xs, fn(xs), label=k)
    axs[1].plot(xs, slopes[k], label=k)
axs[0].set_title("activation"); axs[1].set_title("slope, computed by duals.jvp")
axs[0].set_xlabel("x"); axs[0].set_ylabel("activation(x)")
axs[1].set_xlabel("x"); axs[1].set_ylabel("slope d activation / dx")
i0 = np.flatnonzero(xs == 0.0)[0]
axs[1].plot([0.0], [slopes["relu"][i0]], "ko", label="relu'(0) (library policy)")
for ax in axs:
    ax.axhline(0, color="k", lw=0.4); ax.axvline(0, color="k", lw=0.4); ax.legend(fontsize=8)
axs[0].set_ylim(-1.5, 4)
plt.tight_layout(); plt.show()

s = slopes["sigmoid"]
print(f"sigmoid'(0)  = {s[i0]:.4f}  (its largest value)")
print(f"sigmoid'(±6) = {s[0]:.2e}, {s[-1]:.2e}")
print(f"sigmoid'(±20) = {duals.grad(sigmoid)(-20.0):.2e}, {duals.grad(sigmoid)(20.0):.2e}")
print(f"tanh'(0) = {slopes['tanh'][i0]:.4f}, tanh'(6) = {slopes['tanh'][-1]:.2e}")
print(f"relu'(0) = {slopes['relu'][i0]} (ties split evenly), relu'(-1) = {duals.grad(activations['relu'])(-1.0)}, "
      f"relu'(1) = {duals.grad(activations['relu'])(1.0)}")
'''),
("md", r"""
The sigmoid's slope peaks at $x=0$ and collapses at both ends (the printed values at $\pm 6$ and
$\pm 20$); tanh is the same shape but four times steeper at the centre. ReLU's slope is exactly
0 or 1, and at the kink the library returns the printed policy value.

### Interactive: drag the point

With `ipywidgets` installed (the `notebook` extra) and a live kernel, a slider moves the point
and a selector picks the function; the tangent line there is drawn with the slope from
`duals.grad`. Without widgets (or in CI) the cell says so, and the static figure below shows a few
fixed points instead.
"""),
("code", r'''
def draw_tangent(name="sigmoid", x0=0.0, ax=None):
    fn = activations[name]
    y0, k = float(fn(x0)), float(duals.grad(fn)(float(x0)))
    show = ax is None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(xs, fn(xs), label=name)
    ax.plot(xs, y0 + k * (xs - x0), "--", label=f"tangent, slope {k:.4f}")
    ax.plot([x0], [y0], "ro")
    ax.set_ylim(-1.5, 3); ax.set_title(f"{name} at x = {x0:.2f}"); ax.legend(fontsize=8)
    ax.set_xlabel("x"); ax.set_ylabel(f"{name}(x) and its tangent")
    if show:
        plt.show()

try:
    import ipywidgets as widgets
    widgets.interact(lambda name, x0: draw_tangent(name, x0),
                     name=widgets.Dropdown(options=list(activations), value="sigmoid"),
                     x0=widgets.FloatSlider(value=0.0, min=-6.0, max=6.0, step=0.1))
except ImportError:
    print("ipywidgets is not installed: pip install ipywidgets for the slider; static figure below")
'''),
("code", r'''
fig, axs = plt.subplots(2, 3, figsize=(13, 6))
for ax, (name, x0) in zip(axs.ravel(), [("sigmoid", 0.0), ("sigmoid", 4.0), ("sigmoid", -5.0),
                                        ("relu", 0.0), ("softplus", 1.0), ("gelu", -0.75)]):
    draw_tangent(name, x0, ax=ax)
plt.tight_layout(); plt.show()
'''),
("md", r"""
## 2. Vanishing gradients

A stack of $L$ layers $h_{k+1} = \phi(W_k h_k + b_k)$ multiplies $L$ Jacobians
$\mathrm{diag}(\phi'(\cdot))\,W_k$. With sigmoid, $\phi' \le 1/4$, so the gradient with respect to
the input shrinks geometrically with depth. Below: $\|\nabla_x \sum h_L\|$ computed with
`duals.grad` through the whole stack, width 32, weights with the usual variance scaling
(Xavier $1/n$ for sigmoid and tanh, He $2/n$ for ReLU), averaged over 5 random networks.
"""),
("code", r'''
width, L_max, n_nets = 32, 40, 5
acts = {"sigmoid": sigmoid, "tanh": np.tanh, "relu": lambda z: dnp.maximum(z, 0.0)}
gain = {"sigmoid": 1.0, "tanh": 1.0, "relu": 2.0}
depths = np.arange(1, L_max + 1, 3)

def grad_norm(act, Ws, bs, x):
    def net(x):
        h = x
        for W, b in zip(Ws, bs):
            h = act(W @ h + b)
        return np.sum(h)
    return np.linalg.norm(duals.grad(net)(x))

rng = np.random.default_rng(0)
gnorms = {k: np.zeros(len(depths)) for k in acts}
for k, act in acts.items():
    for s in range(n_nets):
        Ws = [rng.standard_normal((width, width)) * np.sqrt(gain[k] / width) for _ in range(L_max)]
        bs = [0.1 * rng.standard_normal(width) for _ in range(L_max)]
        x = rng.standard_normal(width)
        for i, L in enumerate(depths):
            gnorms[k][i] += grad_norm(act, Ws[:L], bs[:L], x) / n_nets

for k in acts:
    rate = np.exp(np.polyfit(depths, np.log(gnorms[k]), 1)[0])
    print(f"{k:8s} |grad| at L=1: {gnorms[k][0]:.2e}   at L={depths[-1]}: {gnorms[k][-1]:.2e}   "
          f"fitted factor per layer: {rate:.3f}")
'''),
("code", r'''
fig, ax = plt.subplots(figsize=(7, 4))
for k in acts:
    ax.semilogy(depths, gnorms[k], "o-", label=k)
ax.set_xlabel("number of layers L"); ax.set_ylabel("‖∇ₓ Σ h_L‖ (mean of 5 nets)")
ax.set_title("gradient through a stack of L layers"); ax.legend()
plt.tight_layout(); plt.show()
'''),
("md", r"""
The printed "factor per layer" is the geometric rate: below 1 the gradient vanishes
exponentially with depth, above 1 it grows. Compare the three printed factors: sigmoid (slopes at
most 1/4, outputs centred at 1/2 rather than 0) against tanh with Xavier scaling and ReLU with He
scaling.

## 3. Learning rate: exact gradients, and still divergence

For the quadratic $f(x) = \tfrac12 x^T A x$, gradient descent $x \leftarrow x - \eta A x$ multiplies
the component along each eigenvector by $1 - \eta\lambda_i$. It converges iff
$|1-\eta\lambda_i| < 1$ for all $i$, i.e. **$\eta < 2/L$** with $L = \lambda_{\max}$ (the function is
$L$-smooth). We get $L$ from the Hessian computed by `duals.hessian`, then run several step sizes.
"""),
("code", r'''
A = np.array([[3.0, 1.0], [1.0, 10.0]])
quad = lambda x: 0.5 * x @ A @ x
H = duals.hessian(quad)(np.zeros(2))
L_smooth = np.linalg.eigvalsh(H).max()
bound = 2.0 / L_smooth
print("Hessian by duals.hessian:\n", H)
print(f"L = largest eigenvalue = {L_smooth:.4f};  step-size bound 2/L = {bound:.4f}")

def descend(f, x0, lr, steps):
    g = duals.value_and_grad(f)
    x, losses = np.array(x0, float), []
    for _ in range(steps):
        val, gx = g(x)
        losses.append(val)
        if not np.isfinite(val) or val > 1e12:
            break
        x = x - lr * gx
    return np.array(losses)

factors = [0.5, 0.9, 0.99, 1.01, 1.1]
runs_q = {}
for fct in factors:
    lr = fct * bound
    losses = descend(quad, [1.0, 1.0], lr, 150)
    diverged = bool(losses[-1] > losses[0])
    runs_q[fct] = losses
    print(f"lr = {fct:4.2f} x 2/L = {lr:.4f}: final loss {losses[-1]:.3e} -> {'DIVERGES' if diverged else 'converges'}")
    assert diverged == (lr > bound), "the 2/L bound should predict the outcome exactly"
print("check passed: every run with lr < 2/L converged and every run with lr > 2/L diverged")
'''),
("md", r"""
Rosenbrock, $f(x,y) = (1-x)^2 + 100(y-x^2)^2$, is not a quadratic: its curvature changes along the
path, so $2/\lambda_{\max}(H)$ is only a local bound. We compute $\lambda_{\max}$ at the start
$(-1.2, 1)$ and at the minimum $(1,1)$ with `duals.hessian`, and run gradient descent with step
sizes on both sides of them.
"""),
("code", r'''
def rosen(v):
    return (1.0 - v[0]) ** 2 + 100.0 * (v[1] - v[0] ** 2) ** 2

x_start = np.array([-1.2, 1.0])
lam_start = np.linalg.eigvalsh(duals.hessian(rosen)(x_start)).max()
lam_min = np.linalg.eigvalsh(duals.hessian(rosen)(np.array([1.0, 1.0]))).max()
print(f"lambda_max at start = {lam_start:.1f} -> 2/lambda = {2 / lam_start:.2e}")
print(f"lambda_max at (1,1) = {lam_min:.1f} -> 2/lambda = {2 / lam_min:.2e}")

np.seterr(over="ignore", invalid="ignore")
lrs = [2e-4, 1e-3, 0.9 * 2 / lam_start, 1.1 * 2 / lam_min, 1e-2]
runs_r, outcome = {}, {}
for lr in lrs:
    losses = descend(rosen, x_start, lr, 3000)
    runs_r[lr] = losses
    if not np.isfinite(losses[-1]) or losses[-1] > losses[0]:
        outcome[lr] = "DIVERGES"
    elif losses[-1] < 1e-8:
        outcome[lr] = "converges"
    else:
        outcome[lr] = "not at the minimum after 3000 steps"
    print(f"lr = {lr:.2e} ({lr * lam_min / 2:4.2f} x 2/lambda at (1,1), {lr * lam_start / 2:4.2f} x 2/lambda at start): "
          f"{len(losses):5d} steps, final loss {losses[-1]:.3e} -> {outcome[lr]}")
assert any(o == "DIVERGES" for o in outcome.values())
assert all(lr > 2 / lam_start for lr, o in outcome.items() if o == "DIVERGES"), \
    "a run diverged although its step is below the local bound at the start"
assert all(outcome[lr] != "converges" for lr in lrs if lr > 2 / lam_min), \
    "steps above 2/lambda_max at the minimum cannot settle there"
print("checks passed: only steps above the local bound 2/lambda_max diverge, "
      "and no step above 2/lambda_max at the minimum converges to it")
'''),
("code", r'''
fig, axs = plt.subplots(1, 2, figsize=(13, 4.2))
for fct, losses in runs_q.items():
    axs[0].semilogy(np.maximum(losses, 1e-300), label=f"lr = {fct} × 2/L")
axs[0].set_title("quadratic, L = λmax(A)"); axs[0].set_xlabel("step"); axs[0].set_ylabel("loss")
axs[0].set_ylim(1e-30, 1e6)
for lr, losses in runs_r.items():
    axs[1].semilogy(np.maximum(losses, 1e-300), label=f"lr = {lr:.1e}")
axs[1].set_title("Rosenbrock from (-1.2, 1)"); axs[1].set_xlabel("step"); axs[1].set_ylabel("loss")
axs[1].set_ylim(1e-12, 1e8)
for ax in axs:
    ax.legend(fontsize=8)
plt.tight_layout(); plt.show()
'''),
("md", r"""
Every gradient here is exact; the divergence is purely the step size overshooting along the
steepest curvature direction. On the quadratic the $2/L$ bound predicts each outcome exactly
(checked above). On Rosenbrock, steps above $2/\lambda_{\max}$ at the minimum can never settle
there (they bounce around the curved valley), the largest step is thrown out of the valley and
diverges, and small steps are stable but slow (the printed final losses after 3000 steps).

## 4. A NaN you cannot see in the forward pass

$\|x\| = \sqrt{\sum x_i^2}$ at $x = 0$ evaluates to a perfectly good $0$. Its gradient is
$x/\|x\| = 0/0$: the chain rule multiplies $\sqrt{\cdot}\,'(0) = \infty$ by the zero slope of
$\sum x_i^2$, and $\infty\cdot 0$ is NaN.
"""),
("code", r'''
np.seterr(divide="ignore", invalid="ignore")
def norm_by_hand(x):
    return np.sqrt(np.sum(x * x))

x0 = np.zeros(3)
print("forward value   :", norm_by_hand(x0))
print("gradient        :", duals.grad(norm_by_hand)(x0))
print("np.linalg.norm  : value", np.linalg.norm(x0), " gradient", duals.grad(np.linalg.norm)(x0),
      " (the library's norm primitive returns the subgradient 0 at 0)")
'''),
("md", r"""
The NaN came out at the end, with no sign of where it started. `duals.detect_anomaly()` checks
every value and every derivative as it is produced, and raises at the first NaN or inf, naming the
primitive and the line of user code that created it:
"""),
("code", r'''
try:
    with duals.detect_anomaly():
        duals.grad(norm_by_hand)(x0)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
'''),
("md", r"""
The fix is the library's `np.linalg.norm` (or `dnp.linalg.norm`), or a safe form such as
$\sqrt{\sum x_i^2 + \epsilon}$ when a smooth surrogate is acceptable:
"""),
("code", r'''
print("grad of sqrt(sum(x^2) + 1e-12) at 0:", duals.grad(lambda x: np.sqrt(np.sum(x * x) + 1e-12))(x0))
'''),
    ]
