"""``np.emath`` (``numpy.lib.scimath``): functions whose result turns complex where the real one
is undefined.

NumPy decides from the values: ``np.emath.sqrt(x)`` is ``np.sqrt(x)`` when no entry of a real
``x`` is negative, and ``np.sqrt`` of ``x`` converted to complex otherwise (``log``, ``log2``,
``log10``, ``logn`` likewise; ``arccos``, ``arcsin``, ``arctanh`` where an entry exceeds 1 in
magnitude; ``power`` also makes a negative integer exponent a float). The traced versions decide
the same way from the values under the trace and call the real or complex rule, so the value's
dtype is NumPy's and the derivative is that of the branch NumPy takes.

>>> import duals
>>> duals.jacfwd(lambda x: np.emath.sqrt(x).imag)(np.array([-4.0])).tolist()
[[-0.25]]
"""
import numpy as np

from . import NAMESPACE, dtype_of, export, innermost


def _real_and(x, test):
    """Whether ``x`` is real and ``test`` holds for one of its entries (NumPy's condition)."""
    values = np.asarray(innermost(x))
    return values.dtype.kind in "biuf" and bool(np.any(test(values)))


def _complex(x):
    """``x`` as complex: complex64 from float32 (NumPy's rule), complex128 from anything else."""
    kind = np.complex64 if dtype_of(x) == np.float32 else np.complex128
    return x + np.zeros((), kind)


def _negative_to_complex(x):
    return _complex(x) if _real_and(x, lambda v: v < 0) else x


def _beyond_one_to_complex(x):
    return _complex(x) if _real_and(x, lambda v: np.abs(v) > 1) else x


def _on(fix, name):
    def scimath(x):
        return NAMESPACE[name](fix(x))    # duals.numpy's function of that name
    return scimath


for _name, _fix in (("sqrt", _negative_to_complex), ("log", _negative_to_complex),
                    ("log2", _negative_to_complex), ("log10", _negative_to_complex),
                    ("arccos", _beyond_one_to_complex), ("arcsin", _beyond_one_to_complex),
                    ("arctanh", _beyond_one_to_complex)):
    _scimath = _on(_fix, _name)
    _scimath.__name__ = _scimath.__qualname__ = _name
    _scimath.__doc__ = (f"emath.{_name}(x): ``np.{_name}`` of ``x``, converted to complex first where NumPy "
                        f"converts it.")
    export(f"emath.{_name}")(_scimath)


@export("emath.logn")
def logn(n, x):
    """emath.logn(n, x): the logarithm of ``x`` to the base ``n``, complex where NumPy's is.

    >>> float(logn(2.0, np.float64(8.0)))
    3.0
    """
    log = NAMESPACE["log"]
    return NAMESPACE["divide"](log(_negative_to_complex(x)), log(_negative_to_complex(n)))


@export("emath.power")
def power(x, p):
    """emath.power(x, p): ``x ** p``, complex for a negative ``x``; a negative integer ``p`` as a float.

    >>> complex(np.round(power(np.float64(-4.0), 0.5), 12))
    2j
    """
    if _real_and(p, lambda v: v < 0) and np.asarray(innermost(p)).dtype.kind in "biu":
        p = p * 1.0
    return NAMESPACE["power"](_negative_to_complex(x), p)
