"""Python operators, array methods and the NumPy protocols for every traced value.

Defined once on :class:`~duals.core.Tracer`, so ``Dual`` and ``Var`` behave alike: an
operator calls the ``duals.numpy`` function of the same meaning, a comparison compares
primal values, and ``np.sin(x)`` or ``np.sum(x)`` reach the library through
``__array_ufunc__`` / ``__array_function__``.

Methods that would leave the array world keep the derivative instead of dropping it:
``x.item()`` is the entry as a traced 0-d value and ``x.tolist()`` nested lists of them (so
``if x.item() > tol`` and ``sum(x.tolist())`` work and differentiate); only a real conversion to a
Python number (``float(x)``, ``math.exp(x)``) is refused, with the error that says why. Value-only
methods (``argmax``, ``argsort``, ``any``, ``nonzero``, ``round``, ...) and ``int(x)`` (a step
function: derivative 0) return plain results, ``f"{x:.3f}"``
formats the value, ``x.real``, ``x.imag`` and ``x.conj()`` are ``np.real(x)``, ... (docs/complex.md) and ``x.sort()``, which would
sort in place, raises: write ``x = np.sort(x)``.
"""
import os

import numpy as np

from .core import Tracer, changed_in_place
from .ops import NAMESPACE as N
from .ops import VALUE_ONLY, innermost
from .ops.shape import getitem


_primal = innermost


def _layout(x):
    """The plain value under traced layers, for its shape and dtype only: unlike ``innermost`` this
    is not a read of the value (sparsity detection counts those, see duals.dependencies)."""
    while isinstance(x, Tracer):
        inner = getattr(x, "_val", _layout)
        x = inner if inner is not _layout else x.primal if hasattr(x, "primal") else x._value
    return x


def _binary(name, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = N["array"](other)
        out = N[name](other, self) if reflected else N[name](self, other)
        if out is self or out is other or (isinstance(out, Tracer) and out._family is not None):
            return _new_array(out, (self, other))
        return out
    method.__name__ = name
    return method


def _new_array(result, inputs):
    """``result``, or a copy where a shortcut returned one of the traced ``inputs`` itself, or a
    view of it (``a ** 1``, ``np.tile(a, 1)`` made by a reshape): NumPy's result is a new array
    there, and changing it in place must not make ``a`` stale (duals.core.Family)."""
    if isinstance(result, Tracer):
        family = result._family
        for i in inputs:
            if isinstance(i, Tracer) and (result is i or (family is not None and i._family is family)):
                return N["copy"](result)
    return result


# NumPy functions whose result may be their argument's memory (a view, or the argument itself)
VIEWS = frozenset(("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
                   "atleast_1d", "atleast_2d", "atleast_3d", "asarray", "asanyarray", "ascontiguousarray",
                   "asfortranarray", "real", "imag", "diagonal", "broadcast_to", "flip", "fliplr", "flipud",
                   "rot90", "matrix_transpose", "permute_dims", "diff", "einsum", "squeeze",
                   "sliding_window_view"))


def _compare(op):
    def method(self, other):
        return op(_primal(self), _primal(other))
    return method


def _no_float(self):
    if getattr(self._trace, "imperative", False):
        raise TypeError(
            "float() of a Var would drop its derivative from the tape. To log or print it take "
            "v.item() (a Python number, detached, as PyTorch's) or v.value (its NumPy value); in "
            "a computation keep the Var (np.* functions instead of math.*)")
    if getattr(self, "_outlives_transformations", None) is not None and self._outlives_transformations():
        raise TypeError(
            "float() of a duals.Dual would drop its derivative: take d.primal (its value) or "
            "d.tangent. A Dual held in a global variable of @numba.njit code cannot be frozen into "
            "the compiled code as a constant: pass it to the function as an argument")
    inside = _numpy_caller()
    if inside is not None:
        raise TypeError(_undispatched(inside, "turns it into a Python number"))
    import sys
    library, frame, _ = _library_caller(sys._getframe(1), ("scipy",))
    if library is not None and library.startswith("scipy.optimize"):
        raise TypeError(_solver_refused(library))
    if library is None and _stores_an_item(_source_line(frame)):   # (a complex buffer asks for a number)
        raise TypeError(STORED_INTO_PLAIN)
    raise TypeError(
        "converting a traced value to a Python number would drop its derivative. Keep it "
        f"as an array ({_instead_of_math(sys._getframe(1))}), or take duals.stop_gradient(x) "
        "explicitly; inside @numba.njit code use duals.jacfwd on the compiled function")


# math functions the derivative table does not name (its own are in _vocabulary.MATH_SPELLINGS)
_MATH_SPELLED = {"lgamma": "scipy.special.gammaln", "gamma": "scipy.special.gamma", "pow": "np.power",
                 "fabs": "np.abs", "fsum": "np.sum", "prod": "np.prod", "dist": "np.linalg.norm(p - q)"}


def _array_spelling(name):
    """The array function for ``math.<name>``: the table's word for it (np.arcsin for math.asin,
    scipy.special.erf for math.erf), else the list above, else np.<name>; None if there is none."""
    from ._vocabulary import MATH_SPELLINGS
    word = next((w for w, fn in MATH_SPELLINGS.items() if fn.__name__ == name), None)
    if word is not None:
        return f"np.{word}" if isinstance(getattr(np, word, None), np.ufunc) else f"scipy.special.{word}"
    return _MATH_SPELLED.get(name) or (f"np.{name}" if isinstance(getattr(np, name, None), np.ufunc) else None)


def _source_line(frame):
    import linecache
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno) if frame is not None else ""


