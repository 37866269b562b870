"""Derivative cases for ``duals/ops/subsets.py``: ``delete``, ``insert``, ``compress``, ``extract``
and ``choose`` as NumPy code calls them (slices, masks, repeated positions, broadcast values)."""
import numpy as np

from op_cases import Case

G = ("getitem", "reshape")
C = G + ("concatenate",)

CASES = [
    Case("delete-columns", lambda x: np.delete(x, [0, 2], axis=1) ** 2, ((3, 4),), G + ("square",)),
    Case("delete-flat-slice", lambda x: np.delete(x, slice(1, 5)) * x[0, 0], ((3, 4),), G + ("mul",)),
    Case("delete-mask", lambda x: np.delete(x, np.array([True, False, True]), axis=0), ((3, 2),), G),
    Case("insert-row-of-traced-values", lambda x: np.insert(x, 1, x[0] ** 2, axis=0), ((3, 2),), C),
    Case("insert-repeated-positions", lambda x: np.insert(x, [1, 1, 3], 7.0, axis=1) * np.sum(x),
         ((2, 3),), C + ("mul",)),
    Case("insert-traced-into-plain", lambda v: np.insert(np.linspace(0.0, 1.0, 4), [0, 2], v), ((2,),), C),
    Case("compress-rows", lambda x: np.compress([True, False, True], x, axis=0) ** 3, ((3, 2),),
         G + ("cube",)),
    Case("extract-positive", lambda x: np.extract(np.arange(x.size).reshape(x.shape) % 3 != 1, x) * x[0, 0],
         ((2, 3),), G + ("mul",)),
    Case("choose-broadcast", lambda x, y: np.choose(np.array([[0, 1, 2, 1]]), [x, y ** 2, np.ones(4)]),
         ((3, 4), (4,)), C + ("square",)),
    Case("choose-wrap", lambda x: np.choose(np.array([0, 3, 5, 1]), [x[0], 2.0 * x[1], x[2]], mode="wrap"),
         ((3, 4),), C),
]
