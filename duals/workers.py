"""``workers=``: the independent blocks of a derivative, run by processes, an executor, a map or Dask.

A Jacobian is a set of independent passes: chunks of forward lanes, rows swept by reverse mode,
colours of a sparse Jacobian, the points of a DGSM estimate. Each caller cuts its work into
*units* exactly as its serial loop does (the same chunks, the same lanes, the same padding);
:meth:`Workers.run` groups consecutive units into blocks, runs one task per block where
``workers=`` says, and returns the per-unit results in order. The caller assembles them as its
serial loop does, so the result is the serial one bit for bit. As the serial loop's passes do,
every block starts from the caller's argument arrays (a task in the caller's process changes
copies of its own) and global random states, and its units from the same (the tasks rewind them,
:func:`duals.random_states.each_from_one_state`).

``workers=`` may be

- ``None`` (the default) or ``1``: the serial path, in the calling thread;
- an int ``n >= 2`` (``-1``: one per CPU): a ``concurrent.futures.ProcessPoolExecutor`` of ``n``
  processes that the call starts and shuts down (see :func:`start_method` for how they start);
- any ``concurrent.futures.Executor`` (a process or thread pool, loky, mpi4py...), which the
  caller keeps: its workers keep their compiled code from call to call;
- a ``dask.distributed.Client`` (recognised by its class, so Dask is imported only by then);
- a map-like callable ``workers(function, iterable)``, SciPy's convention (``map``,
  ``multiprocessing.Pool(4).map``).

What crosses a process boundary is pickled once per call, by cloudpickle when it is installed
(Dask ships it; lambdas and closures then travel by value) and by :mod:`pickle` otherwise
(functions travel by reference to an importable module). Thread pools and the built-in ``map``
share memory and pickle nothing.

>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(2) as pool:
...     resolve(pool, "demo").run(lambda scale, block: [scale * u for u in block], (10,), [1, 2, 3])
[10, 20, 30]
"""
import os
import pickle
import signal
import sys
import threading
import uuid

import numpy as np

from .random_states import before_call, own_copies, random_states, restore, start_from

__all__ = ["resolve", "Workers", "check_untraced", "start_method", "pickler_name", "BLOCKS_PER_WORKER"]

BLOCKS_PER_WORKER = 2  # tasks per worker: enough to even out a slow worker, few enough to amortise pickling


def resolve(workers, who):
    """resolve(workers, who) -> a :class:`Workers`, or None for the serial path (``None``, ``1``).

    A value that is none of the accepted kinds raises TypeError (ValueError for a bad count),
    naming them.

    >>> resolve(None, "jacfwd") is None, resolve(1, "jacfwd") is None, resolve(2, "jacfwd").parallelism
    (True, True, 2)
    """
    if workers is None:
        return None
    if isinstance(workers, Workers):
        return workers
    if isinstance(workers, (bool, np.bool_)):
        raise TypeError(f"{who}: workers={workers!r}; give a number of processes, an executor, a "
                        f"dask.distributed.Client or a map-like callable (None: serial)")
    if isinstance(workers, (int, np.integer)):
        n = int(workers)
        if n == -1:
            n = _cpu_count()
        if n < 1:
            raise ValueError(f"{who}: workers={workers} processes; give a positive count, -1 for "
                             f"one per CPU, or None for the serial path")
        return None if n == 1 else Workers(n, who)
    if _is_executor(workers) or _is_dask_client(workers) or callable(workers):
        return Workers(workers, who)
    raise TypeError(f"{who}: workers must be None, an int (a pool of that many processes), a "
                    f"concurrent.futures.Executor, a dask.distributed.Client or a map-like callable "
                    f"such as map; got a {type(workers).__name__}")


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _is_executor(obj):
    futures = sys.modules.get("concurrent.futures")
    return futures is not None and isinstance(obj, futures.Executor)


