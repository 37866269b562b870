"""duals.special: ``erf``, ``erfc``, ``expit``, ``logsumexp`` with SciPy's names and conventions.

>>> import duals.special
>>> float(duals.special.erf(0.0))
0.0
"""
from .numpy import special as _special

erf = _special.erf
erfc = _special.erfc
expit = _special.expit
logsumexp = _special.logsumexp

__all__ = ["erf", "erfc", "expit", "logsumexp"]