def _instead_of_math(frame):
    """What to write instead of the ``math.<name>(`` call on the caller's line (math.lgamma has no
    np.lgamma), or the general advice when the line has none."""
    import re
    names = re.findall(r"\bmath\.(\w+)\s*\(", _source_line(frame))
    if len(names) == 1:
        name = names[0]
        spelled = _array_spelling(name)
        if spelled is not None:
            return f"math.{name} takes Python numbers only: write {spelled}, which keeps derivatives"
    return "use np.* functions (or scipy.special's) instead of math.*"


def _undispatched(caller, what):
    """The refusal for a traced value that NumPy's ``caller`` got through an argument it does not
    hand to duals (np.interp's left=, np.unwrap's period=: only array arguments dispatch)."""
    import duals.numpy as dnp
    way_out = (f"write dnp.{caller}(...) (import duals.numpy as dnp), which takes it" if
               callable(getattr(dnp, caller, None)) else f"pass it as a plain value ({_PLAIN_HINT[5:]})")
    return (f"numpy.{caller} got a traced value through an argument that NumPy does not hand to "
            f"duals (only the array arguments are), and {what}, which would drop its derivative; "
            f"{way_out}")


def _round(self, ndigits=None):
    """round(x[, ndigits]): the rounded plain value (a step function: derivative 0), as NumPy's."""
    value = np.asarray(_primal(self))
    return round(value[()], ndigits) if value.ndim == 0 else np.round(value, ndigits or 0)


def _int(self):
    """int(x) truncates the value: a step function, whose derivative is 0 wherever it has one
    (as ``floor``'s), so ``n = int(T / dt)`` works with ``dt`` traced."""
    return int(_primal(self))


def _no_index(self):
    """range(x), a list index, a repeat count: whole numbers that a derivative cannot pass
    through (int(x) truncates on purpose; an index must not be differentiated)."""
    raise TypeError(
        "a traced value was used as a whole number (range(n), a list index, a repeat count); a "
        "count or a setting is not differentiated: keep it out of the differentiated arguments "
        "(argnums), or, in a dict of parameters, pass it as another argument (ints there are "
        "differentiated as floats); int(x) takes the value on purpose")


def _no_array(self, dtype=None, copy=None):
    raise TypeError("a traced value cannot become a plain NumPy array without losing its "
                    "derivative: " + _conversion_cause())


_DECORATOR_FRAMES = ("wrapper", "wrapped", "inner", "decorated")   # not the function the user called


def _solver_refused(library):
    """The refusal of a SciPy solver (``scipy.optimize.brentq``) run inside a differentiated function."""
    return (f"{library} calls your function on plain numbers and takes plain numbers from it, which "
            f"would drop the derivative of what it closes over: SciPy's solvers do not run on traced "
            f"values. For a root or a minimum inside a differentiated function write the iteration "
            f"in Python (a Newton loop on the traced value) or use scipy.optimize.newton, which "
            f"differentiate through the iterations; or find it plainly and differentiate it by the "
            f"implicit function theorem: a root r of F(r, p) = 0 has dr/dp = -(dF/dp) / (dF/dr) "
            f"there (a minimum is a root of the gradient)")


def _library_caller(frame, libraries=("numpy", "scipy")):
    """(the public name of the outermost function of ``libraries`` written in Python that called
    down to ``frame``, or None; the first frame above them, the caller's; the object whose method
    the outermost library frame is, or None) -- duals' own frames skipped. A decorator's frame
    stands for the function it wraps; a method is named by its object (scipy.stats.norm.cdf)."""
    package, called, owner = os.path.dirname(__file__) + os.sep, None, None
    while frame is not None:
        if frame.f_code.co_filename.startswith(package):
            frame = frame.f_back
            continue
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] not in libraries:
            break
        name = frame.f_code.co_name
        if name in _DECORATOR_FRAMES:   # the function it wraps, from its closure
            wrapped = [v for v in frame.f_locals.values() if callable(v) and getattr(
                v, "__module__", "").split(".")[0] in libraries and hasattr(v, "__name__")]
            if wrapped:
                module, name = wrapped[0].__module__, wrapped[0].__name__
        this = frame.f_locals.get("self") if frame.f_code.co_argcount else None
        if this is not None and type(this).__module__.split(".")[0] in libraries:
            owner = this
        if name in ("__call__", "__init__") and this is not None and this is owner:   # CubicSpline(x, y)(t)
            called = f"{_without_private(type(owner).__module__)}.{type(owner).__name__}"
        elif not name.startswith(("_", "<")) and name not in _DECORATOR_FRAMES:
            public = _without_private(module)
            if this is owner and owner is not None:   # (norm is an instance of norm_gen)
                public += "." + type(owner).__name__.removesuffix("_gen")
            elif this is None:   # a static or class method: Rotation.from_rotvec (Python 3.11's qualname)
                qualified = getattr(frame.f_code, "co_qualname", name)
                if "<" not in qualified and qualified.endswith("." + name):
                    name = qualified
                else:
                    public = _exported_from(public, name, frame.f_code)
            called = f"{public}.{name}"
        frame = frame.f_back
    return called, frame, owner


