"""workers=: Jacobians, Hessians and DGSM spread over a process pool, a thread pool, a map-like
callable and a Dask cluster give the serial result bit for bit, for Python code and for @njit code;
functions that do not pickle, tasks that raise and workers that die give clear errors.

The functions that cross processes live in tests/workers_helpers.py (module level, importable).
"""
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest

import duals
import duals.workers
from duals import tree
from duals.sensitivity import dgsm

import workers_helpers as h
from finite_differences import central_differences

rng = np.random.default_rng(7)
X10, A10 = rng.standard_normal(10), rng.standard_normal((7, 10))
X40, A40 = rng.standard_normal(40), rng.standard_normal((9, 40))
X20 = rng.standard_normal(20)
PARAMS = {"w": rng.standard_normal(5), "b": rng.standard_normal(5)}
BOX = [(0.0, 1.0)] * 4


def _dgsm(f):
    def run(workers):
        res = dgsm(f, BOX, 16, seed=0, workers=workers)
        return lambda: (res["vi"], res["vi_std"], res["dgsm"], res["dgsm_conf"], res.values, res.gradients)
    return run


# case -> (the transformation for a given workers=, its arguments); chunk sizes give several tasks
CASES = {
    "numpy jacfwd": (lambda w: duals.jacfwd(h.numpy_model, chunk_size=3, workers=w), (X10, A10)),
    "numpy jacrev": (lambda w: duals.jacrev(h.numpy_model, chunk_size=2, workers=w), (X10, A10)),
    "numpy hessian": (lambda w: duals.hessian(h.numpy_scalar, chunk_size=3, workers=w), (X10,)),
    "numpy jacobian of containers, with aux": (
        lambda w: duals.jacobian(h.numpy_with_aux, mode="fwd", has_aux=True, chunk_size=3, workers=w),
        (PARAMS, 1.5)),
    "numpy dgsm": (_dgsm(h.numpy_scalar), ()),
    "compiled jacfwd": (lambda w: duals.jacfwd(h.compiled_model, workers=w), (X40, A40)),
    "compiled jacrev": (lambda w: duals.jacrev(h.compiled_model, workers=w), (X40, A40)),
    "compiled hessian, forward over reverse": (lambda w: duals.hessian(h.compiled_scalar, workers=w), (X20,)),
    "compiled hessian, forward over forward": (
        lambda w: duals.jit.compiled_hessian(h.compiled_scalar, chunk_size=2, workers=w), (X20[:6],)),
    "compiled dgsm": (_dgsm(h.compiled_scalar), ()),
}

def _sparse(make):
    """A sparse-Jacobian case: its csr_array compared by its three arrays."""
    def run(workers):
        jac = make(workers)
        return lambda *args: (lambda J: (J.data, J.indices, J.indptr))(jac(*args))
    return run


X30 = np.linspace(-1.0, 1.0, 30)
TRIDIAGONAL = np.abs(np.subtract.outer(np.arange(30), np.arange(30))) <= 1

CASES.update({
    "numpy sparse jacfwd": (_sparse(lambda w: duals.jacfwd(h.tridiagonal_residual, sparsity="auto",
                                                           chunk_size=1, workers=w)), (X30,)),
    "numpy sparse jacrev": (_sparse(lambda w: duals.jacrev(h.tridiagonal_residual, sparsity="auto",
                                                           chunk_size=1, workers=w)), (X30,)),
    "numpy sparse hessian": (_sparse(lambda w: duals.hessian(h.chain_energy, sparsity="auto",
                                                             workers=w)), (X30,)),
    "compiled sparse jacfwd": (_sparse(lambda w: duals.jacfwd(h.compiled_tridiagonal_residual,
                                                              sparsity=TRIDIAGONAL, workers=w)), (X30,)),
    "compiled sparse jacrev": (_sparse(lambda w: duals.jacrev(h.compiled_tridiagonal_residual,
                                                              sparsity=TRIDIAGONAL, workers=w)), (X30,)),
    "compiled sparse hessian": (_sparse(lambda w: duals.hessian(h.compiled_chain_energy,
                                                                sparsity=TRIDIAGONAL, workers=w)), (X30,)),
})

_SERIAL = {}


def _serial(case):
    if case not in _SERIAL:
        make, args = CASES[case]
        _SERIAL[case] = make(None)(*args)
    return _SERIAL[case]


