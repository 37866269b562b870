"""The 2-D Brusselator with a sparse duals Jacobian for SciPy's BDF solver.

    u_t = B + u² v - (A + 1) u + α Δu + f(x, y, t)
    v_t = A u - u² v + α Δv            on an N x N periodic grid of [0, 1]², t in [0, 11.5]

with A = 3.4, B = 1, α = 10 / dx² and a forcing f = 5 in a small disc from t = 1.1 on (the
standard stiff test problem, as in SciML's benchmarks). The state (u, v) has n = 2 N² entries,
but each right-hand side entry reads only six of them: the Jacobian is sparse.

``duals.jacfwd(rhs, argnums=1, sparsity="auto")`` detects that pattern once (one run of the
right-hand side on index sets), colours its columns so that columns of a colour share no row
(about ten colours, whatever N), and then evaluates every Jacobian with one forward lane per
colour, returned as a ``scipy.sparse.csr_array``. The report gives the colours, the times of
detection and of a sparse Jacobian relative to one evaluation, checks the sparse Jacobian
against the dense one, and solves with ``solve_ivp(method="BDF")`` twice: with the duals
Jacobian and with SciPy's grouped finite differences (``jac_sparsity=``).

Run:  python examples/brusselator_sparse.py [--small] [--plot brusselator.png]
"""
import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numba  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import duals  # noqa: E402

A, B, DIFFUSION = 3.4, 1.0, 10.0
T_SPAN = (0.0, 11.5)


class Brusselator:
    """The right-hand side on an N x N grid, written once with NumPy (``rhs``) and once as an
    ``@numba.njit`` loop (``rhs_loop(t, y, N, alpha, spot)``, the same numbers)."""

    def __init__(self, N):
        self.N = N
        grid = np.linspace(0.0, 1.0, N)
        self.alpha = DIFFUSION / (grid[1] - grid[0]) ** 2
        X, Y = np.meshgrid(grid, grid, indexing="ij")
        self.spot = np.where((X - 0.3) ** 2 + (Y - 0.6) ** 2 <= 0.1 ** 2, 5.0, 0.0).ravel()
        self.y0 = np.concatenate([(22.0 * (Y * (1.0 - Y)) ** 1.5).ravel(),
                                  (27.0 * (X * (1.0 - X)) ** 1.5).ravel()])

    def rhs(self, t, y):
        N = self.N
        u, v = y[:N * N].reshape(N, N), y[N * N:].reshape(N, N)
        uuv = u * u * v
        du = self.alpha * laplacian(u) + B + uuv - (A + 1.0) * u
        dv = self.alpha * laplacian(v) + A * u - uuv
        forcing = self.spot if t >= 1.1 else 0.0
        return np.concatenate([du.ravel() + forcing, dv.ravel()])

    def loop(self, t, y):
        return rhs_loop(t, y, self.N, self.alpha, self.spot)


def laplacian(w):
    """Five-point Laplacian (without 1/dx²) with periodic boundaries."""
    return (np.roll(w, 1, axis=0) + np.roll(w, -1, axis=0) + np.roll(w, 1, axis=1)
            + np.roll(w, -1, axis=1) - 4.0 * w)


@numba.njit   # no cache=True: tests load this file by path, and Numba cannot reload such a cache
def rhs_loop(t, y, N, alpha, spot):
    out = np.empty_like(y)
    M = N * N
    on = 1.0 if t >= 1.1 else 0.0
    for i in range(N):
        up, down = (i + 1) % N, (i - 1) % N
        for j in range(N):
            right, left = (j + 1) % N, (j - 1) % N
            k = i * N + j
            u, v = y[k], y[M + k]
            lu = y[up * N + j] + y[down * N + j] + y[i * N + right] + y[i * N + left] - 4.0 * u
            lv = (y[M + up * N + j] + y[M + down * N + j] + y[M + i * N + right]
                  + y[M + i * N + left] - 4.0 * v)
            uuv = u * u * v
            out[k] = alpha * lu + B + uuv - (A + 1.0) * u + on * spot[k]
            out[M + k] = alpha * lv + A * u - uuv
    return out


