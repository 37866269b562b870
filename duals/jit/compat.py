"""Every contact of compiled mode with Numba (and NumPy) internals, behind a version gate.

Compiled mode extends Numba through its extension API (``@overload``, ``StructModel``,
``@intrinsic``, typing templates), and beyond it in the few places gathered here: the typing
of dual arrays (:func:`install_dtype_hooks`), the array-expression rewrite
(:func:`keep_out_of_fused_loops`), the NaN test of Numba's ``nan*`` functions
(:func:`nan_aware`), Numba's array methods (:func:`array_methods`), its LAPACK ``gesv``
(:func:`lapack_gesv`), compiling
a subroutine under NumPy's error model (:func:`compile_numpy_subroutine`) and the data pointer
of NumPy's ``np.void`` (:func:`void_data_offset`), and the pipeline of promoting
specialisations (:func:`rewriting_compiler`). :func:`check` runs before any of it is
installed: on a Numba outside the tested range, or one whose internals moved, compiled mode
refuses with one clear message, and the rest of duals keeps working.

>>> check() is None
True
"""
import numba
import numpy as np

# the range tested (see the README's development section); the upper end is exclusive
SUPPORTED = ((0, 60), (0, 69))

# (module, attribute) pairs that compiled mode uses and public Numba does not promise
INTERNALS = (
    ("numba.core.typing.typeof", "typeof_impl"),
    ("numba.np.numpy_support", "as_dtype"),
    ("numba.np.arrayobj", "as_dtype"),
    ("numba.np.ufunc.array_exprs", "RewriteArrayExprs"),
    ("numba.np.arraymath", "array_sum"),
    ("numba.np.arraymath", "array_prod"),
    ("numba.np.arraymath", "array_mean"),
    ("numba.np.arraymath", "get_isnan"),
    ("numba.core.targetconfig", "ConfigStack"),
    ("numba.core.compiler", "DefaultPassBuilder"),
    ("numba.np.linalg", "_LAPACK"),
    ("numba.np.linalg", "F_INT_nptype"),
)


def version():
    """version() -> (major, minor) of the installed Numba."""
    parts = numba.__version__.split(".")
    return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def check():
    """check(): raise ImportError naming the problem if compiled mode cannot run on this Numba."""
    low, high = SUPPORTED
    found = version()
    if not low <= found < high:
        raise ImportError(
            f"duals' compiled mode supports Numba {low[0]}.{low[1]} up to (not including) "
            f"{high[0]}.{high[1]}; this is Numba {numba.__version__}. Install a supported Numba "
            f"(pip install 'numba>={low[0]}.{low[1]},<{high[0]}.{high[1]}') for @njit code; the "
            f"NumPy-path transformations work either way")
    import importlib
    missing = []
    for module, attribute in INTERNALS:
        try:
            if not hasattr(importlib.import_module(module), attribute):
                missing.append(f"{module}.{attribute}")
        except ImportError:
            missing.append(module)
    if missing:
        raise ImportError(f"duals' compiled mode needs Numba internals that this Numba "
                          f"{numba.__version__} lacks: {', '.join(missing)}; install a supported "
                          f"Numba ({low[0]}.{low[1]} to {high[0]}.{high[1] - 1})")


def install_dtype_hooks(type_of_dtype, dtype_of_type, is_dual_type):
    """install_dtype_hooks(type_of_dtype, dtype_of_type, is_dual_type): make Numba see arrays of
    a dual dtype as ``Array(DualType, ...)`` and their elements as dual scalars.

    Numba has no hook for a value type as an array dtype, so the two lookups it uses are
    wrapped: ``typeof`` of ``np.ndarray`` and ``np.void``, and ``as_dtype``. Every other dtype
    goes to Numba's own functions unchanged; installing twice does nothing.
    """
    from numba.core import types
    from numba.core.typing import typeof as typeof_module
    from numba.extending import typeof_impl
    from numba.np import numpy_support
    import numba.np.arrayobj as arrayobj
    import numpy as np

    if getattr(numpy_support.as_dtype, "_duals", False):
        return
    typeof_ndarray = typeof_module.typeof_impl.dispatch(np.ndarray)
    typeof_void = typeof_module.typeof_impl.dispatch(np.void)
    as_dtype = numpy_support.as_dtype
    array_types = {}

    def _typeof_ndarray(val, c):
        if val.dtype.names is not None:
            flags = val.flags
            key = (val.dtype, val.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable)
            found = array_types.get(key)
            if found is None:
                dual = type_of_dtype(val.dtype)
                found = False if dual is None else types.Array(
                    dual, val.ndim, numpy_support.map_layout(val), readonly=not flags.writeable)
                array_types[key] = found
            if found is not False:
                return found
        return typeof_ndarray(val, c)

    def _typeof_void(val, c):
        # Numba's C dispatcher caches this per dtype: such arguments cost no Python call
        dual = type_of_dtype(val.dtype)
        return typeof_void(val, c) if dual is None else dual

    def _as_dtype(nbtype):
        return dtype_of_type(nbtype) if is_dual_type(nbtype) else as_dtype(nbtype)

    _as_dtype._duals = True
    typeof_impl.register(np.ndarray)(_typeof_ndarray)
    typeof_impl.register(np.void)(_typeof_void)
    numpy_support.as_dtype = _as_dtype
    arrayobj.as_dtype = _as_dtype


