"""python -m benchmarks.run [--quick] [--only W1,W3] [--no-peers] [--json out.json]: every workload, every system.

Prints a markdown table of median times and ratios to the plain function, the targets of
the issues with what was measured, and writes the raw results as JSON.
"""
from . import _threads  # noqa: F401  (single-threaded: must come before NumPy, JAX, torch)

import argparse
import json
import os
import sys
import time
import traceback

from . import external, report, systems
from .timing import QUICK, Settings, run_case


def _workloads(only, notes):
    from .workloads import ALL
    mods = list(ALL)
    jit = external.load_workload(notes)
    if jit is not None:
        mods.append(jit)
    if only:
        wanted = _wanted(only)
        mods = [m for m in mods if m.ID.upper() in wanted]
    return mods


def _wanted(only):
    return {w.strip().upper() for w in only.split(",") if w.strip()}


def run(quick=False, only=None, settings=None, log=print):
    """run(quick=False, only=None) -> (records, targets, extra): every selected workload, timed.

    ``extra`` holds notes and the verbatim output of a script-style ``bench_jit.py``.
    """
    settings = settings or (QUICK if quick else Settings())
    records, targets, extra = [], [], {"notes": [], "bench_jit": None}
    mods = _workloads(only, extra["notes"])
    for mod in mods:
        start = time.perf_counter()
        try:
            cases = mod.cases(quick)
        except Exception as exc:
            log(f"{mod.ID}: could not build cases: {type(exc).__name__}: {exc}")
            traceback.print_exc()
            continue
        mine = []
        for case in cases:
            mine += run_case(case, settings)
        records += mine
        try:
            targets += getattr(mod, "targets", lambda r: [])(mine)
        except Exception as exc:
            log(f"{mod.ID}: targets failed: {type(exc).__name__}: {exc}")
        log(f"{mod.ID} {mod.TITLE}: {len(mine)} results in {time.perf_counter() - start:.1f} s",
            file=sys.stderr)
    if not any(m.ID == "JIT" for m in mods) and (not only or "JIT" in _wanted(only)):
        extra["bench_jit"] = external.run_script(quick, extra["notes"])
    return records, targets, extra


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each workload once, at its smallest size")
    parser.add_argument("--only", help="comma-separated workload ids, e.g. W1,W3,K1")
    parser.add_argument("--json", help="write the raw results here")
    parser.add_argument("--repeats", type=int, help="timed turns per entry (default 7)")
    parser.add_argument("--min-time", type=float, help="seconds per turn (default 0.05)")
    parser.add_argument("--tune-allocator", action="store_true",
                        help="call duals.tune_allocator() first (process-wide glibc setting; "
                             "python -m benchmarks.alloc_effect measures what it buys)")
    parser.add_argument("--no-peers", action="store_true",
                        help="leave JAX, PyTorch and autograd out even when installed (the test suite's smoke run)")
    args = parser.parse_args(argv)
    if args.no_peers:
        os.environ[systems.NO_PEERS] = "1"
    if args.tune_allocator:
        import duals
        duals.tune_allocator()
    from ._steady import drivers_at_once
    drivers_at_once()   # the timed repetitions stand for a long loop
    settings = QUICK if args.quick else Settings()
    if args.repeats:
        settings.repeats = args.repeats
    if args.min_time is not None:
        settings.min_time = args.min_time
    start = time.perf_counter()
    records, targets, extra = run(args.quick, args.only, settings)
    elapsed = time.perf_counter() - start
    meta = report.machine()
    meta.update(command="python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:]),
                quick=args.quick, tuned_allocator=args.tune_allocator, repeats=settings.repeats, min_time_s=settings.min_time,
                elapsed_s=elapsed, notes=extra["notes"])
    print(report.table(records))
    print()
    print(report.targets_table(targets))
    if extra["bench_jit"]:
        print("\n### benchmarks/bench_jit.py (compiled forward mode, its own table)\n")
        print(extra["bench_jit"])
    for note in extra["notes"]:
        print(f"\nnote: {note}")
    mismatches = [r for r in records if r["check"] == "MISMATCH"]
    print(f"\n{len(records)} results, {len(mismatches)} mismatches, {elapsed:.1f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"meta": meta, "records": records, "targets": targets, "bench_jit": extra["bench_jit"]}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