def _exported_from(module, name, code):
    """The shortest parent package of ``module`` that exports the function ``name`` whose code is
    ``code`` (``scipy.sparse.linalg`` for ``scipy.sparse.linalg.linsolve``'s spsolve), else
    ``module``."""
    import sys
    parts = module.split(".")
    for end in range(2, len(parts)):
        found = getattr(sys.modules.get(".".join(parts[:end])), name, None)
        if getattr(found, "__code__", None) is code:
            return ".".join(parts[:end])
    return module


def _without_private(module):
    """``scipy.interpolate`` for ``scipy.interpolate._cubic``: the module's public parts."""
    return ".".join(part for part in module.split(".") if not part.startswith("_"))


def _conversion_cause():
    """What turned a traced value into a plain array, read from the stack: a scipy.sparse product,
    a NumPy or SciPy function written in Python (named), ``np.array``/``np.asarray`` or an item
    assignment on the user's line, or else the usual causes."""
    import re
    import sys
    from .ops.sparse_products import is_sparse_matrix
    library, frame, owner = _library_caller(sys._getframe(2))
    constructing = owner is not None and (library or "").endswith("." + type(owner).__name__)
    if constructing and is_sparse_matrix(owner):
        return ("a scipy.sparse matrix cannot hold traced values (SciPy's sparse classes do not "
                "carry derivatives); assemble the matrix as a dense array, for triplets "
                "np.bincount(np.ravel_multi_index((rows, cols), shape), weights=dnp.stack(values), "
                "minlength=n * m).reshape(shape), and solve with np.linalg.solve, or write the "
                "assembly and the solve in a @numba.njit function (a derivative rule of your own "
                "for a sparse solve: docs/custom_rules.md)")
    if owner is not None and is_sparse_matrix(owner):
        return ("a scipy.sparse matrix with a traced operand (L @ x, L.dot(x), L * k) runs "
                "SciPy's own code, which makes the operand plain; for a product write "
                "dnp.matmul(L, x) or x @ L.T (import duals.numpy as dnp), whose derivative is L's; "
                "for a traced scale write k * (L @ u), or make the matrix dense, L.toarray()")
    if type(owner).__name__ in ("RClass", "CClass"):
        return ("np.r_[...] and np.c_[...] make plain arrays; write dnp.r_[...] / dnp.c_[...] "
                "(import duals.numpy as dnp), which keep traced values")
    if isinstance(owner, np.vectorize):
        return ("np.vectorize calls its function on plain numbers, one at a time; call the "
                "function on the array itself (arithmetic and np.* functions work element-wise "
                "on traced arrays; write branches with np.where)")
    if library is not None and library.startswith("scipy.optimize"):
        return _solver_refused(library)
    if library is not None:
        library = re.sub(r"^numpy\.(?:numeric|fromnumeric|lib)\.", "numpy.", library)  # np.full's home
        if library.startswith("numpy.") and library[6:] in _WRITERS:
            return _writer_refused(library[6:])
        counterpart = _counterpart(library)
        if counterpart is None:
            use = ("duals.numpy has no counterpart of it (docs/supported.md lists what works): write "
                   "it with np.* functions, which keep derivatives, give it a derivative with "
                   "duals.extend (docs/custom_rules.md: an interpolant's is its .derivative())")
        else:
            use = f"Write {counterpart} instead" + (" (import duals.numpy as dnp)"
                                                    if counterpart.startswith("dnp.") else "")
        return (f"{library} converts its argument to a plain array. {use}, or pass a plain "
                f"value (duals.stop_gradient(x)) if no derivative through it is wanted")
    line = _source_line(frame)
    drawn = re.search(r"\.(normal|uniform|lognormal|exponential|gamma|beta|poisson|laplace|logistic|gumbel|"
                      r"weibull|rayleigh|triangular|wald|vonmises|pareto|binomial|chisquare|standard_t|"
                      r"standard_gamma|multivariate_normal)\(", line)
    if drawn is not None:
        return f".{drawn.group(1)}(...) is a random draw: {RANDOM_PARAMETERS}"
    if "array(" in line:
        return ("np.array / np.asarray of traced values makes a plain NumPy array (NumPy lets "
                "nothing intercept it); write dnp.asarray(x, dtype=...) to convert or cast, "
                "dnp.array([...]) or dnp.stack([...]) to build from pieces (import duals.numpy "
                "as dnp), which keep them, or leave the call out: a traced value is an array already")
    cast = re.search(r"\b(?:np|numpy)\.(float64|float32|double|single)\(", line)
    if cast is not None:
        return (f"np.{cast.group(1)}(x) of a traced value makes a plain number; leave the cast "
                f"out (a traced value is a float already) or write x.astype(np.{cast.group(1)})")
    if _stores_an_item(line):
        return STORED_INTO_PLAIN
    return ("this usually means a NumPy function without a duals rule was called, or a traced "
            "value was stored into a float array; build arrays with dnp.stack / dnp.array or "
            "dnp.where instead (and dnp.r_[...] / dnp.c_[...] for np.r_ / np.c_)")