def keep_out_of_fused_loops(excluded):
    """keep_out_of_fused_loops(excluded): Numba's array-expression rewrite leaves alone every
    expression for which ``excluded(rewrite, expr)`` is true (its fused loops take arrays and
    plain numbers only)."""
    from numba.np.ufunc import array_exprs

    match = array_exprs.RewriteArrayExprs._match_array_expr
    if getattr(match, "_duals", False):
        return

    def _match_array_expr(self, instr, expr, target_name):
        if not excluded(self, expr):
            match(self, instr, expr, target_name)
    _match_array_expr._duals = True
    array_exprs.RewriteArrayExprs._match_array_expr = _match_array_expr


def nan_aware(is_dual_type):
    """nan_aware(is_dual_type): Numba's NaN-skipping reductions (``np.nancumsum``, ``nancumprod``,
    ``nanmedian`` ...) ask ``get_isnan(dtype)`` how to test an entry, and for any dtype but float
    and complex it answers "never NaN", which would silently keep the NaNs of an array of duals.
    For dual dtypes it answers ``np.isnan`` (which duals overload); for every other dtype Numba's
    own answer stands."""
    from numba.np import arraymath

    original = arraymath.get_isnan
    if getattr(original, "_duals", False):
        return

    def get_isnan(dtype):
        return np.isnan if is_dual_type(dtype) else original(dtype)
    get_isnan._duals = True
    arraymath.get_isnan = get_isnan


def array_methods():
    """array_methods() -> {name: the function Numba resolves ``x.name()`` to} for sum, prod, mean."""
    from numba.np import arraymath
    return {"sum": arraymath.array_sum, "prod": arraymath.array_prod, "mean": arraymath.array_mean}


def array_method(internal_name):
    """array_method(internal_name) -> Numba's implementation of an array method by its name in
    ``numba.np.arraymath`` (``"npy_max"`` for ``x.max()``, ``"array_var"``...), None if absent."""
    from numba.np import arraymath
    return getattr(arraymath, internal_name, None)


def lapack_gesv():
    """lapack_gesv() -> (gesv, integer dtype of its pivots): the LAPACK ``dgesv`` wrapper behind
    Numba's ``np.linalg.solve``, callable from @njit code as
    ``gesv(ord("d"), n, nrhs, a.ctypes, n, pivots.ctypes, b.ctypes, n)`` on Fortran-ordered copies:
    the very solution the plain call computes, with the LU factors and pivots left in ``a``."""
    from numba.core import types
    from numba.np import linalg
    return linalg._LAPACK().numba_xgesv(types.float64), linalg.F_INT_nptype


def compile_numpy_subroutine(context, builder, impl, sig, args):
    """Compile ``impl`` for ``sig`` under NumPy's error model (``x / 0.0`` is inf, as in Numba's
    fused loops) with the caller's other flags, and call it."""
    from numba.core import compiler, targetconfig

    flags = targetconfig.ConfigStack().top_or_none()
    flags = compiler.Flags() if flags is None else flags.copy()
    flags.error_model = "numpy"
    cres = context.compile_subroutine(builder, impl, sig, flags=flags, caching=False)
    return context.call_internal(builder, cres.fndesc, sig, args)


def void_data_offset(array):
    """void_data_offset(array) -> the byte offset of the data pointer in NumPy's ``np.void``
    object, checked on ``array[1]``; None when the layout is not the expected one (the caller
    then reads elements through the buffer protocol)."""
    import ctypes

    elem = array[1]
    offset = 3 * ctypes.sizeof(ctypes.c_void_p)  # after the refcount, type and size of the object
    found = ctypes.c_void_p.from_address(id(elem) + offset).value
    return offset if found == array.ctypes.data + array.itemsize else None


def rewriting_compiler(rewrite):
    """rewriting_compiler(rewrite) -> a Numba compiler class (for ``numba.njit(pipeline_class=...)``)
    that is Numba's own nopython pipeline plus one pass calling ``rewrite(calls)`` on the
    untyped code, after closures and inlinable functions are inlined and before typing;
    ``calls`` is a :class:`CallSites` of that code."""
    from numba.core import compiler, untyped_passes

    _register_rewrite_pass()

    class RewritingCompiler(compiler.CompilerBase):
        def define_pipelines(self):
            self.state["duals_rewrite"] = rewrite
            pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.add_pass_after(_REWRITE_PASS[0], untyped_passes.InlineInlinables)
            pm.finalize()
            return [pm]

    return RewritingCompiler


_REWRITE_PASS = []


def _register_rewrite_pass():
    if _REWRITE_PASS:
        return
    from numba.core.compiler_machinery import FunctionPass, register_pass

    @register_pass(mutates_CFG=False, analysis_only=False)
    class DualsRewrite(FunctionPass):
        _name = "duals_rewrite_calls"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            return bool(state["duals_rewrite"](CallSites(state.func_ir)))

    _REWRITE_PASS.append(DualsRewrite)


