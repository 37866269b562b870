"""python -m benchmarks.linear_systems: compiled reverse mode through dense linear solves.

A steady heat-conduction model written as a scientist writes it in @njit code: the conductivity
of every cell of an ``m × m`` grid (the parameters), a five-point finite-volume matrix assembled
into a dense ``n × n`` array (``n = m²`` unknowns, harmonic means at the faces, a fixed
temperature around the boundary), ``np.linalg.solve``, and the misfit to sensor readings plus a
smoothness penalty. Times, single-threaded, best of 5 (ratios within one run):
the plain call, the compiled ``duals.grad`` (``value_and_grad``: the value too) with its tape's
nodes per ``n²`` and MiB, the hand-written discrete adjoint (one more solve with ``Kᵀ``), and
compiled ``duals.jacfwd`` (one lane per parameter: the modes cross early); and checks that
every gradient agrees with the hand-written adjoint.

``solve`` records ``dX = A⁻¹(dB − dA X)`` (about ``2 n²`` nodes, the matrix's structural zeros
recording nothing), so the tape grows with the square of the unknowns, not their cube as
elimination on adjoints did.
"""
import benchmarks._threads  # noqa: F401  (one thread for BLAS and Numba, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402

from benchmarks._steady import best  # noqa: E402


@numba.njit(cache=True)
def assemble(conductivity):
    m = conductivity.shape[0]
    n = m * m
    K = np.zeros((n, n))
    rhs = np.zeros(n)
    for i in range(m):
        for j in range(m):
            row = i * m + j
            rhs[row] = 1.0                     # a uniform heat source
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                a, b = i + di, j + dj
                if 0 <= a < m and 0 <= b < m:  # harmonic mean at an inner face
                    k = 2.0 * conductivity[i, j] * conductivity[a, b] / (conductivity[i, j] + conductivity[a, b])
                    K[row, row] += k
                    K[row, a * m + b] -= k
                else:                          # a wall held at temperature 0
                    K[row, row] += 2.0 * conductivity[i, j]
    return K, rhs


@numba.njit(cache=True)
def misfit(log_conductivity, sensors, readings, weight):
    conductivity = np.exp(log_conductivity)
    K, rhs = assemble(conductivity)
    T = np.linalg.solve(K, rhs)
    r = T[sensors] - readings
    m = log_conductivity.shape[0]
    smooth = 0.0
    for i in range(m - 1):
        for j in range(m):
            smooth += (log_conductivity[i + 1, j] - log_conductivity[i, j]) ** 2
            smooth += (log_conductivity[j, i + 1] - log_conductivity[j, i]) ** 2
    return 0.5 * r @ r + weight * smooth


def hand_adjoint(log_conductivity, sensors, readings, weight):
    """The discrete adjoint: λ = K⁻ᵀ ∂J/∂T, then dJ/dc = −λᵀ (∂K/∂c) T face by face, times c for
    the logarithm, plus the penalty's gradient."""
    c = np.exp(log_conductivity)
    m = c.shape[0]
    K, rhs = assemble(c)
    T = np.linalg.solve(K, rhs)
    g_T = np.zeros_like(T)
    np.add.at(g_T, sensors, T[sensors] - readings)
    lam = np.linalg.solve(K.T, g_T)
    grad = np.zeros_like(c)
    for i in range(m):
        for j in range(m):
            row = i * m + j
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                a, b = i + di, j + dj
                if 0 <= a < m and 0 <= b < m:   # k = 2 cp cq / (cp + cq)
                    cp, cq = c[i, j], c[a, b]
                    flux = lam[row] * (T[row] - T[a * m + b])
                    grad[i, j] -= flux * 2.0 * cq ** 2 / (cp + cq) ** 2
                    grad[a, b] -= flux * 2.0 * cp ** 2 / (cp + cq) ** 2
                else:
                    grad[i, j] -= 2.0 * lam[row] * T[row]
    smooth = lambda L: weight * (np.sum(np.diff(L, axis=0) ** 2) + np.sum(np.diff(L, axis=1) ** 2))  # noqa: E731
    return grad * c + duals.grad(smooth)(log_conductivity)


def main():
    print("| grid | unknowns n | plain | compiled grad | tape nodes / n² | tape MiB | hand adjoint "
          "| compiled jacfwd | max rel. difference |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in (6, 10, 16, 22):
        rng = np.random.default_rng(m)
        theta = rng.normal(0.0, 0.3, (m, m))
        sensors = rng.choice(m * m, size=m, replace=False)
        readings = rng.uniform(0.01, 0.05, m)
        args = (theta, sensors, readings, 1e-3)
        plain = best(lambda: misfit(*args))
        g = duals.grad(misfit)(*args)
        grad = best(lambda: duals.grad(misfit)(*args))
        size = duals.jit.last_recording()
        reference = hand_adjoint(*args)
        forward = duals.jacfwd(misfit)(*args) if m <= 10 else None
        t_forward = best(lambda: duals.jacfwd(misfit)(*args), 3) if forward is not None else None
        t_hand = best(lambda: np.linalg.solve(assemble(np.exp(theta))[0].T, np.ones(m * m)))
        worst = max(np.max(np.abs(x - reference)) / np.max(np.abs(reference))
                    for x in (g, forward) if x is not None)
        n = m * m
        print(f"| {m} × {m} | {n} | {plain * 1e3:.2f} ms | {grad / plain:.1f}× | {size.nodes / n ** 2:.2f} "
              f"| {size.nbytes / 2 ** 20:.1f} | {(plain + t_hand) / plain:.1f}× (value + one solve) "
              f"| {f'{t_forward / plain:.0f}×' if t_forward else '—'} | {worst:.1e} |")


if __name__ == "__main__":
    main()
