"""NumPy's floating-point warnings reported at the user's line, not inside duals.

NumPy attributes a ``RuntimeWarning`` such as "divide by zero encountered in divide" to the
Python frame that called the ufunc. Inside a transformation that frame is one of duals' own: a
derivative formula of :mod:`duals.derivatives` (compiled as ``<duals rule FORMULA>``) or the
interpreter running it, so the warning would name a line nobody wrote. While a transformation
runs the user's function or walks the tape, :func:`call_at_user_line` asks NumPy to call
:func:`_report` for the categories it would have warned about; ``_report`` issues the warning
with :func:`warnings.warn_explicit` at the first frame outside duals and NumPy, and names the
primitive (and the formula) whose rule divided by zero.

Only ``"warn"`` changes: ``"ignore"``, ``"raise"`` and ``"print"`` act as before, and when the
caller installed a callback of its own (``"call"``, ``"log"``) nothing changes at all. The cost is
one ``np.geterr`` and one ``np.errstate`` per outermost transformation call (a few microseconds);
operations on ``duals.Dual`` / ``duals.Var`` values outside any transformation are not covered
and keep NumPy's location (the formula, at least, names itself).

>>> import numpy as np, warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     call_at_user_line(np.divide, 1.0, np.zeros(1))
array([inf])
>>> caught[0].filename.startswith("<doctest")   # the caller's line, not this module's
True
"""
import contextvars
import functools
import os
import sys
import warnings

import numpy as np

RULE_FILE = "<duals rule "   # prefix of the file name a derivative formula is compiled under
_INSIDE = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
           os.path.dirname(os.path.abspath(np.__file__)) + os.sep)
_REPORTING = contextvars.ContextVar("duals_float_warnings_reporting", default=False)


def call_at_user_line(f, /, *args, **kwargs):
    """call_at_user_line(f, *args, **kwargs) -> f(*args, **kwargs), NumPy's warnings at the user's line.

    >>> import numpy as np
    >>> float(call_at_user_line(np.add, 1.0, 2.0))
    3.0
    """
    if _REPORTING.get():   # an outer transformation already reports
        return f(*args, **kwargs)
    modes = np.geterr()
    key = (modes["divide"], modes["over"], modes["under"], modes["invalid"])
    settings = _SETTINGS.get(key)
    if settings is None:
        settings = _SETTINGS[key] = _settings_for(modes)
    token = _REPORTING.set(True)
    try:
        if not settings:
            return f(*args, **kwargs)
        with np.errstate(**settings):
            return f(*args, **kwargs)
    except ValueError as exc:
        if str(exc) == _NUMPY_SEQUENCE:
            from ._refusals import SCATTER_ADD
            raise ValueError(f"{exc} {_STORE_HINT}; {SCATTER_ADD}{_raising_user_line(exc)}") from exc
        if _raised_in(exc, _SCIPY_SPARSE):   # SciPy's own error before any conversion we refuse
            raise ValueError(f"{exc} ({_SPARSE_HINT})") from exc
        raise
    finally:
        _REPORTING.reset(token)


# NumPy's message for ``a[i] = value`` of a value that is not a number; a traced value is one
# (it has ``__getitem__``), and NumPy says so before asking it for a float
_NUMPY_SEQUENCE = "setting an array element with a sequence."
_STORE_HINT = ("If the value is traced (a derivative runs through it), a plain NumPy array cannot hold "
               "it: build the array with dnp.stack / dnp.array / dnp.where (import duals.numpy as dnp), "
               "or write the loop in a @numba.njit function (compiled mode allows a[i] = value)")



_SCIPY_SPARSE = os.sep + os.path.join("scipy", "sparse") + os.sep
_SPARSE_HINT = ("raised inside scipy.sparse during a duals transformation: if a traced value reached "
                "it, SciPy's sparse matrices cannot hold one (a constructor such as sp.diags(v) or "
                "sp.csr_matrix(a) checks its input before converting it). Build the matrix dense "
                "(np.diag(v), or np.diag(main) + np.diag(upper, 1) + ...) and solve with "
                "np.linalg.solve, or keep the sparse matrix constant and multiply it by the traced "
                "value with dnp.matmul(S, x) (docs/sparse.md)")


