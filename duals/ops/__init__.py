"""Primitive families. Each module declares primitives with their impl, JVP and VJP rules.

Public functions are registered with :func:`export` under their NumPy name
(``"linalg.solve"``, ``"special.erf"`` for submodules); ``duals.numpy`` and the
``__array_function__`` table are built from that one registry.
"""
import functools

import numpy as np

from ..core import STALE, Tracer

# below this many entries NumPy's calls through a primitive's rules cost as little as a generated
# reverse kernel, or a few microseconds more than a forward one, and nothing compiles
# (duals.ops.fused_vjp, duals.ops.dual_vjp, duals.ops.elementwise)
FUSED_FROM = 4096

NAMESPACE = {}


# the power of eps below which a relative gap between eigenvalues is a tie (repeated_gap)
REPEATED_GAP_POWER = 2.0 / 3.0


def repeated_gap(eps):
    """repeated_gap(eps) -> the relative gap (``eps^(2/3)``, 3.7e-11 in float64) under which two
    eigenvalues or singular values count as repeated for the rules that divide by their gap:
    eigenvectors, singular vectors and second derivatives of eigenvalues. An exact tie (an
    isotropic state, a symmetric structure) reaches them split by rounding, a few ``eps`` of the
    largest, and a result divided by a gap ``g`` is accurate to about ``eps / g`` relative:
    ``n · eps`` let a tie split by ``4 eps`` through with a Hessian 16 % off, and ``sqrt(eps)``
    refused a double well's ground state on a fine grid (the kinetic energy ``2/h²`` makes
    ``max|λ|`` large) whose derivative was good to 1e-7; from ``eps^(2/3)`` on the error stays
    below about ``1e-5``.

    >>> f"{repeated_gap(2.0 ** -52):.2g}"
    '3.7e-11'
    """
    return eps ** REPEATED_GAP_POWER

# names whose result is NumPy's plain answer for the values (indices, booleans, piecewise
# constants): no derivative, in every mode (the support table in the docs reads it)
VALUE_ONLY = set()


def export(*names, value_only=False):
    """export(*names, value_only=False): decorator registering a function in ``duals.numpy``
    under ``names`` (``value_only``: its result is plain, a query with no derivative)."""
    def register(func):
        for name in names or (func.__name__,):
            NAMESPACE[name] = func
            if value_only:
                VALUE_ONLY.add(name)
        return func
    return register


def list_as_array(x):
    """list_as_array(x) -> a Python list or tuple as an array, as NumPy reads it (of traced
    entries too: a traced array); anything else as it is."""
    if type(x) is list or type(x) is tuple:
        from .shape import array
        return array(x)
    return x


def lists_as_arrays(func):
    """Decorator: a Python list or tuple as the first argument becomes an array first
    (:func:`list_as_array`: ``dnp.sum([a, b])``), as NumPy's functions take it; the shape of a
    list is not read as 0-d (``axis=None`` would then reduce nothing)."""
    @functools.wraps(func)
    def taking(a, *args, **kwargs):
        return func(list_as_array(a), *args, **kwargs)
    return taking


def negative_into(x, out):
    """negative_into(x, out) -> ``out`` holding ``-x``: ``np.negative(x, out=out)``, but never into
    a non-contiguous ``out``. NumPy 2.4's SIMD loop for ``negative`` then reads an input whose
    stride is 8 elements (4 for 32-bit types) as if it were contiguous and writes wrong values
    (other ufuncs are not affected), so there the result is computed into a new array and copied.

    >>> a = np.arange(48.0).reshape(6, 8)
    >>> out = np.zeros((6, 3))
    >>> negative_into(a[:, 0], out[:, 1]).tolist()
    [-0.0, -8.0, -16.0, -24.0, -32.0, -40.0]
    """
    if out.flags.c_contiguous or out.flags.f_contiguous:
        return np.negative(x, out=out)
    out[...] = np.negative(x)
    return out


def every_entry(value, shape):
    """every_entry(value, shape) -> a read-only array of ``shape`` each of whose entries is the one
    number ``value`` (stride 0): what ``np.broadcast_to(value, shape)`` gives, made in a third of
    its time (it costs microseconds on the walk's path for a sum's cotangent).

    >>> every_entry(np.float64(2.0), (2, 3)).tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """
    one = np.array((value,))
    out = np.ndarray(shape, one.dtype, one, 0, (0,) * len(shape))
    out.flags.writeable = False
    return out


