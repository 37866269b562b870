"""Fused Numba value-and-tangent kernels, generated from :mod:`duals.derivatives`.

For every element-wise primitive the table's formulas are pasted into a kernel template
that computes the value and every tangent lane in one pass over preallocated outputs, with
no NumPy temporaries. The generated source is written to a real file in the cache
directory (Numba can only cache functions that live in a file), named after a hash of the
table, the templates and the library version: a changed rule gets a new file and so a
fresh compilation, which Numba would not notice by itself.

Kernels see flat arrays only: values ``(n,)`` and tangents ``(lanes, n)``; an operand of
length 1 is broadcast against the others through a zero stride.
"""
import hashlib
import importlib.util
import os
import shutil
import sys

from . import derivatives
from ._version import __version__

# The one place that picks NumPy over a fused kernel. NumPy's SIMD loops for these functions
# beat Numba's scalar libm calls (SVML is not available) from about this many elements on
# (benchmarks K1: exp at 10^5, 516 us fused vs 163 us for np.exp plus the tangent product);
# from there on forward mode takes NumPy's value and the table's derivative formula. Measured
# against the kernel with 1 and 10 lanes on this project's machine (AVX-512 NumPy 2.4): the
# size where NumPy's two steps win by 1.5x or more with one lane and lose by at most 20% with ten.
NUMPY_FROM = {"exp": 1000, "log": 1000, "cbrt": 1000, "expm1": 1000, "log10": 1000, "log1p": 1000,
              "tan": 1000, "tanh": 1000, "arcsinh": 1000, "arccosh": 1000, "arctanh": 1000,
              "sinh": 300, "cosh": 300, "arcsin": 3000, "arccos": 3000, "exp2": 10000,
              "log2": 10000}


def prefer_numpy(name, size):
    """prefer_numpy(name, size) -> bool: whether NumPy's two-step beats the fused kernel here."""
    return size >= NUMPY_FROM.get(name, 1 << 62)


_UNARY_TEMPLATE = '''
@_kernel
def {name}_value(xs, outs):
    for i in range(xs.shape[0]):
        x = xs[i]
        outs[i] = {value}


@_kernel
def {name}_jvp(xs, ts, outs, touts):
    n = xs.shape[0]
    lanes = ts.shape[0]
    if lanes == 1:
        for i in range(n):
            x = xs[i]
            out = {value}
            outs[i] = out
            touts[0, i] = ({deriv}) * ts[0, i]
        return
    ds = np.empty(n, dtype=outs.dtype)
    for i in range(n):
        x = xs[i]
        out = {value}
        outs[i] = out
        ds[i] = {deriv}
    for lane in range(lanes):
        for i in range(n):
            touts[lane, i] = ds[i] * ts[lane, i]
'''

_BINARY_HEAD = '''
@_kernel
def {name}_value(xs, ys, outs):
    n = outs.shape[0]
    sx = 1 if xs.shape[0] == n else 0
    sy = 1 if ys.shape[0] == n else 0
    for i in range(n):
        x = xs[i * sx]
        y = ys[i * sy]
        outs[i] = {value}


@_kernel
def {name}_jvp(xs, ys, txs, tys, outs, touts):
    n = outs.shape[0]
    lanes = touts.shape[0]
    sx = 1 if xs.shape[0] == n else 0
    sy = 1 if ys.shape[0] == n else 0
'''


def _one_lane(condition, x, y, tx, ty, hoisted=(), why=""):
    """The one-lane loop of a binary jvp kernel for operands read as ``x``, ``y`` (None: held in
    a register, read before the loop by ``hoisted``) with tangents read as ``tx``, ``ty``."""
    lines = [f"    if lanes == 1{condition}:"] + ([f"        # {why}"] if why else [])
    lines += [f"        {h}" for h in hoisted] + ["        for i in range(n):"]
    lines += [f"            {v} = {load}" for v, load in (("x", x), ("y", y)) if load]
    lines += ["            out = {value}", "            outs[i] = out", "            acc = 0.0",
              "            if txs is not None:", f"                acc += ({{dx}}) * {tx}",
              "            if tys is not None:", f"                acc += ({{dy}}) * {ty}",
              "            touts[0, i] = acc", "        return", ""]
    return "\n".join(lines)