def _stores_an_item(line):
    """Whether a line of source assigns to an item (``a[i] = value``, ``a[i] += v``), not compares."""
    import re
    return re.search(r"\]\s*[-+*/]?=(?!=)", line) is not None


# what adding into entries of a plain array (stamping, assembly) is written as on traced values
RANDOM_PARAMETERS = ("np.random's parameters must be plain numbers (a Generator's too); draw a standard "
                     "variate and transform it: mu + sigma * np.random.normal(), lo + (hi - lo) * "
                     "np.random.uniform(), scale * np.random.exponential()")
SCATTER_ADD = ("to add into entries (G[i, j] += g, as stamping and assembly do) collect the "
               "indices and the values and sum them with np.bincount(np.ravel_multi_index((rows, "
               "cols), G.shape), weights=dnp.stack(values), minlength=G.size).reshape(G.shape)")
STORED_INTO_PLAIN = ("storing a traced value into a plain NumPy array (a[i] = value) would drop it; "
                     "build the array with dnp.stack / dnp.where / dnp.concatenate, or write the loop "
                     "in a @numba.njit function (compiled mode allows assignment); " + SCATTER_ADD)


# functions without a counterpart of their own name, and what computes them as written
_SPELLED_WITH = {
    "scipy.integrate.solve_ivp": "duals.sensitivity.solve_ivp (its sensitivities are the derivatives "
                                 "of the solution, docs/sensitivity.md)",
    "scipy.integrate.ivp.solve_ivp": "duals.sensitivity.solve_ivp (its sensitivities are the "
                                     "derivatives of the solution, docs/sensitivity.md)",
    "scipy.sparse.linalg.spsolve": "np.linalg.solve(A.toarray(), b) (a dense solve, differentiated "
                                   "in A and b), or the assembly and the solve in a @numba.njit "
                                   "function",
    "scipy.stats.norm.cdf": "scipy.special.ndtr((x - loc) / scale)",
    "scipy.stats.norm.sf": "scipy.special.ndtr(-(x - loc) / scale)",
    "scipy.stats.norm.logcdf": "scipy.special.log_ndtr((x - loc) / scale)",
    "scipy.stats.norm.pdf": "np.exp(-0.5 * z ** 2) / (scale * np.sqrt(2 * np.pi)) with z = (x - loc) / scale",
    "scipy.linalg.cholesky": "np.linalg.cholesky(a), the lower factor (SciPy's default is the upper "
                             "one: np.linalg.cholesky(a).T)",
    "scipy.linalg.cho_factor": "L = np.linalg.cholesky(a) (lower) and, for cho_solve, "
                               "np.linalg.solve(L.T, np.linalg.solve(L, b))",
    "scipy.linalg.cho_solve": "np.linalg.solve(L.T, np.linalg.solve(L, b)) with L = np.linalg.cholesky(a)",
    "scipy.linalg.solve_triangular": "np.linalg.solve(L, b) (a dense solve of the triangular matrix: "
                                     "the same numbers to rounding)",
    "scipy.linalg.eigh": "np.linalg.eigh(a) for a standard problem; for a generalised one, K v = λ M v, "
                         "reduce it by M's Cholesky factor: L = np.linalg.cholesky(M), Li = np.linalg.inv(L), "
                         "w, u = np.linalg.eigh(Li @ K @ Li.T), v = Li.T @ u",
    "scipy.linalg.eigvalsh": "np.linalg.eigvalsh(a) for a standard problem; for a generalised one, "
                             "K v = λ M v, np.linalg.eigvalsh(Li @ K @ Li.T) with Li = "
                             "np.linalg.inv(np.linalg.cholesky(M))",
    "scipy.linalg.lu_factor": "np.linalg.solve(a, b) for the solves it serves",
    "scipy.linalg.lu_solve": "np.linalg.solve(a, b)",
    "scipy.spatial.distance.cdist": "the squared distances by broadcasting, d2 = np.sum((XA[:, None, :] - "
                                    "XB[None, :, :]) ** 2, axis=-1), and the distances as np.where(d2 > 0, "
                                    "np.sqrt(np.where(d2 > 0, d2, 1.0)), 0.0) (sqrt has no derivative "
                                    "at a zero distance)",
}


