"""Which functions need the promoting specialisation, remembered on disk across processes.

The entry points first try a function's own dual specialisation and fall back to the promoting
copy (:mod:`.promotion`) when it does not type. For a function that needs promotion the failed
attempt costs as much typing as a compilation (0.3–0.8 s for a Lorenz RK4 loop), and Numba
caches no failures, so every new process paid it again even when the promoting copy itself
loads from Numba's cache. For a dispatcher cached on disk (``@njit(cache=True)``) the decision
is written as a small note in duals' cache directory, keyed by the function's module, name and
bytecode (nested code included), the library version and which arguments are duals, so later
processes go straight to the copy.

A note can only choose a slower path, never a wrong one: promotion makes buffers hold duals
with zero tangents, which is exact either way. A function whose code changed gets a new key;
one whose callee changed keeps its note, and if the promoting copy then fails to compile, the
entry point forgets the note and starts again from the function's own specialisation.
"""
import hashlib
import os
import types as pytypes

from .._version import __version__

__all__ = ["recall", "remember", "forget"]

_MODES = {"promote": True, "arguments": "arguments"}


def _code_digest(code, h):
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _code_digest(const, h)
        else:
            h.update(repr(const).encode())


def _path(f, dual_positions):
    """The note's file for dispatcher ``f`` called with duals at ``dual_positions``, or None when
    ``f`` is not cached on disk (its decisions then stay in this process)."""
    if type(getattr(f, "_cache", None)).__name__ in ("NullCache", "NoneType"):
        return None
    py = f.py_func
    h = hashlib.sha256(repr((py.__module__, py.__qualname__, __version__, dual_positions)).encode())
    _code_digest(py.__code__, h)
    from ..kernels import cache_dir
    return os.path.join(cache_dir(), "promoting", h.hexdigest()[:24])


def recall(f, dual_positions):
    """recall(f, dual_positions) -> the noted mode (True: the promoting copy; ``"arguments"``:
    with promoted arguments too), or None."""
    path = _path(f, dual_positions)
    if path is None:
        return None
    try:
        with open(path) as handle:
            return _MODES.get(handle.read().strip())
    except OSError:
        return None


def remember(f, dual_positions, mode):
    """remember(f, dual_positions, mode): note ``mode`` for later processes (best effort)."""
    path = _path(f, dual_positions)
    if path is None:
        return
    word = "promote" if mode is True else "arguments"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as handle:
            handle.write(word)
        os.replace(tmp, path)
    except OSError:
        pass


def forget(f, dual_positions):
    """forget(f, dual_positions): remove the note (its mode failed to compile)."""
    path = _path(f, dual_positions)
    if path is not None:
        try:
            os.remove(path)
        except OSError:
            pass
