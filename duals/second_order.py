"""Second order: hessian, hvp and value_grad_hessian, forward mode over reverse mode.

Each is composed from the first-order transformations (:mod:`duals.forward_transforms`, :mod:`duals.reverse_transforms`) (a Numba
dispatcher goes to the compiled entry points of :mod:`duals.jit`).
"""
import numpy as np

from . import tree
from .arguments import argnums as _argnums, is_compiled as _is_compiled
from .ops import is_complex
from .random_states import from_one_state
from .transformed import returns_transformed
from .forward_transforms import jacfwd, jvp
from .reverse_transforms import _forward_if_refused, _value_and_grad, jacrev, value_and_grad
from ._transform_support import _compiled, _jit, _on_containers, _sparse

__all__ = ["hessian", "hvp", "value_grad_hessian"]


@returns_transformed
def hessian(f, argnums=0, has_aux=False, sparsity=None, chunk_size=None, workers=None, holomorphic=False):
    """hessian(f, argnums=0, has_aux=False, sparsity=None, chunk_size=None, workers=None, holomorphic=False) -> function returning the Hessian, forward over reverse.

    Shape ``in.shape + in.shape`` for a scalar ``f``. For a compiled (Numba) ``f`` with a scalar
    output, forward over reverse (8 directions per recording on the compiled tape, so ``n``
    inputs cost about ``n / 8`` gradients); a non-scalar output or complex intermediates take
    forward over forward (nested duals, passes of 8 × 8 lanes).

    Args:
        f, argnums: as in :func:`jacfwd`.
        has_aux: ``f`` returns ``(value, aux)``; the result is then ``(hessian, aux)``, ``aux``
            as plain values (JAX's ``hessian(has_aux=True)``).
        sparsity: ``"auto"`` (or a Hessian pattern): a symmetric ``scipy.sparse.csr_array`` of
            shape ``(in.size, in.size)``, one forward lane per star colour.
        chunk_size: forward directions per pass (Hessian columns per recording and sweep);
            default: every direction on the NumPy path, 8 for a dispatcher.
        workers: as in :func:`jacfwd`: the passes of the outer forward mode are spread.
        holomorphic: complex inputs, ``f`` holomorphic: the complex second derivative. A real
            function of complex inputs has no complex Hessian: use :func:`hvp` (complex ``x``
            and ``v``), or pass the real and imaginary parts as real arrays.

    >>> import numpy as np
    >>> hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    >>> hessian(lambda x: np.sum(x ** 3), chunk_size=1, workers=map)(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    >>> H, aux = hessian(lambda x: (np.sum(x ** 3), x ** 2), has_aux=True)(np.array([1.0, 2.0]))
    >>> H.tolist(), aux.tolist()
    ([[6.0, 0.0], [0.0, 12.0]], [1.0, 4.0])
    """
    if sparsity is not None:
        for given, name in ((holomorphic, "holomorphic=True"), (has_aux, "has_aux=True")):
            if given:
                raise NotImplementedError(f"hessian: sparsity= with {name} is not supported; drop "
                                          f"one of them (an aux value: a plain call f(x)[1])")
        return _sparse().sparse_hessian(f, argnums, sparsity, workers=workers)
    if _is_compiled(f):
        entry = _jit().compiled_hessian_auto
        return entry(f, argnums=argnums, chunk_size=chunk_size, workers=workers, has_aux=has_aux,
                     **_compiled(entry, holomorphic, "hessian"))
    if holomorphic:
        return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=True), argnums, has_aux=has_aux,
                      chunk_size=chunk_size, workers=workers, holomorphic=True)
    if workers is None:
        return _real_inputs(jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux,
                                   chunk_size=chunk_size), argnums)
    return _real_inputs(jacfwd(_JacrevOf(f, argnums, has_aux), argnums, has_aux=has_aux,
                               chunk_size=chunk_size, workers=workers), argnums)


