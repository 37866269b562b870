"""duals.special: SciPy's special functions with SciPy's names and conventions.

``erf``, ``erfc``, ``expit``, ``logsumexp``, ``ndtr``, ``log_ndtr``, ``logit``, ``xlogy``,
``xlog1py``, ``gammaln``, ``digamma`` (``psi``), ``polygamma`` and the inverses ``ndtri``, ``erfinv``,
``erfcinv``. SciPy's own ufuncs of these
names (``scipy.special.erf(x)``) work on traced values too.

>>> import duals.special
>>> float(duals.special.erf(0.0))
0.0
"""
from .numpy import special as _special

__all__ = ["erf", "erfc", "expit", "logsumexp", "ndtr", "log_ndtr", "logit", "xlogy", "xlog1py",
           "gammaln", "digamma", "psi", "polygamma", "ndtri", "erfinv", "erfcinv"]
globals().update({name: getattr(_special, name) for name in __all__})
