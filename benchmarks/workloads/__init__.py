"""The workloads: issue 7's W1-W6, issue 16's W7 and the speed items of issues 2-4 (K1, K2) and 15 (K3).

Each module has ``ID``, ``TITLE``, ``cases(quick) -> list[Case]`` and ``targets(records)``
returning ``(target, measured, met)`` rows (``met`` is True, False or None).
"""
from . import (w1_rosenbrock, w2_rosenbrock_hessian, w3_dense_jacobian, w4_lorenz, w5_overhead,
               w6_black_scholes, w7_lorenz96_gradient, k1_kernels, k2_chain, k3_numpy_primitives)

ALL = (w1_rosenbrock, w2_rosenbrock_hessian, w3_dense_jacobian, w4_lorenz, w5_overhead,
       w6_black_scholes, w7_lorenz96_gradient, k1_kernels, k2_chain, k3_numpy_primitives)


def pick(records, workload, system, task, case=None):
    """pick(records, ...) -> the first ok record matching, or None."""
    for r in records:
        if (r["workload"], r["system"], r["task"]) == (workload, system, task) and \
                r["status"] == "ok" and r["median_s"] and (case is None or r["case"] == case):
            return r
    return None
