"""The automatic-differentiation systems, behind one small interface.

Each system converts NumPy inputs to its own arrays (``asarray``), offers the same
transformations (``grad``, ``jacfwd``, ``jacrev``, ``hessian``, ``hvp``, ``jvp``) and a
NumPy-like namespace ``xp`` (with ``erf``) so that one generic workload function serves
all of them. Peers are imported on first use; a missing one raises :class:`Unavailable`.
"""
import functools
import importlib
import os

import numpy as np

from .timing import Unavailable


PEERS = ("jax", "torch", "autograd")
NO_PEERS = "DUALS_BENCH_NO_PEERS"   # set by ``--no-peers``; inherited by the scripts run in subprocesses


def peers_skipped():
    """peers_skipped() -> whether this run leaves JAX, PyTorch and autograd out (``--no-peers``)."""
    return os.environ.get(NO_PEERS) == "1"


def _import(name):
    if peers_skipped() and name.partition(".")[0] in PEERS:
        raise Unavailable(f"{name} left out (--no-peers)")
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise Unavailable(f"{name} not importable ({type(exc).__name__})") from None


class _Namespace:
    """A NumPy-like namespace: the library's functions plus ``erf`` and ``stack``."""

    def __init__(self, module, erf, stack):
        self._module, self.erf, self.stack = module, erf, stack

    def __getattr__(self, name):
        return getattr(self._module, name)


class Duals:
    """duals on plain NumPy code (``np.*`` functions work on traced values)."""
    name = "duals"

    def __init__(self):
        self.duals = _import("duals")
        special = _import("duals.special")
        self.xp = _Namespace(np, special.erf, np.stack)

    def asarray(self, a):
        return a if isinstance(a, float) else np.asarray(a, dtype=np.float64)

    def finish(self, out):
        return out

    def grad(self, f, argnums=0):
        return self.duals.grad(f, argnums=argnums)

    def jacfwd(self, f):
        return self.duals.jacfwd(f)

    def jacrev(self, f):
        return self.duals.jacrev(f)

    def hessian(self, f):
        return self.duals.hessian(f)

    def hvp(self, f):
        return lambda x, v: self.duals.hvp(f, x, v)

    def jvp(self, f):
        return lambda x, t: self.duals.jvp(f, (x,), (t,))[1]


class Jax:
    """JAX eager (op by op) with float64 enabled."""
    name = "jax"
    jit = False

    def __init__(self):
        self.jax = _import("jax")
        self.jax.config.update("jax_enable_x64", True)
        jnp = _import("jax.numpy")
        self.xp = _Namespace(jnp, _import("jax.scipy.special").erf, jnp.stack)

    def _wrap(self, fn):
        return self.jax.jit(fn) if self.jit else fn

    def asarray(self, a):
        return self.jax.numpy.asarray(a, dtype=self.jax.numpy.float64)

    def finish(self, out):
        return self.jax.block_until_ready(out)

    def plain(self, f):
        return self._wrap(f)

    def grad(self, f, argnums=0):
        return self._wrap(self.jax.grad(f, argnums=argnums))

    def jacfwd(self, f):
        return self._wrap(self.jax.jacfwd(f))

    def jacrev(self, f):
        return self._wrap(self.jax.jacrev(f))

    def hessian(self, f):
        return self._wrap(self.jax.hessian(f))

    def hvp(self, f):
        jax = self.jax
        return self._wrap(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])

    def jvp(self, f):
        jax = self.jax
        return self._wrap(lambda x, t: jax.jvp(f, (x,), (t,))[1])


class JaxJit(Jax):
    """JAX with every transformed function under ``jax.jit`` (compile time in the first call)."""
    name = "jax-jit"
    jit = True


class Torch:
    """PyTorch CPU through ``torch.func``, one thread."""
    name = "torch"

    def __init__(self):
        self.torch = _import("torch")
        self.torch.set_num_threads(1)
        self.func = _import("torch.func")
        self.xp = _Namespace(self.torch, self.torch.special.erf, self.torch.stack)

    def asarray(self, a):
        return self.torch.as_tensor(np.asarray(a, dtype=np.float64))

    def finish(self, out):
        return out

    def grad(self, f, argnums=0):
        return self.func.grad(f, argnums=argnums)

    def jacfwd(self, f):
        return self.func.jacfwd(f)

    def jacrev(self, f):
        return self.func.jacrev(f)

    def hessian(self, f):
        return self.func.hessian(f)

    def hvp(self, f):
        func = self.func
        return lambda x, v: func.jvp(func.grad(f), (x,), (v,))[1]

    def jvp(self, f):
        func = self.func
        return lambda x, t: func.jvp(f, (x,), (t,))[1]


class Autograd:
    """HIPS autograd (reverse mode; ``make_jvp`` for forward)."""
    name = "autograd"

    def __init__(self):
        self.ag = _import("autograd")
        anp = _import("autograd.numpy")
        self.xp = _Namespace(anp, _import("autograd.scipy.special").erf, anp.stack)

    def asarray(self, a):
        return a if isinstance(a, float) else np.asarray(a, dtype=np.float64)

    def finish(self, out):
        return out

    def grad(self, f, argnums=0):
        return self.ag.grad(f, argnums)

    def jacfwd(self, f):
        raise Unavailable("autograd has no forward-mode jacobian")

    def jacrev(self, f):
        return self.ag.jacobian(f)

    def hessian(self, f):
        return self.ag.hessian(f)

    def hvp(self, f):
        return self.ag.hessian_tensor_product(f)

    def jvp(self, f):
        make_jvp = self.ag.make_jvp
        return lambda x, t: make_jvp(f)(x)(t)[1]


AD_SYSTEMS = (Duals, Jax, JaxJit, Torch, Autograd)


@functools.lru_cache(maxsize=None)
def load(cls):
    """load(cls) -> the system's instance (imports once; raises Unavailable if missing)."""
    return cls()


def bind(system, fn, *args):
    """bind(system, fn, *args) -> zero-argument callable: ``fn`` on converted ``args``."""
    converted = [system.asarray(a) for a in args]
    return lambda: system.finish(fn(*converted))


def ad_entries(task, build, systems=AD_SYSTEMS, **entry_options):
    """ad_entries(task, build) -> one Entry per system; ``build(system)`` returns the callable."""
    from .timing import Entry
    return [Entry(cls.name, task, functools.partial(lambda c: build(load(c)), cls), **entry_options)
            for cls in systems]
