"""The table of operations x shapes x dtypes that drives the derivative tests.

Each :class:`Case` is a function of one or more arrays, the shapes of its arguments, the
interval its inputs are drawn from, and the primitives it exercises. Element-wise cases
are generated from ``duals.derivatives`` itself (formulas and sampling domains), so a new
entry there is tested at once;
other families list their cases here or in ``tests/op_cases_<family>.py`` (every such
module's ``CASES`` list is collected). ``test_ops.py`` fails if a registered primitive is
covered by no case.
"""
import glob
import importlib
import os
import zlib
from dataclasses import dataclass, field

import numpy as np

import duals.numpy as dnp
from duals import derivatives
from duals.ops.conversions import copy_p
from duals.ops.elementwise import PRIMITIVES


@dataclass
class Case:
    name: str
    fn: object
    shapes: tuple
    prims: tuple
    domain: tuple = (-2.0, 2.0)
    away_from_zero: bool = False
    smooth: bool = True          # second derivatives exist at the sampled points
    float32: bool = True
    tags: tuple = field(default_factory=tuple)

    def inputs(self, dtype=np.float64):
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        lo, hi = self.domain
        out = []
        for shape in self.shapes:
            x = rng.uniform(lo, hi, size=shape)
            if self.away_from_zero:
                x = np.sign(rng.uniform(-1, 1, size=shape)) * rng.uniform(0.3, hi, size=shape)
            out.append(np.asarray(x, dtype=dtype))
        return out

    @property
    def id(self):
        return self.name


# ---------------------------------------------------------------- element-wise, from the table

# where each entry is sampled: read from its record in the table
UNARY_DOMAIN = {n: e.domain for n, e in derivatives.TABLE.items() if e.arity == 1}
UNARY_AWAY_FROM_ZERO = {n for n, e in derivatives.TABLE.items() if e.away_from_zero}
BINARY_DOMAIN = {n: e.domain for n, e in derivatives.TABLE.items() if e.arity == 2}
UNARY_SHAPES = [(), (3,), (2, 3)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]


def _unary_cases():
    for name in derivatives.UNARY:
        prim = PRIMITIVES[name]
        for shape in UNARY_SHAPES:
            yield Case(f"{name}-{shape}", prim, (shape,), (name,),
                       domain=UNARY_DOMAIN.get(name, (-2.0, 2.0)),
                       away_from_zero=name in UNARY_AWAY_FROM_ZERO)


def _binary_cases():
    for name in derivatives.BINARY:
        prim = PRIMITIVES[name]
        for shapes in BINARY_SHAPES:
            yield Case(f"{name}-{shapes}", prim, shapes, (name,),
                       domain=BINARY_DOMAIN.get(name, (-2.0, 2.0)),
                       smooth=name not in ("maximum", "minimum"))


# ---------------------------------------------------------------- other families

