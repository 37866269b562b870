"""Clear errors for compiled code that cannot be differentiated, instead of Numba's typing dumps.

* storing a dual into a float array that holds plain numbers (an argument) would
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
from numba.extending import intrinsic

from .._overloads import overload, overload_attribute, overload_method
from .._refusals import RANDOM_PARAMETERS
from ..kernels import cache_dir
from ..ops.elementwise import stop_gradient
from . import extras, gamma
from ._types import DualType
from .complex_types import ComplexDualType
from .compat import typed_as_hashable
from .rules import numba_math, spellings

MARK = "duals.jit: "


def _has_dual(t):
    return isinstance(t, DualType) or (isinstance(t, types.Array) and isinstance(t.dtype, DualType))


@overload(operator.setitem)
def _ov_setitem(arr, idx, val):
    if isinstance(arr, types.Array) and not isinstance(arr.dtype, DualType) and _has_dual(val):
        what = val.dtype if isinstance(val, types.Array) else val
        raise errors.TypingError(
            f"{MARK}cannot store a dual number ({what}) into an array of {arr.dtype} that holds "
            f"plain numbers (an argument, an array from np.arange, np.linspace, np.random, ..., "
            f"or a buffer made inside a jitclass method: those are not turned into arrays of "
            f"duals), so the derivative would be lost. Copy an argument first (x = x.copy() or "
            f"np.copy(x) holds duals), or differentiate it too (argnums); make a buffer with "
            f"the dtype of a differentiated input: np.zeros(n, x.dtype) for an array x, "
            f"np.zeros(n, np.asarray(t).dtype) for a number t.")


VALUE_ALONE = ("duals.stop_gradient(x) where the value alone is meant (the plain call runs it "
               "too, as the identity)")


@overload(float)
def _ov_float(x):
    """float() of a dual of float64 is the dual itself: on a float, float() is the identity, so
    its derivative is 1 (``return float(total)``, ``a = float(p[0])`` keep their derivatives)."""
    if isinstance(x, DualType):
        if x.float == types.float64:
            return lambda x: x
        if isinstance(x.float, types.Complex):
            raise errors.TypingError(f"{MARK}float() of a complex dual number would drop its "
                                     f"imaginary part; take x.real or abs(x) explicitly")
        raise errors.TypingError(
            f"{MARK}float() of a dual number of {x.float} would change its precision; leave "
            f"float() out, or differentiate at float64")


@overload(int)
def _ov_int(x):
    """int() of a dual truncates its value: a step function, whose derivative is 0 wherever it
    has one (as ``math.floor``'s), so ``n = int(T / dt)`` works with ``dt`` differentiated."""
    if isinstance(x, DualType):
        return lambda x: int(extras._real(x))


@overload(stop_gradient)
def _ov_stop_gradient(x):
    """duals.stop_gradient inside compiled code: the value alone (a float, or an array of floats)
    of a dual, and a float or float array unchanged, so the plain call runs it too."""
    if isinstance(x, DualType):
        return lambda x: extras._real(x)
    if isinstance(x, types.Array) and isinstance(x.dtype, DualType):
        def impl(x):
            out = np.empty(x.shape, np.float64)
            for index in np.ndindex(x.shape):   # (any layout: a transposed or sliced view too)
                out[index] = extras._real(x[index])
            return out
        return impl
    if isinstance(x, (types.Number, types.Array)):
        return lambda x: x


@overload_method(DualType, "__hash__")
def _dual_hash(x):
    raise errors.TypingError(
        f"{MARK}a dual number cannot be a set element or a dict key: equal values with different "
        f"derivatives would be one entry, and the derivative of the others would be lost. Key by "
        f"its value, duals.stop_gradient(x) (the plain call runs it too), and keep the duals in a "
        f"list or array")


typed_as_hashable(DualType)  # so a set or dict of duals reaches the message above


@intrinsic
def _dtype_of(typingctx, x):
    def codegen(context, builder, sig, args):
        return context.get_dummy_value()
    return types.DType(x)(x), codegen


@overload_attribute(DualType, "dtype")
def _dual_dtype_attr(x):
    return lambda x: _dtype_of(x)


# functions without a compiled rule whose rewrite with functions that have one is a line
_REWRITES = {"np.logaddexp2": "np.logaddexp(x * LN2, y * LN2) / LN2 with LN2 = math.log(2.0)"}


def _no_rule_typer(label, arity):
    way_out = (f"write {_REWRITES[label]}" if label in _REWRITES else
               "write it with functions that have one (np.where, np.maximum, ...; docs/supported.md lists them)")

    def check(args):
        if any(_has_dual(a) for a in args):
            raise errors.TypingError(f"{MARK}{label} has no derivative rule for dual numbers; {way_out}")
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
    covered.update(id(f) for f in extras.VALUE_ONLY + extras.COMPOSED + gamma.FUNCTIONS)
    known = numba_math()   # a function Numba lacks even for floats (math.remainder) keeps its error
    for name in sorted(dir(math)):
        f = getattr(math, name)
        if (callable(f) and id(f) not in covered and not name.startswith("_")
                and (known is None or id(f) in known)):
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
    """(file, line) of the innermost place in Numba's error text in the user's code (not Numba's,
    nor duals' own or generated code): Numba names the failing line first and its callers after
    it. The last place at all when none is the user's; None when there is none."""
    places = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _PLACES.finditer(text)]
    ours = _LIBRARIES + (os.path.realpath(cache_dir()) + os.sep,)
    for path, line in places:
        if not path.startswith("<string>") and not os.path.realpath(path).startswith(ours):
            return path, line
    return places[-1] if places else None


