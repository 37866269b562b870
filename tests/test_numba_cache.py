"""duals' cached compiled functions stay correct when processes compile them side by side.

Two processes save different signatures of one cached function into one fresh cache directory
at the same moment: each waits inside Numba's save, between reading the index and writing it
back, until the other gets there too (or 5 s pass), so their saves overlap unless something
serialises them. Without the lock both take data file
number 1 and one signature's index entry names the other's machine code; with it, a third
process finds both signatures in the index, under distinct data files, and loads each one's
own code from the cache.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODULE = '''
import numpy as np
from duals._numba_cache import cached_njit

@cached_njit()
def affine(x):
    return 2 * x + 1
'''

SAVER = '''
import os, sys, time
sys.path.insert(0, {here!r})
from numba.core import caching
save_index = caching.IndexDataCacheFile._save_index

def meeting_save_index(self, overloads):
    # between reading the index and writing it back, wait (at most 5 s) for the other process
    # to get here too: only a lock around the whole save keeps it out
    open(os.path.join({here!r}, "saving-%d" % os.getpid()), "w").close()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        if sum(name.startswith("saving-") for name in os.listdir({here!r})) >= 2:
            break
        time.sleep(0.005)
    save_index(self, overloads)

caching.IndexDataCacheFile._save_index = meeting_save_index
import numpy as np
import cached_module
value = cached_module.affine({argument})
print(repr(value))
'''

CHECKER = '''
import json, sys
sys.path.insert(0, {here!r})
import numpy as np
import cached_module
a = cached_module.affine(np.float64(1.25))
b = cached_module.affine(np.arange(3, dtype=np.int64))
print(json.dumps({{"float": float(a), "ints": b.tolist(),
                   "hits": sum(cached_module.affine.stats.cache_hits.values()),
                   "misses": sum(cached_module.affine.stats.cache_misses.values())}}))
'''


def _env(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, DUALS_CACHE_DIR=cache, PYTHONPATH=ROOT)
    return env


@pytest.mark.slow
def test_two_processes_saving_two_signatures_keep_both(tmp_path):
    here = str(tmp_path)
    cache = str(tmp_path / "numba-cache")
    (tmp_path / "cached_module.py").write_text(MODULE)
    savers = []
    for argument in ("np.float64(1.25)", "np.arange(3, dtype=np.int64)"):
        script = SAVER.format(here=here, argument=argument)
        savers.append(subprocess.Popen([sys.executable, "-c", script], env=_env(cache),
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for saver in savers:
        out, err = saver.communicate(timeout=300)
        assert saver.returncode == 0, err
    indexes = [name for root, _, names in os.walk(cache) for name in names
               if name.startswith("cached_module.affine") and name.endswith(".nbi")]
    assert len(indexes) == 1, indexes
    data_files = [name for root, _, names in os.walk(cache) for name in names
                  if name.startswith("cached_module.affine") and name.endswith(".nbc")]
    assert len(data_files) == 2, data_files   # one per signature, none shared

    check = subprocess.run([sys.executable, "-c", CHECKER.format(here=here)], env=_env(cache),
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout.strip().splitlines()[-1])
    assert found["float"] == 3.5 and found["ints"] == [1, 3, 5]
    assert found["hits"] == 2 and found["misses"] == 0   # both loaded from the cache

    # the cache is duals' (DUALS_CACHE_DIR), not Numba's: a process with a Numba cache of its own
    # (a test runner's other worker) loads both as well
    other = dict(_env(cache), NUMBA_CACHE_DIR=str(tmp_path / "another-numba-cache"))
    check = subprocess.run([sys.executable, "-c", CHECKER.format(here=here)], env=other,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout.strip().splitlines()[-1])
    assert found["hits"] == 2 and found["misses"] == 0


def test_a_function_without_a_source_file_compiles_in_memory():
    import numpy as np

    from duals._numba_cache import cached_njit
    namespace = {}
    exec(textwrap.dedent("""
        def triple(x):
            return 3 * x
    """), namespace)
    triple = cached_njit()(namespace["triple"])
    assert triple(np.float64(2.0)) == 6.0


def test_by_contiguity_compiles_one_specialisation_per_pattern_of_contiguous_arrays():
    import numba
    import numpy as np

    from duals._numba_cache import by_contiguity

    def scaled_sum(x, y, out):
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = x[i, j] + 2.0 * y[i, j]

    kernel = by_contiguity(numba.njit(scaled_sum))
    a = np.arange(12.0).reshape(3, 4)
    read_only = a.copy()
    read_only.setflags(write=False)
    layouts = {"C": a.copy(), "F": np.asfortranarray(a), "strided": np.arange(24.0).reshape(3, 8)[:, ::2],
               "transposed": np.ascontiguousarray(a.T).T, "read-only": read_only,
               "broadcast": np.broadcast_to(a[:1], a.shape)}
    assert not layouts["strided"].flags.c_contiguous and not layouts["strided"].flags.f_contiguous
    for x in layouts.values():
        for y in layouts.values():
            out = np.empty((3, 4))
            kernel(x, y, out)
            assert np.array_equal(out, x + 2.0 * y)
    patterns = {(x.flags.c_contiguous, y.flags.c_contiguous)
                for x in layouts.values() for y in layouts.values()}
    assert len(kernel.signatures) == len(patterns) == 4
    for x in layouts.values():   # a mix met before runs without a new compilation
        kernel(x, layouts["F"], np.empty((3, 4)))
    assert len(kernel.signatures) == 4


CLEARER = '''
import json, os, sys, numpy as np, duals
from duals.kernels import cache_dir

def kernel_files():
    return sum(name.endswith(".nbc") for _, _, names in os.walk(cache_dir()) for name in names)

x = np.linspace(0.1, 1.0, 5000)   # large enough for the fused kernel (duals.ops.FUSED_FROM)
tangent = duals.jvp(np.sin, (x,), (np.ones(5000),))[1]
found = {"files": kernel_files(), "tangent": tangent[::500].tolist()}
if sys.argv[1] == "clear":
    duals.clear_cache()
    found["emptied"] = not os.path.exists(cache_dir())
    found["after clearing"] = duals.jvp(np.sin, (x,), (np.ones(5000),))[1][::500].tolist()
print(json.dumps(found))
'''


def test_clear_cache_empties_the_directory_and_later_processes_compile_again(tmp_path):
    env = _env(str(tmp_path / "cache"))
    found = []
    for how in ("clear", "again"):
        done = subprocess.run([sys.executable, "-c", CLEARER, how], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cleared, again = found
    assert cleared["files"] >= 1 and cleared["emptied"]
    assert cleared["after clearing"] == cleared["tangent"]   # this process keeps what it loaded
    assert again["files"] >= 1 and again["tangent"] == cleared["tangent"]   # compiled and saved again


def test_a_function_cached_with_other_rules_says_how_to_recompile():
    """Numba imports the generated module a cached function was compiled against; one of another
    rule table (an earlier duals) failed with a bare ModuleNotFoundError."""
    import importlib
    import duals.jit  # noqa: F401  (generates the rules module)
    with pytest.raises(ImportError, match=r"another version of duals' rules.*delete that cache"):
        importlib.import_module("duals_jit_rules_0123456789abcdef")
    with pytest.raises(ModuleNotFoundError):     # other names are not duals' business
        importlib.import_module("duals_not_generated_0123456789abcdef")


_UNWRITABLE = """
import warnings, numpy as np, numba
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    import duals
    g = duals.grad(lambda v: np.sum(np.sin(v) * v ** 2))(np.linspace(0.0, 1.0, 10000))
    c = duals.grad(numba.njit(lambda v: np.sum(np.sin(v) * v ** 2)))(np.linspace(0.0, 1.0, 5))
