"""Relative links in the Markdown a reader sees first resolve to files inside the repository.

Checked: README.md, every docs/**/*.md (not docs/_build) and examples/README.md; inline links
and images ``[text](target)``, reference definitions ``[id]: target`` and HTML ``href``/``src``
attributes, outside code. External links (``https:``, ``mailto:``) and same-page anchors are
not followed. A link must not leave the repository (``../shared/...`` is a file of the
workplace, not of the project) and must name an existing file or directory.
"""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted({ROOT / "README.md", ROOT / "examples" / "README.md",
                *(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)})

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
_CODE = re.compile(r"(`+).+?\1", re.S)
_INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_HTML = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def links(text):
    """Every link target of a Markdown text, outside fenced blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", text))
    return [m.group(1) for rx in (_INLINE, _REFDEF, _HTML) for m in rx.finditer(text)]


def test_link_extraction():
    text = ("[a](x.md) ![i](img/p.png) [b](y.md#part \"title\") [c](https://e.org) [d](#top)\n"
            "`[not](code.md)`\n```\n[nor](fenced.md)\n```\n[ref]: ../z.md\n<img src=\"q.png\">")
    assert links(text) == ["x.md", "img/p.png", "y.md#part", "https://e.org", "#top",
                           "../z.md", "q.png"]


def test_pages_exist():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "examples/README.md", "docs/index.md", "docs/custom_rules.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_relative_links_resolve_inside_the_repository(page):
    bad = []
    for target in links(page.read_text(encoding="utf-8")):
        if not target or target.startswith("#") or _EXTERNAL.match(target):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        parts = pathlib.PurePosixPath(path).parts
        if "shared" in parts and ".." in parts:
            bad.append(f"{target}: points at the workplace's shared/ folder, not the project")
            continue
        if path.startswith("/"):
            bad.append(f"{target}: an absolute path; use a path relative to {page.name}")
            continue
        resolved = (page.parent / path).resolve()
        if not resolved.is_relative_to(ROOT):
            bad.append(f"{target}: leaves the repository")
        elif not resolved.exists():
            bad.append(f"{target}: no such file")
    assert not bad, f"{page.relative_to(ROOT)}:\n  " + "\n  ".join(bad)


def test_readme_links_the_api_reference_inside_the_repository():
    targets = links((ROOT / "README.md").read_text(encoding="utf-8"))
    assert any(t.split("#")[0] in ("docs/api.md", "docs/index.md") for t in targets), targets


def test_readme_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1).splitlines()
    assert block[:2] == ['python -m pip install -e . && python examples/demo.py',
                         'python -m pip install -e ".[test]" && python -m pytest']
