"""Sphinx configuration of the duals documentation.

Build:  pip install -e ".[docs]" && sphinx-build -b html docs docs/_build/html
The test suite builds it with warnings as errors (tests/test_docs.py).
docs/supported.md is generated from the registry: python docs/_ext/supported.py (checked by the tests).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))            # duals_sphinx: the duals.numpy table, docstring first lines
sys.path.insert(0, os.path.dirname(HERE))                 # the library itself, installed or not

import duals  # noqa: E402

project = "duals"
author = "the duals authors"
copyright = "the duals authors, MIT licence"
release = duals.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
    "duals_sphinx",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# Markdown pages (docs/custom_rules.md and the guide) are MyST; API pages embed autodoc
# directives in {eval-rst} blocks, since the docstrings are reStructuredText.
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_docstring_signature = False  # the first line stays text (duals_sphinx shows it as code)
autodoc_typehints = "none"          # the library has no annotations; signatures say it all
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = True

try:
    import furo  # noqa: F401
    html_theme = "furo"
except ImportError:                  # the stock theme, shipped with Sphinx
    html_theme = "alabaster"
html_title = f"duals {release}"
html_static_path = []
