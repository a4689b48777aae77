"""Activation-sized ops: the ops the data flows through at full size, the ones a fold
removes and the report counts (`FoldReport.summary`, `activation_ops_removed`).

- *data-dependent*: a value computed from a data argument (`is_data_argument`: the
  model's input, not a weight). Sizes are not values: the shape operand of a
  `dynamic_broadcast_in_dim` and `shape` dialect ops (torch-mlir reads the activation's
  shape before each step of a symbolic batch) make nothing data-dependent; a
  `shape.assuming` region's results are data-dependent where what it yields is.
- *activation-sized* (`activation_sized`): a ranked tensor with, apart from dimension 0
  (the batch), at least two dimensions larger than one (a dynamic one counts as larger):
  a feature map (H, W, C) or a sequence (T, D). A per-channel vector, a scalar, a
  per-example vector (a squeeze-excite gate, pooled features, logits) or a per-token
  statistic (T, 1) is not.

An op is counted when its single result is data-dependent and activation-sized.
"""

from __future__ import annotations

from collections.abc import Iterable

from jaxlib.mlir import ir

from ..fold.affine_map import is_data_argument

__all__ = ["activation_sized", "count_activation_sized", "data_arguments"]


def activation_sized(value: ir.Value) -> bool:
    """Whether `value`'s type has the size of an activation: a ranked tensor with at
    least two dimensions larger than one after the first.

    >>> activation_sized(conv.result)   # tensor<1x8x8x16xf32>   # doctest: +SKIP
    True
    """
    kind = value.type
    if not isinstance(kind, ir.RankedTensorType):
        return False
    return sum(n != 1 for n in kind.shape[1:]) >= 2


def data_arguments(function: ir.Operation) -> tuple[int, ...]:
    """The numbers of `function`'s arguments that are data (`is_data_argument`), scalars
    aside; none for a declaration. A scalar is no activation, and jax.export's symbolic
    dimension sizes are scalars that `is_data_argument` may take for data (the walk from
    one through every shape computation it feeds passes its budget): ops computed from
    them and weights alone (a norm's statistics broadcast to the batch) are no
    activations."""
    blocks = function.regions[0].blocks
    if not len(blocks):
        return ()
    return tuple(
        i for i, argument in enumerate(blocks[0].arguments)
        if not _scalar(argument) and is_data_argument(argument)
    )


def _scalar(value: ir.Value) -> bool:
    kind = value.type
    return isinstance(kind, ir.RankedTensorType) and kind.rank == 0


def count_activation_sized(ops: Iterable[ir.Operation], data: Iterable[ir.Value]) -> int:
    """How many of `ops` (a function's, in pre-order: each op before the ops of its
    regions, and those before the next op) are activation-sized and data-dependent, the
    data being `data` (the function's data arguments).

    >>> count_activation_sized(ops[1:], [entry.arguments[0]])   # doctest: +SKIP
    3
    """
    # A value's hash is the address of the MLIR value behind it, the same from every handle.
    dependent = {hash(v) for v in data}
    count = 0
    for op in ops:
        name = op.name
        if name.startswith("shape."):
            if name == "shape.assuming_yield" and any(hash(v) in dependent for v in op.operands):
                dependent.update(hash(r) for r in op.parent.results)
            continue
        operands = op.operands
        if name == "stablehlo.dynamic_broadcast_in_dim":
            operands = operands[:1]  # the output shape is sizes
        if not any(hash(v) in dependent for v in operands):
            continue
        results = op.results
        dependent.update(hash(r) for r in results)
        if len(results) == 1 and activation_sized(results[0]):
            count += 1
    return count
