"""Where the feature dimension of a linear op lives.

A *linear op* is a `stablehlo.convolution`, a `stablehlo.dot_general` or a `stablehlo.dot`
(TensorFlow's Dense; a dot_general contracting lhs's last dimension with rhs's first).
Its feature dimension is read from its dimension numbers, never assumed:

- convolution: the result's `output_feature_dimension`, scaled in the kernel (operand 1)
  along `kernel_output_feature_dimension`. This holds for grouped, depthwise,
  batch-grouped and transposed (lhs-dilated) convolutions alike: output feature `o` is
  computed from kernel slice `o` only.
- dot_general: result dimensions are `batch..., lhs free..., rhs free...`; a result
  dimension in the free range of one operand is scaled in that operand along the matching
  free dimension.

`linear_layout` gives where an output feature meets the weights, `input_layouts` where a
per-feature value on an input does.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

__all__ = ["InputLayout", "LinearLayout", "input_layouts", "linear_layout", "linear_layouts"]


@dataclass(frozen=True)
class LinearLayout:
    """Where a linear op's feature dimension lives.

    `output` is the result dimension; the op's operand number `weight_operand` holds the
    weights, scaled per feature along its dimension `weight_axis`.
    """

    output: int
    weight_operand: int
    weight_axis: int


def linear_layout(op: ir.OpView, feature: int) -> LinearLayout | None:
    """The layout that puts result dimension `feature` of a linear op in its weights.

    None when `feature` is not a dimension that a per-feature scale of one operand reaches
    (for a convolution: not its output-feature dimension).

    >>> linear_layout(conv, 3)   # NHWC x HWIO   # doctest: +SKIP
    LinearLayout(output=3, weight_operand=1, weight_axis=3)
    """
    return linear_layouts(op).get(feature)


def linear_layouts(op: ir.OpView) -> dict[int, LinearLayout]:
    """`linear_layout` of every result dimension that has one, by dimension, read from the
    dimension numbers once (a pattern that tries each dimension asks here).

    >>> linear_layouts(conv)   # NHWC x HWIO   # doctest: +SKIP
    {3: LinearLayout(output=3, weight_operand=1, weight_axis=3)}
    """
    if isinstance(op, stablehlo.ConvolutionOp):
        dims = stablehlo.ConvDimensionNumbers(op.dimension_numbers)
        feature = dims.output_feature_dimension
        return {feature: LinearLayout(feature, 1, dims.kernel_output_feature_dimension)}
    if isinstance(op, (stablehlo.DotGeneralOp, stablehlo.DotOp)):
        return _dot_general_layouts(op)
    return {}


def _dot_dimensions(op: ir.OpView) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """((lhs batch, rhs batch), (lhs contracting, rhs contracting)) of a dot_general, or of
    a `stablehlo.dot` (TensorFlow's Dense): no batch, lhs's last dimension with rhs's
    first."""
    if isinstance(op, stablehlo.DotOp):
        return ([], []), ([ir.ShapedType(op.lhs.type).rank - 1], [0])
    dims = stablehlo.DotDimensionNumbers(op.dot_dimension_numbers)
    return (
        (list(dims.lhs_batching_dimensions), list(dims.rhs_batching_dimensions)),
        (list(dims.lhs_contracting_dimensions), list(dims.rhs_contracting_dimensions)),
    )


def _dot_general_layouts(op: ir.OpView) -> dict[int, LinearLayout]:
    # Result dimensions: batch..., lhs free..., rhs free...
    (lhs_batch, rhs_batch), (lhs_contracting, rhs_contracting) = _dot_dimensions(op)
    lhs_free = _free_dims(op.lhs, lhs_batch, lhs_contracting)
    rhs_free = _free_dims(op.rhs, rhs_batch, rhs_contracting)
    layouts = {}
    for operand, first, free in ((0, len(lhs_batch), lhs_free),
                                 (1, len(lhs_batch) + len(lhs_free), rhs_free)):
        for i, axis in enumerate(free):
            layouts[first + i] = LinearLayout(first + i, operand, axis)
    return layouts


def _free_dims(value: ir.Value, batch: list[int], contracting: list[int]) -> list[int]:
    rank = ir.ShapedType(value.type).rank
    return [d for d in range(rank) if d not in batch and d not in contracting]


@dataclass(frozen=True)
class InputLayout:
    """Where a per-feature value on a linear op's input meets its weights.

    Operand `activation` is read per feature along its dimension `feature`; the weights
    (operand `weight_operand`) are contracted with it along `weight_axis`. A grouped
    convolution (`groups` > 1) reads input feature g * n + i, for an output feature o of
    group g = o // (outputs / groups), from weight index i along `weight_axis` and o along
    `weight_output_axis`. The weights' dimensions `kept` reach the result, in that order,
    as its dimensions `result_dims`; the others are summed over.
    """

    activation: int
    feature: int
    weight_operand: int
    weight_axis: int
    groups: int
    weight_output_axis: int | None
    kept: tuple[int, ...]
    result_dims: tuple[int, ...]


def input_layouts(op: ir.OpView) -> tuple[InputLayout, ...]:
    """The ways a per-feature value on an input of a linear op reaches its weights: for a
    convolution, its lhs along the input-feature dimension; for a dot_general, either
    operand along each of its contracting dimensions.

    >>> input_layouts(dense)   # x[B, 4] . W[4, 8], contracting 1 with 0   # doctest: +SKIP
    (InputLayout(activation=0, feature=1, weight_operand=1, weight_axis=0, groups=1,
                 weight_output_axis=None, kept=(1,), result_dims=(1,)), ...)
    """
    if isinstance(op, stablehlo.ConvolutionOp):
        dims = stablehlo.ConvDimensionNumbers(op.dimension_numbers)
        output = dims.kernel_output_feature_dimension
        return (
            InputLayout(
                activation=0,
                feature=dims.input_feature_dimension,
                weight_operand=1,
                weight_axis=dims.kernel_input_feature_dimension,
                groups=ir.IntegerAttr(op.feature_group_count).value,
                weight_output_axis=output,
                kept=(output,),
                result_dims=(dims.output_feature_dimension,),
            ),
        )
    if not isinstance(op, (stablehlo.DotGeneralOp, stablehlo.DotOp)):
        return ()
    batch, contracting = _dot_dimensions(op)
    free = [_free_dims(v, b, c) for v, b, c in zip(op.operands, batch, contracting)]
    layouts = []
    for activation, weights in ((0, 1), (1, 0)):
        # Result dimensions: batch..., lhs free..., rhs free...
        first_free = len(batch[0]) + (len(free[0]) if weights == 1 else 0)
        result_dims = tuple(range(len(batch[0]))) + tuple(
            range(first_free, first_free + len(free[weights]))
        )
        kept = tuple(batch[weights]) + tuple(free[weights])
        for feature, weight_axis in zip(contracting[activation], contracting[weights]):
            layouts.append(
                InputLayout(activation, feature, weights, weight_axis, 1, None, kept, result_dims)
            )
    return tuple(layouts)