def _counterpart(name):
    """``dnp.<name>`` for a NumPy function, or ``dnp.special.<name>`` for a SciPy special function,
    when duals.numpy has one with NumPy's or SciPy's arguments (or an expression that computes
    it, for a few SciPy functions); None otherwise."""
    import duals.numpy as dnp
    if name in _SPELLED_WITH:
        return _SPELLED_WITH[name]
    for prefix, module, spelled in (("numpy.", dnp, "dnp."), ("scipy.special.", dnp.special, "dnp.special."),
                                    ("scipy.linalg.", dnp.linalg, "np.linalg.")):
        if name.startswith(prefix):
            leaf = name[len(prefix):]
            return spelled + leaf if "." not in leaf and callable(getattr(module, leaf, None)) else None
    return None


def _setitem(self, index, value):
    if getattr(self._trace, "imperative", False):
        raise TypeError(
            "item assignment into a Var is not recorded by the tape: build the new array "
            "(dnp.where(mask, new, x), dnp.concatenate of slices), or change a leaf's value "
            "outside the recording: with duals.no_grad(): w.value[i] = ...")
    raise TypeError(
        "item assignment into a traced array is not supported: traced values are immutable. "
        "Use dnp.where(mask, new, x) to replace entries, dnp.concatenate of slices to rebuild "
        "the array, or write the loop in a @numba.njit function (compiled forward mode "
        "allows assignment)")


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return N["reshape"](self, shape, order=order)


_PLAIN_HINT = "Pass that argument as a plain value (duals.stop_gradient(x) if it is computed)"
_INSIDE_NUMPY_HINTS = {
    "histogram": "A traced range= is not supported: pass the edges as bins, e.g. "
                 "bins=np.linspace(lo, hi, n + 1) with traced lo and hi",
}


def _numpy_caller():
    """The name of the outermost NumPy function on the stack right above this call, or None when
    the caller is not NumPy's own code."""
    import sys
    called = _library_caller(sys._getframe(2), ("numpy",))[0]
    return None if called is None else called.rsplit(".", 1)[1]


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return N["transpose"](self, axes or None)


def _astype(self, dtype, copy=True):
    kind = np.dtype(dtype).kind
    if kind == "c":
        return self if self.dtype.kind == "c" else N["add"](self, np.zeros((), dtype=dtype))
    if kind != "f":
        inside = _numpy_caller()
        if inside is not None:
            raise TypeError(f"numpy.{inside} turns a traced argument into {np.dtype(dtype)} inside NumPy, "
                            f"which would drop its derivative. {_INSIDE_NUMPY_HINTS.get(inside, _PLAIN_HINT)}")
        raise TypeError(f"astype({np.dtype(dtype)}) of a traced value would drop its derivative; "
                        f"keep a float dtype")
    if self.dtype.kind == "c":
        raise TypeError(f"astype({np.dtype(dtype)}) of a complex traced value would drop its "
                        f"imaginary part silently; take np.real(z) (or np.abs(z)) explicitly")
    if np.dtype(dtype) != self.dtype:      # another float precision: rounded, as NumPy does
        from .ops.elementwise import astype_p
        return astype_p(self, dtype=np.dtype(dtype))
    return N["copy"](self) if copy else self


def _in_place(name):
    """``a op= b`` of a traced value: a new value for the name ``a``, and every other name for the
    old one made stale (duals.core.Family), where NumPy would have changed it."""
    def method(self, other):
        result = N[name](self, other)
        changed_in_place(self)
        return result
    method.__name__ = f"in_place_{name}"
    return method


def _iter(self):
    n = len(self)
    for i in range(n):
        yield self[i]


def _len(self):
    s = self.shape
    if not s:
        raise TypeError("len() of a 0-d traced value")
    return s[0]


_CALLS = {}   # ufunc -> the duals function a plain call of it takes (learnt on first use)


