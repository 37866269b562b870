"""The right-hand side ``fun(t, y, p)`` of an ODE and the derivatives the sensitivity solvers need.

With ``S`` a matrix of directions in state space whose first ``m`` columns also move ``p``
(column ``j < m`` along parameter ``j``), :meth:`RightHandSide.push` returns ``f`` and
``F = J_y S + [J_p, 0]``: the right-hand side of the forward sensitivity equations, all columns
as lanes of one forward pass. :meth:`RightHandSide.second` adds ``∂F/∂y`` (forward over
forward: the exact Jacobian of the augmented system), :meth:`RightHandSide.pull` returns
``(J_y^T λ, J_p^T λ)`` (the adjoint equations).

A Python ``fun`` goes through duals' transformations (``jacfwd`` over ``(y, p)``, ``vjp``). A
Numba dispatcher is called on arrays of dual numbers (:func:`duals.jit.dual_dtype`) whose lanes
carry the directions, so one compiled call gives ``f`` and ``F``; the buffers behind those
arrays are kept per lane count and rewritten in place. ``pull`` of a dispatcher uses
``duals.vjp`` where compiled reverse mode handles it, and otherwise the full Jacobian by
``n + m`` compiled lanes, transposed.

>>> import numpy as np
>>> rhs = RightHandSide(lambda t, y, k: -k * y, Parameters(0.5, "example"), 1, "example")
>>> f, F = rhs.push(0.0, np.array([2.0]), np.array([[0.0]]))
>>> f.tolist(), F.tolist()
([-1.0], [[-2.0]])
"""
import numpy as np

from .. import numpy as dnp
from ..arguments import is_compiled
from ..transforms import jacfwd, vjp
from .parameters import Parameters

__all__ = ["RightHandSide", "Parameters"]


def _stack(out):
    return dnp.stack(out) if isinstance(out, (list, tuple)) else out


