"""The suite compiles at LLVM optimisation level 1 (tests/conftest.py); users' code runs at Numba's
default, level 3. Representative compiled code (scalar dual arithmetic in a time loop, linear
algebra, nested dual arrays, fused array expressions with where/abs/maximum, and the NumPy
path's kernels) is run again in a process at level 3 with empty caches, and its derivatives must
be those of this process bit for bit: no fast-math at either level (tangent lanes only may fuse a
product into a sum, duals/jit/lanes.py, which both levels do alike).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import duals

HERE = os.path.dirname(os.path.abspath(__file__))


def results():
    """{name: derivative as a list} of the representative cases, in this process."""
    import test_jit as scalar
    import test_jit_arrays as arrays
    import test_jit_linalg as linalg
    import test_jit_numpy as numpy_functions
    rng = np.random.default_rng(3)
    A, y = rng.normal(size=(5, 3)), np.sign(rng.normal(size=5))
    grid = (np.array([[0.3], [-1.2], [2.0]]), np.array([[0.5, 1.5, 2.5, 4.0]]))
    out = {
        "lorenz": duals.jacfwd(scalar.lorenz_rk4, argnums=(0, 1, 2, 3))(*scalar.LORENZ),
        # (the Gaussian-process likelihood of test_jit_linalg compiles for 26 s at level 3; Newton's
        # method takes the same LAPACK solve and the lanes' solves in half that)
        "newton solve": linalg.jacfwd(linalg.newton, argnums=(0, 1))(np.array([1.0, 1.0]), linalg.P, 30),
        "rosenbrock hessian": duals.hessian(arrays.rosenbrock)(np.array([0.9, -0.4, 1.3])),
        "robust loss": numpy_functions.jacfwd(numpy_functions.robust_loss, argnums=(0, 1))(
            np.array([0.2, -0.9, 0.45]), A, y),
        "numpy path": duals.jacrev(arrays.broadcast_grid.py_func, argnums=(0, 1))(*grid),
    }
    return {name: [np.asarray(part).tolist() for part in (value if isinstance(value, tuple) else (value,))]
            for name, value in out.items()}


def test_derivatives_at_optimisation_level_3_are_those_of_the_suite_bit_for_bit():
    here = results()
    with tempfile.TemporaryDirectory() as numba_cache, tempfile.TemporaryDirectory() as duals_cache:
        env = dict(os.environ, NUMBA_OPT="3", NUMBA_CACHE_DIR=numba_cache, DUALS_CACHE_DIR=duals_cache)
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_full_optimisation as t; "
                "print(json.dumps(t.results()))")
        done = subprocess.run([sys.executable, "-c", code, HERE], env=env, capture_output=True,
                              text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    level3 = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(level3) == set(here)
    for name in here:
        for got, want in zip(level3[name], here[name]):
            np.testing.assert_array_equal(np.array(got), np.array(want), err_msg=name)


def test_the_suite_compiles_at_level_1_unless_told_otherwise():
    from numba.core import config
    assert int(config.OPT) == int(os.environ["NUMBA_OPT"])  # conftest set it before Numba read it
