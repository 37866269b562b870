"""What a refused conversion of a traced value says: the call that made it plain, and what to write.

A traced value (a ``Dual`` or ``Var``) reaches NumPy, SciPy or Python in ways that would drop its
derivative: ``float(x)``, ``np.asarray(x)``, ``a[i] = x`` into a plain array, a SciPy function
written in Python or compiled. :func:`_conversion_cause` reads the stack (the library function that
asked, the user's line) and names the cause and the way out: the ``duals.numpy`` counterpart, the
NumPy spelling of a SciPy function, the rewrite of an assembly, of a random draw's parameters or
of a solver. The texts shared with compiled mode's errors live here too.

>>> _counterpart("scipy.linalg.solve")
'np.linalg.solve'
"""
import os
import sys

import numpy as np


_SCIPY = os.sep + "scipy" + os.sep
_NUMBA_UFUNCS = os.sep + os.path.join("numba", "np", "ufunc") + os.sep   # (a @vectorize's call)


def _at_user_line():
    """`` (in file, line N)``: the user's line that made the refused call (SciPy's is not theirs)."""
    from .float_warnings import _user_frame, at_line
    return at_line(_user_frame(sys._getframe(1), also=(_SCIPY, _NUMBA_UFUNCS)))


def _refused(message):
    """The TypeError of a refused NumPy call on a traced value, naming the user's line."""
    return TypeError(message + _at_user_line())


# math functions the derivative table does not name (its own are in _vocabulary.MATH_SPELLINGS)
_MATH_SPELLED = {"lgamma": "scipy.special.gammaln", "pow": "np.power",
                 "gamma": "np.exp(scipy.special.gammaln(x)) (for positive x; scipy.special.gamma has no rule)",
                 "fabs": "np.abs", "fsum": "np.sum", "prod": "np.prod", "dist": "np.linalg.norm(p - q)"}


# cmath functions whose NumPy spelling is not np.<name>
_CMATH_SPELLED = {"phase": "np.angle", "polar": "(np.abs(z), np.angle(z))", "rect": "r * np.exp(1j * phi)",
                  "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan", "asinh": "np.arcsinh",
                  "acosh": "np.arccosh", "atanh": "np.arctanh"}


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
    line = _source_line(frame)
    complex_names = re.findall(r"\bcmath\.(\w+)\s*\(", line)
    if len(complex_names) == 1:   # (the complex call converts first: math.degrees(cmath.phase(z)))
        name = complex_names[0]
        ufunc = isinstance(getattr(np, name, None), np.ufunc)
        spelled = _CMATH_SPELLED.get(name) or (f"np.{name}" if ufunc else None)
        if spelled is not None:
            return f"cmath.{name} takes Python numbers only: write {spelled}, which keeps derivatives"
        return "use np.* functions instead of cmath.*"
    names = re.findall(r"\bmath\.(\w+)\s*\(", line)
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


_DECORATOR_FRAMES = ("wrapper", "wrapped", "inner", "decorated")   # not the function the user called


def _solver_refused(library):
    """The refusal of a SciPy solver (``scipy.optimize.brentq``) run inside a differentiated function."""
    if library == "scipy.optimize.newton":   # (its vectorised form: an array x0; a photovoltaics trial)
        return ("scipy.optimize.newton with an array x0 (its vectorised form) makes the iterate a "
                "plain array, which drops its derivative; with a number x0 it runs in Python and "
                "is differentiated through the iterations: call it entry by entry, or write the "
                "vectorised Newton loop in Python (x = x - F(x) / dF(x) on the traced arrays), or "
                "differentiate the root by the implicit function theorem, dr/dp = -(dF/dp) / (dF/dr)")
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
                   "it with np.* functions, which keep derivatives, or give it a derivative with "
                   "duals.extend (docs/custom_rules.md" + (_INTERPOLANT if library.startswith(
                       "scipy.interpolate") else ")"))
        else:
            use = f"Write {counterpart} instead" + (" (import duals.numpy as dnp)"
                                                    if counterpart.startswith("dnp.") else "")
        return (f"{library} converts its argument to a plain array. {use}, or pass a plain "
                f"value (duals.stop_gradient(x)) if no derivative through it is wanted")
    line = _source_line(frame)
    tree = re.search(r"\b(c?KDTree|BallTree|NearestNeighbors)\(", line)
    if tree is not None:   # (compiled classes: no Python frame names them; an SPH trial)
        return (f"{tree.group(1)}(...) builds its search structure from plain numbers in compiled "
                f"code; build it from the plain positions, {tree.group(1)}(duals.stop_gradient(x)), "
                f"and compute the distances of the pairs it finds with np.* on the traced positions, "
                f"which are differentiated (a neighbour list changes only where a pair crosses the "
                f"cutoff)")
    drawn = re.search(r"\.(normal|uniform|lognormal|exponential|gamma|beta|poisson|laplace|logistic|gumbel|"
                      r"weibull|rayleigh|triangular|wald|vonmises|pareto|binomial|chisquare|standard_t|"
                      r"standard_gamma|multivariate_normal)\(", line)
    if drawn is not None:
        return f".{drawn.group(1)}(...) is a random draw: {RANDOM_PARAMETERS}"
    listed = re.search(r"\b(?:np|numpy)\.(\w+)\((?:.*[(,]\s*)?\[", line)
    if listed is not None and "array(" not in line:   # np.concatenate([[x[0]], y]): a list holds it
        name = listed.group(1)
        return (f"a traced value inside a Python list given to np.{name} is not seen by NumPy's "
                f"dispatch, which makes the list a plain array first: pass arrays (x[:1] rather "
                f"than [x[0]], dnp.stack([a, b]) for a list of traced numbers; import duals.numpy "
                f"as dnp)")
    layout = re.search(r"\b(?:np|numpy)\.(ascontiguousarray|asfortranarray)\(", line)
    if layout is not None:   # (C functions of NumPy's own: no dispatch to duals)
        return (f"np.{layout.group(1)} makes a plain NumPy array (NumPy lets nothing intercept it); "
                f"a traced value keeps no memory layout: drop the call, or write "
                f"dnp.{layout.group(1)}(x) (import duals.numpy as dnp)")
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
STORED_INTO_PLAIN_COMPLEX = ("storing a traced value into a plain complex NumPy array (a[i] = value) "
                             "would drop it; build the array with dnp.stack / dnp.where / "
                             "dnp.concatenate (a diagonal: A + np.diag(values)); " + SCATTER_ADD)


