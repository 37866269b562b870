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
    loss = np.sum(w * w)      # a number: NumPy's += rebinds it, the caller's loss is unchanged
    add_bias_(loss, 1.0)
    loss.backward()
    np.testing.assert_allclose(w.grad, 2.0 * X)


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


def comparison_of_a_stale_name(x):       # a ReLU mask read from the name before the bias
    h = np.outer(x, x)[0]
    pre = h
    h += 1.0
    return np.sum(h * (pre > 0))


def argmax_of_a_stale_view(x):
    m = np.outer(x, x)
    row = m[0]
    m -= 10.0 * np.eye(3)
    return row[np.argmax(row)]


@pytest.mark.parametrize("f", [comparison_of_a_stale_name, argmax_of_a_stale_view], ids=lambda f: f.__name__)
def test_value_only_reads_of_a_stale_name_raise_too(f):
    """Comparisons, argmax, isnan ... read the value without a primitive: they gave the old value
    silently (a user trial)."""
    for transform in (duals.jacfwd, duals.grad):
        with pytest.raises(RuntimeError, match="changed in place"):
            transform(f)(X)
    w = duals.Var(np.array([1.0, 2.0]))
    a = w * 1.0
    b = a
    b -= 10.0
    for read in (lambda: a.value, lambda: a.item(0), lambda: a > 0):
        with pytest.raises(RuntimeError, match="changed in place"):
            read()


def numbers_rebound(x):
    """NumPy scalars and floats are immutable: += rebinds in NumPy too, other names keep the old
    number (these raised: a user trial)."""
    total = x[0]
    first = total
    total += x[1] ** 2
    s, partial = x[0], [x[0]]
    for xi in x[1:]:
        s += xi
        partial.append(s)
    loss = np.sum(x ** 2)
    data = loss
    loss += 0.1 * np.sum(np.abs(x))
    return total * first + np.sum(np.stack(partial)) + loss + data


def shortcuts_numpy_copies(x):
    """NumPy returns new arrays here; duals' shortcuts returned x itself or a reshape of it."""
    total = 0.0
    for make in (lambda v: v ** 1, lambda v: np.power(v, 1), lambda v: np.tile(v, 1), lambda v: np.pad(v, 0),
                 lambda v: np.resize(v, v.shape), lambda v: np.prod(v[None], axis=())[0]):
        w = make(x)
        w /= np.sum(w)
        total = total + np.sum(w * x)
    return total


@pytest.mark.parametrize("f", [numbers_rebound, shortcuts_numpy_copies], ids=lambda f: f.__name__)
def test_numbers_and_numpys_copies_change_in_place_without_making_anything_stale(f):
    expected = central_differences(f, (X.copy(),), 0)
    for transform in (duals.jacfwd, duals.jacrev):
        np.testing.assert_allclose(transform(f)(X), expected, rtol=1e-7)


def test_the_conj_method_of_a_real_array_is_that_array():
    def f(a):
        c = a.conj()        # NumPy: a itself
        c *= 2.0
        return np.sum(a ** 2)
    with pytest.raises(RuntimeError, match="changed in place"):
        duals.grad(f)(X)


def test_a_ufunc_writing_into_a_traced_value_says_to_rebind():
    def f(z):
        np.exp(z, out=z)
        return np.sum(z)
    with pytest.raises(TypeError, match=r"numpy\.exp\(\.\.\., out=z\) writes into a traced value.*z = np\.exp"):
        duals.grad(f)(X)


WRITERS = {   # NumPy's in-place writers, as code masking a pair-distance matrix's diagonal uses them
    "fill_diagonal": lambda r2, x: np.fill_diagonal(r2, 1.0),
    "fill_diagonal of a plain array": lambda r2, x: np.fill_diagonal(np.zeros((3, 3)), x[0]),
    "put": lambda r2, x: np.put(r2, [0, 4, 8], 1.0),
    "putmask": lambda r2, x: np.putmask(r2, r2 == 0.0, 1.0),
    "place": lambda r2, x: np.place(r2, r2 == 0.0, 1.0),
    "fill": lambda r2, x: r2.fill(1.0),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd])
def test_numpys_in_place_writers_say_how_to_build_the_new_array(writer, transform):
    def f(x):
        r2 = (x[:, None] - x[None, :]) ** 2
        WRITERS[writer](r2, x)
        return np.sum(r2)
    with pytest.raises(TypeError, match=r"in place, but a traced .*(dnp\.where|dnp\.full_like)"):
        transform(f)(X)


@pytest.mark.parametrize("transform", [duals.grad, duals.jacfwd])
def test_flat_reads_entries_in_row_major_order_and_refuses_writes(transform):
    def off_diagonal_sum(x):
        r2 = (x[:, None] - x[None, :]) ** 2
        return np.sum(r2.flat[1::4] * r2.flat[2]) + sum(v for v in r2.flat) / len(r2.flat)

    def written(x):
        r2 = (x[:, None] - x[None, :]) ** 2
        r2.flat[::4] = 1.0
        return np.sum(r2)
    got = transform(off_diagonal_sum)(X)
    np.testing.assert_allclose(got, central_differences(off_diagonal_sum, [X], 0), rtol=1e-7)
    with pytest.raises(TypeError, match=r"item assignment into a traced array.*\(in .*test_in_place\.py, line \d+\)$"):
        transform(written)(X)
