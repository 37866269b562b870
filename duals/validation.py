"""Input validation shared by the transformations, with messages that say what to do.

>>> check_float_dtype(1.0, "x") is None
True
>>> check_numeric_dtype(1j, "z") is None
True
>>> check_float_output(2.5, "grad") is None
True
"""
import numpy as np


def _kind(value):
    return np.asarray(value).dtype.kind if not hasattr(value, "dtype") else np.dtype(value.dtype).kind


def check_numeric_dtype(value, what):
    """check_numeric_dtype(value, what): raise TypeError unless ``value`` holds real or complex
    floats (ints pass): what the transformations differentiate (see docs/complex.md)."""
    kind = _kind(value)
    if kind in "fiuc":
        return
    _refuse(kind, value, what)


def check_float_dtype(value, what):
    """check_float_dtype(value, what): raise TypeError unless ``value`` holds real floats (ints pass)."""
    kind = _kind(value)
    if kind in "fiu":
        return
    if kind == "c":
        raise TypeError(f"{what} is complex, but this function takes real values only; "
                        f"grad, jvp, vjp, jacfwd, jacrev and hessian differentiate complex code "
                        f"(docs/complex.md), or pass the real and imaginary parts as two real arrays")
    _refuse(kind, value, what)


def _refuse(kind, value, what):
    if kind == "b":
        raise TypeError(f"{what} is boolean; booleans have no derivative. "
                        f"Pass it as a constant (tangent None / outside argnums)")
    if not isinstance(value, (np.ndarray, np.generic, list, tuple, str, bytes)):
        raise TypeError(f"{what} (of type {type(value).__name__}) is not a number or an array of "
                        f"numbers, so it cannot be differentiated; leave it out of argnums (pass "
                        f"the numbers to differentiate as their own arguments)")
    raise TypeError(f"{what} has dtype {np.asarray(value).dtype}, which cannot be differentiated; "
                    f"pass a float array (for example np.asarray(x, dtype=float))")


def check_float_output(value, who):
    """check_float_output(value, who): a scalar loss must be a float; integers and booleans get a
    TypeError naming what was returned (their derivative is zero wherever it exists, and an
    integer loss is almost always a count, an index or a comparison returned by mistake)."""
    kind = _kind(value)
    if kind in "iub":
        got = "a boolean" if kind == "b" else f"an integer ({np.asarray(value).dtype})"
        raise TypeError(f"{who} requires a floating-point output, but the function returned {got}: "
                        f"its derivative is zero wherever it exists. Return the float it should "
                        f"compute; write float(y) if a zero gradient is what you want")


def check_real_output(value, who):
    """check_real_output(value, who): the scalar loss of ``grad`` (without ``holomorphic=True``)
    must be real: a TypeError saying what to take instead for a complex one."""
    if _kind(value) == "c":
        raise TypeError(f"{who} requires a real scalar output, got a complex one; for df/dz of a "
                        "holomorphic function pass holomorphic=True, else differentiate a real "
                        "number (np.abs(y) ** 2, np.real(y)) or use vjp")


def check_real_tangent(primal, tangent, what):
    """check_real_tangent(primal, tangent, what): a real value's tangent (or cotangent) must be
    real: it moves along the real line only (TypeError otherwise, naming ``what``)."""
    if _kind(tangent) == "c" and _kind(primal) != "c":
        raise TypeError(f"{what} is complex but its value is real; a real value moves along the "
                        f"real line only: pass a real one, "
                        f"or make the value complex (x.astype(complex))")
