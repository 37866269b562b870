"""Compiled forward mode by lane count, through a call into another ``@njit`` function.

    python benchmarks/lane_counts.py

A Hodgkin-Huxley membrane (forward Euler, 20,000 steps) whose right-hand side is an ``@njit``
helper returning a 4-tuple, called once a step; ``duals.jacfwd`` over 1 to 8 of its parameters,
as a ratio to the plain call, and the same model with the helper pasted into the loop. Lane
counts that are not powers of two ran 6-50x slower through the call than inlined until the
lanes were padded to a power of two (LLVM left the padding undefined, and subnormal garbage
there cost a microcode assist per vector instruction). One thread, best of several calls,
checked against central differences.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._threads  # noqa: E402,F401  (one thread for BLAS and Numba, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from benchmarks._steady import best  # noqa: E402


@numba.njit(cache=True)
def rhs(V, m, h, n, gNa, gK, gL, ENa, EK, EL, I):
    dV = I - gNa * m ** 3 * h * (V - ENa) - gK * n ** 4 * (V - EK) - gL * (V - EL)
    dm = 0.1 * math.exp(-V / 30.0) * (1.0 - m) - 4.0 * math.exp(-(V + 65.0) / 18.0) * m
    dh = 0.07 * math.exp(-(V + 65.0) / 20.0) * (1.0 - h) - h / (1.0 + math.exp(-(V + 35.0) / 10.0))
    dn = 0.01 * math.exp(-V / 40.0) * (1.0 - n) - 0.125 * math.exp(-(V + 65.0) / 80.0) * n
    return dV, dm, dh, dn


def membrane_calling(rates):
    """The membrane model whose right-hand side is ``rates`` (called, or inlined)."""
    @numba.njit
    def membrane(gNa, gK, gL, ENa, EK, EL, I, dt, steps):
        V, m, h, n, total = -65.0, 0.05, 0.6, 0.32, 0.0
        for _ in range(steps):
            a, b, c, d = rates(V, m, h, n, gNa, gK, gL, ENa, EK, EL, I)
            V, m, h, n = V + dt * a, m + dt * b, h + dt * c, n + dt * d
            total += V * V
        return total
    return membrane


membrane = membrane_calling(rhs)
membrane_inlined = membrane_calling(numba.njit(inline="always")(rhs.py_func))


def main():
    args = (120.0, 36.0, 0.3, 50.0, -77.0, -54.387, 10.0, 0.01, 20000)
    argnums = (0, 1, 2, 3, 4, 5, 6, 7)
    J = duals.jacfwd(membrane, argnums=argnums)(*args)
    for i in argnums:
        step = 1e-6 * max(1.0, abs(args[i]))
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + step, args[i] - step
        np.testing.assert_allclose(J[i], (membrane(*up) - membrane(*down)) / (2 * step), rtol=1e-5)
    print("| lanes | jacfwd through the call, × plain | jacfwd inlined, × plain |")
    print("|---:|---:|---:|")
    for f in (membrane, membrane_inlined):
        f(*args)
    plain = best(lambda: membrane(*args))
    plain_inlined = best(lambda: membrane_inlined(*args))
    for lanes in range(1, 9):
        nums = argnums[:lanes]
        called = best(lambda: duals.jacfwd(membrane, argnums=nums)(*args)) / plain
        inlined = best(lambda: duals.jacfwd(membrane_inlined, argnums=nums)(*args)) / plain_inlined
        print(f"| {lanes} | {called:.1f} | {inlined:.1f} |")


if __name__ == "__main__":
    main()
