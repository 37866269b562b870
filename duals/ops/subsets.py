"""Entries removed, inserted or chosen: ``delete``, ``insert``, ``compress``, ``extract`` and
``choose``.

Each asks NumPy itself where every entry of the result comes from, by running the same call on
arrays of entry numbers instead of values, and then gathers the traced entries by those numbers
(one ``getitem``). So every argument NumPy takes means here what it means there (slices, boolean
masks, negative and repeated positions, broadcast ``values``, ``mode=`` of ``choose``), and every
mode and order is exact: the result is linear in the traced values. Positions, conditions and
choices of index are plain: they must not depend on the differentiated inputs.

>>> import duals
>>> duals.grad(lambda x: np.sum(np.delete(x, 1) ** 2))(np.array([1.0, 2.0, 3.0])).tolist()
[2.0, 0.0, 6.0]
"""
import numpy as np

from . import export, shape_of as shape
from .assembly import operand, traced
from .shape import concatenate, getitem, reshape


def _numbered(x, start=0):
    """The entry numbers ``start, start + 1, ...`` of ``x`` in C order, shaped like it."""
    return np.arange(start, start + int(np.prod(shape(x), dtype=np.int64))).reshape(shape(x))


def _gathered(sources, numbers):
    """The entries ``numbers`` (an integer array) of the sources flattened and joined in order."""
    flat = [reshape(operand(s), (-1,)) for s in sources]
    return getitem(flat[0] if len(flat) == 1 else concatenate(flat), numbers)


def _plain(value, name, what):
    if traced(value):
        raise TypeError(f"{name}: {what} cannot be a traced value; it must not depend on the "
                        f"differentiated inputs (compute it from the plain values)")
    return value


@export()
def delete(arr, obj, axis=None):
    """delete(arr, obj, axis=None): ``arr`` without the sub-arrays ``obj`` along ``axis`` (flattened when None).

    >>> delete(np.array([1.0, 2.0, 3.0]), 0).tolist()
    [2.0, 3.0]
    """
    if not traced(arr):
        return np.delete(arr, obj, axis)
    return _gathered([arr], np.delete(_numbered(arr), _plain(obj, "delete", "obj"), axis))


@export()
def insert(arr, obj, values, axis=None):
    """insert(arr, obj, values, axis=None): ``values`` placed before the positions ``obj`` along ``axis``.

    >>> insert(np.array([1.0, 2.0]), 1, 5.0).tolist()
    [1.0, 5.0, 2.0]
    """
    if not traced(arr, values):
        return np.insert(arr, obj, values, axis)
    arr, values = operand(arr), operand(values)
    numbers = np.insert(_numbered(arr), _plain(obj, "insert", "obj"), _numbered(values, int(np.size(arr))), axis)
    out = _gathered([arr, values], numbers)
    return out if traced(arr) else out.astype(np.result_type(arr), copy=False)


@export()
def compress(condition, a, axis=None, out=None):
    """compress(condition, a, axis=None): the slices of ``a`` along ``axis`` where ``condition`` holds.

    >>> compress([True, False, True], np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0]
    """
    if out is not None:
        raise TypeError("compress(..., out=...) cannot write a traced value into an array; drop out=")
    if not traced(a):
        return np.compress(condition, a, axis)
    return _gathered([a], np.compress(_plain(condition, "compress", "condition"), _numbered(a), axis))


@export()
def extract(condition, arr):
    """extract(condition, arr): the entries of ``arr`` where ``condition`` holds, flattened.

    >>> extract(np.array([[True, False], [False, True]]), np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 4.0]
    """
    if not traced(arr):
        return np.extract(condition, arr)
    return _gathered([arr], np.extract(_plain(condition, "extract", "condition"), _numbered(arr)))


@export()
def choose(a, choices, out=None, mode="raise"):
    """choose(a, choices, out=None, mode="raise"): entry by entry, the entry of ``choices[a]`` (all broadcast together).

    >>> choose(np.array([1, 0]), [np.array([1.0, 2.0]), np.array([3.0, 4.0])]).tolist()
    [3.0, 2.0]
    """
    if out is not None:
        raise TypeError("choose(..., out=...) cannot write a traced value into an array; drop out=")
    a = _plain(a, "choose", "the index array a")
    if not traced(*choices):
        return np.choose(a, choices, mode=mode)
    choices = [operand(c) for c in choices]
    starts = np.concatenate([[0], np.cumsum([int(np.prod(shape(c), dtype=np.int64)) for c in choices])])
    numbers = np.choose(a, [_numbered(c, int(s)) for c, s in zip(choices, starts)], mode=mode)
    return _gathered(choices, numbers)