# what a failure on a dual usually means, by the function Numba could not type
_HINTS = {
    "range": "A differentiated value reached range(): a loop count is an integer; {leave_out} "
             "(an integer argument is differentiated as a float)",
    ".astype": "Arrays of duals take astype to their own float type (a copy) and to integer "
               "or boolean types (the values: derivative 0); other casts are not supported, "
               "leave them out (x.copy() copies the duals)",
}


# a dual's or an adjoint's type name, nested ones included (Dual2[Dual1[float64, 1 lanes], 1 lanes])
_DUAL_TYPE = r"(?:Dual|Adjoint)\d*\[(?:[^\[\]]|\[(?:[^\[\]]|\[[^\[\]]*\])*\])*\]"


def _stored_or_drawn(text, first, hint):
    """(first line, hint) for a dual stored where the code fixed a float type (a typed container's
    elements, a jitclass field) or given as a parameter of np.random; unchanged otherwise."""
    if re.search(r"(?:ListType|DictType)\[[^\n]*(?:Dual|Adjoint)\d*\[", text):
        return ("a dual stored into a typed container declared with float elements",
                "Create the container untyped (typed.List(), [] or {}), so that its element type "
                "follows the values stored")
    cast = re.match(r"Cannot cast (" + _DUAL_TYPE + r") to (\w+)", first)
    if cast is not None:
        return (f"a dual ({cast.group(1)}) stored where the code fixes the type {cast.group(2)}",
                "A jitclass field, record or typed container declared float cannot hold a dual: "
                "keep the differentiated values in arrays or local variables (pass the "
                "parameters to the function as arguments)")
    if (first.startswith("no implementation of setitem(array(Adjoint") and "float32" in first
            and "float64" in first):
        return ("a value recorded in float64 stored into a float32 buffer (compiled reverse mode)",
                "Compiled reverse mode cannot narrow a recorded value into a float32 buffer. The "
                "value is float64 where an input is, and where the code computes in float64 from "
                "float32 inputs (a float literal such as an accumulator r2 = 0.0, a float64 array "
                "or constant it reads): make the buffer float64 (np.empty(n)), or the whole "
                "computation float32 (float32 inputs, r2 = np.float32(0.0)), or differentiate "
                "with duals.jacfwd, whose duals convert on store as floats do")
    ufunc = re.match(r"no implementation of (\w+)\(array\(", first)
    if ufunc is not None and first.count("array(") >= 2 and getattr(getattr(np, ufunc.group(1), None), "nin", 0) == 1:
        name = ufunc.group(1)
        return (first, f"np.{name}(x, out) writes into out, which NumPy's functions on duals do not "
                       f"do; write out[:] = np.{name}(x), or out = np.{name}(x)")
    if re.match(r"no implementation of (?:heappush|heapreplace|heappushpop|setitem|append|insert)"
                r"\(list\((?:float|Tuple\(float)[^\n]*(?:Dual|Adjoint)\d*\[", first):
        return ("a dual stored into a list made of plain numbers",
                "Numba fixes a list's element type where the list is made ([0.0] * n, [(0.0, i)]): "
                "make it from a differentiated value ([x[0]] * n, heap = [(T[i0], i0)]) or use an "
                "array (np.zeros(n) holds duals); where the value only orders the entries (a heap's "
                "key), store duals.stop_gradient(t)")
    drawn = re.match(r"no implementation of (normal|uniform|lognormal|exponential|gamma|beta)\(.*(?:Dual|Adjoint)", first)
    if drawn is not None:
        return first, RANDOM_PARAMETERS
    return first, hint


