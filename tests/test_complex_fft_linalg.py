"""np.fft against the explicit DFT matrix, and complex linear algebra against finite differences
(both real directions) and the adjoint identity of JAX's convention."""
import numpy as np
import pytest

import duals

RNG = np.random.default_rng(23)
NORMS = [None, "ortho", "forward"]


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def dft_matrix(n, norm, inverse=False):
    j = np.arange(n)
    F = np.exp((2j if inverse else -2j) * np.pi * np.outer(j, j) / n)
    scale = {None: 1.0 if not inverse else 1.0 / n, "ortho": n ** -0.5,
             "forward": 1.0 / n if not inverse else 1.0}[norm]
    return scale * F


def resize(M, m):
    """Columns of the map applied after truncating or zero-padding the input to M's width."""
    out = np.zeros((M.shape[0], m), dtype=M.dtype)
    k = min(m, M.shape[1])
    out[:, :k] = M[:, :k]
    return out


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("inverse", [False, True], ids=["fft", "ifft"])
@pytest.mark.parametrize("m,n", [(6, None), (6, 4), (5, 8)])
def test_fft_jacobian_is_the_dft_matrix(norm, inverse, m, n):
    f = (lambda z: np.fft.ifft(z, n=n, norm=norm)) if inverse else (lambda z: np.fft.fft(z, n=n, norm=norm))
    expected = resize(dft_matrix(n or m, norm, inverse), m)
    z = crandn(m)
    np.testing.assert_allclose(duals.jacfwd(f, holomorphic=True)(z), expected, atol=1e-12)
    np.testing.assert_allclose(duals.jacrev(f, holomorphic=True)(z), expected, atol=1e-12)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m,n", [(6, None), (7, None), (6, 5)])
