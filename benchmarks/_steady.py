"""Benchmarks time the steady state of a long loop, so compiled drivers are built at once.

duals builds the compiled driver of a call layout only once the calls made without it have
paid for its compilation (tens of thousands of calls of a small function; see
``duals/jit/driver.py``). A benchmark's timed repetitions stand for such a loop, which would
have its driver long before its end, so they get it from the third call; the cost of a first
call is measured separately, in fresh processes.
"""
import time


def drivers_at_once():
    """drivers_at_once(): drivers from the third call of a layout (this process only)."""
    from duals.jit import driver
    driver.DRIVER_COMPILE_S = 0.0


def best(fn, repeats=5):
    """best(fn, repeats=5) -> the fastest of ``repeats`` timed calls of ``fn``, after one untimed."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def per_call(fn, loops=200, repeats=5):
    """per_call(fn, loops=200, repeats=5) -> the best time per call over ``repeats`` loops of
    ``loops`` calls, after one untimed call."""
    fn()
    best_time = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best_time = min(best_time, (time.perf_counter() - start) / loops)
    return best_time
