"""Derivative cases for SciPy's special functions in ``duals/ops/special.py`` (SciPy is a test dependency)."""
import duals.numpy as dnp
from duals.ops import special
from op_cases import Case

S = dnp.special
CASES = [
    Case("gammaln", S.gammaln, ((4,),), ("gammaln", "polygamma"), domain=(0.5, 4.0)),
    Case("digamma", S.digamma, ((4,),), ("polygamma",), domain=(0.5, 4.0)),
    Case("polygamma-2", lambda x: S.polygamma(2, x), ((3,),), ("polygamma",), domain=(0.5, 3.0)),
    Case("log_ndtr", S.log_ndtr, ((2, 3),), ("log_ndtr",), domain=(-3.0, 3.0)),
    # its lower tail (below -5), where its slope and their derivatives come from Mills' ratio
    Case("log_ndtr-tail", S.log_ndtr, ((4,),), ("log_ndtr", "log_ndtr_slope"), domain=(-12.0, -5.5)),
    Case("log_ndtr-gap", special.log_ndtr_gap_p, ((4,),), ("log_ndtr_gap", "log_ndtr_bend"),
         domain=(-9.0, 2.0)),
    Case("ndtr", S.ndtr, ((3,),), ("erfc",), domain=(-3.0, 3.0)),
    Case("ndtri", S.ndtri, ((3,),), ("ndtri", "exp"), domain=(0.02, 0.98)),
    Case("erfinv", S.erfinv, ((3,),), ("erfinv", "exp"), domain=(-0.95, 0.95)),
    Case("erfcinv", S.erfcinv, ((3,),), ("erfcinv", "exp"), domain=(0.05, 1.95)),
    Case("logit", S.logit, ((3,),), ("log", "log1p"), domain=(0.1, 0.9)),
    Case("xlogy", S.xlogy, ((2, 3), (3,)), ("mul", "log", "select"), domain=(0.3, 2.0)),
    Case("xlog1py", S.xlog1py, ((3,), (3,)), ("mul", "log1p", "select"), domain=(0.3, 2.0)),
]
