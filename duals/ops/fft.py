"""Discrete Fourier transforms, ``np.fft``: linear maps whose derivatives are transforms again.

Three primitives act along one axis; the public functions compose them with zero padding or
truncation (``n``, ``s``) and with one another (``fft2``, ``fftn`` are 1-D transforms along each
axis in turn; ``rfftn`` is ``rfft`` along the last axis then ``fft`` along the others, ``irfftn``
its inverse; ``fftshift`` is a roll). With ``F`` the ``N``-point DFT matrix
(``F_jk = e^{-2πi jk/N}``, symmetric) and ``s`` the scale that ``norm`` gives the direction
(``"backward"``: 1 forward, ``1/N`` inverse; ``"ortho"``: ``1/√N``; ``"forward"``: ``1/N``
forward, 1 inverse):

* ``dft`` (``fft``, ``ifft``): ``x ↦ s F x`` (``s conj(F) x`` inverse). The JVP is the same
  transform of the tangent and, the matrix being symmetric, so is the VJP (JAX's convention: the
  VJP is the plain transpose, docs/complex.md).
* ``rfft``: ``x ↦ (s F x)[:N//2+1]`` for real ``x``; JVP ``rfft(t)``; VJP ``Re(s F pad(c))``, the
  cotangent zero-padded to ``N`` entries and transformed by the full transform (the transpose of
  the first ``N//2+1`` rows of ``F``), computed as ``irfft(conj(c) / w)`` (defined below) with the
  inverse scale ``s``: a half-size real transform.
* ``irfft``: ``X ↦ y_j = s Σ_k w_k Re(X_k e^{2πi jk/N})``, ``w_0 = 1``, ``w_{N/2} = 1`` for even
  ``N`` and ``w_k = 2`` otherwise: the Hermitian extension of the half spectrum (NumPy ignores the
  imaginary parts of the bins ``0`` and ``N/2``, and so does the derivative). JVP ``irfft(t)``; VJP
  ``w ∘ s conj(F) Re(ȳ)`` on the first ``N//2+1`` bins, i.e. ``w ∘ ifft(ȳ)[:N//2+1]``, computed as
  ``w ∘ conj(rfft(Re ȳ))`` with the forward scale ``s``.

Sparsity: every entry along the transformed axis depends on every entry of its line.
"""
import numpy as np

from ..core import Primitive
from ..index_sets import axis_rule
from . import dtype_of, export, ndim_of as ndim, normalize_axis, shape_of as shape
from .complex_parts import conj, real
from .elementwise import mul
from .shape import concatenate, getitem

NORMS = (None, "backward", "ortho", "forward")


def _dense(m, out, x, *, axis, **params):
    """Every output entry along the axis depends on every input entry of its line."""
    m_out = shape(out)[axis]
    return np.repeat(np.arange(m_out), m), np.tile(np.arange(m), m_out)


def _dft_impl(x, *, axis, norm, inverse):
    return (np.fft.ifft if inverse else np.fft.fft)(x, axis=axis, norm=norm)


dft_p = Primitive("dft", _dft_impl)
dft_p.def_jvp(0, lambda t, out, x, **params: dft_p(t, **params))
dft_p.def_vjp(0, lambda g, out, x, **params: dft_p(g, **params))   # the DFT matrix is symmetric
dft_p.def_sparsity(axis_rule(_dense))


def _rfft_impl(x, *, axis, norm):
    return np.fft.rfft(x, axis=axis, norm=norm)


# the norm whose inverse scale is this norm's forward scale, and the other way round
_DUAL_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _rfft_vjp(g, out, x, *, axis, norm):
    # Re(s F pad(c))_j = s Σ_{k<m} Re(conj(c_k) e^{2πi jk/n}): irfft of conj(c) / w, whose inverse
    # scale is s (a half-size real transform instead of a full complex one)
    n = shape(x)[axis]
    m = shape(g)[axis]
    halved = mul(conj(g), 1.0 / _hermitian_weights(n, m, axis, ndim(x), np.float64))
    return irfft_p(halved, n=n, axis=axis, norm=_DUAL_NORM[norm])


