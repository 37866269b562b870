"""Adding an element-wise function is one entry in ``duals.derivatives.TABLE``.

A fresh interpreter loads the table, adds ``softplus`` to it (a function NumPy does not have,
so its value comes from the generated kernel too), then imports duals. Without editing anything
else, the new function must exist in ``duals.numpy``, differentiate in forward, reverse and
second-order modes (its generated second-order kernel included), agree with its closed form, run compiled inside ``@numba.njit`` code, and
carry its own sampling domain for the test table.
"""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import importlib.util, math, os, sys
    root = sys.argv[1]
    spec = importlib.util.spec_from_file_location(
        "duals.derivatives", os.path.join(root, "duals", "derivatives.py"))
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    table.TABLE["softplus"] = table.unary("logaddexp(0.0, x)", "expit(x)", domain=(-3.0, 3.0))
    table.refresh()
    sys.modules["duals.derivatives"] = table      # what `import duals` will read

    import numpy as np
    import numba
    import duals
    import duals.numpy as dnp
    from duals.jit import fn

    x = np.array([-1.5, 0.0, 0.7, 2.0])
    sigma = 1.0 / (1.0 + np.exp(-x))
    assert np.allclose(dnp.softplus(x), np.log1p(np.exp(x)))
    J = np.diag(sigma)
    for name, jac in (("jacfwd", duals.jacfwd), ("jacrev", duals.jacrev)):
        assert np.allclose(jac(dnp.softplus)(x), J), name
    total = lambda x: dnp.sum(dnp.softplus(x))
    assert np.allclose(duals.grad(total)(x), sigma)
    H = np.diag(sigma * (1.0 - sigma))
    assert np.allclose(duals.hessian(total)(x), H)
    assert np.allclose(duals.jacrev(duals.jacrev(total))(x), H)
    big = np.linspace(-3.0, 3.0, 5000)   # large enough for the generated second-order kernel
    s = 1.0 / (1.0 + np.exp(-big))
    assert np.allclose(duals.hvp(total, big, np.cos(big)), s * (1.0 - s) * np.cos(big))
    assert duals.testing.check_grads(total, (x,), order=2)
    assert duals.gradcheck(dnp.softplus, x)
    d = duals.Dual(0.7, 1.0)
    assert math.isclose(dnp.softplus(d).tangent, 1.0 / (1.0 + math.exp(-0.7)))

    @numba.njit
    def loss(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += fn.softplus(2.0 * x[i])
        return total
    assert np.allclose(duals.jacfwd(loss)(x), 2.0 / (1.0 + np.exp(-2.0 * x)))
    print("ok")
""")


def test_one_table_entry_gives_a_function_in_every_mode(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, DUALS_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", SCRIPT, root], capture_output=True, text=True,
                            timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip().endswith("ok")


def test_test_domains_come_from_the_table():
    from duals import derivatives
    from op_cases import UNARY_DOMAIN
    assert UNARY_DOMAIN["arcsin"] == derivatives.TABLE["arcsin"].domain
    assert set(UNARY_DOMAIN) == set(derivatives.UNARY)
