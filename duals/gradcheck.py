"""gradcheck: forward mode, reverse mode and finite differences compared entry by entry.

The short form of :func:`duals.testing.check_grads` at first order: the two exact modes must
agree with each other to rounding, and both must agree with central finite differences to the
accuracy finite differences allow. On a mismatch the error names the worst entry (output and
input index), the three values there and the tolerance, and says which of the three is the odd
one out. When one-sided differences show a kink or a jump at that entry, it says that ``f`` is
not differentiable there.
"""
from .testing import GradcheckError, check_grads

__all__ = ["gradcheck", "GradcheckError"]


def gradcheck(f, *args, eps=None, atol=None, rtol=None):
    """gradcheck(f, *args, eps=None, atol=None, rtol=None) -> True, or raises GradcheckError naming the worst entry.

    Compares ``jacfwd(f)``, ``jacrev(f)`` and central finite differences with respect to
    every argument. The difference step is ``eps · max(1, |x|)`` with ``eps`` the cube root
    of the input dtype's machine epsilon; ``atol``/``rtol`` bound ``|AD − FD|`` by
    ``atol + rtol·|FD|`` (defaults by dtype: 1e-6/1e-5 for float64, 2e-3/2e-2 for float32).
    The two exact modes are held to ``sqrt(machine epsilon)``. ``f`` may return an array
    or a tuple/list/dict of arrays, and an argument may be one too (a dict of parameters).
    Integer arguments are refused: close over them. Complex
    arguments and outputs are checked as pairs of real numbers (``duals.testing.as_real_map``).
    A function that draws noise is checked for one realisation: every evaluation (each mode,
    each difference) starts from the random states the first began with.

    >>> import numpy as np
    >>> gradcheck(lambda x, y: np.sin(x) * y, np.array([0.1, 0.5]), 2.0)
    True
    """
    return check_grads(f, args, order=1, modes=("fwd", "rev"), atol=atol, rtol=rtol, eps=eps,
                       who="gradcheck")