def test_rfft_forward_is_the_first_rows_and_reverse_their_real_transpose(norm, m, n):
    N = n or m
    R = resize(dft_matrix(N, norm)[: N // 2 + 1], m)
    f = lambda x: np.fft.rfft(x, n=n, norm=norm)  # noqa: E731
    x = RNG.standard_normal(m)
    np.testing.assert_allclose(duals.jacfwd(f)(x), R, atol=1e-12)
    c = crandn(N // 2 + 1)
    pulled = duals.vjp(f, x)[1](c)[0]
    assert not np.iscomplexobj(pulled)
    np.testing.assert_allclose(pulled, np.real(R.T @ c), atol=1e-12)


def irfft_parts(m, n, norm):
    """∂y/∂Re X and ∂y/∂Im X of irfft: y_j = s Σ_k w_k Re(X_k e^{2πi jk/n}) over the half spectrum."""
    k = np.arange(n // 2 + 1)
    w = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0)
    theta = 2 * np.pi * np.outer(np.arange(n), k) / n
    s = {None: 1.0 / n, "ortho": n ** -0.5, "forward": 1.0}[norm]
    return resize(s * w * np.cos(theta), m), resize(-s * w * np.sin(theta), m)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m,n", [(4, None), (4, 7), (4, 9), (5, 6)])
def test_irfft_derivatives_weight_the_hermitian_bins(norm, m, n):
    J_re, J_im = irfft_parts(m, n or 2 * (m - 1), norm)
    f = lambda X: np.fft.irfft(X, n=n, norm=norm)  # noqa: E731
    X = crandn(m)
    np.testing.assert_allclose(f(X), J_re @ X.real + J_im @ X.imag, atol=1e-12)
    for k in range(m):
        e = np.zeros(m)
        e[k] = 1.0
        np.testing.assert_allclose(duals.jvp(f, (X,), (e + 0j,))[1], J_re[:, k], atol=1e-12)
        np.testing.assert_allclose(duals.jvp(f, (X,), (1j * e,))[1], J_im[:, k], atol=1e-12)
    y_bar = RNG.standard_normal(J_re.shape[0])
    np.testing.assert_allclose(duals.vjp(f, X)[1](y_bar)[0], J_re.T @ y_bar - 1j * (J_im.T @ y_bar),
                               atol=1e-12)


@pytest.mark.parametrize("which", ["fft2", "fftn", "ifft2", "ifftn"])
def test_multidimensional_transforms_are_kronecker_products(which):
    a, b = 3, 4
    inverse = which.startswith("i")
    f = getattr(np.fft, which)
    expected = np.kron(dft_matrix(a, "ortho", inverse), dft_matrix(b, "ortho", inverse))
    J = duals.jacfwd(lambda z: f(z, norm="ortho"), holomorphic=True)(crandn(a, b))
    np.testing.assert_allclose(J.reshape(a * b, a * b), expected, atol=1e-12)


def test_fft_along_axes_with_sizes():
    f = lambda z: np.fft.fftn(z, s=(4, 2), axes=(0, 2))  # noqa: E731
    z = crandn(3, 2, 3)
    J = duals.jacfwd(f, holomorphic=True)(z)
    np.testing.assert_allclose(np.einsum("ijkabc,abc->ijk", J, z), f(z), atol=1e-12)


def test_spectral_filter_gradient_against_finite_differences():
    # a real low-pass filter and a loss on the filtered signal: real in, real out, through complex
    mask = np.array([1.0, 1.0, 0.5, 0.0, 0.0])
    f = lambda x: np.sum(np.fft.irfft(np.fft.rfft(x) * mask, n=8) ** 2)  # noqa: E731
    x = RNG.standard_normal(8)
    g = duals.grad(f)(x)
    fd = [(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(8)]
    np.testing.assert_allclose(g, fd, atol=1e-7)
    np.testing.assert_allclose(duals.hessian(f)(x), duals.jacfwd(duals.grad(f))(x), atol=1e-12)


def test_rfft_of_complex_input_raises():
    with pytest.raises(TypeError, match="rfft takes real input"):
        duals.jvp(np.fft.rfft, (crandn(4),), (crandn(4),))


# ---------------------------------------------------------------- linear algebra

A = crandn(3, 3) + 3 * np.eye(3)
B = crandn(3, 2)
HERMITIAN = A + A.conj().T


def check_complex_derivatives(f, args, tol=1e-6):
    """jvp vs central differences along a random complex direction and along i times it, and the
    adjoint identity Re<c, J t> = Re<vjp(c), t>, for every argument."""
    for k, a in enumerate(args):
        base = crandn(*np.shape(a))
        for t in (base, 1j * base):
            tangents = tuple(t if i == k else None for i in range(len(args)))
            out, jt = duals.jvp(f, tuple(args), tangents)
            plus = [a + 1e-6 * t if i == k else x for i, x in enumerate(args)]
            minus = [a - 1e-6 * t if i == k else x for i, x in enumerate(args)]
            fd = (f(*plus) - f(*minus)) / 2e-6
            np.testing.assert_allclose(jt, fd, rtol=tol, atol=tol * max(1.0, np.max(np.abs(fd))))
            c = crandn(*np.shape(out)) if np.iscomplexobj(out) else RNG.standard_normal(np.shape(out))
            pulled = duals.vjp(f, *args)[1](c)[k]
            assert abs(np.sum(c * jt).real - np.sum(pulled * t).real) <= 1e-12 * np.sum(np.abs(c * jt))


@pytest.mark.parametrize("name,f,args", [
    ("solve", np.linalg.solve, (A, B)),
    ("solve-vector", np.linalg.solve, (A, B[:, 0])),
    ("inv", np.linalg.inv, (A,)),
    ("det", np.linalg.det, (A,)),
    ("slogdet-log", lambda a: np.linalg.slogdet(a)[1], (A,)),
    ("slogdet-sign", lambda a: np.linalg.slogdet(a)[0], (A,)),
    ("matmul", np.matmul, (A, B)),
    ("einsum", lambda a, b: np.einsum("ij,jk->ik", a, b), (A, B)),
    ("vdot", np.vdot, (B[:, 0], B[:, 1])),
    ("norm", np.linalg.norm, (B,)),
    ("norm-2", lambda a: np.linalg.norm(a, 2), (A,)),
    ("norm-nuc", lambda a: np.linalg.norm(a, "nuc"), (A,)),
    ("var", np.var, (B,)),
    ("eigvalsh", np.linalg.eigvalsh, (HERMITIAN,)),
    ("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), (A,)),
    ("cholesky", np.linalg.cholesky, (A @ A.conj().T + np.eye(3),)),
    ("qr-Q", lambda a: np.linalg.qr(a)[0], (crandn(4, 3),)),
    ("qr-R", lambda a: np.linalg.qr(a)[1], (crandn(4, 3),)),
    ("qr-wide", lambda a: np.linalg.qr(a)[1], (crandn(2, 3),)),
    ("lstsq", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (crandn(4, 2), crandn(4))),
    ("lstsq-wide", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (crandn(2, 4), crandn(2))),
    ("lstsq-residuals", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], (crandn(4, 2), crandn(4, 2))),
    ("pinv-tall", np.linalg.pinv, (crandn(4, 2),)),
    ("pinv-wide", np.linalg.pinv, (crandn(2, 4),)),
    ("pinv-hermitian", lambda h: np.linalg.pinv(h, hermitian=True), (HERMITIAN,)),
    # svd: each pair (u_i, v_i) has a free phase, so functions that do not depend on it
    ("svd-reconstruction", lambda a: (lambda u, s, vh: (u * s) @ vh)(*np.linalg.svd(a, full_matrices=False)),
     (crandn(4, 3),)),
    ("svd-|U|^2", lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 2, (crandn(4, 3),)),
    ("svd-|Vh|^2-wide", lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[2]) ** 2, (crandn(3, 5),)),
    ("svd-u1-v1", lambda a: (lambda u, s, vh: np.outer(u[:, 0], vh[0]) * s[0])(*np.linalg.svd(a)), (A,)),
    ("cholesky-upper", lambda a: np.linalg.cholesky(a, upper=True), (A @ A.conj().T + np.eye(3),)),
    ("svdvals-wide", lambda b: np.linalg.svd(b.T, compute_uv=False), (B,)),
    ("eigh-values", lambda h: np.linalg.eigh(h)[0], (HERMITIAN,)),
    ("eigh-upper", lambda h: np.linalg.eigh(h, UPLO="U")[0], (HERMITIAN,)),
    ("eigh-|V|^2", lambda h: np.abs(np.linalg.eigh(h)[1]) ** 2, (HERMITIAN,)),
    ("eigh-projector", lambda h: (lambda w, v: (v * np.exp(w)) @ v.conj().T)(*np.linalg.eigh(h)),
     (HERMITIAN,)),
    # linear maps and products: their rules are transposes, unchanged for complex values
    ("reshape-index", lambda a: a.reshape(9)[::2][np.array([0, 3, 3])], (A,)),
    ("transpose-slice", lambda a: a.T[1:, ::-1], (A,)),
    ("concatenate-stack", lambda a, b: np.stack([np.concatenate([a[0], b[:, 1]]), a[:, 2].repeat(2)]),
     (A, B)),
    ("sum-mean-prod", lambda a: np.sum(a, axis=0) * np.mean(a) + np.prod(a, axis=1), (A,)),
    ("cumsum-diff", lambda a: np.diff(np.cumsum(a, axis=1), axis=0), (A,)),
    ("where-take", lambda a: np.where(np.abs(A) > 1.5, a, 2 * a).take([0, 4, 8]), (A,)),
    ("pad-roll-flip", lambda b: np.roll(np.pad(b, 1), 2) + np.flip(np.pad(b, 1)), (B[:, 0],)),
    ("tensordot-outer-kron", lambda a, b: np.tensordot(a, b, 1).sum() * np.outer(b[:, 0], b[:, 1])
     + np.kron(b[:, 0], b[:, 1]).reshape(3, 3), (A, B)),
    ("trace-diagonal-dot", lambda a, b: np.trace(a) * np.diagonal(a) + np.dot(a, b[:, 0]), (A, B)),
    ("convolve-polyval", lambda b: np.convolve(b[:, 0], b[:, 1]) + np.polyval(b[:, 0], 0.3 + 0.2j), (B,)),
    ("broadcast", lambda b: np.broadcast_to(b[:, 0], (2, 3)) * b[:, 1:].T, (B,)),
])
def test_complex_linear_algebra(name, f, args):
    check_complex_derivatives(f, args)


def test_holomorphic_linear_algebra_forward_equals_reverse():
    f = lambda a: np.linalg.solve(a, B) + np.linalg.inv(a)[:, :2] * np.linalg.det(a)  # noqa: E731
    np.testing.assert_allclose(duals.jacfwd(f, holomorphic=True)(A), duals.jacrev(f, holomorphic=True)(A),
                               atol=1e-12)


def test_eigh_eigenvalues_are_real_with_real_tangents():
    w, t = duals.jvp(lambda h: np.linalg.eigh(h)[0], (HERMITIAN,), (crandn(3, 3),))
    assert not np.iscomplexobj(w) and not np.iscomplexobj(t)


def test_eigh_is_not_holomorphic():
    with pytest.raises(TypeError, match="applies eigh, which is not holomorphic"):
        duals.jacfwd(lambda h: np.linalg.eigh(h)[1], holomorphic=True)(HERMITIAN)


def test_svd_vectors_are_gauge_free_where_the_phase_is_free():
    # the derivative keeps v_i's phase: consistent in both modes, not the phase LAPACK picks
    f = lambda a: np.linalg.svd(a, full_matrices=False)[0]  # noqa: E731
    a, t = crandn(4, 3), crandn(4, 3)
    U, dU = duals.jvp(f, (a,), (t,))
    V = np.linalg.svd(a, full_matrices=False)[2].conj().T
    dV = duals.jvp(lambda a: np.linalg.svd(a, full_matrices=False)[2], (a,), (t,))[1].conj().T
    np.testing.assert_allclose(np.imag(np.diag(V.conj().T @ dV)), 0, atol=1e-12)
    c = crandn(4, 3)
    assert abs(np.sum(c * dU).real - np.sum(duals.vjp(f, a)[1](c)[0] * t).real) < 1e-12


def test_complex_svd_extra_columns_raise_unless_unused():
    a = crandn(4, 3)
    with pytest.raises(np.linalg.LinAlgError, match="extra columns of U"):
        duals.jvp(lambda a: np.linalg.svd(a)[1], (a,), (crandn(4, 3),))
    with pytest.raises(np.linalg.LinAlgError, match="full_matrices=False"):
        duals.grad(lambda a: np.sum(np.abs(np.linalg.svd(a)[0])))(a)
    g = duals.grad(lambda a: np.sum(np.linalg.svd(a)[1] ** 2))(a)   # the extras unused: fine
    np.testing.assert_allclose(g, 2 * np.conj(a), atol=1e-12)


def test_hermitian_svd_of_a_complex_matrix_raises():
    with pytest.raises(TypeError, match="svd\\(hermitian=True\\) of a complex matrix"):
        duals.jvp(lambda h: np.linalg.svd(h, hermitian=True)[1], (HERMITIAN,), (crandn(3, 3),))


M3 = RNG.standard_normal((4, 4, 4)) / 10


@pytest.mark.parametrize("name,f,a", [
    ("rfft2", lambda x: np.fft.rfft2(x), M3[0]),
    ("rfftn", lambda x: np.fft.rfftn(x), M3),
    ("rfftn-axes-s", lambda x: np.fft.rfftn(x, s=(6, 3), axes=(0, 2), norm="ortho"), M3),
    ("irfft2", lambda X: np.fft.irfft2(X), np.fft.rfft2(M3[0])),
    ("irfftn", lambda X: np.fft.irfftn(X), np.fft.rfftn(M3)),
    ("irfftn-axes-s", lambda X: np.fft.irfftn(X, s=(6, 3), axes=(0, 2)), np.fft.rfftn(M3)),
    ("fftshift", lambda x: np.fft.fftshift(x), M3[0, :3]),
    ("ifftshift-axes", lambda z: np.fft.ifftshift(z * (1 + 1j), axes=1), M3[0, :3]),
])
def test_real_multidimensional_transforms_and_shifts(name, f, a):
    from duals.testing import check_grads
    np.testing.assert_allclose(duals.jvp(f, (a,), (np.ones_like(a),))[0], f(a), atol=1e-14)
    assert check_grads(f, (a,), order=2)


# ---------------------------------------------------------------- second order

def central_gradient(f, z, v, h=1e-5):
    g = duals.grad(f)
    return (g(z + h * v) - g(z - h * v)) / (2 * h)


@pytest.mark.parametrize("name,f,z", [
    ("fft", lambda z: np.sum(np.abs(np.fft.fft(z * z) * np.linspace(1, 2, 5)) ** 2), crandn(5) / 2),
    ("rfft-irfft", lambda x: np.sum(np.fft.irfft(np.fft.rfft(x) ** 2, n=6) ** 3), RNG.standard_normal(6)),
    ("eigvalsh", lambda a: np.sum(np.exp(np.linalg.eigvalsh(a))), HERMITIAN),
    ("cholesky", lambda a: np.sum(np.abs(np.linalg.cholesky(a @ a.conj().T + np.eye(3))) ** 2), A),
    ("solve-det", lambda a: np.abs(np.linalg.det(a)) ** 2 + np.sum(np.abs(np.linalg.solve(a, B)) ** 2), A),
])
def test_hessian_vector_products_of_real_functions_of_complex_values(name, f, z):
    v = crandn(*np.shape(z)) if np.iscomplexobj(z) else RNG.standard_normal(np.shape(z))
    expected = central_gradient(f, z, v)
    np.testing.assert_allclose(duals.hvp(f, z, v), expected, rtol=1e-6, atol=1e-6 * np.max(np.abs(expected)))


def test_holomorphic_second_derivative_of_det_and_inverse():
    f = lambda a: np.linalg.det(a) + np.sum(np.linalg.inv(a))  # noqa: E731
    H = duals.hessian(f, holomorphic=True)(A)
    first = duals.grad(f, holomorphic=True)
    E = crandn(3, 3)
    expected = (first(A + 1e-6 * E) - first(A - 1e-6 * E)) / 2e-6
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", H, E), expected, rtol=1e-6, atol=1e-6)
