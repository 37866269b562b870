"""Linear algebra and contractions (matmul, dot, einsum, solve, inv, det, ...)."""
