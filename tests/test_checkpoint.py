"""duals.checkpoint: intermediates recomputed in the backward walk; same values and derivatives."""
import tracemalloc

import numpy as np
import pytest

import duals
import duals.numpy as dnp
from duals.testing import assert_close
from finite_differences import central_differences


def segment(x):
    for _ in range(6):
        x = dnp.sin(x) * 1.01 + 0.1
    return x


def plain(x):
    for _ in range(6):
        x = segment(x)
    return dnp.sum(x * x)


def checkpointed(x):
    for _ in range(6):
        x = duals.checkpoint(segment)(x)
    return dnp.sum(x * x)


def _peak(f, x):
    tracemalloc.start()
    try:
        g = duals.grad(f)(x)
        return g, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_falls_and_the_gradient_is_unchanged():
    x = np.linspace(0.0, 1.0, 100_000)
    g_plain, peak_plain = _peak(plain, x)
    g_ckpt, peak_ckpt = _peak(checkpointed, x)
    assert_close(g_ckpt, g_plain, 1e-14, 1e-12, "checkpointed gradient")
    # 36 stored intermediates against 6 boundaries plus one segment recomputed at a time
    assert peak_ckpt < 0.5 * peak_plain, (peak_ckpt, peak_plain)


def test_values_are_unchanged():
    x = np.linspace(-1.0, 1.0, 5)
    assert_close(checkpointed(x), plain(x), 0, 1e-15, "checkpointed value")


def test_forward_over_reverse_hessian_through_a_checkpoint():
    x = np.linspace(0.1, 0.9, 4)
    assert_close(duals.hessian(checkpointed)(x), duals.hessian(plain)(x), 1e-12, 1e-12, "hessian")


def test_every_second_order_composition_through_a_checkpoint():
    x = np.linspace(0.1, 0.9, 3)
    for outer in (duals.jacfwd, duals.jacrev):
        for inner in (duals.jacfwd, duals.jacrev):
            assert_close(outer(inner(checkpointed))(x), outer(inner(plain))(x), 1e-12, 1e-12,
                         f"{outer.__name__}({inner.__name__})")


def test_several_arguments_and_keyword_constants():
    def f(x, y, *, scale):
        return dnp.sin(x) * y * scale

    g = duals.checkpoint(f)
    x, y = np.array([0.2, 0.4]), np.array([[1.0], [2.0]])
    assert duals.gradcheck(lambda x, y: g(x, y, scale=3.0), x, y)


def test_nested_checkpoints():
    inner = duals.checkpoint(segment)
    outer = duals.checkpoint(lambda x: dnp.sum(inner(inner(x)) ** 2))
    x = np.array([0.3, 0.6])
    assert_close(duals.grad(outer)(x), duals.grad(lambda x: dnp.sum(segment(segment(x)) ** 2))(x),
                 1e-14, 1e-12, "nested checkpoint gradient")


def test_the_function_reruns_in_the_backward_walk():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return dnp.exp(x)

    duals.grad(lambda x: dnp.sum(duals.checkpoint(f)(x)))(np.ones(2))
    assert calls == ["ndarray", "Var"]   # once on plain values, once on a fresh tape


def test_closure_over_a_traced_value_is_refused():
    def f(x):
        return duals.checkpoint(lambda y: y * x)(x)   # x captured, not passed

    with pytest.raises(TypeError, match="closure over a traced value"):
        duals.grad(lambda x: dnp.sum(f(x)))(np.ones(2))


def test_tuple_output_is_refused():
    with pytest.raises(TypeError, match="returns one array"):
        duals.checkpoint(lambda x: (x, x))(np.ones(2))



def test_a_differentiated_keyword_argument_says_to_pass_it_positionally():
    f = duals.checkpoint(lambda x, scale=1.0: np.sum(np.sin(x) * scale))
    with pytest.raises(TypeError, match=r"keyword argument scale= is a value being differentiated.*"
                                        r"pass it positionally"):
        duals.grad(lambda p: f(p[:2], scale=p[2]))(np.array([0.1, 0.2, 3.0]))
    np.testing.assert_allclose(duals.grad(lambda p: f(p[:2], p[2]))(np.array([0.1, 0.2, 3.0])),
                               [3.0 * np.cos(0.1), 3.0 * np.cos(0.2), np.sin(0.1) + np.sin(0.2)], rtol=1e-14)
    assert duals.grad(lambda x: f(x, scale=2.0))(np.array([0.5])) == pytest.approx([2.0 * np.cos(0.5)])


def test_a_checkpointed_stage_that_draws_from_the_global_generator_reruns_with_the_same_draws():
    """Dropout inside a checkpoint: the rerun drew other numbers and raised (a user trial)."""
    def dropout_stage(z):
        keep = np.random.uniform(size=z.shape) > 0.3
        return np.where(keep, np.sin(z) / 0.7, 0.0)
    x = np.linspace(0.1, 1.0, 8)
    np.random.seed(5)
    plain = duals.grad(lambda v: np.sum(dropout_stage(v)))(x)
    np.random.seed(5)
    checkpointed = duals.grad(lambda v: np.sum(duals.checkpoint(dropout_stage)(v)))(x)
    np.testing.assert_array_equal(checkpointed, plain)
    np.random.seed(5)
    dropout_stage(x)
    after = np.random.uniform()
    np.random.seed(5)
    duals.grad(lambda v: np.sum(duals.checkpoint(dropout_stage)(v)))(x)
    assert np.random.uniform() == after     # the state is left where one plain call leaves it


def test_a_checkpointed_stage_drawing_from_a_generator_argument_reruns_with_the_same_draws():
    """An Euler-Maruyama block given its Generator: the rerun drew further on and was refused
    with advice to pass the generator in, which it was (a user trial)."""
    def em_block(x, p, rng):
        for _ in range(20):
            x = x - p[0] * x * 0.01 + p[1] * 0.1 * rng.standard_normal(x.shape)
        return x

    def run(p, block):
        rng = np.random.default_rng(3)
        x = np.linspace(-1.0, 1.0, 6)
        for _ in range(5):
            x = block(x, p, rng)
        return np.sum(x ** 2)

    p = np.array([1.5, 0.7])
    plain = duals.grad(run)(p, lambda x, q, rng: em_block(x, q, rng))
    np.testing.assert_allclose(duals.grad(run)(p, duals.checkpoint(em_block)), plain, rtol=1e-13)
    np.testing.assert_allclose(plain, central_differences(lambda q: run(q, em_block), [p], 0), rtol=1e-6)
