"""Forward sensitivities of an ODE solution: SciPy's ``solve_ivp`` on the state and its sensitivities.

For ``y' = f(t, y, p)`` the sensitivities ``S = ∂y/∂(p, y0)`` obey ``S' = J_y S + [J_p, 0]``,
``S(t0) = [0, I]``. :func:`solve_ivp` integrates the state and every column of ``S`` as one
augmented system (the simultaneous corrector method), so SciPy's step-size control measures
the error of the sensitivities as well as that of the state. The columns of ``S`` travel as
lanes of one forward pass through ``fun`` (compiled when ``fun`` is a Numba dispatcher); the
implicit methods get the exact Jacobian of the augmented system, second derivatives of ``fun``
included (forward over forward).

>>> from duals.sensitivity import solve_ivp
>>> res = solve_ivp(lambda t, y, k: -k * y, (0.0, 2.0), [1.0], 0.5, t_eval=[2.0], rtol=1e-10, atol=1e-12)
>>> round(float(res.sensitivity[0, 0, -1]), 8)      # dy/dk = -t exp(-k t) at t = 2
-0.73575888
"""
import numpy as np

from ._optional import require
from .model import RightHandSide
from .parameters import Parameters, as_state, takes_parameters

_integrate = require("scipy.integrate", "duals.sensitivity.solve_ivp")
try:
    from scipy.integrate._ivp.ivp import OdeResult as _OdeResult
except ImportError:  # the class moved: its public base has the same behaviour
    from scipy.optimize import OptimizeResult as _OdeResult

__all__ = ["solve_ivp", "SensitivityResult", "SolveFailedError"]

WHO = "duals.sensitivity.solve_ivp"
IMPLICIT = ("BDF", "Radau", "LSODA")
# above this many augmented unknowns the Jacobian goes to BDF and Radau as a sparse matrix
SPARSE_FROM = 400
_REFUSED = {
    "jac": "duals computes the exact Jacobian of the augmented system itself; leave jac out",
    "jac_sparsity": "duals computes the exact Jacobian of the augmented system; leave jac_sparsity out",
    "args": "p reaches fun as its third argument; put other constants in a closure",
    "vectorized": "fun is called once per state (vectorized=True is not used); leave it out",
    "workers": "the state and its sensitivities are one coupled system that the solver steps "
               "through in order, under one step-size control, so there is nothing independent "
               "to spread (solving groups of columns apart would change the steps, and the "
               "numbers); to use several processes, spread independent solves (parameter sets, "
               "initial states) yourself, e.g. with concurrent.futures' executor.map",
}


class SolveFailedError(RuntimeError):
    """SolveFailedError: the integration stopped before the end; ``status``, ``message`` and the
    time reached ``t`` are SciPy's. No partial solution or sensitivities are returned."""

    def __init__(self, who, status, message, t, method=None, tolerances="rtol/atol"):
        self.status, self.message, self.t = status, message, t
        others = [m for m in _STIFF if m != method]
        kind = "another stiff method" if method in _STIFF else "a stiff method"
        methods = " or ".join(f"'{m}'" for m in others[:2])
        super().__init__(f"{who}: the solver failed at t = {t:.6g} (status {status}): {message} "
                         f"No solution or sensitivities are returned; try {kind} (method={methods}), "
                         f"other {tolerances}, or check fun near that time.")


_STIFF = ("BDF", "Radau", "LSODA")


class SensitivityResult(_OdeResult):
    """SciPy's ``OdeResult`` with the sensitivities of the solution (see :func:`solve_ivp`).

    ``sensitivity[i, j, k]`` is ``∂y_i(t_k)/∂θ_j`` with ``θ_j`` named ``parameter_names[j]``;
    :meth:`sensitivity_to` selects by name.
    """

    def sensitivity_to(self, name):
        """sensitivity_to(name) -> the sensitivities to one named parameter, aligned with ``y``.

        ``name`` is a key of a dict ``p`` (an array entry of shape ``s`` gives shape
        ``(n_state,) + s + (n_time,)``), ``"p"`` for a plain ``p``, ``"y0"`` (with
        ``sens_y0=True``), or one label of ``parameter_names`` (shape ``(n_state, n_time)``).
        """
        n_time = self.sensitivity.shape[-1]
        n = self.sensitivity.shape[0]
        found = self._params.find(name)
        if found is None and name == "y0" and self._sens_y0:
            m = self._params.size
            found = (m, m + n, (n,))
        if found is None and name in self.parameter_names:
            j = self.parameter_names.index(name)
            found = (j, j + 1, ())
        if found is None:
            raise KeyError(f"sensitivity_to: no parameter named {name!r}; the names are "
                           f"{self._keys()} and the entries {self.parameter_names}")
        start, stop, shape = found
        return self.sensitivity[:, start:stop, :].reshape((n,) + shape + (n_time,))

    def _keys(self):
        keys = [key for key, *_ in self._params.blocks]
        return keys + (["y0"] if self._sens_y0 else [])

    def __dir__(self):
        return super().__dir__() + ["sensitivity_to"]