def _assert_same_bits(got, expected):
    got_leaves, got_def = tree.flatten(got)
    expected_leaves, expected_def = tree.flatten(expected)
    assert got_def == expected_def
    for g, e in zip(got_leaves, expected_leaves):
        assert type(g) is type(e)
        np.testing.assert_array_equal(g, e, strict=True)


@pytest.fixture(params=["processes", "threads", "map"])
def workers(request):
    if request.param == "processes":
        yield 2
    elif request.param == "threads":
        with ThreadPoolExecutor(2) as pool:
            yield pool
    else:
        yield map


@pytest.mark.parametrize("case", list(CASES))
def test_result_is_the_serial_one_bit_for_bit(case, workers):
    make, args = CASES[case]
    expected = _serial(case)   # first: forked workers then inherit its compiled code
    _assert_same_bits(make(workers)(*args), expected)


def test_workers_none_and_one_are_the_serial_path():
    assert duals.workers.resolve(None, "jacfwd") is None
    assert duals.workers.resolve(1, "jacfwd") is None
    assert duals.workers.resolve(-1, "jacfwd") is None or duals.workers.resolve(-1, "jacfwd").parallelism > 1


def test_a_pool_given_as_workers_is_kept_and_serves_several_calls():
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2) as pool:
        jac = duals.jacfwd(h.compiled_model, workers=pool)
        first, second = jac(X40, A40), jac(X40 + 1.0, A40)
    _assert_same_bits(first, _serial("compiled jacfwd"))
    _assert_same_bits(second, duals.jacfwd(h.compiled_model)(X40 + 1.0, A40))


def test_executor_map_is_taken_as_its_executor():
    with ThreadPoolExecutor(3) as pool:
        assert duals.workers.resolve(pool.map, "jacfwd").spec is pool
        assert duals.workers.resolve(pool.map, "jacfwd").parallelism == 3


def test_blocks_are_consecutive_units_two_per_worker():
    blocks = duals.workers.resolve(2, "jacfwd").blocks(range(10))
    assert blocks == [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9]]
    assert duals.workers.resolve(2, "jacfwd").blocks(range(3)) == [[0], [1], [2]]


# ---------------------------------------------------------------- how processes start

def test_pools_fork_without_other_threads_and_use_a_fork_server_with_them():
    if not sys.platform.startswith("linux"):
        pytest.skip("fork is used on Linux only")
    # earlier tests of the suite may leave threads (a Dask client's, a pool's) or a Numba
    # threading layer behind: the rule is checked against what this process runs now
    alone = threading.active_count() == 1 and duals.workers._numba_threads_fork_safe()
    assert duals.workers.start_method() == ("fork" if alone else "forkserver")
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert duals.workers.start_method() == "forkserver"
    finally:
        release.set()
        thread.join()


