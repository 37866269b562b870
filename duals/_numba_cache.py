"""Numba's disk cache, made safe for several processes that compile into one cache directory.

Numba keeps one index file per cached function, mapping each compiled signature to a data
file. A process that saves a new signature reads the index, takes the first data-file number
it sees free, and writes the index back. Two processes saving *different* signatures of one
function at the same moment can both take number 1: the index then pairs one signature's key
with the other signature's machine code, which every later process loads as its own. The
result is a crash, a "can't unbox" error, or reinterpreted bits: a wrong number. duals compiles
many signatures of few functions (a kernel per lane count and dtype), in processes that run
side by side (``workers=``, test runners, notebooks), so its cached functions and its promoted
copies of user functions hold a file lock beside the index: an exclusive one while saving
(read index, pick a name, write index, write data), a shared one while loading (so a reader
never sees an index entry whose data file is still being written).

These caches live in duals' cache directory (:func:`duals.kernels.cache_dir`, moved by
``DUALS_CACHE_DIR``) beside the generated kernels, not where ``NUMBA_CACHE_DIR`` puts Numba's, so
``duals.clear_cache()`` empties them all and processes that keep separate Numba caches (a test
runner's workers) still share duals' compilations. The user's own dispatchers keep Numba's cache
unchanged.

>>> import numpy as np
>>> twice = cached_njit()(lambda x: 2 * x)   # no source file: compiled in memory, as njit does
>>> float(twice(np.float64(1.5)))
3.0
"""
import contextlib
import os

import numba
import numpy as np
from numba.core import caching
from numba.core.caching import FunctionCache
from numba.core.compiler_lock import global_compiler_lock

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

__all__ = ["cached_njit", "cached_kernel", "by_contiguity", "use_locked_cache",
           "LockedFunctionCache"]


@contextlib.contextmanager
def _locked(path, exclusive):
    """Hold an advisory lock on ``path`` (created if missing) for the ``with`` block."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a cache directory we cannot write: Numba will not save there either
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        else:  # msvcrt has exclusive byte-range locks only; LK_LOCK retries for 10 s
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class _DualsCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Where a locked cache lives: under duals' cache directory, in a folder per source folder
    (named as Numba names its own), with Numba's test of the source file's freshness."""

    def __init__(self, py_func, py_file):
        from .kernels import cache_dir
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), "numba", self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path


class _DualsCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_DualsCacheLocator] + list(caching.CompileResultCacheImpl._locator_classes)


class LockedFunctionCache(FunctionCache):
    """LockedFunctionCache(py_func): Numba's ``FunctionCache`` whose saves and loads hold a file
    lock beside the function's index (see the module docstring), in duals' cache directory (or
    where Numba would put it, when that one cannot be written)."""

    _impl_class = _DualsCacheImpl

    def _lock_path(self):
        return self._cache_file._index_path + ".lock"

    def load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        with _locked(self._lock_path(), exclusive=False):
            return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        if not self._enabled:
            return
        with _locked(self._lock_path(), exclusive=True):
            super().save_overload(sig, data)


def use_locked_cache(dispatcher):
    """use_locked_cache(dispatcher) -> dispatcher: cache its compilations on disk, under a lock.

    Raises ``RuntimeError`` as ``enable_caching`` does when the function has no source file;
    under ``NUMBA_DISABLE_JIT=1`` (``numba.njit`` gives the Python function back) does nothing.
    """
    if not hasattr(dispatcher, "py_func"):
        return dispatcher
    dispatcher._cache = LockedFunctionCache(dispatcher.py_func)
    return dispatcher


def cached_njit(**options):
    """cached_njit(**options) -> decorator: ``numba.njit(cache=True, **options)``, process-safe.

    A function without a source file (a lambda typed at the prompt) compiles in memory.
    """
    def decorate(py_func):
        dispatcher = numba.njit(**options)(py_func)
        try:
            return use_locked_cache(dispatcher)
        except RuntimeError:  # no cache locator for this source
            return dispatcher
    return decorate


def cached_kernel(**options):
    """cached_kernel(**options) -> decorator: :func:`cached_njit` whose dispatcher compiles one
    specialisation per pattern of contiguous arrays (:func:`by_contiguity`): what duals' generated
    kernels use."""
    def decorate(py_func):
        return by_contiguity(cached_njit(**options)(py_func))
    return decorate


def by_contiguity(dispatcher):
    """by_contiguity(dispatcher) -> dispatcher: arrays are specialised on whether they are
    C-contiguous (layout ``'C'``) or not (``'A'``, any strides), not on their exact layout
    (``'F'``, ``'A'``) and whether they are read-only.

    Numba compiles one specialisation per mix of argument types. A kernel over flat operands,
    their tangents and outputs met them in dozens of mixes (one test run compiled ``mul``'s
    forward kernel in 91 signatures, ~1.1 s each). A new mix now runs the specialisation of its
    pattern (compiled if it is the first), and is entered in the dispatcher's table of
    signatures, so that its next call is resolved in C at Numba's own speed. For functions that
    write only into arrays passed writeable: a read-only input runs typed as writeable.

    >>> import numpy as np
    >>> total = by_contiguity(numba.njit(lambda a, b: a.sum() + b.sum()))
    >>> x = np.ones((3, 4))
    >>> float(total(x.T, x[:, ::2])), float(total(x[::2], x.T)), len(total.signatures)
    (18.0, 20.0, 1)
    """
    if not hasattr(dispatcher, "_compile_for_args"):   # NUMBA_DISABLE_JIT=1: a Python function
        return dispatcher
    compile_exact = dispatcher._compile_for_args

    def compile_for_args(*args, **kws):
        if kws or all(type(a) is not np.ndarray or (a.flags.writeable and (
                a.flags.c_contiguous or not a.flags.f_contiguous)) for a in args):
            return compile_exact(*args, **kws)   # already of its pattern
        given = [dispatcher.typeof_pyval(a) for a in args]
        general = tuple(t.copy(layout="C" if a.flags.c_contiguous else "A", readonly=False)
                        if type(a) is np.ndarray else t for a, t in zip(args, given))
        with global_compiler_lock:   # as Numba's own add_overload: other threads may call it
            entry = dispatcher.compile(general)
            dispatcher._insert([t._code for t in given], entry)
        return entry

    dispatcher._compile_for_args = compile_for_args
    return dispatcher
