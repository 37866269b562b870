"""Cases of ``duals/ops/pieces.py``: splitting, broadcasting, ``select``, ``piecewise`` and NumPy 2's
cumulative and ``linalg`` spellings, called as NumPy code calls them."""
import numpy as np

from op_cases import Case

C, G, R = ("concatenate",), ("getitem",), ("reshape",)
CASES = [
    Case("split-sections", lambda x: np.split(x, 3, axis=1)[1] * np.split(x, 3, axis=1)[2], ((2, 6),),
         G + ("mul",)),
    Case("array_split-uneven-indices", lambda x: np.array_split(x, [2, -1])[1] ** 2, ((7,),), G),
    Case("hsplit-vsplit-dsplit", lambda x: np.hsplit(x, 2)[1][0] + np.vsplit(x, 2)[0][0, 1] + np.dsplit(x, [1])[1][1, 0],
         ((2, 2, 2),), G),
    Case("unstack", lambda x: np.unstack(x, axis=1)[0] * np.unstack(x)[1][2], ((2, 3),), G),
    Case("broadcast_arrays", lambda x, y: np.broadcast_arrays(x, y)[0] * np.broadcast_arrays(x, y)[1],
         ((3, 1), (4,)), ("broadcast_to",)),
    # conditions on the values, as scientific code writes them; each choice its own function
    Case("select", lambda x: np.select([x < -0.5, x < 0.5], [x ** 3, np.sin(x)], default=2.0 * x),
         ((3, 4),), ("select",), smooth=False),
    Case("piecewise-with-otherwise", lambda x: np.piecewise(x, [x < 0, x > 1],
                                                            [lambda v: v ** 3, lambda v: np.log(v), lambda v: 1.0 + v * v]),
         ((9,),), ("scatter_add",), domain=(-1.0, 2.0), smooth=False),
    Case("piecewise-constant-piece", lambda x: np.piecewise(x, [x < 0], [0.5, lambda v: np.exp(v)]),
         ((2, 3),), ("scatter_add",), smooth=False),
    Case("cumulative_sum-initial", lambda x: np.cumulative_sum(x, axis=0, include_initial=True) ** 2,
         ((3, 2),), C + ("cumsum",)),
    Case("cumulative_prod", lambda x: np.cumulative_prod(x), ((4,),), ("cumprod",)),
    Case("rollaxis", lambda x: np.rollaxis(x, 2, 1) * np.arange(12.0).reshape(2, 3, 2), ((2, 2, 3),),
         ("transpose",)),
    Case("diagflat", lambda x: np.diagflat(x, -1), ((2, 2),), R),
    Case("vecdot-matvec-vecmat", lambda a, v: np.vecdot(a, v) + np.matvec(a, v) + np.vecmat(v, a),
         ((3, 3), (3,)), ("matmul", "mul")),
    Case("linalg-spellings", lambda a: np.linalg.matrix_norm(a) + np.linalg.vector_norm(a, ord=3)
         + np.linalg.trace(a) * np.linalg.diagonal(a) + np.linalg.outer(a[0], a[1]).sum(axis=0)
         + np.linalg.cross(a, a[::-1])[0] + np.linalg.matmul(a, a)[1], ((3, 3),), ("matmul",),
         away_from_zero=True),
    Case("cond-2-and-1", lambda a: np.linalg.cond(a + 3.0 * np.eye(3)) + np.linalg.cond(a + 3.0 * np.eye(3), 1),
         ((3, 3),), ("svdvals", "solve"), smooth=False),
    Case("cond-minus-2-batched", lambda a: np.linalg.cond(a, -2), ((2, 3, 3),), ("svdvals",)),
    Case("apply_along_axis-vector-result", lambda x: np.apply_along_axis(lambda v: v[:2] * np.sum(v ** 2), 1, x),
         ((3, 4),), ("mul", "sum")),
    Case("apply_along_axis-scalar-result", lambda x: np.apply_along_axis(np.prod, 0, x), ((3, 2),), ("mul",)),
    Case("partition", lambda x: np.partition(x, [1, 3], axis=1) * np.arange(5.0), ((2, 5),), ("getitem",)),
    Case("nanvar-nanstd-nanprod", lambda x: np.nanvar(np.where(x > 1.5, np.nan, x), axis=0, ddof=1)
         + np.nanstd(x) + np.nanprod(np.where(x < -1.5, np.nan, x), axis=0), ((4, 2),), ("select", "sqrt")),
    Case("resize-grow-and-shrink", lambda x: np.resize(x, (3, 3)) * np.resize(x, 2)[1], ((2, 2),), ("reshape",)),
    # phases of a signal that wraps: the unwrapping adds whole periods
    Case("unwrap", lambda x: np.unwrap(np.cumsum(x) * 3.0) ** 2, ((6,),), ("add", "sub"), smooth=False),
]

# functions NumPy added after 2.0 (the oldest NumPy supported, .ci/oldest): their cases are code
# written for a newer NumPy, which code on NumPy 2.0 cannot contain
_SINCE_NUMPY_2_1 = {"unstack": ("unstack",), "cumulative_sum-initial": ("cumulative_sum",),
                    "cumulative_prod": ("cumulative_prod",),
                    "vecdot-matvec-vecmat": ("vecdot", "matvec", "vecmat")}
CASES = [case for case in CASES if all(hasattr(np, name) for name in _SINCE_NUMPY_2_1.get(case.name, ()))]
