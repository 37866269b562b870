"""duals.numpy: the differentiable NumPy namespace.

Every function here accepts plain arrays (and returns plain arrays) as well as traced
values. Names that the library does not define fall through to NumPy itself (constants,
``zeros``, ``linspace``, …); such a function called on a traced value raises a clear
``TypeError`` naming it, never a silently wrong derivative.

>>> import duals.numpy as dnp
>>> float(dnp.sin(0.0))
0.0
"""
import types as _types

import numpy as _np

from . import ops as _ops
from .ops import elementwise as _elementwise  # noqa: F401  (registers the primitives)
from .ops import reductions as _reductions  # noqa: F401
from .ops import shape as _shape  # noqa: F401
from .ops import linalg as _linalg  # noqa: F401
from .ops import einsum as _einsum  # noqa: F401
from .ops import norms as _norms  # noqa: F401
from .ops import special as _special  # noqa: F401
from .ops import assembly as _assembly  # noqa: F401
from .ops import grids as _grids  # noqa: F401
from .ops import sorting as _sorting  # noqa: F401
from .ops import calculus as _calculus  # noqa: F401
from .ops import products as _products  # noqa: F401
from .ops import statistics as _statistics  # noqa: F401
from .ops import ufuncs as _ufuncs  # noqa: F401
from .ops import queries as _queries  # noqa: F401

linalg = _types.ModuleType("duals.numpy.linalg", "Differentiable numpy.linalg.")
special = _types.ModuleType("duals.numpy.special", "Differentiable special functions (SciPy's names).")

for _name, _func in _ops.NAMESPACE.items():
    if "." in _name:
        _sub, _leaf = _name.split(".", 1)
        setattr({"linalg": linalg, "special": special}[_sub], _leaf, _func)
    else:
        globals()[_name] = _func


def __getattr__(name):
    try:
        return getattr(_np, name)
    except AttributeError:
        raise AttributeError(f"duals.numpy has no attribute {name!r} (nor does numpy)") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_np)))


linalg.__getattr__ = lambda name: getattr(_np.linalg, name)
