"""Sparsity detection of @njit code (placeholder until the index-set lanes exist)."""


def detect_compiled(f, args, argnum, hessian, order):
    raise NotImplementedError(
        f"sparsity detection of the compiled function {getattr(f, '__name__', f)!r} is not "
        f"available; pass sparsity= a pattern (for example duals.sparsity of a NumPy version of it)")
