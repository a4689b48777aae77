"""Input-side folds on modules that once miscompiled or crashed the pass, each folded and
run through XLA on the CPU against the original (`fold_and_compare`)."""

from __future__ import annotations

import pytest
from helpers import fold_and_compare

_AFFINE = """
  %s = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %t = stablehlo.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<4xf32>) -> tensor<{n}x4xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<{n}x4xf32>
  %m = stablehlo.multiply %x, %sb : tensor<{n}x4xf32>
  %y = stablehlo.add %m, %tb : tensor<{n}x4xf32>
"""
_W1 = "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, -1.0]]> : tensor<4x3xf32>"
_W2 = "dense<[[2.0, 1.0, 0.5], [-1.0, 3.0, 2.0], [0.0, 1.0, 1.0], [2.0, 2.0, -2.0]]> : tensor<4x3xf32>"

# At batch 1 a linear op's result [1, 3] looks like a bias [1, N] to `own_bias`: the sum
# of two consumers made each the other's bias (the process crashed), and a result
# defined after the consumer was read before it (operand does not dominate its use).
TWO_CONSUMERS_ADDED = f"""
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {{{_AFFINE.format(n=1)}
  %w1 = stablehlo.constant {_W1}
  %w2 = stablehlo.constant {_W2}
  %a = stablehlo.dot_general %y, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %b = stablehlo.dot_general %y, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %o = stablehlo.add %a, %b : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}}
"""

LATER_LINEAR_ADDED = f"""
func.func @main(%x: tensor<1x4xf32>, %z: tensor<1x4xf32>) -> tensor<1x3xf32> {{{_AFFINE.format(n=1)}
  %w1 = stablehlo.constant {_W1}
  %w2 = stablehlo.constant {_W2}
  %a = stablehlo.dot_general %y, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %r = stablehlo.tanh %z : tensor<1x4xf32>
  %b = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %o = stablehlo.add %a, %b : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}}
"""

# The consumer's own bias, an argument converted after the consumer: the merged bias was
# built before the consumer, reading the convert before it is defined.
BIAS_CONVERTED_AFTER = f"""
func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xbf16>) -> tensor<2x3xf32> {{{_AFFINE.format(n=2)}
  %a = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bc = stablehlo.convert %bias : (tensor<3xbf16>) -> tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bc, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %o = stablehlo.add %a, %bb : tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}}
"""

# Weights with no free dimension (x[T, C] . w[C]): the folded bias, a sum over every
# axis, was a numpy scalar and crashed the bias add.
VECTOR_WEIGHTS = f"""
func.func @main(%x: tensor<3x4xf32>) -> tensor<3xf32> {{{_AFFINE.format(n=3)}
  %w = stablehlo.constant dense<[1.0, -2.0, 0.5, 3.0]> : tensor<4xf32>
  %a = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %a : tensor<3xf32>
}}
"""

# x[T, C] * broadcast_in_dim(reshape(z[1, C] -> [C]), dims = [0]): the factor varies along
# T, not along the contracted C. Asked for a single element past the broadcast, the
# in-graph source analysis went through the reshape to z's C and folded z into W along C
# (relative error 1.86).
PER_TOKEN_THROUGH_RESHAPE = """
func.func @main(%x: tensor<4x4xf32>, %z: tensor<1x4xf32>, %w: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = stablehlo.reshape %z : (tensor<1x4xf32>) -> tensor<4xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x4xf32>
  %y = stablehlo.multiply %x, %rb : tensor<4x4xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}
"""


@pytest.mark.parametrize(
    "text, folds",
    [
        (TWO_CONSUMERS_ADDED, 1),
        (LATER_LINEAR_ADDED, 2),
        (BIAS_CONVERTED_AFTER, 1),
        (VECTOR_WEIGHTS, 1),
        (PER_TOKEN_THROUGH_RESHAPE, 0),
    ],
    ids=[
        "two_consumers_added",
        "later_linear_added",
        "bias_converted_after",
        "vector_weights",
        "per_token_through_reshape",
    ],
)
def test_folded_module_computes_what_the_original_computes(text, folds):
    fold_and_compare(text, seed=0, batch_norms_left=0, folds=folds)
