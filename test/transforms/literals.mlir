// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --debug 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEBUG %s

// fold/literals.py: after the patterns, each linear op's operands and the value its bias
// add broadcasts, when computed from constants alone, become one constant each (float64,
// rounded once), so that every linear op reads L(x, W') + broadcast_in_dim(b'). Nothing
// is reported (the REPORT run sees no fold and no skip); the DEBUG lines are the log, one
// per value: what was evaluated, or why not. Positive cases first, then one negative case
// per reason.

// Keras's batch-norm bias, beta - mean * rsqrt(var + eps) * gamma on 1x1x1xC reshapes
// (what is left after its scale folded into the kernel), becomes one constant of its
// shape; the epsilon broadcast goes with it.
// CHECK-LABEL: func.func @literal_computed_bias
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xf32>
// CHECK-DAG:     %[[B:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x1x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [0, 1, 2, 3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:     stablehlo.rsqrt
func.func @literal_computed_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %eps = stablehlo.constant dense<1.0> : tensor<f32>
  %mean = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %var = stablehlo.constant dense<[3.0, 0.0, 15.0]> : tensor<3xf32>
  %gamma = stablehlo.constant dense<[2.0, 2.0, 4.0]> : tensor<3xf32>
  %beta = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf32>
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %m = stablehlo.reshape %mean : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %v = stablehlo.reshape %var : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %e = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<1x1x1x3xf32>
  %ve = stablehlo.add %v, %e : tensor<1x1x1x3xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x1x1x3xf32>
  %g = stablehlo.reshape %gamma : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %inv = stablehlo.multiply %r, %g : tensor<1x1x1x3xf32>
  %n = stablehlo.negate %m : tensor<1x1x1x3xf32>
  %nm = stablehlo.multiply %n, %inv : tensor<1x1x1x3xf32>
  %be = stablehlo.reshape %beta : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %bias = stablehlo.add %nm, %be : tensor<1x1x1x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Two biases that read one epsilon: each is evaluated, the scalar stays until the last.
// CHECK-LABEL: func.func @literal_biases_sharing_a_scalar
// CHECK-NOT:     stablehlo.sqrt
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     tensor<f32>
// CHECK:         return
func.func @literal_biases_sharing_a_scalar(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %eps = stablehlo.constant dense<1.0> : tensor<f32>
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %b1 = stablehlo.constant dense<[3.0, 8.0, 15.0]> : tensor<3xf32>
  %b2 = stablehlo.constant dense<[0.0, 3.0, 24.0]> : tensor<3xf32>
  %e1 = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %s1 = stablehlo.add %b1, %e1 : tensor<3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %q1 = stablehlo.sqrt %s1 : tensor<3xf32>
  %e2 = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %q2 = stablehlo.divide %b2, %e2 : tensor<3xf32>
  %d1 = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %x1 = stablehlo.broadcast_in_dim %q1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y1 = stablehlo.add %d1, %x1 : tensor<2x3xf32>
  %d2 = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %x2 = stablehlo.broadcast_in_dim %q2, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y2 = stablehlo.add %x2, %d2 : tensor<2x3xf32>
  return %y1, %y2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A plain Keras bias, broadcast_in_dim(reshape(b)): the reshape of a constant is a
// constant of the new shape (one op fewer).
// CHECK-LABEL: func.func @literal_reshaped_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[{{\[\[\[}}2.500000e-01, -5.000000e-01, 1.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [0, 1, 2, 3]
// CHECK:         stablehlo.add %[[C]], %[[S]]
// CHECK-NOT:     stablehlo.reshape
func.func @literal_reshaped_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %r = stablehlo.reshape %bias : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// With a symbolic batch the bias is broadcast by a dynamic_broadcast_in_dim (Flax's
// Dense bias, reshape(b) to 1xC): the value it broadcasts becomes one constant.
// CHECK-LABEL: func.func @literal_bias_under_a_dynamic_broadcast
// CHECK:         %[[D:.+]] = stablehlo.dot_general
// CHECK:         %[[B:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x3xf32>
// CHECK:         %[[S:.+]] = stablehlo.dynamic_broadcast_in_dim %[[B]]
// CHECK:         stablehlo.add %[[D]], %[[S]]
// CHECK-NOT:     stablehlo.reshape
func.func @literal_bias_under_a_dynamic_broadcast(%arg0: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %r = stablehlo.reshape %bias : (tensor<3xf32>) -> tensor<1x3xf32>
  %s = shape.shape_of %d : tensor<?x3xf32> -> tensor<2xindex>
  %b = stablehlo.dynamic_broadcast_in_dim %r, %s, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  %y = stablehlo.add %d, %b : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// A depthwise kernel a fold scaled in the graph, reshape(K) * broadcast_in_dim(s) (Keras
// stores it HWC1 and reshapes it to HW1C), becomes one HW1C constant.
// CHECK-LABEL: func.func @literal_depthwise_scaled_kernel
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x2x1x3xf32>
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.reshape
func.func @literal_depthwise_scaled_kernel(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x4x3x3xf32> {
  %w = stablehlo.constant dense<[[[[0.5], [-1.0], [2.0]], [[1.5], [0.25], [-0.75]]]]> : tensor<1x2x3x1xf32>
  %s = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %r = stablehlo.reshape %w : (tensor<1x2x3x1xf32>) -> tensor<1x2x1x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x2x1x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %k = stablehlo.multiply %r, %sb : tensor<1x2x1x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<1x2x1x3xf32>) -> tensor<1x4x3x3xf32>
  return %c : tensor<1x4x3x3xf32>
}

// -----

// torch-mlir's nn.Linear, dot_general(x, transpose(W)) + broadcast_in_dim(alpha * bias),
// alpha an integer constant converted: both become one constant each.
// CHECK-LABEL: func.func @literal_transposed_weights_and_scaled_bias
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[2.500000e-01, -5.000000e-01, 1.000000e+00]> : tensor<3xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1]
// CHECK:         stablehlo.add %[[D]], %[[S]]
// CHECK-NOT:     stablehlo.transpose
// CHECK-NOT:     stablehlo.convert
func.func @literal_transposed_weights_and_scaled_bias(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[-0.375, 0.25, -0.375, 0.25], [0.625, -0.125, -0.875, 0.25], [-0.25, 0.5, -0.375, 1.0]]> : tensor<3x4xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %one = stablehlo.constant dense<1> : tensor<1xi64>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %t, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %af = stablehlo.convert %one : (tensor<1xi64>) -> tensor<1xf32>
  %a = stablehlo.reshape %af : (tensor<1xf32>) -> tensor<f32>
  %ab = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %bs = stablehlo.multiply %ab, %bias : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bs, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = stablehlo.add %d, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Mixed precision: a bf16 layer reads its f32 master weights through a convert. The
// convert is the rounding the original makes: the weights become one bf16 constant.
// CHECK-LABEL: func.func @literal_converted_weights
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xbf16>
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.convert
// CHECK-NOT:     f32>
func.func @literal_converted_weights(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, 0.1]]]]> : tensor<1x1x2x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  return %c : tensor<1x4x4x3xbf16>
}

