"""How the entry points take a compiled function's arguments: ``argnums`` checked (no repeats,
ints only), keyword arguments bound to their positions, arguments sharing memory refused, and
the messages for constructs that do not compile for duals say what to do."""
import numba
import numpy as np
import pytest

import duals
from finite_differences import central_differences


@numba.njit
def energy(x, k=1.0, p=2):
    return 0.5 * k * np.sum(x ** p)


@numba.njit
def smooth(x, out):
    for i in range(1, x.shape[0] - 1):
        out[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]
    return np.sum(out ** 2)


@numba.njit
def sum_of_squares_up_to(x, n):
    s = 0.0
    for i in range(n):
        s += x[i % x.shape[0]] ** 2
    return s


TRANSFORMS = [duals.grad, duals.value_and_grad, duals.jacfwd, duals.jacrev, duals.hessian]
X = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("compiled", [True, False], ids=["dispatcher", "python"])
def test_an_argument_named_twice_in_argnums_is_refused(transform, compiled):
    f = energy if compiled else energy.py_func
    for argnums in ((0, 0), (1, -2)):
        with pytest.raises(ValueError, match=r"names argument \d twice"):
            transform(f, argnums=argnums)(X, 2.0, 2)


@pytest.mark.parametrize("argnums", [1.0, "0", True, (0, 1.0)])
def test_argnums_that_are_not_ints_are_refused(argnums):
    with pytest.raises(TypeError, match="should be an int or a tuple of ints"):
        duals.grad(energy, argnums=argnums)(X, 2.0)


@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t.__name__)
def test_keyword_arguments_of_a_dispatcher_are_bound_to_their_positions(transform):
    by_keyword = _leaves(transform(energy, argnums=(0, 1))(X, p=2, k=3.0))
    by_position = _leaves(transform(energy, argnums=(0, 1))(X, 3.0, 2))
    assert len(by_keyword) == len(by_position) >= 2
    for a, b in zip(by_keyword, by_position):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'q' \(energy\(x, k=1.0, p=2\)\)"):
        transform(energy)(X, q=1.0)


def _signatures(x, a=1.0, b=100.0, *, c=3):
    pass


def _rest(x, *rest):
    pass


def _positional_only(x, /, y=2):
    pass


CALLS = [(_signatures, (1,), {}), (_signatures, (1,), {"b": 5}), (_signatures, (1, 2), {"c": 4}),
         (_signatures, (), {"x": 1}), (_signatures, (1, 2, 3), {}), (_signatures, (1,), {"b": 3, "a": 2}),
         (_signatures, (1, 2), {"a": 3}), (_signatures, (1,), {"zz": 1}), (_signatures, (1, 2, 3, 4), {}),
         (_signatures, (), {}), (_rest, (1, 2, 3), {}), (_positional_only, (1,), {"y": 3}),
         (_positional_only, (), {"x": 1})]


@pytest.mark.parametrize("f, args, kwargs", CALLS)
def test_a_kept_plan_binds_keywords_exactly_as_the_signature_does(f, args, kwargs):
    """The positions of keyword arguments are worked out once per way of calling and kept; each
    call must give what ``inspect.Signature.bind`` gives, or its error, on the first and later calls."""
    from duals.jit.entry_arguments import _bound, positional

    def outcome(bind):
        try:
            return bind(f, args, kwargs, "grad")
        except TypeError as exc:
            return str(exc)
    expected = outcome(_bound)
    assert outcome(positional) == expected
    assert outcome(positional) == expected


def _leaves(result):
    if isinstance(result, tuple):
        return [leaf for part in result for leaf in _leaves(part)]
    return [np.asarray(result)]


def test_a_differentiated_keyword_argument_matches_central_differences():
    got = duals.grad(energy, argnums=1)(X, k=3.0)
    expected = central_differences(energy, (X, 3.0, 2), 1)
    assert got == pytest.approx(float(expected), rel=1e-8)


ALIASING_CALLS = {
    "grad": lambda c: duals.grad(smooth)(c, c),
    "value_and_grad": lambda c: duals.value_and_grad(smooth)(c, c),
    "jvp": lambda c: duals.jvp(smooth, (c, c), (np.ones(5), None)),
    "vjp": lambda c: duals.vjp(smooth, c, c),
    "jacfwd": lambda c: duals.jacfwd(smooth)(c, c),
    "jacrev": lambda c: duals.jacrev(smooth)(c, c),
    "hessian": lambda c: duals.hessian(smooth)(c, c),
    "a view": lambda c: duals.grad(smooth)(c, c[:]),
}


