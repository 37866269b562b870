"""workers=: the Jacobian of an @njit simulation serially, over 2 processes, and on a 2-worker Dask cluster.

    python -m benchmarks.workers [--repeats 3] [--steps 12000] [--no-dask] [--quick]

The simulation is a Fisher-KPP reaction-diffusion front, ``u_t = D u_xx + r(x) u (1 - u)`` on 1024
cells with no-flux ends, Heun's method for ``--steps`` steps (about 50 ms per plain evaluation on
this project's 2-core machine), whose 64 inputs are the growth rates of 64 stretches of 16 cells
and whose 64 outputs are the final state at every 16th cell. ``duals.jacfwd`` pushes the 64
directions through the compiled loop as 4 chunks of 16 lanes; ``workers=`` spreads those chunks:

- ``serial``: ``workers=None``;
- ``workers=2``: a 2-process pool that each call starts (by fork: the workers inherit the compiled
  code) and shuts down; once more while another thread runs in this process (a kept pool's
  manager), when the pool starts by a fork server and its new workers import duals and load the
  compiled code at every call;
- ``kept pool``: a ``ProcessPoolExecutor(2)`` kept between calls;
- ``dask``: a ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``.

Every result is checked to equal the serial one bit for bit. The ways are timed in turns (one
call of each, then again, ``--repeats`` turns, after one first call each, whose time includes
compiling or loading from Numba's cache in new workers), so that each meets the same load from
other work; the speed-up is the median over turns of serial time / its time, the serial call
being timed in the same turns (a Dask client runs threads in this process, after which pools
would start by a fork server: it is measured last, with serial calls of its own). The Dask path's
per-task overhead: a round of 4 empty duals tasks (pickling, scheduling, gathering), and the
Jacobian's time beyond half the serial time. Other sessions share the 2 cores: the load average
is printed before and after; run it more than once. Since a busy machine slows every process,
the CPU time of the busiest process of each call (the caller's, or a worker's: psutil for a kept
pool, the finished pools' workers' total over two, ``client.run`` on Dask) is given too:
serial CPU time over it is the speed-up that two free cores give.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks import _threads  # noqa: E402,F401  (one thread per process, before NumPy and Numba)

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import duals  # noqa: E402
import duals.workers  # noqa: E402

CELLS, INPUTS = 1024, 64
DIFFUSION = 0.002


@numba.njit(cache=True)
def _rates_of_change(u, rates, diffusion, dx, out):
    n = u.size
    per = n // rates.size
    c = diffusion / (dx * dx)
    for i in range(n):
        left = u[i - 1] if i > 0 else u[1]
        right = u[i + 1] if i < n - 1 else u[n - 2]
        out[i] = c * (left - 2.0 * u[i] + right) + rates[i // per] * u[i] * (1.0 - u[i])


@numba.njit(cache=True)
def fisher_kpp(rates, u0, diffusion, n_steps):
    """The front after ``n_steps`` Heun steps, sampled at ``rates.size`` evenly spaced cells."""
    n = u0.size
    dx = 1.0 / n
    dt = 0.2 * dx * dx / diffusion
    u = u0.copy()
    k1 = np.empty_like(u)
    k2 = np.empty_like(u)
    trial = np.empty_like(u)
    for _ in range(n_steps):
        _rates_of_change(u, rates, diffusion, dx, k1)
        for i in range(n):
            trial[i] = u[i] + dt * k1[i]
        _rates_of_change(trial, rates, diffusion, dx, k2)
        for i in range(n):
            u[i] = u[i] + 0.5 * dt * (k1[i] + k2[i])
    return u[::n // rates.size].copy()


def _empty_task(block):
    return [None] * len(block)


def problem():
    x = (np.arange(CELLS) + 0.5) / CELLS
    rates = 20.0 + 5.0 * np.sin(2 * np.pi * (np.arange(INPUTS) + 0.5) / INPUTS)
    u0 = np.exp(-((x - 0.2) / 0.05) ** 2)
    return rates, u0


def _main_cpu():
    return {"caller": time.process_time()}


def _owned_pool_cpu():
    """The caller's CPU time, and that of the finished pools' workers per worker (each gets two of
    the four equal chunks)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"caller": time.process_time(), "a worker": (children.ru_utime + children.ru_stime) / 2}


def _kept_pool_cpu(pool):
    def probe():
        import psutil
        cpu = {"caller": time.process_time()}
        for pid in list(pool._processes):
            times = psutil.Process(pid).cpu_times()
            cpu[pid] = times.user + times.system
        return cpu
    return probe


def _dask_cpu(client):
    return lambda: dict(client.run(time.process_time), caller=time.process_time())


