"""duals: exact derivatives of ordinary scientific Python code.

Forward mode with dual numbers compiled by Numba, reverse mode on a tape, and JAX's
composable transformations on top of both.

>>> import duals, numpy as np
>>> duals.grad(lambda x: np.sum(np.sin(x)))(np.zeros(2)).tolist()
[1.0, 1.0]
"""
from ._version import __version__
from ._memory import tune_allocator
from .cotangents import release_buffers
from . import numpy  # noqa: F401  (registers every primitive)
from . import _operators
from .forward import Dual
from .reverse import Var, no_grad
from .ops.elementwise import stop_gradient
from .kernels import clear_cache
from .transforms import jvp, vjp, grad, value_and_grad, jacfwd, jacrev, jacobian, sparsity
from .second_order import hessian, hvp, value_grad_hessian
from . import special  # noqa: F401
from . import extend  # noqa: F401
from .gradcheck import gradcheck
from .anomaly import detect_anomaly
from .checkpoint import checkpoint
from . import testing  # noqa: F401

_operators.install()


def __getattr__(name):
    if name in ("jit", "sensitivity"):  # loaded on first use (compiled mode: see _duals_numba.py)
        import importlib
        return importlib.import_module(f"duals.{name}")
    raise AttributeError(f"module 'duals' has no attribute {name!r}")


import sys as _sys  # noqa: E402
if "numba" in _sys.modules:  # a Numba user: load compiled mode now (Numba is already imported)
    import _duals_numba
    _duals_numba.init()

__all__ = ["Dual", "Var", "no_grad", "stop_gradient", "jvp", "vjp", "grad", "value_and_grad",
           "jacfwd", "jacrev", "jacobian", "hessian", "hvp", "value_grad_hessian", "clear_cache",
           "numpy", "special", "__version__", "gradcheck", "detect_anomaly", "checkpoint",
           "extend", "testing", "jit", "sensitivity", "tune_allocator", "release_buffers", "sparsity"]
