"""Cases for ``duals.checkpoint``'s primitive: the whole op battery (every mode, dtype and
second order) runs through a checkpointed composition."""
import duals
import duals.numpy as dnp
from op_cases import Case


def _segment(x, y):
    return dnp.sin(x) * dnp.exp(-y * y) + x * y


CASES = [
    Case("checkpoint", duals.checkpoint(_segment), ((2, 3), (3,)), ("checkpoint",)),
    Case("checkpoint-nested", duals.checkpoint(lambda x: duals.checkpoint(dnp.tanh)(x) ** 2),
         ((3,),), ("checkpoint",)),
]