OTHER = [
    Case("where", lambda x, y: dnp.where(np.arange(3) % 2 == 0, x, y), ((2, 3), (3,)), ("select",)),
    Case("where-scalar-branch", lambda x: dnp.where(np.arange(3) > 0, x, 0.5), ((3,),), ("select",)),
    Case("integer_pow", lambda x: x ** 3 + x ** -2 + x ** 1 + x ** 0, ((3,),), ("integer_pow",),
         away_from_zero=True),
    Case("power-constant-exponents", lambda x: x ** 2.0 + x ** 0.5 + x ** -1 + x ** 1.7, ((3,),),
         ("square", "sqrt", "reciprocal", "pow"), domain=(0.3, 2.0)),
    Case("clip", lambda x: dnp.clip(x, -0.5, 0.5), ((4,),), ("maximum", "minimum"), smooth=False),
    Case("sum-all", lambda x: dnp.sum(x), ((2, 3),), ("sum",)),
    Case("sum-axis0", lambda x: dnp.sum(x, axis=0), ((2, 3),), ("sum",)),
    Case("sum-axis-1-keepdims", lambda x: dnp.sum(x, axis=-1, keepdims=True), ((2, 3),), ("sum",)),
    Case("mean-axis1", lambda x: dnp.mean(x, axis=1), ((2, 3),), ("sum",)),
    Case("var", lambda x: dnp.var(x, axis=0), ((4, 2),), ("sum",)),
    Case("std-ddof1", lambda x: dnp.std(x, ddof=1), ((5,),), ("sum", "sqrt")),
    Case("prod", lambda x: dnp.prod(x, axis=1), ((2, 5),), ("mul", "getitem", "concatenate")),
    Case("prod-all", lambda x: dnp.prod(x), ((3,),), ("mul", "getitem")),
    Case("max-all", lambda x: dnp.max(x), ((2, 3),), ("max",), smooth=True),
    Case("max-axis0", lambda x: dnp.max(x, axis=0), ((3, 2),), ("max",)),
    Case("min-axis1-keepdims", lambda x: dnp.min(x, axis=1, keepdims=True), ((2, 3),), ("min",)),
    Case("cumsum", lambda x: dnp.cumsum(x, axis=1), ((2, 3),), ("cumsum",)),
    Case("cumsum-flat", lambda x: dnp.cumsum(x), ((2, 2),), ("cumsum", "reshape")),
    Case("logsumexp", lambda x: dnp.special.logsumexp(x, axis=1), ((2, 3),), ("exp", "log", "max")),
    Case("reshape", lambda x: dnp.reshape(x, (3, 2)) * x.T, ((2, 3),), ("reshape", "transpose")),
    Case("ravel-method", lambda x: x.ravel() ** 2, ((2, 2),), ("reshape",)),
    Case("ravel-column-order", lambda x: np.ravel(x, order="F") * np.arange(6.0, dtype=x.dtype), ((2, 3),),
         ("reshape", "transpose")),
    Case("flatten-column-order", lambda x: x.flatten("F") ** 2, ((3, 2),), ("reshape", "transpose")),
    # the column-stacking un-vec of a Lyapunov equation solved by vectorisation (a control trial)
    Case("reshape-column-order", lambda x: x.reshape((3, 2), order="F") * np.arange(6.0, dtype=x.dtype).reshape(3, 2),
         ((6,),), ("reshape", "transpose")),
    Case("reshape-column-order-3d", lambda x: np.reshape(x, (2, -1, 2), order="F") ** 2, ((4, 2),),
         ("reshape", "transpose")),
    Case("ascontiguousarray", lambda x: np.sum(dnp.asfortranarray(x) * dnp.ascontiguousarray(x.T).T), ((2, 3),),
         ("transpose",)),
    Case("cumsum-dtype", lambda x: np.cumsum(x ** 2, dtype=np.float64), ((2, 2),), ("cumsum",)),
    Case("transpose-axes", lambda x: dnp.transpose(x, (1, 2, 0)), ((2, 3, 2),), ("transpose",)),
    Case("moveaxis", lambda x: dnp.moveaxis(x, 0, -1), ((2, 3, 2),), ("transpose",)),
    Case("swapaxes", lambda x: dnp.swapaxes(x, 0, 1), ((2, 3),), ("transpose",)),
    Case("broadcast_to", lambda x: dnp.broadcast_to(x, (2, 3)) * 1.5, ((3,),), ("broadcast_to",)),
    Case("full", lambda x: dnp.full((2, 3), x) * dnp.full_like(x, x[0] ** 2), ((3,),), ("broadcast_to", "copy")),
    Case("expand-squeeze", lambda x: dnp.squeeze(dnp.expand_dims(x, 0)) ** 2, ((3,),), ("reshape",)),
    Case("getitem-slice", lambda x: x[1:] - x[:-1] ** 2, ((5,),), ("getitem",)),
    Case("getitem-int", lambda x: x[1] * x[0, 2], ((2, 3),), ("getitem",)),
    Case("getitem-fancy-repeat", lambda x: x[np.array([0, 2, 2, 1])], ((3,),), ("getitem", "scatter_add")),
    Case("getitem-bool", lambda x: x[np.array([[True, False, True], [False, True, True]])], ((2, 3),),
         ("getitem",)),
    Case("getitem-mixed", lambda x: x[:, np.array([2, 0])], ((2, 3),), ("getitem",)),
    Case("getitem-newaxis-ellipsis", lambda x: x[None, ..., 0], ((2, 3),), ("getitem",)),
    Case("flip", lambda x: dnp.flip(x, axis=0) * x, ((3, 2),), ("getitem",)),
    Case("concatenate", lambda x, y: dnp.concatenate([x, y, x], axis=1), ((2, 1), (2, 3)),
         ("concatenate",)),
    Case("stack", lambda x, y: dnp.stack([x, y], axis=1), ((3,), (3,)), ("concatenate", "reshape")),
    Case("diag-extract", lambda x: dnp.diag(x, 1), ((3, 3),), ("getitem",)),
    Case("diag-build", lambda x: dnp.diag(x, -1), ((3,),), ("scatter_add",)),
    Case("trace", lambda x: dnp.trace(x), ((3, 3),), ("getitem", "sum")),
    Case("triu", lambda x: dnp.triu(x), ((3, 3),), ("select",)),
    Case("tril", lambda x: dnp.tril(x, -1), ((3, 4),), ("select",)),
    Case("copy", lambda x: copy_p(x) * x, ((3,),), ("copy",)),
    Case("array-of-scalars", lambda x: dnp.array([[x[0], 1.0], [x[1] * x[0], 2.0]]), ((2,),),
         ("concatenate", "reshape")),
    # astype to another precision: float32 inputs pass through float64 and back (no-op copies at float64)
    Case("astype-up-and-back", lambda x: np.sin(x.astype(np.float64) * x[0]).astype(x.dtype), ((3,),), ("astype",)),
    Case("ufunc-outer", lambda x, y: np.subtract.outer(x, y) * dnp.multiply.outer(x, y[0])[:, None, :], ((3,), (2, 2)),
         ("sub", "mul", "reshape")),
    Case("primitive-reduce", lambda x: dnp.add.reduce(x * x, axis=1) + dnp.multiply.accumulate(x, axis=1)[:, -1],
         ((2, 3),), ("sum", "cumprod")),
]

# primitives whose derivative is deliberately not the finite difference of their value
EXEMPT = {}


def _collect():
    cases = list(_unary_cases()) + list(_binary_cases()) + OTHER
    here = os.path.dirname(__file__)
    for path in sorted(glob.glob(os.path.join(here, "op_cases_*.py"))):
        module = importlib.import_module(os.path.splitext(os.path.basename(path))[0])
        cases.extend(module.CASES)
    return cases


CASES = _collect()
