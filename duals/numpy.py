"""duals.numpy: the differentiable NumPy namespace.

Every function here accepts plain arrays (and returns plain arrays) as well as traced
values. The namespace holds exactly the supported functions, plus the NumPy names that are
safe on traced values because they differentiate nothing (:data:`PASSTHROUGH`: constants,
dtypes, plain creation functions, index helpers, ``errstate``, ``random``); any other NumPy
name raises ``AttributeError`` where it is written, saying what to do instead.

>>> import duals.numpy as dnp
>>> float(dnp.sin(0.0))
0.0
"""
import sys as _sys
import types as _types

import numpy as _np

from . import ops as _ops
from .ops import elementwise as _elementwise  # noqa: F401  (registers the primitives)
from .ops import powers as _powers  # noqa: F401
from .ops import conversions as _conversions  # noqa: F401
from .ops import complex_parts as _complex_parts  # noqa: F401
from .ops import reductions as _reductions  # noqa: F401
from .ops import shape as _shape  # noqa: F401
from .ops import linalg as _linalg  # noqa: F401
from .ops import determinants as _determinants  # noqa: F401
from .ops import einsum as _einsum  # noqa: F401
from .ops import norms as _norms  # noqa: F401
from .ops import spectral as _spectral  # noqa: F401
from .ops import eigen as _eigen  # noqa: F401
from .ops import matrix_exponential as _matrix_exponential  # noqa: F401
from .ops import pieces as _pieces  # noqa: F401
from .ops import decompositions as _decompositions  # noqa: F401
from .ops import least_squares as _least_squares  # noqa: F401
from .ops import special as _special  # noqa: F401
from .ops import assembly as _assembly  # noqa: F401
from .ops import subsets as _subsets  # noqa: F401
from .ops import grids as _grids  # noqa: F401
from .ops import sorting as _sorting  # noqa: F401
from .ops import nan_order as _nan_order  # noqa: F401
from .ops import calculus as _calculus  # noqa: F401
from .ops import products as _products  # noqa: F401
from .ops import polynomials as _polynomials  # noqa: F401
from .ops import statistics as _statistics  # noqa: F401
from .ops import histograms as _histograms  # noqa: F401
from .ops import ufuncs as _ufuncs  # noqa: F401
from .ops import queries as _queries  # noqa: F401
from .ops import fft as _fft  # noqa: F401
from .ops import scimath as _scimath  # noqa: F401

linalg = _types.ModuleType("duals.numpy.linalg", "Differentiable numpy.linalg.")
special = _types.ModuleType("duals.numpy.special", "Differentiable special functions (SciPy's names).")
fft = _types.ModuleType("duals.numpy.fft", "Differentiable numpy.fft (docs/complex.md).")
emath = _types.ModuleType("duals.numpy.emath", "Differentiable numpy.emath: complex where the real result is undefined.")


lib = _types.ModuleType("duals.numpy.lib", "Differentiable numpy.lib functions.")
lib.stride_tricks = _types.ModuleType("duals.numpy.lib.stride_tricks", "Differentiable windows.")
_SUBMODULES = {"linalg": linalg, "special": special, "fft": fft, "emath": emath,
               "lib.stride_tricks": lib.stride_tricks}
# importable as modules too (from duals.numpy.special import logsumexp), as NumPy's are
_sys.modules.update({m.__name__: m for m in (linalg, special, fft, emath, lib, lib.stride_tricks)})

for _name, _func in _ops.NAMESPACE.items():
    if "." in _name:
        _sub, _leaf = _name.rsplit(".", 1)
        setattr(_SUBMODULES[_sub], _leaf, _func)
    else:
        globals()[_name] = _func

# NumPy 2's other names of the same functions (acos is arccos, concat is concatenate, pow is power)
_SPELLED = {id(getattr(_np, n)): n for n in _ops.NAMESPACE if "." not in n and callable(getattr(_np, n, None))}
# (NumPy's own dictionary, not dir() and getattr: those import its lazy submodules, f2py and testing
# among them, a quarter of duals' import time)
for _alias, _value in list(vars(_np).items()):
    if not _alias.startswith("_") and _alias not in globals() and id(_value) in _SPELLED:
        globals()[_alias] = globals()[_SPELLED[id(_value)]]


# NumPy names that are safe on traced values because they differentiate nothing: constants,
# dtypes and their queries, plain creation functions (their results are constants), index
# helpers, error-state contexts and the random module. Everything else must be one of the
# supported functions above, so that an unsupported name fails where it is written.
PASSTHROUGH = frozenset("""
    pi e inf nan newaxis euler_gamma
    dtype finfo iinfo ndarray generic number floating integer signedinteger unsignedinteger
    float16 float32 float64 longdouble int8 int16 int32 int64 uint8 uint16 uint32 uint64 intp
    uintp bool_ complex64 complex128
    zeros ones empty arange eye identity tri indices ix_ mgrid ogrid
    diag_indices tril_indices triu_indices unravel_index ravel_multi_index s_ index_exp
    broadcast_shapes promote_types can_cast isscalar
    errstate seterr geterr printoptions set_printoptions get_printoptions random
""".split())


def __getattr__(name):
    if name in PASSTHROUGH and hasattr(_np, name):
        return getattr(_np, name)
    if hasattr(_np, name):
        raise AttributeError(
            f"duals.numpy has no {name!r}: numpy.{name} has no derivative rule in duals. Use "
            f"numpy.{name} itself on values that do not depend on what you differentiate; for "
            f"the rest, write it with the functions dir(duals.numpy) lists, or declare a "
            f"primitive (duals.extend)")
    raise AttributeError(f"duals.numpy has no attribute {name!r} (nor does numpy)")


def __dir__():
    return sorted(set(globals()) | {n for n in PASSTHROUGH if hasattr(_np, n)})


def _strict_submodule(module, numpy_module, label):
    def getattr_(name):
        raise AttributeError(
            f"duals.numpy.{label} has no {name!r}"
            + (f": numpy.{label}.{name} has no derivative rule in duals" if hasattr(numpy_module, name)
               else ""))
    module.__getattr__ = getattr_


_strict_submodule(linalg, _np.linalg, "linalg")
_strict_submodule(fft, _np.fft, "fft")
