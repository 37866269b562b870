"""Conversions and plain results: ``astype``, ``copy``, the ``*_like`` constructors, and the
predicates and piecewise-constant functions whose result is NumPy's plain answer (derivative zero).
"""
import numpy as np

from ..core import Primitive, Tracer
from ..index_sets import elementwise_rule
from . import dtype_of, export, innermost, shape_of, shape_of as shape


@export()
def positive(x):
    return x


def _on_value(np_func, doc):
    """NumPy's ``np_func`` applied to the plain value under any traced layers (a constant result)."""
    def func(x, *args, **kwargs):
        return np_func(innermost(x), *args, **kwargs)
    func.__name__ = np_func.__name__
    func.__doc__ = f"{np_func.__name__}(x, ...): {doc}"
    return func


# predicates and piecewise-constant functions: derivative zero, results are plain arrays
for _np_func in (np.isfinite, np.isnan, np.isinf, np.signbit, np.floor, np.ceil, np.trunc,
                 np.rint, np.round, np.around, np.fix, np.isreal):
    export(_np_func.__name__, value_only=True)(_on_value(
        _np_func, "of the value; piecewise constant, so its derivative is zero and the result is plain."))


@export(value_only=True)
def result_type(*arrays_and_dtypes):
    """result_type(*args): NumPy's promotion, seeing traced values as their dtype."""
    return np.result_type(*[a.dtype if isinstance(a, Tracer) else a for a in arrays_and_dtypes])


def _astype_impl(x, *, dtype):
    return np.asarray(x).astype(dtype)


# a float value converted to another float dtype (float32 <-> float64 ...): rounded, derivative 1
astype_p = Primitive("astype", _astype_impl)
astype_p.def_jvp(0, lambda t, out, x, *, dtype: astype_p(t, dtype=dtype))
astype_p.def_vjp(0, lambda g, out, x, *, dtype: astype_p(g, dtype=dtype_of(x)))
astype_p.def_sparsity(elementwise_rule(True))


@export("astype")
def astype(x, dtype, /, *, copy=True, device=None):
    """astype(x, dtype): ``x`` converted to the float (or complex) ``dtype``; NumPy 2's ``np.astype``.

    >>> astype(np.array([1.0, 2.0]), np.float32).dtype
    dtype('float32')
    """
    if isinstance(x, Tracer):
        return x.astype(dtype, copy=copy)
    return np.astype(x, dtype, copy=copy)


copy_p = Primitive("copy", np.copy)
copy_p.elementwise = True
copy_p.def_jvp(0, lambda t, out, x: t)
copy_p.def_vjp(0, lambda g, out, x, unreached=None: g)
copy_p.def_sparsity(elementwise_rule(True))


@export("copy")
def copy(x):
    """copy(x): a copy, plain or traced (a new traced value, so that ``y = x.copy(); y += 1``
    leaves the name ``x`` as NumPy does); a ``duals.Var`` gets a recorded copy, as ``torch.clone``.

    >>> import numpy as np
    >>> copy(np.ones(2)).tolist()
    [1.0, 1.0]
    """
    return copy_p(x) if isinstance(x, Tracer) else np.copy(x)


def _shaped_like(np_func):
    """NumPy's ``np_func`` of an array of x's shape and dtype: x's values are not read, so a
    sparsity detection does not count it as a decision by value."""
    def func(x, *args, **kwargs):
        if isinstance(x, Tracer):
            x = np.empty(shape(x), dtype_of(x))
        return np_func(x, *args, **kwargs)
    func.__name__ = np_func.__name__
    func.__doc__ = f"{np_func.__name__}(x, ...): a plain (constant) array shaped like x."
    return func


for _np_func in (np.zeros_like, np.ones_like, np.empty_like):
    export(_np_func.__name__, value_only=True)(_shaped_like(_np_func))
_plain_full_like = _shaped_like(np.full_like)


@export()
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """full(shape, fill_value, dtype=None): an array of ``shape`` filled with ``fill_value``; a
    traced fill value (a scalar or an array that broadcasts) gives a traced array whose entries all
    carry its derivative, as ``fill_value * np.ones(shape)`` does.

    >>> import duals
    >>> float(duals.grad(lambda r: np.sum(full(3, r * r)))(2.0))
    12.0
    """
    if not isinstance(fill_value, Tracer):
        return np.full(shape, fill_value, dtype, order, **kwargs)
    if dtype is not None and np.dtype(dtype).kind not in "fc":   # truncated values, as astype(int)
        return np.full(shape, innermost(fill_value), dtype, order, **kwargs)
    from .shape import broadcast_to
    value = fill_value if dtype is None else fill_value.astype(dtype)
    return copy(broadcast_to(value, (shape,) if np.ndim(shape) == 0 else tuple(shape)))


@export()
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """full_like(a, fill_value, dtype=None, shape=None): :func:`full` of ``a``'s shape and dtype (a
    plain array unless ``fill_value`` is traced; ``a``'s values are not read).

    >>> import duals
    >>> float(duals.grad(lambda r: np.sum(full_like(np.zeros(2), 3 * r)))(1.0))
    6.0
    """
    if not isinstance(fill_value, Tracer):
        return _plain_full_like(a, fill_value, dtype, order, subok, shape, **kwargs)
    return full(shape_of(a) if shape is None else shape, fill_value, dtype_of(a) if dtype is None else dtype)
