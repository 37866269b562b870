"""Decompositions of dual arrays inside @numba.njit code (duals/jit/decompositions.py).

Kernels written as a Numba user writes them (normal modes of a spring chain, a low-rank
approximation, a QR factorisation, a minimum-norm solve), each
run plain and under duals.jacfwd, checked against the NumPy path (a twin written with duals'
NumPy functions, under duals.jacrev), central differences of the plain function and closed
forms; where the decomposition has no derivative, the NumPy path's policy: LinAlgError. Every
jacfwd uses LANES lanes, as the other compiled-mode tests do (tests/lanes.py).
"""
import numba
import numpy as np
import pytest

import duals
from finite_differences import central_differences
from lanes import LANES

njit = numba.njit(cache=True)


def jacfwd(f, argnums=0):
    return duals.jacfwd(f, argnums=argnums, chunk_size=LANES)


def assert_close(got, want, rtol):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w, rtol)
        return
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def matches(f, reference, *args, argnums=0, rtol=1e-10):
    """jacfwd of the compiled ``f`` equals jacrev of ``reference`` on the NumPy path."""
    got = jacfwd(f, argnums=argnums)(*args)
    assert_close(got, duals.jacrev(reference, argnums=argnums)(*args), rtol)
    return got


# ---------------------------------------------------------------- user code, unchanged

@njit
def normal_modes(k):
    """Frequencies and the first mode shape of masses joined by springs of stiffness k, ends fixed."""
    n = k.shape[0] - 1
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] = k[i] + k[i + 1]
        if i + 1 < n:
            K[i, i + 1] = -k[i + 1]
            K[i + 1, i] = -k[i + 1]
    w, v = np.linalg.eigh(K)
    return np.sqrt(np.linalg.eigvalsh(K)), v[:, 0] * np.sign(v[0, 0]), w


def normal_modes_numpy(k):
    K = np.diag(k[:-1] + k[1:]) - np.diag(k[1:-1], 1) - np.diag(k[1:-1], -1)
    w, v = np.linalg.eigh(K)
    return np.sqrt(np.linalg.eigvalsh(K)), v[:, 0] * np.sign(v[0, 0]), w


@njit
def singular(A):
    """The singular values, the condition number, the best rank-1 approximation, and the full SVD."""
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    U, S, Vh = np.linalg.svd(A)
    return s, s[0] / s[-1], s[0] * np.outer(u[:, 0], vh[0]), U, S, Vh


def low_rank(A):  # the NumPy path of the parts that do not depend on LAPACK's signs
    return singular.py_func(A)[:3]


@njit
def qr_of(A):
    return np.linalg.qr(A)


@njit
def minimum_norm(A, b):
    return np.linalg.pinv(A) @ b


@njit
def eigenvalues(A):
    return np.linalg.eigvalsh(A)


@njit
def general_eigenvalues(A):
    return np.linalg.eig(A)[0]


RNG = np.random.default_rng(11)
TALL, WIDE, SQUARE = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 3))
B4, B3 = RNG.normal(size=4), RNG.normal(size=3)
STIFFNESS = np.array([1.0, 2.0, 1.5, 3.0, 0.7])


# ---------------------------------------------------------------- eigh and eigvalsh

def test_normal_modes_match_the_numpy_path_and_central_differences():
    plain = normal_modes(STIFFNESS)
    for p, w in zip(plain, normal_modes_numpy(STIFFNESS)):
        np.testing.assert_allclose(p, w, rtol=1e-12)
    got = matches(normal_modes, normal_modes_numpy, STIFFNESS)
    for k, g in enumerate(got):
        want = central_differences(lambda s: normal_modes(s)[k], (STIFFNESS,), 0)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_eigenvalue_derivative_is_the_rayleigh_quotient_of_the_change():
    w, v = np.linalg.eigh(SQUARE + SQUARE.T)
    got = jacfwd(eigenvalues)(SQUARE + SQUARE.T)  # reads the lower triangle, as Numba's eigh
    lower = np.tril(np.ones((3, 3)))
    for i in range(3):  # dλ_i/dA_jk = v_ij v_ik (2 v_ij v_ik below the diagonal, which stands for both)
        want = (2.0 * np.outer(v[:, i], v[:, i]) - np.diag(v[:, i] ** 2)) * lower
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-13)


def test_eigenvectors_at_a_repeated_eigenvalue_have_nan_tangents_and_eigenvalues_do_not():
    # forward mode gives the repeated eigenvalues' vectors NaN tangents, and the rest exactly (it
    # raised for the whole function: a user trial's tight-binding energy of benzene, eigenvectors
    # unused); compiled reverse mode, which records every vector, still raises
    repeated = np.array([1.0, 0.0, 1.0])  # two masses, not coupled: K = I, two equal frequencies
    normal_modes(repeated)  # the plain call is fine
    frequencies, mode, values = jacfwd(normal_modes)(repeated)
    assert np.isnan(mode).all() and np.isfinite(frequencies).all() and np.isfinite(values).all()
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue.*compiled forward mode.*eigvalsh"):
        duals.grad(numba.njit(lambda k: np.sum(normal_modes(k)[1])))(repeated)
    np.testing.assert_allclose(jacfwd(eigenvalues)(np.eye(3)).sum(axis=0), np.eye(3))  # the trace
    benzene = 2.0 * np.eye(6, k=1) + 2.0 * np.eye(6, k=-1)
    benzene[0, 5] = benzene[5, 0] = 2.0

    @numba.njit
    def band_energy(s):
        w, c = np.linalg.eigh(-s * benzene)   # (the vectors unused)
        return 2.0 * (w[0] + w[1] + w[2])
    assert jacfwd(band_energy)(1.0) == pytest.approx(band_energy(1.0), rel=1e-12)   # linear in s: E(1) = -16


