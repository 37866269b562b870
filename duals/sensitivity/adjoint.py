"""Gradients of a functional of an ODE solution by the continuous adjoint method.

For ``y' = f(t, y, p)``, ``y(t0) = y0`` and

    J = Σ_k loss(t_k, y(t_k)) + ∫_{t0}^{t1} integrand(t, y(t)) dt,

(``loss(t, y, p)`` and ``integrand(t, y, p)`` where they read the parameters directly, as a
terminal voltage ``V = U(y) - I Rc`` does: their own ``p``-derivatives add to ``dJ/dp``)

the adjoint ``λ`` solves ``λ' = -J_y^T λ - ∂integrand/∂y`` backwards from ``λ(t1) = 0``,
jumping by ``∂loss/∂y`` at each observation time ``t_k``; then ``dJ/dp = ∫ J_p^T λ dt`` and
``dJ/dy0 = λ(t0)``. The forward solve keeps SciPy's dense output (the checkpoints from which
``y(t)`` is read on the way back); the backward solve integrates ``λ``, the accumulating
``∫ J_p^T λ`` and the integral of ``integrand`` together, one segment between consecutive
observation times at a time. ``J_y^T λ`` and ``J_p^T λ`` come from one ``duals.vjp`` of ``fun``
per evaluation (compiled reverse mode for a ``@numba.njit`` ``fun``), so the cost grows with the
number of states, not of parameters.

The gradient is that of the exact solution, to the tolerances of both solves (not the
derivative of SciPy's discrete solution): tighten ``rtol``/``atol`` for more digits.

>>> res = adjoint_gradient(lambda t, y, k: -k * y, (0.0, 1.0), [2.0], 0.5,
...                        loss=lambda t, y: y[0], rtol=1e-10, atol=1e-12)
>>> round(res.grad_p, 8), round(-2.0 * 2.718281828459045 ** -0.5, 8)   # d y(1)/dk = -y0 t e^{-kt}
(-1.21306132, -1.21306132)
"""
import numpy as np

from ..transforms import value_and_grad
from ._optional import require
from .model import RightHandSide
from .ode import SolveFailedError, _is_implicit, reached
from .parameters import Parameters, as_state, returning_a_number, takes_parameters

__all__ = ["adjoint_gradient", "AdjointResult"]

WHO = "duals.sensitivity.adjoint_gradient"


class AdjointResult:
    """AdjointResult: the functional and its gradients (see :func:`adjoint_gradient`).

    Attributes:
        value: ``J``, a float.
        grad_p: ``dJ/dp`` shaped like ``p`` (a dict for a dict, a float for a float).
        grad_y0: ``dJ/dy0``, shape ``(n_state,)``.
        gradient: ``dJ/dp`` flattened, labelled by ``parameter_names``.
        forward: SciPy's result of the forward solve (with ``sol``, the dense output).
        nfev_forward, nfev_backward: evaluations of ``fun`` and of the adjoint system.
        segments: how many backward solves ran (one per interval between observation times).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (f"AdjointResult(value={self.value!r}, grad_p={self.grad_p!r}, "
                f"grad_y0={self.grad_y0!r}, nfev_forward={self.nfev_forward}, "
                f"nfev_backward={self.nfev_backward}, segments={self.segments})")


def _observation_times(t_eval, loss, t0, t1):
    if loss is None:
        if t_eval is not None:
            raise TypeError(f"{WHO}: t_eval gives the observation times of loss, but no loss "
                            f"was given")
        return np.zeros(0)
    if t_eval is None:
        return np.array([t1])
    times = np.atleast_1d(np.asarray(t_eval, dtype=np.float64))
    if times.ndim != 1:
        raise ValueError(f"{WHO}: t_eval must be 1-dimensional, got shape {times.shape}")
    lo, hi = min(t0, t1), max(t0, t1)
    if times.size and (times.min() < lo or times.max() > hi):
        raise ValueError(f"{WHO}: the observation times t_eval must lie in t_span = ({t0}, {t1})")
    steps = np.diff(times) * np.sign(t1 - t0)
    if np.any(steps < 0):
        raise ValueError(f"{WHO}: t_eval must be sorted in the direction of integration")
    if np.any(steps == 0):
        repeated = times[1:][steps == 0][0]
        raise ValueError(f"{WHO}: t_eval gives t = {repeated:g} more than once; give each time "
                         f"once, and let loss(t, y) add up the replicate observations at that time")
    return times


class _Checkpoints:
    """``y(t)`` from SciPy's dense output of the forward solve; the backward solve asks for times
    close together, so the last step's interpolant is tried first."""

    def __init__(self, solution):
        ts = np.asarray(solution.ts)
        self.ascending = ts[-1] >= ts[0]
        self.ts = ts if self.ascending else ts[::-1]
        self.interpolants = list(solution.interpolants if self.ascending
                                 else solution.interpolants[::-1])
        self.last = len(self.interpolants) - 1

    def __call__(self, t):
        i = self.last
        if not self.ts[i] <= t <= self.ts[i + 1]:
            i = int(np.clip(np.searchsorted(self.ts, t) - 1, 0, len(self.interpolants) - 1))
            self.last = i
        step = self.interpolants[i]
        if type(step).__name__ == "RkDenseOutput":
            return _runge_kutta_interpolant(step, t)
        return step(t)


