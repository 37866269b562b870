"""The product of a constant ``scipy.sparse`` matrix and a traced array.

A method-of-lines right-hand side is ``L @ y + f(y)`` with ``L`` a sparse difference operator.
The product is linear in ``y``: its tangent is ``L @ t``, its cotangent ``Lᵀ @ g``, and its
dependency pattern is ``L``'s non-zeros, so sparse Jacobians (``sparsity="auto"``) keep the
operator's bands. ``dnp.matmul(L, y)``, ``dnp.dot(L, y)``, ``y @ L`` and ``np.matmul`` of a
traced ``y`` come here; ``L @ y`` as written runs SciPy's own product, which makes ``y`` plain,
and its error says to write ``dnp.matmul(L, y)``.

>>> import numpy as np, scipy.sparse, duals, duals.numpy as dnp
>>> L = scipy.sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(4, 4), format="csr")
>>> duals.jacfwd(lambda y: dnp.matmul(L, y))(np.ones(4)).tolist() == L.toarray().tolist()
True
"""
import numpy as np

from ..core import Primitive
from ..index_sets import collect, positions
from . import lead_of, ndim_of as ndim, shape_of as shape


def is_sparse_matrix(a):
    """Whether ``a`` is a ``scipy.sparse`` matrix or array (SciPy is not imported to tell)."""
    return type(a).__module__.startswith("scipy.sparse") and hasattr(a, "tocoo")


def _product_impl(x, *, matrix, lead):
    """``matrix @ x`` over the axes of ``x`` after its first ``lead`` (lanes), which stay in front."""
    x = np.asarray(x)
    lanes, core = x.shape[:lead], x.shape[lead:]
    columns = np.moveaxis(x, tuple(range(lead)), tuple(range(-lead, 0))) if lead else x
    out = np.asarray(matrix @ columns.reshape(core[0], -1))
    out = out.reshape((matrix.shape[0],) + core[1:] + lanes)
    return np.moveaxis(out, tuple(range(-lead, 0)), tuple(range(lead))) if lead else out


def _product_sparsity(sets, out, x, *, matrix, lead):
    """``out[..., i, c]`` depends on ``x[..., j, c]`` where ``matrix[i, j]`` is not zero."""
    entries = matrix.tocoo()
    nonzero = entries.data != 0
    rows, cols = entries.row[nonzero], entries.col[nonzero]
    xs, outs = shape(x), np.shape(out)
    src = positions(xs).reshape(int(np.prod(xs[:lead], dtype=np.int64)), xs[lead], -1)
    dst = positions(outs).reshape(src.shape[0], outs[lead], -1)
    return collect(sets[0], src[:, cols, :], dst[:, rows, :], outs)


sparse_product_p = Primitive("sparse_matmul", _product_impl)
sparse_product_p.def_jvp(0, lambda t, out, x, *, matrix, lead: sparse_product_p(
    t, matrix=matrix, lead=lead + lead_of(t, x)))
sparse_product_p.def_vjp(0, lambda g, out, x, *, matrix, lead: sparse_product_p(
    g, matrix=matrix.T, lead=lead + lead_of(g, out)))
sparse_product_p.def_sparsity(_product_sparsity)


def sparse_product(matrix, x):
    """sparse_product(matrix, x) -> ``matrix @ x`` for a constant sparse ``matrix`` and a traced
    ``x`` of one or two axes (a vector or a block of columns)."""
    if matrix.ndim != 2 or ndim(x) not in (1, 2) or shape(x)[0] != matrix.shape[1]:
        raise ValueError(f"matmul: shapes {matrix.shape} (sparse) and {shape(x)} do not align: the "
                         f"matrix's columns must equal the first axis of the array")
    return sparse_product_p(x, matrix=matrix, lead=0)