class CallSites:
    """The names a function's untyped code looks up, to be replaced before typing.

    :meth:`replace` swaps every global, free variable and module attribute (``np.zeros``,
    ``np.linalg.solve``) for which ``value(obj)`` gives a replacement, and every method call
    ``x.name(args)`` for which ``method(name)`` gives a function ``g`` by ``g(x, args)``.
    """

    def __init__(self, func_ir):
        self.func_ir = func_ir

    def _definition(self, var):
        from numba.core.ir_utils import get_definition, guard
        return guard(get_definition, self.func_ir, var)

    def _named(self, var):
        """(True, the object) when ``var`` is a global, a free variable or a module attribute."""
        import types as pytypes
        from numba.core import ir

        found = self._definition(var)
        if isinstance(found, (ir.Global, ir.FreeVar)):
            return True, found.value
        if isinstance(found, ir.Expr) and found.op == "getattr":
            known, base = self._named(found.value)
            if known and isinstance(base, pytypes.ModuleType) and hasattr(base, found.attr):
                return True, getattr(base, found.attr)
        return False, None

    def nested_lists_as_tuples(self, takes_rows):
        """nested_lists_as_tuples(takes_rows) -> whether anything changed: a list literal of list
        literals given as the first argument of a function for which ``takes_rows(obj)`` is true
        (``np.array([[1.0, 0.0], [0.0, rho]])``), each list used there alone, becomes a tuple of
        tuples. Numba unifies rows of different element types (floats and duals) into one list
        type and then cannot lower the conversion of the other rows; tuples keep each row's types."""
        from numba.core import ir

        uses = {}
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                for var in stmt.list_vars():
                    uses[var.name] = uses.get(var.name, 0) + 1
        changed = False
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                rhs = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(rhs, ir.Expr) and rhs.op == "call" and rhs.args):
                    continue
                known, obj = self._named(rhs.func)
                if not (known and takes_rows(obj)):
                    continue
                outer = self._literal_list(rhs.args[0], uses)
                rows = None if outer is None else [self._literal_list(v, uses) for v in outer.items]
                if rows and all(row is not None for row in rows):
                    for row in rows + [outer]:
                        row.op = "build_tuple"
                    changed = True
        return changed

    def _literal_list(self, var, uses):
        """The ``build_list`` expression defining ``var`` when ``var`` is used once (there), else None."""
        from numba.core import ir
        found = self._definition(var) if isinstance(var, ir.Var) and uses.get(var.name) == 2 else None
        return found if isinstance(found, ir.Expr) and found.op == "build_list" else None

    def replace(self, value, method):
        """replace(value, method) -> whether anything was replaced."""
        from numba.core import ir
        from numba.core.ir_utils import mk_unique_var

        changed = False
        definitions = self.func_ir._definitions
        for block in self.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                rhs = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(rhs, (ir.Global, ir.FreeVar)) or (
                        isinstance(rhs, ir.Expr) and rhs.op == "getattr"):
                    known, obj = self._named(stmt.target)
                    new = value(obj) if known else None
                    if new is not None:
                        stmt.value = ir.Global(getattr(new, "__name__", "duals"), new, stmt.loc)
                        definitions[stmt.target.name] = [stmt.value]
                        changed = True
                elif isinstance(rhs, ir.Expr) and rhs.op == "call":
                    bound = self._definition(rhs.func)
                    if (isinstance(bound, ir.Expr) and bound.op == "getattr"
                            and not self._named(rhs.func)[0]):
                        new = method(bound.attr)
                        if new is not None:
                            var = ir.Var(block.scope, mk_unique_var("$duals_method"), stmt.loc)
                            body.append(ir.Assign(ir.Global(new.__name__, new, stmt.loc), var, stmt.loc))
                            definitions[var.name] = [body[-1].value]
                            rhs.func = var
                            rhs.args = [bound.value] + list(rhs.args)
                            changed = True
                body.append(stmt)
            block.body = body
        return changed



def install_new_overloads():
    """Make overloads registered during a compilation (by a rewrite) visible to it: Numba
    installs new registrations when a compilation starts."""
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()


def typed_as_hashable(type_class):
    """typed_as_hashable(type_class): Numba builds sets and dict keys of values of ``type_class``
    (its containers assert that the element type is ``types.Hashable`` before any overload is
    asked), so that the ``__hash__`` overload of the type decides, with its own message."""
    from numba.core import types

    if not issubclass(type_class, types.Hashable):
        types.Hashable.register(type_class)  # Numba's types are ABCs: a virtual subclass


def gufunc_argument_types(gufunc):
    """gufunc_argument_types(gufunc) -> the Numba argument types of the first signature a
    ``@guvectorize`` function was compiled for (its declared one, or its first call's), so that
    a ``()`` argument is known to be a scalar or a one-element array; None before any."""
    sigs = getattr(gufunc.gufunc_builder, "_sigs", None)
    return list(sigs[0].args) if sigs else None