// -----

// A splat kernel reshaped stays a splat: no element of it is written out.
// CHECK-LABEL: func.func @literal_reshaped_splat_kernel
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<1.250000e+00> : tensor<4x3xf32>
// CHECK:         stablehlo.dot_general %arg0, %[[K]]
// CHECK-NOT:     stablehlo.reshape
func.func @literal_reshaped_splat_kernel(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<12xf32>
  %s = stablehlo.constant dense<2.5> : tensor<f32>
  %r = stablehlo.reshape %w : (tensor<12xf32>) -> tensor<4x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %k = stablehlo.multiply %r, %sb : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// the value reads a function or region argument: weights passed in stay computed in the
// graph.
// CHECK-LABEL: func.func @no_literal_reads_argument
// CHECK:         %[[T:.+]] = stablehlo.transpose %arg1
// CHECK:         stablehlo.dot_general %arg0, %[[T]]
func.func @no_literal_reads_argument(%arg0: tensor<2x4xf32>, %arg1: tensor<3x4xf32>) -> tensor<2x3xf32> {
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: the value reads a function or region argument [literals]
  %t = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %t, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// A weight-normalized kernel, g * v / sqrt(sum(v * v)) over the input dimensions (a
// `reduce`), becomes one constant; so does a maximum.
// CHECK-LABEL: func.func @literal_weight_normalized_kernel
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NEXT:    return %[[C]]
func.func @literal_weight_normalized_kernel(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %v = stablehlo.constant dense<[[[[1.0, -2.0, 0.5], [3.0, 1.0, -0.5]]]]> : tensor<1x1x2x3xf32>
  %g = stablehlo.constant dense<[2.0, 0.5, 1.0]> : tensor<3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %eps = stablehlo.constant dense<1.0e-6> : tensor<3xf32>
  %sq = stablehlo.multiply %v, %v : tensor<1x1x2x3xf32>
  %sum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %norm = stablehlo.sqrt %sum : tensor<3xf32>
  %safe = stablehlo.maximum %norm, %eps : tensor<3xf32>
  %f = stablehlo.divide %g, %safe : tensor<3xf32>
  %fb = stablehlo.broadcast_in_dim %f, dims = [3] : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %k = stablehlo.multiply %v, %fb : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A weight computed as a product of weights, contracting the lhs's dimension 0 with the
// rhs's: evaluated as the float64 dot_general, result dims lhs free then rhs free.
// CHECK-LABEL: func.func @literal_dot_general_weights
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[}}[1.000000e+00, 4.000000e+00, 3.000000e+00, -2.000000e+00], [2.000000e+00, 5.000000e+00, 3.000000e+00, -1.000000e+00], [3.000000e+00, 6.000000e+00, 3.000000e+00, 0.000000e+00]]> : tensor<3x4xf32>
// CHECK-NEXT:    %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK-NEXT:    return %[[D]]
func.func @literal_dot_general_weights(%arg0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = stablehlo.constant dense<[[1.0, 0.0, -1.0, 2.0], [0.0, 1.0, 1.0, -1.0]]> : tensor<2x4xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %w = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}

// -----

// An input normalization folded into a convolution leaves W * s and the bias b + L(t, W),
// a dot_general that reads W too: each alone shares W with the other, so both are
// evaluated together, and W goes with them.
// CHECK-LABEL: func.func @literal_weights_and_bias_sharing_the_kernel
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}5.000000e-01, -1.000000e+00, 2.500000e-01], [6.000000e+00, 2.000000e+00, -1.000000e+00]]]]> : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[-2.500000e-01, 2.250000e+00, -6.250000e-01]> : tensor<3xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:     stablehlo.dot_general
func.func @literal_weights_and_bias_sharing_the_kernel(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = stablehlo.constant dense<[[[[1.0, -2.0, 0.5], [3.0, 1.0, -0.5]]]]> : tensor<1x1x2x3xf32>
  %s = stablehlo.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %t = stablehlo.constant dense<[-1.0, 0.25]> : tensor<2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [2] : (tensor<2xf32>) -> tensor<1x1x2x3xf32>
  %k = stablehlo.multiply %w, %sb : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [2] : (tensor<2xf32>) -> tensor<1x1x2xf32>
  %lt = stablehlo.dot_general %tb, %w, contracting_dims = [0, 1, 2] x [0, 1, 2] : (tensor<1x1x2xf32>, tensor<1x1x2x3xf32>) -> tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %lt, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %c, %bb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A bias the add reads without a broadcast (a position embedding scaled by constants,
// which varies along H and W: no per-channel bias) is evaluated too.
// CHECK-LABEL: func.func @literal_bias_added_without_a_broadcast
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[P:.+]] = stablehlo.constant dense<{{\[\[\[\[}}0.000000e+00, 5.000000e-01], [1.000000e+00, 1.500000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[P]]
// CHECK-NEXT:    return %[[Y]]
func.func @literal_bias_added_without_a_broadcast(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = stablehlo.constant dense<[[[[0.0, 1.0], [2.0, 3.0]]]]> : tensor<1x1x2x2xf32>
  %s = stablehlo.constant dense<0.5> : tensor<1x1x2x2xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %ps = stablehlo.multiply %p, %s : tensor<1x1x2x2xf32>
  %y = stablehlo.add %c, %ps : tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// The bias add of a dot_general whose result is reshaped first: its bias is evaluated.
// CHECK-LABEL: func.func @literal_bias_after_a_reshape_of_the_linear_result
// CHECK:         %[[R:.+]] = stablehlo.reshape
// CHECK:         %[[B:.+]] = stablehlo.constant dense<2.000000e+00> : tensor<2xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [2]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
func.func @literal_bias_after_a_reshape_of_the_linear_result(%arg0: tensor<2x4xf32>) -> tensor<2x2x2xf32> {
  %w = stablehlo.constant dense<1.0> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %r = stablehlo.reshape %d : (tensor<2x4xf32>) -> tensor<2x2x2xf32>
  %b = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %two = stablehlo.constant dense<2.0> : tensor<2xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): evaluated into one constant [literals]
  %bb = stablehlo.multiply %b, %two : tensor<2xf32>
  %bc = stablehlo.broadcast_in_dim %bb, dims = [2] : (tensor<2xf32>) -> tensor<2x2x2xf32>
  %y = stablehlo.add %r, %bc : tensor<2x2x2xf32>
  return %y : tensor<2x2x2xf32>
}

// -----

// the value is computed by an op that is not evaluated on constants (an exponential).
// CHECK-LABEL: func.func @no_literal_op_not_evaluated
// CHECK:         %[[E:.+]] = stablehlo.exponential
// CHECK:         stablehlo.dot_general %arg0, %[[E]]
func.func @no_literal_op_not_evaluated(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: the value is computed by an op that is not evaluated on constants [literals]
  %e = stablehlo.exponential %w : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %e, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// an op on the way has a dynamic shape, or an element type other than f16, bf16, f32 or
// f64: an integer add (it wraps; float64 would not).
// CHECK-LABEL: func.func @no_literal_integer_arithmetic
// CHECK:         stablehlo.add {{.+}} : tensor<3xi32>
func.func @no_literal_integer_arithmetic(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %i = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %ii = stablehlo.add %i, %i : tensor<3xi32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: an op on the way has a dynamic shape, or an element type other than f16, bf16, f32 or f64 [literals]
  %f = stablehlo.convert %ii : (tensor<3xi32>) -> tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %b = stablehlo.broadcast_in_dim %f, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = stablehlo.add %d, %b : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// a constant on the way holds neither f16, bf16, f32 or f64 values nor integers exact in
// float64: 2^60 + 2^36 + 1 read as float64 (2^60) and then rounded to f32 would give 2^60,
// not the 2^60 + 2^37 the convert gives.
// CHECK-LABEL: func.func @no_literal_inexact_integers
// CHECK:         stablehlo.convert {{.+}} : (tensor<1xi64>) -> tensor<1xf32>
func.func @no_literal_inexact_integers(%arg0: tensor<2x1xf32>) -> tensor<2x1xf32> {
  %i = stablehlo.constant dense<1152921573326323713> : tensor<1xi64>
  %f = stablehlo.convert %i : (tensor<1xi64>) -> tensor<1xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: a constant on the way holds neither f16, bf16, f32 or f64 values nor integers exact in float64 [literals]
  %w = stablehlo.reshape %f : (tensor<1xf32>) -> tensor<1x1xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  return %d : tensor<2x1xf32>
}

// -----

// a constant or op the value is computed from has another reader: the kernel is also
// read by a second layer, so the constant bytes would grow.
// CHECK-LABEL: func.func @no_literal_kernel_with_another_user
// CHECK:         %[[R:.+]] = stablehlo.reshape
// CHECK:         stablehlo.convolution(%arg0, %[[R]])
// CHECK:         stablehlo.dot_general
func.func @no_literal_kernel_with_another_user(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x6xf32>) -> (tensor<1x4x4x3xf32>, tensor<2x1xf32>) {
  %w = stablehlo.constant dense<[0.5, -1.0, 2.0, 1.5, 0.25, -0.75]> : tensor<6xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: a constant or op the value is computed from has another reader: its bytes would stay [literals]
  %k = stablehlo.reshape %w : (tensor<6xf32>) -> tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %v = stablehlo.reshape %w : (tensor<6xf32>) -> tensor<6x1xf32>
  %d = stablehlo.dot_general %arg1, %v, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x1xf32>) -> tensor<2x1xf32>
  return %c, %d : tensor<1x4x4x3xf32>, tensor<2x1xf32>
}

// -----

// the value is not finite in its element type: 1e5 overflows f16.
// CHECK-LABEL: func.func @no_literal_not_finite
// CHECK:         stablehlo.convert {{.+}} -> tensor<1x1x2x3xf16>
func.func @no_literal_not_finite(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, 1.0e5]]]]> : tensor<1x1x2x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: the value is not finite in its element type [literals]
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<1x1x2x3xf16>) -> tensor<1x4x4x3xf16>
  return %c : tensor<1x4x4x3xf16>
}