def _bincount_of(index, values, inputs):
    """The np.bincount that sums ``values`` by ``index`` (the advice for a scattered a[idx] += v),
    by real and imaginary parts when an operand is complex: bincount takes real weights only."""
    if any(np.iscomplexobj(_primal(v)) for v in inputs):
        return (f"(np.bincount({index}, weights={values}.real, minlength=a.size) + 1j * "
                f"np.bincount({index}, weights={values}.imag, minlength=a.size))")
    return f"np.bincount({index}, weights={values}, minlength=a.size)"


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    for i in inputs:
        if type(i) is list or type(i) is tuple:   # np.multiply(x, [1.0, 2.0]): an array, as NumPy reads it
            inputs = tuple(N["array"](i) if type(i) in (list, tuple) else i for i in inputs)
            break
    if not kwargs and method == "__call__":
        target = _CALLS.get(ufunc)
        if target is not None:
            out = target(*inputs)
            for i in inputs:
                if out is i:
                    return N["copy"](out)
            return _new_array(out, inputs) if isinstance(out, Tracer) and out._family is not None else out
    out = kwargs.get("out")
    if out is not None and method == "__call__" and ufunc.__name__ in VALUE_ONLY:
        # a comparison, isnan, floor ...: a plain result of the values, which out can hold
        return ufunc(*(_primal(i) for i in inputs), **kwargs)
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if any(isinstance(o, Tracer) for o in outs):
            raise TypeError(f"numpy.{ufunc.__name__}(..., out=z) writes into a traced value, which cannot "
                            f"change in place; write z = np.{ufunc.__name__}(...) instead")
        if any(o is i for o in outs for i in inputs):
            scatter = (f"; for an indexed a[idx] += v (assembly) a = a + "
                       f"{_bincount_of('idx', 'v', inputs)} on a 1-d a (np.ravel_multi_index for a "
                       f"tuple of index arrays)" if ufunc is np.add else "")
            raise TypeError(
                f"an in-place operator on a plain NumPy array (a += v, a[i] += v: numpy."
                f"{ufunc.__name__} into its own input) cannot store a traced value into it; write "
                f"a = a + v{scatter}, build the array with dnp functions (dnp.where, dnp.stack), or "
                f"write the loop in a @numba.njit function (compiled mode allows it)")
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=...) cannot write a traced value into an "
                        f"array; drop out= and use the returned value")
    kwargs.pop("out", None)
    if method == "__call__":
        inputs, kwargs = _call_options(ufunc, inputs, kwargs)
        target = _foreign_ufunc(ufunc)
        if target is None and ufunc.__name__ in N:
            target = N[ufunc.__name__]
        if target is not None:
            if not kwargs:
                _CALLS[ufunc] = target
            return _new_array(target(*inputs, **kwargs), inputs)
    table = {"reduce": _REDUCERS, "accumulate": _ACCUMULATORS}.get(method, {})
    if method == "accumulate" and ufunc in (np.maximum, np.minimum) and len(inputs) == 1:
        from .ops.calculus import running_extreme
        return running_extreme(*inputs, **kwargs, largest=ufunc is np.maximum)
    if ufunc.__name__ in table and len(inputs) == 1:
        name, allowed = table[ufunc.__name__]
        kwargs.setdefault("axis", 0)  # a ufunc reduces along the first axis by default
        extra = {k for k, v in kwargs.items() if k not in allowed and v is not None}
        if not extra:
            return N[name](*inputs, **kwargs)
        raise TypeError(f"numpy.{ufunc.__name__}.{method} with {', '.join(sorted(extra))}= is not "
                        f"supported on traced values; call duals.numpy.{name} instead")
    if method == "outer" and len(inputs) == 2 and not kwargs and ufunc.nin == 2 and ufunc.nout == 1:
        a, b = inputs       # every pair of entries: a's axes first, then b's
        a_shape, b_shape = np.shape(a), np.shape(b)
        return _array_ufunc(self, ufunc, "__call__", N["reshape"](a, a_shape + (1,) * len(b_shape)), b)
    if method == "at":
        raise TypeError(
            f"numpy.{ufunc.__name__}.at(a, indices, b) changes a in place, which cannot hold a traced "
            f"value; " + (f"write a + {_bincount_of('indices', 'b', inputs)} for a 1-d a "
                          f"(np.ravel_multi_index for a tuple of index arrays), which is "
                          f"differentiable, " if ufunc is np.add else "")
            + "or write the loop in a @numba.njit function (compiled mode allows a[i] += b[k])")
    home = "numpy" if getattr(np, ufunc.__name__, None) is ufunc else _ufunc_home(ufunc)
    if home == "the ufunc" and method == "__call__":
        raise TypeError(
            f"the ufunc {ufunc.__name__!r} is neither NumPy's nor SciPy's, and its kernel is hidden "
            f"from duals: a @numba.vectorize with target='parallel' or 'cuda', np.frompyfunc or "
            f"a C extension's. A @numba.vectorize with the default target is differentiated "
            f"through its kernel (drop target=); else declare it as a primitive with its own "
            f"derivative rules (duals.extend.primitive)")
    raise TypeError(_unsupported(f"{home}.{ufunc.__name__}{'' if method == '__call__' else '.' + method}"))


def _ufunc_home(ufunc):
    import sys
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, ufunc.__name__, None) is ufunc:
        return "scipy.special"
    return "the ufunc"


