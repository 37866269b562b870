"""Benchmarks time the steady state of a long loop, so what duals compiles lazily comes at once.

duals compiles two things only once the calls made without them have paid for their
compilation: the compiled driver of a call layout (tens of thousands of calls of a small
function; see ``duals/jit/driver.py``) and the fused forward kernel of an element-wise operation
(see ``duals.kernels.KERNEL_COMPILE_S``). A benchmark's timed repetitions stand for such a loop,
which would have both long before its end, so they get them from the first calls; the cost of a
first call is measured separately, in fresh processes.
"""


def compile_at_once():
    """compile_at_once(): drivers from the third call of a layout and fused kernels from the first
    call (this process only)."""
    from duals import kernels
    from duals.jit import driver
    driver.DRIVER_COMPILE_S = 0.0
    kernels.KERNEL_COMPILE_S = 0.0
