"""Compiled forward mode on complex code: an RLC impedance sweep, relative to the plain @njit call.

    python -m benchmarks.bench_jit_complex [--n 100000] [--repeat 20]

The user's function loops over ``n`` frequencies computing ``|R + iωL + 1/(iωC)|`` in complex
arithmetic. Measured on one thread (benchmarks._threads): the plain float call, ``duals.jvp``
along one parameter direction (one complex lane inside), ``duals.jacfwd`` over (R, L, C) (three
lanes), and the same jvp as the dispatcher called on prepared dual arguments (no Python entry
point); each the best of ``--repeat`` runs after a warm-up call. The same sweep written with
pairs of floats instead of complex numbers is measured alike: its duals carry the lanes of the
real and imaginary parts as two vectors, the layout the complex lanes did not take. A second
table compares the dual code alone on Horner's rule written with complex numbers and with pairs
of floats (the same arithmetic), at 1, 4 and 8 lanes. Prints markdown tables.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._threads  # noqa: E402,F401  (one thread, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from duals.jit import dual_array  # noqa: E402
from duals.jit.promotion import promoted_call  # noqa: E402
from benchmarks._steady import best  # noqa: E402


@numba.njit(cache=True)
def rlc_magnitude(p, w):
    R, L, C = p[0], p[1], p[2]
    out = np.empty(w.size)
    for k in range(w.size):
        z = R + 1j * w[k] * L + 1.0 / (1j * w[k] * C)
        out[k] = abs(z)
    return out


@numba.njit(cache=True)
def rlc_magnitude_split(p, w):
    """The same sweep with each complex number as two floats (what real duals then differentiate:
    lanes of the real and of the imaginary parts as two vectors, the other layout complex lanes
    could have had)."""
    R, L, C = p[0], p[1], p[2]
    out = np.empty(w.size)
    for k in range(w.size):
        ar, ai = 0.0, w[k] * L          # 1j * w * L
        br, bi = 0.0, w[k] * C          # 1j * w * C
        d = br * br + bi * bi
        cr, ci = br / d, -bi / d        # 1 / (1j * w * C)
        zr, zi = R + ar + cr, ai + ci
        out[k] = np.sqrt(zr * zr + zi * zi)
    return out


@numba.njit(cache=True)
def horner_complex(c, z):
    """Re + Im of the polynomial with coefficients ``c`` at every point of ``z`` (Horner's rule)."""
    out = np.empty(z.size)
    for k in range(z.size):
        acc = c[c.size - 1] + 0j
        for j in range(c.size - 2, -1, -1):
            acc = acc * z[k] + c[j]
        out[k] = acc.real + acc.imag
    return out


@numba.njit(cache=True)
def horner_split(c, zr, zi):
    """The same with each complex number as two floats (the same multiplications and additions)."""
    out = np.empty(zr.size)
    for k in range(zr.size):
        ar, ai = c[c.size - 1], 0.0
        for j in range(c.size - 2, -1, -1):
            ar, ai = ar * zr[k] - ai * zi[k] + c[j], ar * zi[k] + ai * zr[k]
        out[k] = ar + ai
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    a = parser.parse_args()
    p = np.array([50.0, 1e-3, 1e-6])
    w = np.logspace(2, 7, a.n)
    direction = np.array([1.0, 0.0, 0.0])
    jac = duals.jacfwd(rlc_magnitude)
    seeded = dual_array(p, direction[None, :])
    rows = [("plain @njit call", best(lambda: rlc_magnitude(p, w), a.repeat))]
    rows.append(("duals.jvp, one direction", best(lambda: duals.jvp(rlc_magnitude, (p, w), (direction, None)), a.repeat)))
    rows.append(("promoting specialisation on prepared duals (1 lane)",
                 best(lambda: promoted_call(rlc_magnitude, [seeded, w]), a.repeat)))
    rows.append(("duals.jacfwd over (R, L, C), 3 lanes", best(lambda: jac(p, w), a.repeat)))
    split_jac = duals.jacfwd(rlc_magnitude_split)
    split_plain = best(lambda: rlc_magnitude_split(p, w), a.repeat)
    rows.append(("split into floats: plain @njit call", split_plain))
    rows.append(("split into floats: duals.jvp, one direction",
                 best(lambda: duals.jvp(rlc_magnitude_split, (p, w), (direction, None)), a.repeat)))
    rows.append(("split into floats: duals.jacfwd, 3 lanes", best(lambda: split_jac(p, w), a.repeat)))
    plain = rows[0][1]
    print(f"RLC sweep, n = {a.n} frequencies, one thread, best of {a.repeat}\n")
    print("| call | time (ms) | / plain |")
    print("|---|---:|---:|")
    for label, t in rows:
        base = split_plain if label.startswith("split") else plain
        print(f"| {label} | {t * 1e3:.3f} | {t / base:.2f} |")
    print("\n(split rows: relative to the split plain call)")
    z = np.exp(1j * np.linspace(0.0, 3.0, a.n)) * 0.9
    zr, zi = z.real.copy(), z.imag.copy()
    c = np.linspace(0.5, 1.5, 8)
    print(f"\nHorner's rule at n = {a.n} complex points, 8 real coefficients: the dual code alone "
          f"(promoting specialisation on prepared duals), ms, best of {a.repeat}\n")
    print("| lanes | complex duals | pairs of floats (real duals) | ratio |")
    print("|---:|---:|---:|---:|")
    for lanes in (1, 4, 8):
        d = dual_array(c, np.eye(8)[:lanes])
        tc = best(lambda: promoted_call(horner_complex, [d, z]), a.repeat)
        ts = best(lambda: promoted_call(horner_split, [d, zr, zi]), a.repeat)
        print(f"| {lanes} | {tc * 1e3:.2f} | {ts * 1e3:.2f} | {tc / ts:.2f} |")


if __name__ == "__main__":
    main()
