"""python -m benchmarks.tape_split: where W7's compiled gradient spends its time.

Records W7's Lorenz-96 misfit (80 inputs, 1000 RK4 steps) once on the compiled tape, then times,
single-threaded, best of 20: the plain @njit call, the recording alone (the user's code on
adjoints), the sweep alone (on the recorded tape, adjoints reset each time) and the whole
``duals.grad``. Prints nodes, bytes of tape, and ns per node for the recording and the sweep,
and the time to read the tape once with no arithmetic (independent sums over its words): the
floor of any sweep over a tape of this size, set by memory bandwidth.
Then the recording alone inside one compiled call, repeated over shorter horizons (a tape that
stays in L2 against one that does not): whether it is bound by memory or by its own work.
"""
import benchmarks._threads  # noqa: F401  (one thread for BLAS and Numba, before NumPy)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
from duals.jit import reverse_driver  # noqa: E402
from duals.jit.tape import COUNT, Tape  # noqa: E402

from benchmarks.bench_checkpoint import best  # noqa: E402
from benchmarks.workloads.w7_lorenz96_gradient import STEPS, THETA, _compiled  # noqa: E402


def main():
    misfit = _compiled(cache=False)
    tape = Tape(np.float64)

    @numba.njit
    def record(address, theta, steps):
        adjoints, _ = reverse_driver._adjoints(theta, 1, address)
        return misfit(adjoints, steps)

    def recording():
        tape.start(THETA.size, 1 << 21)
        record(tape.pointer, THETA, STEPS)

    recording()
    nodes = tape.recorded
    adj = np.zeros(nodes)

    def sweeping():
        adj[:] = 0.0
        adj[-1] = 1.0
        tape.sweep(THETA.size + 1, adj)

    sweeping()
    words = tape.dtype.itemsize // 8
    nodes_now = tape.nodes()
    parents, partials = nodes_now.view(np.uint32).reshape(-1, 2 * words), nodes_now.view(np.float64).reshape(-1, words)
    reading = lambda: _read_tape(parents, partials, THETA.size + 1)  # noqa: E731
    reading()
    gradient = duals.grad(misfit)
    gradient(THETA, STEPS)
    plain = best(lambda: misfit(THETA, STEPS), repeats=20)
    rec, sweep, read, whole = (best(run, repeats=20)
                               for run in (recording, sweeping, reading, lambda: gradient(THETA, STEPS)))
    print(f"W7: {nodes} nodes, {nodes * tape.dtype.itemsize / 2**20:.1f} MiB of tape")
    print(f"plain @njit    {plain * 1e3:7.3f} ms")
    print(f"recording      {rec * 1e3:7.3f} ms  {rec / plain:5.1f}x  {rec / nodes * 1e9:.2f} ns/node")
    print(f"sweep          {sweep * 1e3:7.3f} ms  {sweep / plain:5.1f}x  {sweep / nodes * 1e9:.2f} ns/node")
    print(f"reading alone  {read * 1e3:7.3f} ms  {read / plain:5.1f}x  {read / nodes * 1e9:.2f} ns/node"
          "  (the tape read once, no arithmetic: the floor of any sweep)")
    print(f"duals.grad     {whole * 1e3:7.3f} ms  {whole / plain:5.1f}x")
    _recording_by_tape_size(misfit, tape)


@numba.njit
def _read_tape(parents, partials, first):
    """Every word of nodes ``first..`` read once, last to first as the sweep does, into four
    independent sums (one sum would be bound by the latency of its additions, not by memory)."""
    s0 = s1 = s2 = s3 = 0.0
    t = 0
    k = parents.shape[0] - 1
    while k - 1 >= first:
        s0 += partials[k, 1]
        s1 += partials[k, 2]
        s2 += partials[k - 1, 1]
        s3 += partials[k - 1, 2]
        t += parents[k, 0] + parents[k, 1] + parents[k - 1, 0] + parents[k - 1, 1]
        k -= 2
    return s0 + s1 + s2 + s3 + t


def _recording_by_tape_size(misfit, tape):
    @numba.njit
    def record_many(header, address, theta, steps, repeats):
        for _ in range(repeats):
            header[COUNT] = theta.size + 1
            adjoints, _ = reverse_driver._adjoints(theta, 1, address)
            misfit(adjoints, steps)

    for steps in (10, 50, 200, STEPS):
        repeats = STEPS // steps
        tape.start(THETA.size, 1 << 21)
        record_many(tape.header, tape.pointer, THETA, steps, repeats)
        nodes = tape.recorded - THETA.size - 1
        rec = best(lambda: record_many(tape.header, tape.pointer, THETA, steps, repeats), repeats=20)
        mib = nodes * tape.dtype.itemsize / 2**20
        print(f"recording {repeats:4d} x {steps:4d} steps in one call: tape {mib:5.2f} MiB, "
              f"{rec / (nodes * repeats) * 1e9:.2f} ns/node")


if __name__ == "__main__":
    main()
