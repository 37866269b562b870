"""Compiled reverse mode of the decompositions: np.linalg.eigh, eigvalsh, svd, qr, pinv, lstsq on adjoints
(duals/jit/adjoint_decompositions.py; svd(a, compute_uv=False) in duals/jit/singular_values.py).

Kernels written as a scientist writes them (a spectral energy, a least-squares fit, a projection, a
QR solve, a nuclear norm, distances to the ranges of a matrix), differentiated by the compiled
grad, vjp, jacrev, hessian and hvp of the dispatcher and checked against the Python path run on
the same function's Python source (``f.py_func``: duals' NumPy rules, an independent
implementation; compiled forward mode where the Python path cannot run the code, and
tests/test_jit_decompositions.py checks compiled forward mode against the Python path), central
differences of the plain function (of the compiled gradient, for second order), the adjoint
identity, and the plain call's values bit for bit; where a decomposition has no derivative,
forward mode's LinAlgError and message. Every compiled jacfwd and hessian uses LANES lanes.
(Compiled forward mode of a decomposition costs 10 to 30 s of compilation per function, the
reason the Python path is the reference here.)
"""
import numba
import numpy as np
import pytest

import duals
from finite_differences import central_differences
from lanes import LANES

njit = numba.njit(cache=True)

# the plain calls multiply slices (u[:, :1] @ vh[:1, :]), which Numba says are faster contiguous
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")


def jacfwd(f, argnums=0):
    return duals.jacfwd(f, argnums=argnums, chunk_size=LANES)


def hessian(f, argnums=0):
    return duals.hessian(f, argnums=argnums, chunk_size=LANES)


def close(got, want, rtol=1e-10, atol=1e-12):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol, atol)
        return
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- user code, unchanged

@njit
def spectral_energy(K):
    """The sum of squared eigenvalues of a stiffness matrix, plus how much the first degree of
    freedom takes part in the softest mode (squared, so LAPACK's sign drops out)."""
    w, v = np.linalg.eigh(K)
    return np.sum(w ** 2) + v[0, 0] ** 2


@njit
def chain_frequencies(k):
    """The squared frequencies of unit masses joined by springs of stiffness k (ends fixed), in a
    matrix the code fills itself, and the participation of the first mass in the softest mode."""
    n = k.shape[0] - 1
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] = k[i] + k[i + 1]
        if i + 1 < n:
            K[i, i + 1] = -k[i + 1]
            K[i + 1, i] = -k[i + 1]
    w, v = np.linalg.eigh(K)
    return np.sum(np.sqrt(w)) + v[0, 0] ** 2


@njit
def spectral_gap(K):
    w = np.linalg.eigvalsh(K)
    return w[-1] - w[0] + 0.1 * np.sum(w ** 3)


@njit
def nuclear_norm(A):
    return np.sum(np.linalg.svd(A, compute_uv=False))


@njit
def rank_one(A):
    """The best rank-1 approximation (Eckart–Young), from the reduced SVD."""
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    return s[0] * (u[:, :1] @ vh[:1, :])


@njit
def rank_one_misfit(A, B):
    """How far B is from the best rank-1 approximation of A, and the nuclear norm of A."""
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    R = B - s[0] * (u[:, :1] @ vh[:1, :])
    return np.sum(R * R) + np.sum(s)


@njit
def distances_to_ranges(A, y, z):
    """Squared distances of y from the range of A and of z from the range of Aᵀ, read from the
    extra vectors of the full SVD (one at most, so they have a derivative), plus the nuclear norm."""
    U, s, Vh = np.linalg.svd(A)
    k = s.shape[0]
    p = U[:, k:].T @ y
    q = Vh[k:, :] @ z
    return np.sum(p * p) + np.sum(q * q) + np.sum(s)


@njit
def fit(A, b):
    """A least-squares fit: the size of the coefficients, the residual, and the condition number."""
    x, residuals, rank, s = np.linalg.lstsq(A, b)
    return np.sum(x * x) + np.sum(residuals) + s[0] / s[-1]


