"""Run every example of examples/ in its small mode, and once with --plot.

Each example's main(argv) returns 0 and raises if its derivative check fails.
"""
import importlib.util
import sys
import pathlib

import pytest

EXAMPLES_DIR = pathlib.Path(__file__).resolve().parent.parent / "examples"
EXAMPLES = [
    "lorenz_sensitivity",
    "black_scholes_greeks",
    "stiff_kinetics",
    "newton_rosenbrock",
    "epidemic_parameters",
    "brusselator_sparse",
    "rlc_impedance",
]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # registered, as an import would: Numba's disk cache of an @njit(cache=True) function finds
    # its module by name, and a later process fails with "No module named '<dynamic>'" without it
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules():
    return {}


def _get(modules, name):
    if name not in modules:
        modules[name] = _load(name)
    return modules[name]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_small(name, modules, capsys):
    assert _get(modules, name).main(["--small"]) == 0
    out = capsys.readouterr().out
    assert out.strip(), f"{name} printed no report"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_plot(name, modules, tmp_path):
    path = tmp_path / f"{name}.png"
    assert _get(modules, name).main(["--small", "--plot", str(path)]) == 0
    assert path.exists() and path.stat().st_size > 1000


@pytest.mark.parametrize("name", ["demo", "custom_scipy_special"])
def test_example_without_options_runs_its_checks(name, modules, capsys):
    assert _get(modules, name).main() in (0, None)
    assert capsys.readouterr().out.strip(), f"{name} printed no report"


def test_examples_readme_lists_every_example():
    readme = (EXAMPLES_DIR / "README.md").read_text()
    for name in EXAMPLES:
        assert f"{name}.py" in readme
