"""Keep large temporaries in the allocator instead of returning them to the kernel.

Derivative arrays are large and short-lived: a Hessian sweep allocates and frees the same
few hundred-kilobyte tangent blocks many times. glibc serves blocks above its mmap
threshold (128 KiB at first) with fresh ``mmap`` pages, so every such array is
page-faulted in again, which measured three to four times slower than the arithmetic
itself (``benchmarks``: Rosenbrock Hessian, n = 300). Raising the thresholds once at
import keeps those blocks in the heap for reuse. Set ``DUALS_MALLOC_TUNING=0`` to keep
the C library's defaults.
"""
import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def tune_allocator(mmap_threshold=32 << 20, trim_threshold=64 << 20):
    """tune_allocator() -> bool: raise glibc's mmap/trim thresholds; False where not applicable."""
    if os.environ.get("DUALS_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold))
    except (OSError, AttributeError):
        return False
