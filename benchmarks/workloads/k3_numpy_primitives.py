"""K3 (issue 15): forward and reverse cost of the NumPy functions added in issue 15, relative to NumPy.

Each case is one function called as plain NumPy code (``np.sort(x)`` reaches duals through
``__array_function__``): scans and order statistics at 10⁵ elements, decompositions at a size
where NumPy takes about a millisecond or more. Three entries per case, timed in turns in one run:

* ``numpy f``: the function itself (every ratio divides by it);
* ``duals jvp``: ``duals.jvp(f, (x,), (t,))``, the value and one directional derivative;
* ``duals vjp``: ``duals.vjp(f, x)`` and its pullback of one cotangent: the recorded value and
  the gradient of ``<u, f(x)>``.

Checks: a closed form written with NumPy where one exists (scans, order statistics, singular
values and eigenvalues); otherwise ``jvp`` against central differences, and ``vjp`` through the
adjoint identity ``<J^T u, t> = <u, J t>`` with ``J t`` by central differences (``eig`` and
``eigvals``: with LAPACK's order of the perturbed eigenvalues matched to the unperturbed ones) (the entry then
returns that scalar; its one dot product costs well under 1 % of a decomposition).
"""
import numpy as np

from ..timing import Case, Entry

ID = "K3"
TITLE = "issue 15's NumPy functions: jvp and vjp vs NumPy"
N = 100_000
QUICK_N = 200
KNOTS = np.linspace(-4.0, 4.0, 101)
KERNEL = np.array([1.0, 2.0, 3.0, 2.0, 1.0]) / 9.0    # symmetric: the 'same' convolution is self-adjoint
QS = np.array([5.0, 50.0, 95.0])
SCANS = ("sort", "cumsum", "cumprod", "diff", "interp", "convolve", "median", "percentile",
         "gradient", "trapezoid")
