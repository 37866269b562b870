"""benchmarks/bench_jit.py, written by the compiled-mode author, included when it is usable.

If it defines ``cases(quick)`` it is run like any workload; otherwise, if it is a script
with ``main()``, it is run in a subprocess (``--steps`` 100 in quick mode, 1000 otherwise; quick
mode leaves out its first calls in fresh processes) and its markdown output is kept verbatim. Missing or failing: skipped with a note.
"""
import importlib
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_jit.py")
TIMEOUT_S = 300


def load_workload(notes):
    """load_workload(notes) -> bench_jit as a workload module, or None (a note says why)."""
    if not os.path.exists(SCRIPT):
        notes.append("benchmarks/bench_jit.py is missing: skipped")
        return None
    try:
        mod = importlib.import_module("benchmarks.bench_jit")
    except BaseException as exc:  # SystemExit from argparse included
        notes.append(f"benchmarks/bench_jit.py skipped: import failed: {type(exc).__name__}: {exc}")
        return None
    if hasattr(mod, "cases"):
        mod.ID = getattr(mod, "ID", "JIT")
        mod.TITLE = getattr(mod, "TITLE", "compiled forward mode (bench_jit.py)")
        return mod
    return None


def run_script(quick, notes):
    """run_script(quick, notes) -> the script's markdown output, or None (a note says why)."""
    if not os.path.exists(SCRIPT):
        return None
    options = ["--steps", "100", "--no-first-calls"] if quick else ["--steps", "1000"]
    try:
        done = subprocess.run([sys.executable, SCRIPT, *options], capture_output=True,
                              text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        notes.append(f"benchmarks/bench_jit.py skipped: no result within {TIMEOUT_S} s")
        return None
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        notes.append(f"benchmarks/bench_jit.py skipped: exit {done.returncode}: {tail}")
        return None
    return done.stdout.strip()
