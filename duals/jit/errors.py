"""Clear errors for compiled code that cannot be differentiated, instead of Numba's typing dumps.

* storing a dual into a float array that the code did not make itself (an argument) would
  drop the derivative: a typing error says so and names the fix (copy it, or differentiate
  it); arrays the code makes hold duals (:mod:`duals.jit.promotion`);
* a ``math.*`` or ``np.*`` function with no rule in :mod:`duals.derivatives` called on a
  dual: a typing error naming the function;
* a dual as a set element or dict key (``{x, y}``, ``d[x] = ...``): a typing error saying to
  key by the value.

Every message starts with ``duals.jit:``; :func:`reraise` turns Numba's ``TypingError``
that carries one into a short ``TypeError``.

>>> MARK
'duals.jit: '
"""
import math
import operator
import os
import re
import sys

import numba
import numpy as np
from numba.core import errors, types
from numba.extending import intrinsic, overload, overload_attribute, overload_method

from . import extras
from ._types import DualType
from .compat import typed_as_hashable
from .rules import spellings

MARK = "duals.jit: "


def _has_dual(t):
    return isinstance(t, DualType) or (isinstance(t, types.Array) and isinstance(t.dtype, DualType))


@overload(operator.setitem)
def _ov_setitem(arr, idx, val):
    if isinstance(arr, types.Array) and not isinstance(arr.dtype, DualType) and _has_dual(val):
        what = val.dtype if isinstance(val, types.Array) else val
        raise errors.TypingError(
            f"{MARK}cannot store a dual number ({what}) into an array of {arr.dtype} that the "
            f"function did not make itself (an argument, or from np.arange, np.linspace, "
            f"np.random, ...), so the derivative would be lost. Copy it first (x = x.copy() or "
            f"np.copy(x) holds duals), or differentiate that argument too (argnums).")


def _conversion_typer(label):
    def ov(x):
        if isinstance(x, DualType):
            raise errors.TypingError(
                f"{MARK}{label}() of a dual number would drop its derivative; use x.primal "
                f"if the value alone is meant, or keep computing with the dual")
    return ov


overload(float)(_conversion_typer("float"))
overload(int)(_conversion_typer("int"))


@overload_method(DualType, "__hash__")
def _dual_hash(x):
    raise errors.TypingError(
        f"{MARK}a dual number cannot be a set element or a dict key: equal values with different "
        f"derivatives would be one entry, and the derivative of the others would be lost. Key by "
        f"its value (x.primal) and keep the duals in a list or array")


typed_as_hashable(DualType)  # so a set or dict of duals reaches the message above


@intrinsic
def _dtype_of(typingctx, x):
    def codegen(context, builder, sig, args):
        return context.get_dummy_value()
    return types.DType(x)(x), codegen


@overload_attribute(DualType, "dtype")
def _dual_dtype_attr(x):
    return lambda x: _dtype_of(x)


def _no_rule_typer(label, arity):
    def check(args):
        if any(_has_dual(a) for a in args):
            raise errors.TypingError(
                f"{MARK}{label} has no derivative rule for dual numbers; add a line for it to "
                f"duals/derivatives.py (then it works in every mode), or write it with "
                f"functions that have one")
    if arity == 1:
        def ov(x):
            check((x,))
    elif arity == 2:
        def ov(x, y):
            check((x, y))
    else:
        def ov(x, y, z):
            check((x, y, z))
    return ov


def _install():
    covered = set()
    from .. import derivatives
    for name in list(derivatives.UNARY) + list(derivatives.BINARY):
        covered.update(id(f) for f in spellings(name))
    covered.update(id(getattr(math, n)) for n in ("isnan", "isinf", "isfinite"))
    covered.update(id(getattr(np, n)) for n in ("isnan", "isinf", "isfinite"))
    covered.update(id(f) for f in extras.VALUE_ONLY + extras.COMPOSED)
    for name in sorted(dir(math)):
        f = getattr(math, name)
        if callable(f) and id(f) not in covered and not name.startswith("_"):
            for arity in (1, 2):
                overload(f)(_no_rule_typer(f"math.{name}", arity))
    for name in sorted(dir(np)):
        f = getattr(np, name)
        if isinstance(f, np.ufunc) and id(f) not in covered and f.nin in (1, 2, 3):
            covered.add(id(f))
            overload(f)(_no_rule_typer(f"np.{name}", f.nin))


_install()

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PLACES = re.compile(r'File "([^"]+)", line (\d+):|^During: .* at (\S+) \((\d+)\)$', re.M)
_LIBRARIES = tuple(os.path.dirname(m.__file__) + os.sep for m in (numba, sys.modules["duals"]))


def _user_line(text):
    """(file, line) of the last place in Numba's error text outside Numba and duals (the user's
    code; the last place at all when none is), or None."""
    places = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _PLACES.finditer(text)]
    for path, line in reversed(places):
        if not os.path.realpath(path).startswith(_LIBRARIES):
            return path, line
    return places[-1] if places else None


def reraise(exc, who, name=None):
    """reraise(exc, who, name=None): Numba's compile error ``exc`` for the dual specialisation
    of ``name`` as a short TypeError: the duals.jit message it carries, or else the first
    line of Numba's own, with the user's line. Numba's full text stays on ``.numba_error``."""
    text = _ANSI.sub("", str(exc))
    where = _user_line(text)
    at = f" (in {where[0]}, line {where[1]})" if where else ""
    found = re.search(re.escape(MARK) + r"(.*?)(?:\n|$)", text)
    if found:
        message = found.group(1).strip()
    else:
        lines = [line.strip() for line in text.splitlines() if line.strip()
                 and not line.startswith(("Failed in", "During:", "File ", "^"))]
        first = lines[0] if lines else type(exc).__name__
        signature = next((line for line in lines[1:] if line.startswith(">>>")), None)
        if first.startswith("No implementation of function") and signature is not None:
            first = f"no implementation of {signature.lstrip('>').strip()}"
        message = (f"Numba could not compile {name or 'the function'} for dual numbers: "
                   f"{first[:300]}. If the plain call works, this construct is not supported "
                   f"on duals; see the compiled-mode guide for what is")
    error = TypeError(f"{who}: {message}{at}")
    error.numba_error = exc
    raise error from None
