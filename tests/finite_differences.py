"""Central differences of compiled user functions, shared by the compiled-mode tests.

Unlike :func:`duals.testing.numerical_jacobian`, which casts every argument to a float array,
the other arguments pass unchanged (step counts stay integers, functions stay functions) and a
float argument stays a float, so the plain @njit specialisation is the one differenced.
"""
import numpy as np


def central_differences(f, args, argnum, h=1e-6):
    """∂f/∂args[argnum] by central differences, shape out.shape + in.shape."""
    x = np.asarray(args[argnum], dtype=float)
    columns = []
    for k in range(x.size):
        up, down = list(args), list(args)
        if x.ndim == 0:
            up[argnum], down[argnum] = float(x) + h, float(x) - h
        else:
            step = np.zeros(x.size)
            step[k] = h
            up[argnum], down[argnum] = x + step.reshape(x.shape), x - step.reshape(x.shape)
        columns.append((np.asarray(f(*up)) - np.asarray(f(*down))) / (2 * h))
    out = np.moveaxis(np.array(columns), 0, -1)
    return out.reshape(np.shape(f(*args)) + x.shape)
