"""Derivative cases for ``duals/ops/assembly.py``: stacking, ``atleast_*d``, ``tile``, ``repeat``,
``roll``, ``pad`` (every supported mode), ``take``/``take_along_axis``, ``meshgrid``,
``linspace``/``logspace`` with traced end points and the flips, called as plain NumPy, and the
index-expression concatenators ``r_``/``c_`` (NumPy's own cannot take traced values: they are
``duals.numpy.r_``/``c_``, as in autograd).
"""
import numpy as np

import duals.numpy as dnp
from op_cases import Case

C = ("concatenate",)
R = ("reshape",)
G = ("getitem",)

CASES = [
    Case("vstack", lambda x, y: np.vstack([x, y, x * y]), ((3,), (2, 3)), C + R + ("mul",)),
    Case("hstack-mixed", lambda x: np.hstack([x, 1.0, x ** 2]), ((3,),), C + ("square",)),
    Case("hstack-2d", lambda x, y: np.hstack([x, y]), ((2, 1), (2, 3)), C),
    # a saddle-point matrix as code assembles it: blocks of rank 2 and 1, a plain block, a scalar
    Case("block-2d", lambda a, b: np.block([[a, b[:, None]], [b[None, :] * 2.0, np.zeros((1, 1))]]),
         ((2, 2), (2,)), C + R + ("mul",)),
    Case("block-1d-and-scalars", lambda x: np.block([x, 1.0, x ** 3]), ((3,),), C + R + ("cube",)),
    Case("column_stack", lambda x, y: np.column_stack([x, y, x * y]), ((3,), (3,)), C + R),
    Case("dstack", lambda x: np.dstack([x, 2.0 * x]), ((2, 2),), C + R),
    Case("append-flat", lambda x, y: np.append(x, y), ((2, 2), (3,)), C + R),
    Case("append-axis", lambda x: np.append(x, x[:1] ** 2, axis=0), ((2, 3),), C + G),
    Case("atleast_2d-3d", lambda x: np.atleast_2d(x) * np.atleast_3d(x), ((3,),), R + ("mul",)),
    Case("tile", lambda x: np.tile(x, (2, 1, 2)), ((2, 3),), ("broadcast_to",) + R),
    Case("tile-then-square", lambda x: np.tile(x, 3) ** 2, ((2,),), ("broadcast_to", "square")),
    Case("repeat-counts-axis", lambda x: np.repeat(x, [1, 0, 3], axis=1), ((2, 3),), G + ("scatter_add",)),
    Case("repeat-flat", lambda x: np.repeat(x, 2) * np.arange(8.0, dtype=x.dtype), ((2, 2),), G),
    Case("roll-axes", lambda x: np.roll(x, (1, -2), axis=(0, 1)), ((3, 4),), G + C),
    Case("roll-flat", lambda x: np.roll(x, 4) * x, ((2, 3),), G + C + R),
    Case("pad-constant", lambda x: np.pad(x, ((1, 2), (0, 1)), constant_values=((1.5, 2.0), (0.0, -1.0))),
         ((2, 3),), C),
    Case("pad-edge", lambda x: np.pad(x, 2, mode="edge") ** 2, ((2, 3),), G + ("square",)),
    Case("pad-reflect", lambda x: np.pad(x, ((3, 1),), mode="reflect"), ((3,),), G),
    Case("pad-symmetric", lambda x: np.pad(x, ((1, 1), (2, 0)), mode="symmetric"), ((2, 3),), G),
    Case("pad-wrap", lambda x: np.pad(x, (2, 3), mode="wrap"), ((3,),), G),
    # NumPy dispatches pad on the array only: a traced constant_values alone needs duals.numpy.pad
    Case("pad-traced-constant", lambda x, c: dnp.pad(x, 1, constant_values=c) * x.sum(),
         ((2, 2), ()), C + ("broadcast_to",)),
    Case("take-axis", lambda x: np.take(x, [[2, 0], [1, 1]], axis=1), ((2, 3),), G),
    Case("take-flat-clip", lambda x: np.take(x, [7, -3, 0], mode="clip"), ((2, 3),), G + R),
    Case("take_along_axis", lambda x: np.take_along_axis(x, np.array([[0, 2, 2], [1, 0, 1]]), axis=0),
         ((3, 3),), G + ("scatter_add",)),
    Case("meshgrid-xy", lambda x, y: np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1], ((3,), (2,)),
         ("broadcast_to", "mul")),
    Case("meshgrid-ij-sparse", lambda x, y: sum(np.meshgrid(x, y, indexing="ij", sparse=True)),
         ((3,), (2,)), R + ("add",)),
    Case("linspace-end-points", lambda a, b: np.linspace(a, b, 5), ((), ()), C + ("mul",)),
    Case("linspace-vector-axis", lambda a: np.linspace(a, 2.0 * a + 3.0, 4, endpoint=False, axis=-1),
         ((2,),), ("transpose",)),
    Case("linspace-retstep", lambda a: np.linspace(0.0, a, 3, retstep=True)[1] * a, ((),), ("div",)),
    Case("logspace", lambda a: np.logspace(a, 1.0, 4), ((),), ("pow",), domain=(-1.0, 1.0)),
    Case("flipud-fliplr", lambda x: np.flipud(x) * np.fliplr(x), ((3, 3),), G + ("mul",)),
    Case("rot90", lambda x: np.rot90(x) + np.rot90(x, 2) + np.rot90(x, -1), ((3, 3),), G + ("transpose",)),
    Case("rot90-axes", lambda x: np.rot90(x, 1, axes=(2, 0)), ((2, 3, 2),), G + ("transpose",)),
    Case("atleast_1d-many", lambda x, y: np.concatenate(np.atleast_1d(x, y)), ((), (2,)), C + R),
    Case("r_-vectors-scalar-slice", lambda x: dnp.r_[x, 2.0, x ** 2, 1:4], ((3,),), C + ("square",)),
    Case("r_-matrices-and-constant", lambda x: dnp.r_[x, np.ones((1, 2), dtype=x.dtype), x], ((3, 2),), C),
    Case("r_-directive", lambda x: dnp.r_["0,2", x, 2.0 * x], ((3,),), C + R),
    Case("c_-columns", lambda x, y: dnp.c_[x, y, x * y], ((3,), (3,)), C + R + ("transpose",)),
    Case("c_-matrices", lambda x: dnp.c_[x, np.zeros((3, 1), dtype=x.dtype), x], ((3, 2),), C),
]