@njit
def residual_norm(A, b):
    x = np.linalg.lstsq(A, b)[0]
    r = A @ x - b
    return np.sqrt(np.sum(r * r))


@njit
def projection(A, y):
    """The squared length of y's projection onto the range of A, by the pseudo-inverse."""
    p = A @ (np.linalg.pinv(A) @ y)
    return p @ p


@njit
def qr_solve(A, b):
    """The least-squares coefficients by QR (R x = Qᵀ b) and their squared length."""
    Q, R = np.linalg.qr(A)
    x = np.linalg.solve(R, Q.T @ b)
    return x @ x


@njit
def qr_energy(A):
    Q, R = np.linalg.qr(A)
    return np.sum(Q ** 3) + np.sum(R * R * R)


@njit
def eigenpairs(K):
    return np.linalg.eigh(K)


@njit
def reduced_svd(A):
    return np.linalg.svd(A, full_matrices=False)


@njit
def full_svd(A):
    return np.linalg.svd(A)


@njit
def qr_of(A):
    return np.linalg.qr(A)


@njit
def pinv_of(A):
    return np.linalg.pinv(A)


@njit
def least_squares(A, b):
    x, residuals, rank, s = np.linalg.lstsq(A, b)
    return x, residuals, s


RNG = np.random.default_rng(16)
TALL, WIDE, SQUARE = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 3))
STIFFNESS = np.array([[4.0, -1.0, 0.3], [-1.0, 3.0, -1.2], [0.3, -1.2, 2.0]])
SPRINGS = np.array([1.0, 2.0, 1.5, 3.0, 0.7, 1.2, 2.4, 0.9, 1.8, 1.1])
B = {4: RNG.normal(size=4), 3: RNG.normal(size=3)}
B2 = {4: RNG.normal(size=(4, 2)), 3: RNG.normal(size=(3, 2))}
SHAPES = pytest.mark.parametrize("A", [TALL, WIDE, SQUARE], ids=["tall", "wide", "square"])


def every(args):
    """argnums of every argument (one compiled specialisation per function in this file)."""
    return tuple(range(len(args)))


def reference_jacfwd(f, argnums=0):
    """The Python path's jacfwd of the dispatcher's Python source (duals' NumPy rules)."""
    return duals.jacfwd(f.py_func, argnums=argnums)


def gradient_matches(f, args, python_path=True):
    """compiled grad of ``f`` = the Python path's gradient of its source (compiled jacfwd where
    the Python path cannot run it) = central differences of the plain call, for every argument."""
    got = duals.grad(f, argnums=every(args))(*args)
    if python_path:
        close(got, duals.grad(f.py_func, argnums=every(args))(*args))
    else:
        close(got, jacfwd(f, every(args))(*args))
    for k, g in enumerate(got):
        close(g, central_differences(f, list(args), k), rtol=1e-6, atol=1e-7)
    return got if len(args) > 1 else got[0]


# ---------------------------------------------------------------- gradients

def test_eigh_gradient_reads_the_lower_triangle_as_lapack_does():
    got = gradient_matches(spectral_energy, (STIFFNESS,))
    assert np.all(np.triu(got, 1) == 0.0)


def test_eigh_of_a_matrix_the_code_fills_itself():
    gradient_matches(chain_frequencies, (SPRINGS,), python_path=False)   # stores into an array it made


def test_eigvalsh_gradient_and_its_closed_form():
    got = gradient_matches(spectral_gap, (STIFFNESS,))
    w, v = np.linalg.eigh(STIFFNESS)
    weights = 0.3 * w ** 2 + np.array([-1.0, 0.0, 1.0])  # dλ_i/dK = v_i v_iᵀ, the lower triangle counted twice
    want = sum(c * (2.0 * np.outer(v[:, i], v[:, i]) - np.diag(v[:, i] ** 2)) for i, c in enumerate(weights))
    close(got, np.tril(want), rtol=1e-10)


