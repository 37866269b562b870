"""duals.jit: forward mode of unchanged ``@numba.njit`` code, with a dual number type Numba understands.

``duals.jvp``, ``duals.jacfwd`` and ``duals.hessian`` hand a Numba dispatcher to
:func:`compiled_jvp`, :func:`compiled_jacfwd` and :func:`compiled_hessian`; Numba then
compiles the user's own code for :class:`DualType` scalars and arrays of :func:`dual_dtype`.
Every operation of the dual type is generated from ``duals/derivatives.py``; ``fn`` holds
each table entry under its table name (``fn.expit(x)``) for @njit code.

>>> import numba, math, duals
>>> duals.jacfwd(numba.njit(lambda x: math.exp(2.0 * x)))(0.0)
2.0
"""
from .compat import check as _check

_check()  # before any extension is installed: an unsupported Numba gets one clear error

from ._types import DualType, dual_dtype, type_of_dtype, dtype_of_type  # noqa: E402
from . import rules as _rules
from . import errors as _errors  # noqa: F401  (registers the error overloads)
from . import arrays as _arrays  # noqa: F401  (registers the whole-array overloads)
from .api import compiled_jvp, compiled_jacfwd, compiled_hessian, dual_array

fn = _rules.install()

from . import linalg as _linalg  # noqa: E402,F401  (products and np.linalg on dual arrays)
from . import array_functions as _array_functions  # noqa: E402,F401  (np.cumsum, np.where ...)

__all__ = ["DualType", "dual_dtype", "type_of_dtype", "dtype_of_type", "compiled_jvp",
           "compiled_jacfwd", "compiled_hessian", "dual_array", "fn"]
