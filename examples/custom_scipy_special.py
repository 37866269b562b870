"""Wrap scipy.special.gammaln as a duals primitive and check its derivatives.

gammaln'(x) = digamma(x) = polygamma(0, x), and polygamma(n, x)' = polygamma(n + 1, x).
Declaring polygamma as one primitive whose derivative is itself (with n + 1) makes the
whole family differentiable to any order; gammaln and digamma are declared on top of it,
each with its derivative written with primitives, so Hessians and third derivatives work
in every mode. Run: python examples/custom_scipy_special.py
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:                # run as a script it is there; loaded by path it is not
    sys.path.append(_HERE)
import _blas_threads  # noqa: E402  (one BLAS thread, as in benchmarks/: before NumPy loads)

import numpy as np
import scipy.special as sp

import duals
import duals.numpy as dnp
from duals.extend import elementwise, primitive

# polygamma(x, n=k): the k-th derivative of digamma; its derivative is polygamma(x, n=k+1).
# A custom primitive needs a name no built-in primitive has, hence the my_ prefix.
polygamma = primitive("my_polygamma", lambda x, *, n: sp.polygamma(n, x))
polygamma.def_jvp(0, lambda t, out, x, *, n: polygamma(x, n=n + 1) * t, vectorized=True)
polygamma.def_vjp(0, lambda g, out, x, *, n: polygamma(x, n=n + 1) * g, vectorized=True)

# digamma with derivative polygamma(1, x); gammaln with derivative digamma
digamma = elementwise("my_digamma", sp.digamma, lambda out, x: polygamma(x, n=1))
gammaln = elementwise("my_gammaln", sp.gammaln, lambda out, x: digamma(x))


def log_likelihood(alpha, data):
    """Gamma(alpha, 1) log-likelihood of positive data: sum((a-1) log x - x - gammaln(a))."""
    return dnp.sum((alpha - 1.0) * dnp.log(data) - data - gammaln(alpha))


def main():
    print(_blas_threads.describe())
    x = np.array([0.3, 1.0, 2.5, 7.0])
    data = np.random.default_rng(0).gamma(2.0, size=50)
    checks = [
        ("gammaln", lambda x: gammaln(x), (x,)),
        ("digamma", lambda x: digamma(x), (x,)),
        ("d/dx gammaln by grad (= digamma)", duals.grad(lambda x: dnp.sum(gammaln(x))), (x,)),
        ("log-likelihood in alpha", lambda a: log_likelihood(a, data), (np.array(1.7),)),
    ]
    print("gradcheck (jacfwd, jacrev and finite differences):")
    for name, f, args in checks:
        print(f"  {name:36s} {duals.gradcheck(f, *args)}")

    H = duals.hessian(lambda x: dnp.sum(gammaln(x)))(x)
    third = duals.jacfwd(duals.jacrev(duals.grad(lambda a: gammaln(a))))(2.5)
    print("hessian diagonal vs polygamma(1, x):  max |diff| =",
          f"{np.max(np.abs(np.diag(H) - sp.polygamma(1, x))):.2e}")
    print("third derivative at 2.5 vs polygamma(2, 2.5): |diff| =",
          f"{abs(third - sp.polygamma(2, 2.5)):.2e}")

    # maximum-likelihood alpha by Newton's method, with exact first and second derivatives
    a = 1.0
    for _ in range(8):
        g = duals.grad(lambda a: log_likelihood(a, data))(a)
        h = duals.hessian(lambda a: log_likelihood(a, data))(a)
        a = a - g / h
    print(f"MLE of the gamma shape on 50 draws with shape 2: alpha = {float(a):.4f}")


if __name__ == "__main__":
    main()
