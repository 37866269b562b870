"""duals.numpy holds exactly the supported functions and the NumPy names that are safe anyway."""
import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.ops import NAMESPACE


def test_every_registered_function_is_in_the_namespace():
    for name, func in NAMESPACE.items():
        where = dnp
        for part in name.split("."):   # (dnp.lib.stride_tricks.sliding_window_view: two levels)
            where = getattr(where, part)
        assert where is func, name


def test_safe_numpy_names_pass_through_and_are_listed():
    assert dnp.pi == np.pi and dnp.float32 is np.float32 and dnp.errstate is np.errstate
    assert dnp.zeros(2).tolist() == [0.0, 0.0]
    listed = set(dir(dnp))
    assert {"sin", "sort", "interp", "pi", "zeros", "linalg", "special", "fft"} <= listed
    assert "place" not in listed and "histogram2d" not in listed


@pytest.mark.parametrize("name", ["place", "histogram2d", "busday_count"])
def test_an_unsupported_numpy_name_fails_where_it_is_written(name):
    with pytest.raises(AttributeError, match=f"numpy.{name} has no derivative rule in duals"):
        getattr(dnp, name)


def test_unsupported_linalg_names_fail_too():
    with pytest.raises(AttributeError, match="numpy.linalg.tensorinv has no derivative rule"):
        dnp.linalg.tensorinv


def test_every_name_of_numpy_fft_and_numpy_emath_is_there():
    assert [n for n in np.fft.__all__ if not hasattr(dnp.fft, n)] == []
    assert [n for n in dir(np.emath) if not n.startswith("_") and not hasattr(dnp.emath, n)] == []


def test_a_name_numpy_does_not_have_says_so():
    with pytest.raises(AttributeError, match="nor does numpy"):
        dnp.no_such_function


def test_numpy_2_spellings_of_supported_functions_are_the_same_functions():
    import duals.numpy as dnp
    assert dnp.acos is dnp.arccos and dnp.concat is dnp.concatenate and dnp.pow is dnp.power
    assert duals.grad(dnp.acos)(0.5) == duals.grad(np.acos)(0.5) == duals.grad(np.arccos)(0.5)
    with pytest.raises(AttributeError, match="matrix_transpose has no derivative rule"):
        dnp.matrix_transpose


def test_poly1d_of_traced_coefficients_points_to_polyval():
    # poly1d trims leading zeros by value (np.trim_zeros): the message named trim_zeros alone and
    # gave generic advice (a spectroscopy trial); dropping a zero would lose its derivative x^n
    x = np.linspace(-1.0, 1.0, 5)
    with pytest.raises(TypeError, match=r"numpy\.trim_zeros has no derivative rule.*np\.polyval\(c, x\) "
                                        r"for np\.poly1d\(c\)\(x\)"):
        duals.jacfwd(lambda c: np.poly1d(c)(x))(np.array([1.0, -2.0, 0.5]))
    c = np.array([0.0, -2.0, 0.5])   # the advice, at a leading zero: d/dc0 is x² there too
    np.testing.assert_allclose(duals.jacfwd(lambda c: np.polyval(c, x))(c)[:, 0], x ** 2)


def test_running_log_sum_exp_and_segment_sums_say_what_to_write():
    # Cox partial likelihoods: the advice was "the functions duals.numpy supports", of which
    # none spells these (a survival-analysis trial); the rewrites named are checked here
    x = np.array([0.3, -1.0, 2.0, 0.5])
    with pytest.raises(TypeError, match=r"logaddexp\.accumulate has no derivative rule.*np\.log\(np\.cumsum"):
        duals.grad(lambda x: np.sum(np.logaddexp.accumulate(x)))(x)
    with pytest.raises(TypeError, match=r"add\.reduceat has no derivative rule.*np\.bincount\(group, weights=x\)"):
        duals.grad(lambda x: np.sum(np.add.reduceat(x, np.array([0, 2])) ** 2))(x)
    shift = lambda x: duals.stop_gradient(np.max(x))   # noqa: E731
    running = lambda x: shift(x) + np.log(np.cumsum(np.exp(x - shift(x))))   # noqa: E731
    np.testing.assert_allclose(running(x), np.logaddexp.accumulate(x), rtol=1e-15)
    np.testing.assert_allclose(duals.jacfwd(running)(x), np.tril(np.exp(x[None, :] - running(x)[:, None])),
                               rtol=1e-14)