def one_number(t):
    """one_number(t) -> bool: whether ``t`` is a plain array of at least one axis each of whose
    entries is one number (all strides 0: a broadcast, what :func:`every_entry` makes).

    >>> one_number(every_entry(1.0, (3,))), one_number(np.ones(3))
    (True, False)
    """
    return type(t) is np.ndarray and t.ndim > 0 and t.size > 0 and not any(t.strides)


def flat_cotangent(g):
    """flat_cotangent(g) -> a 1-d float array for a generated kernel: ``g``'s entries in order, or
    the one number of a broadcast (a sum's cotangent, what :func:`every_entry` makes) as length 1.

    >>> flat_cotangent(every_entry(2.0, (2, 3))).tolist(), flat_cotangent(np.ones((2, 2))).shape
    ([2.0], (4,))
    """
    if g.flags.c_contiguous:
        return g.reshape(-1)
    if not any(g.strides):
        return np.array((g.flat[0],))
    return np.ascontiguousarray(g).reshape(-1)


def shape_of(x):
    """shape_of(x) -> tuple: the shape of a plain or traced value."""
    return x.shape if hasattr(x, "shape") else ()


def ndim_of(x):
    return len(shape_of(x))


def lead_of(t, x):
    """lead_of(t, x) -> int: how many lane axes a tangent or cotangent ``t`` carries in front of ``x``."""
    return ndim_of(t) - ndim_of(x)


def normalize_axis(axis, nd):
    """normalize_axis(axis, nd) -> tuple of non-negative axes (``None`` = all)."""
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -nd <= a < nd:
            raise np.exceptions.AxisError(f"axis {a} is out of bounds for an array of dimension {nd}")
        out.append(a % nd)
    return tuple(sorted(out))


def dtype_of(x):
    """dtype_of(x): the dtype of a plain or traced value (not a read of its value, which sparsity
    detection would count as a decision by value).

    >>> dtype_of(np.float32(1.0))
    dtype('float32')
    """
    return x.dtype if isinstance(x, Tracer) else np.result_type(x)


def is_complex(x):
    """is_complex(x) -> bool: whether a plain or traced value has a complex dtype.

    >>> is_complex(1j), is_complex(np.ones(2))
    (True, False)
    """
    t = type(x)
    while t in _BENEATH or (issubclass(t, Tracer) and _learn(t)):
        x = getattr(x, _BENEATH[t])   # the value under a traced layer (its layout, not a read)
        t = type(x)
    if t is np.ndarray:
        return x.dtype.kind == "c"
    if t is float or t is np.float64 or t is int:
        return False
    if t is complex or t is np.complex128:
        return True
    dtype = getattr(x, "dtype", None)
    return (dtype.kind if dtype is not None else np.result_type(x).kind) == "c"


_BENEATH = {}   # traced-value class -> the attribute holding the value one layer down


def _learn(cls):
    """Record where ``cls`` (a Tracer subclass) keeps its value: ``_val`` (sparsity detection's,
    whose ``primal`` would count as a read of the value), ``_value`` (the tape's) or ``primal``."""
    _BENEATH[cls] = next(name for name in ("_val", "_value", "primal") if hasattr(cls, name))
    return True


def innermost(x):
    """innermost(x): the plain value under any number of traced layers (for masks, dtypes, signs);
    a stale value (changed in place through another name, duals.core.Family) raises."""
    while isinstance(x, Tracer):
        if x._family is not None and x._family.changed:
            raise RuntimeError(STALE)
        x = x.primal if hasattr(x, "primal") else x._value
    return x


def all_of_copies(mask, out_shape, arg_shape):
    """all_of_copies(mask, out_shape, arg_shape): entries of an argument broadcast to ``out_shape``
    all of whose copies are marked in ``mask`` (a boolean array broadcastable to ``out_shape``).

    >>> all_of_copies(np.array([[True, False], [True, True]]), (2, 2), (2,)).tolist()
    [True, False]
    """
    mask = np.broadcast_to(mask, out_shape)
    if tuple(arg_shape) == tuple(out_shape):
        return mask
    extra = len(out_shape) - len(arg_shape)
    if extra:
        mask = np.logical_and.reduce(mask, axis=tuple(range(extra)))
    axes = tuple(k for k, n in enumerate(arg_shape) if n == 1 and mask.shape[k] != 1)
    return np.logical_and.reduce(mask, axis=axes, keepdims=True) if axes else mask
