"""Polynomials: ``polyval`` (Horner's rule), ``vander`` (repeated products), ``polyfit`` (NumPy's
column-scaled least squares), ``roots`` (the companion matrix's ``linalg.eigvals``), ``poly`` (one
convolution per root) and the coefficient arithmetic ``polyadd``, ``polysub``, ``polymul``,
``polyder``, ``polyint``: each as NumPy computes it, composed from primitives, so its derivatives of every order
are exact.

>>> import duals
>>> duals.grad(lambda c: np.polyval(c, 2.0))(np.array([1.0, 0.0, 0.0])).tolist()
[4.0, 2.0, 1.0]
"""
import numpy as np

from ..core import Tracer
from . import dtype_of, export, innermost, list_as_array, ndim_of as ndim, shape_of as shape
from .assembly import operand
from .products import convolve
from .shape import concatenate, getitem, reshape, stack


def _traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


def _traced_within(*args):
    """Whether an argument, or an item of a list or tuple argument, is traced."""
    return any(_traced(*a) if isinstance(a, (list, tuple)) else _traced(a) for a in args)


@export()
def polyval(p, x):
    """polyval(p, x): the polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule.

    Coefficients and points may both be traced.

    >>> float(polyval([1.0, 0.0, -1.0], 3.0))
    8.0
    """
    if isinstance(p, Tracer):
        coeffs = [getitem(p, k) for k in range(shape(p)[0])]
    elif isinstance(p, (list, tuple)):
        coeffs = list(p)
    else:
        coeffs = list(np.asarray(p))
    if not coeffs or not (_traced(x, *coeffs)):
        return np.polyval(p if not coeffs else np.asarray([innermost(c) for c in coeffs]), x)
    x = operand(x)
    y = coeffs[0]
    for c in coeffs[1:]:
        y = y * x + c
    if len(coeffs) == 1:
        y = y + 0.0 * x  # the polynomial's shape is that of x (NumPy's)
    return y


@export()
def vander(x, N=None, increasing=False):
    """vander(x, N=None, increasing=False): the Vandermonde matrix, columns ``x**(N-1), ..., x, 1``
    (reversed when ``increasing``), built by repeated products so the derivative is exact at 0.

    >>> vander(np.array([2.0, 3.0]), 3).tolist()
    [[4.0, 2.0, 1.0], [9.0, 3.0, 1.0]]
    """
    if not isinstance(x, Tracer):
        return np.vander(x, N, increasing)
    x = operand(x)
    if ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = shape(x)[0] if N is None else int(N)
    if N < 0:
        raise ValueError("N must be non-negative")
    columns, power = [], None
    for k in range(N):
        power = np.ones(shape(x), dtype=np.result_type(innermost(x).dtype, float)) if k == 0 else (
            x if k == 1 else power * x)
        columns.append(power)
    if not columns:
        return np.zeros(shape(x) + (0,), dtype=innermost(x).dtype)
    return stack(columns if increasing else columns[::-1], axis=1)


