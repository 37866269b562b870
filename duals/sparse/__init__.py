"""duals.sparse: sparse Jacobians and Hessians (patterns, colourings, compressed evaluation).

Loaded on first use of ``sparsity=`` or :func:`duals.sparsity`; it needs SciPy (the ``sparse``
extra). The core of the library never imports it: sparsity detection itself is an interpreter
of the primitives (:mod:`duals.dependencies`), and this package builds on the transformations.

>>> import numpy as np, duals
>>> J = duals.jacfwd(lambda x: x[1:] * x[:-1], sparsity="auto")(np.arange(4.0))
>>> J.shape, J.nnz
((3, 4), 6)
"""
from .api import sparse_hessian, sparse_jacobian, sparsity
from .coloring import column_colors, row_colors, star_colors
from .patterns import Sparsity

__all__ = ["Sparsity", "sparsity", "sparse_jacobian", "sparse_hessian", "column_colors",
           "row_colors", "star_colors"]
