"""The one table of scalar derivative formulas.

Every element-wise primitive of the library is generated from a line of this file:
its NumPy implementation, its JVP and VJP rules (the formula evaluated with the
library's own primitives, so that it can be differentiated again), the fused Numba
value-and-tangent kernels, and the overloads of the compiled dual scalar type.

Formulas are Python expressions over a small vocabulary (:data:`VOCABULARY`). In a
unary formula ``x`` is the input and ``out`` the value already computed; in a binary
one the inputs are ``x`` and ``y``. A derivative written ``"0.0"`` is a symbolic
zero (no tangent flows), ``"1.0"`` and ``"-1.0"`` skip the multiplication.

Policy at non-differentiable points (the same in every mode, tested):

* ``abs'(0) = 0`` and ``sign' = 0`` everywhere;
* ``maximum``/``minimum`` (and the ``max``/``min`` reductions) split ties evenly;
* ``sqrt'(0) = inf`` and ``cbrt'(0) = inf``, the one-sided limit;
* ``x ** y`` at ``x = 0`` follows the limits: ``d/dx`` is ``0`` for ``y > 1``, ``1`` for
  ``y = 1``, ``inf`` for ``0 < y < 1`` and ``0`` for ``y = 0``; ``d/dy`` is ``0`` at ``x = 0``;
* the branch not taken contributes exactly zero, in every mode and order, even where its own
  derivative is inf or NaN: in ``where(c, a, b)`` the entries of ``a`` where ``c`` is false
  (and of ``b`` where it holds), the losing side of ``maximum``/``minimum`` (so ``clip``) and
  of the ``max``/``min`` reductions, and the entries an index does not select. Reverse mode
  marks those cotangent entries as zero by structure and every element-wise rule returns an
  exact zero there instead of ``0 * inf``; forward mode selects tangents, so the branch's
  tangent never enters. A zero that is only numerical (``2 * x`` at ``x = 0``) is not a
  branch: ``(sqrt(x)) ** 2`` at ``0`` stays NaN, the honest answer of the chain rule;
* ``x // y`` is piecewise constant (derivative 0) and ``x % y = x - y * (x // y)`` has
  ``d/dx = 1``, ``d/dy = -(x // y)``; at a jump the derivative is that of the piece the
  value comes from (Python's and NumPy's rounding decides it). ``fmod(x, y)`` is the same with
  the quotient truncated instead of floored: ``d/dy = -(x - fmod(x, y)) / y``;
* ``copysign(x, y) = |x| sign(y)``: ``d/dx = ±1`` (``0`` at ``x = 0``, as ``abs``), and ``0``
  with respect to ``y`` (the sign is piecewise constant).
* a partial that jumps at a kink (``sign(x)`` of ``abs``, a tie's ``0.5``) has derivative 0
  there too, so a smooth function written through a kink (``abs(x) ** 2``) gets the policy's
  second derivative at exactly that point, not its own, and kinks that cancel a wrong first one
  (``sign(x) * abs(x)`` at 0 gets ``sign(0) · 1 = 0``; docs/non_differentiable.md).

Adding an operation is one :class:`Entry` in :data:`TABLE`: its value, one partial per
argument, its NumPy spellings, where it lives in the namespace, and the interval the tests and
the fuzzer sample it from. ``tests/test_table_entry.py`` proves it by adding an entry to a
copy of this table and differentiating it in every mode.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """Entry(value, partials, ...): one element-wise function and everything generated from it.

    ``value`` and ``partials`` (one formula per argument) are written over :data:`VOCABULARY`;
    ``numpy`` lists NumPy's spellings when they differ from the table name, ``submodule`` puts
    the function under ``duals.numpy.<submodule>``; ``domain`` is the interval where tests and
    the fuzzer sample it (the function is smooth inside), ``away_from_zero`` samples
    ``±[0.3, hi]`` instead; ``discontinuous`` marks jumps (finite differences fail across them);
    ``selecting`` marks a partial whose zero means "this argument is not the one selected";
    ``holomorphic`` says the function is complex-differentiable where NumPy defines it for complex
    numbers and its formulas, evaluated on complex values, give that complex derivative (so the same
    rules serve complex inputs in every mode).
    """
    value: str
    partials: tuple
    numpy: tuple = ()
    submodule: str = None
    domain: tuple = (-2.0, 2.0)
    away_from_zero: bool = False
    discontinuous: bool = False
    selecting: bool = False
    holomorphic: bool = False

    @property
    def arity(self):
        return len(self.partials)


def unary(value, partial, **facts):
    return Entry(value, (partial,), **facts)


def binary(value, dx, dy, **facts):
    return Entry(value, (dx, dy), **facts)


POSITIVE = (0.2, 3.0)
OPEN_UNIT = (-0.9, 0.9)

TABLE = {
    "neg": unary("-x", "-1.0", numpy=("negative",), holomorphic=True),
    "square": unary("x * x", "2.0 * x", holomorphic=True),
    "reciprocal": unary("1.0 / x", "-(out * out)", domain=(0.3, 2.0), away_from_zero=True, holomorphic=True),
    "sqrt": unary("sqrt(x)", "0.5 / out", domain=POSITIVE, holomorphic=True),
    "cbrt": unary("cbrt(x)", "1.0 / (3.0 * out * out)", domain=POSITIVE),
    "exp": unary("exp(x)", "out", holomorphic=True),
    "exp2": unary("exp2(x)", "LN2 * out", holomorphic=True),
    "expm1": unary("expm1(x)", "out + 1.0", holomorphic=True),
    "log": unary("log(x)", "1.0 / x", domain=POSITIVE, holomorphic=True),
    "log2": unary("log2(x)", "1.0 / (LN2 * x)", domain=POSITIVE, holomorphic=True),
    "log10": unary("log10(x)", "1.0 / (LN10 * x)", domain=POSITIVE, holomorphic=True),
    "log1p": unary("log1p(x)", "1.0 / (1.0 + x)", domain=(-0.5, 2.0), holomorphic=True),
    "sin": unary("sin(x)", "cos(x)", holomorphic=True),
    "cos": unary("cos(x)", "-sin(x)", holomorphic=True),
    "tan": unary("tan(x)", "1.0 + out * out", domain=(-1.2, 1.2), holomorphic=True),
    # sqrt(1 - x²) as sqrt(1 - x) sqrt(1 + x), those written -(x - 1) and x - (-1): on a branch cut
    # (real |x| > 1 of complex x) the sign of x's zero imaginary part survives (adding a real
    # constant would turn -0 into +0), so the derivative is that of the side of the cut whose
    # value NumPy returns (Kahan's rule); at x = 1 itself 1.0 - x, +0.0 where -(x - 1) is -0.0,
    # whose sqrt made arcsin'(1) -inf (both branches are 1 - x, with the same derivative)
    "arcsin": unary("arcsin(x)", "1.0 / (sqrt(where(x == 1.0, 1.0 - x, -(x - 1.0))) * sqrt(x - -1.0))",
                    domain=OPEN_UNIT, holomorphic=True),
    "arccos": unary("arccos(x)", "-1.0 / (sqrt(where(x == 1.0, 1.0 - x, -(x - 1.0))) * sqrt(x - -1.0))",
                    domain=OPEN_UNIT, holomorphic=True),
    "arctan": unary("arctan(x)", "1.0 / (1.0 + x * x)", holomorphic=True),
    "sinh": unary("sinh(x)", "cosh(x)", holomorphic=True),
    "cosh": unary("cosh(x)", "sinh(x)", holomorphic=True),
    # 1 - tanh² cancels in the tails (every digit gone from |x| ≈ 19, where sech² is 1e-16):
    # sech² = 1 / cosh², and where tanh has rounded to ±1 (|x| > 19.06) 4 exp(-2|x|), |x| = x tanh
    # (the next term is e^(-2|x|) smaller); each branch sees only the values it serves
    "tanh": unary("tanh(x)", "where(out * out == 1.0, 4.0 * exp(-2.0 * x * out), "
                  "1.0 / cosh(where(out * out == 1.0, 0.0, x)) ** 2)", holomorphic=True),
    "arcsinh": unary("arcsinh(x)", "1.0 / sqrt(x * x - -1.0)", holomorphic=True),   # - -1.0: as arcsin
    "arccosh": unary("arccosh(x)", "1.0 / (sqrt(x - 1.0) * sqrt(x - -1.0))", domain=(1.2, 3.0), holomorphic=True),
    "arctanh": unary("arctanh(x)", "1.0 / ((1.0 - x) * (1.0 + x))", domain=OPEN_UNIT, holomorphic=True),
    "abs": unary("abs(x)", "sign(x)", numpy=("abs", "absolute", "fabs"), away_from_zero=True),
    "sign": unary("sign(x)", "0.0", away_from_zero=True, discontinuous=True),
    "erf": unary("erf(x)", "TWO_OVER_SQRT_PI * exp(-(x * x))", submodule="special"),
    "erfc": unary("erfc(x)", "-TWO_OVER_SQRT_PI * exp(-(x * x))", submodule="special"),
    # (not out * (1 - out): 1 - out loses the upper tail, 0 from x = 37 on)
    "expit": unary("expit(x)", "out * expit(-x)", submodule="special"),

    "add": binary("x + y", "1.0", "1.0", numpy=("add",), holomorphic=True),
    "sub": binary("x - y", "1.0", "-1.0", numpy=("subtract",), holomorphic=True),
    "mul": binary("x * y", "y", "x", numpy=("multiply",), holomorphic=True),
    "div": binary("x / y", "1.0 / y", "-(out / y)", numpy=("divide", "true_divide"),
                  domain=(0.3, 2.0), holomorphic=True),
    # (∂x is 0 at x = y = 0, the limit; elsewhere y x^(y-1) itself, whose derivative in y is
    # x^(y-1) (1 + y log x): a constant 0 wherever y = 0 made ∂²/∂x∂y 0 instead of 1/x)
    "pow": binary("x ** y",
                  # (0 ** -1 only in the branches not taken at x = y = 0 made a divide-by-zero
                  # warning: their base and exponent are guarded, the same numbers where taken;
                  # x - (-0.0), not x + 0.0, where x is not 0: adding 0.0 to -2 - 0j made it
                  # -2 + 0j, the other side of a complex power's branch cut; not a select, whose
                  # 0-d array took np.power's rounding instead of math.pow's)
                  "where(x == 0.0, where(y == 0.0, 0.0, y * x ** (y - 1.0 + (y == 0.0))), "
                  "y * (x - (x == 0.0) * -1.0) ** (y - 1.0))",
                  # (log of 1, not of 0, where the branch is not taken: no warning at x = 0)
                  "where(x == 0.0, 0.0, out * log(where(x == 0.0, 1.0, x)))", numpy=("power", "float_power"),
                  domain=(0.3, 2.0), holomorphic=True),
    "maximum": binary("maximum(x, y)",
                      "where(x > y, 1.0, where(x == y, 0.5, 0.0))",
                      "where(y > x, 1.0, where(x == y, 0.5, 0.0))", selecting=True),
    "minimum": binary("minimum(x, y)",
                      "where(x < y, 1.0, where(x == y, 0.5, 0.0))",
                      "where(y < x, 1.0, where(x == y, 0.5, 0.0))", selecting=True),
    "arctan2": binary("arctan2(x, y)", "y / (x * x + y * y)", "-(x / (x * x + y * y))",
                      domain=(0.3, 2.0)),
    # at (0, 0) the gradient is 0 with derivative 0, as norm's at 0 (hypot(x, 0) is abs(x))
    "hypot": binary("hypot(x, y)", "where(out == 0.0, 0.0, x / where(out == 0.0, 1.0, out))",
                    "where(out == 0.0, 0.0, y / where(out == 0.0, 1.0, out))", domain=(0.3, 2.0)),
    # (not exp(x - out): out's rounding grows with |out| through exp, and a second derivative
    # through 1 - exp(x - out) loses the tail as s (1 - s) does for expit)
    # (x - y is NaN where x = y = ±inf, two boundary entries of a soft-DTW table: their limit
    # along x = y is the tie's ½, as expit(0), so a constant pair has zero derivative, not NaN)
    "logaddexp": binary("logaddexp(x, y)", "expit(where(x - y == x - y, x - y, 0.0))",
                        "expit(where(y - x == y - x, y - x, 0.0))"),
    "floor_divide": binary("floor_divide(x, y)", "0.0", "0.0", domain=(0.3, 2.0),
                           discontinuous=True),
    "mod": binary("mod(x, y)", "1.0", "-floor_divide(x, y)", numpy=("mod", "remainder"),
                  domain=(0.3, 2.0), discontinuous=True),
    "fmod": binary("fmod(x, y)", "1.0", "-((x - out) / y)", domain=(0.3, 2.0), discontinuous=True),
    "copysign": binary("copysign(x, y)", "sign(x) * sign(out)", "0.0", away_from_zero=True,
                       discontinuous=True),
}

# Views of the table in the shapes the generators read; refresh() rebuilds them after an edit.
UNARY = {}            # name: (value, d value / dx)
BINARY = {}           # name: (value, d value / dx, d value / dy)
NUMPY_NAMES = {}      # name: NumPy spellings, where they differ from the name
SUBMODULE = {}        # name: "special" for duals.numpy.special.<name>
DISCONTINUOUS = set()
SELECTING = set()
HOLOMORPHIC = set()   # names whose formulas are also their complex derivatives


def refresh():
    """refresh(): rebuild the views of :data:`TABLE` (after adding an entry to it)."""
    UNARY.clear(), BINARY.clear(), NUMPY_NAMES.clear(), SUBMODULE.clear()
    DISCONTINUOUS.clear(), SELECTING.clear(), HOLOMORPHIC.clear()
    for name, entry in TABLE.items():
        (UNARY if entry.arity == 1 else BINARY)[name] = (entry.value,) + tuple(entry.partials)
        if entry.numpy:
            NUMPY_NAMES[name] = tuple(entry.numpy)
        if entry.submodule:
            SUBMODULE[name] = entry.submodule
        if entry.discontinuous:
            DISCONTINUOUS.add(name)
        if entry.selecting:
            SELECTING.add(name)
        if entry.holomorphic:
            HOLOMORPHIC.add(name)


refresh()

# functions that formulas may call, besides + - * / ** and comparisons
VOCABULARY = (
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "abs", "sign", "erf", "erfc", "expit",
    "maximum", "minimum", "arctan2", "hypot", "logaddexp", "floor_divide", "mod", "where",
    "fmod", "copysign",
)

CONSTANTS = {
    "LN2": 0.6931471805599453,
    "LN10": 2.302585092994046,
    "TWO_OVER_SQRT_PI": 1.1283791670955126,
}