@export()
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """polyfit(x, y, deg, rcond=None, full=False, w=None): least-squares polynomial coefficients,
    highest power first (NumPy's algorithm: a column-scaled Vandermonde matrix and ``lstsq``);
    ``x``, ``y`` and ``w`` may be traced. With ``full``, also the residuals, rank, singular values
    and ``rcond``.

    >>> np.round(polyfit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]), 1), 12).tolist()
    [2.0, 1.0]
    """
    if not _traced(x, y, w):
        return np.polyfit(x, y, deg, rcond, full, w, cov)
    if cov:
        raise TypeError("polyfit(..., cov=True) of traced values is not supported by duals; take the "
                        "coefficients' derivatives from polyfit(...) and the covariance from a plain call")
    from .least_squares import lstsq
    from .elementwise import sqrt
    from .reductions import sum as _sum
    order = int(deg) + 1
    x, y = operand(x) + 0.0, operand(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if ndim(x) != 1:
        raise TypeError("expected 1D vector for x")
    if shape(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if ndim(y) < 1 or ndim(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape(x)[0] != shape(y)[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = shape(x)[0] * np.finfo(innermost(x).dtype).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = operand(w) + 0.0
        if ndim(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape(w)[0] != shape(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * reshape(w, (-1, 1))
        rhs = rhs * (w if ndim(rhs) == 1 else reshape(w, (-1, 1)))
    scale = sqrt(_sum(lhs * lhs, axis=0))
    coefficients, residuals, rank, singular = lstsq(lhs / scale, rhs, rcond)
    coefficients = (coefficients.T / scale).T
    if full:
        return coefficients, residuals, rank, singular, rcond
    return coefficients


def _plain_zero(c):
    return not isinstance(c, Tracer) and np.ndim(c) == 0 and c == 0


@export()
def roots(p):
    """roots(p): the roots of the polynomial with coefficients ``p`` (highest power first), as
    NumPy finds them: the eigenvalues of the companion matrix, differentiated as
    ``linalg.eigvals``; a repeated root, which has no derivative, raises ``LinAlgError``.

    A root moves with every coefficient (``dr = -Σ dp_j r^(n-j) / p'(r)``), those that are zero
    included: where NumPy strips zero coefficients at either end, duals strips only plain zeros
    (constants in a list); a traced zero at the end stays in the companion matrix (the root 0
    it makes and the others move with it), and the roots come in NumPy's order, equal to its
    values up to rounding. A traced zero leading coefficient is refused.

    >>> roots([1.0, -3.0, 2.0]).tolist()
    [2.0, 1.0]
    """
    if not _traced_within(p):
        return np.roots(p)
    appended = 0
    if isinstance(p, (list, tuple)):
        p = list(p)
        while p and _plain_zero(p[0]):
            p.pop(0)
        while p and _plain_zero(p[-1]):
            p.pop()
            appended += 1
    p = list_as_array(p)
    if ndim(p) != 1:
        raise ValueError("Input must be a rank-1 array.")
    values = np.asarray(innermost(p))
    if values[0] == 0:
        raise TypeError("np.roots of traced coefficients whose leading one is 0: NumPy drops it, "
                        "and a root comes in from infinity as it moves, so its derivative is not "
                        "defined; leave that coefficient out of the array")
    n = shape(p)[0] - 1
    if n == 0:
        found = np.zeros(0, np.result_type(values.dtype, float))
    else:
        from .eigen import eigvals, refuse_repeated_roots
        numpys = np.roots(values)
        companion = concatenate([reshape(-getitem(p, slice(1, None)) / getitem(p, 0), (1, n)),
                                 np.eye(n - 1, n)])
        refuse_repeated_roots(np.asarray(innermost(companion)))   # the policy, named
        found = eigvals(companion)
        if values[-1] == 0:   # NumPy's order: its roots with the zeros last
            at = np.asarray(innermost(found))
            order = np.argmin(np.abs(numpys[:, None] - at[None, :]), axis=1)
            if np.any(np.sort(order) != np.arange(n)):
                raise np.linalg.LinAlgError("roots: the roots differ from NumPy's beyond rounding; "
                                            "please report these coefficients")
            found = getitem(found, order)
    if appended:
        found = concatenate([found, np.zeros(appended, innermost(found).dtype)])
    return found


@export()
def poly(seq_of_zeros):
    """poly(seq_of_zeros): the coefficients of the monic polynomial with these roots, highest
    power first (of a square matrix: its characteristic polynomial, by ``linalg.eigvals``), as
    NumPy computes them: one convolution with ``[1, -r]`` per root; real when the roots come in
    conjugate pairs (NumPy's test, on their values).

    >>> poly(np.array([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    if not _traced_within(seq_of_zeros):
        return np.poly(seq_of_zeros)
    zeros = list_as_array(seq_of_zeros)
    if ndim(zeros) == 0:
        zeros = reshape(zeros, (1,))
    s = shape(zeros)
    if len(s) == 2 and s[0] == s[1] and s[0] != 0:
        from .eigen import eigvals
        zeros = eigvals(zeros)
    elif len(s) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if shape(zeros)[0] == 0:
        return 1.0
    from .complex_parts import real
    a = np.ones(1, np.result_type(innermost(zeros).dtype, float))
    for k in range(shape(zeros)[0]):
        a = convolve(a, stack([np.ones((), a.dtype), -getitem(zeros, k)]), mode="full")
    values = np.asarray(innermost(zeros))
    if np.iscomplexobj(values) and np.all(np.sort(values) == np.sort(values.conjugate())):
        a = real(a)
    return a


def _coefficients(p):
    """A sequence of coefficients (traced or plain, a list of them too) as a 1-d operand."""
    p = list_as_array(p)
    return reshape(operand(p), (1,)) if ndim(p) == 0 else operand(p)


def _padded_pair(a1, a2):
    """The two coefficient sequences, the shorter one padded with leading zeros (NumPy's polyadd)."""
    a1, a2 = _coefficients(a1), _coefficients(a2)
    n1, n2 = shape(a1)[0], shape(a2)[0]
    if n1 < n2:
        a1 = concatenate([np.zeros(n2 - n1, dtype_of(a1)), a1])
    elif n2 < n1:
        a2 = concatenate([np.zeros(n1 - n2, dtype_of(a2)), a2])
    return a1, a2


@export()
def polyadd(a1, a2):
    """polyadd(a1, a2): the sum of two polynomials' coefficients, the shorter padded in front.

    >>> polyadd(np.array([1.0, 2.0]), np.array([1.0, 0.0, 3.0])).tolist()
    [1.0, 1.0, 5.0]
    """
    if not _traced_within(a1, a2):
        return np.polyadd(a1, a2)
    a1, a2 = _padded_pair(a1, a2)
    return a1 + a2


@export()
def polysub(a1, a2):
    """polysub(a1, a2): the difference of two polynomials' coefficients, as :func:`polyadd`.

    >>> polysub(np.array([1.0, 2.0]), np.array([1.0, 0.0, 3.0])).tolist()
    [-1.0, 1.0, -1.0]
    """
    if not _traced_within(a1, a2):
        return np.polysub(a1, a2)
    a1, a2 = _padded_pair(a1, a2)
    return a1 - a2


@export()
def polyder(p, m=1):
    """polyder(p, m=1): the coefficients of the ``m``-th derivative of a polynomial.

    >>> polyder(np.array([1.0, 2.0, 3.0])).tolist()
    [2.0, 2.0]
    """
    if not _traced_within(p):
        return np.polyder(p, m)
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _coefficients(p)
    for _ in range(m):
        n = shape(p)[0] - 1
        p = getitem(p, slice(None, -1)) * np.arange(n, 0, -1)
    return p


@export()
def polyint(p, m=1, k=None):
    """polyint(p, m=1, k=None): the coefficients of the ``m``-th antiderivative of a polynomial,
    integration constants ``k`` (traced or plain; zeros by default).

    >>> polyint(np.array([3.0, 2.0])).tolist()
    [1.5, 2.0, 0.0]
    """
    traced = _traced_within(p, k)
    if not traced:
        return np.polyint(p, m, k)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = np.zeros(m) if k is None else _coefficients(k)
    if shape(k)[0] == 1 and m > 1:
        k = getitem(k, 0) * np.ones(m)
    if shape(k)[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _coefficients(p)
    for j in range(m):
        p = concatenate([p / np.arange(shape(p)[0], 0, -1), reshape(getitem(k, j) + 0.0 * getitem(p, 0), (1,))])
    return p


@export()
def polymul(a1, a2):
    """polymul(a1, a2): the coefficients of the product of two polynomials (a convolution), the
    leading zeros that NumPy's ``poly1d`` drops dropped first: plain ones in a list; a traced zero
    leading coefficient is refused (dropping it would drop its derivative).

    >>> polymul(np.array([1.0, 2.0]), np.array([1.0, -1.0])).tolist()
    [1.0, 1.0, -2.0]
    """
    if not _traced_within(a1, a2):
        return np.polymul(a1, a2)
    return convolve(_leading_trimmed(a1), _leading_trimmed(a2))


def _leading_trimmed(p):
    if isinstance(p, (list, tuple)):
        p = list(p)
        while len(p) > 1 and _plain_zero(p[0]):
            p.pop(0)
    p = _coefficients(p)
    if shape(p)[0] > 1 and isinstance(p, Tracer) and np.asarray(innermost(p))[0] == 0:
        raise TypeError("np.polymul of traced coefficients whose leading one is 0: NumPy drops it "
                        "(numpy.poly1d), and with it that coefficient's derivative; leave the zero "
                        "out of the array")
    return p
