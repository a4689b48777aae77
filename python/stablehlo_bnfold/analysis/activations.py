"""Activation-sized ops: the ops the data flows through at full size, the ones a fold
removes and the report counts (`FoldReport.summary`, `activation_ops_removed`).

- *data-dependent*: a value computed from a data argument (`data_arguments`: the
  model's input, not a weight nor a scalar). Sizes are not values: the shape operand of a
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

from ..fold.affine_map import are_data_arguments

__all__ = ["activation_sized", "count_activation_sized", "data_arguments"]


def activation_sized(value: ir.Value) -> bool:
    """Whether `value`'s type has the size of an activation: a ranked tensor with at
    least two dimensions larger than one after the first.

    >>> activation_sized(conv.result)   # tensor<1x8x8x16xf32>   # doctest: +SKIP
    True
    """
    return _sized(value.type)


def _sized(kind: ir.Type) -> bool:
    """`activation_sized` of a value of type `kind`."""
    if not isinstance(kind, ir.RankedTensorType):
        return False
    sizes = kind.shape[1:]
    return len(sizes) - sizes.count(1) >= 2  # (a dynamic size, negative, counts as larger)


def data_arguments(function: ir.Operation) -> tuple[int, ...]:
    """The numbers of `function`'s arguments that are data (`is_data_argument`, asked of
    all at once: `are_data_arguments`), scalars
    aside; none for a declaration. A scalar is no activation, and jax.export's symbolic
    dimension sizes are scalars that `is_data_argument` may take for data (the walk from
    one through every shape computation it feeds passes its budget): ops computed from
    them and weights alone (a norm's statistics broadcast to the batch) are no
    activations."""
    blocks = function.regions[0].blocks
    if not len(blocks):
        return ()
    tensors = [(i, a) for i, a in enumerate(blocks[0].arguments) if not _scalar(a)]
    data = are_data_arguments([a for _, a in tensors])
    return tuple(i for (i, _), is_data in zip(tensors, data) if is_data)


def _scalar(value: ir.Value) -> bool:
    kind = value.type
    return isinstance(kind, ir.RankedTensorType) and kind.rank == 0


def count_activation_sized(data: Iterable[ir.Value]) -> int:
    """How many ops are activation-sized and computed from `data` (a function's data
    arguments, `data_arguments`): the ops their uses reach, and the uses of those ops'
    results, through calls, into regions that read them (a `while`'s through its block
    arguments) and out of `case`, `if` and `while` regions through what they return; each
    op once.

    >>> count_activation_sized([entry.arguments[i] for i in data_arguments(function)])   # doctest: +SKIP
    3
    """
    # Following uses visits only what the data flows through, not the weights and
    # constants (half of a network's ops, which a walk over every op reads too). An op is
    # known by its first result: a value's hash is the address of the MLIR value behind
    # it, the same from every handle (an op's own handle is not unique). Types are
    # uniqued: each is sized once. Values reached through a region are known by their
    # hash too: a loop body returns its block arguments, which would otherwise be reached
    # again at each return.
    pending, seen, through_regions, count, sized = list(data), set(), set(), 0, {}
    while pending:
        for use in pending.pop().uses:
            user = use.owner
            name = user.name
            if name.startswith("shape."):
                if name == "shape.assuming_yield":  # the region's results are what it yields
                    pending.extend(user.parent.results)
                continue
            if name == "stablehlo.dynamic_broadcast_in_dim" and use.operand_number != 0:
                continue  # the output shape is sizes
            if name == "stablehlo.return":  # out of a branch or a loop body (a multi-platform export)
                pending.extend(_first_time(_returned_to(user, use.operand_number), through_regions))
                continue
            if name == "stablehlo.while":  # into the loop's regions, as their block arguments
                arguments = [region.blocks[0].arguments[use.operand_number] for region in user.regions]
                pending.extend(_first_time(arguments, through_regions))
            results = user.results
            if not len(results):
                continue
            first = results[0]  # (each read of a result is a call into the bindings)
            key = hash(first)
            if key in seen:
                continue
            seen.add(key)
            if len(results) == 1:
                pending.append(first)
                kind = first.type
                found = sized.get(kind)
                if found is None:
                    found = sized[kind] = _sized(kind)
                count += found
            else:
                pending.extend(results)
    return count


def _first_time(values: list[ir.Value], reached: set) -> list[ir.Value]:
    """Those of `values` not in `reached` (by hash), now added to it."""
    new = [v for v in values if hash(v) not in reached]
    reached.update(hash(v) for v in new)
    return new


def _returned_to(terminator: ir.Operation, index: int) -> list[ir.Value]:
    """The values that operand `index` of a `stablehlo.return` becomes: the result of a
    `case` or `if` that the branch returns, or, from a `while`'s body, the loop's result and
    its regions' block arguments of the next iteration. None from a `while`'s condition or
    a reduction's body (a scalar computation whose results the data reaches anyway)."""
    parent = terminator.parent
    if parent.name in ("stablehlo.case", "stablehlo.if"):
        return [parent.results[index]]
    if parent.name == "stablehlo.while" and terminator.operation.block == parent.regions[1].blocks[0]:
        return [parent.results[index], *(region.blocks[0].arguments[index] for region in parent.regions)]
    return []