@pytest.mark.parametrize("name", sorted(ALIASING_CALLS))
def test_a_differentiated_argument_sharing_memory_with_another_is_refused(name):
    """``smooth(c, c)`` writes through ``out`` what it reads through ``x``: on the copies that
    compiled derivatives run on the value would differ from the plain call's."""
    c = np.array([1.0, 2.0, 4.0, 3.0, 1.0])
    with pytest.raises(ValueError, match=r"arguments 0, 1 share memory.*writes into argument 1.*"
                                         r"Pass separate arrays"):
        ALIASING_CALLS[name](c)
    np.testing.assert_array_equal(c, [1.0, 2.0, 4.0, 3.0, 1.0])   # the check ran on copies


@numba.njit
def scale_into(out, x, s):
    """Writes s x into ``out``, a work buffer the caller may pass as a view of x's own buffer."""
    for i in range(x.shape[0]):
        out[i] = s * x[i]
    return np.sum(out * x)


@pytest.mark.parametrize("transform", ["grad", "jvp", "hessian"])
@pytest.mark.parametrize("views", ["shifted", "equal"])
def test_plain_arguments_sharing_memory_are_refused_when_derivatives_are_stored_into_one(transform, views):
    """Neither overlapping array is differentiated, but ``out`` receives derivatives of ``s``:
    the promoting copy gives each its own array of duals, so the plain call's reads of what it
    wrote (42 at s = 2 for the shifted views, d/ds = 93) would be lost (28 and 14 were returned)."""
    b = np.arange(1.0, 7.0)
    out, x = (b[1:4], b[:3]) if views == "shifted" else (b[:3], b[:3])
    call = {"grad": lambda: duals.grad(scale_into, argnums=2)(out, x, 2.0),
            "jvp": lambda: duals.jvp(scale_into, (out, x, 2.0), (None, None, 1.0)),
            "hessian": lambda: duals.hessian(scale_into, argnums=2)(out, x, 2.0)}[transform]
    with pytest.raises(ValueError, match=r"arguments 0, 1 share memory.*writes into argument 0.*receive "
                                         r"derivatives are copies.*Pass separate arrays"):
        call()
    np.testing.assert_array_equal(b, np.arange(1.0, 7.0))   # the check ran on copies
    apart = np.arange(1.0, 7.0)
    value, slope = duals.value_and_grad(scale_into, argnums=2)(apart[3:], apart[:3], 2.0)
    assert (value, slope) == (scale_into(apart[3:].copy(), apart[:3], 2.0), 14.0)   # s sum(x^2), sum(x^2)


@numba.njit
def weighted_norm(x, w):
    return np.sum(w * x * x)


@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t.__name__)
def test_an_argument_passed_twice_and_only_read_is_differentiated_slot_by_slot(transform):
    """``f(x, x)`` that writes into neither cannot tell the two apart: its derivative along one
    argument is the plain call's, exactly as with two separate arrays."""
    x = np.array([0.5, -1.0, 2.0])
    same = _leaves(transform(weighted_norm, argnums=(0, 1))(x, x))
    separate = _leaves(transform(weighted_norm, argnums=(0, 1))(x, x.copy()))
    assert len(same) == len(separate) >= 2
    for a, b in zip(same, separate):
        np.testing.assert_array_equal(a, b)


def test_separate_arrays_are_differentiated_as_usual():
    c = np.array([1.0, 2.0, 4.0, 3.0, 1.0])
    out = np.zeros(5)
    expected = central_differences(lambda x: smooth(x, np.zeros(5)), (c,), 0)
    np.testing.assert_allclose(duals.grad(smooth)(c, out), expected, rtol=1e-7)
    assert not out.any()     # the call ran on a copy of ``out`` (writes stay inside the call)


def test_a_differentiated_loop_count_says_to_leave_it_out_of_argnums():
    with pytest.raises(TypeError, match=r"range\(\).*loop count is an integer; leave that argument out of argnums"):
        duals.grad(sum_of_squares_up_to, argnums=1)(X, 5)
    assert duals.grad(sum_of_squares_up_to)(X, 5).tolist() == [4.0, 8.0, 6.0]
    # jvp has no argnums: its advice is the tangent None (a neuroscience trial passed 0)
    with pytest.raises(TypeError, match=r"range\(\).*loop count is an integer; give that argument the tangent None"):
        duals.jvp(sum_of_squares_up_to, (X, 5), (np.ones(3), 0))
    assert duals.jvp(sum_of_squares_up_to, (X, 5), (np.ones(3), None))[1] == 18.0


@numba.njit
def cast_then_sum(x):
    return x.astype(np.float64).sum()


def test_astype_to_the_same_float_type_is_a_copy_with_its_derivatives():
    assert cast_then_sum(X) == 6.0
    assert duals.grad(cast_then_sum)(X).tolist() == [1.0, 1.0, 1.0]
    assert duals.jacfwd(cast_then_sum)(X).tolist() == [1.0, 1.0, 1.0]