def _real_inputs(hess, argnums):
    """``hess`` refusing a complex input in its own name, with the way a real function of complex
    inputs has second derivatives (jacfwd inside would name itself and suggest holomorphic=True)."""
    def hessian_of(*args, **kwargs):
        nums, _ = _argnums(argnums, len(args), "hessian")
        for i in nums:
            if any(is_complex(leaf) for leaf in tree.flatten(args[i])[0]):
                raise TypeError(f"hessian: input {i} is complex, and a real function of "
                                f"complex inputs has no complex Hessian: use hvp(f, z, v) (complex z "
                                f"and v), or pass the real and imaginary parts as real arrays; "
                                f"holomorphic=True is for a holomorphic f")
        try:
            return hess(*args, **kwargs)
        except (TypeError, ValueError) as exc:   # the inner transformations' checks, in hessian's name
            text = str(exc)   # ("jacrev: ..." or "jacrev(has_aux=True): ...")
            inner = next((w for w in ("jacfwd", "jacrev") if text.startswith((w + ":", w + "("))), None)
            if inner is None or type(exc) not in (TypeError, ValueError):
                raise
            raise type(exc)("hessian" + text[len(inner):]) from None
    return hessian_of


class _JacrevOf:
    """``jacrev(function, argnums, has_aux)`` as an object that ``workers=`` can pickle (not a closure)."""

    def __init__(self, function, argnums, has_aux=False):
        self.function, self.argnums, self.has_aux = function, argnums, has_aux

    def __call__(self, *args, **kwargs):
        return jacrev(self.function, self.argnums, has_aux=self.has_aux)(*args, **kwargs)


def hvp(f, x, v, /, *args, **kwargs):
    """hvp(f, x, v, *args, **kwargs) -> H(x)·v, the Hessian of ``f(x, *args, **kwargs)`` in ``x``
    times ``v``, one forward pass over one reverse pass, without forming H.

    ``args`` and ``kwargs`` (data, parameters) are held constant, so ``functools.partial(duals.hvp, f)`` is
    SciPy's ``hessp(x, p, *args)``. A Numba dispatcher is recorded once on a compiled tape over
    duals seeded with ``v`` and swept once.

    >>> import numpy as np
    >>> hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
    >>> hvp(lambda x, c: c * np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]), 2.0).tolist()
    [12.0, 0.0]
    """
    if type(x) is tuple and type(v) is tuple and len(x) != len(v):
        raise TypeError(
            f"hvp: x is a tuple of {len(x)} and v of {len(v)}, as JAX's hvp(f, primals, tangents) "
            f"takes them; duals.hvp takes hvp(f, x, v, *args): the point x, the direction v of its "
            f"shape, then f's other arguments, held constant (for f(p, t, data) with v a direction "
            f"in p: duals.hvp(f, p, v, t, data)). A tuple x is differentiated leaf by leaf, with a "
            f"tuple v of the same structure (for a Python function)")
    if _is_compiled(f):
        if kwargs:   # compiled code takes its arguments by position
            x, *args = _jit().api.positional(f, (x,) + args, kwargs, "hvp")

        def by_forward_lanes(x, v, *args):   # complex intermediates: forward over forward, H @ v
            H = _jit().compiled_hessian(f)(x, *args)
            return np.tensordot(H, np.asarray(v, dtype=np.result_type(H)), axes=np.ndim(x))
        return _forward_if_refused(lambda *a: _jit().compiled_hvp(f, *a), by_forward_lanes, "hvp")(x, v, *args)
    gradient = _on_containers(_value_and_grad, f, 0, "hvp", caller="hvp")
    return jvp(lambda y: gradient(y, *args, **kwargs)[1], (x,), (v,))[1]


@returns_transformed
def value_grad_hessian(f, argnums=0):
    """value_grad_hessian(f, argnums=0) -> function returning ``(f(x), ∇f(x), H(x))`` from one sweep.

    >>> import numpy as np
    >>> value, g, H = value_grad_hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> float(value), g.tolist(), H.tolist()
    (9.0, [3.0, 12.0], [[6.0, 0.0], [0.0, 12.0]])
    """
    if _is_compiled(f):  # compiled code cannot run on Python-level duals: its own two entry points
        value_and_gradient, hess = value_and_grad(f, argnums), hessian(f, argnums)

        def compiled_vgh(*args):   # (one realisation of any noise f draws for all three)
            (value, g), H = from_one_state(lambda: value_and_gradient(*args), lambda: hess(*args), args=args)
            return value, g, H
        return compiled_vgh

    def gradient_with_value(*args, **kwargs):
        value, g = value_and_grad(f, argnums)(*args, **kwargs)
        return g, (value, g)

    def vgh(*args, **kwargs):
        H, (value, g) = jacfwd(gradient_with_value, argnums, has_aux=True)(*args, **kwargs)
        return value, g, H

    return vgh