def _runge_kutta_interpolant(step, t):
    """SciPy's RK23/RK45 dense output at one time, ``y_old + h Q (x, x², ...)`` with
    ``x = (t - t_old) / h``: the value its ``__call__`` gives, without its array handling (the
    backward solve asks for one time at each of thousands of evaluations)."""
    x = (t - step.t_old) / step.h
    powers = np.empty(step.Q.shape[1])
    power = 1.0
    for k in range(powers.size):
        power *= x
        powers[k] = power
    return step.h * (step.Q @ powers) + step.y_old


class _Term:
    """A term of the functional, ``loss`` or ``integrand``, taking ``(t, y)`` or ``(t, y, p)``:
    ``(value, ∂/∂y, ∂/∂p flattened or None)`` at a point."""

    def __init__(self, f, params, call):
        self.params = params
        self.with_p = takes_parameters(f, call, params, WHO)
        checked = returning_a_number(f, WHO, call + (", p)" if self.with_p else ")"))
        self.value_and_grad = value_and_grad(checked, argnums=(1, 2) if self.with_p else 1)

    def __call__(self, t, y):
        if not self.with_p:
            value, gy = self.value_and_grad(t, y)
            return value, gy, None
        value, (gy, gp) = self.value_and_grad(t, y, self.params.value)
        return value, gy, np.asarray(self.params.columns(gp, 1), dtype=np.float64).reshape(-1)


class _Adjoint:
    """The adjoint system ``a = [λ, ∫ J_p^T λ, ∫ integrand]`` read along the forward solution."""

    def __init__(self, rhs, solution, integrand):
        self.rhs, self.solution, self.n, self.m = rhs, solution, rhs.n, rhs.m
        self.integrand = integrand   # a _Term or None
        self.size = self.n + self.m + (1 if integrand is not None else 0)

    def __call__(self, t, a):
        n, m = self.n, self.m
        y = self.solution(t)
        gy, gp = self.rhs.pull(t, y, a[:n])
        out = np.empty(self.size)
        out[:n] = -gy
        out[n:n + m] = -gp
        if self.integrand is not None:
            q, qy, qp = self.integrand(t, y)
            out[:n] -= np.asarray(qy, dtype=np.float64).reshape(n)
            if qp is not None:
                out[n:n + m] -= qp
            out[-1] = -float(q)
        return out

    def jacobian(self, t, a):
        _, Jy, Jp = self.rhs.jacobians(t, self.solution(t))
        J = np.zeros((self.size, self.size))
        J[:self.n, :self.n] = -Jy.T
        J[self.n:self.n + self.m, :self.n] = -Jp.T
        return J