def _scalar_given_to_array_code(first):
    """Whether Numba's first line says that a NumPy array function (not a ufunc) or an array
    attribute got a scalar dual, not an array of them."""
    call = re.match(r"no implementation of (\w+)\((?:[^()]*, )?(?:Dual|Adjoint)\d*\[", first)
    if call is not None:
        found = getattr(np, call.group(1), None)
        return callable(found) and not isinstance(found, np.ufunc)
    attribute = re.match(r"Unknown attribute '(\w+)' of type (?:Dual|Adjoint)\d*\[", first)
    return attribute is not None and hasattr(np.ndarray, attribute.group(1))


def _plain_value(a):
    """The plain value under a dual or adjoint argument (its primal, at every level; of a
    C-contiguous array of duals, C-contiguous as the user's array was, not the field's strided
    view, whose layout makes Numba warn that '@' is faster on contiguous arrays)."""
    field = False
    while isinstance(a, (np.ndarray, np.void)) and a.dtype.names and "primal" in a.dtype.names:
        field, contiguous = True, isinstance(a, np.ndarray) and a.flags.c_contiguous
        a = a["primal"]
    return a.copy() if field and contiguous else a   # (a copy is C-contiguous, 0-d ones too)


def whole_numbers(args):
    """The positions of ``args`` whose plain value is a whole number or an array of them (a step
    count or an index array that became float when it was differentiated)."""
    found = []
    for i, a in enumerate(args):
        v = _plain_value(a)
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            found.append(i)
        elif isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size \
                and np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            found.append(i)
    return tuple(found)


def needed_integers(f, args):
    """The fewest positions of ``args`` holding whole numbers (:func:`whole_numbers`) that must be
    integers for ``f`` to compile for plain values, or () when no such choice compiles. Only asked
    once compiling has failed: every try compiles a private copy of ``f``."""
    candidates = whole_numbers(args)
    if not candidates or plain_failure(f, args, candidates) is not None:
        return ()
    needed = list(candidates)
    for p in candidates:
        rest = [q for q in needed if q != p]
        if rest and plain_failure(f, args, rest) is None:
            needed = rest
    return tuple(needed)


def _as_integers(a):
    """The Numba type of ``a``'s plain value with int64 in place of its floats."""
    v = _plain_value(a)
    return types.Array(types.int64, v.ndim, "A") if isinstance(v, np.ndarray) else types.int64


def plain_failure(f, args, integers=()):
    """Numba's error when dispatcher ``f`` does not compile for the plain values of ``args``
    either (a bug of the function's own; the positions ``integers`` as int64), else None. A
    private copy compiles: ``f`` keeps its specialisations."""
    try:
        options = {k: v for k, v in f.targetoptions.items() if k not in ("cache", "nopython")}
        copy = numba.njit(**options)(f.py_func)
        plain = [_as_integers(a) if i in integers else numba.typeof(_plain_value(a)) for i, a in enumerate(args)]
        copy.get_call_template(plain, {})  # compiles, defaults folded
    except errors.NumbaError as exc:
        return exc
    except Exception:   # an argument Numba cannot type, or not a plain dispatcher: no verdict
        return None
    return None


def message_lines(text):
    """The lines of Numba's error ``text`` that say something, colour codes gone: not the
    pipeline's banner, the ``During:`` trail, file names or carets."""
    return [line.strip() for line in _ANSI.sub("", text).splitlines() if line.strip()
            and not line.startswith(("Failed in", "During:", "File ", "^", "- Resolution failure for"))]