def test_importing_duals_and_using_workers_imports_no_dask():
    code = ("import sys, numpy as np, duals; "
            "duals.jacfwd(np.sin, chunk_size=1, workers=map)(np.ones(2)); "
            "print(sorted(m for m in ('dask', 'distributed', 'cloudpickle') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_benchmark_runs_and_checks_its_results():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-m", "benchmarks.workers", "--quick"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "| kept ProcessPoolExecutor(2) |" in out.stdout


# ---------------------------------------------------------------- bad input and failures

@pytest.mark.parametrize("bad, error, words", [
    ("two", TypeError, "map-like callable"),
    (0, ValueError, "positive count"),
    (-3, ValueError, "positive count"),
    (True, TypeError, "number of processes"),
])
def test_bad_workers_raise_naming_what_is_accepted(bad, error, words):
    with pytest.raises(error, match=words):
        duals.jacfwd(h.numpy_model, workers=bad)
    with pytest.raises(error, match=words):
        duals.jacrev(h.compiled_model, workers=bad)


def test_a_closure_over_a_lock_names_itself_and_the_fix():
    lock = threading.Lock()

    def guarded(x):
        with lock:
            return x * 2.0

    with pytest.raises(TypeError, match=r"the function '.*guarded' cannot be pickled.*module level"):
        duals.jacfwd(guarded, chunk_size=1, workers=2)(np.ones(2))
    with ThreadPoolExecutor(2) as pool:  # threads share memory: nothing is pickled
        assert duals.jacfwd(guarded, chunk_size=1, workers=pool)(np.ones(2)).tolist() == [[2, 0], [0, 2]]


def test_a_lambda_without_cloudpickle_asks_for_module_level_or_cloudpickle(monkeypatch):
    monkeypatch.setattr(duals.workers, "_cloudpickle", lambda: None)
    with pytest.raises(TypeError, match=r"by pickle, and the function '.*<lambda>' cannot be pickled.*pip install cloudpickle"):
        duals.jacfwd(lambda x: x * 2.0, chunk_size=1, workers=2)(np.ones(2))


@pytest.mark.parametrize("where", ["processes", "threads"])
def test_a_task_that_raises_raises_its_error_naming_the_block(where):
    spec = 2 if where == "processes" else ThreadPoolExecutor(2)
    with pytest.raises(ValueError, match="model diverged") as caught:
        dgsm(h.fails_above, BOX, 64, seed=0, workers=spec)
    notes = " ".join(getattr(caught.value, "__notes__", []))
    assert "duals.sensitivity.dgsm: block" in notes and "points" in notes
    if where == "threads":
        spec.shutdown()


MUTATING = {
    "jacfwd": lambda f, w: duals.jacfwd(f, chunk_size=2, workers=w),
    "jacrev": lambda f, w: duals.jacrev(f, chunk_size=2, workers=w),
    "sparse jacfwd": lambda f, w: (lambda *a: duals.jacfwd(f, chunk_size=2, sparsity="auto", workers=w)(*a).toarray()),
    "sparse jacrev": lambda f, w: (lambda *a: duals.jacrev(f, chunk_size=2, sparsity="auto", workers=w)(*a).toarray()),
}


@pytest.mark.parametrize("transform", list(MUTATING))
@pytest.mark.parametrize("f", [h.alternating_sweep, h.compiled_alternating_sweep])
def test_every_pass_starts_from_the_arguments_the_first_did(f, transform, workers):
    # (a function that changes an argument in place: the serial passes rewind it, tasks did not,
    # and chunks of one Jacobian came from different calls: a wrong Jacobian; a user trial)
    x = np.linspace(0.1, 1.2, 8)
    expected = MUTATING[transform](f, None)(x, np.arange(8))
    np.testing.assert_allclose(expected, central_differences(lambda y: f(y, np.arange(8)), [x], 0), rtol=1e-7)
    np.testing.assert_array_equal(MUTATING[transform](f, workers)(x, np.arange(8)), expected)


@pytest.mark.parametrize("where", ["processes", "map"])
def test_every_pass_draws_what_the_serial_passes_draw(where):
    # (threads share NumPy's global generator, so only processes and map are compared)
    x = np.linspace(0.1, 1.2, 8)
    np.random.seed(0)
    expected = duals.jacfwd(h.noisy_square, chunk_size=2)(x)
    np.random.seed(0)
    noise = np.random.normal(size=8)
    np.testing.assert_allclose(expected, np.diag(2 * x * (1 + 0.1 * noise)), rtol=1e-15)
    np.random.seed(0)
    _assert_same_bits(duals.jacfwd(h.noisy_square, chunk_size=2, workers=2 if where == "processes" else map)(x),
                      expected)
    # the caller's generator is left where one plain call leaves it, as serially: a second call
    # differentiates the next realisation (it was left untouched, and every call drew the same noise)
    assert np.random.normal() == np.random.RandomState(0).normal(size=9)[-1]


def test_a_generator_argument_gives_every_pass_the_same_draws(workers):
    x = np.linspace(0.1, 1.2, 8)
    noise = np.random.default_rng(0).normal(size=8)
    exact = np.diag(2 * x * (1 + 0.1 * noise))
    for w in (None, workers):
        rng = np.random.default_rng(0)
        np.testing.assert_array_equal(duals.jacfwd(h.noisy_square_of, chunk_size=2, workers=w)(x, rng), exact)


def _interrupted_run(prelude=""):
    """The output of a script that calls jacfwd(workers=2) whose workers each send the caller a
    SIGINT (Ctrl-C in a terminal), after ``prelude``; on KeyboardInterrupt it prints the workers
    still alive, and whether the SIGINT handler in place is the one before the call."""
    script = (
        "import os, signal, sys, numpy as np, duals\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "import workers_helpers as h\n"
        + prelude +
        "before = signal.getsignal(signal.SIGINT)\n"
        "try:\n"
        "    duals.jacfwd(h.interrupted_in_a_worker, chunk_size=1, workers=2)(np.ones(4), os.getpid())\n"
        "except (KeyboardInterrupt, RuntimeError) as exc:\n"
        "    import multiprocessing\n"
        "    print(type(exc).__name__, len(multiprocessing.active_children()),\n"
        "          signal.getsignal(signal.SIGINT) is before)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_ctrl_c_ends_the_workers_of_a_pool_the_call_started():
    assert _interrupted_run() == "KeyboardInterrupt 0 True"


def test_ctrl_c_inside_the_pools_own_locking_does_not_hang_the_exit():
    # A KeyboardInterrupt raised just after a Condition's __enter__ took its lock left the lock held
    # (a future's), and the pool's thread, waiting for it, hung the interpreter's exit (a CI run).
    # That window is widened here so that the first Ctrl-C lands in it.
    widened = (
        "import threading, time, concurrent.futures._base as base\n"
        "class SlowToEnter(threading.Condition):\n"
        "    def __enter__(self):\n"
        "        held = super().__enter__()\n"
        "        if threading.current_thread() is threading.main_thread():\n"
        "            time.sleep(0.3)\n"
        "        return held\n"
        "plain_init = base.Future.__init__\n"
        "def init(self):\n"
        "    plain_init(self)\n"
        "    self._condition = SlowToEnter()\n"
        "base.Future.__init__ = init\n")
    assert _interrupted_run(widened) == "KeyboardInterrupt 0 True"


def test_a_ctrl_c_handler_of_the_users_is_what_runs_and_stays_in_place():
    handler = (
        "def on_ctrl_c(signum, frame):\n"
        "    raise RuntimeError('stopped by the user')\n"
        "signal.signal(signal.SIGINT, on_ctrl_c)\n")
    assert _interrupted_run(handler) == "RuntimeError 0 True"


def test_the_sigint_handler_is_unchanged_by_a_call_with_workers():
    import signal
    before = signal.getsignal(signal.SIGINT)
    duals.jacfwd(h.numpy_scalar, workers=2)(np.ones(3))
    assert signal.getsignal(signal.SIGINT) is before


def test_a_broken_pool_given_again_says_so():
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(BrokenProcessPool, match="worker process died"):
            duals.jacfwd(h.dies_in_a_worker, chunk_size=1, workers=pool)(np.ones(2), os.getpid())
        with pytest.raises(BrokenProcessPool, match="pool given as workers= is broken.*make a new one"):
            duals.jacfwd(h.numpy_scalar, workers=pool)(np.ones(3))


def test_an_exception_that_does_not_unpickle_comes_back_by_name_and_the_pool_lives():
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2) as pool:
        with pytest.raises(RuntimeError, match=r"SolverDiverged: diverged at step 17 .*__init__"):
            duals.jacfwd(h.diverges, chunk_size=2, workers=pool)(np.ones(4))
        assert duals.jacfwd(h.numpy_scalar, workers=pool)(np.ones(3)).shape == (3,)


def test_a_worker_that_dies_raises_broken_process_pool():
    with pytest.raises(BrokenProcessPool, match="worker process died"):
        duals.jacfwd(h.dies_in_a_worker, chunk_size=1, workers=2)(np.ones(2), os.getpid())


def test_workers_inside_another_transformation_is_refused():
    inner = duals.jacfwd(np.sin, chunk_size=1, workers=map)
    with pytest.raises(TypeError, match="traced by an enclosing duals transformation"):
        duals.grad(lambda x: np.sum(inner(x)))(np.ones(2))


def test_vectorized_dgsm_with_workers_is_refused():
    with pytest.raises(ValueError, match="vectorized=False"):
        dgsm(lambda X: X.sum(axis=1), BOX, 8, seed=0, vectorized=True, workers=map)


def test_solve_ivp_refuses_workers_and_says_why():
    pytest.importorskip("scipy")
    from duals.sensitivity import solve_ivp
    with pytest.raises(TypeError, match="one coupled system"):
        solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), [1.0], 0.5, workers=2)


# ---------------------------------------------------------------- a Dask cluster (last: its threads)

@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("case", list(CASES))
def test_dask_cluster_result_is_the_serial_one_bit_for_bit(case, dask_client):
    make, args = CASES[case]
    expected = _serial(case)
    _assert_same_bits(make(dask_client)(*args), expected)


def test_dask_task_that_raises_raises_its_error_naming_the_block(dask_client):
    with pytest.raises(ValueError, match="model diverged") as caught:
        dgsm(h.fails_above, BOX, 64, seed=0, workers=dask_client)
    assert "duals.sensitivity.dgsm: block" in " ".join(getattr(caught.value, "__notes__", []))
