"""One BLAS thread for the examples, pinned the way the benchmarks pin it.

Every example imports this module before NumPy, so that its timings are measured like those of
``benchmarks/`` (``benchmarks/_threads.py``, ``benchmarks/RESULTS.md``) and do not depend on how
many cores the BLAS library would otherwise start threads on.

* The thread-count variables of the BLAS and OpenMP libraries (``OMP_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ``VECLIB_MAXIMUM_THREADS``,
  ``NUMEXPR_NUM_THREADS``) are set to 1: a library reads them once, when it loads, so this covers
  every library loaded from now on (NumPy's BLAS when NumPy is not imported yet, SciPy's own).
* When NumPy was already imported (an example run inside a test session or a notebook) and
  ``threadpoolctl`` is installed, the libraries already loaded are limited to one thread through
  it. Without threadpoolctl such a process keeps the threads its BLAS started with, which
  :func:`describe` then says.

Numba's own thread pool (``NUMBA_NUM_THREADS``) is left alone: the examples and duals' kernels
are not parallel, and Numba refuses a change of it once its threads run.
"""
import os
import sys

THREADS = 1
VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

_numpy_was_loaded = "numpy" in sys.modules
for _name in VARIABLES:
    os.environ[_name] = str(THREADS)

try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None

if threadpoolctl is not None and _numpy_was_loaded:
    threadpoolctl.threadpool_limits(limits=THREADS)


def describe():
    """One line for an example's report: the pinned count and, with threadpoolctl, what is loaded."""
    if threadpoolctl is not None:
        loaded = ", ".join(
            f"{info['internal_api']} ({os.path.basename(os.path.dirname(info['filepath']))}) "
            f"{info['num_threads']}" for info in threadpoolctl.threadpool_info()) or "none loaded"
        how = f"threads in use (threadpoolctl): {loaded}"
    elif _numpy_was_loaded:
        how = ("NumPy was imported before the pin and threadpoolctl is not installed: "
               "its BLAS keeps the threads it started with")
    else:
        how = "set before NumPy was imported"
    return (f"BLAS threads pinned to {THREADS} as in benchmarks/_threads.py "
            f"({', '.join(VARIABLES[:2])}, ...); {how}")