def adjoint_gradient(fun, t_span, y0, p, loss=None, *, t_eval=None, integrand=None,
                     method="RK45", rtol=1e-3, atol=1e-6, adjoint_atol=None, names=None,
                     **options):
    """adjoint_gradient(fun, t_span, y0, p, loss=None, *, t_eval=None, integrand=None, method='RK45', rtol=1e-3, atol=1e-6, adjoint_atol=None, names=None, **options) -> AdjointResult.

    The gradient of ``J = Σ_k loss(t_k, y(t_k)) + ∫ integrand(t, y) dt`` with respect to ``p``
    and ``y0``, by the continuous adjoint method (one forward and one backward solve, whatever
    the number of parameters).

    Args:
        fun, t_span, y0, p, names: as in :func:`duals.sensitivity.solve_ivp`.
        loss: ``loss(t, y)`` returning a float, summed over the observation times; Python code
            or ``@numba.njit``. A loss that reads the parameters directly (a misfit of a terminal
            voltage ``U(y) - I * p["Rc"]``) takes them as a third argument, ``loss(t, y, p)``,
            and their direct part is differentiated too; one that reads ``p`` from a closure or
            a global is refused (that part would be missing).
        t_eval: the observation times of ``loss``, sorted in the direction of integration
            (default: the final time only).
        integrand: ``integrand(t, y)`` (or ``integrand(t, y, p)``) returning a float,
            integrated over ``t_span``.
        method, rtol, atol: SciPy's, for both solves; the implicit methods (``BDF``,
            ``Radau``, ``LSODA``) get the exact Jacobians of both systems.
        options: further keywords of SciPy's solver, for both solves.
        adjoint_atol: the absolute tolerance of the backward solve (default: the smallest
            entry of ``atol``).

    Returns:
        An :class:`AdjointResult` (``value``, ``grad_p``, ``grad_y0``, solver counts).

    Raises:
        SolveFailedError: the forward or a backward solve failed (status and message attached).

    >>> import numpy as np
    >>> res = adjoint_gradient(lambda t, y, p: -p["k"] * y, (0.0, 1.0), [1.0], {"k": 1.0},
    ...                        integrand=lambda t, y: y[0], rtol=1e-10, atol=1e-12)
    >>> round(res.value, 8), round(res.grad_p["k"], 8)      # ∫ e^{-kt} dt and its k-derivative
    (0.63212056, -0.26424112)
    """
    integrate = require("scipy.integrate", WHO)
    if "events" in options:
        raise TypeError(f"{WHO}: events= is not accepted: the adjoint runs backwards over one smooth "
                        f"solution. Split at the events (doses, switches): adjoint_gradient of each "
                        f"segment, the last first, whose loss adds the next segment's grad_y0 · y at "
                        f"its end (a jump y+ = y- + dose passes grad_y0 on unchanged); or "
                        f"duals.sensitivity.solve_ivp, forward, which takes events=")
    for option in ("jac", "jac_sparsity", "args", "vectorized", "dense_output"):
        if option in options:
            raise TypeError(f"{WHO}: {option}= is not accepted (duals sets up both solves)")
    if "workers" in options:
        raise TypeError(f"{WHO}: workers= is not accepted: the forward solve and then the adjoint "
                        f"solve each step through time in order, so there is nothing independent "
                        f"to spread; to use several processes, spread independent calls (parameter "
                        f"sets) yourself, e.g. with concurrent.futures' executor.map")
    if loss is None and integrand is None:
        raise TypeError(f"{WHO}: give loss (with t_eval) and/or integrand: the functional to "
                        f"differentiate")
    y0 = as_state(y0, WHO)
    n = y0.size
    params = Parameters(p, WHO, names)
    rhs = RightHandSide(fun, params, n, WHO)
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"{WHO}: t_span must be a pair of floats (t0, tf), got {t_span!r}") from None
    times = _observation_times(t_eval, loss, t0, t1)
    rhs.first_value(t0, y0)
    implicit = _is_implicit(method)
    forward_jac = {"jac": lambda t, y: rhs.jacobians(t, y)[1]} if implicit else {}
    forward = integrate.solve_ivp(rhs.value, (t0, t1), y0, method=method,
                                  t_eval=times if times.size else None, dense_output=True,
                                  rtol=rtol, atol=atol, **forward_jac, **options)
    if forward.status == -1:
        raise SolveFailedError(WHO + " (forward solve)", forward.status, forward.message,
                               reached(forward, t0), method)
    system = _Adjoint(rhs, _Checkpoints(forward.sol),
                      None if integrand is None else _Term(integrand, params, "integrand(t, y"))
    rhs.expect_pulls(t1, np.zeros(rhs.n), forward.nfev)   # the backward solve makes about as many
    backward_jac = {"jac": system.jacobian} if implicit else {}
    tolerance = float(np.min(atol)) if adjoint_atol is None else np.asarray(adjoint_atol, dtype=float)
    loss_and_grad = None if loss is None else _Term(loss, params, "loss(t, y")
    a, value, now, nfev, segments = np.zeros(system.size), 0.0, t1, 0, 0

    def back_to(target, a):
        nonlocal nfev, segments
        # the quadratures start each segment at their value so far and grow at |a'|: measure
        # them relative to the growth over the segment, not to adjoint_atol (which would make
        # the first step vanishingly small)
        growth = np.abs(system(now, a)[n:]) * abs(target - now) * rtol
        atol_a = np.concatenate([np.broadcast_to(tolerance, (n,)),
                                 np.maximum(np.min(tolerance), growth)])
        run = integrate.solve_ivp(system, (now, target), a, method=method, rtol=rtol,
                                  atol=atol_a, **backward_jac, **options)
        if run.status == -1:
            raise SolveFailedError(WHO + " (backward solve)", run.status, run.message,
                                   reached(run, now), method, "rtol/adjoint_atol")
        nfev += run.nfev
        segments += 1
        return run.y[:, -1].copy()

    for k in range(times.size - 1, -1, -1):
        if times[k] != now:
            a = back_to(times[k], a)
            now = times[k]
        g, g_y, g_p = loss_and_grad(float(times[k]), forward.y[:, k].copy())
        value += float(g)
        a[:n] += np.asarray(g_y, dtype=np.float64).reshape(n)
        if g_p is not None:   # (the parameters' part accumulates; nothing flows back from it)
            a[n:n + params.size] += g_p
    if now != t0:
        a = back_to(t0, a)
    if integrand is not None:
        value += a[-1]
    gradient = a[n:n + params.size].copy()
    return AdjointResult(value=float(value), grad_p=params.group(gradient), grad_y0=a[:n].copy(),
                         gradient=gradient, parameter_names=list(params.labels), forward=forward,
                         nfev_forward=int(forward.nfev), nfev_backward=int(nfev), segments=segments)

