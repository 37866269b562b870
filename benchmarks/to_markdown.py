"""python -m benchmarks.to_markdown results.json [summary.md]: RESULTS.md from a run's JSON.

The machine, versions, date and command come from the JSON; ``summary.md`` (optional,
hand-written) is placed after the header.
"""
import json
import sys

from . import report


def render(results, summary=""):
    """render(results, summary) -> the markdown of RESULTS.md."""
    meta = results["meta"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v)
    lines = ["# Benchmark results", "",
             f"- **command**: `{meta['command'].strip()}` ({meta['elapsed_s'] / 60:.1f} min, "
             f"{meta['repeats']} turns of ≥ {meta['min_time_s'] * 1e3:.0f} ms per entry, medians)",
             f"- **machine**: {meta['cpu']}, {meta['cores']} cores (shared, noisy), single-threaded runs; "
             f"{meta['platform']}",
             f"- **versions**: Python {meta['python']}, {versions}",
             f"- **date**: {meta['date']}; duals at git `{meta['git_commit']}`", ""]
    if summary:
        lines += [summary.strip(), ""]
    lines += ["## Targets", "", report.targets_table(results["targets"]), "",
              "## All results", "",
              "Ratios (`× plain`) divide by the plain function of the same case, timed in the same run "
              "in alternating turns. `first call` includes compilation (Numba, JAX jit) and warm-up.", "",
              report.table(results["records"]), ""]
    if results.get("bench_jit"):
        lines += ["## benchmarks/bench_jit.py (compiled forward mode, its own table)", "",
                  results["bench_jit"], ""]
    for note in meta.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def main(argv):
    with open(argv[0]) as handle:
        results = json.load(handle)
    summary = open(argv[1]).read() if len(argv) > 1 else ""
    sys.stdout.write(render(results, summary))


if __name__ == "__main__":
    main(sys.argv[1:])
