"""Value-only queries: functions whose result has no derivative meaning (indices, booleans,
counts), so on a traced value they are NumPy's answer for the plain value underneath.

``argmax``/``argmin``, ``any``/``all``, ``isclose``/``allclose``, ``array_equal``,
``count_nonzero``, ``nonzero``, ``flatnonzero``, ``argwhere``, ``digitize``, ``lexsort``,
``argpartition``, ``linalg.matrix_rank`` and the comparison and logical
ufuncs called as functions (``np.less(x, y)``, ``np.logical_and(a, b)``, ...). Their results are
plain NumPy arrays or Python scalars, exactly as NumPy gives them for the values, so code such as
``if np.allclose(x_new, x): break`` or ``i = np.argmax(y)`` runs unchanged on traced values; the
derivative of whatever is computed *from* the traced values (``y[i]``) is kept.

>>> import duals
>>> duals.grad(lambda x: x[np.argmax(x)] ** 2)(np.array([1.0, 3.0, 2.0])).tolist()
[0.0, 6.0, 0.0]
"""
import numpy as np

from ..core import Tracer
from . import export, innermost


def plain(a):
    """plain(a): ``a`` with every traced value (also inside a list or tuple) replaced by its value.

    >>> plain([1.0, (2.0,)])
    [1.0, (2.0,)]
    """
    if isinstance(a, Tracer):
        return innermost(a)
    if isinstance(a, (list, tuple)):
        return type(a)(plain(e) for e in a)
    return a


def on_values(np_func, doc=None):
    """on_values(np_func): NumPy's ``np_func`` applied to the plain values of all its arguments.

    >>> on_values(np.argmax)(np.array([1.0, 3.0]))
    np.int64(1)
    """
    def func(*args, **kwargs):
        return np_func(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})
    func.__name__ = np_func.__name__
    func.__qualname__ = np_func.__name__
    func.__doc__ = (f"{np_func.__name__}(...): NumPy's {np_func.__name__} of the plain values; "
                    f"{doc or 'a value-only query (no derivative), so the result is plain.'}")
    return func


_QUERIES = (np.argmax, np.argmin, np.any, np.all, np.isclose, np.allclose, np.array_equal,
            np.array_equiv, np.count_nonzero, np.nonzero, np.flatnonzero, np.argwhere,
            np.isposinf, np.isneginf, np.iscomplex, np.digitize, np.lexsort, np.argpartition)
# comparison and logical ufuncs: their results are booleans
_UFUNCS = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_xor, np.logical_not)

for _f in _QUERIES + _UFUNCS:
    export(_f.__name__, value_only=True)(on_values(_f))
export("linalg.matrix_rank", value_only=True)(on_values(np.linalg.matrix_rank))
