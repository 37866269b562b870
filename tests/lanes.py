"""One lane count for the compiled-mode tests (``chunk_size=LANES``).

Numba compiles duals.jit's rules (element-wise loops, reductions, sorting, linear algebra) once
per dual type, and the lane count is part of the type: tests that use the same count share those
compilations within a session, across files. Three, because jacfwd never uses more lanes than
there are entries, and most test inputs have at least three.
"""
LANES = 3
