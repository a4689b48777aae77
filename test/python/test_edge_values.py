"""Values real models hold that the generated ones rarely draw.

- A dead output channel: a pruned convolution has an output feature whose kernel slice is
  all zeros. Behind zero padding, the input-side fold moves the shift in front of the
  convolution and checks that rounding K * s, magnified by t / s, errs by at most one
  rounding of sum |K * t| per output feature. For the dead feature both sides are 0, which
  is no error: the fold must still happen (a mutant that refused it, `>=` for `>`, survived
  every other test).
"""

from __future__ import annotations

import numpy as np

from helpers import fold_and_compare

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
