// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck %s

// Every per-channel chain left in the module gets one report line (patterns/left.py):
// a chain with no linear op on either side is no pattern's candidate, so the pass names
// it at its outermost op, with what it reads and what reads it. Positive cases (a line)
// first, then the ops that are no chain (no line).

// A batch norm as Keras writes it, y * inv + (beta - mean * inv), before a tanh and a
// convolution: no scale passes a tanh (a relu, max-pool or pad it would: input_side.mlir).
func.func @batch_norm_before_tanh(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // CHECK-DAG: left.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: no convolution or dot_general next to the chain (reads an argument, read by stablehlo.tanh) [stablehlo-fold-batch-norm]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %r = stablehlo.tanh %y : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<3x3x2x3xf32>
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A per-channel scale on a function argument that is returned; its parameter is an
// argument too (weights as arguments).
func.func @scale_on_an_argument(%arg0: tensor<1x4x4x2xf32>, %gamma: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %g = stablehlo.broadcast_in_dim %gamma, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // CHECK-DAG: left.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: no convolution or dot_general next to the chain (reads an argument, read by func.return) [stablehlo-fold-batch-norm]
  %y = stablehlo.multiply %arg0, %g : tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// Keras's LayerNormalization as TensorFlow lowers it: inv = rsqrt(var + eps) * gamma, the
// per-token factor times the per-channel scale, then x * inv + (beta - mean * inv) before
// a Dense. The chain is gamma's multiply on the factor: a Dense follows the norm, but not
// the chain.
func.func @layer_norm_gamma_inside_the_per_token_factor(%arg0: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<8.0> : tensor<4xf32>
  %eps = stablehlo.constant dense<1.0e-3> : tensor<4xf32>
  %sum = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %mean = stablehlo.divide %sum, %n : tensor<4xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = stablehlo.subtract %arg0, %mean_b : tensor<4x8xf32>
  %sq = stablehlo.multiply %d, %d : tensor<4x8xf32>
  %ssq = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %var = stablehlo.divide %ssq, %n : tensor<4xf32>
  %ve = stablehlo.add %var, %eps : tensor<4xf32>
  %r = stablehlo.rsqrt %ve : tensor<4xf32>
  %r_b = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %gamma = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0, 0.25, 2.0, -1.0, 0.75]> : tensor<8xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-DAG: left.mlir:[[# @LINE + 1]]:10: not folded stablehlo.multiply: the per-channel value multiplies a per-token value (a norm's statistic), not an activation a linear op reads [stablehlo-fold-batch-norm]
  %inv = stablehlo.multiply %r_b, %gamma_b : tensor<4x8xf32>
  %xi = stablehlo.multiply %arg0, %inv : tensor<4x8xf32>
  %mi = stablehlo.multiply %mean_b, %inv : tensor<4x8xf32>
  %beta = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0, 0.0, -0.5, 0.25, 0.75]> : tensor<8xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %shift = stablehlo.subtract %beta_b, %mi : tensor<4x8xf32>
  %y = stablehlo.add %xi, %shift : tensor<4x8xf32>
  %w = stablehlo.constant dense<0.5> : tensor<8x3xf32>
  %o = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}

// -----

// A per-channel scale on a constant broadcast from fewer elements (a positional map, not a
// statistic of the data): no linear op next to it.
func.func @scale_on_a_broadcast_constant(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = stablehlo.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %p_b = stablehlo.broadcast_in_dim %p, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %gamma = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0, 0.25, 2.0, -1.0, 0.75]> : tensor<8xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-DAG: left.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: no convolution or dot_general next to the chain (reads stablehlo.broadcast_in_dim, read by stablehlo.add) [stablehlo-fold-batch-norm]
  %y = stablehlo.multiply %p_b, %gamma_b : tensor<4x8xf32>
  %o = stablehlo.add %y, %arg0 : tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Not chains left (no line of their own; the totals below count every line): a scalar
// (folded here), a bias add after a convolution (the canonical form), a squeeze-excite
// gate (its pattern's line says it is data), and the per-channel values' own arithmetic
// (var + eps on 1x1x1xC).
func.func @not_chains(%arg0: tensor<1x4x4x2xf32>, %var: tensor<1x1x1x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) {
  %half = stablehlo.constant dense<0.5> : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x2xf32>
  %b = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %h = stablehlo.multiply %arg0, %half : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%h, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %cb = stablehlo.add %c, %bb : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %gate = stablehlo.logistic %sum : tensor<1x2xf32>
  %gb = stablehlo.broadcast_in_dim %gate, dims = [0, 3] : (tensor<1x2xf32>) -> tensor<1x4x4x2xf32>
  // CHECK-DAG: left.mlir:[[# @LINE + 1]]:12: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %gated = stablehlo.multiply %cb, %gb : tensor<1x4x4x2xf32>
  %eps = stablehlo.constant dense<[1.0e-3, 2.0e-3]> : tensor<2xf32>
  %e = stablehlo.reshape %eps : (tensor<2xf32>) -> tensor<1x1x1x2xf32>
  %ve = stablehlo.add %var, %e : tensor<1x1x1x2xf32>
  return %gated, %cb, %ve : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>
}

// CHECK: 5 norms: 1 folded whole, 0 folded partly, 4 left (1 op folded); 1 activation-sized op removed
