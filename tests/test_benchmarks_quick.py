"""`python -m benchmarks.run --quick` runs to the end and every duals derivative is right.

Correctness only: speed is reported by the benchmarks, never asserted here.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (workload, system, task) -> the duals bug that makes it disagree today; the owner fixes it

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--no-peers", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    results = json.loads(out.read_text()) if out.exists() else None
    return done, results


def _duals_records(results):
    return [r for r in results["records"] if r["system"].startswith("duals")]


def test_quick_run_exits_zero_and_writes_json(quick_run):
    done, results = quick_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert results is not None and results["records"]


def test_the_compiled_mode_script_ran_and_checked_its_jacobian(quick_run):
    # benchmarks/bench_jit.py asserts its Jacobian against differences; a failure there only
    # becomes a note in the run, so the run exits 0 without its table
    _, results = quick_run
    assert not [n for n in results["meta"]["notes"] if "bench_jit" in n], results["meta"]["notes"]
    assert "duals.jacfwd, 6 parameters" in (results["bench_jit"] or "")


def test_every_workload_reports_a_duals_result(quick_run):
    _, results = quick_run
    workloads = {r["workload"] for r in results["records"]}
    assert {"W1", "W2", "W3", "W4", "W5", "W6", "K1", "K2", "K3"} <= workloads
    for w in workloads:
        assert any(r["workload"] == w for r in _duals_records(results)), w


def test_every_duals_derivative_agrees_with_its_reference(quick_run):
    _, results = quick_run
    wrong = [(r["workload"], r["case"], r["system"], r["task"], r["rel_err"])
             for r in _duals_records(results) if r["status"] == "ok" and r["check"] != "ok"]
    assert not wrong


def test_duals_core_workloads_are_available(quick_run):
    _, results = quick_run
    missing = [(r["workload"], r["system"], r["task"], r["status"]) for r in _duals_records(results)
               if r["status"] != "ok"]
    assert not missing


def test_parameter_only_benchmark_runs_and_checks_its_jacobians():
    done = subprocess.run([sys.executable, "benchmarks/bench_parameters.py", "--quick", "--steps", "50"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Lorenz RK4, 3 parameters" in done.stdout and "reaction-diffusion" in done.stdout


def test_complex_benchmark_runs_and_checks_its_derivatives():
    done = subprocess.run([sys.executable, "benchmarks/complex.py", "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "complex input" in done.stdout


def test_hessian_modes_benchmark_runs_and_checks_its_hessians():
    done = subprocess.run([sys.executable, "-m", "benchmarks.hessian_modes", "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Rosenbrock, scalar loop (5)" in done.stdout