def _raising_frame(exc):
    """The innermost frame of ``exc``'s traceback (None without one)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return None if tb is None else tb.tb_frame


def _raising_user_line(exc):
    """`` (in file, line N)``: the user's line that ``exc`` came through (their ``a[i] = value``
    that NumPy refused), or ``""``."""
    frame = _raising_frame(exc)
    return at_line(None if frame is None else _user_frame(frame))


def at_line(frame):
    """`` (in file, line N)`` of ``frame``, for the end of a message; ``""`` for None."""
    return "" if frame is None else f" (in {frame.f_code.co_filename}, line {frame.f_lineno})"


def _raised_in(exc, folder):
    """Whether ``exc`` was raised by code under ``folder`` (a path fragment)."""
    frame = _raising_frame(exc)
    return frame is not None and folder in os.path.abspath(frame.f_code.co_filename)


def _error_state_variable():
    try:   # NumPy 2's np.errstate is this context variable (an opaque capsule per state)
        from numpy._core._ufunc_config import _extobj_contextvar
        return _extobj_contextvar
    except ImportError:
        return None


ERROR_STATE = _error_state_variable()


def error_state():
    """error_state() -> NumPy's floating-point error state now (np.errstate's), an opaque object
    compared by identity; None where NumPy does not expose it. The reverse walk runs a node's rules
    under the state its operation ran under (the user's ``np.errstate`` around a guarded branch).

    >>> with np.errstate(all="ignore"):
    ...     inside = error_state()
    >>> inside is error_state()
    False
    """
    return ERROR_STATE.get() if ERROR_STATE is not None else None


def reporting_state(state):
    """reporting_state(state) -> NumPy's error state ``state`` (from :func:`error_state`) with its
    ``"warn"`` modes reported at the user's line, as :func:`call_at_user_line` reports them: the
    state a node's rules run under in the reverse walk."""
    token = ERROR_STATE.set(state)
    try:
        settings = _settings_for(np.geterr())
        if not settings:
            return state
        with np.errstate(**settings):
            return ERROR_STATE.get()
    finally:
        ERROR_STATE.reset(token)


def reported_at_user_line(function):
    """reported_at_user_line(function) -> function whose calls run through :func:`call_at_user_line`.

    >>> import numpy as np
    >>> float(reported_at_user_line(np.add)(1.0, 2.0))
    3.0
    """
    @functools.wraps(function)
    def reported(*args, **kwargs):
        return call_at_user_line(function, *args, **kwargs)
    return reported


_SETTINGS = {}   # NumPy's error modes -> the np.errstate arguments that report them (cached)


def _settings_for(modes):
    """``{"call": _report, "divide": "call", ...}`` for the ``"warn"`` modes; ``{}`` to change nothing."""
    if "call" in modes.values() or "log" in modes.values():
        return {}   # the caller's own callback stays in charge
    calls = {category: "call" for category, mode in modes.items() if mode == "warn"}
    return dict(calls, call=_report) if calls else {}


def _report(error, flag):
    """NumPy's callback: the warning NumPy would give, at the user's line, naming the rule."""
    innermost = sys._getframe(1)
    where = _rule_of(innermost)
    warn_at_user_line(f"{error} encountered" + (f" in {where}" if where else ""), innermost)


def warn_at_user_line(message, frame=None, category=RuntimeWarning):
    """warn_at_user_line(message, frame=None, category=RuntimeWarning): the warning at the first
    frame outside duals and NumPy (from ``frame``, or the caller's, outwards)."""
    frame = _user_frame(frame if frame is not None else sys._getframe(1))
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    namespace = frame.f_globals
    # as warnings.warn does, but without module_globals: asking the module's loader for its
    # source fails for code that has none on disk (python -c); the line is read from the file
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=namespace.get("__name__", "<string>"),
                           registry=namespace.setdefault("__warningregistry__", {}))


def _inside(frame):
    filename = frame.f_code.co_filename
    return filename.startswith(RULE_FILE) or os.path.abspath(filename).startswith(_INSIDE)


def _user_frame(frame, also=()):
    """The first frame, from ``frame`` outwards, outside duals and NumPy and the folders ``also``
    (path fragments) (None if there is none)."""
    while frame is not None and (_inside(frame) or any(f in frame.f_code.co_filename for f in also)):
        frame = frame.f_back
    return frame


def _rule_of(frame):
    """``"sqrt (reverse mode, formula 0.5 / out)"``: the primitive running at ``frame``, in which
    step (the value: nothing; a rule: the mode) and the formula, as far as they are known."""
    if not _inside(frame):
        return None   # the user's own NumPy call: NumPy's message had no more than the error
    filename = frame.f_code.co_filename
    details = [f"formula {filename[len(RULE_FILE):-1]}"] if filename.startswith(RULE_FILE) else []
    while frame is not None and _inside(frame):
        prim = frame.f_locals.get("prim")
        if prim is not None and isinstance(getattr(prim, "name", None), str):
            mode = _STEPS.get(frame.f_code.co_name)
            return f"{prim.name} ({', '.join(([mode] if mode else []) + details)})" \
                if mode or details else prim.name
        frame = frame.f_back
    return f"the duals {details[0]}" if details else None


# the interpreter functions that hold the running primitive as ``prim``: bind computes a value
_STEPS = {"bind": None, "__call__": None, "process": "forward mode", "walk": "reverse mode",
          "_by_rules": "reverse mode"}
