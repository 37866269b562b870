import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

# Compiling is most of this suite's time (Numba's own and duals' kernels, for every dual type the
# tests use), and most of compiling is LLVM optimising at Numba's default level 3. The suite
# compiles at level 1 unless NUMBA_OPT is set: 2-3x less compile time, the same numbers (no
# fast-math at any level: IEEE arithmetic is kept, so results are bit for bit those of level 3,
# which tests/test_full_optimisation.py checks on representative compiled code in a process at
# level 3). Level-1 code goes to a cache of duals' kernels of its own (DUALS_CACHE_DIR, unless
# set), so programs run outside the tests never load it. Set NUMBA_OPT=3 to test at level 3.
if "NUMBA_OPT" not in os.environ:
    os.environ["NUMBA_OPT"] = "1"
    os.environ.setdefault("DUALS_CACHE_DIR", os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".pytest_cache", "duals-opt1"))

# The suite runs in two processes (pytest-xdist, ``-n 2`` in pyproject.toml). Numba's on-disk cache
# is not safe for two processes compiling the same function at once (an index entry can end up
# naming the other process's code), so each worker keeps the tests' own ``cache=True`` functions in
# a Numba cache of its own. duals' compiled functions hold a lock around their cache
# (duals/_numba_cache.py) and live in DUALS_CACHE_DIR, which the workers share: what one worker
# compiled, the other loads.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER:
    CACHES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".pytest_cache")
    os.environ.setdefault("DUALS_CACHE_DIR", os.path.join(CACHES, "duals"))
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.environ.get("NUMBA_CACHE_DIR", os.path.join(CACHES, "numba")),
                                                 WORKER)
