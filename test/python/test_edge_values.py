"""Values real models hold that the generated ones rarely draw.

- A dead output channel: a pruned convolution has an output feature whose kernel slice is
  all zeros. Behind zero padding, the input-side fold moves the shift in front of the
  convolution and checks that rounding K * s, magnified by t / s, errs by at most one
  rounding of sum |K * t| per output feature. For the dead feature both sides are 0, which
  is no error: the fold must still happen (a mutant that refused it, `>=` for `>`, survived
  every other test).
- A per-channel argument of another shape (2x3 reshaped to six features) folds in the
  graph (a mutant of `analysis.per_channel._source` that refused it survived).
"""

from __future__ import annotations

import numpy as np

import stablehlo_bnfold
from helpers import assert_close, fold_and_compare, random_inputs, run_on_cpu

SHIFT_KEPT = "convolution pads or dilates its input: the shift cannot pass its zeros"


def _dense(values: np.ndarray) -> str:
    shape = "x".join(map(str, values.shape))
    return f'dense<"0x{values.astype("<f4").tobytes().hex().upper()}"> : tensor<{shape}xf32>'


def _padded_conv_after_batch_norm(kernel: np.ndarray) -> str:
    vector = "tensor<3xf32>"
    stats = {
        "scale": [1.25, 0.75, 2.0],
        "offset": [0.1, -0.2, 0.3],
        "mean": [0.05, -0.1, 0.2],
        "var": [0.9, 1.6, 0.4],
    }
    lines = [f"  %{name} = stablehlo.constant dense<{values}> : {vector}" for name, values in stats.items()]
    return "\n".join([
        "func.func @main(%x: tensor<1x6x6x3xf32>) -> tensor<1x6x6x4xf32> {",
        *lines,
        '  %bn = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %var) '
        "{epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : "
        f"(tensor<1x6x6x3xf32>, {vector}, {vector}, {vector}, {vector}) -> tensor<1x6x6x3xf32>",
        f"  %k = stablehlo.constant {_dense(kernel)}",
        "  %y = stablehlo.convolution(%bn, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        "window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
        ": (tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>",
        "  return %y : tensor<1x6x6x4xf32>",
        "}",
        "",
    ])


def test_a_dead_output_channel_behind_padding_still_lets_the_scale_fold():
    kernel = np.random.default_rng(0).standard_normal((3, 3, 3, 4)).astype(np.float32)
    kernel[..., 2] = 0  # output feature 2 is pruned
    compared = fold_and_compare(_padded_conv_after_batch_norm(kernel), seed=1, batch_norms_left=0)
    assert [f.pattern for f in compared.report.folds] == ["fold_input_affine_into_conv"]
    assert [s.reason for s in compared.report.skips] == [SHIFT_KEPT]


# A per-channel factor passed as an argument of another shape (2x3, reshaped to the six
# output features): weights as arguments fold in the graph, reading the factor from the
# reshape's result when its operand has more than one non-unit dimension.
ARGUMENT_RESHAPED = """\
func.func @main(%x: tensor<1x5x5x2xf32>, %s: tensor<2x3xf32>) -> tensor<1x4x4x6xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x2x2x6xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<2x2x2x6xf32>) -> tensor<1x4x4x6xf32>
  %r = stablehlo.reshape %s : (tensor<2x3xf32>) -> tensor<1x1x1x6xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2, 3] : (tensor<1x1x1x6xf32>) -> tensor<1x4x4x6xf32>
  %y = stablehlo.multiply %c, %b : tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}
"""


def test_a_factor_argument_reshaped_from_two_dimensions_folds_in_the_graph():
    folded, report = stablehlo_bnfold.fold_batch_norm(ARGUMENT_RESHAPED, with_report=True)
    assert [f.pattern for f in report.folds] == ["fold_scale_into_linear"], report
    inputs = random_inputs(ARGUMENT_RESHAPED, seed=2)
    (expected,), (actual,) = run_on_cpu(ARGUMENT_RESHAPED, inputs), run_on_cpu(folded, inputs)
    assert_close(expected, actual)
