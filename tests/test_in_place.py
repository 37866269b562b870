"""Augmented assignment on traced values: NumPy changes every name for one array in place; a
traced value cannot change, so ``a += b`` rebinds ``a`` and every other name for the old value
(an alias, a view, the argument of a helper that changed it in place) becomes stale: using one
raises. It gave the old value silently, a wrong value and derivative in every mode (a user
trial: ``def add_bias_(h, b): h += b`` was a no-op). Code where NumPy would copy is unaffected."""
import numpy as np
import pytest

import duals
from finite_differences import central_differences

TRANSFORMS = [duals.jacfwd, duals.jacrev, duals.grad, duals.hessian]
X = np.array([0.7, -1.2, 2.0])


def add_bias_(h, b):     # an in-place helper, as NumPy (and PyTorch) code writes them
    h += b


def helper_changes_its_argument(x):
    h = x * 2.0
    add_bias_(h, x)
    return np.sum(h * h)


def alias_then_augmented_assignment(x):
    a = np.sin(x)
    b = a
    b *= 3.0
    return np.sum(a * x)


def view_changed_through_its_base(x):
    m = np.outer(x, x)
    row = m[0]
    m += 1.0
    return np.sum(row)


def base_changed_through_a_view(x):
    m = np.outer(x, x)
    row = m[1]
    row *= 2.0
    return np.sum(m)


def stale_value_returned(x):
    h = x ** 2
    add_bias_(h, 1.0)
    return h


STALE = [helper_changes_its_argument, alias_then_augmented_assignment, view_changed_through_its_base,
         base_changed_through_a_view]


@pytest.mark.parametrize("f", STALE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t.__name__)
def test_a_name_numpy_would_have_changed_raises_instead_of_giving_the_old_value(f, transform):
    f(X.copy())     # plain NumPy: fine
    with pytest.raises(RuntimeError, match="changed in place .* through another name"):
        transform(f)(X)


def test_returning_a_stale_value_raises():
    for transform in (duals.jacfwd, duals.jacrev):
        with pytest.raises(RuntimeError, match="changed in place"):
            transform(stale_value_returned)(X)


def test_the_imperative_tape_raises_too():
    w, b = duals.Var(X.copy()), duals.Var(np.ones(3))
    h = w * 2.0
    add_bias_(h, b)
    with pytest.raises(RuntimeError, match="changed in place"):
        np.sum(h * h)
    loss = np.sum(w * w)
    add_bias_(loss, 1.0)
    with pytest.raises(RuntimeError, match="changed in place"):
        loss.backward()


def copies_changed_in_place(x):
    """Every name here is a copy in NumPy, or the only name: nothing is stale."""
    total = 0.0
    for k in range(3):
        total += np.sum(x ** k)          # an accumulator
    y = x.copy()
    y *= 2.0
    z = x.astype(np.float64)
    z -= 1.0
    w = x.flatten()
    w /= 3.0
    v = +x
    v **= 2
    rows = np.outer(x, x)[[0, 2]]        # advanced indexing: a copy
    rows += 1.0
    s = np.conj(x)                       # a new array for real x
    s += x
    x *= 5.0                             # the argument itself, rebound
    return total + np.sum(x * y) + np.sum(z * w) + np.sum(v) + np.sum(rows) + np.sum(s * s)


@pytest.mark.parametrize("transform", [duals.jacfwd, duals.jacrev])
def test_copies_and_single_names_change_in_place_as_numpy_does(transform):
    x = X.copy()
    got = transform(copies_changed_in_place)(x)
    np.testing.assert_array_equal(x, X)      # the traced call leaves the caller's array as it is
    expected = central_differences(copies_changed_in_place, (x,), 0)   # (the plain calls change x)
    np.testing.assert_allclose(got, expected, rtol=1e-7)