class _Part:
    """Rows of SciPy's ``OdeSolution`` of the augmented system: the state, or the sensitivities
    reshaped to ``(n_state, n_param)`` (``(n_state, n_param, len(t))`` for an array ``t``)."""

    def __init__(self, full, rows, shape):
        self.full, self.rows, self.shape = full, rows, shape
        self.t_min, self.t_max, self.ts = full.t_min, full.t_max, full.ts

    def __call__(self, t):
        z = self.full(t)[self.rows]
        if self.shape is None:
            return z
        k, n = self.shape
        if np.ndim(t) == 0:
            return z.reshape(k, n).T
        return z.reshape(k, n, -1).transpose(1, 0, 2)


def _tolerances(atol, sens_atol, y0, params, sens_y0, k):
    n = y0.size
    try:
        atol_y = np.broadcast_to(np.asarray(atol, dtype=np.float64), (n,))
    except ValueError:
        raise ValueError(f"{WHO}: atol must be a scalar or have one entry per state ({n},), got "
                         f"shape {np.shape(atol)}") from None
    if sens_atol is None:
        # CVODES' rule: a sensitivity to θ_j is measured in units of y / |θ_j|
        scale = np.abs(np.concatenate([params.flat, y0 if sens_y0 else np.zeros(0)]))
        scale[scale == 0] = 1.0
        atol_s = atol_y[:, None] / scale[None, :]
    else:
        try:
            atol_s = np.broadcast_to(np.asarray(sens_atol, dtype=np.float64), (n, k))
        except ValueError:
            raise ValueError(f"{WHO}: sens_atol must broadcast to (n_state, n_param) = ({n}, {k}), "
                             f"got shape {np.shape(sens_atol)}") from None
    return np.concatenate([atol_y, atol_s.T.reshape(-1)])


def reached(sol, t0):
    """The last time a (failed) SciPy solve reached: its dense output's end, else its last point."""
    if getattr(sol, "sol", None) is not None:
        return float(sol.sol.ts[-1])
    return float(sol.t[-1]) if len(sol.t) else t0


def _is_implicit(method):
    if isinstance(method, str):
        return method in IMPLICIT
    return isinstance(method, type) and issubclass(
        method, tuple(getattr(_integrate, name) for name in IMPLICIT))


def _wrap_event(event, n, p, with_p):
    def wrapped(t, z):
        return event(t, z[:n], p) if with_p else event(t, z[:n])
    for attribute in ("terminal", "direction"):
        if hasattr(event, attribute):
            setattr(wrapped, attribute, getattr(event, attribute))
    return wrapped


class _Augmented:
    """The augmented system ``z = [y, S[:, 0], ..., S[:, k-1]]`` and its exact Jacobian."""

    def __init__(self, rhs, k, sparse):
        self.rhs, self.n, self.k, self.sparse = rhs, rhs.n, k, sparse
        n = self.n
        self.size = n * (1 + k)
        blocks = np.arange(k + 1)[:, None, None] * n
        rows = np.arange(n)[None, :, None] + blocks
        cols = np.arange(n)[None, None, :] + blocks
        self.diagonal = (np.broadcast_to(rows, (k + 1, n, n)).reshape(-1),
                         np.broadcast_to(cols, (k + 1, n, n)).reshape(-1))
        self.lower = (np.repeat(n + np.arange(k * n), n), np.tile(np.arange(n), k * n))

    def split(self, z):
        return z[:self.n], z[self.n:].reshape(self.k, self.n).T

    def __call__(self, t, z):
        y, S = self.split(z)
        f, F = self.rhs.push(t, y, S)
        out = np.empty(self.size)
        out[:self.n] = f
        out[self.n:] = F.T.reshape(-1)
        return out

    def jacobian(self, t, z):
        y, S = self.split(z)
        Jy, _, D = self.rhs.second(t, y, S)
        n, k = self.n, self.k
        blocks = np.broadcast_to(Jy, (k + 1, n, n)).reshape(-1)
        if self.sparse:
            sp = require("scipy.sparse", WHO)
            data = np.concatenate([blocks, D.reshape(-1)])
            rows = np.concatenate([self.diagonal[0], self.lower[0]])
            cols = np.concatenate([self.diagonal[1], self.lower[1]])
            return sp.csc_matrix((data, (rows, cols)), shape=(self.size, self.size))
        J = np.zeros((self.size, self.size))
        J[self.diagonal] = blocks
        J[n:, :n] = D.reshape(k * n, n)
        return J


