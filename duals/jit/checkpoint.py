"""The gradient of a long compiled time loop in bounded memory: record one segment at a time.

``duals.grad`` of a compiled simulation records every operation of every step, 24 bytes each:
10⁷ operations hold 240 MB. :func:`loop_value_and_grad` takes the loop apart instead: given
``step(x, p) -> x`` and ``loss(x, p) -> float`` (both ``@numba.njit``), it runs the loop once
plainly, keeping the state at the start of every segment of ``segment`` steps, then walks the
segments backwards, recording each one from its stored state and sweeping the state's adjoint
through it (checkpointing, as in Griewank's *revolve* with one level). The tape never holds more
than one segment; the price is one more plain run of the loop, and the states kept are
``steps / segment`` copies of ``x``. The result is the same gradient as ``duals.grad`` of the
whole loop (the same operations, recorded in another order); a step that draws random numbers
draws in each recording what it drew in the run (the generators' states are kept per segment).

>>> import numba, numpy as np, duals
>>> @numba.njit
... def step(x, p):
...     return x + 0.1 * (p[0] - x * x)
>>> @numba.njit
... def loss(x, p):
...     return np.sum(x * x)
>>> @numba.njit
... def whole(x, p):
...     for _ in range(50):
...         x = step(x, p)
...     return loss(x, p)
>>> value, (dx0, dp) = loop_value_and_grad(step, loss, 50, segment=7)(np.ones(2), np.array([2.0]))
>>> expected = duals.grad(whole, argnums=(0, 1))(np.ones(2), np.array([2.0]))
>>> bool(np.allclose(dx0, expected[0], rtol=1e-13) and np.allclose(dp, expected[1], rtol=1e-13))
True
"""
import math

import numba
import numpy as np

from ..random_states import restore, snapshot
from .calling import _check_dispatcher, _input
from .python_reach import may_reach_python
from .errors import message_lines
from .reverse import _Recording, _release, _thread_tape, seed
from .sweeps import untouched

__all__ = ["loop_value_and_grad"]


@numba.njit
def _run(step, x, p, count):
    """``count`` applications of ``step`` to a copy of ``x``."""
    x = x.copy()
    for _ in range(count):
        x = step(x, p)
    return x


def loop_value_and_grad(step, loss, steps, segment=None):
    """loop_value_and_grad(step, loss, steps, segment=None) -> function ``(x0, p) -> (value, (∂/∂x0, ∂/∂p))``.

    The value and gradient of ``loss(x_N, p)`` where ``x_{k+1} = step(x_k, p)``, ``N = steps``,
    by compiled reverse mode one segment of ``segment`` steps at a time (default about
    ``sqrt(steps)``): memory for one segment's tape and ``steps / segment`` states, time of
    one extra plain run. ``step`` and ``loss`` are Numba dispatchers; ``x0`` and ``p`` float
    arrays (``step`` returns a new array or its updated input); float32 inputs get float32
    gradients.

    >>> import numba, numpy as np
    >>> step = numba.njit(lambda x, p: x * p[0])
    >>> loss = numba.njit(lambda x, p: x[0])
    >>> loop_value_and_grad(step, loss, 3)(np.array([2.0]), np.array([3.0]))[1][1].tolist()
    [54.0]
    """
    step = _check_dispatcher(step, "loop_value_and_grad")
    loss = _check_dispatcher(loss, "loop_value_and_grad")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"loop_value_and_grad: steps must be a non-negative integer, got {steps!r}")
    steps = int(steps)
    if segment is None:
        segment = max(1, int(math.sqrt(steps)))
    if int(segment) != segment or segment < 1:
        raise ValueError(f"loop_value_and_grad: segment must be a positive integer, got {segment!r}")
    segment = int(segment)

    def value_and_gradient(x0, p):
        x0 = _as_array(x0, "x0")
        p = _as_array(p, "p")
        starts = list(range(0, steps, segment))
        states, x = [], _state(step, x0, p, steps)
        python = may_reach_python(step) or may_reach_python(loss)
        noise = []   # the random states each segment began with: its recording draws what the run drew
        for start in starts:  # plain run, keeping each segment's first state
            states.append(x)
            noise.append(snapshot((), python))
            x = _plain_run(lambda: _run(step, x, p, min(segment, steps - start)))
        tape = _thread_tape(np.float64)
        try:
            rec = _Recording(loss, [x, p], [0, 1], "loop_value_and_grad", tape)
            end = snapshot((), python)
            values, nodes, _, _ = rec.outputs("loop_value_and_grad")
            if len(values) != 1 or np.shape(values[0]) != ():
                raise TypeError("loop_value_and_grad: loss must return one float")
            value = float(values[0])
            adj = untouched(tape.recorded)
            adj[int(nodes[0])] = 1.0
            lam, gp = rec.split(rec.sweep(adj), [x, p], [0, 1])
            gp = np.array(gp, dtype=np.float64)
            for start, state, drawn in zip(reversed(starts), reversed(states), reversed(noise)):
                count = min(segment, steps - start)
                restore(drawn)
                rec = _Recording(_run, [step, state, p, count], [1, 2], "loop_value_and_grad", tape)
                _, nodes, _, _ = rec.outputs("loop_value_and_grad")
                adj = untouched(tape.recorded)
                seed(adj, nodes[0], np.asarray(lam, dtype=np.float64))
                lam, g = rec.split(rec.sweep(adj), [step, state, p, count], [1, 2])
                gp += g
            restore(end)   # where one plain call of the whole loop leaves them
        finally:
            _release(tape)
        lam = np.asarray(lam).astype(x0.dtype, copy=False)
        return value, (lam, gp.reshape(p.shape).astype(p.dtype, copy=False))

    return value_and_gradient


def _state(step, x0, p, steps):
    """x0 as the loop state: of the type step returns, since a float32 state may come back as
    float64 (a float64 constant in step), and the state of a loop keeps one type."""
    if steps == 0 or x0.dtype == np.float64:
        return x0
    return x0.astype(np.asarray(_plain_run(lambda: step(x0, p))).dtype, copy=False)


def _plain_run(run):
    """``run()``: plain steps of the loop, with Numba's typing failure told in the loop's terms."""
    try:
        return run()
    except numba.core.errors.TypingError as exc:
        lines = message_lines(str(exc))
        first = lines[0] if lines else type(exc).__name__
        raise TypeError(f"loop_value_and_grad: Numba could not run step(x, p) -> x on x0 and p "
                        f"(step takes the state and the parameters and returns the next state; "
                        f"fix it so that step(x0, p) runs as a plain call): {first}") from None


def _as_array(a, what):
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float64):   # float32 stays float32: the loop runs as the caller's would
        a = a.astype(np.float64)
    a = _input(a, "loop_value_and_grad", what)
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        raise TypeError(f"loop_value_and_grad: {what} must be a float array (wrap a scalar: np.array([v]))")
    return a
