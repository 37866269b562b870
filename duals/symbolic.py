"""Derivatives of the table's formulas, as formulas: what a second-order kernel evaluates.

A partial derivative in :mod:`duals.derivatives` is a formula over ``x``, ``y``, ``out`` and the
vocabulary. :func:`derivative` differentiates such a formula with respect to one of its names by
the usual rules, and a call of a vocabulary function by the table's own partials of that function
(so the table stays the one source of every derivative). Comparisons in ``where`` are not
differentiated (they select a branch). A formula it cannot differentiate (a power whose exponent
depends on the variable) gives None, and the caller keeps its general path.

>>> derivative("0.5 / out", "out")
'-(0.5 / (out * out))'
>>> along("cos(x)", "x", {"x": "1.0"})
'-sin(x)'
"""
import ast

from . import derivatives

__all__ = ["derivative", "along"]


def derivative(formula, name):
    """derivative(formula, name) -> str or None: d formula / d name, as a formula.

    >>> derivative("2.0 * x", "x")
    '2.0'
    """
    tree = _diff(ast.parse(formula, mode="eval").body, name)
    return None if tree is None else ast.unparse(tree)


def along(formula, name, chains):
    """along(formula, name, chains) -> str or None: the derivative of ``formula`` with respect to
    ``name`` when each of its names ``v`` is a function of ``name`` with derivative ``chains[v]``
    (a formula; ``name`` itself has ``"1.0"``): ``sum over v of ∂formula/∂v · chains[v]``.

    >>> along("1.0 - out * out", "x", {"x": "1.0", "out": "1.0 - out * out"})
    '-(out + out) * (1.0 - out * out)'
    """
    total = _ZERO
    for v, chain in chains.items():
        tree = _diff(ast.parse(formula, mode="eval").body, v)
        if tree is None:
            return None
        total = _add(total, _mul(tree, ast.parse(chain, mode="eval").body))
    return ast.unparse(total)


_ZERO, _ONE = ast.Constant(0.0), ast.Constant(1.0)


def _is(node, value):
    return isinstance(node, ast.Constant) and node.value == value


def _add(a, b):
    if _is(a, 0.0):
        return b
    if _is(b, 0.0):
        return a
    return ast.BinOp(a, ast.Add(), b)


def _neg(a):
    if _is(a, 0.0):
        return a
    if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub):
        return a.operand
    return ast.UnaryOp(ast.USub(), a)


def _sub(a, b):
    return a if _is(b, 0.0) else _add(a, _neg(b))


def _mul(a, b):
    if _is(a, 0.0) or _is(b, 0.0):
        return _ZERO
    if _is(a, 1.0):
        return b
    if _is(b, 1.0):
        return a
    return ast.BinOp(a, ast.Mult(), b)


def _div(a, b):
    return _ZERO if _is(a, 0.0) else ast.BinOp(a, ast.Div(), b)


def _diff(node, name):
    """The derivative of expression ``node`` with respect to ``name`` (an AST), or None."""
    if isinstance(node, (ast.Constant, ast.Compare)):   # (a comparison is piecewise constant)
        return _ZERO
    if isinstance(node, ast.Name):
        return _ONE if node.id == name else _ZERO
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        d = _diff(node.operand, name)
        return None if d is None else _neg(d) if isinstance(node.op, ast.USub) else d
    if isinstance(node, ast.BinOp):
        return _binop(node, name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(node, name)
    return None


def _binop(node, name):
    a, b = node.left, node.right
    if isinstance(node.op, ast.Pow):
        if _diff(b, name) is None or not _is(_diff(b, name), 0.0):
            return None   # x ** y with y depending on name: the table's pow entry, not a formula
        da = _diff(a, name)
        if da is None:
            return None
        power = _mul(b, ast.BinOp(a, ast.Pow(), ast.BinOp(b, ast.Sub(), _ONE)))
        return _mul(power, da)
    da, db = _diff(a, name), _diff(b, name)
    if da is None or db is None:
        return None
    if isinstance(node.op, ast.Add):
        return _add(da, db)
    if isinstance(node.op, ast.Sub):
        return _sub(da, db)
    if isinstance(node.op, ast.Mult):
        return _add(_mul(da, b), _mul(a, db))
    if isinstance(node.op, ast.Div):
        return _sub(_div(da, b), _div(_mul(a, db), ast.BinOp(b, ast.Mult(), b)))
    return None


def _call(node, name):
    func, args = node.func.id, node.args
    if func == "where" and len(args) == 3:
        da, db = _diff(args[1], name), _diff(args[2], name)
        if da is None or db is None:
            return None
        if _is(da, 0.0) and _is(db, 0.0):
            return _ZERO
        return ast.Call(ast.Name("where"), [args[0], da, db], [])
    entry = derivatives.TABLE.get(func)
    if entry is None or entry.arity != len(args):
        return None
    total = _ZERO
    for arg, partial in zip(args, entry.partials):
        d = _diff(arg, name)
        if d is None:
            return None
        if _is(d, 0.0) or partial == "0.0":
            continue
        bound = dict(zip("xy", args), out=node)
        total = _add(total, _mul(_Bind(bound).visit(ast.parse(partial, mode="eval").body), d))
    return total


class _Bind(ast.NodeTransformer):
    """Replaces the names ``x``, ``y``, ``out`` of a table partial by the call's expressions."""

    def __init__(self, bound):
        self.bound = bound

    def visit_Name(self, node):
        return self.bound.get(node.id, node)
