from ._types import DualType, dual_dtype  # noqa
from . import rules as _rules
fn = _rules.install()