_BINARY_TEMPLATE = _BINARY_HEAD + "".join([
    _one_lane(" and sx == 1 and sy == 1", "xs[i]", "ys[i]", "txs[0, i]", "tys[0, i]",
              why="the common case, without stride arithmetic so that LLVM vectorises it"),
    _one_lane(" and sx == 0 and sy == 1", None, "ys[i]", "tx", "tys[0, i]",
              ("x = xs[0]", "tx = 0.0", "if txs is not None:", "    tx = txs[0, 0]"),
              why="a number and an array (100.0 * x): the number in a register, so the loop vectorises"),
    _one_lane(" and sx == 1 and sy == 0", "xs[i]", None, "txs[0, i]", "ty",
              ("y = ys[0]", "ty = 0.0", "if tys is not None:", "    ty = tys[0, 0]")),
    _one_lane("", "xs[i * sx]", "ys[i * sy]", "txs[0, i * sx]", "tys[0, i * sy]"),
]) + '''    dxs = np.empty(n, dtype=outs.dtype)
    dys = np.empty(n, dtype=outs.dtype)
    for i in range(n):
        x = xs[i * sx]
        y = ys[i * sy]
        out = {value}
        outs[i] = out
        if txs is not None:
            dxs[i] = {dx}
        if tys is not None:
            dys[i] = {dy}
    # lane loops without stride arithmetic, so that LLVM vectorises them
    for lane in range(lanes):
        row = touts[lane]
        if txs is not None and tys is not None and sx == 1 and sy == 1:
            tx = txs[lane]
            ty = tys[lane]
            for i in range(n):
                row[i] = dxs[i] * tx[i] + dys[i] * ty[i]
            continue
        if txs is not None:
            tx = txs[lane]
            if sx == 1:
                for i in range(n):
                    row[i] = dxs[i] * tx[i]
            else:
                for i in range(n):
                    row[i] = dxs[i] * tx[0]
        else:
            row[:] = 0.0
        if tys is not None:
            ty = tys[lane]
            if sy == 1:
                for i in range(n):
                    row[i] += dys[i] * ty[i]
            else:
                for i in range(n):
                    row[i] += dys[i] * ty[0]
'''

_HEADER = '''# Generated by duals.kernels from duals/derivatives.py -- do not edit.
import numba
import numpy as np
from duals._numba_cache import cached_kernel
from duals._vocabulary_njit import *  # noqa: F401,F403  the formula vocabulary
from duals.derivatives import CONSTANTS as _CONSTANTS

globals().update(_CONSTANTS)
_kernel = cached_kernel(error_model="numpy", nogil=True)
'''


def generate_source():
    """generate_source() -> str: the Python source of every kernel in the table.

    >>> "def sin_jvp" in generate_source()
    True
    """
    parts = [_HEADER, f"# vocabulary {_vocabulary_digest()}\n"]
    for name, (value, deriv) in derivatives.UNARY.items():
        parts.append(_UNARY_TEMPLATE.format(name=name, value=value, deriv=deriv))
    for name, (value, dx, dy) in derivatives.BINARY.items():
        parts.append(_BINARY_TEMPLATE.format(name=name, value=value, dx=dx, dy=dy))
    return "\n".join(parts)


def _vocabulary_digest():
    """A digest of the compiled vocabulary's sources: Numba's cache does not see a change in a
    module the kernels import, so it is written into the kernel source (and so its file name)."""
    here = os.path.dirname(__file__)
    h = hashlib.sha256()
    for name in ("_vocabulary_njit.py", "_vocabulary.py"):
        with open(os.path.join(here, name), "rb") as handle:
            h.update(handle.read())
    return h.hexdigest()[:16]