def best_time(fn, repeat=5):
    """The shortest of ``repeat`` runs of ``fn()`` (after one warm-up run), in seconds."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a 12 x 12 grid (CI)")
    ap.add_argument("--plot", metavar="PATH", help="save the pattern and the final u field")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())
    N = 12 if args.small else 32
    model = Brusselator(N)
    n = model.y0.size
    t1 = 2.0
    y = solve_ivp(model.rhs, (0.0, t1), model.y0, method="BDF", rtol=1e-3, atol=1e-6).y[:, -1]
    print(f"2-D Brusselator, N = {N} (n = {n} states), A = {A}, B = {B}, alpha = 10/dx^2")

    # 1. detection and colouring (timed warm: the first call also compiles duals' kernels)
    pattern = duals.sparsity(model.rhs, t1, y, argnums=1)
    detection = best_time(lambda: duals.sparsity(model.rhs, t1, y, argnums=1), repeat=3)
    print(f"pattern: {pattern.nnz} non-zeros ({pattern.nnz / n:.1f} per row), "
          f"{pattern.n_colors} colours for forward mode, {pattern.n_row_colors} for reverse mode")

    # 2. the sparse Jacobian is the dense one, and the compiled loop's
    jac = duals.jacfwd(model.rhs, argnums=1, sparsity="auto")
    J = jac(t1, y)
    dense = duals.jacfwd(model.rhs, argnums=1)(t1, y)
    compiled = duals.jacfwd(rhs_loop, argnums=1, sparsity=pattern)(t1, y, N, model.alpha, model.spot)
    worst = max(np.abs(J.toarray() - dense).max(), np.abs(compiled.toarray() - dense).max())
    print(f"sparse vs dense Jacobian (NumPy and @njit right-hand sides): max abs. diff {worst:.1e}")
    if not (worst <= 1e-9 * np.abs(dense).max() and (J != 0).sum() == (dense != 0).sum()):
        raise AssertionError(f"the sparse Jacobian differs from the dense one: {worst:.2e}")

    one = best_time(lambda: model.rhs(t1, y))
    sparse_time = best_time(lambda: jac(t1, y))
    print(f"one evaluation {one * 1e6:.0f} us; detection {detection / one:.0f}x, "
          f"sparse Jacobian {sparse_time / one:.0f}x one evaluation")

    # 3. BDF with the duals Jacobian and with SciPy's grouped finite differences
    rtol, atol = 1e-6, 1e-8
    results = {}
    for label, options in (("duals sparse", dict(jac=lambda t, y: jac(t, y))),
                           ("SciPy FD, jac_sparsity", dict(jac_sparsity=pattern.pattern))):
        t0 = time.perf_counter()
        sol = solve_ivp(model.rhs, T_SPAN, model.y0, method="BDF", rtol=rtol, atol=atol, **options)
        elapsed = time.perf_counter() - t0
        if not sol.success:
            raise RuntimeError(f"BDF with the {label} Jacobian failed: {sol.message}")
        results[label] = sol
        print(f"BDF, {label:22s}: {elapsed:6.2f} s, {sol.nfev:5d} rhs calls, {sol.njev:3d} Jacobians, "
              f"{sol.nlu:4d} LU")
    a, b = (results[k].y[:, -1] for k in results)
    gap = np.max(np.abs(a - b) / (atol + rtol * np.abs(b)))
    print(f"final states agree within {gap:.1f} x the tolerance")
    if not gap < 100:
        raise AssertionError(f"the two solutions differ by {gap:.1f} x the tolerance")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
        P = pattern.pattern.tocoo()
        left.plot(P.col, P.row, ",", color="k")
        left.set(xlim=(0, n), ylim=(n, 0), xlabel="state entry (column)", ylabel="rhs entry (row)",
                 title=f"Jacobian pattern, {pattern.n_colors} colours")
        image = right.imshow(a[:N * N].reshape(N, N).T, origin="lower", extent=(0, 1, 0, 1))  # u[x, y]
        right.set(xlabel="x", ylabel="y", title=f"u at t = {T_SPAN[1]}")
        fig.colorbar(image, ax=right, label="u (concentration)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