print(np.allclose(g[1:3], [np.cos(t) * t * t + 2 * t * np.sin(t) for t in np.linspace(0.0, 1.0, 10000)[1:3]]),
      any("cannot write its cache folder" in str(w.message) for w in seen))
"""


def test_a_cache_folder_that_cannot_be_written_falls_back_to_a_temporary_one():
    # a read-only home (containers, compute nodes): gradients of arrays of 4096 entries and more,
    # and of compiled code, raised FileNotFoundError
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["DUALS_CACHE_DIR"] = "/dev/null/duals"   # under a file: cannot be made
    done = subprocess.run([sys.executable, "-c", _UNWRITABLE], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["True", "True"], done.stderr[-2000:]


_WITHOUT_JIT = """
import numpy as np, numba, duals
x = np.linspace(0.0, 1.0, 5000)      # large enough for duals' compiled kernels
def energy(t):
    return np.sum(np.exp(-0.5 * x / (t[0] * t[0])))
@numba.njit                      # under NUMBA_DISABLE_JIT=1: the Python function itself
def loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i]) * x[i]
    return s
t = np.array([0.7])
print(float(duals.hessian(energy)(t)[0, 0]), float(duals.hessian(energy.__call__)(t)[0, 0]))
y = x[:5]
print(np.allclose(duals.grad(loop)(y), np.sin(y) + y * np.cos(y)))
"""


def test_the_python_path_works_under_numba_disable_jit(tmp_path):
    # the usual way to debug @njit code: duals' own kernels decorated by numba.njit are then
    # Python functions, and their caching and specialising raised AttributeError
    env = dict(_env(str(tmp_path)), NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", _WITHOUT_JIT], env=env, capture_output=True, text=True,
                          timeout=300)
    lines = done.stdout.split("\n")
    assert len(lines) >= 2, done.stderr[-2000:]
    first, second = (float(v) for v in lines[0].split())
    assert "compiled mode is unavailable" not in done.stderr
    t, x = 0.7, np.linspace(0.0, 1.0, 5000)
    exact = np.sum(np.exp(-0.5 * x / t ** 2) * (x ** 2 / t ** 6 - 3.0 * x / t ** 4))  # d²/dt² by hand
    assert first == pytest.approx(exact, rel=1e-12) and second == first
    assert lines[1] == "True"
