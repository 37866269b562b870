"""Argument handling shared by every transformation: argnums, input coercion, outputs, aux,
and containers of parameters (pytrees).

The Python-path transformations (:mod:`duals.transforms`, :mod:`duals.second_order`) and the
compiled entry points (:mod:`duals.jit.api`) both read their arguments through this module, so
``argnums``, the accepted input types and the shape of results mean the same everywhere.

Containers follow JAX's conventions: a differentiated argument may be a nested tuple, list,
dict or namedtuple of arrays and floats; its gradient has the same structure, and the
Jacobian of a container output with respect to a container input is a nested container of
blocks ``out_leaf.shape + in_leaf.shape`` (the output's structure outside, the input's inside).
"""
import numpy as np

from . import tree
from .core import Tracer
from .validation import check_numeric_dtype


def argnums(argnums, nargs, who):
    """argnums(argnums, nargs, who) -> (indices as a tuple, whether a single int was given).

    >>> argnums(-1, 3, "grad")
    ((2,), True)
    """
    single = _is_index(argnums)
    if not single and not (isinstance(argnums, (tuple, list)) and all(_is_index(a) for a in argnums)):
        raise TypeError(f"{who}: argnums={argnums!r} ({type(argnums).__name__}) should be an int or "
                        f"a tuple of ints, the positions of the arguments to differentiate")
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{who}: argnums={argnums} refers to argument {a}, but the function "
                             f"was called with {nargs} positional arguments; argnums counts "
                             f"positional arguments only (as in JAX): pass an argument "
                             f"positionally to differentiate with respect to it")
    positions = tuple(a % nargs for a in nums)
    for k, a in enumerate(positions):
        if a in positions[:k]:
            raise ValueError(f"{who}: argnums={argnums} names argument {a} twice; name each "
                             f"argument once (the derivative with respect to it is the same)")
    return positions, single