@SHAPES
def test_svd_gradients_for_every_form(A):
    gradient_matches(nuclear_norm, (A,))                                  # compute_uv=False
    gradient_matches(rank_one_misfit, (A, np.ones(A.shape)))              # full_matrices=False
    gradient_matches(distances_to_ranges, (A, B[A.shape[0]], B[A.shape[1]]))   # full_matrices=True


@SHAPES
def test_lstsq_gradients_with_one_and_two_right_hand_sides(A):
    m = A.shape[0]
    both = gradient_matches(fit, (A, B[m]))
    gradient_matches(fit, (A, B2[m]))
    close(duals.grad(fit, argnums=1)(A, B[m]), both[1])   # a constant matrix: its singular values stay plain
    if A is TALL:
        gradient_matches(residual_norm, (A, B[m]))


@SHAPES
def test_pinv_projection_and_qr_gradients(A):
    gradient_matches(projection, (A, B[A.shape[0]]))
    gradient_matches(qr_energy, (A,))
    if A is not WIDE:
        gradient_matches(qr_solve, (A, B[A.shape[0]]))


def test_value_and_grad_gives_the_plain_value():
    for f, args in ((spectral_energy, (STIFFNESS,)), (fit, (TALL, B[4])), (nuclear_norm, (WIDE,))):
        value, _ = duals.value_and_grad(f, argnums=every(args))(*args)
        assert value == f(*args)


# ---------------------------------------------------------------- vector outputs: vjp, jacrev

CASES = [(eigenpairs, (STIFFNESS,)), (reduced_svd, (TALL,)), (reduced_svd, (WIDE,)),
         (full_svd, (TALL,)), (full_svd, (WIDE,)), (qr_of, (TALL,)), (qr_of, (WIDE,)),
         (pinv_of, (TALL,)), (pinv_of, (WIDE,)), (least_squares, (TALL, B[4])),
         (least_squares, (WIDE, B2[3])), (least_squares, (SQUARE, B[3]))]
IDS = ["eigh", "svd-tall", "svd-wide", "full-svd-tall", "full-svd-wide", "qr-tall", "qr-wide",
       "pinv-tall", "pinv-wide", "lstsq-tall", "lstsq-wide-2d", "lstsq-square"]


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_vjp_values_are_the_plain_calls_bit_for_bit_and_pull_back_the_transpose(f, args):
    value, pullback = duals.vjp(f, *args)
    for got, plain in zip(value, f(*args)):
        assert np.array_equal(got, plain)
    cotangents = tuple(RNG.normal(size=np.shape(v)) for v in value)
    pulled = pullback(cotangents)[0]
    forward = reference_jacfwd(f)(*args)
    want = sum(np.tensordot(c, J, axes=c.ndim) for c, J in zip(cotangents, forward))
    close(pulled, want)   # the adjoint identity: uᵀ(J v) = (Jᵀ u)ᵀ v for every v


