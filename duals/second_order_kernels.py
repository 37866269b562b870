"""Second-order reverse kernels, generated from :mod:`duals.derivatives` and :mod:`duals.symbolic`.

Forward over reverse (``hvp``, ``hessian`` of NumPy code) runs each element-wise reverse rule on
dual numbers. A kernel here computes such a rule, ``g · ∂f/∂x`` over duals, in one pass: the
partial from the table, and its derivative along the function from :mod:`duals.symbolic`. They
are written to the cache directory and imported like the first-order kernels of
:mod:`duals.kernels`; :mod:`duals.ops.dual_vjp` decides when they run.

>>> "def sin_dvjp(" in generate_dual_vjp_source(["sin"])
True
"""
from . import derivatives
from .kernels import _HEADER, _vocabulary_digest, load_generated
from .symbolic import along

# The reverse rule of a one-argument function run on dual numbers (forward over reverse: hvp,
# hessian): ``g · f'(x)`` with ``x = xs + txs ε`` and ``g = gs + tgs ε`` is
# ``g f'(x) + (g · f''(x) tx + f'(x) tg) ε``, where ``f''`` is the table partial differentiated
# by :func:`duals.symbolic.along`. One pass instead of the partial's kernels, then the product's.
# ``gs`` of length 1 is one cotangent for all entries (a sum's); ``tgs`` None: ``g`` is plain.
_DUAL_VJP_ENTRY = """x = xs[i]
out = outs[i]
g = gs[i * sg]
d = {partial}
gx[i] = d * g"""


def _indented(lines, depth):
    return "\n".join(" " * depth + line for line in lines.splitlines())


# lanes == 1 has a loop of its own: without the loop over lanes inside, LLVM vectorises it (W2's
# hvp took 1.9 ms instead of 1.2 with one loop for every lane count)
_DUAL_VJP_TEMPLATE = f'''
@_kernel
def {{name}}_dvjp(xs, txs, outs, gs, tgs, gx, tgx):
    n = xs.shape[0]
    lanes = tgx.shape[0]
    sg = 1 if gs.shape[0] == n else 0
    if lanes == 1:
        for i in range(n):
{_indented(_DUAL_VJP_ENTRY, 12)}
            t = 0.0
            if txs is not None:
                t = g * (({{curvature}}) * txs[0, i])
            if tgs is not None:
                t += d * tgs[0, i]
            tgx[0, i] = t
        return
    ds = np.empty(n, dtype=gx.dtype)
    es = np.empty(n, dtype=gx.dtype)
    for i in range(n):
{_indented(_DUAL_VJP_ENTRY, 8)}
        ds[i] = d
        es[i] = {{curvature}}
    for lane in range(lanes):
        row = tgx[lane]
        if txs is not None:
            tx = txs[lane]
            for i in range(n):
                row[i] = gs[i * sg] * (es[i] * tx[i])
        else:
            row[:] = 0.0
        if tgs is not None:
            tg = tgs[lane]
            for i in range(n):
                row[i] += ds[i] * tg[i]
'''


# The same for argument ``{which}`` of a two-argument function: ``g · p(x, y, out)`` over duals,
# whose tangent is ``g · (p_x tx + p_y ty) + p · tg`` with ``p_x``, ``p_y`` the derivatives of the
# partial along each argument (``out`` moving with it). A plain operand has no tangent (None) and
# may be one number (length 1).
_DUAL_VJP_BINARY_ENTRY = """x = xs[i * sx]
y = ys[i * sy]
out = outs[i]
g = gs[i * sg]
d = {partial}
gi[i] = d * g
ax = 0.0
ay = 0.0
if txs is not None:
    ax = {along_x}
if tys is not None:
    ay = {along_y}"""


def _binary_lane(lane):
    return f"""t = 0.0
if txs is not None:
    t += ax * txs[{lane}, i]
if tys is not None:
    t += ay * tys[{lane}, i]
t = g * t
if tgs is not None:
    t += d * tgs[{lane}, i]
tgi[{lane}, i] = t"""


_DUAL_VJP_BINARY_TEMPLATE = f'''
@_kernel
def {{name}}_dvjp_{{which}}(xs, txs, ys, tys, outs, gs, tgs, gi, tgi):
    n = outs.shape[0]
    lanes = tgi.shape[0]
    sx = 1 if xs.shape[0] == n else 0
    sy = 1 if ys.shape[0] == n else 0
    sg = 1 if gs.shape[0] == n else 0
    if lanes == 1:
        for i in range(n):
{_indented(_DUAL_VJP_BINARY_ENTRY, 12)}
{_indented(_binary_lane("0"), 12)}
        return
    for i in range(n):
{_indented(_DUAL_VJP_BINARY_ENTRY, 8)}
        for lane in range(lanes):
{_indented(_binary_lane("lane"), 12)}
'''


def curvature(partial):
    """curvature(partial) -> the derivative of a one-argument partial ``partial(x, out)`` along
    its function (``out`` moves with ``x`` at the rate ``partial``), or None if the formula
    cannot be differentiated.

    >>> curvature("0.5 / out")
    '-(0.5 / (out * out)) * (0.5 / out)'
    """
    return along(partial, "x", {"x": "1.0", "out": partial})


def curvatures(name, which):
    """curvatures(name, which) -> ``(along x, along y)``: the derivatives of the partial of table
    entry ``name`` for argument ``which`` (``"x"`` or ``"y"``) along each argument, or None.

    >>> curvatures("div", "x")
    ('0.0', '-(1.0 / (y * y))')
    """
    dx, dy = derivatives.TABLE[name].partials
    partial = dx if which == "x" else dy
    found = (along(partial, "x", {"x": "1.0", "out": dx}), along(partial, "y", {"y": "1.0", "out": dy}))
    return None if None in found else found


def generate_dual_vjp_source(names):
    """generate_dual_vjp_source(names) -> str: the second-order reverse kernels of the table
    entries ``names``: ``"sin"`` for a one-argument entry, ``"div:y"`` for argument ``y`` of a
    two-argument one (those whose partials :func:`curvature` and :func:`curvatures` differentiate).

    >>> src = generate_dual_vjp_source(["sin", "div:y"])
    >>> "def sin_dvjp(" in src and "def div_dvjp_y(" in src
    True
    """
    parts = [_HEADER, f"# vocabulary {_vocabulary_digest()}\n"]
    for key in names:
        name, _, which = key.partition(":")
        partials = derivatives.TABLE[name].partials
        if not which:
            parts.append(_DUAL_VJP_TEMPLATE.format(name=name, partial=partials[0],
                                                   curvature=curvature(partials[0])))
            continue
        along_x, along_y = curvatures(name, which)
        parts.append(_DUAL_VJP_BINARY_TEMPLATE.format(
            name=name, which=which, partial=partials["xy".index(which)], along_x=along_x, along_y=along_y))
    return "\n".join(parts)


module = None        # the generated module, imported on first use (kernels.clear_cache resets it)
DUAL_VJP_NAMES = []   # the entries with second-order reverse kernels (filled by duals.ops.dual_vjp)


def dual_vjp_kernel(key):
    """dual_vjp_kernel(key) -> numba dispatcher of one second-order reverse kernel (``"sin"``,
    ``"div:y"``, as :func:`generate_dual_vjp_source`)."""
    global module
    if module is None:
        module = load_generated("duals_dual_vjp_kernels", generate_dual_vjp_source(DUAL_VJP_NAMES))
    name, _, which = key.partition(":")
    return getattr(module, f"{name}_dvjp_{which}" if which else f"{name}_dvjp")
