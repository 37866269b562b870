"""When forward mode compiles its fused kernels: an operation takes NumPy's rules until its calls
would have paid for the kernel's compilation, and a kernel an earlier process cached runs at once.
Both paths give the same derivatives. Each case runs in a fresh process with its own cache."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SESSION = '''
import json, sys
import numpy as np
import duals
from duals import kernels

kernels.KERNEL_COMPILE_S = float(sys.argv[1])
x = np.linspace(0.1, 1.0, 7)
y = np.cos(x)
jac = duals.jacfwd(lambda x: np.sin(x) * y + x)


def compiled():
    return {name: len(kernels.kernel(name, "jvp").signatures) for name in ("sin", "mul")}


first = jac(x)
found = {"first": first.tolist(), "compiled after the first call": compiled()}
calls = 1
while compiled()["mul"] == 0 and calls < 1000:
    last = jac(x)
    calls += 1
found["calls until mul's kernel"] = calls
found["with the kernel"] = jac(x).tolist()
found["cache hits"] = sum(kernels.kernel("mul", "jvp").stats.cache_hits.values())
print(json.dumps(found))
'''


def _session(tmp_path, threshold):
    env = dict(os.environ, DUALS_CACHE_DIR=str(tmp_path / "duals-cache"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), PYTHONPATH=ROOT)
    run = subprocess.run([sys.executable, "-c", SESSION, str(threshold)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_small_calls_take_the_rules_until_the_kernel_pays_and_a_cached_kernel_runs_at_once(tmp_path):
    import numpy as np
    x = np.linspace(0.1, 1.0, 7)
    exact = np.diag(np.cos(x) * np.cos(x) + 1.0)

    # a compilation worth 2e-4 s: about 50 calls of 7 entries and 7 lanes pay for it
    fresh = _session(tmp_path, 2e-4)
    assert fresh["compiled after the first call"] == {"sin": 0, "mul": 0}   # the rules
    assert 10 < fresh["calls until mul's kernel"] < 100
    assert fresh["cache hits"] == 0
    for key in ("first", "with the kernel"):
        np.testing.assert_allclose(fresh[key], exact, rtol=1e-15, atol=0)

    # a later process, the default cost of a second: the kernels it finds on disk run at once
    later = _session(tmp_path, 1.0)
    assert later["compiled after the first call"] == {"sin": 1, "mul": 1}
    assert later["calls until mul's kernel"] == 1 and later["cache hits"] >= 1
    np.testing.assert_allclose(later["first"], exact, rtol=1e-15, atol=0)