def turns(entries, repeats, reference):
    """Time ``entries`` ({name: (fn, cpu probe)}) in turns (turn 1 of each, then turn 2, ...), so
    that every entry meets the same load from other work; every result must equal ``reference``
    bit for bit. -> {name: (first call, [wall times], [CPU time of the busiest process])}."""
    out = {}
    for name, (fn, _) in entries.items():
        t = time.perf_counter()
        first = fn()
        out[name] = (time.perf_counter() - t, [], [])
        if reference is not None and not np.array_equal(first, reference):
            raise AssertionError(f"{name}: the Jacobian differs from the serial one")
    for _ in range(repeats):
        for name, (fn, probe) in entries.items():
            before = probe()
            t = time.perf_counter()
            fn()
            out[name][1].append(time.perf_counter() - t)
            after = probe()
            out[name][2].append(max((after[p] - before.get(p, 0.0) for p in after), default=None))
    return out


def rows_of(measured, serial="serial"):
    """Table rows: first call, best and median wall time, the median over turns of serial wall
    time / this one, the median CPU time of the busiest process and serial CPU time / that."""
    base_wall, base_cpu = measured[serial][1], measured[serial][2]
    rows = []
    for name, (first, walls, cpus) in measured.items():
        known = None not in cpus
        rows.append((name, first, min(walls), statistics.median(walls),
                     statistics.median([b / t for b, t in zip(base_wall, walls)]),
                     statistics.median(cpus) if known else None,
                     statistics.median([b / c for b, c in zip(base_cpu, cpus)]) if known else None))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=12000)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 20 steps, one turn, no fork-server row, no Dask")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.repeats, args.no_dask = 20, 1, True
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}, NumPy {np.__version__}, "
          f"Numba {numba.__version__}")
    rates, u0 = problem()
    call = (rates, u0, DIFFUSION, args.steps)
    plain = turns({"plain": (lambda: fisher_kpp(*call), _main_cpu)}, args.repeats, None)["plain"][1]
    print(f"one plain evaluation: {min(plain) * 1e3:.1f} ms (median {statistics.median(plain) * 1e3:.1f} ms)")

    serial = (lambda: serial_jacobian(*call), _main_cpu)
    serial_jacobian = duals.jacfwd(fisher_kpp)
    reference = serial_jacobian(*call)
    owned = duals.jacfwd(fisher_kpp, workers=2)
    # phase 1: no other thread in this process, so the pool of each call forks
    rows = rows_of(turns({"serial": serial,
                          "workers=2 (a pool per call, forked)": (lambda: owned(*call), _owned_pool_cpu)},
                         args.repeats, reference))
    with ProcessPoolExecutor(2) as pool:   # phase 2: a kept pool (its manager thread runs here)
        kept = duals.jacfwd(fisher_kpp, workers=pool)
        rows += rows_of(turns({"serial": serial,
                               "kept ProcessPoolExecutor(2)": (lambda: kept(*call), _kept_pool_cpu(pool))},
                              args.repeats, reference))[1:]
        if not args.quick:   # another thread runs: a fork server, whose children are not ours
            rows += rows_of(turns({"serial": serial,
                                   "workers=2 with a thread running (fork server)":
                                       (lambda: owned(*call), lambda: {})}, 1, reference))[1:]
    overhead = None
    if not args.no_dask:                   # phase 3: a Dask client runs threads in this process
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            on_dask = duals.jacfwd(fisher_kpp, workers=client)
            measured = turns({"serial": serial,
                              "dask LocalCluster(2 workers)": (lambda: on_dask(*call), _dask_cpu(client))},
                             args.repeats, reference)
            rows += rows_of(measured)[1:]
            spread = duals.workers.resolve(client, "benchmark")
            empty = turns({"empty": (lambda: spread.run(_empty_task, (), range(4)), _main_cpu)}, 5,
                          None)["empty"][1]
            overhead = (min(empty), min(measured["dask LocalCluster(2 workers)"][1]),
                        statistics.median(measured["serial"][1]))

    print(f"\njacfwd of the {INPUTS}-input simulation ({INPUTS // 16} chunks of 16 lanes, "
          f"{args.steps} steps), {args.repeats} turns:\n")
    print("| how | first call | best | median | speed-up | CPU time of the busiest process | "
          "speed-up on free cores |")
    print("|---|---|---|---|---|---|---|")
    for name, first, best, median, ratio, cpu, cpu_ratio in rows:
        cpu = "n/a" if cpu is None else f"{cpu:.3f} s"
        cpu_ratio = "n/a" if cpu_ratio is None else f"{cpu_ratio:.2f}x"
        print(f"| {name} | {first:.2f} s | {best:.3f} s | {median:.3f} s | {ratio:.2f}x | {cpu} | {cpu_ratio} |")
    if overhead is not None:
        empty, dask_best, serial_median = overhead
        tasks = 4
        print(f"\nDask per-task overhead: a round of {tasks} empty duals tasks on 2 workers takes "
              f"{empty * 1e3:.1f} ms ({empty / tasks * 1e3:.1f} ms per task); the Jacobian's best "
              f"took {(dask_best - serial_median / 2) * 1e3:.0f} ms beyond half the serial median")
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