def solve_ivp(fun, t_span, y0, p, *, sens_y0=False, method="RK45", t_eval=None,
              dense_output=False, events=None, rtol=1e-3, atol=1e-6, sens_atol=None, names=None,
              **options):
    """solve_ivp(fun, t_span, y0, p, *, sens_y0=False, method='RK45', t_eval=None, dense_output=False, events=None, rtol=1e-3, atol=1e-6, sens_atol=None, names=None, **options) -> SensitivityResult.

    SciPy's :func:`scipy.integrate.solve_ivp` for ``y' = fun(t, y, p)``, with the sensitivities
    of the solution to the parameters ``p`` (and to ``y0`` with ``sens_y0=True``).

    Args:
        fun: ``fun(t, y, p)`` returning ``dy/dt`` of shape ``(n_state,)``: Python code that duals
            differentiates (``duals.numpy`` functions, operators; build arrays with
            ``dnp.stack`` or return a list) or a ``@numba.njit`` function, which then runs
            compiled on dual numbers (``p`` must be an array for it).
        t_span, y0, method, t_eval, dense_output, rtol: as in SciPy. ``y0`` must be real;
            integers are promoted.
        options: further keywords of SciPy's solver (``first_step``, ``max_step``, ...).
        p: a float, a float array of any shape, or a dict of named floats and arrays; ``fun``
            receives it as given (floats as floats, arrays as float64 arrays).
        sens_y0: also compute ``∂y(t)/∂y0`` (columns after those of ``p``).
        atol: scalar or one entry per state, for the state.
        sens_atol: absolute tolerance of the sensitivities, broadcast to ``(n_state, n_param)``;
            by default ``atol_i / |θ_j|`` (``atol_i`` where ``θ_j = 0``), as CVODES scales them.
        names: labels for the entries of an array ``p`` (a dict is labelled by its keys).
        events: functions ``event(t, y, p)`` or, as SciPy's, ``event(t, y)`` (``terminal`` and
            ``direction`` attributes as in SciPy); they see the state, not the sensitivities.

    Returns:
        A :class:`SensitivityResult`: every field of SciPy's result (``t``, ``y``, ``nfev`` and
        ``njev`` counting evaluations of the augmented system, ``status``, ``message``, ...) and

        * ``sensitivity``: shape ``(n_state, n_param, n_time)``, ``∂y_i(t_k)/∂θ_j``, aligned with
          ``y`` (``n_param`` counts the entries of ``p``, plus ``n_state`` with ``sens_y0``);
        * ``parameter_names``: the label of each column (``"k1"``, ``"K[0,1]"``, ``"y0[2]"``) and
          ``sensitivity_to(name)`` to select one parameter by name;
        * with ``dense_output=True``: ``sol(t)`` (the state, as SciPy's) and ``sensitivity_sol(t)``
          (shape ``(n_state, n_param)`` or ``(n_state, n_param, len(t))``), both the solver's own
          interpolant of the augmented solution, accurate to the tolerances; the sensitivity
          interpolant is not the derivative of the state interpolant;
        * with ``events``: ``y_events`` (the state), ``sensitivity_events[i]`` of shape
          ``(n_events_i, n_state, n_param)`` (at the event time held fixed) and
          ``t_events_sensitivity[i]`` of shape ``(n_events_i, n_param)``, the derivative of the
          event time, ``-(g_y S + g_p) / (g_t + g_y f)`` (NaN where the crossing is tangential:
          the event time is then not differentiable). The total derivative of the state at a
          moving event is ``S + f dt_e/dθ``.

    Raises:
        SolveFailedError: the solver failed (SciPy's ``status`` -1); its ``status`` and
            ``message`` are on the exception. No partial arrays are returned.

    Where ``fun`` jumps at a time that depends on ``p`` (``if t < p["td"]``), the sensitivities
    jump there too, and one solve over it misses that jump (a branch has derivative zero): split
    the solve at the switch and add ``(f⁻ − f⁺) ∂τ/∂θ`` (docs/sensitivity.md, "A switch that moves
    with a parameter").

    The state and the sensitivities form one system, so the step size is chosen for both:
    expect more steps than a plain solve. ``t_eval`` values come from the solver's interpolant,
    as in SciPy.

    >>> import numpy as np
    >>> res = solve_ivp(lambda t, y, p: -p["k"] * y, (0.0, 1.0), [2.0], {"k": 1.0},
    ...                 sens_y0=True, rtol=1e-10, atol=1e-12)
    >>> res.parameter_names, res.sensitivity.shape == (1, 2, res.t.size)
    (['k', 'y0[0]'], True)
    >>> bool(abs(res.sensitivity_to("y0")[0, 0, -1] - np.exp(-1.0)) < 1e-8)   # dy/dy0 = exp(-k t)
    True
    """
    for option, why in _REFUSED.items():
        if option in options and not (option == "vectorized" and not options[option]):
            raise TypeError(f"{WHO}: {option}= is not accepted: {why}")
    options.pop("vectorized", None)
    y0 = as_state(y0, WHO)
    n = y0.size
    params = Parameters(p, WHO, names)
    rhs = RightHandSide(fun, params, n, WHO)
    m = params.size
    k = m + (n if sens_y0 else 0)
    if k == 0:
        raise ValueError(f"{WHO}: there is nothing to differentiate: p is empty and sens_y0 is "
                         f"False")
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"{WHO}: t_span must be a pair of floats (t0, tf), got {t_span!r}") from None
    rhs.first_value(t0, y0)   # the shape of fun's result, checked before the solver sees it
    S0 = np.zeros((n, k))
    S0[:, m:] = np.eye(n) if sens_y0 else np.zeros((n, 0))
    z0 = np.concatenate([y0, S0.T.reshape(-1)])
    implicit = _is_implicit(method)
    system = _Augmented(rhs, k, sparse=implicit and method != "LSODA" and
                        n * (1 + k) >= SPARSE_FROM)
    if implicit:
        options["jac"] = system.jacobian
    wrapped = None
    if events is not None:
        listed = list(events) if isinstance(events, (list, tuple)) else [events]
        reading_p = [takes_parameters(e, "event(t, y", params, WHO) for e in listed]   # (SciPy's: (t, y))
        wrapped = [_wrap_event(e, n, params.value, with_p) for e, with_p in zip(listed, reading_p)]
    sol = _integrate.solve_ivp(system, (t0, t1), z0, method=method, t_eval=t_eval,
                               dense_output=dense_output, events=wrapped, rtol=rtol,
                               atol=_tolerances(atol, sens_atol, y0, params, sens_y0, k), **options)
    if sol.status == -1:
        raise SolveFailedError(WHO, sol.status, sol.message, reached(sol, t0), method)
    result = SensitivityResult(sol)
    object.__setattr__(result, "_params", params)
    object.__setattr__(result, "_sens_y0", bool(sens_y0))
    T = np.size(sol.t)
    z = np.asarray(sol.y, dtype=np.float64).reshape(n * (1 + k), T)   # SciPy: [] for t_eval=[]
    result.t = np.asarray(sol.t, dtype=np.float64)
    result.y = z[:n]
    result.sensitivity = z[n:].reshape(k, n, T).transpose(1, 0, 2)
    result.parameter_names = params.labels + ([f"y0[{i}]" for i in range(n)] if sens_y0 else [])
    if sol.sol is not None:
        result.sol = _Part(sol.sol, slice(0, n), None)
        result.sensitivity_sol = _Part(sol.sol, slice(n, None), (k, n))
    else:
        result.sensitivity_sol = None
    if wrapped is not None:
        _split_events(result, sol, listed, reading_p, rhs, params, n, k)
    return result


