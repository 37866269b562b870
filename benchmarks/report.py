"""The markdown table, the targets list and the machine description."""
import datetime
import importlib
import os
import platform
import subprocess


def format_time(seconds):
    """format_time(s) -> '12.3 µs' style text."""
    if seconds is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def _check(r):
    if r["status"] != "ok":
        return "–"
    if r["check"] == "ok":
        return "✓"
    if r["check"] == "MISMATCH":
        return f"**✗ MISMATCH** (rel err {r['rel_err']:.1e})"
    return "n/c" if r["check"] == "not checked" else "?"


def table(records):
    """table(records) -> markdown: one row per record, grouped by workload and case."""
    lines = ["| id | case | system | task | median | × plain | first call | check | note |",
             "|---|---|---|---|---:|---:|---:|---|---|"]
    for r in records:
        note = r["note"]
        if r.get("us_per_op"):
            note = f"{r['us_per_op']:.2f} µs/op" + (f"; {note}" if note else "")
        if r["status"] != "ok":
            note = r["status"] + (f"; {note}" if note and not r["status"].startswith("unavailable") else "")
        ratio = f"{r['ratio']:.3g}" if r.get("ratio") else "–"
        reps = f" ({len(r['times_s'])}×)" if r["times_s"] else ""
        lines.append(f"| {r['workload']} | {r['case']} | {r['system']} | {r['task']} | "
                     f"{format_time(r['median_s'])}{reps} | {ratio} | {format_time(r['first_call_s'])} | "
                     f"{_check(r)} | {note.replace('|', '/')} |")
    return "\n".join(lines)


def targets_table(rows):
    """targets_table(rows) -> markdown of (target, measured, met)."""
    lines = ["| target | measured | met |", "|---|---|---|"]
    for target, measured, met in rows:
        mark = "–" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {target} | {measured} | {mark} |")
    return "\n".join(lines)


def _version(name):
    try:
        return importlib.import_module(name).__version__
    except Exception:
        try:
            from importlib.metadata import version
            return version(name)
        except Exception:
            return None


def _cpu_model():
    """The CPU's name and the microarchitecture LLVM compiles for (``AMD EPYC (znver1)``): a
    virtual machine's name hides the generation, which can move ratios by 2x (vector width, SIMD
    tanh in NumPy), so runs on different hosts are only comparable with it."""
    name = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except Exception:   # noqa: BLE001  (no lscpu: the platform's name)
        pass
    try:
        import llvmlite.binding as llvm
        return f"{name} ({llvm.get_host_cpu_name()})"
    except Exception:   # noqa: BLE001
        return name


def _git_commit():
    """-> 'abc1234' or 'abc1234+uncommitted changes in duals/'."""
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        run = lambda *a: subprocess.run(["git", *a], cwd=here, capture_output=True,  # noqa: E731
                                        text=True, timeout=10).stdout.strip()
        commit = run("rev-parse", "--short", "HEAD") or None
        if commit and run("status", "--porcelain", "--", "../duals"):
            commit += "+uncommitted changes in duals/"
        return commit
    except Exception:
        return None


def machine():
    """machine() -> dict: CPU, cores, Python, library versions, date and git commit."""
    versions = {name: _version(name) for name in
                ("duals", "numpy", "numba", "scipy", "jax", "jaxlib", "torch", "autograd")}
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "versions": versions, "git_commit": _git_commit(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
