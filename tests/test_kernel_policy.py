"""Which element-wise forward path runs: the fused kernels from ``duals.ops.FUSED_FROM`` values and
tangent entries, NumPy's calls through the rules below (nothing compiles). The choice depends on
the sizes only, never on what ran before, so a result is the same in every process (``workers=``
promises the serial result bit for bit), and both paths give the exact derivative."""
import numpy as np

import duals
from duals import kernels


def _sine_times_cosine_plus_x(x):
    return np.sin(x) * np.cos(x) + x


def test_small_arrays_take_the_rules_and_large_ones_the_fused_kernels(monkeypatch):
    ran = []
    compiled = kernels.kernel
    monkeypatch.setattr(kernels, "kernel", lambda name, kind: ran.append(name) or compiled(name, kind))

    small = np.linspace(0.1, 1.0, 7)   # 7 values x (1 + 7 lanes)
    for _ in range(3):
        J = duals.jacfwd(_sine_times_cosine_plus_x)(small)
        np.testing.assert_allclose(J, np.diag(np.cos(2 * small) + 1.0), rtol=1e-14, atol=0)
    assert ran == []

    large = np.linspace(0.1, 1.0, 5000)   # 5000 values x (1 + 1 lane)
    _, tangent = duals.jvp(_sine_times_cosine_plus_x, (large,), (np.ones_like(large),))
    np.testing.assert_allclose(tangent, np.cos(2 * large) + 1.0, rtol=1e-13, atol=1e-15)
    assert {"sin", "cos", "mul"} <= set(ran)


def test_a_piecewise_constant_operation_keeps_its_zero_tangent_on_both_paths():
    for n in (3, 5000):
        x = duals.Dual(np.linspace(0.5, 4.0, n), np.ones(n))
        q = x // 1.5
        assert type(q) is duals.Dual and not q.tangent.any()
        np.testing.assert_array_equal(q.primal, np.linspace(0.5, 4.0, n) // 1.5)
