"""`python -m benchmarks.run --quick` runs to the end and every duals derivative is right.

Correctness only: speed is reported by the benchmarks, never asserted here.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (workload, system, task) -> the duals bug that makes it disagree today; the owner fixes it

_JOB = {}


def start_in_background():
    """Start the quick benchmark run (conftest calls this once the tests are collected)."""
    if _JOB:
        return _JOB["process"]
    _JOB["folder"] = tempfile.mkdtemp(prefix="duals-bench-")
    _JOB["out"] = os.path.join(_JOB["folder"], "quick.json")
    _JOB["process"] = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--json", _JOB["out"]], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return _JOB["process"]


@pytest.fixture(scope="module")
def quick_run():
    start_in_background()
    process = _JOB["process"]
    try:
        _, err = process.communicate(timeout=600)
        results = json.loads(open(_JOB["out"]).read()) if os.path.exists(_JOB["out"]) else None
    finally:
        shutil.rmtree(_JOB["folder"], ignore_errors=True)
    return subprocess.CompletedProcess(process.args, process.returncode, None, err), results


def _duals_records(results):
    return [r for r in results["records"] if r["system"].startswith("duals")]


def test_quick_run_exits_zero_and_writes_json(quick_run):
    done, results = quick_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert results is not None and results["records"]


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