# functions without a counterpart of their own name, and what computes them as written
_SERIES = (("legendre", "leg"), ("chebyshev", "cheb"), ("hermite", "herm"), ("hermite_e", "herme"),
           ("laguerre", "lag"), ("polynomial", "poly"))
_SERIES_CLASSES = ("Legendre", "Chebyshev", "Hermite", "HermiteE", "Laguerre", "Polynomial")
_DENSE_BANDS = ("a dense matrix from its bands, np.diag(main) + np.diag(upper, 1) + np.diag(lower, -1) "
                "(scipy.sparse's matrices cannot hold traced values; a dense one is differentiated in "
                "every entry), solved with np.linalg.solve")
_SPELLED_WITH = {
    "scipy.integrate.solve_ivp": "duals.sensitivity.solve_ivp (its sensitivities are the derivatives "
                                 "of the solution, docs/sensitivity.md)",
    "scipy.integrate.ivp.solve_ivp": "duals.sensitivity.solve_ivp (its sensitivities are the "
                                     "derivatives of the solution, docs/sensitivity.md)",
    # (an events trial: odeint, the classic pharmacometrics call)
    "scipy.integrate.odeint": "duals.sensitivity.solve_ivp(lambda t, y, p: rhs(y, t, *p), (t[0], "
                              "t[-1]), y0, p, t_eval=t) (odeint's rhs(y, t, ...) takes the state "
                              "first; the sensitivities are the derivatives of the solution, "
                              "docs/sensitivity.md)",
    "scipy.sparse.linalg.spsolve": "np.linalg.solve(A.toarray(), b) (a dense solve, differentiated "
                                   "in A and b), or the assembly and the solve in a @numba.njit "
                                   "function",
    # (a probabilistic-programming trial: Beta, Dirichlet-multinomial, entropy terms)
    "scipy.special.betaln": "scipy.special.gammaln(a) + scipy.special.gammaln(b) - "
                            "scipy.special.gammaln(a + b)",
    "scipy.special.beta": "np.exp(scipy.special.gammaln(a) + scipy.special.gammaln(b) - "
                          "scipy.special.gammaln(a + b)) (for positive a, b)",
    "scipy.special.gamma": "np.exp(scipy.special.gammaln(x)) (for positive x; math.gamma in @numba.njit "
                           "code is differentiated)",
    "scipy.special.loggamma": "scipy.special.gammaln(x) (for positive real x)",
    "scipy.special.multigammaln": "a sum of gammaln: d (d - 1) / 4 * np.log(np.pi) + "
                                  "np.sum(scipy.special.gammaln(a - np.arange(d) / 2))",
    "scipy.special.entr": "-scipy.special.xlogy(x, x)",
    "scipy.special.rel_entr": "scipy.special.xlogy(x, x) - scipy.special.xlogy(x, y)",
    "scipy.special.kl_div": "scipy.special.xlogy(x, x) - scipy.special.xlogy(x, y) - x + y",
    "scipy.special.boxcox1p": "np.expm1(lmbda * np.log1p(x)) / lmbda (np.log1p(x) at lmbda = 0)",
    "scipy.stats.norm.cdf": "scipy.special.ndtr((x - loc) / scale)",
    "scipy.stats.norm.sf": "scipy.special.ndtr(-(x - loc) / scale)",
    "scipy.stats.norm.logcdf": "scipy.special.log_ndtr((x - loc) / scale)",
    "scipy.stats.norm.pdf": "np.exp(-0.5 * z ** 2) / (scale * np.sqrt(2 * np.pi)) with z = (x - loc) / scale",
    "scipy.stats.norm.logpdf": "-0.5 * z ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi) with z = (x - loc) / scale",
    "scipy.stats.poisson.logpmf": "scipy.special.xlogy(k, mu) - mu - scipy.special.gammaln(k + 1)",
    "scipy.stats.poisson.pmf": "np.exp(scipy.special.xlogy(k, mu) - mu - scipy.special.gammaln(k + 1))",
    "scipy.linalg.cholesky": "np.linalg.cholesky(a), the lower factor (SciPy's default is the upper "
                             "one: np.linalg.cholesky(a).T)",
    "scipy.linalg.cho_factor": "L = np.linalg.cholesky(a) (lower) and, for cho_solve, "
                               "np.linalg.solve(L.T, np.linalg.solve(L, b))",
    "scipy.linalg.cho_solve": "np.linalg.solve(L.T, np.linalg.solve(L, b)) with L = np.linalg.cholesky(a)",
    "scipy.linalg.solve_triangular": "np.linalg.solve(L, b) (a dense solve of the triangular matrix: "
                                     "the same numbers to rounding)",
    # (a stability trial: generalised problems, banded solves; a BVP trial)
    "scipy.linalg.eig": "np.linalg.eig(a) for a standard problem; for a generalised one, A v = λ B v "
                        "with B invertible, np.linalg.eig(np.linalg.solve(B, A)) (the same eigenvalues "
                        "and vectors up to their scaling)",
    "scipy.linalg.solve_banded": _DENSE_BANDS,
    "scipy.linalg.solveh_banded": _DENSE_BANDS,
    "scipy.integrate.solve_bvp": "a shooting method (the ODE integrated with fixed steps in Python or "
                                 "@numba.njit, its unknown initial values found by Newton) or Newton on "
                                 "a finite-difference discretisation (np.linalg.solve, or duals.sparse "
                                 "for the Jacobian): both differentiate exactly",
    "scipy.linalg.eigh": "np.linalg.eigh(a) for a standard problem; for a generalised one, K v = λ M v, "
                         "reduce it by M's Cholesky factor: L = np.linalg.cholesky(M), Li = np.linalg.inv(L), "
                         "w, u = np.linalg.eigh(Li @ K @ Li.T), v = Li.T @ u",
    "scipy.linalg.eigvalsh": "np.linalg.eigvalsh(a) for a standard problem; for a generalised one, "
                             "K v = λ M v, np.linalg.eigvalsh(Li @ K @ Li.T) with Li = "
                             "np.linalg.inv(np.linalg.cholesky(M))",
    "scipy.linalg.expm": "duals.numpy.linalg.expm(a) (SciPy's expm with its derivatives: NumPy has no "
                         "np.linalg.expm to dispatch to)",
    "scipy.linalg.lu_factor": "np.linalg.solve(a, b) for the solves it serves",
    "scipy.linalg.lu_solve": "np.linalg.solve(a, b)",
    "scipy.sparse.diags": _DENSE_BANDS,
    "scipy.sparse.diags_array": _DENSE_BANDS,
    "scipy.sparse.spdiags": _DENSE_BANDS,
    # ufunc methods met in risk-set code (Cox partial likelihoods) and group sums
    "numpy.logaddexp.accumulate": "the running log-sum-exp shifted by its maximum, m + np.log(np.cumsum("
                                  "np.exp(x - m))) with m = duals.stop_gradient(np.max(x)) (or a loop of "
                                  "np.logaddexp in a @numba.njit function)",
    "numpy.add.reduceat": "np.bincount(group, weights=x) with group the segment number of each entry "
                          "(np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(x)))))",
    # (not a selection of the values: trimming drops a zero's derivative, and np.poly1d(c)(x)
    # moves with c[0] also where c[0] is 0)
    "numpy.trim_zeros": "np.polyval(c, x) for np.poly1d(c)(x) (poly1d trims c's leading zeros with "
                        "np.trim_zeros, and a trimmed zero still has a derivative), and elsewhere "
                        "keep the zeros,",
    "scipy.integrate.trapezoid": "np.trapezoid(y, x) (the same rule, differentiated in y and x)",
    "scipy.integrate.trapz": "np.trapezoid(y, x) (the same rule, differentiated in y and x)",
    "scipy.integrate.cumulative_trapezoid": "np.cumsum((y[1:] + y[:-1]) / 2 * np.diff(x)) (with "
                                            "initial=0, np.concatenate(([0.0], ...)) of it)",
    "scipy.integrate.simpson": "np.sum(w * y) with Simpson's weights for an odd number n of equally "
                               "spaced points, w = h / 3 * np.r_[1, np.tile([4, 2], (n - 3) // 2), 4, 1], "
                               "or np.trapezoid(y, x)",
    # (a climate trial: Legendre expansions of an energy-balance model)
    **{f"numpy.polynomial.{module}.{short}val": (
        f"np.polynomial.{module}.{short}vander(x, len(c) - 1) @ c (for a plain x; a traced x "
        f"with plain coefficients is differentiated by {short}val itself)")
       for module, short in _SERIES},
    "numpy.polynomial.polynomial.polyval": "np.polyval(c[::-1], x) (the same polynomial, its "
                                           "coefficients highest degree first)",
    **{f"numpy.polynomial.{module}.{kind}": (
        f"np.polynomial.{module}.{short}val(off + scl * x, p.coef) with off, scl = p.mapparms(), "
        f"which is what p(x) computes (a traced x, plain coefficients)")
       for (module, short), kind in zip(_SERIES, _SERIES_CLASSES)},
    # (a viscoelastic trial: hereditary integrals and a Prony series' recursion)
    **{f"scipy.signal.{name}": "np.convolve(a, b) for 1-d arrays (SciPy's mode='full'; its 'same', "
                               "the size of a, and 'valid' are slices of it)"
       for name in ("fftconvolve", "convolve", "oaconvolve")},
    "scipy.signal.lfilter": "the recursion itself, y[n] = (b[0] x[n] + b[1] x[n-1] ... - a[1] y[n-1] "
                            "...) / a[0], in a loop that appends each traced y[n] to a list, then "
                            "dnp.stack(the list) (or the loop in a @numba.njit function); for a = [1], "
                            "np.convolve(b, x)[:len(x)]",
    # (a photovoltaics trial: the single-diode model's explicit solution)
    "scipy.special.lambertw": "a primitive of the principal branch for real arguments >= -1/e, "
                              "W = duals.extend.elementwise('lambertw_real', lambda x: "
                              "scipy.special.lambertw(x).real, lambda w, x: np.exp(-w) / (1 + w)), "
                              "then W(x)",
    "scipy.spatial.distance.cdist": "the squared distances by broadcasting, d2 = np.sum((XA[:, None, :] - "
                                    "XB[None, :, :]) ** 2, axis=-1), and the distances as np.where(d2 > 0, "
                                    "np.sqrt(np.where(d2 > 0, d2, 1.0)), 0.0) (sqrt has no derivative "
                                    "at a zero distance)",
}