def test_jacrev_of_a_rank_one_approximation_equals_jacfwd_and_differences():
    got = duals.jacrev(rank_one)(TALL)
    close(got, reference_jacfwd(rank_one)(TALL))
    close(got, central_differences(rank_one, [TALL], 0), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- second order: forward over reverse

@pytest.mark.parametrize("f, args", [(chain_frequencies, (SPRINGS,)), (spectral_gap, (STIFFNESS,)),
                                     (nuclear_norm, (TALL,)), (rank_one_misfit, (WIDE, np.ones((3, 4)))),
                                     (fit, (TALL, B[4])), (projection, (WIDE, B[3])),
                                     (qr_solve, (TALL, B[4]))],
                         ids=["eigh", "eigvalsh", "svd-values", "svd", "lstsq", "pinv", "qr"])
def test_hessian_of_the_dispatcher_equals_differences_of_its_gradient(f, args):
    H = hessian(f)(*args)   # nine or more inputs: forward over reverse
    gradient = duals.grad(f, argnums=every(args))   # the specialisation the gradient tests compiled
    want = central_differences(lambda a: gradient(a, *args[1:])[0], [args[0]], 0)
    close(H, want, rtol=1e-5, atol=1e-6)


@numba.njit
def two_by_two_energy(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 3) + v[0, 1] ** 2


def test_hessian_of_few_inputs_of_a_decomposition_is_forward_over_reverse():
    # four inputs: forward over forward would refuse eigh over nested duals
    A = np.array([[2.0, 0.3], [0.3, 1.0]])
    gradient = duals.grad(two_by_two_energy)
    want = central_differences(gradient, [A], 0)
    close(duals.hessian(two_by_two_energy)(A), want, rtol=1e-6, atol=1e-7)
    close(duals.hessian(two_by_two_energy)(A + 0.1 * np.eye(2)),
          central_differences(gradient, [A + 0.1 * np.eye(2)], 0), rtol=1e-6, atol=1e-7)


def test_hvp_of_the_dispatcher_is_the_hessian_times_the_direction():
    v = RNG.normal(size=(3, 3))
    gradient = duals.grad(spectral_gap)
    want = central_differences(lambda t: gradient(STIFFNESS + t * v), [0.0], 0)
    close(duals.hvp(spectral_gap, STIFFNESS, v), want, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- where there is no derivative

def test_eigh_at_a_repeated_eigenvalue_raises_and_eigvalsh_does_not():
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue.*eigvalsh"):
        duals.grad(spectral_energy)(np.eye(3))
    close(duals.grad(spectral_gap)(np.eye(3)), reference_jacfwd(spectral_gap)(np.eye(3)))
    with pytest.raises(np.linalg.LinAlgError, match="eigvalsh under forward over reverse.*repeated"):
        hessian(spectral_gap)(np.eye(3))


def test_svd_where_it_has_no_derivative_raises_as_forward_mode_does():
    deficient = np.outer(B[4], B[3])
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        duals.grad(rank_one_misfit, argnums=(0, 1))(deficient, deficient)
    with pytest.raises(np.linalg.LinAlgError, match="repeated singular value"):
        duals.grad(rank_one_misfit, argnums=(0, 1))(np.diag([2.0, 2.0, 1.0]), np.ones((3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="full_matrices=False"):
        duals.grad(distances_to_ranges, argnums=(0, 1, 2))(RNG.normal(size=(5, 3)), np.ones(5), B[3])  # two extra columns


def test_svd_values_alone_have_derivative_zero_at_a_zero_singular_value():
    A = np.array([[3.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    got = duals.grad(nuclear_norm)(A)   # U_r V_rᵀ over the nonzero value: the NumPy path's policy
    close(got, duals.grad(nuclear_norm.py_func)(A))


def test_second_order_of_singular_values_needs_them_distinct():
    orthogonal = 2.0 * np.eye(4)[:, :3]   # three equal singular values: first order is fine
    close(duals.grad(nuclear_norm)(orthogonal), reference_jacfwd(nuclear_norm)(orthogonal))
    with pytest.raises(np.linalg.LinAlgError, match="compute_uv=False. under forward over reverse"):
        hessian(nuclear_norm)(orthogonal)
    with pytest.raises(np.linalg.LinAlgError, match="lstsq under forward over reverse.*normal equations"):
        hessian(fit)(orthogonal, B[4])


def test_qr_pinv_and_lstsq_of_a_rank_deficient_matrix_raise():
    deficient = np.outer(B[4], B[3])
    with pytest.raises(np.linalg.LinAlgError, match="linearly dependent"):
        duals.grad(qr_energy)(deficient)
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient"):
        duals.grad(projection, argnums=(0, 1))(deficient, B[4])
    with pytest.raises(np.linalg.LinAlgError, match="deficient rank"):
        duals.grad(fit, argnums=(0, 1))(deficient, B[4])