@numba.njit
def cast_to_float64(x):
    return np.float64(x[0]) * x[1]


@numba.njit
def cast_with_float(x):
    return float(x[0]) * x[1]


@numba.njit
def without_cast(x):
    return x[0] * x[1]


@numba.njit
def cast_to_int64(x):
    return np.int64(x[0]) * x[1]


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd], ids=lambda t: t.__name__)
def test_numpy_scalar_casts_of_duals_say_what_to_write(transform):
    with pytest.raises(TypeError, match=r"np\.float64\(x\) of a dual number\. Write float\(x\), which "
                                        r"keeps the derivative.*duals\.stop_gradient"):
        transform(cast_to_float64)(X)
    assert transform(cast_with_float)(X).tolist() == transform(without_cast)(X).tolist()
    with pytest.raises(TypeError, match=r"np\.int64\(x\) of a dual number\. Write int\(x\)"):
        transform(cast_to_int64)(X)


def test_a_call_with_too_few_or_too_many_arguments_says_so_with_the_signature():
    for transform in (duals.grad, duals.jacfwd, duals.jacrev):
        who = transform.__name__
        with pytest.raises(TypeError, match=rf"^{who}: not enough arguments: expected 2, got 1 "
                                            r"\(sum_of_squares_up_to\(x, n\)\)$"):
            transform(sum_of_squares_up_to)(X)
        with pytest.raises(TypeError, match=rf"^{who}: too many arguments: expected 2, got 3"):
            transform(sum_of_squares_up_to)(X, 5, 1.0)


def test_messages_for_a_tuple_of_numbers_and_a_ufunc_writing_into_out():
    """Both came from user trials: a tuple of parameters was told to pass arrays separately, and
    np.exp(x, out) got the generic refusal."""
    @numba.njit
    def decay(x, params):
        return x * params[0] + params[1]
    with pytest.raises(TypeError, match=r"argument 1 is a tuple of numbers; pass them as one float "
                                        r"array \(np\.array\(params\)\)"):
        duals.jacfwd(decay, argnums=1)(1.0, (2.0, 3.0))

    @numba.njit
    def exp_into_buffer(x):
        buf = np.empty_like(x)
        np.exp(x, buf)
        return np.sum(buf)
    with pytest.raises(TypeError, match=r"np\.exp\(x, out\) writes into out.*out\[:\] = np\.exp\(x\)"):
        duals.grad(exp_into_buffer)(np.array([0.1, 0.2]))


def test_float16_inputs_to_compiled_forward_mode_are_refused_with_the_way_out():
    """A bare NotImplementedError('float16') came from Numba's data model (a user trial)."""
    @numba.njit
    def cubes(x):
        return np.sum(x * x * x)
    x = np.array([0.5, 1.0], dtype=np.float16)
    for call in (lambda: duals.jacfwd(cubes)(x), lambda: duals.jvp(cubes, (x,), (np.ones_like(x),)),
                 lambda: duals.jit.compiled_hessian(cubes)(x)):
        with pytest.raises(TypeError, match=r"is float16, which the tangent lanes of compiled forward "
                                            r"mode cannot hold.*astype\(np\.float32\)"):
            call()
    assert duals.grad(cubes)(x).dtype == np.float16     # the tape takes it, and so does hessian over it
    H = duals.hessian(cubes)(x)
    assert H.dtype == np.float16 and H.tolist() == duals.hessian(cubes.py_func)(x).tolist() == [[3.0, 0.0], [0.0, 6.0]]


def test_transformations_made_afresh_share_the_writers_code_but_write_their_own_buffers():
    # (duals.jacfwd(f)(x) in a loop compiled its writers' source at every call, ~0.1 ms each)
    from duals.jit import seeding
    first = seeding.SeededArguments([np.array([1.0, 2.0]), 3.0], (3,), 0)
    hits = seeding._compiled_writer.cache_info().hits
    second = seeding.SeededArguments([np.array([5.0, 6.0]), 7.0], (3,), 0)
    assert seeding._compiled_writer.cache_info().hits == hits + 2   # fill and write, compiled once
    a = first.fill([np.array([1.0, 2.0]), 3.0])
    b = second.fill([np.array([5.0, 6.0]), 7.0])
    assert a[0]["primal"].tolist() == [1.0, 2.0] and float(a[1]["primal"]) == 3.0
    assert b[0]["primal"].tolist() == [5.0, 6.0] and float(b[1]["primal"]) == 7.0
    assert a[0]["primal"].tolist() == [1.0, 2.0]   # the second did not write into the first's buffers