def _is_dask_client(obj):
    """Whether ``obj`` is a ``distributed.Client`` (or a subclass), without importing Dask."""
    return any(cls.__name__ == "Client" and cls.__module__.split(".")[0] == "distributed"
               for cls in type(obj).__mro__)


def _in_process(obj):
    """Whether ``obj`` runs tasks in this process (threads, the built-in map): nothing is pickled."""
    if obj is map:
        return True
    owner = getattr(obj, "__self__", None)   # a bound method such as ThreadPool(4).map
    futures = sys.modules.get("concurrent.futures")
    if futures is not None and isinstance(obj if owner is None else owner, futures.ThreadPoolExecutor):
        return True
    pool = sys.modules.get("multiprocessing.pool")
    return pool is not None and isinstance(owner, pool.ThreadPool)


class Workers:
    """Workers(spec, who): a resolved ``workers=`` argument; :meth:`run` spreads blocks over it."""

    def __init__(self, spec, who):
        owner = getattr(spec, "__self__", None)
        if _is_executor(owner) and getattr(spec, "__name__", None) == "map":
            spec = owner   # executor.map given as a map-like callable: the executor itself
        self.spec, self.who = spec, who
        self.in_process = not isinstance(spec, int) and _in_process(spec)

    @property
    def parallelism(self):
        """How many tasks run at once: the pool's size, the Dask cluster's threads, 1 for ``map``;
        the number of CPUs where it cannot be told (a map-like callable, an unknown executor)."""
        spec = self.spec
        if isinstance(spec, int):
            return spec
        if spec is map:
            return 1
        if _is_dask_client(spec):
            return max(1, sum(spec.nthreads().values()))
        owner = spec if _is_executor(spec) else getattr(spec, "__self__", None)
        size = getattr(owner, "_max_workers", None) or getattr(owner, "_processes", None)
        return size if isinstance(size, int) and size > 0 else _cpu_count()

    def blocks(self, units, per_worker=BLOCKS_PER_WORKER):
        """``units`` cut into consecutive, near-equal blocks: ``per_worker`` per worker, at most one per unit."""
        units = list(units)
        count = max(1, min(len(units), self.parallelism * per_worker))
        edges = [len(units) * b // count for b in range(count + 1)]
        return [units[edges[b]:edges[b + 1]] for b in range(count)]

    def run(self, task, fixed, units, describe=None, per_worker=BLOCKS_PER_WORKER):
        """run(task, fixed, units, describe=None, per_worker=2) -> [result of each unit], in order.

        Each block of consecutive units is one call ``task(*fixed, block)`` on a worker, which
        returns one result per unit of its block. ``describe(block)`` names a block in errors
        (``"directions 16..31"``). A task that raises makes this raise the same exception, with
        a note naming the block; nothing partial is returned.
        """
        blocks = self.blocks(units, per_worker)
        labels = [f"{self.who}: block {b + 1} of {len(blocks)}"
                  + (f" ({describe(block)})" if describe is not None else "")
                  for b, block in enumerate(blocks)]
        before_call()   # (inside a sparse derivative: the arguments as its first call found them)
        payload = (task, tuple(fixed), _error_modes(), random_states())
        if self.in_process:   # every block changes arrays of its own, as one in another process does
            items = [((task, own_copies(tuple(fixed)),) + payload[2:], label, block)
                     for label, block in zip(labels, blocks)]
        else:
            payload = _dumps(payload, self.who)
            items = [(payload, label, block) for label, block in zip(labels, blocks)]
        done = _execute(self.spec, items, self.who, labels)
        results = [result for result, _ in done]
        if done:   # the caller's generators left where the serial call (one plain call) leaves them
            start_from(done[0][1])
        flat = []
        for label, block, result in zip(labels, blocks, results):
            if len(result) != len(block):
                raise RuntimeError(f"{label}: the task returned {len(result)} results for "
                                   f"{len(block)} units")
            flat.extend(result)
        return flat


def check_untraced(args, kwargs, who):
    """A TypeError when an argument is a value traced by an enclosing duals transformation: its
    derivatives live in this process and cannot travel to a task elsewhere."""
    from .core import Tracer
    named = [(f"argument {i}", a) for i, a in enumerate(args)] + \
            [(f"keyword argument {k!r}", a) for k, a in (kwargs or {}).items()]
    for name, value in named:
        if isinstance(value, Tracer):
            raise TypeError(f"{who}(workers=...): {name} is a value traced by an enclosing duals "
                            f"transformation, whose derivatives cannot travel to another worker; "
                            f"give workers= to the outermost transformation only (for second "
                            f"derivatives, duals.hessian(f, workers=...))")


# ---------------------------------------------------------------- the task, on a worker

def run_block(item):
    """run_block((payload, label, block)) -> (``task(*fixed, block)``, the random states it left) on a
    worker, under the caller's NumPy error modes; an exception gets a note naming the block (and
    travels back as it is)."""
    payload, label, block = item
    travelled = isinstance(payload, bytes)
    if travelled:
        try:
            payload = pickle.loads(payload)
        except Exception as exc:
            _add_note(exc, f"{label}: the worker could not unpickle the function or its arguments; "
                           f"a function defined in __main__ or in a module the workers cannot import "
                           f"travels only with cloudpickle (pip install cloudpickle): define it in an "
                           f"importable module")
            raise
    task, fixed, modes, states = payload
    own = start_from(states)   # the caller's random states, as every serial pass starts from them
    try:
        with np.errstate(**modes):
            results = task(*fixed, block)
        return results, random_states()   # (where each pass, like one plain call, left them)
    except Exception as exc:
        _add_note(exc, f"{label}: raised by this task on a worker; no partial result is returned")
        if travelled and not _round_trips(exc):
            raise _travelling_copy(exc) from None
        raise
    finally:
        restore(own)


def _round_trips(exc):
    """Whether ``exc`` comes back through pickle (an exception whose __init__ takes other arguments
    than it passes to Exception's does not, and would break the caller's pool)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return True
    except Exception:
        return False


def _travelling_copy(exc):
    """A RuntimeError that carries ``exc``'s type, message, notes and traceback as text."""
    import traceback
    kind = f"{type(exc).__module__}.{type(exc).__qualname__}"
    error = RuntimeError(f"{kind}: {exc} (raised by the function on a worker; {kind} cannot be "
                         f"pickled back to the caller, so it comes back as this RuntimeError: give "
                         f"the exception class an __init__ whose arguments are those it passes to "
                         f"Exception.__init__, or a __reduce__, for the exception itself)")
    _add_note(error, "".join(traceback.format_exception(exc)).rstrip())
    return error


def _add_note(exc, note):
    if hasattr(exc, "add_note"):   # Python >= 3.11: shown under the traceback, pickled with it
        exc.add_note(note)
    else:
        exc.__notes__ = getattr(exc, "__notes__", []) + [note]


def _error_modes():
    """The caller's NumPy error modes, as a worker can set them (a callback stays behind: 'warn')."""
    return {k: (v if v in ("ignore", "warn", "raise", "print") else "warn")
            for k, v in np.geterr().items()}


# ---------------------------------------------------------------- pickling

def pickler_name():
    """``"cloudpickle"`` when it is installed (what crosses processes is pickled by it), else ``"pickle"``."""
    return "cloudpickle" if _cloudpickle() is not None else "pickle"


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle


def _dumps(obj, who):
    """``obj`` pickled for another process, or a TypeError naming what cannot be pickled and what to do."""
    cloud = _cloudpickle()
    try:
        return cloud.dumps(obj) if cloud is not None else pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        culprit = _culprit(obj, cloud)
        advice = ("define the function at module level (not a lambda, a local function or a "
                  "closure over unpicklable state such as a lock or an open file), pass plain "
                  "arrays and numbers, or use a concurrent.futures.ThreadPoolExecutor, which "
                  "shares memory and pickles nothing")
        if cloud is None:
            advice += "; with cloudpickle installed (pip install cloudpickle; Dask ships it) " \
                      "lambdas and closures travel too"
        raise TypeError(f"{who}: workers= sends the function and its arguments to other processes by "
                        f"{pickler_name()}, and {culprit} cannot be pickled ({type(exc).__name__}: "
                        f"{exc}); {advice}") from exc


def _culprit(payload, cloud):
    """Which part of ``(task, fixed, modes)`` does not pickle, in words."""
    dump = cloud.dumps if cloud is not None else pickle.dumps
    task, fixed = payload[:2]
    for value in fixed:
        for name, part in _named_parts(value):
            try:
                dump(part)
            except Exception:
                return name
    return f"the task {getattr(task, '__qualname__', task)!r}"


def _named_parts(value):
    """(description, object) for what a task carries: the user's function first, then the arguments."""
    if callable(value) and not isinstance(value, np.ndarray):
        inner = getattr(value, "function", None)   # a wrapper's user function first
        for part in ([inner] if inner is not None else []) + [value]:
            yield f"the function {getattr(part, '__qualname__', type(part).__name__)!r}", part
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield f"argument {i} (a {type(item).__name__})", item
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"keyword argument {key!r} (a {type(item).__name__})", item
    yield f"a value of type {type(value).__name__}", value


# ---------------------------------------------------------------- executing

def start_method():
    """start_method() -> how a pool that ``workers=n`` starts makes its processes.

    ``"fork"`` on Linux when the calling process runs one Python thread and no Numba threading
    layer that is unsafe to fork (GNU OpenMP): the workers then inherit the imported modules and
    every compiled specialisation, and start in milliseconds. With other threads running, a
    fork could copy a lock that one of them holds and hang the child, so ``"forkserver"`` (a clean
    server process forks the workers; they import duals and load or compile their code), and
    ``"spawn"`` where neither exists (Windows). Nothing process-wide is changed.
    """
    import multiprocessing
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and sys.platform.startswith("linux") and threading.active_count() == 1 \
            and _numba_threads_fork_safe():
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _numba_threads_fork_safe():
    numba = sys.modules.get("numba")
    if numba is None:
        return True
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel code has run: no threading layer was launched
        return True
    return layer != "omp"


def _execute(spec, items, who, labels):
    """The results of ``run_block`` over ``items``, in order, on ``spec``'s workers."""
    if isinstance(spec, int):
        return _on_own_pool(spec, items, who, labels)
    if _is_dask_client(spec):
        return _from_dask(spec, items, labels)
    if _is_executor(spec):
        return _from_executor(spec, items, who, labels)
    return list(spec(run_block, items))


def _on_own_pool(size, items, who, labels):
    """The results of ``run_block`` over ``items`` on a process pool that the call starts and ends:
    however the call ends, no worker outlives it (on Ctrl-C the workers are ended at once; after a
    block's error, once the blocks already running are done)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    context = multiprocessing.get_context(start_method())
    with _HeldInterrupts() as interrupts:
        pool = ProcessPoolExecutor(max_workers=min(size, len(items)), mp_context=context)
        workers = pool._processes   # (the pool's own record of its workers, filled as it starts them)
        try:
            results = _from_executor(pool, items, who, labels, interrupts)
        except BaseException as exc:
            if interrupts.acted or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                _terminate(pool, workers)
            else:   # a block's error: the running blocks end, pending ones are cancelled
                _shut_down(pool, workers, interrupts)
            raise
        _shut_down(pool, workers, interrupts)
    return results


class _HeldInterrupts:
    """with _HeldInterrupts() as interrupts: Ctrl-C held back while the main thread works a pool.

    A KeyboardInterrupt raised at an arbitrary point inside ``concurrent.futures`` can leave one of
    its locks held (one taken in ``threading.Condition.__enter__``, a Python function, is never
    released), and the pool's own thread, which needs that lock, then hangs the interpreter's
    exit. In the main thread a SIGINT only records itself here, and :meth:`check`, called between
    waits, where no lock is held, runs the handler it held back (Python's default raises
    KeyboardInterrupt there). One still held back at the end runs when the block ends. Elsewhere
    (another thread; SIGINT ignored or left to the system) nothing changes.
    """
    def __init__(self):
        self._held_back = None      # the handler in place before, while this holds SIGINT back
        self._frame = None          # the frame a held-back SIGINT arrived in (None: none arrived)
        self.acted = False          # whether a held-back SIGINT's handler has run

    def __enter__(self):
        if threading.current_thread() is threading.main_thread() \
                and callable(signal.getsignal(signal.SIGINT)):
            self._held_back = signal.signal(signal.SIGINT, self._record)
        return self

    def _record(self, signum, frame):
        self._frame = frame

    def check(self):
        """Run the handler of a SIGINT that arrived (Python's default raises KeyboardInterrupt)."""
        if self._frame is not None:
            frame, self._frame = self._frame, None
            self.acted = True
            self._held_back(signal.SIGINT, frame)

    def __exit__(self, *exception):
        if self._held_back is not None:
            signal.signal(signal.SIGINT, self._held_back)
            if exception[0] is None:
                self.check()
        return False


def _shut_down(pool, workers, interrupts):
    """Shut ``pool`` down once its running blocks are done (pending ones are cancelled), waiting
    in steps so that a Ctrl-C held back meanwhile is acted on: it ends the workers at once."""
    reaper = pool._executor_manager_thread
    pool.shutdown(wait=False, cancel_futures=True)
    try:
        while reaper is not None and reaper.is_alive():
            reaper.join(_POLL_SECONDS)
            interrupts.check()
    except BaseException:
        _terminate(pool, workers)
        raise


def _terminate(pool, workers):
    """End the workers of a pool the call started, now (waiting for their tasks would hang the
    interpreter's exit), and wait for the pool's own thread, which also reaps them (or an ended
    worker would still look alive for a moment)."""
    reaper = pool._executor_manager_thread
    processes = list(workers.values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(5)
    if reaper is not None:
        reaper.join(5)


_POLL_SECONDS = 0.05


def _from_executor(executor, items, who, labels, interrupts=None):
    from concurrent.futures.process import BrokenProcessPool
    futures = []
    try:
        futures += [executor.submit(run_block, item) for item in items]
        return [_result(future, interrupts) for future in futures]
    except BrokenProcessPool as exc:
        if not futures:
            raise BrokenProcessPool(f"{who}: the process pool given as workers= is broken (a worker "
                                    f"died in an earlier call); make a new one") from exc
        failed = next((label for label, future in zip(labels, futures)
                       if future.done() and not future.cancelled()
                       and isinstance(future.exception(), BrokenProcessPool)), who)
        raise BrokenProcessPool(
            f"{failed}: a worker process died (killed by the system, e.g. out of memory, or "
            f"crashed in compiled code) and the process pool is broken; no partial result is "
            f"returned. A pool passed as workers= cannot be used again: make a new one") from exc
    finally:
        for future in futures:
            future.cancel()


def _result(future, interrupts):
    """``future.result()``, waited for in steps when ``interrupts`` holds Ctrl-C back."""
    if interrupts is not None:
        from concurrent.futures import wait
        while not wait([future], timeout=_POLL_SECONDS).done:
            interrupts.check()
    return future.result()


def _from_dask(client, items, labels):
    key = f"duals-block-{uuid.uuid4().hex}"
    futures = [client.submit(run_block, item, key=f"{key}-{b}", pure=False)
               for b, item in enumerate(items)]
    try:
        return client.gather(futures)
    except BaseException as exc:
        client.cancel(futures)
        note = next((label for label, future in zip(labels, futures) if future.status == "error"), None)
        if note is not None and not any(note in n for n in getattr(exc, "__notes__", ())):
            _add_note(exc, f"{note}: failed on a Dask worker (a worker that died was retried by "
                           f"Dask's own policy, distributed.scheduler.allowed-failures)")
        raise
