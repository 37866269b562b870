"""When compiled mode is installed: on first use, never merely by ``import duals``.

Compiled mode (:mod:`duals.jit`) extends Numba (a dual type, typing hooks for dual arrays). It is
loaded by whichever comes first:

* a transformation given a Numba dispatcher (``duals.jacfwd(njit_fn)``);
* ``duals.jit`` itself (``import duals.jit``, or the attribute ``duals.jit``);
* Numba's own extension entry point (``numba_extensions`` in ``pyproject.toml``), which Numba
  runs just before it compiles anything: it loads compiled mode only when ``duals`` has been
  imported in the process, so that a ``duals.Dual`` can enter a user's ``@njit`` function, and
  it never raises into unrelated Numba code (a failure becomes a warning here and a clear error
  when compiled mode is used);
* ``import duals`` in a process that has already imported Numba (it costs no import then).

A process that never imports duals is never touched, and ``import duals`` does not import Numba.
This module lives outside the ``duals`` package so that Numba loading the entry point does not
import duals.
"""
import sys
import warnings

_FAILURE = []


def init():
    """Numba's ``numba_extensions.init`` entry point: load compiled mode if duals is in use."""
    if "duals" not in sys.modules or "duals.jit" in sys.modules:
        return
    try:
        import duals.jit  # noqa: F401
    except Exception as exc:  # never break someone else's Numba code
        _FAILURE.append(exc)
        warnings.warn(f"duals: compiled mode is unavailable ({exc}); duals' NumPy-path "
                      f"transformations still work", RuntimeWarning, stacklevel=2)
