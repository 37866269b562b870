"""Sparse Jacobians of the 2-D Brusselator and sparse Hessians of a 2-D grid energy.

    python benchmarks/sparse.py [--quick] [--sizes 32 64] [--no-ivp] [--no-hessian]

The right-hand side (``examples/brusselator_sparse.py``: u, v on an N x N periodic grid, α =
10/dx², A = 3.4, B = 1) written once with NumPy and once as an ``@njit`` loop, N = 32 (n = 2048)
and N = 64 (n = 8192), one thread (``benchmarks/_threads.py``). For each, relative to one
evaluation of f: detection (``duals.sparsity``), the sparse Jacobian by forward lanes (one per
colour) and by reverse cotangents (one per row colour), the dense ``jacfwd`` (N = 32 only: at
N = 64 it is 8192 lanes), and SciPy's grouped finite differences (``approx_derivative`` with
the pattern and its column groups, computed once). Every Jacobian is checked against the dense
one (N = 32) or against the other sparse mode. Then ``solve_ivp(method="BDF")`` over t in
[0, 11.5] with the duals sparse Jacobian and with SciPy's ``jac_sparsity=`` finite
differences, same tolerances, and the gap between their final states in units of the tolerance.
Then Hessians: a 2-D periodic φ⁴ energy (``½|∇u|² + ¼u⁴ − ½u²`` on an N x N grid, n = N²)
written with NumPy and as an ``@njit`` loop: star colours, Hessian detection, the sparse
``hessian`` and the dense one (n ≤ 1024), all relative to one evaluation, checked against each other.
Times are the best of several runs (``benchmarks.bench_jit.best``).
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks import _threads  # noqa: E402,F401  (one thread, before NumPy and Numba)

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from scipy.optimize._numdiff import approx_derivative, group_columns  # noqa: E402

import duals  # noqa: E402
from benchmarks.bench_jit import best  # noqa: E402

T1 = 2.0   # the point where the Jacobians are taken: after the initial transient
RTOL, ATOL = 1e-6, 1e-8
TIGHT_RTOL, TIGHT_ATOL = 1e-10, 1e-12   # the reference solution of the solve_ivp comparison


def _example():
    path = os.path.join(ROOT, "examples", "brusselator_sparse.py")
    spec = importlib.util.spec_from_file_location("examples_brusselator_sparse", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _once(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _close(a, b, what):
    a, b = (x.toarray() if hasattr(x, "toarray") else np.asarray(x) for x in (a, b))
    scale = np.abs(b).max()
    if not np.abs(a - b).max() <= 1e-9 * scale:
        raise AssertionError(f"{what}: max abs. difference {np.abs(a - b).max():.2e} (scale {scale:.1e})")


def jacobians(module, N, repeat, budget):
    model = module.Brusselator(N)
    y = solve_ivp(model.rhs, (0.0, T1), model.y0, method="BDF", rtol=1e-3, atol=1e-6).y[:, -1]
    loop_args = (T1, y, N, model.alpha, model.spot)
    rows = []
    for label, f, args in (("NumPy", model.rhs, (T1, y)), ("@njit loop", module.rhs_loop, loop_args)):
        one = best(lambda: f(*args), repeat, budget)
        # detection: a fresh call each time (the result is not cached by duals.sparsity)
        try:
            S, first = _once(lambda: duals.sparsity(f, *args, argnums=1))
            detect = best(lambda: duals.sparsity(f, *args, argnums=1), repeat, budget)
        except NotImplementedError:
            S, first, detect = duals.sparsity(model.rhs, T1, y, argnums=1), None, None
        colors, rows_colors = S.n_colors, S.n_row_colors
        sparsity = "auto" if detect is not None else S
        forward = duals.jacfwd(f, argnums=1, sparsity=sparsity)
        reverse = duals.jacrev(f, argnums=1, sparsity=sparsity)
        J = forward(*args)
        _close(reverse(*args), J, f"{label} N={N}: jacrev vs jacfwd (sparse)")
        t_fwd = best(lambda: forward(*args), repeat, budget)
        t_rev = best(lambda: reverse(*args), repeat, budget)
        t_dense = None
        if N <= 32:
            dense = duals.jacfwd(f, argnums=1)
            _close(J, dense(*args), f"{label} N={N}: sparse vs dense")
            t_dense = best(lambda: dense(*args), max(2, repeat // 2), budget)
        groups = group_columns(S.pattern)
        fd = lambda: approx_derivative(lambda z: f(args[0], z, *args[2:]), y,   # noqa: E731
                                       sparsity=(S.pattern, groups))
        rel = np.abs(fd().toarray() - J.toarray()).max() / np.abs(J.data).max()
        t_fd = best(fd, repeat, budget)
        rows.append(dict(label=label, N=N, n=2 * N * N, one=one, colors=colors, row_colors=rows_colors,
                         groups=int(groups.max()) + 1, detect=detect, first=first, fwd=t_fwd,
                         rev=t_rev, dense=t_dense, fd=t_fd, fd_error=rel))
    return rows


def ivp(module, N):
    model = module.Brusselator(N)
    jac = duals.jacfwd(model.rhs, argnums=1, sparsity="auto")
    compiled = duals.jacfwd(module.rhs_loop, argnums=1, sparsity=duals.sparsity(model.rhs, 0.0, model.y0, argnums=1))
    extra = (N, model.alpha, model.spot)
    pattern = duals.sparsity(model.rhs, 0.0, model.y0, argnums=1).pattern
    runs = {}
    for label, fun, options in (
            ("NumPy rhs, duals sparse jac", model.rhs, dict(jac=jac)),
            ("NumPy rhs, SciPy jac_sparsity", model.rhs, dict(jac_sparsity=pattern)),
            ("@njit rhs, duals sparse jac", lambda t, y: module.rhs_loop(t, y, *extra),
             dict(jac=lambda t, y: compiled(t, y, *extra))),
            ("@njit rhs, SciPy jac_sparsity", lambda t, y: module.rhs_loop(t, y, *extra),
             dict(jac_sparsity=pattern))):
        sol, elapsed = _once(lambda: solve_ivp(fun, (0.0, 11.5), model.y0, method="BDF", rtol=RTOL,
                                               atol=ATOL, **options))
        if not sol.success:
            raise RuntimeError(f"BDF, {label}, N={N}: {sol.message}")
        runs[label] = (sol, elapsed)
    tight = solve_ivp(lambda t, y: module.rhs_loop(t, y, *extra), (0.0, 11.5), model.y0, method="BDF",
                      rtol=TIGHT_RTOL, atol=TIGHT_ATOL, jac=lambda t, y: compiled(t, y, *extra))
    if not tight.success:
        raise RuntimeError(f"BDF reference, N={N}: {tight.message}")
    reference = tight.y[:, -1]
    return [dict(label=label, N=N, time=elapsed, nfev=sol.nfev, njev=sol.njev, nlu=sol.nlu,
                 error=float(np.max(np.abs(sol.y[:, -1] - reference) / (ATOL + RTOL * np.abs(reference)))))
            for label, (sol, elapsed) in runs.items()]


@numba.njit(cache=True)
def grid_energy(u):
    """The φ⁴ energy of ``u`` (N x N, periodic) as a Numba user writes it."""
    n, m = u.shape
    e = 0.0
    for i in range(n):
        for j in range(m):
            dx = u[(i + 1) % n, j] - u[i, j]
            dy = u[i, (j + 1) % m] - u[i, j]
            e += 0.5 * (dx * dx + dy * dy) + 0.25 * u[i, j] ** 4 - 0.5 * u[i, j] ** 2
    return e


def grid_energy_numpy(u):
    import duals.numpy as dnp
    dx = dnp.roll(u, -1, axis=0) - u
    dy = dnp.roll(u, -1, axis=1) - u
    return dnp.sum(0.5 * (dx * dx + dy * dy) + 0.25 * u ** 4 - 0.5 * u ** 2)


def hessians(N, repeat, budget):
    u = np.random.default_rng(0).uniform(-1.0, 1.0, (N, N))
    rows, reference = [], None
    for label, f in (("NumPy", grid_energy_numpy), ("@njit loop", grid_energy)):
        one = best(lambda: f(u), repeat, budget)
        S, first = _once(lambda: duals.sparsity(f, u, hessian=True))
        detect = best(lambda: duals.sparsity(f, u, hessian=True), repeat, budget)
        sparse = duals.hessian(f, sparsity="auto")
        H = sparse(u)
        if reference is None:
            reference = H
        _close(H, reference, f"{label} N={N}: sparse Hessian vs the NumPy path's")
        t_sparse = best(lambda: sparse(u), repeat, budget)
        t_dense = None
        if N * N <= 1024:
            dense = duals.hessian(f)
            _close(H, dense(u).reshape(N * N, N * N), f"{label} N={N}: sparse vs dense Hessian")
            t_dense = best(lambda: dense(u), 2, budget)
        rows.append(dict(label=label, N=N, one=one, colors=S.n_colors, nnz=S.nnz, first=first,
                         detect=detect, sparse=t_sparse, dense=t_dense))
    return rows


def _x(t, one):
    return "" if t is None else f"{t / one:.0f}x"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 16, short timings")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--no-ivp", action="store_true", help="skip the solve_ivp comparison")
    parser.add_argument("--no-hessian", action="store_true", help="skip the sparse Hessians")
    options = parser.parse_args(argv)
    sizes = [16] if options.quick else options.sizes
    repeat, budget = (3, 0.03) if options.quick else (7, 0.3)
    module = _example()
    print(f"2-D Brusselator, sparse Jacobians; numpy {np.__version__}, scipy {scipy.__version__}, "
          f"numba {numba.__version__}, one thread\n")
    print("| right-hand side | N (n) | one f | colours fwd / rev (SciPy groups) | detection | "
          "sparse jacfwd | sparse jacrev | dense jacfwd | SciPy approx_derivative (rel. err.) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for N in sizes:
        for r in jacobians(module, N, repeat, budget):
            one = r["one"]
            print(f"| {r['label']} | {r['N']} ({r['n']}) | {one * 1e6:.0f} µs | {r['colors']} / "
                  f"{r['row_colors']} ({r['groups']}) | {_x(r['detect'], one) or 'n/a'} | {_x(r['fwd'], one)} | "
                  f"{_x(r['rev'], one)} | {_x(r['dense'], one) or 'not run'} | {_x(r['fd'], one)} "
                  f"({r['fd_error']:.0e}) |")
    if not options.no_hessian:
        print("\nSparse Hessians of the 2-D φ⁴ grid energy (n = N²), relative to one evaluation; detection "
              "first call (compiling, or loading Numba's cache) in parentheses\n")
        print("| energy | N (n) | one f | entries | star colours | detection | sparse hessian | dense hessian |")
        print("|---|---|---|---|---|---|---|---|")
        for N in [8] if options.quick else [n // 2 for n in sizes]:
            for r in hessians(N, repeat, budget):
                one = r["one"]
                print(f"| {r['label']} | {N} ({N * N}) | {one * 1e6:.1f} µs | {r['nnz']} | {r['colors']} | "
                      f"{_x(r['detect'], one)} ({r['first']:.1f} s) | {_x(r['sparse'], one)} | "
                      f"{_x(r['dense'], one) or 'not run'} |")
    if options.no_ivp:
        return 0
    print(f"\nsolve_ivp(method='BDF'), t in [0, 11.5], rtol={RTOL:g}, atol={ATOL:g}; error: largest "
          f"|y - y_ref| / (atol + rtol |y_ref|) at t = 11.5, y_ref from BDF at rtol={TIGHT_RTOL:g}, "
          f"atol={TIGHT_ATOL:g} (a global error: the solver controls the local one, so it can exceed 1; "
          f"the two Jacobians should give errors of one size)\n")
    print("| N (n) | right-hand side and Jacobian | wall time | rhs calls | Jacobians | LU | error |")
    print("|---|---|---|---|---|---|---|")
    for N in sizes:
        for r in ivp(module, N):
            print(f"| {N} ({2 * N * N}) | {r['label']} | {r['time']:.2f} s | {r['nfev']} | {r['njev']} | "
                  f"{r['nlu']} | {r['error']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