def _call_options(ufunc, inputs, options):
    """(inputs, options) for a plain call of ``ufunc`` with keyword options: a float ``dtype=``
    (NumPy's histogram passes one) casts the inputs; an option that would change which entries are
    computed, or drop the derivative, raises naming the way out."""
    options = {k: v for k, v in options.items() if v is not None}
    dtype = options.pop("dtype", None)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc":
            raise TypeError(f"numpy.{ufunc.__name__}(..., dtype={dtype}) of a traced value would drop "
                            f"its derivative; keep a float dtype")
        inputs = tuple(x.astype(dtype) if isinstance(x, Tracer) else np.asarray(x, dtype) for x in inputs)
    if options.pop("casting", "same_kind") != "same_kind" or options.pop("order", "K") != "K":
        raise TypeError(f"numpy.{ufunc.__name__}: casting= and order= are not supported on traced "
                        f"values; call it without them")
    if "where" in options:
        raise TypeError(f"numpy.{ufunc.__name__}(..., where=mask) is not supported on traced values; "
                        f"write np.where(mask, numpy.{ufunc.__name__}(...), fallback) instead")
    options.pop("subok", None)
    if options:
        raise TypeError(f"numpy.{ufunc.__name__}: {', '.join(sorted(options))}= is not supported on "
                        f"traced values; call it without")
    return inputs, options


_FOREIGN = {}


def _foreign_ufunc(ufunc):
    """The duals function for a ufunc that is not NumPy's own (``scipy.special.erf``), or None."""
    if getattr(np, ufunc.__name__, None) is ufunc:
        return None
    if ufunc not in _FOREIGN:
        from .ops.special import scipy_ufuncs
        _FOREIGN.update(scipy_ufuncs())
        _FOREIGN.setdefault(ufunc, None)
    return _FOREIGN[ufunc]


def _unsupported(name):
    return (f"{name} has no derivative rule in duals, so it cannot take a traced value without "
            f"losing the derivative. Write the computation with the functions duals.numpy "
            f"supports (see dir(duals.numpy)), or declare it as a primitive with its own "
            f"derivative rules (duals.extend.primitive)")


# ufunc methods: (duals.numpy function, the keywords it accepts)
_REDUCERS = {"add": ("sum", {"axis", "keepdims", "dtype", "initial", "where"}),
             "maximum": ("max", {"axis", "keepdims"}), "minimum": ("min", {"axis", "keepdims"}),
             "multiply": ("prod", {"axis", "keepdims"}),
             "logaddexp": ("special.logsumexp", {"axis", "keepdims"})}
_ACCUMULATORS = {"add": ("cumsum", {"axis"}), "multiply": ("cumprod", {"axis", "dtype"})}
_FUNCTIONS = {}


def _numpy_function(name):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _array_function(self, func, types, args, kwargs):
    if not _FUNCTIONS:
        for name, impl in N.items():
            target = _numpy_function(name)
            if callable(target):
                _FUNCTIONS[target] = impl
    impl = _FUNCTIONS.get(func)
    if impl is None:
        if func is np.copyto:
            raise TypeError(_copyto_refused(_numpy_caller()))
        if getattr(np, func.__name__, None) is func and func.__name__ in _WRITERS:
            raise TypeError(_writer_refused(func.__name__))
        raise TypeError(_unsupported(_public_name(func)))
    out = impl(*args, **kwargs)
    return out if func.__name__ in VIEWS else _new_array(out, args)


# NumPy functions that write into an argument: (a traced array is immutable, a plain one cannot
# hold a traced value) the way to build the new array instead
_WRITERS = {"fill_diagonal": "dnp.where(np.eye(n, dtype=bool), value, a) for a square a",
            "put": "dnp.where(mask, values, a) (mask from the flat indices, reshaped)",
            "place": "dnp.where(mask, values, a)", "putmask": "dnp.where(mask, values, a)",
            "put_along_axis": "dnp.where(mask, values, a) (mask from the indices)"}


def _writer_refused(name):
    return (f"numpy.{name} writes into its argument in place, but a traced array is "
            f"immutable and a plain array cannot hold a traced value; build the new array "
            f"instead: {_WRITERS[name]}")


def _copyto_refused(caller):
    if caller in ("full", "full_like"):
        return (f"numpy.{caller} with a traced fill value writes it into a plain array, which "
                f"cannot hold it; write dnp.{caller}(...) (import duals.numpy as dnp)")
    if caller not in (None, "copyto"):
        return _undispatched(caller, "writes it into a plain array")
    return ("numpy.copyto writes into a plain array, which cannot hold a traced value; build the "
            "new array instead: dnp.where(mask, value, a) for copyto(a, value, where=mask)")


def _public_name(func):
    """``numpy.fft.fft`` for a function defined in ``numpy.fft._pocketfft`` (private parts dropped)."""
    module = getattr(func, "__module__", None) or "numpy"
    parts = []
    for part in module.split("."):
        if part.startswith("_"):
            break
        parts.append(part)
    module = ".".join(parts) or "numpy"
    if module in ("numpy.lib", "numpy.core"):
        module = "numpy"
    return f"{module}.{func.__name__}"


def _method(name):
    def method(self, *args, **kwargs):
        return N[name](self, *args, **kwargs)
    method.__name__ = name
    return method