class RightHandSide:
    """RightHandSide(fun, params, n, who): ``fun(t, y, p)`` for ``n`` states and the :class:`Parameters` ``params``."""

    def __init__(self, fun, params, n, who):
        if not callable(fun):
            raise TypeError(f"{who}: fun must be a function fun(t, y, p), got {type(fun).__name__}")
        self.fun, self.params, self.n, self.m, self.who = fun, params, n, params.size, who
        self.compiled = is_compiled(fun)
        if self.compiled and params.is_dict:
            raise TypeError(f"{who}: a @numba.njit fun receives p as one float array (Numba "
                            f"cannot take a dict of arrays); pass p as an array and label its "
                            f"entries with names=[...]")
        self._lanes = {}      # compiled: (lane count, first parameter lane) -> buffers
        self._jacobian = None  # Python: jacfwd of fun over (y, p), with f as aux
        self._unit_seeds = None
        self._compiled_vjp = True   # until duals.vjp of a dispatcher says it is not there

    # ------------------------------------------------------------------ values

    def value(self, t, y):
        """value(t, y) -> ``fun(t, y, p)`` as a float array of shape ``(n,)``."""
        return self.checked(self.fun(t, y, self.params.value))

    def first_value(self, t, y):
        """value(t, y), where an IndexError, KeyError, ValueError or TypeError of ``fun`` also
        names the shapes of ``y`` and ``p`` (the usual cause: ``p`` is not what ``fun`` expects)."""
        from numba.core.errors import NumbaError
        try:
            out = self.fun(t, y, self.params.value)
        except (IndexError, KeyError, ValueError, TypeError) as exc:
            raise type(exc)(f"{self.who}: fun(t0, y0, p) raised {type(exc).__name__}: {exc} "
                            f"(y0 has shape {np.shape(y)}, p is "
                            f"{self._describe_p()}); is p what fun expects?") from exc
        except NumbaError as exc:     # a compiled fun that does not compile for these arguments
            if "setitem(readonly array" in str(exc):
                raise ValueError(f"{self.who}: the compiled fun(t, y, p) writes into y or p, which "
                                 f"it gets read-only; it must leave them as they are (copy first: "
                                 f"p = p.copy())") from None
            from ..jit.errors import reraise
            try:
                reraise(exc, self.who, getattr(self.fun, "__name__", None), plain_too=True)
            except TypeError as short:
                raise TypeError(f"{short} (y0 has shape {np.shape(y)}, p is {self._describe_p()})") from None
        return self.checked(out)

    def _describe_p(self):
        value = self.params.value
        if self.params.is_dict:
            return "a dict of " + ", ".join(f"{k!r}: shape {np.shape(v)}" for k, v in value.items())
        return f"shape {np.shape(value)}"

    def checked(self, out, what="fun(t, y, p)"):
        try:
            a = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.who}: {what} returned a {type(out).__name__} that is not a "
                            f"float array ({exc}); return dy/dt as a 1-d array") from None
        if a.shape != (self.n,):
            raise ValueError(f"{self.who}: {what} returned shape {a.shape} but y0 has shape "
                             f"({self.n},); fun must return dy/dt, one entry per state (is p "
                             f"what fun expects? p is {self._describe_p()})")
        return a

    # ------------------------------------------------------------------ forward lanes

    def push(self, t, y, S):
        """push(t, y, S) -> ``(f, J_y S + [J_p, 0])``, ``S`` of shape ``(n, k)`` with ``k >= m``."""
        if self.compiled:
            return self._compiled_lanes(t, y, S, 0)
        f, Jy, Jp = self._python_jacobians(t, y)
        F = Jy @ S
        F[:, :self.m] += Jp
        return f, F

    def jacobians(self, t, y):
        """jacobians(t, y) -> ``(f, J_y, J_p)`` of shapes ``(n,)``, ``(n, n)``, ``(n, m)``."""
        if self.compiled:
            if self._unit_seeds is None:
                self._unit_seeds = np.zeros((self.n, self.n + self.m))
                self._unit_seeds[:, :self.n] = np.eye(self.n)
            f, F = self._compiled_lanes(t, y, self._unit_seeds, self.n)
            return f, F[:, :self.n], F[:, self.n:]
        return self._python_jacobians(t, y)

    def _python_jacobians(self, t, y):
        if self._jacobian is None:
            fun = self.fun
            if self.m:
                self._jacobian = jacfwd(lambda t, y, p: (_stack(fun(t, y, p)),) * 2,
                                        argnums=(1, 2), has_aux=True)
            else:
                jac_y = jacfwd(lambda t, y, p: (_stack(fun(t, y, p)),) * 2, argnums=1, has_aux=True)

                def no_parameters(t, y, p):
                    Jy, f = jac_y(t, y, p)
                    return (Jy, None), f
                self._jacobian = no_parameters
        (Jy, Jp), f = self._jacobian(t, y, self.params.value)
        f = self.checked(f)
        Jy = np.asarray(Jy, dtype=np.float64).reshape(self.n, self.n)
        Jp = np.zeros((self.n, 0)) if Jp is None else self.params.columns(Jp, self.n)
        return f, Jy, np.asarray(Jp, dtype=np.float64)

    def _compiled_lanes(self, t, y, S, first):
        """One compiled call with ``k = S.shape[1]`` lanes: state tangents ``S``, parameter ``j``
        seeded on lane ``first + j``; returns ``(f, F)``."""
        k = S.shape[1]
        found = self._lanes.get((k, first))
        if found is None:
            found = self._lanes[k, first] = self._make_lanes(k, first)
        y_buf, y_dual, p_buf, p_seed, p_dual = found
        y_buf[:, 0] = y
        y_buf[:, 1:] = S
        out = self._on_duals(t, y_dual, p_dual)
        if not np.array_equal(p_buf[:, 0], self.params.flat):   # the user's code wrote into p
            p_buf[:, 0] = self.params.flat
            p_buf[:, 1:] = p_seed
            raise ValueError(f"{self.who}: the compiled fun(t, y, p) changed p in place; it must "
                             f"leave p as it is (copy it first)")
        return self._parts(out, k)

    def _on_duals(self, t, y_dual, p_dual):
        """The compiled ``fun`` on dual arrays as the compiled entry points call it: buffers it
        makes itself (``np.empty(n)``) hold duals, and what cannot compile says so in a line."""
        from ..jit.calling import call_on_duals
        return call_on_duals(self.fun, (t, y_dual, p_dual), self.who)

    def _make_lanes(self, k, first):
        from ..jit import dual_dtype
        dt = dual_dtype(k)
        y_buf = np.zeros((self.n, 1 + k))
        m = max(self.m, 1) if np.ndim(self.params.value) == 0 else self.m
        p_buf = np.zeros((m, 1 + k))
        p_seed = np.zeros((m, k))
        p_seed[np.arange(self.m), first + np.arange(self.m)] = 1.0
        p_buf[:, 0] = self.params.flat
        p_buf[:, 1:] = p_seed
        p_view = p_buf.view(dt)[:, 0]
        shape = np.shape(self.params.value)
        p_dual = p_view[0] if shape == () else p_view.reshape(shape)
        return y_buf, y_buf.view(dt)[:, 0], p_buf, p_seed, p_dual

    def _parts(self, out, k):
        from ..jit import dual_dtype
        if isinstance(out, np.ndarray) and out.dtype == dual_dtype(k):
            f, F = out["primal"], out["tangent"]
        elif isinstance(out, np.ndarray) and out.dtype.kind in "fiu":
            f, F = out, np.zeros(out.shape + (k,))
        else:
            raise TypeError(f"{self.who}: the compiled fun(t, y, p) returned a "
                            f"{type(out).__name__}{' of dtype ' + str(out.dtype) if isinstance(out, np.ndarray) else ''}; "
                            f"return dy/dt as one array (np.empty_like(y) filled entry by entry)")
        f = self.checked(f)
        return f, np.array(F, dtype=np.float64).reshape(self.n, k)

    # ------------------------------------------------------------------ second order

    def second(self, t, y, S):
        """second(t, y, S) -> ``(J_y, F, D)`` with ``F = J_y S + [J_p, 0]`` and ``D[j] = ∂F[:, j]/∂y``, shape ``(k, n, n)``.

        ``F`` is the Jacobian in ``c`` of ``fun(t, y + S c, p + c[:m])`` at ``c = 0`` (``k`` lanes),
        and ``D`` that, differentiated in ``y`` (``n`` lanes over ``k``): ``n k`` lanes in all, not
        the ``n (n + m)`` of differentiating the whole Jacobian (cubic in ``n``)."""
        n, k = S.shape
        if self.compiled:
            return self._compiled_second(t, y, S)
        f, Jy, _ = self._python_jacobians(t, y)
        fun, params, m = self.fun, self.params, self.m

        def along_directions(state):
            def moved(c):
                p = params.rebuild(params.flat + c[:m]) if m else params.value
                return _stack(fun(t, state + S @ c, p))
            F = jacfwd(moved)(np.zeros(k))
            return F, F

        D, F = jacfwd(along_directions, has_aux=True)(y)
        D = np.asarray(D, dtype=np.float64).reshape(n, k, n)
        return Jy, np.asarray(F, dtype=np.float64).reshape(n, k), np.ascontiguousarray(D.transpose(1, 0, 2))

    def _compiled_second(self, t, y, S):
        """:meth:`second` of a dispatcher: nested duals, ``k`` inner lanes (the directions) under
        chunks of at most ``COMPILED_HESSIAN_LANES`` outer ones (unit vectors of ``y``, the last
        chunk padded), so one specialisation serves every ``n``."""
        from ..arguments import COMPILED_HESSIAN_LANES
        from ..jit import dual_array
        n, k = S.shape
        value = self.params.value
        shape = np.shape(value)
        inner_p = np.zeros((k, self.m))
        inner_p[np.arange(self.m), np.arange(self.m)] = 1.0
        inner_p = inner_p.reshape((k,) + shape)
        lanes = min(n, COMPILED_HESSIAN_LANES)
        Jy, F, D = np.zeros((n, n)), None, np.zeros((n, n, k))
        for start in range(0, n, lanes):
            units = np.zeros((lanes, n))
            stop = min(start + lanes, n)
            units[np.arange(stop - start), np.arange(start, stop)] = 1.0
            y_dual = dual_array(y, units, inner=(S.T,))
            p_dual = dual_array(np.asarray(value, dtype=np.float64), np.zeros((lanes,) + shape),
                                inner=(inner_p,))
            out = self._on_duals(t, y_dual, p_dual[()] if shape == () else p_dual)
            if not (isinstance(out, np.ndarray) and out.dtype.names == ("primal", "tangent")
                    and out.dtype["primal"].names == ("primal", "tangent")):
                f, F = self._parts(out, k)
                return np.zeros((n, n)), F, np.zeros((k, n, n))
            if F is None:
                self.checked(out["primal"]["primal"])
                F = np.array(out["primal"]["tangent"], dtype=np.float64).reshape(n, k)
            Jy[:, start:stop] = np.asarray(out["tangent"]["primal"]).reshape(n, lanes)[:, :stop - start]
            D[:, start:stop] = np.asarray(out["tangent"]["tangent"]).reshape(n, lanes, k)[:, :stop - start]
        return Jy, F, np.ascontiguousarray(D.transpose(2, 0, 1))

    # ------------------------------------------------------------------ reverse

    def expect_pulls(self, t, y, calls):
        """expect_pulls(t, y, calls): about ``calls`` calls of :meth:`pull` are coming (compiled
        reverse mode then builds its per-call driver as soon as they pay for it)."""
        if self.compiled and self._compiled_vjp:
            from ..jit.reverse import expect_pulls
            expect_pulls(self.fun, [t, y, self.params.value], [1, 2], calls)

    def pull(self, t, y, lam):
        """pull(t, y, lam) -> ``(J_y^T lam, J_p^T lam)``, shapes ``(n,)`` and ``(m,)``."""
        if self.compiled:
            if self._compiled_vjp:  # compiled reverse mode: one recording and one sweep
                try:
                    _, (gy, gp) = _pull_once()(self.fun, [t, y, self.params.value], [1, 2], lam)
                    return (np.asarray(gy, dtype=np.float64).reshape(self.n),
                            np.asarray(gp, dtype=np.float64).reshape(self.m))
                except TypeError:   # a construct the tape does not record (linear algebra)
                    self._compiled_vjp = False
            _, Jy, Jp = self.jacobians(t, y)
            return Jy.T @ lam, Jp.T @ lam
        fun = self.fun
        if self.m:
            _, pullback = vjp(lambda y, p: _stack(fun(t, y, p)), y, self.params.value)
            gy, gp = pullback(lam)
            return (np.asarray(gy, dtype=np.float64),
                    np.asarray(self.params.columns(gp, 1), dtype=np.float64).reshape(self.m))
        _, pullback = vjp(lambda y: _stack(fun(t, y, self.params.value)), y)
        return np.asarray(pullback(lam)[0], dtype=np.float64), np.zeros(0)


def _pull_once():
    """duals.jit.reverse.pull_once, imported on first use (compiled mode is optional)."""
    global _PULL_ONCE
    if _PULL_ONCE is None:
        from ..jit.reverse import pull_once
        _PULL_ONCE = pull_once
    return _PULL_ONCE


_PULL_ONCE = None
