"""Input validation shared by the transformations, with messages that say what to do.

>>> check_float_dtype(1.0, "x") is None
True
"""
import numpy as np


def check_float_dtype(value, what):
    """check_float_dtype(value, what): raise TypeError unless ``value`` holds real floats (ints pass)."""
    kind = np.asarray(value).dtype.kind if not hasattr(value, "dtype") else np.dtype(value.dtype).kind
    if kind in "fiu":
        return
    if kind == "c":
        raise TypeError(f"{what} is complex; duals differentiates real-valued code only")
    if kind == "b":
        raise TypeError(f"{what} is boolean; booleans have no derivative. "
                        f"Pass it as a constant (tangent None / outside argnums)")
    raise TypeError(f"{what} has dtype {np.asarray(value).dtype}, which cannot be differentiated; "
                    f"pass a float array (for example np.asarray(x, dtype=float))")
