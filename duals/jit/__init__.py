"""duals.jit: forward and reverse mode of unchanged ``@numba.njit`` code, with types Numba understands.

``duals.jvp``, ``duals.jacfwd`` hand a Numba dispatcher to :func:`compiled_jvp` and
:func:`compiled_jacfwd`; Numba then compiles the user's own code for :class:`DualType` scalars
and arrays of :func:`dual_dtype`. ``duals.grad``, ``value_and_grad``, ``vjp``, ``jacrev``,
``hvp`` and ``hessian`` hand it to the reverse-mode entry points (:mod:`duals.jit.reverse`,
:mod:`duals.jit.reverse_second_order`), which run it on adjoints that record a tape in compiled memory (:mod:`duals.jit.tape`).
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
from . import tape as _tape, adjoint as _adjoint  # noqa: F401  (compiled reverse mode's types)
from .api import compiled_jvp, compiled_jacfwd, compiled_hessian
from .calling import dual_array
from .reverse import compiled_vjp, compiled_grad, compiled_value_and_grad, compiled_jacrev  # noqa: E402
from .reverse_second_order import compiled_hvp, compiled_hessian_rev, compiled_hessian_auto  # noqa: E402
from .checkpoint import loop_value_and_grad  # noqa: E402
from .tape import RecordingSize, last_recording  # noqa: E402

fn = _rules.install()

from . import linalg as _linalg  # noqa: E402,F401  (products and np.linalg on dual arrays)
from . import array_functions as _array_functions  # noqa: E402,F401  (np.cumsum, np.where ...)
from . import composed_arrays as _composed_arrays  # noqa: E402,F401  (np.vdot, np.vander, np.nan_to_num, np.unwrap)
from . import adjoint_arrays as _adjoint_arrays  # noqa: E402,F401  (the same on adjoints, by loops)
from . import adjoint_solves as _adjoint_solves  # noqa: E402,F401  (solve, inv, det on adjoints)
from . import singular_values as _singular_values  # noqa: E402,F401  (np.linalg.svd(a, compute_uv=False))
from . import adjoint_decompositions as _adjoint_decompositions  # noqa: E402,F401  (eigh, svd, qr ... on adjoints)

__all__ = ["DualType", "dual_dtype", "type_of_dtype", "dtype_of_type", "compiled_jvp",
           "compiled_jacfwd", "compiled_hessian", "dual_array", "fn", "compiled_vjp", "compiled_grad",
           "compiled_value_and_grad", "compiled_jacrev", "compiled_hvp", "compiled_hessian_rev",
           "compiled_hessian_auto", "loop_value_and_grad", "RecordingSize", "last_recording"]
