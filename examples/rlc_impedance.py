"""Sensitivity of a series RLC circuit's impedance to R, L and C across a frequency sweep.

The impedance is written the way one writes it with complex NumPy,
Z(ω) = R + iωL + 1/(iωC), and duals differentiates through the complex arithmetic:

* ``duals.jacfwd`` of |Z(ω)| with respect to p = (R, L, C): the sensitivities at every frequency of
  the sweep in one forward pass (three lanes), and the normalised sensitivities (p/|Z|) ∂|Z|/∂p
  below, at and above resonance ω₀ = 1/√(LC);
* ``duals.jacfwd`` of the complex Z itself (complex outputs of real inputs): ∂Z/∂R = 1,
  ∂Z/∂L = iω, ∂Z/∂C = i/(ωC²);
* ``duals.grad`` of a least-squares misfit between the model's |Z| and a measured sweep: one
  reverse sweep through complex intermediates gives a real gradient in (R, L, C);
* ``duals.grad(..., holomorphic=True)``: dZ/ds = L − 1/(s²C) in the complex frequency s = iω;

all checked against the closed forms (X = ωL − 1/(ωC)):
∂|Z|/∂R = R/|Z|, ∂|Z|/∂L = ωX/|Z|, ∂|Z|/∂C = X/(ωC²|Z|).

Run:  python examples/rlc_impedance.py [--small] [--n N] [--plot rlc.png]
"""
import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numpy as np

import duals

R0, L0, C0 = 50.0, 10e-3, 1e-6          # ohm, henry, farad: resonance near 1.59 kHz


def impedance(p, omega):
    """Series RLC impedance in ohms; ``p = (R, L, C)``, ``omega`` in rad/s."""
    R, L, C = p[0], p[1], p[2]
    return R + 1j * omega * L + 1.0 / (1j * omega * C)


def magnitude(p, omega):
    return np.abs(impedance(p, omega))


def closed_form(p, omega):
    """The exact sensitivities of |Z|, shape (n, 3): columns d/dR, d/dL, d/dC."""
    R, L, C = p
    X = omega * L - 1.0 / (omega * C)
    Z = np.hypot(R, X)
    return np.stack([R / Z, omega * X / Z, X / (omega * C ** 2 * Z)], axis=-1)


def _timed(f, repeat=3):
    f()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="500 frequencies instead of 10^5 (CI)")
    ap.add_argument("--n", type=int, default=None, help="number of frequencies in the sweep")
    ap.add_argument("--plot", metavar="PATH", help="save a figure of |Z| and its sensitivities")
    args = ap.parse_args(argv)
    print(_blas_threads.describe())
    n = args.n or (500 if args.small else 100_000)
    p = np.array([R0, L0, C0])
    omega = 2 * np.pi * np.logspace(1, 5, n)         # 10 Hz to 100 kHz
    omega0 = 1.0 / np.sqrt(L0 * C0)

    # sensitivities of |Z| at every frequency: one forward pass with three lanes
    J = duals.jacfwd(magnitude)(p, omega)
    exact = closed_form(p, omega)
    worst = float(np.max(np.abs(J - exact) / np.maximum(np.abs(exact), 1e-300)))

    # the complex impedance itself: complex outputs of real inputs
    dZ = duals.jacfwd(impedance)(p, omega)
    dZ_exact = np.stack([np.ones(n), 1j * omega, 1j / (omega * C0 ** 2)], axis=-1)
    worst_z = float(np.max(np.abs(dZ - dZ_exact) / np.abs(dZ_exact)))

    # a least-squares fit's gradient in (R, L, C) by one reverse sweep
    rng = np.random.default_rng(0)
    measured = magnitude(p * np.array([1.1, 0.95, 1.05]), omega) * (1 + 0.01 * rng.standard_normal(n))

    def misfit(q):
        return 0.5 * np.sum((magnitude(q, omega) - measured) ** 2)

    g = duals.grad(misfit)(p)
    g_exact = (magnitude(p, omega) - measured) @ exact
    worst_g = float(np.max(np.abs(g - g_exact) / np.abs(g_exact)))

    # holomorphic: dZ/ds in the complex frequency s = iω
    def of_s(s):
        return R0 + s * L0 + 1.0 / (s * C0)

    s = 1j * omega0 * 0.7
    dZds = duals.grad(of_s, holomorphic=True)(s)
    worst_s = abs(dZds - (L0 - 1.0 / (s ** 2 * C0))) / abs(L0 - 1.0 / (s ** 2 * C0))

    t_value = _timed(lambda: magnitude(p, omega))
    t_jac = _timed(lambda: duals.jacfwd(magnitude)(p, omega))
    t_grad = _timed(lambda: duals.grad(misfit)(p))
    t_misfit = _timed(lambda: misfit(p))

    print(f"series RLC, R = {R0:g} ohm, L = {L0 * 1e3:g} mH, C = {C0 * 1e6:g} uF, "
          f"f0 = {omega0 / (2 * np.pi):.1f} Hz; {n:,} frequencies from 10 Hz to 100 kHz")
    print(f"  |Z| (complex NumPy)                  {t_value * 1e3:8.2f} ms")
    print(f"  jacfwd of |Z| in (R, L, C)           {t_jac * 1e3:8.2f} ms  ({t_jac / t_value:.1f}x)")
    print(f"  grad of the misfit (reverse sweep)   {t_grad * 1e3:8.2f} ms  ({t_grad / t_misfit:.1f}x the misfit)")
    print("\nnormalised sensitivities (p/|Z|) d|Z|/dp")
    print(f"  {'f (Hz)':>10}  {'|Z| (ohm)':>10}  {'R':>8}  {'L':>8}  {'C':>8}")
    for w in (0.2 * omega0, omega0, 5 * omega0):
        q = duals.jacfwd(magnitude)(p, np.array([w]))[0]
        z = magnitude(p, w)
        print(f"  {w / (2 * np.pi):10.1f}  {z:10.2f}  " + "  ".join(f"{v:8.4f}" for v in q * p / z))
    print("\nmax relative error against the closed forms")
    for name, e in (("d|Z|/d(R, L, C) by jacfwd", worst), ("dZ/d(R, L, C), complex", worst_z),
                    ("misfit gradient by grad", worst_g), ("dZ/ds, holomorphic", worst_s)):
        print(f"  {name:28s} {e:9.2e}")
    if not max(worst, worst_z, worst_g, worst_s) < 1e-10:
        raise AssertionError("RLC sensitivities disagree with the closed form")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        f_hz = omega / (2 * np.pi)
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        axs[0].loglog(f_hz, magnitude(p, omega))
        axs[0].set_xlabel("frequency (Hz)")
        axs[0].set_ylabel("|Z| (ohm)")
        axs[0].set_title("series RLC impedance magnitude")
        for k, name in enumerate(("R", "L", "C")):
            axs[1].semilogx(f_hz, J[:, k] * p[k] / magnitude(p, omega), label=name)
        axs[1].set_xlabel("frequency (Hz)")
        axs[1].set_ylabel(r"normalised sensitivity $(p/|Z|)\,\partial|Z|/\partial p$ (dimensionless)")
        axs[1].set_title("sensitivities by duals.jacfwd")
        axs[1].legend()
        fig.tight_layout()
        fig.savefig(args.plot)
        plt.close(fig)
        print(f"figure saved to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
