"""Generate and execute the duals notebooks.

    python notebooks/build.py            # write + execute every notebook
    python notebooks/build.py NAME ...   # only the named notebooks (without .ipynb)
    python notebooks/build.py --no-exec  # write without executing

Each notebook is a list of markdown / code cells defined below; the executed
notebooks (with outputs and figures) are committed next to this script.
Every number quoted in a markdown cell is printed by a code cell: the markdown
refers to the printed value, it never types one. The kernel runs with
DUALS_NOTEBOOK_BUILD=1, which turns the notebooks' progress bars off, so that no bar
is saved in a committed notebook.
"""
import os
import sys
import time

import nbformat
from nbclient import NotebookClient

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def md(s):
    return nbformat.v4.new_markdown_cell(s.strip("\n"))


def code(s):
    return nbformat.v4.new_code_cell(s.strip("\n"))


COMMON = '''
import sys, time, tracemalloc
import numpy as np
import matplotlib
import matplotlib.pyplot as plt
import duals
import duals.numpy as dnp
np.set_printoptions(precision=4, suppress=False)
plt.rcParams["figure.dpi"] = 80
'''

import importlib  # noqa: E402

QUIET = {"DUALS_NOTEBOOK_BUILD": "1"}   # the notebooks' progress() shows no bar under it

# notebook name -> module (next to this script) whose cells(common) returns [(kind, source), ...]
NOTEBOOKS = {
    "forward_vs_reverse": "_nb_forward_vs_reverse",
    "sensitivity_analysis": "_nb_sensitivity",
    "how_autodiff_works": "_nb_how",
    "local_derivatives": "_nb_local",
    "ode_sensitivities": "_nb_ode_sensitivities",
}


def build(name, execute=True, timeout=120):
    cells = [md(c[1]) if c[0] == "md" else code(c[1]) for c in importlib.import_module(NOTEBOOKS[name]).cells(COMMON)]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = os.path.join(HERE, name + ".ipynb")
    if execute:
        t = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": HERE}}).execute(env=dict(os.environ, **QUIET))
        print(f"{name}: executed in {time.perf_counter() - t:.1f} s")
    nbformat.write(nb, path)
    return path


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    execute = "--no-exec" not in sys.argv
    for name in (args or list(NOTEBOOKS)):
        build(name, execute=execute)
