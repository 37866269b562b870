"""Compiled mode is installed on first use, never by ``import duals`` alone, and it changes nothing
for other Numba code in the same process. Each case runs in a fresh interpreter."""
import subprocess
import sys
import textwrap

import pytest


def run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


def test_import_duals_imports_neither_numba_nor_compiled_mode():
    out = run("""
        import sys, duals
        print("numba" in sys.modules, "duals.jit" in sys.modules)
    """)
    assert out == "False False"


def test_a_numba_process_that_never_imports_duals_is_not_touched():
    out = run("""
        import sys, numba
        numba.njit(lambda x: x + 1)(1)
        print("duals" in sys.modules)
    """)
    assert out == "False"


@pytest.mark.parametrize("order", ["duals first", "numba first"])
def test_a_dual_enters_njit_code_whichever_is_imported_first(order):
    imports = "import duals, numba" if order == "duals first" else "import numba, duals"
    out = run(f"""
        {imports}
        import math
        @numba.njit
        def f(x):
            return math.sin(x) * x
        print(f(duals.Dual(1.0, 1.0)).tangent == math.cos(1.0) + math.sin(1.0))
    """)
    assert out == "True"


def test_other_structured_dtypes_and_user_overloads_behave_as_without_duals():
    program = """
        import numpy as np, numba
        from numba.extending import overload
        {extra}
        def clamp(x):
            pass
        @overload(clamp)
        def _clamp(x):
            return lambda x: min(max(x, 0.0), 1.0)
        particle = np.dtype([("primal", np.float64), ("mass", np.float64)])
        state = np.dtype([("pos", np.float64), ("vel", np.float64, (2,))])
        @numba.njit
        def energy(ps, ss):
            total = 0.0
            for i in range(ps.shape[0]):
                total += clamp(ps[i].primal) * ps[i].mass + ss[i].vel[0] * ss[i].vel[1]
            return total
        ps = np.zeros(3, particle); ps["primal"] = [0.5, 2.0, -1.0]; ps["mass"] = 2.0
        ss = np.zeros(3, state); ss["vel"] = [[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]]
        print(repr(energy(ps, ss)), numba.typeof(ps).dtype, numba.typeof(ss).dtype)
    """
    without = run(program.format(extra=""))
    with_duals = run(program.format(extra="import duals, duals.jit"))
    assert without == with_duals
    assert without.startswith("17.25")


def test_an_unsupported_numba_gets_one_clear_error(monkeypatch):
    from duals.jit import compat
    monkeypatch.setattr(compat, "SUPPORTED", ((0, 1), (0, 2)))
    with pytest.raises(ImportError, match="compiled mode supports Numba 0.1 up to"):
        compat.check()
