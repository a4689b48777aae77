"""Use analysis: whether a value has one reader of its elements, not counting the ops that
read only its shape for broadcasts that go with that reader (torch-mlir's symbolic-batch
chains).
"""

from __future__ import annotations

from jaxlib.mlir import ir

from .shapes import SHAPE_READERS

__all__ = ["single_user"]


def single_user(value: ir.Value) -> bool:
    """Whether exactly one op reads `value`'s elements.

    Ops that read only its shape (`shape.shape_of`, `get_dimension_size`, `tensor.dim`)
    do not count when all that is computed from them is the shape of dynamic broadcasts
    that only that op reads: they go when it goes. torch-mlir's symbolic-batch chains
    read each value's shape for the broadcasts of the op after it.
    """
    readers, shape_readers = [], []
    for use in value.uses:
        owner = _operation(use.owner)
        (shape_readers if owner.name in SHAPE_READERS else readers).append(owner)
    if len(readers) != 1:
        return False
    return all(_shape_only_for(reader, readers[0]) for reader in shape_readers)


def _operation(owner) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _shape_only_for(op: ir.Operation, reader: ir.Operation, depth: int = 0) -> bool:
    """Whether every value computed from `op` ends as the shape operand of a dynamic
    broadcast whose only reader is `reader`."""
    if depth > 16 or len(op.results) == 0:
        return False
    for result in op.results:
        for use in result.uses:
            user = _operation(use.owner)
            if user.name == "stablehlo.dynamic_broadcast_in_dim" and use.operand_number == 1:
                if any(_operation(u.owner) != reader for u in user.results[0].uses):
                    return False
            elif user == reader or not _shape_only_for(user, reader, depth + 1):
                return False
    return True