DECOMPOSITIONS = ("eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "lstsq", "pinv")


def _flat(out):
    if isinstance(out, (tuple, list)):
        return np.concatenate([_flat(o) for o in out])
    return np.ravel(np.asarray(out, dtype=np.float64))


def _central(f, x, t, h=1e-6):
    return (_flat(f(x + h * t)) - _flat(f(x - h * t))) / (2 * h)


def _percentile_weights(n):
    """Positions and weights of NumPy's linear percentile at QS of n sorted entries."""
    p = QS / 100.0 * (n - 1)
    lo = np.floor(p).astype(int)
    return lo, np.minimum(lo + 1, n - 1), p - lo


def _revcumsum(a):
    return np.cumsum(a[::-1])[::-1]


def _gradient_transpose(u):
    out = np.zeros_like(u)
    out[2:] += 0.5 * u[1:-1]
    out[:-2] -= 0.5 * u[1:-1]
    out[1] += u[0]
    out[0] -= u[0]
    out[-1] += u[-1]
    out[-2] -= u[-1]
    return out


def _slope(x):
    j = np.clip(np.searchsorted(KNOTS, x, side="right") - 1, 0, KNOTS.size - 2)
    return (np.sin(KNOTS[j + 1]) - np.sin(KNOTS[j])) / (KNOTS[j + 1] - KNOTS[j])


def _scan(name, n):
    """(f, x, t, u, jvp reference, vjp reference) of a scan or order statistic at n elements."""
    rng = np.random.default_rng(15)
    x, t = rng.uniform(-3.0, 3.0, n), rng.standard_normal(n)
    u = rng.standard_normal(n)
    if name == "cumprod":            # factors near one keep the products finite at 10⁵
        x = 1.0 + 1e-3 * rng.standard_normal(n)
    order = np.argsort(x, kind="stable")
    if name == "sort":
        scatter = np.empty(n)
        scatter[order] = u
        return np.sort, x, t, u, lambda: t[order], lambda: scatter
    if name == "cumsum":
        return np.cumsum, x, t, u, lambda: np.cumsum(t), lambda: _revcumsum(u)
    if name == "cumprod":
        p = np.cumprod(x)
        return np.cumprod, x, t, u, lambda: p * np.cumsum(t / x), lambda: _revcumsum(u * p) / x
    if name == "diff":
        return np.diff, x, t, u[:-1], lambda: np.diff(t), \
            lambda: np.concatenate([[-u[0]], u[:-2] - u[1:-1], [u[-2]]])
    if name == "interp":
        f = lambda x: np.interp(x, KNOTS, np.sin(KNOTS))  # noqa: E731
        return f, x, t, u, lambda: _slope(x) * t, lambda: _slope(x) * u
    if name == "convolve":
        f = lambda x: np.convolve(x, KERNEL, mode="same")  # noqa: E731
        return f, x, t, u, lambda: f(t), lambda: f(u)
    if name == "median":
        mid = order[[n // 2 - 1, n // 2]] if n % 2 == 0 else order[[n // 2, n // 2]]
        grad = np.zeros(n)
        np.add.at(grad, mid, 0.5)
        return np.median, x, t, np.ones(()), lambda: 0.5 * t[mid].sum(), lambda: grad
    if name == "percentile":
        lo, hi, w = _percentile_weights(n)
        f = lambda x: np.percentile(x, QS)  # noqa: E731
        cot = u[:3]
        grad = np.zeros(n)
        np.add.at(grad, order[lo], cot * (1 - w))
        np.add.at(grad, order[hi], cot * w)
        return f, x, t, cot, lambda: t[order[lo]] * (1 - w) + t[order[hi]] * w, lambda: grad
    if name == "gradient":
        return np.gradient, x, t, u, lambda: np.gradient(t), lambda: _gradient_transpose(u)
    if name == "trapezoid":
        weights = np.ones(n)
        weights[[0, -1]] = 0.5
        return np.trapezoid, x, t, np.ones(()), lambda: np.trapezoid(t), lambda: weights
    raise ValueError(name)


def _decomposition(name, quick):
    """(f, x, t, u, jvp reference or None, vjp reference or None, J t or None) of a decomposition."""
    rng = np.random.default_rng(16)
    n = 6 if quick else 150
    if name in ("eigh", "eigvalsh"):
        x = rng.standard_normal((n, n))
        x = x + x.T
        f = np.linalg.eigh if name == "eigh" else np.linalg.eigvalsh
    elif name in ("eig", "eigvals"):   # a general matrix: complex pairs; real and imaginary parts out
        x = rng.standard_normal((n, n))
        f = _real_and_imaginary(np.linalg.eig if name == "eig" else np.linalg.eigvals)
    else:
        x = rng.standard_normal((2 * n, n))
        b = rng.standard_normal(2 * n)
        f = {"svd": lambda a: np.linalg.svd(a, full_matrices=False), "svdvals": np.linalg.svdvals,
             "qr": np.linalg.qr, "lstsq": lambda a: np.linalg.lstsq(a, b)[0], "pinv": np.linalg.pinv}[name]
    t = rng.standard_normal(x.shape)
    out = f(x)
    # a cotangent of the output's structure (the namedtuple of eigh, svd, qr)
    if isinstance(out, tuple):
        parts = [rng.standard_normal(np.shape(o)) for o in out]
        u = type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    else:
        u = rng.standard_normal(np.shape(out))
    if name == "eigvalsh":            # dλ_i = v_iᵀ dS v_i, with S the lower triangle mirrored
        w, V = np.linalg.eigh(x)
        sym = np.tril(t) + np.tril(t, -1).T
        g = V @ np.diag(u) @ V.T
        return f, x, t, u, lambda: np.einsum("ji,jk,ki->i", V, sym, V), lambda: np.tril(g) + np.tril(g.T, -1), None
    if name in ("eig", "eigvals"):    # differences with LAPACK's order matched (it moves at n = 150)
        return f, x, t, u, None, None, lambda: _matched_central(name, x, t)
    if name == "svdvals":             # ds_i = u_iᵀ dA v_i
        U, s, Vh = np.linalg.svd(x, full_matrices=False)
        return f, x, t, u, lambda: np.einsum("ji,jk,ik->i", U, t, Vh), lambda: (U * u) @ Vh, None
    return f, x, t, u, None, None, None


def _matched_central(name, x, t, h=1e-7):
    """Central differences of ``eig``/``eigvals`` (real and imaginary parts) with the perturbed
    results put in the unperturbed eigenvalues' order and signs: LAPACK's order (and with it a
    vector's sign) can change under a perturbation of a large matrix, while each eigenvalue and its
    vector move smoothly."""
    w, V = np.linalg.eig(x)

    def aligned(a):   # the same order, and each vector's sign (LAPACK's may flip with the order)
        wa, Va = np.linalg.eig(a)
        order = np.argmin(np.abs(wa[None, :] - w[:, None]), axis=1)
        Va = Va[:, order]
        return wa[order], Va * np.sign(np.real(np.sum(np.conj(V) * Va, axis=0)))
    (wp, Vp), (wm, Vm) = aligned(x + h * t), aligned(x - h * t)
    dw, dV = (wp - wm) / (2 * h), (Vp - Vm) / (2 * h)
    keep = np.argmin(np.abs(w[None, :] - np.linalg.eigvals(x)[:, None]), axis=1)   # eigvals' order
    parts = (dw[keep],) if name == "eigvals" else (dw, dV)
    return np.concatenate([np.ravel(q) for p in parts for q in (p.real, p.imag)])


def _real_and_imaginary(decomposition):
    """``f`` whose outputs are the real and imaginary parts of ``decomposition``'s (real arrays)."""
    def f(a):
        out = decomposition(a)
        return tuple(p for o in (out if isinstance(out, tuple) else (out,)) for p in (o.real, o.imag))
    return f


def _entries(name, f, x, t, u, jvp_ref, vjp_ref, directional=None):
    import duals
    entries = [Entry("numpy", "f", lambda: lambda: f(x)),
               Entry("duals", "jvp", lambda: lambda: duals.jvp(f, (x,), (t,))[1],
                     rtol=1e-10 if jvp_ref else 1e-5)]
    if vjp_ref is not None:
        entries.append(Entry("duals", "vjp", lambda: lambda: duals.vjp(f, x)[1](u)[0], rtol=1e-10))
    else:
        entries.append(Entry("duals", "vjp", lambda: lambda: float(np.vdot(duals.vjp(f, x)[1](u)[0], t)),
                             rtol=1e-5, note="returns <Jᵀu, t> (adjoint check)"))
    directional = directional or (lambda: _central(f, x, t))     # J t
    refs = {"f": lambda: f(x), "jvp": jvp_ref or directional,
            "vjp": vjp_ref or (lambda: float(_flat(u) @ _flat(directional())))}
    return entries, refs


def cases(quick):
    n = QUICK_N if quick else N
    out = []
    for name in SCANS:
        f, x, t, u, jvp_ref, vjp_ref = _scan(name, n)
        entries, refs = _entries(name, f, x, t, u, jvp_ref, vjp_ref)
        out.append(Case(ID, f"{name} n={n}", "scan", ("numpy", "f"), entries, refs))
    for name in DECOMPOSITIONS:
        f, x, t, u, jvp_ref, vjp_ref, directional = _decomposition(name, quick)
        entries, refs = _entries(name, f, x, t, u, jvp_ref, vjp_ref, directional)
        shape = "x".join(map(str, x.shape))
        out.append(Case(ID, f"{name} {shape}", "decomposition", ("numpy", "f"), entries, refs))
    return out


def targets(records):
    """Issue 15's aims: ≤ 3× NumPy for element-wise functions and scans, ≤ 2× for decompositions."""
    rows = []
    for group, limit in (("scan", 3.0), ("decomposition", 2.0)):
        for task in ("jvp", "vjp"):
            found = [r for r in records if r["workload"] == ID and r["group"] == group and
                     r["system"] == "duals" and r["task"] == task and r.get("ratio")]
            if not found:
                continue
            worst = max(found, key=lambda r: r["ratio"])
            met = sum(r["ratio"] <= limit for r in found)
            rows.append((f"K3 {task}/f of issue 15's {group}s ≤ {limit:g} (issue 15)",
                         f"{met}/{len(found)} within; worst {worst['case'].split()[0]} {worst['ratio']:.2f}",
                         met == len(found)))
    return rows