def _split_events(result, sol, events, reading_p, rhs, params, n, k):
    from ..transforms import jacfwd
    y_events, s_events, t_sens = [], [], []
    for event, with_p, t_hits, z_hits in zip(events, reading_p, sol.t_events, sol.y_events):
        z_hits = np.asarray(z_hits).reshape(len(t_hits), n * (1 + k))   # (0 hits: -1 is ambiguous)
        y_events.append(z_hits[:, :n])
        S = z_hits[:, n:].reshape(len(t_hits), k, n).transpose(0, 2, 1)
        s_events.append(S)
        rows = np.empty((len(t_hits), k))
        if len(t_hits):
            argnums = (0, 1, 2) if params.size and with_p else (0, 1)
            gradient = jacfwd(event, argnums=argnums)
        for h, (t, y) in enumerate(zip(t_hits, z_hits[:, :n])):
            parts = gradient(float(t), y, params.value) if with_p else gradient(float(t), y)
            g_t, g_y = float(parts[0]), np.asarray(parts[1], dtype=np.float64).reshape(n)
            g_p = np.zeros(k)
            if params.size and with_p:
                g_p[:params.size] = np.asarray(params.columns(parts[2], 1)).reshape(-1)
            speed = g_t + g_y @ rhs.value(float(t), y)
            with np.errstate(divide="ignore", invalid="ignore"):
                rows[h] = -(g_y @ S[h] + g_p) / speed if speed != 0 else np.nan
        t_sens.append(rows)
    result.y_events, result.sensitivity_events, result.t_events_sensitivity = y_events, s_events, t_sens
