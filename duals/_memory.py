"""Keep large temporaries in the allocator instead of returning them to the kernel.

Derivative arrays are large and short-lived: a Hessian sweep allocates and frees the same
few hundred-kilobyte tangent blocks many times. glibc serves blocks above its mmap
threshold (128 KiB at first) with fresh ``mmap`` pages, so every such array is
page-faulted in again, which measured three to four times slower than the arithmetic
itself. Raising the thresholds keeps those blocks in the heap for reuse.

This changes the allocator of the whole process, so duals never does it by itself: call
:func:`tune_allocator` once if you want it. Reverse mode keeps its own large buffers between
calls (:mod:`duals.cotangents`, up to 32 MiB per thread): the recording computes into them and the
walk reuses them, so a gradient no longer depends on it (Rosenbrock's at n = 10⁵ took 2.8-3.6 ms
or 0.5-0.7 ms by default, depending on what the process had allocated before, and 0.5 ms tuned;
now 0.5 ms either way). Forward over reverse still allocates a value and a tangent per rule.
``python -m benchmarks.alloc_effect`` measures it.
"""
import ctypes
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def tune_allocator(mmap_threshold=32 << 20, trim_threshold=64 << 20):
    """tune_allocator(mmap_threshold=32 MiB, trim_threshold=64 MiB) -> bool: raise glibc's thresholds.

    A process-wide setting of the C allocator (``mallopt``), made only when you call it: large
    short-lived arrays (tangent blocks, cotangents) are then reused from the heap instead of
    being mapped and page-faulted in again on every allocation. Returns False where it does not
    apply (not Linux with glibc).

    >>> isinstance(tune_allocator(), bool)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold))
    except (OSError, AttributeError):
        return False
