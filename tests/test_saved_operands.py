"""Reverse mode never reads an operand that changed after it was recorded.

The functions below are written as plain NumPy code changes arrays: preallocated work
buffers refilled in a loop, discount factors updated in place, a matrix edited after use,
``out=`` writes, augmented assignment on copies. Forward mode computes eagerly, so
``jacfwd`` (and ``jacfwd(jacfwd)``) is the reference; every reverse-mode entry point must agree
with it and with central differences, or raise the documented error.
"""
import numpy as np
import pytest

import duals

W = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0], [2.0, 0.0, 1.0]])


def work_buffer_reuse(x):
    w = np.empty(3)
    acc = 0.0
    for k in range(3):
        w[:] = W[k]
        acc = acc + np.sum(w * x ** 2)
    return acc


def discounted_cost(u):
    disc = np.ones(3)
    total = 0.0
    for t in range(5):
        total = total + np.sum(disc * (u * (t + 1) - 1.0) ** 2)
        disc *= 0.9
    return total


def matrix_edited_after_use(x):
    A = 2.0 * np.eye(3) + 0.1
    y = A @ x
    A[0, 0] = 100.0
    return np.sum(np.sin(y) * y)


def out_argument_overwrites_a_constant(x):
    c = np.array([0.5, 1.5, -2.0])
    y = np.exp(x * c)
    np.multiply(c, 10.0, out=c)
    return np.sum(y * c)          # c is 10x here, but the exp term saw the old c


def copy_then_augmented_assignment(x):
    y = x.copy()
    y *= 2.0
    y += x ** 2
    return np.sum(np.tanh(y))


def slice_of_a_buffer(x):
    buf = np.linspace(1.0, 2.0, 4)
    view = buf[1:]
    y = np.log1p(x * x) * view
    buf[:] = -1.0                 # changes the view as well
    return np.sum(y ** 2)


def stencil_with_reused_rows(x):
    row = np.zeros(3)
    total = 0.0
    for i in range(3):
        row.fill(0.0)
        row[i] = 1.0 + i
        total = total + np.sum(row * np.cos(x)) ** 2
    return total


def minibatches_of_a_permutation_shuffled_in_place(x):
    perm = np.arange(3)
    total = 0.0
    for epoch in range(2):
        batch = perm[:2]                       # a view: the index array changes with perm
        total = total + np.sum(np.array([1.0, 10.0]) * x[batch] ** 2)
        perm[:] = perm[::-1].copy()
    return total


def reused_index_mask_and_bins(x):
    index = np.array([0, 1])
    mask = np.array([True, False, True])
    bins = np.array([0, 1, 1])
    a = np.take(x, index) ** 2
    b = np.sum(x[mask] ** 3)
    c = np.bincount(bins, weights=x ** 2, minlength=2)
    index[:] = [2, 2]
    mask[:] = True                             # another count of entries
    bins[:] = 0
    return np.sum(a * np.array([1.0, 2.0])) + b + np.sum(c * np.array([3.0, 5.0])) + np.sum(x[index])


FUNCTIONS = [work_buffer_reuse, discounted_cost, matrix_edited_after_use,
             out_argument_overwrites_a_constant, copy_then_augmented_assignment,
             slice_of_a_buffer, stencil_with_reused_rows,
             minibatches_of_a_permutation_shuffled_in_place, reused_index_mask_and_bins]
X = np.array([0.3, -0.2, 0.5])


