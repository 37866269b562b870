"""Sphinx extension for the duals documentation: the ``duals.numpy`` table and docstring first lines.

**The table.** ``duals.numpy`` is built from one registry, ``duals.ops.NAMESPACE`` (NumPy
name -> function). The directive ``duals-namespace`` reads that registry when the documentation is built and
emits one table row per name (its HTML id is the full name, ``duals.numpy.sin``), so the page
lists exactly what the installed library exports:

    ```{duals-namespace}
    ```

    ```{duals-namespace} duals.special
    ```

With a module argument only the names in that module's ``__all__`` are listed. The
description of a row is, in this order: for an element-wise primitive generated from the
derivative table (``duals/derivatives.py``), its value and partial derivatives as written
in the table; for another name bound to the same function as an earlier row, "same function
as" that row; otherwise the first paragraph of the function's docstring.

**First lines.** The library's docstrings open with the call they describe,
``name(args) -> result: text``, written for ``help()``. In reStructuredText ``*args`` or
``*, flag`` there would start emphasis. The ``autodoc-process-docstring`` hook below shows
that leading call as literal code and escapes the other asterisks of the line (the signature
above it is autodoc's own, introspected: ``autodoc_docstring_signature`` is off in conf.py).
"""
import importlib
import inspect
import re

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _first_paragraph(func):
    doc = inspect.getdoc(func) or ""
    lines = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def _table_entry(func):
    """The derivative-table Entry behind an element-wise primitive, or None."""
    from duals import derivatives
    from duals.core import Primitive
    if isinstance(func, Primitive):
        return derivatives.TABLE.get(func.name)
    return None


def _describe(func):
    entry = _table_entry(func)
    if entry is not None:
        args = ("x",) if entry.arity == 1 else ("x", "y")
        parts = ", ".join(f"∂/∂{a} ``{p}``" for a, p in zip(args, entry.partials))
        return f"element-wise, from the derivative table: value ``{entry.value}``, {parts}"
    return literal_call(_first_paragraph(func))


def namespace_rows(module=None):
    """[(name, description)] for ``duals.numpy`` (or the names of ``module.__all__``)."""
    import duals  # noqa: F401  (registers every primitive)
    from duals.ops import NAMESPACE
    if module is None:
        items = list(NAMESPACE.items())
    else:
        mod = importlib.import_module(module)
        items = [(n, getattr(mod, n)) for n in mod.__all__]
    seen = {}
    rows = []
    for name, func in items:
        first = seen.setdefault(id(func), name)
        if first != name and _table_entry(func) is None:
            text = f"same function as ``{first}``"
        else:
            text = _describe(func) or f"NumPy's ``{name.rsplit('.', 1)[-1]}``"
        rows.append((name, text))
    return rows


_INLINE = re.compile(r"``(.+?)``|:\w+:`~?(.+?)`")


def inline_nodes(text):
    """Docstring text as docutils nodes: ````code```` and ``:role:`name``` become literals."""
    out, pos = [], 0
    for match in _INLINE.finditer(text):
        if match.start() > pos:
            out.append(nodes.Text(text[pos:match.start()]))
        out.append(nodes.literal(text=match.group(1) or match.group(2)))
        pos = match.end()
    if pos < len(text):
        out.append(nodes.Text(text[pos:]))
    return out


def _row(*cells, ids=()):
    row = nodes.row(ids=list(ids))
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph("", "", *cell)
        row += entry
    return row


class NamespaceTable(SphinxDirective):
    """``duals-namespace [module]``: the table of duals.numpy (or of ``module.__all__``)."""
    optional_arguments = 1
    has_content = False

    def run(self):
        module = self.arguments[0] if self.arguments else None
        rows = namespace_rows(module)
        prefix = module or "duals.numpy"
        table = nodes.table(classes=["duals-namespace"])
        group = nodes.tgroup(cols=2)
        table += group
        group += nodes.colspec(colwidth=25)
        group += nodes.colspec(colwidth=75)
        head = nodes.thead()
        head += _row([nodes.Text("name")], [nodes.Text("what it is")])
        group += head
        body = nodes.tbody()
        for name, text in rows:
            body += _row([nodes.literal(text=name)], inline_nodes(text), ids=[f"{prefix}.{name}"])
        group += body
        count = nodes.paragraph(text=f"{len(rows)} names in {prefix}, read from the installed library.")
        return [count, table]


_CALL = re.compile(r"[A-Za-z_][\w.]*\(")


def leading_call(line):
    """The length of the call ``name(...)`` that opens ``line`` (parentheses balanced), or 0."""
    match = _CALL.match(line)
    if not match:
        return 0
    depth = 0
    for i in range(match.end() - 1, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return i + 1
    return 0


def literal_call(line):
    """``f(a, *b) -> r: text`` -> ````f(a, *b)```` ``-> r: text``, other asterisks escaped."""
    end = leading_call(line)
    if not end or "``" in line[:end]:
        return line
    rest = re.split(r"(``.+?``)", line[end:])
    rest = "".join(part if part.startswith("``") else part.replace("*", "\\*") for part in rest)
    return f"``{line[:end]}``{rest}"


def literal_first_call(app, what, name, obj, options, lines):
    """autodoc-process-docstring: the call that opens a docstring shown as literal code."""
    if lines:
        lines[0] = literal_call(lines[0])


def setup(app):
    app.add_directive("duals-namespace", NamespaceTable)
    app.connect("autodoc-process-docstring", literal_first_call)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