# ---------------------------------------------------------------- svd

@pytest.mark.parametrize("A", [TALL, WIDE, SQUARE], ids=["one-extra-row", "one-extra-column", "square"])
def test_svd_matches_the_numpy_path_and_central_differences_up_to_one_extra_column(A):
    for p, w in zip(singular(A)[3:], np.linalg.svd(A)):  # the signs are LAPACK's: compared without them
        np.testing.assert_allclose(np.abs(p), np.abs(w), rtol=1e-12, atol=1e-14)
    got = jacfwd(singular)(A)
    assert_close(got[:3], duals.jacrev(low_rank)(A), 1e-10)
    for k, g in enumerate(got):
        want = central_differences(lambda a: singular(a)[k], (A,), 0)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_svd_where_it_has_no_derivative_raises_as_on_the_numpy_path():
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        jacfwd(singular)(np.outer(B4, B3))
    with pytest.raises(np.linalg.LinAlgError, match="repeated singular value"):
        jacfwd(singular)(np.diag([2.0, 2.0, 1.0]))
    with pytest.raises(np.linalg.LinAlgError, match="full_matrices=False"):
        jacfwd(singular)(RNG.normal(size=(5, 3)))  # two extra columns of U


# ---------------------------------------------------------------- qr and pinv

@pytest.mark.parametrize("A", [TALL, WIDE], ids=["tall", "wide"])
def test_qr_matches_the_numpy_path_and_central_differences(A):
    for p, w in zip(qr_of(A), np.linalg.qr(A)):
        np.testing.assert_allclose(p, w, rtol=1e-12, atol=1e-14)
    got = matches(qr_of, qr_of.py_func, A)
    for k, g in enumerate(got):
        want = central_differences(lambda a: qr_of(a)[k], (A,), 0)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("A", [TALL, WIDE], ids=["tall", "wide"])
def test_minimum_norm_solution_matches_the_numpy_path_and_central_differences(A):
    b = B4 if A is TALL else B3
    np.testing.assert_allclose(minimum_norm(A, b), np.linalg.lstsq(A, b)[0], rtol=1e-12)
    got = matches(minimum_norm, minimum_norm.py_func, A, b, argnums=(0, 1))
    np.testing.assert_allclose(got[1], np.linalg.pinv(A), rtol=1e-10)  # linear in b
    for argnum, g in enumerate(got):
        np.testing.assert_allclose(g, central_differences(minimum_norm, (A, b), argnum), rtol=1e-6, atol=1e-8)


def test_qr_and_pinv_of_a_rank_deficient_matrix_raise():
    deficient = np.outer(B4, B3)
    minimum_norm(deficient, B4)  # the plain calls are fine
    with pytest.raises(np.linalg.LinAlgError, match="linearly dependent"):
        jacfwd(qr_of)(deficient)
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient"):
        jacfwd(minimum_norm, argnums=(0, 1))(deficient, B4)


@pytest.mark.parametrize("corner, dependent", [(1e-15, False), (3e-16, True)])
def test_a_wide_qr_judges_its_leading_block_alike_in_every_mode(corner, dependent):
    """The leading 2 x 2 block of a 2 x 6 matrix, |R[1, 1]| / |R|max = ``corner``, judged at
    2 eps (the block's own rank tolerance) by the Python path, compiled forward and compiled
    reverse mode alike: 1e-15 is independent (below 6 eps, the whole matrix's), 3e-16 is not."""
    wide = np.array([[1.0, 1.0, 0.3, 0.2, 0.5, 0.1], [0.0, corner, 0.7, 0.4, 0.9, 0.6]])
    qr_of(wide)  # the plain call is fine
    ways = [lambda: duals.jacfwd(lambda a: duals.numpy.linalg.qr(a)[1])(wide),
            lambda: jacfwd(qr_of)(wide),
            lambda: duals.jacrev(qr_of)(wide)]
    for way in ways:
        if dependent:
            with pytest.raises(np.linalg.LinAlgError, match="linearly dependent"):
                way()
        else:
            got = way()
            assert all(np.isfinite(part).all() for part in (got if isinstance(got, tuple) else (got,)))


# ---------------------------------------------------------------- what stays refused

def test_nested_duals_and_eig_are_refused_naming_the_function():
    with pytest.raises(TypeError, match=r"^hessian: np\.linalg\.eigvalsh of nested duals"):
        duals.jit.compiled_hessian(eigenvalues, chunk_size=LANES)(SQUARE)
    with pytest.raises(TypeError, match=r"^jacfwd: np\.linalg\.eig of dual numbers is not supported"):
        jacfwd(general_eigenvalues)(SQUARE)
