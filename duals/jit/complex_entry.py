"""``jacfwd(f, holomorphic=True)`` of a Numba dispatcher: the complex derivative ``df/dz``, checked.

JAX's meaning: for complex inputs and outputs, the Jacobian of complex derivatives. Every input
direction ``e_k`` travels as two complex lanes, ``e_k`` and ``i e_k``. For a function that is
complex-differentiable at the point, the second lane is ``i`` times the first (Cauchy–Riemann),
and exactly so in floating point: the complex rules multiply ``i t`` by a factor with the same
roundings as ``t``. The result is the Wirtinger derivative ``(J e_k - i J (i e_k)) / 2``, which
is then ``J e_k`` to the bit; where the two lanes disagree (``abs``, ``conj``, ``.real`` of the
input, a branch on its value, ...) the function has no complex derivative there and the call
raises ``ValueError`` instead of returning a number. The price is twice the lanes of a real
Jacobian of the same size.

Complex inputs without ``holomorphic=True`` raise, as in JAX: a complex Jacobian of a function
that is not holomorphic does not exist (``jvp`` gives its real-linear directional derivative).

>>> import numba, numpy as np
>>> f = numba.njit(lambda z: z * z)
>>> complex(holomorphic_jacfwd(f)(1 + 2j))
(2+4j)
"""
import numpy as np

from ..arguments import COMPILED_LANES, argnums as _argnums, as_input, chunk_lanes, output
from ..arguments import split_aux
from .running import transformation

__all__ = ["holomorphic_jacfwd", "refuse_complex_inputs", "TOLERANCE"]

TOLERANCE = 1e-10  # relative disagreement of J(i e) and i J(e) that is taken as rounding (fastmath)


def refuse_complex_inputs(args, nums, who="jacfwd"):
    """Raise the TypeError for complex inputs given to jacfwd without ``holomorphic=True``."""
    for i in nums:
        if np.asarray(args[i]).dtype.kind == "c":
            raise TypeError(
                f"{who}: argument {i} is complex ({np.asarray(args[i]).dtype}); {who} of complex inputs "
                f"needs holomorphic=True (the complex derivative df/dz, as in JAX), or use duals.jvp "
                f"with complex tangents for the real-linear directional derivative of a "
                f"non-holomorphic function, or pass the real and imaginary parts as real arguments")


def holomorphic_jacfwd(f, argnums=0, has_aux=False, chunk_size=None):
    """holomorphic_jacfwd(f, argnums=0, has_aux=False, chunk_size=None) -> function returning df/dz.

    ``f`` is a Numba dispatcher of complex inputs and complex outputs; the Jacobian has shape
    ``out.shape + in.shape`` (a tuple of blocks for a tuple ``argnums``). ``chunk_size`` counts
    input directions per pass (each takes two lanes).

    >>> import numba, numpy as np
    >>> holomorphic_jacfwd(numba.njit(lambda z: np.exp(z)))(np.zeros(2, complex)).tolist()
    [[(1+0j), 0j], [0j, (1+0j)]]
    """
    from .api import _strip
    from .calling import call_on_duals, _check_dispatcher, _leaves, _parts, _rebuild, dual_array
    from .entry_arguments import check_aliases
    f = _check_dispatcher(f, "jacfwd")

    @transformation("jacfwd")
    def jacobian(*args):
        nums, single = _argnums(argnums, len(args), "jacfwd")
        check_aliases(f, args, nums, "jacfwd")
        args = list(args)
        for i in nums:
            args[i] = as_input(args[i], "jacfwd", f"argument {i}")
            if np.asarray(args[i]).dtype.kind != "c":
                raise TypeError(f"jacfwd(holomorphic=True): argument {i} has dtype "
                                f"{np.asarray(args[i]).dtype}; holomorphic=True needs complex inputs "
                                f"(make it complex, e.g. x.astype(complex))")
        primals = [np.asarray(args[i]) for i in nums]
        sizes = [p.size for p in primals]
        total = sum(sizes)
        chunk = chunk_lanes(chunk_size, total, "jacfwd", most=COMPILED_LANES // 2)
        offsets = np.cumsum([0] + sizes)
        columns, treedef, aux = None, None, None
        for start in range(0, max(total, 1), chunk):
            call = list(args)
            for i, p, offset, n in zip(nums, primals, offsets, sizes):
                seeds = np.zeros((2 * chunk, n), dtype=p.dtype)
                for d in range(start, min(start + chunk, total)):
                    if offset <= d < offset + n:
                        seeds[2 * (d - start), d - offset] = 1.0
                        seeds[2 * (d - start) + 1, d - offset] = 1j
                dual = dual_array(p, seeds)
                call[i] = dual if p.ndim else dual[()]
            result = call_on_duals(f, call, "jacfwd")
            if has_aux:
                result, extra = split_aux(result, "jacfwd")
                aux = _strip(extra) if aux is None else aux
            leaves, treedef = _leaves(result)
            valid = min(chunk, total - start)
            blocks = [_derivative(y, k, valid) for k, y in enumerate(leaves)]
            columns = blocks if columns is None else [np.concatenate([c, b], axis=-1)
                                                      for c, b in zip(columns, blocks)]
        jacobians = []
        for block in columns:
            lead = block.shape[:-1]
            parts = [output(block[..., o:o + n].reshape(lead + p.shape).copy())
                     for p, o, n in zip(primals, offsets, sizes)]
            jacobians.append(parts[0] if single else tuple(parts))
        result = _rebuild(treedef, jacobians)
        return (result, aux) if has_aux else result

    def _derivative(y, k, valid):
        parts = _parts(y)
        if parts is None or np.asarray(parts[0]).dtype.kind != "c":
            kind = np.asarray(y if parts is None else parts[0]).dtype
            raise TypeError(f"jacfwd(holomorphic=True): output {k} has dtype {kind}; holomorphic=True "
                            f"needs complex outputs (as in JAX); for a real-valued function of complex "
                            f"inputs use duals.jvp with complex tangents, or make the output complex")
        t = np.asarray(parts[1])
        along, across = t[..., 0:2 * valid:2], t[..., 1:2 * valid:2]
        gap = np.abs(across - 1j * along)
        scale = max(float(np.max(np.abs(along), initial=0.0)), float(np.max(np.abs(across), initial=0.0)))
        if np.any(gap > TOLERANCE * scale) or not np.all(np.isfinite(gap) | ~np.isfinite(along)):
            worst = np.unravel_index(int(np.argmax(np.where(np.isnan(gap), np.inf, gap))), gap.shape)
            raise ValueError(
                f"jacfwd(holomorphic=True): the function is not complex-differentiable at this point "
                f"(output {k}{[int(i) for i in worst[:-1]] if len(worst) > 1 else ''}, input direction "
                f"{int(worst[-1])}: the derivative along i*dz is {complex(across[worst]):.6g}, not i times "
                f"the one along dz, {complex(1j * along[worst]):.6g}); df/dz does not exist. Drop "
                f"holomorphic=True and use duals.jvp with tangents 1 and 1j for its real-linear "
                f"derivative, or pass real and imaginary parts as real arguments")
        return np.where(gap == 0, along, (along - 1j * across) / 2)

    return jacobian