def is_whole_number(a):
    """is_whole_number(a) -> whether ``a`` is an integer or boolean scalar or array (an index, a
    count, a mask): ``vjp`` holds such primals constant, as JAX does, with a zero cotangent.

    >>> is_whole_number(3), is_whole_number(np.arange(3)), is_whole_number(3.0)
    (True, True, False)
    """
    if isinstance(a, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(a, np.ndarray) and a.dtype.kind in "biu"


def zero_cotangent(a):
    """zero_cotangent(a) -> the cotangent of a primal ``vjp`` holds constant: ``0.0``, or float
    zeros of its shape.

    >>> zero_cotangent(3), zero_cotangent(np.arange(2))
    (0.0, array([0., 0.]))
    """
    return np.zeros(np.shape(a)) if np.ndim(a) else 0.0


def _is_index(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def as_input(x, who, what):
    """as_input(x, who, what): a differentiable input; floats kept (float32 stays), ints promoted.

    >>> float(as_input(3, "grad", "argument 0"))
    3.0
    """
    if isinstance(x, Tracer):
        return x
    if isinstance(x, (bool, np.bool_)):
        check_numeric_dtype(np.bool_(x), f"{who}: {what}")
    if isinstance(x, (tuple, list)) and x and all(isinstance(v, (float, int, np.floating, np.integer))
                                               and not isinstance(v, (bool, np.bool_)) for v in x):
        raise TypeError(f"{who}: {what} is a {type(x).__name__} of numbers; pass them as one float "
                        f"array (np.array(params)) and index it in the function (p[0], p[1] ...)")
    if isinstance(x, (tuple, list, dict)):
        raise TypeError(f"{who}: {what} is a {type(x).__name__}; containers of arrays are "
                        f"differentiated leaf by leaf by duals.grad, jacfwd, jacrev and hessian "
                        f"of Python functions; here pass the arrays as separate arguments")
    if isinstance(x, np.matrix):
        raise TypeError(f"{who}: {what} is a numpy.matrix, whose * and ** are matrix products; "
                        f"a traced value is an array, where they act entry by entry, so the "
                        f"function would change meaning. Pass np.asarray(m) and write @ and "
                        f"np.linalg.matrix_power where a matrix product is meant")
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{who}: {what} is a masked array (numpy.ma), whose mask a traced value "
                        f"cannot keep; pass x.filled(value) or x.compressed(), or the data and the "
                        f"mask as two arrays (np.where(mask, 0.0, x))")
    a = np.asarray(x)
    check_numeric_dtype(a if a.dtype.kind != "O" or a.ndim else x, f"{who}: {what}")
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    return a[()] if a.ndim == 0 else a


def output(x):
    """output(x): results are plain floats and ndarrays (a 0-d float64 result becomes a float).

    >>> output(np.array(2.0))
    2.0
    """
    if isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if type(x) is np.float64:
        return float(x)
    if type(x) is np.complex128:
        return complex(x)
    return x


def split_aux(result, who):
    """split_aux(result, who) -> (output, aux) of a function called with ``has_aux=True``."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"{who}(has_aux=True): the function must return a pair (output, aux)")
    return result[0], result[1]


_COMPILED_TYPES = set()


def is_compiled(f):
    """is_compiled(f) -> bool: whether ``f`` is a Numba dispatcher or a ``@vectorize`` /
    ``@guvectorize`` function (compiled mode handles those)."""
    cls = type(f)
    if cls in _COMPILED_TYPES:
        return True
    if cls.__module__.startswith("numba") and (
            hasattr(f, "py_func") or (cls.__module__.startswith("numba.np.ufunc") and hasattr(f, "_dispatcher"))):
        _COMPILED_TYPES.add(cls)
        return True
    return False


def in_dtype(result, like):
    """in_dtype(result, like): a derivative in the float dtype of the input it belongs to
    (float32 in, float32 out, as in JAX), whatever precision the function computed in; a complex
    input's derivative is complex even where only real numbers flowed back to it."""
    dtype = getattr(like, "dtype", None)
    if dtype is None or dtype == np.float64 or isinstance(result, Tracer):
        return result
    if dtype.kind == "c":
        if np.result_type(result) == dtype:
            return result
    elif dtype.kind != "f" or np.result_type(result).kind != "f":
        return result
    return np.asarray(result, dtype=dtype)[()] if np.ndim(result) == 0 else result.astype(dtype, copy=False)


class Containers:
    """The differentiated arguments that are containers, flattened to leaves and rebuilt.

    ``flat_args`` holds the call's arguments with each selected container replaced by its
    leaves; ``argnums`` the positions of the leaves; ``rebuild(flat)`` the original arguments;
    ``group(per_leaf)`` turns one result per leaf back into one per selected argument.
    """

    def __init__(self, args, nums, single):
        self.nums, self.single = nums, single
        self.flat_args, self.layout = [], []
        leaves_of = {}   # selected position -> (its leaves' positions in flat_args, treedef)
        for j, a in enumerate(args):
            if j in nums:
                leaves, treedef = tree.flatten(a)
                if not leaves:
                    raise ValueError(f"argument {j} is an empty container: there is nothing to "
                                     f"differentiate")
                leaves_of[j] = (range(len(self.flat_args), len(self.flat_args) + len(leaves)), treedef)
                self.layout.append((j, treedef, len(leaves)))
                self.flat_args.extend(leaves)
            else:
                self.layout.append((j, False, 1))
                self.flat_args.append(a)
        # results come in the order of argnums (``argnums=(2, 0)``: argument 2's first), as JAX's
        self.argnums = tuple(k for j in nums for k in leaves_of[j][0])
        self.groups = [(leaves_of[j][1], len(leaves_of[j][0])) for j in nums]

    @staticmethod
    def present(args, nums):
        """Whether any selected argument is a container (else the plain path runs)."""
        return any(isinstance(args[i], (tuple, list, dict)) for i in nums)

    def rebuild(self, flat):
        args, k = [], 0
        for j, treedef, n in self.layout:
            args.append(flat[k] if treedef is False else tree.unflatten(treedef, flat[k:k + n]))
            k += n
        return args

    def group(self, per_leaf):
        """One result per leaf (in the order of ``self.argnums``) -> one per selected argument."""
        groups, k = [], 0
        for treedef, n in self.groups:
            groups.append(tree.unflatten(treedef, per_leaf[k:k + n]))
            k += n
        return groups[0] if self.single else tuple(groups)


# ---------------------------------------------------------------- how many lanes per pass

LANE_BUDGET = 1 << 23  # NumPy path: tangent entries per intermediate, about 64 MB of float64
COMPILED_LANES = 16    # compiled jacfwd: lanes per call (one specialisation; lanes fit registers)
COMPILED_HESSIAN_LANES = 8  # compiled hessian: lanes per level (a pass carries their product)


def chunk_lanes(chunk_size, total, who, size=1, most=None):
    """chunk_lanes(chunk_size, total, who, size=1, most=None) -> lanes per pass of a Jacobian.

    ``chunk_size`` when given (a positive integer, else ValueError), never more than
    ``total``; by default as many as keep an intermediate of ``size`` elements per lane within
    :data:`LANE_BUDGET`, and at most ``most`` (the compiled entry points pass theirs).

    >>> chunk_lanes(None, 1000, "jacfwd", size=10 ** 6), chunk_lanes(None, 40, "jacfwd", most=16)
    (8, 16)
    """
    if chunk_size is not None:
        if isinstance(chunk_size, bool) or int(chunk_size) != chunk_size or chunk_size < 1:
            raise ValueError(f"{who}: chunk_size must be a positive integer, got {chunk_size!r}")
        return min(int(chunk_size), max(total, 1))
    lanes = max(1, min(total, LANE_BUDGET // max(1, size)))
    return lanes if most is None else min(lanes, most)
