"""Nested tuples, lists, dicts and namedtuples of values ("trees"): flatten to leaves and rebuild.

Dicts are walked in sorted key order, as JAX does, so two dicts with the same keys flatten alike;
an ``OrderedDict`` in its own order, and it is rebuilt as one (other dict subclasses as dicts).
"""
from collections import OrderedDict


def flatten(x):
    """flatten(x) -> (leaves, treedef). Tuples, lists and dicts are containers; the rest are leaves.

    >>> flatten((1.0, [2.0, 3.0]))[0]
    [1.0, 2.0, 3.0]
    """
    leaves = []
    return leaves, _flatten(x, leaves)


def _flatten(x, leaves):
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_flatten(e, leaves) for e in x))
    if isinstance(x, dict):
        ordered = isinstance(x, OrderedDict)
        keys = list(x) if ordered else sorted(x)
        return (OrderedDict if ordered else dict, tuple(keys), tuple(_flatten(x[k], leaves) for k in keys))
    leaves.append(x)
    return None


def unflatten(treedef, leaves):
    """unflatten(treedef, leaves): the tree of ``flatten`` rebuilt around new leaves.

    >>> unflatten(flatten((1.0, [2.0]))[1], [5.0, 6.0])
    (5.0, [6.0])
    """
    it = iter(leaves)
    return _build(treedef, it)


def _build(treedef, it):
    if treedef is None:
        return next(it)
    if treedef[0] is dict or treedef[0] is OrderedDict:
        return treedef[0]((k, _build(d, it)) for k, d in zip(treedef[1], treedef[2]))
    items = [_build(d, it) for d in treedef[1]]
    return treedef[0](*items) if hasattr(treedef[0], "_fields") else treedef[0](items)