def cache_dir():
    """cache_dir() -> str: where compiled kernels live (``$DUALS_CACHE_DIR`` moves it). Where that
    folder cannot be made or written (a read-only home), a temporary folder of this process's,
    with a warning: everything works, and compiles again in the next process."""
    root = os.environ.get("DUALS_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "duals")
    wanted = os.path.join(root, f"v{__version__}")
    if _WRITABLE.get(wanted) is None:
        try:
            os.makedirs(wanted, exist_ok=True)
            _WRITABLE[wanted] = wanted if os.access(wanted, os.W_OK) else False
        except OSError:
            _WRITABLE[wanted] = False
        if _WRITABLE[wanted] is False:
            import atexit
            import shutil
            import tempfile
            import warnings
            _WRITABLE[wanted] = tempfile.mkdtemp(prefix="duals-cache-")
            atexit.register(shutil.rmtree, _WRITABLE[wanted], ignore_errors=True)
            warnings.warn(f"duals cannot write its cache folder {wanted}; compiled code goes to "
                          f"{_WRITABLE[wanted]} for this process only (set DUALS_CACHE_DIR to a "
                          f"writable folder to keep it)", RuntimeWarning, stacklevel=2)
    return _WRITABLE[wanted]


_WRITABLE = {}   # the cache folder asked for -> the one used (itself, or a temporary one)


def clear_cache():
    """clear_cache() -> None: delete every compiled specialisation of this library version from
    disk, the folder :func:`cache_dir` names. Later processes compile what they need again; this
    one keeps what it has loaded.

    >>> os.path.basename(cache_dir()) == f"v{__version__}"   # what clear_cache() deletes
    True
    """
    # (the example does not call it: in the test suite that would empty the cache the other test
    # process is loading from; tests/test_numba_cache.py calls it in a process of its own)
    global _module, _vjp_module
    from . import second_order_kernels
    shutil.rmtree(cache_dir(), ignore_errors=True)
    _module = _vjp_module = second_order_kernels.module = None


_module = None
_PREFIXES = set()    # the generated modules' prefixes (their names end in a digest of the source)


class _EarlierGenerated:
    """An import of a generated module of another source (an earlier duals, or another rule
    table): Numba asks for it when it loads a function that ``cache=True`` compiled then. Its
    code must not run with these rules, so the import fails saying how to recompile."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        prefix, _, digest = name.rpartition("_")
        if prefix in _PREFIXES and len(digest) == 16 and name not in sys.modules:
            raise ImportError(
                f"Numba's cache (cache=True) holds a function compiled with another version of "
                f"duals' rules ({name}); delete that cache (the .nbi and .nbc files in the "
                f"__pycache__ folder beside its source, or under NUMBA_CACHE_DIR) and it compiles again")
        return None


def load_generated(prefix, source):
    """load_generated(prefix, source) -> module: ``source`` written to the cache directory and imported.

    The file is named after a hash of the source, so Numba's ``cache=True`` can find it again
    and a changed source gets a fresh file (and a fresh compilation).
    """
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    if not _PREFIXES:
        sys.meta_path.append(_EarlierGenerated)    # last: every real module is found before
    _PREFIXES.add(prefix)
    directory = cache_dir()
    os.makedirs(directory, exist_ok=True)
    name = f"{prefix}_{digest}"
    path = os.path.join(directory, name + ".py")
    if not os.path.exists(path):  # also after clear_cache(), for Numba's cache index
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as handle:
            handle.write(source)
        os.replace(tmp, path)  # atomic, so concurrent processes never see half a file
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def kernels():
    """kernels() -> module: the generated kernel module, written and imported on first use."""
    global _module
    if _module is None:
        _module = load_generated("duals_kernels", generate_source())
    return _module


def kernel(name, kind):
    """kernel(name, kind) -> numba dispatcher: ``kind`` is ``"value"`` or ``"jvp"``."""
    return getattr(kernels(), f"{name}_{kind}")

# ---------------------------------------------------------------- reverse mode

# Reverse-mode kernels: one pass over the saved operands and the cotangent ``g`` computes the
# cotangent of every differentiated argument, ``partial * g``, and writes it (``=``) or adds it
# into an accumulator the walk owns (``+``). The cotangent read is ``scale * gs[i]``: the walk
# may hand on a cotangent as an array and a number that multiplies it (``100 * x`` gives ``100 *
# g`` for ``x``), which the kernel multiplies in as the rules would have done before it; 1.0
# leaves ``gs`` as it is, bit for bit. An entry marked in ``mask`` (zero by structure: a
# branch not taken) whose product is not finite gives exactly 0. Operands and ``g`` of length 1
# are broadcast through a zero stride; unused outputs are passed as length-1 dummies. The
# variant name lists the outputs and how each is stored: ``mul_vjp_x=y+``.
_VJP_HEADER = '''
@_kernel
def {fname}({params}, scale, mask):
    n = outs.shape[0]
{strides}
    if mask.shape[0] == n:
        for i in range(n):
{loads_strided}
{stores_masked}
        return
    if {contiguous}:
        for i in range(n):
{loads_contiguous}
{stores}
        return
    if {contiguous_but_g}:
        g = scale * gs[0]   # one cotangent for all (a sum's): in a register, so the loop vectorises
        for i in range(n):
{loads_but_g}
{stores}
        return
    for i in range(n):
{loads_strided}
{stores}
'''


def vjp_variants(arity):
    """vjp_variants(arity) -> the variant names a reverse-mode kernel is generated in (``"x=y+"``)."""
    names = "xy"[:arity]
    out = []
    for k in range(1, 1 << arity):
        wanted = [names[i] for i in range(arity) if k >> i & 1]
        for ops in range(1 << len(wanted)):
            out.append("".join(w + ("+" if ops >> j & 1 else "=") for j, w in enumerate(wanted)))
    return out


def _vjp_kernel(name, partials, variant):
    arity = len(partials)
    operands = ("xs", "ys")[:arity]
    results = ("gx", "gy")[:arity]
    params = ", ".join(operands + ("outs", "gs") + results)
    strides = [f"    s{v} = 1 if {v}s.shape[0] == n else 0" for v in "xy"[:arity]]
    strides.append("    sg = 1 if gs.shape[0] == n else 0")
    pad = " " * 12
    strided = [f"{pad}{v} = {v}s[i * s{v}]" for v in "xy"[:arity]] + [
        f"{pad}out = outs[i]", f"{pad}g = scale * gs[i * sg]"]
    contiguous = [f"{pad}{v} = {v}s[i]" for v in "xy"[:arity]] + [f"{pad}out = outs[i]",
                                                                   f"{pad}g = scale * gs[i]"]
    operands_contiguous = [f"s{v} == 1" for v in "xy"[:arity]]
    stores, masked = [], []
    for k in range(0, len(variant), 2):
        v, op = variant[k], variant[k + 1]
        i = "xy".index(v)
        target = f"{results[i]}[i]"
        assign = "+=" if op == "+" else "="
        stores.append(f"{pad}{target} {assign} ({partials[i]}) * g")
        masked += [f"{pad}p = ({partials[i]}) * g",
                   f"{pad}if mask[i] and not np.isfinite(p):",
                   f"{pad}    p = 0.0",
                   f"{pad}{target} {assign} p"]
    return _VJP_HEADER.format(
        fname=f"{name}_vjp_{vjp_suffix(variant)}", params=params, strides="\n".join(strides),
        loads_strided="\n".join(strided), loads_contiguous="\n".join(contiguous),
        stores="\n".join(stores), stores_masked="\n".join(masked),
        contiguous=" and ".join(operands_contiguous + ["sg == 1"]),
        contiguous_but_g=" and ".join(operands_contiguous + ["sg == 0"]),
        loads_but_g="\n".join(contiguous[:-1]))


def vjp_suffix(variant):
    """The identifier spelling of a variant: ``"x=y+"`` -> ``"xwya"``."""
    return variant.replace("=", "w").replace("+", "a")


def generate_vjp_source(names):
    """generate_vjp_source(names) -> str: the reverse-mode kernels of the table entries ``names``.

    >>> "def mul_vjp_xwya" in generate_vjp_source(["mul"])
    True
    """
    parts = [_HEADER, f"# vocabulary {_vocabulary_digest()}\n"]
    for name in names:
        entry = derivatives.TABLE[name]
        for variant in vjp_variants(entry.arity):
            parts.append(_vjp_kernel(name, entry.partials, variant))
    return "\n".join(parts)


_vjp_module = None
VJP_NAMES = []   # the entries with reverse-mode kernels (filled by duals.ops.fused_vjp)


def vjp_kernel(name, variant):
    """vjp_kernel(name, variant) -> numba dispatcher of one reverse-mode kernel (compiled on first call)."""
    global _vjp_module
    if _vjp_module is None:
        _vjp_module = load_generated("duals_vjp_kernels", generate_vjp_source(VJP_NAMES))
    return getattr(_vjp_module, f"{name}_vjp_{vjp_suffix(variant)}")