def central_gradient(f, x, h=1e-6):
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_uses_the_values_the_operations_saw(f):
    reference = duals.jacfwd(f)(X)
    np.testing.assert_allclose(reference, central_gradient(f, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(duals.grad(f)(X), reference, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(duals.jacrev(f)(X), reference, rtol=1e-12, atol=1e-12)
    value, g = duals.value_and_grad(f)(X)
    assert value == pytest.approx(f(X))
    np.testing.assert_allclose(g, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order_uses_the_values_the_operations_saw(f):
    reference = duals.jacfwd(duals.jacfwd(f))(X)
    np.testing.assert_allclose(duals.hessian(f)(X), reference, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(duals.jacrev(duals.jacrev(f))(X), reference, rtol=1e-10, atol=1e-10)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(duals.hvp(f, X, v), reference @ v, rtol=1e-10, atol=1e-10)
    value, g, H = duals.value_grad_hessian(f)(X)
    np.testing.assert_allclose(H, reference, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g, duals.jacfwd(f)(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_var_backward_uses_the_values_the_operations_saw(f):
    x = duals.Var(X)
    f(x).backward()
    np.testing.assert_allclose(x.grad, duals.jacfwd(f)(X), rtol=1e-12, atol=1e-12)


def test_constant_scaled_after_use_on_the_imperative_tape():
    v = duals.Var(np.array([1.0, 2.0]))
    c = np.array([3.0, 4.0])
    y = v * c
    c *= 10.0
    (y * y).sum().backward()
    np.testing.assert_allclose(v.grad, 2 * np.array([1.0, 2.0]) * np.array([3.0, 4.0]) ** 2)


def test_pullback_after_the_input_array_changed_uses_the_recorded_input():
    x = np.array([0.1, 0.7, -0.4])
    expected = np.cos(x) * np.array([1.0, 2.0, 3.0])
    _, pullback = duals.vjp(np.sin, x)
    x[:] = 5.0
    (g,) = pullback(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, expected)


def test_writing_through_value_of_a_saved_result_raises_at_backward():
    v = duals.Var(np.array([1.0, 2.0]))
    y = np.exp(v)
    arr = y.value
    arr[0] = 100.0
    with pytest.raises(RuntimeError, match=r"modified in place.*\.value\.copy\(\)"):
        np.sum(y).backward()


def test_writing_into_a_copy_of_value_is_fine():
    v = duals.Var(np.array([1.0, 2.0]))
    y = np.exp(v)
    arr = y.value.copy()
    arr[0] = 100.0
    np.sum(y).backward()
    np.testing.assert_allclose(v.grad, np.exp([1.0, 2.0]))


def test_ufunc_out_into_value_of_a_saved_result_raises_at_backward():
    v = duals.Var(np.array([1.0, 2.0]))
    y = np.sin(v)
    np.multiply(y.value, 2.0, out=y.value)
    with pytest.raises(RuntimeError, match="modified in place"):
        (y * y).sum().backward()


def test_copy_of_a_leaf_var_is_recorded_and_may_be_updated_in_place():
    v = duals.Var(np.array([1.0, 2.0]))
    y = v.copy()
    assert y.grad_fn is not None and y.grad_fn.name == "CopyBackward"
    y *= 3.0
    np.sum(y * y).backward()
    np.testing.assert_allclose(v.grad, 18.0 * np.array([1.0, 2.0]))


def test_augmented_assignment_on_the_argument_itself_rebinds_inside_grad():
    def f(x):
        x *= 2.0
        x -= 1.0
        return np.sum(x ** 3)
    x = np.array([0.5, 1.5])
    expected = 6.0 * (2 * x - 1) ** 2
    np.testing.assert_allclose(duals.grad(f)(x), expected)
    np.testing.assert_allclose(duals.jacrev(f)(x), expected)
    np.testing.assert_allclose(x, [0.5, 1.5])   # the caller's array is not changed


def test_in_place_update_of_the_users_own_leaf_var_still_raises():
    v = duals.Var(np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="no_grad"):
        v *= 2.0


def test_checkpointed_function_whose_closure_changed_before_backward_raises():
    c = np.array([1.0, 2.0])
    step = duals.checkpoint(lambda x: np.sin(x * c))
    x = duals.Var(np.array([0.3, 0.4]))
    y = np.sum(step(x))
    c *= 10.0
    with pytest.raises(RuntimeError, match="checkpoint: rerunning .* gave a different value"):
        y.backward()


def test_checkpointed_function_with_an_array_keyword_reused_afterwards_is_exact():
    """Keyword arguments are held constant: the rerun read the buffer as changed (a user trial);
    where the change left the value as it was, the gradient was silently wrong."""
    stage = duals.checkpoint(lambda z, c=None: np.sin(z) * c)
    buffer = np.array([1.0, 2.0, 3.0])

    def loss(x):
        buffer[:] = [1.0, 2.0, 3.0]
        y = stage(x, c=buffer)        # x[0] = 0: y[0] = 0 whatever buffer[0] is
        buffer[0] = 100.0
        return np.sum(y)
    x = np.array([0.0, 0.5, 0.7])
    np.testing.assert_allclose(duals.grad(loss)(x), np.cos(x) * np.array([1.0, 2.0, 3.0]), rtol=1e-14)


def test_checkpointed_function_with_its_array_passed_as_an_argument_is_exact():
    c = np.array([1.0, 2.0])
    step = duals.checkpoint(lambda x, c: np.sin(x * c))
    x = duals.Var(np.array([0.3, 0.4]))
    y = np.sum(step(x, c))
    c *= 10.0
    y.backward()
    np.testing.assert_allclose(x.grad, np.cos(np.array([0.3, 0.8])) * np.array([1.0, 2.0]))


def test_only_constants_that_a_rule_reads_are_copied():
    c = np.linspace(1.0, 2.0, 5)
    x = duals.Var(np.arange(5.0))
    y = (x + c) * c            # add's rules read neither operand, mul's read the other factor
    assert y.grad_fn.prim.name == "mul" and y.grad_fn.args[1] is not c
    assert y.grad_fn.inputs[0].prim.name == "add" and y.grad_fn.inputs[0].args[1] is c
    c *= 10.0                  # after recording: the add's derivative does not depend on it
    y.backward(np.ones(5))
    np.testing.assert_array_equal(x.grad, np.linspace(1.0, 2.0, 5))


def test_a_borrowed_input_is_copied_only_once_a_rule_reads_it():
    from duals.core import new_level
    from duals.reverse import ReverseTrace, Var
    x = np.array([0.5, 1.5, -2.0, 4.0])
    trace = ReverseTrace(new_level())
    leaf = Var._leaf(x, trace)
    trace.borrow(leaf)
    d = np.diff(leaf)
    assert leaf._value is x and not any(d.grad_fn.args[0].strides)   # a shell: shape and dtype
    np.sin(leaf)
    assert leaf._value is not x and np.array_equal(leaf._value, x)


def test_pullback_of_diff_is_exact_after_the_input_array_changed():
    x = np.array([0.5, 1.5, -2.0, 4.0])
    y, pullback = duals.vjp(lambda a: np.diff(a) * 1.0, x)
    x[:] = 7.0               # diff's reverse rule needs the input's shape only
    (g,) = pullback(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [-1.0, -1.0, -1.0, 3.0])


@pytest.mark.parametrize("f", [
    lambda a: np.sum(np.diff(a)) + np.sum(np.sin(a)),    # borrowed, then read by sin
    lambda a: np.sum(np.sin(a)) + np.sum(np.diff(a)),
    lambda a: np.sum(a.reshape(2, 2) ** 2),              # a view of the input, read later
    lambda a: np.sum(a[1:] * a[1:]),
    lambda a: np.sum(a * a),                             # one input in two places
    lambda a: np.sum(np.exp(a) * 2.0 + a),
    lambda a: np.sum(np.cumsum(a) * np.gradient(a)) + np.trapezoid(a ** 3),
    lambda a: np.sum(np.convolve(a, np.array([1.0, -2.0, 0.5]), "same") ** 2),
    lambda a: np.sum(np.convolve(np.array([1.0, -2.0, 0.5]), a) ** 2) + np.sum(np.convolve(a, a)),
], ids=["diff_then_sin", "sin_then_diff", "reshape", "slice", "square", "exp", "scans", "convolve",
        "convolve_kernel"])
def test_pullback_after_the_input_array_changed_uses_the_recorded_input_whatever_reads_it(f):
    x = np.array([0.1, 0.7, -0.4, 0.3])
    expected = duals.grad(f)(x.copy())
    _, pullback = duals.vjp(f, x)
    x[:] = 5.0
    np.testing.assert_array_equal(pullback(1.0)[0], expected)


def test_vjp_of_the_identity_returns_a_copy_of_the_input():
    x = np.array([1.0, 2.0])
    y, _ = duals.vjp(lambda a: a, x)
    _, _, aux = duals.vjp(lambda a: (np.diff(a), a), x, has_aux=True)
    assert not np.shares_memory(y, x) and not np.shares_memory(aux, x)


def test_writing_through_value_of_the_input_inside_vjp_leaves_the_callers_array():
    x = np.array([1.0, 2.0, 4.0])

    def f(a):
        a.value[0] = 100.0
        return np.diff(a)
    duals.vjp(f, x)
    np.testing.assert_array_equal(x, [1.0, 2.0, 4.0])


T = np.linspace(0.0, 1.0, 5)
DATA = np.array([1.0, 0.8, 0.7, 0.5, 0.4])


def decay_model(p):
    return np.exp(p[0] - p[1] * T)


def test_the_result_of_vjp_changed_in_place_leaves_the_pullback_exact():
    """A least-squares residual formed in place from vjp's result (``r -= data``): exp's rule
    reads its own output, which was the returned array (the pullback gave a tenth of the
    gradient of 0.5 |model(p) - data|^2)."""
    p = np.array([0.1, 0.9])
    r, pullback = duals.vjp(decay_model, p)
    r -= DATA
    expected = duals.grad(lambda p: 0.5 * np.sum((decay_model(p) - DATA) ** 2))(p)
    np.testing.assert_allclose(pullback(r)[0], expected, rtol=1e-14)


def test_aux_of_vjp_changed_in_place_leaves_the_pullback_exact():
    p = np.array([0.1, 0.9])
    def total_and_model(p):
        m = decay_model(p)
        return np.sum(m), m
    total, pullback, m = duals.vjp(total_and_model, p, has_aux=True)
    m *= 100.0   # the very array exp's rule reads
    np.testing.assert_allclose(pullback(1.0)[0], duals.grad(lambda p: np.sum(decay_model(p)))(p), rtol=1e-14)


def test_gradients_of_leaves_are_arrays_of_their_own():
    """A cotangent that reaches leaves unchanged (through +, a reshape) was the caller's seed
    itself, and one array for both leaves: a Jacobian built row by row from a reused unit vector
    came out wrong, and scaling one gradient in place scaled the other (a user trial)."""
    w, b = duals.Var(np.array([0.5, 1.5, -1.0])), duals.Var(np.array([0.1, 0.2, 0.3]))
    y = (w + b).reshape(3)
    e, rows = np.zeros(3), []
    for i in range(3):
        w.zero_grad()
        b.zero_grad()
        e[:] = 0.0
        e[i] = 1.0
        y.backward(gradient=e, retain_graph=True)
        rows.append(w.grad)
    np.testing.assert_array_equal(np.array(rows), np.eye(3))
    w.grad *= 0.5
    np.testing.assert_array_equal(b.grad, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(e, [0.0, 0.0, 1.0])

    _, pullback = duals.vjp(lambda a, c: (a + c).reshape(3), np.ones(3), np.ones(3))
    ct = np.ones(3)
    ga, gc = pullback(ct)
    ga *= 2.0
    np.testing.assert_array_equal(gc, np.ones(3))
    np.testing.assert_array_equal(ct, np.ones(3))


UNSEEN_WRITERS = {   # NumPy writers that bypass the view's own methods (a user trial)
    "copyto": lambda v: np.copyto(v, 0.0),
    "put": lambda v: np.put(v, [0], [3.0]),
    "putmask": lambda v: np.putmask(v, v > 0, 0.0),
    "ufunc.at": lambda v: np.add.at(v, [0, 0], 1.0),
    "sort": lambda v: v.sort(),
    "flat": lambda v: v.flat.__setitem__(0, 3.0),
    "through asarray": lambda v: np.asarray(v).__setitem__(0, 3.0),
    "through a base-class view": lambda v: v.view(np.ndarray).__setitem__(2, 3.0),
}


@pytest.mark.parametrize("name", sorted(UNSEEN_WRITERS))
def test_a_write_into_value_that_the_counter_cannot_see_still_raises_at_backward(name):
    w = duals.Var(X.copy())
    loss = (np.sin(w) * w).sum()
    UNSEEN_WRITERS[name](w.value)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()
    a = np.exp(duals.Var(X.copy()))           # an intermediate whose rule reads its own value
    total = a.sum()
    UNSEEN_WRITERS[name](a.value)
    with pytest.raises(RuntimeError, match="modified (in place|by an in-place operation)"):
        total.backward()


def test_writes_into_value_before_recording_or_after_backward_are_fine():
    w = duals.Var(X.copy())
    view = w.value
    for step in range(3):
        loss = (np.sin(w) * w).sum()
        loss.backward()
        np.testing.assert_allclose(w.grad, np.cos(view) * view + np.sin(view), rtol=1e-14)
        np.copyto(view, view - 0.1 * w.grad)     # an optimiser's step, unseen by the counter
        w.zero_grad()
