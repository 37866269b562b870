"""``np.linalg.svd(a, compute_uv=False)`` in @njit code: the singular values alone, of floats and dual arrays.

Numba's own ``np.linalg.svd`` has no ``compute_uv``. This overload adds it, so that code asking
for the singular values alone runs plain, under compiled forward mode and (through
:mod:`.adjoint_decompositions`) under compiled reverse mode:

* float (and complex) matrices: the values of ``np.linalg.svd(a, False)[1]``;
* dual arrays (compiled forward mode): those values, with ``ds_i = u_iᵀ dA v_i`` in LAPACK's
  basis for every lane, the NumPy path's policy for the singular values alone: differentiated
  everywhere, exact for functions symmetric in repeated values (their sum, norms), 0 at a zero
  singular value (the minimum-norm subgradient, as ``abs'(0) = 0``). Nested duals are refused as
  ``svd``'s other forms are.

``compute_uv=True`` (or not given) is the whole decomposition, as before; the flag must be a
constant, since it decides what is returned.

>>> import numba, numpy as np
>>> numba.njit(lambda a: np.linalg.svd(a, compute_uv=False))(np.diag([1.0, 3.0])).tolist()
[3.0, 1.0]
"""
import numpy as np
from numba.core import errors, types

from .._overloads import overload
from .adjoint_arrays import is_adjoint
from .decompositions import _checked, _eps
from .errors import MARK
from .parts import is_dual_array, join, lanes_right, split

__all__ = []


def _given(flag):
    """The value of ``compute_uv`` when the call gives it as a constant; None when not given;
    raises when it is not a constant."""
    if isinstance(flag, (bool, int, types.Omitted)):
        return None
    value = getattr(flag, "literal_value", None)
    if value is None:
        raise errors.TypingError(f"{MARK}np.linalg.svd: compute_uv must be a constant (True or "
                                 f"False), since it decides what is returned")
    return bool(value)


def _svd_typer(a, full_matrices=1, compute_uv=1):
    if not isinstance(a, types.Array) or a.ndim != 2 or is_adjoint(a):
        return None   # adjoints: adjoint_decompositions; other shapes: Numba's message
    uv = _given(compute_uv)
    if uv is None:
        return None   # not given: Numba's overload and compiled forward mode's
    if uv:
        return lambda a, full_matrices=1, compute_uv=1: np.linalg.svd(a, full_matrices)
    if isinstance(a.dtype, (types.Float, types.Complex)):
        return lambda a, full_matrices=1, compute_uv=1: np.linalg.svd(a, False)[1]
    if not is_dual_array(a):
        return None
    T = _checked("np.linalg.svd", a, square=False)
    eps = _eps(T)

    def values(a, full_matrices=1, compute_uv=1):
        ar, da = split(a, T)
        m, n = ar.shape
        u, s, vh = np.linalg.svd(ar, False)   # the plain call's values
        k = s.shape[0]
        tol = max(m, n) * eps * (s[0] if k else 0.0)
        weights = lanes_right(np.ascontiguousarray(u.T), da)   # (Uᵀ dA)[i, c, lane]
        ds = np.zeros((k, da.shape[2]), ar.dtype)
        for i in range(k):
            if s[i] > tol:
                for c in range(n):
                    ds[i] += weights[i, c] * vh[i, c]
        return join(s, ds, T)
    return values


overload(np.linalg.svd, target="cpu", prefer_literal=True)(_svd_typer)
