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


def leaf_paths(x, name=""):
    """leaf_paths(x, name="") -> the path of each leaf of ``flatten(x)``, in its order.

    >>> leaf_paths((1.0, {"b": 2.0, "a": [3.0]}), "args")
    ['args[0]', "args[1]['a'][0]", "args[1]['b']"]
    """
    paths = []
    _flatten(x, [], paths, name)
    return paths


def _flatten(x, leaves, paths=None, name=""):
    # (paths: the leaves' names too, for messages; the names are only formatted when asked for)
    if isinstance(x, (tuple, list)):
        if paths is None:
            return (type(x), tuple(_flatten(e, leaves) for e in x))
        return (type(x), tuple(_flatten(e, leaves, paths, f"{name}[{k}]") for k, e in enumerate(x)))
    if isinstance(x, dict):
        ordered = isinstance(x, OrderedDict)
        keys = list(x) if ordered else sorted(x)
        return (OrderedDict if ordered else dict, tuple(keys),
                tuple(_flatten(x[k], leaves, paths, name if paths is None else f"{name}[{k!r}]")
                      for k in keys))
    leaves.append(x)
    if paths is not None:
        paths.append(name)
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
