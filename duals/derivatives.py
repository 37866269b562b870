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
  value comes from (Python's and NumPy's rounding decides it).

Adding an operation is one line here (plus a NumPy spelling in ``NUMPY_NAMES`` if its
name differs); the tests iterate the registry, so it is tested automatically.
"""

# name: (value, d value / dx)
UNARY = {
    "neg": ("-x", "-1.0"),
    "square": ("x * x", "2.0 * x"),
    "reciprocal": ("1.0 / x", "-(out * out)"),
    "sqrt": ("sqrt(x)", "0.5 / out"),
    "cbrt": ("cbrt(x)", "1.0 / (3.0 * out * out)"),
    "exp": ("exp(x)", "out"),
    "exp2": ("exp2(x)", "LN2 * out"),
    "expm1": ("expm1(x)", "out + 1.0"),
    "log": ("log(x)", "1.0 / x"),
    "log2": ("log2(x)", "1.0 / (LN2 * x)"),
    "log10": ("log10(x)", "1.0 / (LN10 * x)"),
    "log1p": ("log1p(x)", "1.0 / (1.0 + x)"),
    "sin": ("sin(x)", "cos(x)"),
    "cos": ("cos(x)", "-sin(x)"),
    "tan": ("tan(x)", "1.0 + out * out"),
    "arcsin": ("arcsin(x)", "1.0 / sqrt(1.0 - x * x)"),
    "arccos": ("arccos(x)", "-1.0 / sqrt(1.0 - x * x)"),
    "arctan": ("arctan(x)", "1.0 / (1.0 + x * x)"),
    "sinh": ("sinh(x)", "cosh(x)"),
    "cosh": ("cosh(x)", "sinh(x)"),
    "tanh": ("tanh(x)", "1.0 - out * out"),
    "arcsinh": ("arcsinh(x)", "1.0 / sqrt(x * x + 1.0)"),
    "arccosh": ("arccosh(x)", "1.0 / sqrt(x * x - 1.0)"),
    "arctanh": ("arctanh(x)", "1.0 / (1.0 - x * x)"),
    "abs": ("abs(x)", "sign(x)"),
    "sign": ("sign(x)", "0.0"),
    "erf": ("erf(x)", "TWO_OVER_SQRT_PI * exp(-(x * x))"),
    "erfc": ("erfc(x)", "-TWO_OVER_SQRT_PI * exp(-(x * x))"),
    "expit": ("expit(x)", "out * (1.0 - out)"),
}

# name: (value, d value / dx, d value / dy)
BINARY = {
    "add": ("x + y", "1.0", "1.0"),
    "sub": ("x - y", "1.0", "-1.0"),
    "mul": ("x * y", "y", "x"),
    "div": ("x / y", "1.0 / y", "-(out / y)"),
    "pow": ("x ** y",
            "where(y == 0.0, 0.0, y * x ** (y - 1.0))",
            "where(x == 0.0, 0.0, out * log(x))"),
    "maximum": ("maximum(x, y)",
                "where(x > y, 1.0, where(x == y, 0.5, 0.0))",
                "where(y > x, 1.0, where(x == y, 0.5, 0.0))"),
    "minimum": ("minimum(x, y)",
                "where(x < y, 1.0, where(x == y, 0.5, 0.0))",
                "where(y < x, 1.0, where(x == y, 0.5, 0.0))"),
    "arctan2": ("arctan2(x, y)", "y / (x * x + y * y)", "-(x / (x * x + y * y))"),
    "hypot": ("hypot(x, y)", "x / out", "y / out"),
    "logaddexp": ("logaddexp(x, y)", "exp(x - out)", "exp(y - out)"),
    "floor_divide": ("floor_divide(x, y)", "0.0", "0.0"),
    "mod": ("mod(x, y)", "1.0", "-floor_divide(x, y)"),
}

# entries whose zero partial means "this argument is not the one selected" (the branch not
# taken): that contribution is exactly zero even for an infinite or NaN (co)tangent
SELECTING = {"maximum", "minimum"}

# entries with jumps: derivatives hold between them, finite differences fail across them
DISCONTINUOUS = {"sign", "floor_divide", "mod"}

# the NumPy name of each primitive whose name differs (for dnp.* and __array_ufunc__)
NUMPY_NAMES = {
    "neg": ("negative",),
    "add": ("add",),
    "sub": ("subtract",),
    "mul": ("multiply",),
    "div": ("divide", "true_divide"),
    "pow": ("power", "float_power"),
    "abs": ("abs", "absolute", "fabs"),
    "mod": ("mod", "remainder"),
}

# where each primitive lives in the public namespace when not at the top of duals.numpy
SUBMODULE = {"erf": "special", "erfc": "special", "expit": "special"}

# functions that formulas may call, besides + - * / ** and comparisons
VOCABULARY = (
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "abs", "sign", "erf", "erfc", "expit",
    "maximum", "minimum", "arctan2", "hypot", "logaddexp", "floor_divide", "mod", "where",
)

CONSTANTS = {
    "LN2": 0.6931471805599453,
    "LN10": 2.302585092994046,
    "TWO_OVER_SQRT_PI": 1.1283791670955126,
}