rfft_p = Primitive("rfft", _rfft_impl)
rfft_p.def_jvp(0, lambda t, out, x, **params: rfft_p(t, **params))
rfft_p.def_vjp(0, _rfft_vjp)
rfft_p.def_sparsity(axis_rule(_dense))


def _irfft_impl(x, *, n, axis, norm):
    return np.fft.irfft(x, n=n, axis=axis, norm=norm)


def _hermitian_weights(n, m, axis, nd, dtype):
    """``w`` along ``axis``: 1 for bin 0 (and bin n/2 for even n), 2 for the bins counted twice."""
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[n // 2] = 1.0
    return w.reshape((m,) + (1,) * (-axis - 1)).astype(np.result_type(dtype, np.float64))


def _irfft_vjp(g, out, x, *, n, axis, norm):
    # ifft(Re ȳ)[:m] = conj(rfft(Re ȳ)) with the forward scale equal to irfft's inverse scale
    m = shape(x)[axis]
    spectrum = conj(rfft_p(real(g), axis=axis, norm=_DUAL_NORM[norm]))
    return mul(spectrum, _hermitian_weights(n, m, axis, ndim(x), np.float64))


irfft_p = Primitive("irfft", _irfft_impl)
irfft_p.def_jvp(0, lambda t, out, x, **params: irfft_p(t, **params))
irfft_p.def_vjp(0, _irfft_vjp)
irfft_p.def_sparsity(axis_rule(_dense))


def _resize(x, n, axis):
    """``x`` truncated or zero-padded to ``n`` entries along the (negative) ``axis``, as NumPy's
    ``n=`` does; linear, so its derivatives are those of slicing and concatenation."""
    m = shape(x)[axis]
    if n == m:
        return x
    rest = (slice(None),) * (-axis - 1)
    if n < m:
        return getitem(x, (Ellipsis, slice(0, n)) + rest)
    pad_shape = list(shape(x))
    pad_shape[axis] = n - m
    return concatenate([x, np.zeros(pad_shape, dtype=dtype_of(x))], axis=axis)


def _axis(axis, x, who):
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: axis must be an integer, got {axis!r}")
    return normalize_axis(int(axis), ndim(x))[0] - ndim(x)


def _checked(norm, n, who):
    if norm not in NORMS:
        raise ValueError(f'{who}: invalid norm {norm!r}; use "backward", "ortho" or "forward"')
    if n is not None and (int(n) != n or n < 1):
        raise ValueError(f"{who}: invalid number of data points ({n}) specified")


def _no_out(out, who):
    if out is not None:
        raise TypeError(f"{who}(..., out=...) cannot write a traced value into an array; drop out=")


def _c2c(x, n, axis, norm, inverse, who):
    _checked(norm, n, who)
    axis = _axis(axis, x, who)
    x = _resize(x, shape(x)[axis] if n is None else int(n), axis)
    return dft_p(x, axis=axis, norm=norm, inverse=inverse)


@export("fft.fft")
def fft(a, n=None, axis=-1, norm=None, out=None):
    """fft(a, n=None, axis=-1, norm=None): the 1-D discrete Fourier transform (NumPy's).

    >>> fft(np.array([1.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j)]
    """
    _no_out(out, "fft.fft")
    return _c2c(a, n, axis, norm, False, "fft.fft")


@export("fft.ifft")
def ifft(a, n=None, axis=-1, norm=None, out=None):
    """ifft(a, n=None, axis=-1, norm=None): the inverse 1-D discrete Fourier transform.

    >>> ifft(np.array([3.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j)]
    """
    _no_out(out, "fft.ifft")
    return _c2c(a, n, axis, norm, True, "fft.ifft")


@export("fft.rfft")
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """rfft(a, n=None, axis=-1, norm=None): the transform of real input, bins 0 to n//2.

    >>> rfft(np.array([1.0, 1.0, 1.0, 1.0])).tolist()
    [(4+0j), 0j, 0j]
    """
    _no_out(out, "fft.rfft")
    _checked(norm, n, "fft.rfft")
    if dtype_of(a).kind == "c":
        raise TypeError("fft.rfft takes real input (NumPy discards the imaginary part with a "
                        "warning); take np.real(a) explicitly, or use fft.fft")
    axis = _axis(axis, a, "fft.rfft")
    a = _resize(a, shape(a)[axis] if n is None else int(n), axis)
    return rfft_p(a, axis=axis, norm=norm)


@export("fft.irfft")
def irfft(a, n=None, axis=-1, norm=None, out=None):
    """irfft(a, n=None, axis=-1, norm=None): the real signal of a half spectrum, ``n`` points
    (default ``2 (m - 1)``); the imaginary parts of bin 0 (and n/2) are ignored, as in NumPy.

    >>> irfft(np.array([4.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    _no_out(out, "fft.irfft")
    _checked(norm, n, "fft.irfft")
    axis = _axis(axis, a, "fft.irfft")
    n = 2 * (shape(a)[axis] - 1) if n is None else int(n)
    if n < 1:
        raise ValueError(f"fft.irfft: invalid number of data points ({n}) specified")
    a = _resize(a, n // 2 + 1, axis)
    if dtype_of(a).kind != "c":
        a = a + np.zeros((), dtype=np.result_type(dtype_of(a), 1j))
    return irfft_p(a, n=n, axis=axis, norm=norm)


def _axes_and_sizes(a, s, axes, who):
    nd = ndim(a)
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(int(ax) for ax in axes)
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{who}: s and axes must have the same length, got {s} and {axes}")
    return axes, (None,) * len(axes) if s is None else tuple(s)


def _many(a, s, axes, norm, inverse, who):
    axes, sizes = _axes_and_sizes(a, s, axes, who)
    for ax, n in zip(axes, sizes):   # a multidimensional DFT is the 1-D DFTs along each axis
        a = _c2c(a, n, ax, norm, inverse, who)
    return a


@export("fft.fftn")
def fftn(a, s=None, axes=None, norm=None, out=None):
    """fftn(a, s=None, axes=None, norm=None): the N-D transform (1-D transforms along each axis).

    >>> fftn(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    _no_out(out, "fft.fftn")
    return _many(a, s, axes, norm, False, "fft.fftn")


@export("fft.ifftn")
def ifftn(a, s=None, axes=None, norm=None, out=None):
    """ifftn(a, s=None, axes=None, norm=None): the inverse N-D transform.

    >>> ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    _no_out(out, "fft.ifftn")
    return _many(a, s, axes, norm, True, "fft.ifftn")


@export("fft.fft2")
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """fft2(a, s=None, axes=(-2, -1), norm=None): the 2-D transform over ``axes``.

    >>> fft2(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    _no_out(out, "fft.fft2")
    return _many(a, s, axes, norm, False, "fft.fft2")


@export("fft.ifft2")
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """ifft2(a, s=None, axes=(-2, -1), norm=None): the inverse 2-D transform over ``axes``.

    >>> ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    _no_out(out, "fft.ifft2")
    return _many(a, s, axes, norm, True, "fft.ifft2")


def _real_many(a, s, axes, norm, who):
    """rfftn: rfft along the last of ``axes``, then the complex transform along the others."""
    axes, sizes = _axes_and_sizes(a, s, axes, who)
    out = rfft(a, n=sizes[-1], axis=axes[-1], norm=norm)
    for ax, n in zip(axes[:-1], sizes[:-1]):
        out = _c2c(out, n, ax, norm, False, who)
    return out


def _inverse_real_many(a, s, axes, norm, who):
    """irfftn: the inverse complex transform along all but the last of ``axes``, then irfft."""
    axes, sizes = _axes_and_sizes(a, s, axes, who)
    for ax, n in zip(axes[:-1], sizes[:-1]):
        a = _c2c(a, n, ax, norm, True, who)
    return irfft(a, n=sizes[-1], axis=axes[-1], norm=norm)


@export("fft.rfftn")
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """rfftn(a, s=None, axes=None, norm=None): the N-D transform of real input (``rfft`` along the
    last axis, ``fft`` along the others).

    >>> rfftn(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    _no_out(out, "fft.rfftn")
    return _real_many(a, s, axes, norm, "fft.rfftn")


@export("fft.irfftn")
def irfftn(a, s=None, axes=None, norm=None, out=None):
    """irfftn(a, s=None, axes=None, norm=None): the inverse of :func:`rfftn`.

    >>> irfftn(np.array([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    _no_out(out, "fft.irfftn")
    return _inverse_real_many(a, s, axes, norm, "fft.irfftn")


@export("fft.rfft2")
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """rfft2(a, s=None, axes=(-2, -1), norm=None): :func:`rfftn` over two axes.

    >>> rfft2(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    _no_out(out, "fft.rfft2")
    return _real_many(a, s, axes, norm, "fft.rfft2")


@export("fft.irfft2")
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """irfft2(a, s=None, axes=(-2, -1), norm=None): :func:`irfftn` over two axes.

    >>> irfft2(np.array([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    _no_out(out, "fft.irfft2")
    return _inverse_real_many(a, s, axes, norm, "fft.irfft2")


# the Hermitian transforms are the real ones of the conjugate, with the scale of the other direction
SWAPPED_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


@export("fft.hfft")
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """hfft(a, n=None, axis=-1, norm=None): the real spectrum of a signal with Hermitian symmetry,
    given by its first half: ``irfft(conj(a), n)`` with the scale of the forward direction.

    >>> hfft(np.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    _no_out(out, "fft.hfft")
    _checked(norm, n, "fft.hfft")
    return irfft(conj(a) if dtype_of(a).kind == "c" else a, n, axis, SWAPPED_NORM[norm])


@export("fft.ihfft")
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """ihfft(a, n=None, axis=-1, norm=None): the inverse of :func:`hfft`, ``conj(rfft(a, n))`` with
    the scale of the inverse direction.

    >>> ihfft(np.array([1.0, 1.0, 1.0, 1.0])).real.tolist()
    [1.0, 0.0, 0.0]
    """
    _no_out(out, "fft.ihfft")
    _checked(norm, n, "fft.ihfft")
    return conj(rfft(a, n, axis, SWAPPED_NORM[norm]))


def _shift(x, axes, sign):
    from .assembly import roll
    nd = ndim(x)
    axes = tuple(range(nd)) if axes is None else (axes,) if isinstance(axes, (int, np.integer)) else axes
    axes = normalize_axis(axes, nd)
    return roll(x, tuple(sign * (shape(x)[ax] // 2) for ax in axes), axis=axes)


@export("fft.fftshift")
def fftshift(x, axes=None):
    """fftshift(x, axes=None): the zero-frequency bin moved to the centre (a roll by n // 2).

    >>> fftshift(np.arange(4.0)).tolist()
    [2.0, 3.0, 0.0, 1.0]
    """
    return _shift(x, axes, 1)


@export("fft.ifftshift")
def ifftshift(x, axes=None):
    """ifftshift(x, axes=None): the inverse of :func:`fftshift` (a roll by -(n // 2)).

    >>> ifftshift(np.arange(5.0)).tolist()
    [2.0, 3.0, 4.0, 0.0, 1.0]
    """
    return _shift(x, axes, -1)


@export("fft.fftfreq", value_only=True)
def fftfreq(n, d=1.0, device=None):
    """fftfreq(n, d=1.0): NumPy's sample frequencies (plain values, no derivative).

    >>> fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return np.fft.fftfreq(n, d)


@export("fft.rfftfreq", value_only=True)
def rfftfreq(n, d=1.0, device=None):
    """rfftfreq(n, d=1.0): NumPy's sample frequencies of ``rfft`` (plain values, no derivative).

    >>> rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    return np.fft.rfftfreq(n, d)