// -----

// the new constant would be larger than the constants it replaces: a per-channel vector
// broadcast to the whole kernel.
// CHECK-LABEL: func.func @no_literal_larger
// CHECK:         %[[K:.+]] = stablehlo.broadcast_in_dim
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
func.func @no_literal_larger(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = stablehlo.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: the new constant would be larger than the constants it replaces [literals]
  %k = stablehlo.broadcast_in_dim %w, dims = [3] : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A weight computed as an outer product of two vectors: its 16 elements are more than the
// 8 it is computed from, so the dot_general stays.
// CHECK-LABEL: func.func @no_literal_larger_dot_general
// CHECK:         %[[W:.+]] = stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims = [] x []
// CHECK:         stablehlo.dot_general %arg0, %[[W]]
func.func @no_literal_larger_dot_general(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %u = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %v = stablehlo.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:{{[0-9]+}}): not evaluated: the new constant would be larger than the constants it replaces [literals]
  %w = stablehlo.dot_general %u, %v, contracting_dims = [] x [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}

// Nothing above is a fold or a skip.
// REPORT-NOT: folded stablehlo
// REPORT-NOT: not folded
// REPORT:     0 norms: 0 folded whole, 0 folded partly, 0 left (0 ops folded); 0 activation-sized ops removed
