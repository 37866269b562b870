"""NumPy functions that compiled forward mode runs through Numba's own implementation (no rule of
duals'; ``duals.jit.array_functions.THROUGH_NUMBA``, the "✓ Numba's" entries of docs/supported.md):
each, called the way @njit code calls it, against central differences of the plain call."""
import numba
import numpy as np
import pytest

import duals
from duals.jit.array_functions import THROUGH_NUMBA
from finite_differences import central_differences

WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0])

CASES = {
    "append": lambda x: np.append(x, x[:1]),
    "array": lambda x: np.array([x[0] * x[1], x[2], 1.0]),
    "array_split": lambda x: np.array_split(x, 3)[0] * x[2],
    "asarray": lambda x: np.asarray((x[0], x[1] ** 2)),
    "atleast_2d": lambda x: np.atleast_2d(x) * x[1],
    "average": lambda x: np.average(x * x, weights=WEIGHTS),
    "broadcast_to": lambda x: np.broadcast_to(x, (2, 4)) * 1.0,
    "column_stack": lambda x: np.column_stack((x, x * x)),
    "concatenate": lambda x: np.concatenate((x, x[:2] * 2.0)),
    "copy": lambda x: np.copy(x) * x,
    "delete": lambda x: np.delete(x, 1) * x[1],
    "diag": lambda x: np.diag(x) @ x,
    "diagflat": lambda x: np.diagflat(x[:2]) * x[3],
    "diff": lambda x: np.diff(x * x),
    "dstack": lambda x: np.dstack((x, x * x)),
    "expand_dims": lambda x: np.expand_dims(x, 0) * x[1],
    "flip": lambda x: np.flip(x) * x,
    "fliplr": lambda x: np.fliplr(np.outer(x, x[:2])),
    "flipud": lambda x: np.flipud(np.outer(x, x[:2])),
    "hstack": lambda x: np.hstack((x, x * x)),
    "insert": lambda x: np.insert(x, 1, 7.0),
    "kron": lambda x: np.kron(x[:2], x[2:]),
    "moveaxis": lambda x: np.moveaxis(np.outer(x, x[:2]), 0, 1),
    "outer": lambda x: np.outer(x[:2], x),
    "partition": lambda x: np.partition(x * 1.0, 2),
    "ravel": lambda x: np.ravel(np.outer(x, x[:2])),
    "repeat": lambda x: np.repeat(x, 2) * 1.5,
    "reshape": lambda x: np.reshape(x, (2, 2)) * x[0],
    "resize": lambda x: np.resize(x, 6),
    "roll": lambda x: np.roll(x, 1) * x,
    "rot90": lambda x: np.rot90(np.outer(x, x[:2])),
    "select": lambda x: np.select([x > 0.5, x <= 0.5], [x * x, 2.0 * x]),
    "split": lambda x: np.split(x, 2)[1] * x[0],
    "stack": lambda x: np.stack((x, x * x)),
    "swapaxes": lambda x: np.swapaxes(np.outer(x, x[:2]), 0, 1),
    "take": lambda x: np.take(x, np.array([3, 0, 0])),
    "take_along_axis": lambda x: np.take_along_axis(x, np.array([2, 1]), 0),
    "transpose": lambda x: np.transpose(np.outer(x, x[:2])),
    "trapezoid": lambda x: np.trapezoid(x * x),
    "tril": lambda x: np.tril(np.outer(x, x)),
    "triu": lambda x: np.triu(np.outer(x, x)),
    "vstack": lambda x: np.vstack((x, x * x)),
}


def test_every_function_said_to_run_through_numba_has_a_case():
    assert sorted(CASES) == sorted(THROUGH_NUMBA)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_numbas_own_implementation_differentiates_on_duals(name):
    f = numba.njit(CASES[name])
    x = np.array([0.31, 0.72, 0.45, 0.88])
    np.testing.assert_allclose(duals.jacfwd(f)(x), central_differences(f, (x,), 0), rtol=1e-6, atol=1e-8)
