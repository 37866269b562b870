"""The documentation site builds without a warning, documents every public name, and its code runs.

The site is docs/ (Sphinx with autodoc, napoleon and myst-parser; docs/conf.py). The build is
the one a reader runs, ``sphinx-build -W --keep-going -b html docs <dir>``, with warnings as
errors. The API page must carry an entry for every name of ``duals.__all__`` and of the
``__all__`` of duals.extend, duals.testing, duals.jit and duals.special. Every ```python block
of the pages runs (but the templates listed in ``TEMPLATES``), page by page in one namespace,
as a reader would paste them. The committed table of supported functions, docs/supported.md, is
what ``python docs/_ext/supported.py`` writes from the registry today.
"""
import functools
import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

import sphinx  # noqa: E402,F401  (the test extra installs the docs tools: a missing one fails)
import myst_parser  # noqa: E402,F401

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# code blocks that are templates, not programs (``impl``, ``...``): page -> block numbers (from 1)
TEMPLATES = {"custom_rules.md": {2}}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs_html")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(DOCS), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    return proc, out


def test_docs_build_without_warnings(built):
    proc, out = built
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert "WARNING" not in proc.stderr, proc.stderr[-6000:]
    for page in ("index", "getting_started", "user_guide", "custom_rules", "api"):
        assert (out / f"{page}.html").exists(), page


def _public():
    import duals
    names = [f"duals.{n}" for n in duals.__all__]
    for module in ("duals.extend", "duals.testing", "duals.jit", "duals.special"):
        mod = importlib.import_module(module)
        names += [f"{module}.{n}" for n in mod.__all__]
    return names


def test_api_page_documents_every_public_name(built):
    proc, out = built
    assert proc.returncode == 0
    html = (out / "api.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="([^"]+)"', html))
    import duals
    missing = []
    for name in _public():
        obj = functools.reduce(getattr, name.split(".")[1:], duals)
        ok = name in ids or (isinstance(obj, type(duals)) and f"module-{name}" in ids)
        if not ok:
            missing.append(name)
    assert not missing, f"docs/api.md has no entry for {missing}: add an autodoc line for each"


def test_numpy_table_lists_the_whole_namespace(built):
    proc, out = built
    assert proc.returncode == 0
    from duals.ops import NAMESPACE
    html = (out / "api.html").read_text(encoding="utf-8")
    assert f"{len(NAMESPACE)} names in duals.numpy" in html
    ids = set(re.findall(r'id="([^"]+)"', html))
    missing = [name for name in NAMESPACE if f"duals.numpy.{name}" not in ids]
    assert not missing, f"the duals.numpy table misses {missing}"


def _supported_module():
    spec = importlib.util.spec_from_file_location("supported", DOCS / "_ext" / "supported.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_supported_functions_page_is_current():
    supported = _supported_module()
    current = (DOCS / "supported.md").read_text(encoding="utf-8")
    assert current == supported.render(), f"docs/supported.md is not current: run {supported.COMMAND}"


def test_supported_functions_page_lists_every_name_under_its_numpy_or_scipy_name(built):
    proc, out = built
    assert proc.returncode == 0
    from duals.ops import NAMESPACE
    html = (out / "supported.html").read_text(encoding="utf-8")
    public_name = _supported_module().public_name
    for name in NAMESPACE:
        public = public_name(name)
        assert f'<span class="pre">{public}</span>' in html, public


def _python_blocks(page):
    text = page.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


PAGES = sorted(p.name for p in DOCS.glob("*.md") if _python_blocks(p))


# SciPy's BDF subtracts a row of its difference table that it allocated with np.empty and has not
# written yet (bdf.py, first step): the row is overwritten before use and the solution is the same
# bit for bit, but when the uninitialised memory holds a NaN pattern NumPy warns (sparse.md).
@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning:scipy.integrate._ivp.bdf")
@pytest.mark.parametrize("name", PAGES)
def test_code_blocks_run(name, capsys):
    namespace = {"__name__": f"docs_{name[:-3]}"}
    for number, block in enumerate(_python_blocks(DOCS / name), start=1):
        if number in TEMPLATES.get(name, ()):
            continue
        code = compile(block, f"docs/{name} (python block {number})", "exec")
        exec(code, namespace)  # noqa: S102  (the documentation's own examples)
    capsys.readouterr()
