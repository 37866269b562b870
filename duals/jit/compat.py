"""The Numba versions compiled mode supports, and probes of the Numba internals it relies on.

Compiled mode extends Numba beyond its public extension API in a few places (the typing of
structured dtypes in ``_types``, the array-expression rewrite and the reductions in
``arrays``). :func:`check` runs before any of that is installed: on a Numba outside the tested
range, or one whose internals moved, compiled mode refuses with one clear message, and the
rest of duals keeps working.

>>> check() is None
True
"""
import numba

# the range tested (see the README's development section); the upper end is exclusive
SUPPORTED = ((0, 59), (0, 69))

# (module, attribute) pairs that compiled mode uses and public Numba does not promise
INTERNALS = (
    ("numba.core.typing.typeof", "typeof_impl"),
    ("numba.np.numpy_support", "as_dtype"),
    ("numba.np.arrayobj", "as_dtype"),
    ("numba.np.ufunc.array_exprs", "RewriteArrayExprs"),
    ("numba.np.arraymath", "array_sum"),
    ("numba.np.arraymath", "array_prod"),
    ("numba.np.arraymath", "array_mean"),
)


def version():
    """version() -> (major, minor) of the installed Numba."""
    parts = numba.__version__.split(".")
    return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def check():
    """check(): raise ImportError naming the problem if compiled mode cannot run on this Numba."""
    low, high = SUPPORTED
    found = version()
    if not low <= found < high:
        raise ImportError(
            f"duals' compiled mode supports Numba {low[0]}.{low[1]} up to (not including) "
            f"{high[0]}.{high[1]}; this is Numba {numba.__version__}. Install a supported Numba "
            f"(pip install 'numba>={low[0]}.{low[1]},<{high[0]}.{high[1]}') for @njit code; the "
            f"NumPy-path transformations work either way")
    import importlib
    missing = []
    for module, attribute in INTERNALS:
        try:
            if not hasattr(importlib.import_module(module), attribute):
                missing.append(f"{module}.{attribute}")
        except ImportError:
            missing.append(module)
    if missing:
        raise ImportError(f"duals' compiled mode needs Numba internals that this Numba "
                          f"{numba.__version__} lacks: {', '.join(missing)}; install a supported "
                          f"Numba ({low[0]}.{low[1]} to {high[0]}.{high[1] - 1})")
