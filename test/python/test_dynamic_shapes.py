"""Dynamic dimensions: a fold whose bias needs the runtime shape, and a feature dimension that
is dynamic, which no per-feature fold can handle.

Both came from surviving mutants (docs/dev/reliability.md, "Mutation testing"): no test built a
bias broadcast whose shape had to be read with `get_dimension_size` (the last resort in
`FoldRewriter.broadcast`), and no test had an input-side chain along a dynamic dimension.
Dynamic modules do not run through XLA here as they are; `static` pins `?` to a size, which
keeps both modules valid, so that they can be compared.
"""

from __future__ import annotations

import stablehlo_bnfold
from helpers import random_inputs, relative_error, run_on_cpu

WEIGHTS = (
    "dense<[[0.5, -1.25, 0.75], [1.5, 0.25, -0.5], [-0.75, 1.0, 0.375], [0.625, -0.5, 1.25]]> "
    ": tensor<4x3xf32>"
)

# (x . W + b) * -c on a dynamic batch; the factor reaches the multiply through a negate, so
# the bias broadcast finds no dynamic_broadcast_in_dim to copy its shape from.
DYNAMIC_BATCH = f"""\
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {{
  %w = stablehlo.constant {WEIGHTS}
  %mm = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %d0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %d0r = stablehlo.reshape %d0 : (tensor<i32>) -> tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %shape = stablehlo.concatenate %d0r, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %b = stablehlo.constant dense<[0.25, -0.5, 0.125]> : tensor<3xf32>
  %bb = stablehlo.dynamic_broadcast_in_dim %b, %shape, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %biased = stablehlo.add %mm, %bb : tensor<?x3xf32>
  %c = stablehlo.constant dense<[2.0, -3.0, 0.5]> : tensor<3xf32>
  %cc = stablehlo.dynamic_broadcast_in_dim %c, %shape, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %cn = stablehlo.negate %cc : tensor<?x3xf32>
  %out = stablehlo.multiply %biased, %cn : tensor<?x3xf32>
  return %out : tensor<?x3xf32>
}}
"""

# x * c before x . W, along a dynamic contracting dimension.
DYNAMIC_FEATURE = f"""\
func.func @main(%x: tensor<2x?xf32>) -> tensor<2x3xf32> {{
  %d1 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x?xf32>) -> tensor<i32>
  %d1r = stablehlo.reshape %d1 : (tensor<i32>) -> tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %shape = stablehlo.concatenate %c2, %d1r, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %c = stablehlo.constant dense<[2.0, -3.0, 0.5, 4.0]> : tensor<4xf32>
  %cc = stablehlo.dynamic_broadcast_in_dim %c, %shape, dims = [1] : (tensor<4xf32>, tensor<2xi32>) -> tensor<2x?xf32>
  %a = stablehlo.multiply %x, %cc : tensor<2x?xf32>
  %w = stablehlo.constant {WEIGHTS}
  %mm = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<2x?xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %mm : tensor<2x3xf32>
}}
"""


def static(text: str, size: int) -> str:
    """`text` with every dynamic dimension of size `size` (no other `?` in these modules)."""
    return text.replace("?", str(size))


def test_a_fold_on_a_dynamic_batch_reads_the_bias_shape_at_run_time_and_computes_the_same():
    folded, report = stablehlo_bnfold.fold_batch_norm(DYNAMIC_BATCH, with_report=True)
    assert [f.pattern for f in report.folds] == ["fold_scale_into_linear"], report
    assert "stablehlo.multiply" not in folded
    # The bias is broadcast to a shape built from the new dense layer's dynamic size (the
    # input's own read aside, one more) and its static one, a constant: no size is read
    # where the type already says it.
    assert folded.count("stablehlo.get_dimension_size") == 2
    assert "dim = 1" not in folded
    assert folded.count("stablehlo.dynamic_broadcast_in_dim") == 2
    for size in (1, 5):
        original, rewritten = static(DYNAMIC_BATCH, size), static(folded, size)
        inputs = random_inputs(original, seed=size)
        (expected,), (actual,) = run_on_cpu(original, inputs), run_on_cpu(rewritten, inputs)
        assert relative_error(expected, actual) <= 1e-6


def test_an_affine_map_along_a_dynamic_feature_dimension_is_left_alone():
    # Its size is unknown: there is no per-feature vector to fold. (Read as a size, the
    # dynamic marker is a huge negative number; a pattern error raises FoldError here.)
    folded, report = stablehlo_bnfold.fold_batch_norm(DYNAMIC_FEATURE, with_report=True)
    assert report.folded == 0 and not report.skips, report
    assert "stablehlo.multiply" in folded
