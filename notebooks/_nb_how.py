"""Cells of how_autodiff_works.ipynb (see build.py)."""


def cells(common):
    return [
("md", r"""
# How automatic differentiation works

Automatic differentiation applies the chain rule to the *operations your program executes*,
one at a time, with exact local derivatives. No symbolic formula, no step size. It comes in two
directions:

* **forward mode** carries a derivative next to each value, with dual numbers $a + b\varepsilon$,
  $\varepsilon^2 = 0$;
* **reverse mode** records the operations on a *tape* and walks it backwards, accumulating
  $\partial(\text{output})/\partial(\text{each intermediate})$.

This notebook builds both by hand, then shows them in `duals`: the tape as a graph, gradient
accumulation, `retain_graph`, `detach` / `no_grad`, perturbation confusion, the library's policy
at points where a function has no derivative, and every pitfall with the error the library gives.
"""),
("code", common + r'''
def show_error(fn):
    """Run fn and print the exception the library raises (the message is the documentation)."""
    try:
        fn()
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
    else:
        print("no error")
'''),
("md", r"""
## 1. Dual numbers by hand

If $x = a + b\varepsilon$ with $\varepsilon^2=0$, then $f(x) = f(a) + f'(a)\,b\,\varepsilon$ for every
polynomial — and we *define* it that way for $\sin$, $\exp$, …. Twenty lines suffice:
"""),
("code", r'''
import math

class MyDual:
    def __init__(self, a, b=0.0):
        self.a, self.b = a, b                      # value, derivative
    def __add__(self, o):
        o = o if isinstance(o, MyDual) else MyDual(o)
        return MyDual(self.a + o.a, self.b + o.b)
    __radd__ = __add__
    def __mul__(self, o):
        o = o if isinstance(o, MyDual) else MyDual(o)
        return MyDual(self.a * o.a, self.a * o.b + self.b * o.a)   # (a+bε)(c+dε) = ac + (ad+bc)ε
    __rmul__ = __mul__
    def __repr__(self):
        return f"{self.a} + {self.b}ε"

def my_sin(x):
    return MyDual(math.sin(x.a), math.cos(x.a) * x.b)

def f(x):
    return x * x * 3.0 + my_sin(x)          # f'(x) = 6x + cos x

x0 = 2.0
by_hand = f(MyDual(x0, 1.0))
print("by hand :", by_hand)
print("formula :", 6 * x0 + math.cos(x0))

# the same with the library's dual number, and with the transformation built on it
d = duals.Dual(x0, 1.0)
e = d * d * 3.0 + np.sin(d)
print("duals.Dual: primal", float(e.primal), " tangent", float(e.tangent))
print("duals.jvp :", duals.jvp(lambda x: x * x * 3.0 + np.sin(x), (x0,), (1.0,)))
'''),
("md", r"""
## 2. The tape, printed as a graph

`duals.Var` records every operation. Each result has a `grad_fn` node named after the
operation's backward rule; `next_functions` links to the nodes (or leaves) that produced its
inputs. Walking these links from the output prints the graph that `backward()` will traverse.
"""),
("code", r'''
x = duals.Var(np.array(2.0))
y = duals.Var(np.array(3.0))
z = x * y + np.exp(x) * np.sin(y)

def label(node):
    return node.name if hasattr(node, "name") and not isinstance(node, duals.Var) else \
        f"leaf {'x' if node is x else 'y' if node is y else '?'} = {node.value}"

edges = []
def walk(node, depth=0, seen=None):
    print("    " * depth + ("└─ " if depth else "") + label(node))
    for child in getattr(node, "next_functions", ()) if not isinstance(node, duals.Var) else ():
        if child is not None:
            edges.append((node, child))
            walk(child, depth + 1)

print("z =", z.value)
walk(z.grad_fn)
'''),
("code", r'''
# the same graph as a picture: layers by depth from the output
nodes, depth = [], {}
def collect(node, d=0):
    if id(node) not in depth:
        nodes.append(node)
    depth[id(node)] = max(depth.get(id(node), 0), d)
    if not isinstance(node, duals.Var):
        for c in node.next_functions:
            if c is not None:
                collect(c, d + 1)
collect(z.grad_fn)
levels = {}
for nd in nodes:
    levels.setdefault(depth[id(nd)], []).append(nd)
pos = {id(nd): (i - (len(L) - 1) / 2, -d) for d, L in levels.items() for i, nd in enumerate(L)}
fig, ax = plt.subplots(figsize=(6, 4))
for a, b in edges:
    (x1, y1), (x2, y2) = pos[id(a)], pos[id(b)]
    ax.annotate("", xy=(x2, y2 + 0.12), xytext=(x1, y1 - 0.12),
                arrowprops=dict(arrowstyle="->", color="gray"))
for nd in nodes:
    px, py = pos[id(nd)]
    leaf = isinstance(nd, duals.Var)
    ax.text(px, py, label(nd), ha="center", va="center", fontsize=9,
            bbox=dict(boxstyle="round", fc="#ffe9b3" if leaf else "#cfe3ff"))
ax.set_xlim(-1.8, 1.8); ax.set_ylim(-max(levels) - 0.6, 0.6); ax.axis("off")
ax.set_title("tape of z = x*y + exp(x)*sin(y)  (arrows: backward() direction)")
plt.tight_layout(); plt.show()
'''),
("md", r"""
## 3. `backward()` accumulates; `zero_grad` clears

`backward()` seeds $\partial z/\partial z = 1$ and walks the graph in reverse topological order,
**adding** into `.grad` of every leaf, like PyTorch. A second backward pass (on a graph kept
with `retain_graph=True`) therefore doubles the gradient unless it is cleared first.
"""),
("code", r'''
x = duals.Var(np.array(2.0)); y = duals.Var(np.array(3.0))
z = x * y + np.exp(x) * np.sin(y)
z.backward(retain_graph=True)
print("after 1st backward: x.grad =", x.grad, " y.grad =", y.grad)
print("analytic          : dz/dx  =", 3.0 + np.exp(2.0) * np.sin(3.0), " dz/dy =", 2.0 + np.exp(2.0) * np.cos(3.0))
z.backward(retain_graph=True)
print("after 2nd backward: x.grad =", x.grad, "(accumulated: twice the value)")
x.zero_grad(); y.zero_grad()
print("after zero_grad   : x.grad =", x.grad)
z.backward()
print("after 3rd backward: x.grad =", x.grad)
'''),
("md", r"""
## 4. `retain_graph`: the tape is freed after a backward pass

To save memory, the values saved for the backward pass are released once it has run. Walking
the same graph again is an error that says what to do:
"""),
("code", r'''
x = duals.Var(np.array(2.0))
z = np.sin(x) * x
z.backward()
show_error(lambda: z.backward())
'''),
("md", r"""
## 5. `detach` and `no_grad`: cutting the tape

`detach()` returns the same value cut from the tape (a constant from then on); inside
`with duals.no_grad():` nothing is recorded. `duals.stop_gradient` does the same in the
functional transformations.
"""),
("code", r'''
x = duals.Var(np.array(3.0))
z = x * x.detach()             # d/dx of x * const = const = 3, not 2x = 6
z.backward()
print("d/dx [x * x.detach()] =", x.grad)

with duals.no_grad():
    w = x * x
print("under no_grad, x*x is a", type(w).__name__, "with no grad_fn:", getattr(w, "grad_fn", None))

print("grad of x * stop_gradient(x) at 3:", duals.grad(lambda x: x * duals.stop_gradient(x))(3.0))
'''),
("md", r"""
## 6. Perturbation confusion

Nested derivatives must keep their perturbations apart. In
$$\frac{d}{dx}\Big[x \cdot \frac{d}{dy}(x + y)\Big|_{y=1}\Big]_{x=1}$$
the inner derivative is $1$ whatever $x$ is, so the answer is $1$. An implementation that does not
tag its perturbations mixes the inner $\varepsilon$ with the outer one and returns 2.
"""),
("code", r'''
val = duals.grad(lambda x: x * duals.grad(lambda y: x + y)(1.0))(1.0)
print("grad(lambda x: x * grad(lambda y: x + y)(1.0))(1.0) =", val)
assert val == 1.0
# the same in forward mode, nested
val_fwd = duals.jacfwd(lambda x: x * duals.jacfwd(lambda y: x + y)(1.0))(1.0)
print("the same with jacfwd inside jacfwd                   =", val_fwd)

# what an untagged implementation does: our MyDual from section 1, nested naively
def naive_derivative(g, at):
    return g(MyDual(at, 1.0)).b
def outer(x):
    inner = naive_derivative(lambda y: x + y, 1.0)   # x is a MyDual here; the inner ε is the same ε
    return x * inner
print("untagged hand-made duals give                        =", naive_derivative(outer, 1.0))
'''),
("md", r"""
The hand-made version is wrong because `x + y` with both carrying an untagged $\varepsilon$ reports
$d(x+y)/dy = 2$. The library tags each level of nesting, so inner and outer perturbations never mix.

## 7. Points where there is no derivative: the policy

Some functions have kinks or infinite slopes. `duals` returns a fixed, documented value there
(the same in forward and reverse mode):
"""),
("code", r'''
relu = lambda x: dnp.maximum(x, 0.0)
with np.errstate(divide="ignore"):   # sqrt'(0) = 1/(2*0) = inf is the point here, not a warning
    policy = {
        "abs'(0)": duals.grad(abs)(0.0),
        "relu'(0) via dnp.maximum(x, 0)": duals.grad(relu)(0.0),
        "sqrt'(0)": duals.grad(np.sqrt)(0.0),
    }
    policy_fwd = {
        "abs'(0)": duals.jvp(abs, (0.0,), (1.0,))[1],
        "relu'(0) via dnp.maximum(x, 0)": duals.jvp(relu, (0.0,), (1.0,))[1],
        "sqrt'(0)": duals.jvp(np.sqrt, (0.0,), (1.0,))[1],
    }
for k in policy:
    print(f"{k:32s} reverse: {policy[k]:<5}  forward: {policy_fwd[k]}")
'''),
("code", r'''
CLIP = 3.0                                        # slopes are drawn clipped to [-CLIP, CLIP]
panels = [("abs", np.abs, np.linspace(-1.0, 1.0, 201)),          # each grid contains 0 exactly
          ("relu = maximum(x, 0)", relu, np.linspace(-1.0, 1.0, 201)),
          ("sqrt (defined for x >= 0)", np.sqrt, np.linspace(0.0, 1.0, 101))]
fig, axs = plt.subplots(1, 3, figsize=(12, 4.4))
for ax, (name, fn, xs) in zip(axs, panels):
    with np.errstate(divide="ignore"):
        val, slope = duals.jvp(fn, (xs,), (np.ones_like(xs),))
        at_zero = float(duals.grad(fn)(0.0))
    ax.plot(xs, val, label=name)
    ax.plot(xs, np.clip(slope, -CLIP, CLIP), ".", ms=2, label=f"slope by duals (clipped to ±{CLIP:g})")
    off_scale = abs(at_zero) > CLIP
    ax.plot([0.0], [np.clip(at_zero, -CLIP, CLIP)], "r^" if off_scale else "ro",
            label=f"slope at 0 = {at_zero:g}" + (" (off the scale: drawn at the clip)" if off_scale else ""))
    ax.set_xlabel("x"); ax.set_ylabel("value, and slope d/dx")
    ax.set_title(name); ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
plt.tight_layout(); plt.show()
'''),
("md", r"""
The red marker is the slope `duals.grad` returns at exactly $0$ (its value is in the legend).
`abs` takes $0$ at $0$ (a valid subgradient). `maximum(x, 0)` splits ties evenly, $0.5$ to each
argument. `sqrt`, drawn where it is defined, gives `inf` at 0: the true one-sided slope, drawn as
a triangle at the top of the clipped scale. That `inf` becomes a NaN as soon as
it is multiplied by a zero — see `local_derivatives.ipynb` for `sqrt(sum(x**2))` at 0, and
`duals.detect_anomaly()`, which names the operation.

## 8. Pitfalls, and what the library says

Each of these raises an error that names the problem and the fix:
"""),
("code", r'''
print("1. backward() on a non-scalar without gradient=")
v = duals.Var(np.array([1.0, 2.0]))
show_error(lambda: (v * 2.0).backward())

print("\n2. a value saved for backward, modified in place")
v = duals.Var(np.array([1.0, 2.0]))
s = np.sin(v); loss = np.sum(s * s)
s.value[0] = 5.0
show_error(lambda: loss.backward())

print("\n3. grad of a function with a vector output")
show_error(lambda: duals.grad(lambda x: x * 2.0)(np.ones(3)))

print("\n4. item assignment into a traced array")
def assign(x):
    x[0] = 2.0
    return np.sum(x)
show_error(lambda: duals.grad(assign)(np.ones(3)))

print("\n5. a NumPy function without a derivative rule")
show_error(lambda: duals.grad(lambda x: np.sum(np.unique(x)))(np.ones(3)))

print("\n6. a tangent whose shape does not match the primal")
show_error(lambda: duals.jvp(lambda x: x * 2.0, (np.ones(3),), (np.ones(2),)))

print("\n7. walking a freed graph twice (section 4)")
v = duals.Var(np.array(2.0)); out = v * v; out.backward()
show_error(lambda: out.backward())
'''),
    ]
