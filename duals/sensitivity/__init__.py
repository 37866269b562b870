"""duals.sensitivity: how a model's outputs depend on its parameters, computed exactly.

* :func:`solve_ivp` -- SciPy's ``solve_ivp`` with the forward sensitivities of the solution,
  ``∂y(t)/∂p`` (and ``∂y(t)/∂y0``), solved together with the state;
* :func:`adjoint_gradient` -- the gradient of a scalar functional of an ODE solution by the
  continuous adjoint method, for many parameters;
* :func:`local` -- a Jacobian with its normalised (elasticity) coefficients ``(p_j / f_i) ∂f_i/∂p_j``;
* :func:`dgsm` -- derivative-based global sensitivity measures, in SALib's result layout.

Each is loaded on first use; SciPy (the ``sensitivity`` extra) is imported only by the functions
that need it, and ``import duals`` imports none of this.

>>> import duals.sensitivity as sens
>>> print(sens.local(lambda p: p[0] ** 2 * p[1], [2.0, 3.0], names=["a", "b"]).normalized)
[[2. 1.]]
"""
import importlib

# public name -> the module (in this package) that defines it; no module is named like a
# function, so that importing a module never hides the function of the same name
_WHERE = {
    "solve_ivp": "ode", "SensitivityResult": "ode", "SolveFailedError": "ode",
    "adjoint_gradient": "adjoint", "AdjointResult": "adjoint",
    "local": "normalized", "LocalSensitivity": "normalized",
    "dgsm": "global_measures", "DGSMResult": "global_measures",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'duals.sensitivity' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
