"""Cases, entries and the round-robin timer shared by every workload.

A :class:`Case` is one workload at one size; its :class:`Entry` objects are the systems
measured side by side. Entries of a case are timed in turns (repeat 1 of every entry,
then repeat 2, ...) so that a noisy neighbour slows them all alike; the median of the
repeats is reported, and each result's derivative is compared with the case's reference.
"""
import gc
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np


class Unavailable(Exception):
    """Raised by an entry's ``make`` when its system or feature is missing."""


@dataclass
class Entry:
    """One system doing one task; ``make()`` returns the zero-argument callable to time."""
    system: str
    task: str
    make: Callable[[], Callable[[], Any]]
    rtol: Optional[float] = 1e-8   # agreement with the reference; None: timing only
    note: str = ""
    ops: int = 0                # > 0: report microseconds per op in the note


@dataclass
class Case:
    """One workload at one size; ``plain`` is the (system, task) every ratio divides by."""
    workload: str
    name: str
    group: str
    plain: tuple
    entries: list
    references: dict = field(default_factory=dict)   # task -> callable returning the exact result


@dataclass
class Settings:
    """How hard to time: ``repeats`` turns of at least ``min_time`` seconds each."""
    repeats: int = 7
    min_time: float = 0.05
    entry_budget: float = 3.0   # stop repeating an entry after this many seconds (>= 3 repeats)


QUICK = Settings(repeats=1, min_time=0.0, entry_budget=0.0)


def to_numpy(out):
    """to_numpy(out) -> 1-d float64 array: tuples, jax/torch arrays and floats flattened together."""
    if isinstance(out, (tuple, list)):
        parts = [to_numpy(o) for o in out]
        return np.concatenate(parts) if parts else np.zeros(0)
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    return np.asarray(out, dtype=np.float64).ravel()


def checksum(a):
    """checksum(a) -> dict: size, rounded sum, norm and a position-weighted sum of ``a``."""
    weights = np.cos(np.arange(a.size))
    return {"size": int(a.size), "sum": float("%.10g" % a.sum()),
            "norm": float("%.10g" % np.linalg.norm(a)), "wsum": float("%.10g" % (weights @ a))}


def relative_error(a, ref):
    """relative_error(a, ref) -> float: max |a - ref| / max |ref| (inf if the sizes differ)."""
    if a.size != ref.size:
        return math.inf
    if not np.all(np.isfinite(a)):
        return math.inf
    scale = max(float(np.max(np.abs(ref))) if ref.size else 0.0, 1e-300)
    return float(np.max(np.abs(a - ref))) / scale if a.size else 0.0


def _describe(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, Unavailable):
        return f"unavailable: {text}"
    return f"unavailable: {type(exc).__name__}: {text[:160]}"


def _record(case, entry):
    return {"workload": case.workload, "case": case.name, "group": case.group,
            "system": entry.system, "task": entry.task, "status": "ok", "note": entry.note,
            "ops": entry.ops, "times_s": [], "median_s": None, "first_call_s": None,
            "checksum": None, "rel_err": None, "rtol": entry.rtol, "check": "no reference"}


def _check(record, result, case, refs):
    a = to_numpy(result)
    record["checksum"] = checksum(a)
    task = record["task"]
    if task not in case.references:
        return
    if record["rtol"] is None:
        record["check"] = "not checked"
        return
    if task not in refs:
        refs[task] = to_numpy(case.references[task]())
    err = relative_error(a, refs[task])
    record["rel_err"] = err
    record["check"] = "ok" if err <= record["rtol"] else "MISMATCH"


def run_case(case, settings):
    """run_case(case, settings) -> list of result dicts, one per entry, timed in turns."""
    gc.collect()
    records, live, refs = [], [], {}
    for entry in case.entries:
        record = _record(case, entry)
        records.append(record)
        try:
            fn = entry.make()
            start = time.perf_counter()
            result = fn()
            record["first_call_s"] = time.perf_counter() - start
            _check(record, result, case, refs)
        except Exception as exc:  # a missing peer, feature or rule: reported, never fatal
            record["status"] = _describe(exc)
            continue
        loops, counted = _loops(fn, record["first_call_s"], settings)
        if counted is not None:  # a slow call fills a turn by itself: keep it as turn 1
            record["times_s"].append(counted)
        live.append([record, fn, loops, counted or 0.0])
    for turn in range(settings.repeats):
        for item in live:
            record, fn, loops, spent = item
            if record["status"] != "ok" or _exhausted(record, spent, settings) or \
                    len(record["times_s"]) >= settings.repeats:
                continue
            try:
                start = time.perf_counter()
                for _ in range(loops):
                    fn()
                elapsed = time.perf_counter() - start
            except Exception as exc:
                record["status"] = _describe(exc)
                continue
            record["times_s"].append(elapsed / loops)
            item[3] = spent + elapsed
    for record in records:
        if record["times_s"]:
            record["median_s"] = float(np.median(record["times_s"]))
    _ratios(case, records)
    return records


WARMUP_CALLS = (3, 6)   # untimed calls before the turns: at least, at most (see _loops)
WARMUP_BUDGET_S = 3.0


def _loops(fn, first, settings):
    """-> (loops per turn, the last calibration call's time if it counts as the first turn).

    The turns time the steady state of a long loop, so the calibration calls ``fn`` until its
    time has settled (the last two calls agree within 1.5x, the last within 1.5x of the
    fastest): the second and third calls of a derivative may still compile (a compiled driver,
    groups of fused rules) and must neither set the loop count (a 40 ms compilation would make
    every turn a single, cache-cold call) nor count as a turn."""
    if settings.min_time <= 0:
        return 1, None
    least, most = WARMUP_CALLS
    calls = []
    while len(calls) < most:
        start = time.perf_counter()
        fn()
        calls.append(max(time.perf_counter() - start, 1e-7))
        settled = calls[-1] <= 1.5 * min(calls) and len(calls) >= 2 and calls[-2] <= 1.5 * calls[-1]
        if len(calls) >= least and settled or sum(calls) > WARMUP_BUDGET_S:
            break
    once = min(calls[-2:])
    loops = max(1, int(settings.min_time / once))
    return loops, (calls[-1] if loops == 1 else None)


def _exhausted(record, spent, settings):
    done = len(record["times_s"])
    if done == 0:
        return False
    return spent > settings.entry_budget and (done >= 3 or spent > 3 * settings.entry_budget)


def _ratios(case, records):
    plain = next((r for r in records if (r["system"], r["task"]) == tuple(case.plain)
                  and r["median_s"]), None)
    for r in records:
        r["ratio"] = r["median_s"] / plain["median_s"] if plain and r["median_s"] else None
        if r["ops"] and r["median_s"]:
            r["us_per_op"] = r["median_s"] / r["ops"] * 1e6