def reraise(exc, who, name=None, plain_too=False):
    """reraise(exc, who, name=None, plain_too=False): Numba's compile error ``exc`` for the dual
    specialisation of ``name`` as a short TypeError: the duals.jit message it carries, or else the
    first line of Numba's own, with the user's line. ``plain_too``: ``exc`` came from compiling
    for plain numbers, so the function itself is at fault. Numba's full text stays on ``.numba_error``."""
    text = _ANSI.sub("", str(exc))
    where = _user_line(text)
    at = f" (in {where[0]}, line {where[1]})" if where else ""
    found = re.search(re.escape(MARK) + r"(.*?)(?:\n|$)", text)
    product = re.search(r"'(@)' arguments must all have the same dtype", text)
    if product is not None and "ComplexDual" in text:   # Numba's own @ took the call (its dtypes differ)
        message = ComplexDualType.lanes_refusal.format(name="A @ B")[len(MARK):]
    elif found:
        message = found.group(1).strip()
    else:
        lines = message_lines(text)
        first = lines[0] if lines else type(exc).__name__
        signature = next((line for line in lines[1:] if line.startswith(">>>")), None)
        if first.startswith("No implementation of function") and signature is not None:
            first = f"no implementation of {signature.lstrip('>').strip()}"
        hint = _HINTS.get(re.sub(r"^no implementation of (\w+)\(.*", r"\1", first))
        if hint is not None:   # jvp has no argnums: a constant argument has the tangent None
            hint = hint.format(leave_out="give that argument the tangent None" if who == "jvp"
                               else "leave that argument out of argnums")
        cast = re.search(r"resolving callee type: class\((float\d+|int\d+)\)", text)
        if cast is not None and re.search(r"<unknown function>\((?:Dual|Adjoint)", first):
            first = f"np.{cast.group(1)}(x) of a dual number"
            hint = ("Write int(x), which truncates a dual (a step function: derivative 0)"
                    if cast.group(1).startswith("int") else
                    f"Write float(x), which keeps the derivative (the dual itself), or leave "
                    f"the cast out; write {VALUE_ALONE}")
        rebound = re.search(r"Cannot unify array\((?:float|complex)\d+, .*? and "
                            r"array\((?:Dual|Adjoint)", first)
        if rebound is not None:   # a plain array variable later bound to duals (u = f(u) in a loop)
            first = re.sub(r", defined at .*", "", first)
            from_number = ("the array is computed from a number that starts plain and is updated "
                           "from differentiated values in a loop (V = 0.5, then V -= f / df): start "
                           "that number as one, V = 0.5 + 0.0 * z[0] with z a differentiated argument")
            if re.search(r"for '\$", first):   # an expression's temporary, not a variable
                hint = f"An array expression changes type between loop iterations: {from_number}"
            else:
                hint = ("A variable holds a plain array and later one that carries derivatives (x = "
                        "<expression>, then x = step(x) in a loop). Make its first value with a "
                        "constructor compiled mode promotes to hold derivatives: np.empty / np.zeros "
                        "/ np.copy, or .copy() of the expression (x = (np.sin(t) + 1.0).copy()); or "
                        f"{from_number}")
        if hint is None and _scalar_given_to_array_code(first):
            hint = ("An array operation got a single dual number. If that value is a 0-d array "
                    "argument (np.array(2.0)): compiled derivatives pass a differentiated 0-d array "
                    "as a number, so pass a 1-element array (x.reshape(1)) instead")
        first, hint = _stored_or_drawn(text, first, hint)
        method = re.search(r"BoundFunction\(array\.(\w+) for array\((?:Dual|Adjoint)", text)
        inside = re.search(r"Overload in function 'np_(\w+)'", text)
        if method is not None and inside is not None:   # the call is in Numba's own np.<name>
            first = f"Numba's np.{inside.group(1)} calls x.{method.group(1)}() on the array of duals"
            hint = "Write it with functions that take duals (np.argsort, np.partition ...; docs/supported.md)"
        elif method is not None:
            first = f"x.{method.group(1)}() on an array of duals"
            hint = _HINTS.get("." + method.group(1))
        plain_hint = ""   # (the dual hints above do not apply to a plain call's failure)
        axis_method = re.search(r"BoundFunction\(\(<class 'numba\.core\.types\.npytypes\.Array'>, "
                                r"'(min|max|mean|prod)'\)", text)
        if axis_method is not None and "unexpected keyword argument 'axis'" in text:
            reduction = axis_method.group(1)
            first = f"x.{reduction}(axis=...): Numba's array method {reduction} takes no axis"
            hint = (f"Write np.{reduction}(x, axis=k), which compiled code takes for float and dual "
                    f"arrays alike (the method form fails in the plain call too)")
            plain_hint = f". {hint}"
        if plain_too:
            message = (f"Numba cannot compile {name or 'the function'} even for plain numbers, so "
                       f"the error is in the function, not in its derivative: {first[:300]}{plain_hint}")
        else:
            values = "the adjoints of compiled reverse mode" if "Adjoint" in text else "dual numbers"
            message = (f"Numba could not compile {name or 'the function'} for {values}: "
                       f"{first[:300]}. " + (hint or "If the plain call works, this construct is "
                                             "not supported on duals; see the compiled-mode guide "
                                             "for what is"))
    error = TypeError(f"{who}: {message}{at}")
    error.numba_error = exc
    raise error from None
