"""Arithmetic on the tangent lanes of a dual: ``t * s``, ``t1 * s1 + t2 * s2``, ``t1 ± t2``, ``-t``.

Lanes are a Numba ``UniTuple``. Over a float base each helper is one LLVM vector
instruction sequence (``<N x double>``): Numba keeps LLVM's SLP vectoriser off, so
scalar code over the lanes would stay scalar. Over a dual base (nested duals) the helpers
are unrolled tuple expressions that use the inner dual's own arithmetic.

>>> import numba
>>> numba.njit(lambda t, s: lscale(t, s))((1.0, 2.0), 3.0)
(3.0, 6.0)
"""
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload

__all__ = ["lscale", "laxpy", "ladd", "lsub", "lneg", "lzero"]


def lscale(t, s):
    """lscale(t, s) -> t * s lane by lane (``s`` a scalar of the base type)."""
    return tuple(e * s for e in t)


def laxpy(t1, s1, t2, s2):
    """laxpy(t1, s1, t2, s2) -> t1 * s1 + t2 * s2 lane by lane."""
    return tuple(a * s1 + b * s2 for a, b in zip(t1, t2))


def ladd(t1, t2):
    """ladd(t1, t2) -> t1 + t2 lane by lane."""
    return tuple(a + b for a, b in zip(t1, t2))


def lsub(t1, t2):
    """lsub(t1, t2) -> t1 - t2 lane by lane."""
    return tuple(a - b for a, b in zip(t1, t2))


def lneg(t):
    """lneg(t) -> -t lane by lane."""
    return tuple(-e for e in t)


def lzero(t):
    """lzero(t) -> lanes of zeros of the same type as ``t``."""
    return tuple(e * 0.0 for e in t)


# ---------------------------------------------------------------- float base: LLVM vectors

def _to_vector(builder, arr, n):
    vec = ir.VectorType(arr.type.element, n)
    v = ir.Constant(vec, ir.Undefined)
    for i in range(n):
        v = builder.insert_element(v, builder.extract_value(arr, i), ir.Constant(ir.IntType(32), i))
    return v


def _from_vector(builder, vec, arrtype, n):
    a = ir.Constant(arrtype, ir.Undefined)
    for i in range(n):
        a = builder.insert_value(a, builder.extract_element(vec, ir.Constant(ir.IntType(32), i)), i)
    return a


def _splat(builder, value, n):
    vec = ir.VectorType(value.type, n)
    v = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, ir.Constant(vec, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), n), [0] * n))


def _vector_intrinsic(nt, ns, body):
    """An intrinsic over ``nt`` lanes tuples and ``ns`` scalars; ``body(builder, vecs, scalars)``."""
    def typer(typingctx, *args):
        t = args[0]
        sig = t(*args)

        def codegen(context, builder, sig, llargs):
            n = t.count
            base = t.dtype
            vecs, scalars = [], []
            for ty, val in zip(sig.args, llargs):
                if isinstance(ty, types.UniTuple):
                    vecs.append(_to_vector(builder, val, n))
                else:
                    scalars.append(_splat(builder, context.cast(builder, val, ty, base), n))
            res = body(builder, vecs, scalars)
            return _from_vector(builder, res, context.get_value_type(t), n)
        return sig, codegen
    return typer


def _def_vector(name, nargs, body):
    typer = _vector_intrinsic(0, 0, body)
    params = ", ".join(f"a{i}" for i in range(nargs))
    namespace = {"typer": typer}
    exec(f"def {name}(typingctx, {params}):\n    return typer(typingctx, {params})\n", namespace)
    return intrinsic(namespace[name])


_vscale = _def_vector("_vscale", 2, lambda b, v, s: b.fmul(v[0], s[0]))
_vaxpy = _def_vector("_vaxpy", 4, lambda b, v, s: b.fadd(b.fmul(v[0], s[0]), b.fmul(v[1], s[1])))
_vadd = _def_vector("_vadd", 2, lambda b, v, s: b.fadd(v[0], v[1]))
_vsub = _def_vector("_vsub", 2, lambda b, v, s: b.fsub(v[0], v[1]))
_vneg = _def_vector("_vneg", 1, lambda b, v, s: b.fneg(v[0]))


@intrinsic
def _vzero(typingctx, t):
    def codegen(context, builder, sig, args):
        return context.get_constant_null(sig.return_type)
    return t(t), codegen


# ---------------------------------------------------------------- dual base: unrolled tuples

_UNROLLED = {
    "lscale": ("t, s", "t[{i}] * s"),
    "laxpy": ("t1, s1, t2, s2", "t1[{i}] * s1 + t2[{i}] * s2"),
    "ladd": ("t1, t2", "t1[{i}] + t2[{i}]"),
    "lsub": ("t1, t2", "t1[{i}] - t2[{i}]"),
    "lneg": ("t", "-t[{i}]"),
}
_unrolled_cache = {}


def _unrolled(name, n):
    key = (name, n)
    if key not in _unrolled_cache:
        params, expr = _UNROLLED[name]
        body = ", ".join(expr.format(i=i) for i in range(n))
        namespace = {}
        exec(f"def {name}_{n}({params}):\n    return ({body},)\n", namespace)
        _unrolled_cache[key] = namespace[f"{name}_{n}"]
    return _unrolled_cache[key]


def _choose(name, t, vector):
    if not isinstance(t, types.UniTuple):
        return None
    if isinstance(t.dtype, types.Float):
        return vector
    return _unrolled(name, t.count)


def _impl_scale(t, s):
    return _vscale(t, s)


def _impl_axpy(t1, s1, t2, s2):
    return _vaxpy(t1, s1, t2, s2)


def _impl_add(t1, t2):
    return _vadd(t1, t2)


def _impl_sub(t1, t2):
    return _vsub(t1, t2)


def _impl_neg(t):
    return _vneg(t)


def _impl_zero(t):
    return _vzero(t)


@overload(lscale)
def _ov_lscale(t, s):
    return _choose("lscale", t, _impl_scale)


@overload(laxpy)
def _ov_laxpy(t1, s1, t2, s2):
    return _choose("laxpy", t1, _impl_axpy)


@overload(ladd)
def _ov_ladd(t1, t2):
    return _choose("ladd", t1, _impl_add)


@overload(lsub)
def _ov_lsub(t1, t2):
    return _choose("lsub", t1, _impl_sub)


@overload(lneg)
def _ov_lneg(t):
    return _choose("lneg", t, _impl_neg)


@overload(lzero)
def _ov_lzero(t):
    if isinstance(t, types.UniTuple):
        return _impl_zero