# (scipy.fftpack's rfft, irfft and rfftfreq pack their output otherwise than np.fft's)
_FFTPACK_AS_NUMPY = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "fftshift", "ifftshift", "fftfreq")


# (a semi-Lagrangian trial differentiated in the data, where .derivative() is no help)
_INTERPOLANT = ("; in the query point an interpolant's derivative is its .derivative()); in the data "
                "values the interpolant is linear, so build its weights once from plain unit vectors "
                "and multiply: W = CubicSpline(x, np.eye(len(x)))(t), then W @ y (any interpolant "
                "that takes several columns of values)")


def integrator_refused(library):
    """The way out for an adaptive SciPy integrator (quad, romberg...) given a traced integrand."""
    return (f"{library} evaluates the integrand at points it chooses in compiled code and takes "
            f"plain numbers from it, so no derivative passes through it. Integrate on nodes fixed "
            f"in advance, which are differentiated: scipy.integrate.fixed_quad(f, a, b, n=...) "
            f"(Gauss-Legendre; a and b may be traced), or np.trapezoid(f(t), t) on a grid t")


def _counterpart(name):
    """``dnp.<name>`` for a NumPy function, or ``dnp.special.<name>`` for a SciPy special function,
    when duals.numpy has one with NumPy's or SciPy's arguments (or an expression that computes
    it, for a few SciPy functions); None otherwise."""
    import duals.numpy as dnp
    if name in _SPELLED_WITH:
        return _SPELLED_WITH[name]
    if name.startswith("scipy.fftpack.") and name[14:] in _FFTPACK_AS_NUMPY:
        return "np.fft." + name[14:]
    for prefix, module, spelled in (("numpy.", dnp, "dnp."), ("scipy.special.", dnp.special, "dnp.special."),
                                    ("scipy.linalg.", dnp.linalg, "np.linalg."),
                                    ("scipy.fft.", dnp.fft, "np.fft.")):
        if name.startswith(prefix):
            leaf = name[len(prefix):]
            return spelled + leaf if "." not in leaf and callable(getattr(module, leaf, None)) else None
    return None


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