def _item(self, *args):
    """x.item(*args): one entry as a traced 0-d value (``float(x.item())`` is what drops the derivative)."""
    if not args:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return N["reshape"](self, ())
    if len(args) == 1 and isinstance(args[0], (int, np.integer)):
        return getitem(N["reshape"](self, (-1,)), int(args[0]))
    return getitem(self, tuple(args[0]) if len(args) == 1 else args)


def _tolist(self):
    """x.tolist(): nested lists of traced 0-d entries (a 0-d value comes back as itself)."""
    if self.ndim == 0:
        return self
    return [_tolist(row) for row in self]


class _Flat:
    """x.flat: the entries of a traced array in row-major order; reading ``x.flat[i]`` is
    ``x.ravel()[i]``, writing raises as item assignment does."""

    def __init__(self, base):
        self.base = base

    def __getitem__(self, index):
        return getitem(N["ravel"](self.base), index)

    def __setitem__(self, index, value):
        _setitem(self.base, index, value)

    def __iter__(self):
        return iter(N["ravel"](self.base))

    def __len__(self):
        return self.base.size


def _no_fill(self, value):
    raise TypeError("x.fill(value) writes in place, but a traced value is immutable; write "
                    "dnp.full_like(x, value) (import duals.numpy as dnp) instead")


def _no_sort(self, *args, **kwargs):
    raise TypeError("x.sort() sorts in place, but a traced value is immutable; write x = np.sort(x) "
                    "(which keeps the derivative) instead")


def _format(self, spec):
    if not spec:
        return str(self)
    value = np.asarray(_primal(self))
    return format(value[()] if value.ndim == 0 else value, spec)


def _value_method(name):
    """A method returning NumPy's value-only answer for the plain value (argmax, nonzero, ...)."""
    def method(self, *args, **kwargs):
        return getattr(np.asarray(_primal(self)), name)(*args, **kwargs)
    method.__name__ = name
    return method


def install():
    """install(): attach operators, methods and protocols to ``Tracer`` (done once on import)."""
    T = Tracer
    for op, name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                     ("truediv", "divide"), ("pow", "power"), ("matmul", "matmul"),
                     ("floordiv", "floor_divide"), ("mod", "mod")):
        setattr(T, f"__{op}__", _binary(name))
        setattr(T, f"__r{op}__", _binary(name, reflected=True))
        setattr(T, f"__i{op}__", _in_place(name))
    T.__divmod__ = lambda self, other: N["divmod"](self, other)
    T.__rdivmod__ = lambda self, other: N["divmod"](other, self)
    T.__neg__ = lambda self: N["negative"](self)
    T.__pos__ = lambda self: N["copy"](self)     # np.positive: a new array
    T.__abs__ = lambda self: N["abs"](self)
    import operator
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(T, f"__{op}__", _compare(getattr(operator, op)))
    T.__hash__ = object.__hash__
    T.__bool__ = lambda self: bool(_primal(self))
    T.__float__ = _no_float
    T.__int__ = _int
    T.__index__ = _no_index
    T.__round__ = _round
    T.__complex__ = _no_float
    T.__array__ = _no_array
    T.__getitem__ = getitem
    T.__setitem__ = _setitem
    T.__len__ = _len
    T.__iter__ = _iter
    T.__array_ufunc__ = _array_ufunc
    T.__array_function__ = _array_function
    T.shape = property(lambda self: np.shape(_layout(self)))
    T.ndim = property(lambda self: np.ndim(_layout(self)))
    T.size = property(lambda self: int(np.size(_layout(self))))
    T.dtype = property(lambda self: np.result_type(_layout(self)))
    T.T = property(lambda self: N["transpose"](self))
    for name in ("sum", "mean", "var", "std", "prod", "max", "min", "cumsum", "ravel", "squeeze",
                 "swapaxes", "clip", "diagonal", "trace", "dot"):
        setattr(T, name, _method(name))
    T.flatten = lambda self, order="C": N["copy"](N["ravel"](self, order))   # always a copy
    T.reshape = _reshape
    T.transpose = _transpose
    T.astype = _astype
    T.copy = lambda self, order="C": N["copy"](self)
    for name in ("cumprod", "repeat", "take", "round", "searchsorted"):
        setattr(T, name, _method(name))
    for name in ("argmax", "argmin", "argsort", "any", "all", "nonzero"):
        setattr(T, name, _value_method(name))
    T.compress = lambda self, condition, axis=None: N["compress"](condition, self, axis)
    T.conj = T.conjugate = lambda self: N["conj"](self) if self.dtype.kind == "c" else self   # (NumPy's a.conj() of real a is a)
    T.real = property(lambda self: N["real"](self))
    T.imag = property(lambda self: N["imag"](self))
    T.item = _item
    T.tolist = _tolist
    T.sort = _no_sort
    T.fill = _no_fill
    T.flat = property(_Flat)
    T.__format__ = _format
