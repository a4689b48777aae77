// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file \
// RUN:   --report 2>&1 >/dev/null | FileCheck --check-prefix=LARGER %s

// With weights or a scale passed as arguments, a fold scales the weights in the graph, on
// every call: it moves the multiply from the activation onto the weights. Where the weights
// have more elements than the activation (batch 1, late layers, dense layers), that is a
// larger tensor, and the fold is refused unless `fold-larger-weight-arguments` asks for it.

// Keras' `y * inv + shift` with the kernel an argument: 3x3x2x3 = 54 weights, 1x4x4x3 = 48
// activations.
// CHECK-LABEL: func.func @no_fold_weights_larger_than_activation(
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %arg1)
// CHECK:         stablehlo.multiply %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_weights_larger_than_activation(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3x3x2x3xf32>, %inv: tensor<3xf32>, %shift: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_scale_into_linear]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %n = stablehlo.multiply %c, %i : tensor<1x4x4x3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The same layer at batch 2: 96 activations, more than the 54 weights; it folds.
// CHECK-LABEL: func.func @fold_activation_larger_than_weights(
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<3x3x2x3xf32>
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<2x4x4x3xf32>
func.func @fold_activation_larger_than_weights(%arg0: tensor<2x4x4x2xf32>, %arg1: tensor<3x3x2x3xf32>, %inv: tensor<3xf32>, %shift: tensor<3xf32>) -> tensor<2x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<2x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<2x4x4x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %n = stablehlo.multiply %c, %i : tensor<2x4x4x3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %y = stablehlo.add %n, %s : tensor<2x4x4x3xf32>
  return %y : tensor<2x4x4x3xf32>
}

// -----

// A symbolic batch counts as 1, the smallest it can be: 48 activations, 54 weights.
// CHECK-LABEL: func.func @no_fold_symbolic_batch_counted_as_one(
// CHECK:         stablehlo.multiply %{{.+}}, %{{.+}} : tensor<?x4x4x3xf32>
func.func @no_fold_symbolic_batch_counted_as_one(%arg0: tensor<?x4x4x2xf32>, %arg1: tensor<3x3x2x3xf32>, %inv: tensor<1x1x1x3xf32>) -> tensor<?x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<?x4x4x3xf32>
  %shape = shape.shape_of %c : tensor<?x4x4x3xf32> -> tensor<4xindex>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>, tensor<4xindex>) -> tensor<?x4x4x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_scale_into_linear]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %n = stablehlo.multiply %c, %i : tensor<?x4x4x3xf32>
  return %n : tensor<?x4x4x3xf32>
}

// -----

// Constant weights and a scale that is an argument: the product is computed on every call
// too (12 weights, 3 activations: a dense layer at batch 1).
// CHECK-LABEL: func.func @no_fold_constant_weights_argument_scale(
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.multiply %[[D]], %{{.+}} : tensor<1x3xf32>
func.func @no_fold_constant_weights_argument_scale(%arg0: tensor<1x4xf32>, %s: tensor<3xf32>) -> tensor<1x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_scale_into_linear]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_scale_into_linear]
  %y = stablehlo.multiply %d, %sb : tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// Constant weights and a constant scale fold exactly, in float64, whatever the sizes.
// CHECK-LABEL: func.func @fold_constant_weights_constant_scale(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[}}[1.000000e+00, 1.500000e+00, 2.000000e+00]
// CHECK:         stablehlo.dot_general %arg0, %[[W]]
// CHECK-NOT:     stablehlo.multiply
func.func @fold_constant_weights_constant_scale(%arg0: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %s = stablehlo.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_scale_into_linear]
  %y = stablehlo.multiply %d, %sb : tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// The input side: a LayerNorm's affine (arguments) before a dense layer whose 4x3 = 12
// weights are an argument, on a 2x4 = 8 activation.
// CHECK-LABEL: func.func @no_fold_input_side_weights_larger(
// CHECK:         %[[Y:.+]] = stablehlo.add
// CHECK:         stablehlo.dot_general %[[Y]], %arg3
func.func @no_fold_input_side_weights_larger(%arg0: tensor<2x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %gamma_b = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.add: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %arg3, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// The same at 4 tokens: 16 activations, 12 weights; it folds.
// CHECK-LABEL: func.func @fold_input_side_activation_larger(
// CHECK:         %[[W:.+]] = stablehlo.multiply %arg3, %{{.+}} : tensor<4x3xf32>
// CHECK:         stablehlo.dot_general %arg0, %[[W]]
func.func @fold_input_side_activation_larger(%arg0: tensor<4x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %gamma_b = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<4x4xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<4x4xf32>
  %d = stablehlo.dot_general %y, %arg3, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// Flax's `(L - mean) * c + offset` with the statistics and kernel arguments at batch 1:
// the scale is refused for its cost, and so is the mean's subtraction, which alone would
// only trade the subtract for an add of `0 - mean` computed on every call.
// CHECK-LABEL: func.func @no_fold_mean_alone_when_the_scale_is_refused(
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %arg1)
// CHECK:         stablehlo.subtract %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK-NOT:     stablehlo.subtract {{.+}} : tensor<3xf32>
func.func @no_fold_mean_alone_when_the_scale_is_refused(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.subtract: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_subtrahend_into_bias]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.subtract, stablehlo.multiply, stablehlo.add into stablehlo.convolution [fold_subtrahend_into_bias, fold_scale_into_linear, fold_shift_into_bias]
  %d = stablehlo.subtract %c, %mb : tensor<1x4x4x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %sb : tensor<1x4x4x3xf32>
  %ob = stablehlo.broadcast_in_dim %o, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %ob : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The same with a symbolic batch (counted as 1), the statistics broadcast to a shape built
// from the batch size, as jax.export writes it: the mean's subtraction stays too (it used
// to be folded alone into `add(L, dynamic_broadcast_in_dim(0 - mean))`, a fold that
// removed no op).
// CHECK-LABEL: func.func @no_fold_mean_alone_when_the_scale_is_refused_symbolic_batch(
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg1, %arg2)
// CHECK:         stablehlo.subtract %[[C]], %{{.+}} : tensor<?x4x4x3xf32>
// CHECK-NOT:     stablehlo.negate
func.func @no_fold_mean_alone_when_the_scale_is_refused_symbolic_batch(%b: tensor<i32>, %x: tensor<?x4x4x2xf32>, %w: tensor<3x3x2x3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<?x4x4x3xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<?x4x4x3xf32>
  %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
  %rest = stablehlo.constant dense<[4, 4, 3]> : tensor<3xi32>
  %shape = stablehlo.concatenate %b1, %rest, dim = 0 : (tensor<1xi32>, tensor<3xi32>) -> tensor<4xi32>
  %mb = stablehlo.dynamic_broadcast_in_dim %m, %shape, dims = [3] : (tensor<3xf32>, tensor<4xi32>) -> tensor<?x4x4x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.subtract: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_subtrahend_into_bias]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.subtract, stablehlo.multiply, stablehlo.add into stablehlo.convolution [fold_subtrahend_into_bias, fold_scale_into_linear, fold_shift_into_bias]
  %d = stablehlo.subtract %c, %mb : tensor<?x4x4x3xf32>
  %sb = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [3] : (tensor<3xf32>, tensor<4xi32>) -> tensor<?x4x4x3xf32>
  %n = stablehlo.multiply %d, %sb : tensor<?x4x4x3xf32>
  %ob = stablehlo.dynamic_broadcast_in_dim %o, %shape, dims = [3] : (tensor<3xf32>, tensor<4xi32>) -> tensor<?x4x4x3xf32>
  %y = stablehlo.add %n, %ob : tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}

// -----

// Flax's `(L - mean) * c + offset` in the graph where the activation is the larger (batch
// 2): the whole chain folds, its shift built as offset - mean * c (two ops on [3]
// vectors: no `0 - mean`, no negate), the scale broadcast onto the kernel once.
// CHECK-LABEL: func.func @fold_flax_chain_in_the_graph_builds_offset_minus_mean_times_scale(
// CHECK-NOT:     stablehlo.constant
// CHECK:         %[[P:.+]] = stablehlo.multiply %arg2, %arg3 : tensor<3xf32>
// CHECK-NOT:     stablehlo.negate
// CHECK:         stablehlo.convolution
// CHECK-NOT:     stablehlo.negate
// CHECK:         stablehlo.subtract %arg4, %[[P]] : tensor<3xf32>
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<2x4x4x3xf32>
func.func @fold_flax_chain_in_the_graph_builds_offset_minus_mean_times_scale(%x: tensor<2x4x4x2xf32>, %w: tensor<3x3x2x3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<2x4x4x3xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<2x4x4x3xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %d = stablehlo.subtract %c, %mb : tensor<2x4x4x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %n = stablehlo.multiply %d, %sb : tensor<2x4x4x3xf32>
  %ob = stablehlo.broadcast_in_dim %o, dims = [3] : (tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %y = stablehlo.add %n, %ob : tensor<2x4x4x3xf32>
  return %y : tensor<2x4x4x3xf32>
}

// -----

// A shift alone (its scale folded elsewhere) before a convolution whose kernel and bias
// are arguments: folded, its add and broadcast (2 ops) would become L(t, W) on every call,
// t laid over the kernel, a dot_general, and an add into the bias (3). It stays.
// CHECK-LABEL: func.func @no_fold_shift_alone_into_a_contraction_of_more_ops(
// CHECK:         %[[Y:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x8x8x3xf32>
// CHECK:         stablehlo.convolution(%[[Y]], %arg2)
// CHECK-NOT:     stablehlo.dot_general
func.func @no_fold_shift_alone_into_a_contraction_of_more_ops(%x: tensor<1x8x8x3xf32>, %t: tensor<3xf32>, %w: tensor<1x1x3x2xf32>, %bias: tensor<2xf32>) -> tensor<1x8x8x2xf32> {
  %tb = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<3xf32>) -> tensor<1x8x8x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.add: folding in the graph would build more ops than it removes: a shift alone contracted with the weights on every call [fold_input_affine_into_conv]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution [fold_input_affine_into_conv]
  %y = stablehlo.add %x, %tb : tensor<1x8x8x3xf32>
  %c = stablehlo.convolution(%y, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x8x8x2xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<2xf32>) -> tensor<1x8x8x2xf32>
  %o = stablehlo.add %c, %bb : tensor<1x8x8x2xf32>
  return %o : tensor<1x8x8x2xf32>
}

// -----

// The same before a Dense layer with its own bias add: L(t, W) is a dot_general and an add
// into that bias (2 ops for 2): it folds.
// CHECK-LABEL: func.func @fold_shift_alone_into_a_dense_layer_with_its_own_bias(
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %arg2
// CHECK-NOT:     stablehlo.add {{.+}} : tensor<16x2xf32>
func.func @fold_shift_alone_into_a_dense_layer_with_its_own_bias(%x: tensor<16x2xf32>, %t: tensor<2xf32>, %w: tensor<2x3xf32>, %bias: tensor<3xf32>) -> tensor<16x3xf32> {
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<2xf32>) -> tensor<16x2xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %x, %tb : tensor<16x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<16x2xf32>, tensor<2x3xf32>) -> tensor<16x3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<3xf32>) -> tensor<16x3xf32>
  %o = stablehlo.add %d, %bb : tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// A scale computed from constants in the graph (`exp` of a constant) with constant weights
// is computed once by a compiler: it folds whatever the sizes (12 weights, 3 activations).
// CHECK-LABEL: func.func @fold_scale_computed_from_constants(
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<1x3xf32>
func.func @fold_scale_computed_from_constants(%arg0: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %c = stablehlo.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %s = stablehlo.exponential %c : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_scale_into_linear]
  %y = stablehlo.multiply %d, %sb : tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// The input side with three consumers: each 4x4 kernel (an argument) has 16 elements, no
// more than the 20 of the activation, but the three scaled on every call have 48.
// CHECK-LABEL: func.func @no_fold_input_side_consumers_larger_in_all(
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0, %{{.+}} : tensor<5x4xf32>
// CHECK:         stablehlo.dot_general %[[Y]], %arg2
func.func @no_fold_input_side_consumers_larger_in_all(%x: tensor<5x4xf32>, %g: tensor<4xf32>, %wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<4xf32>) -> tensor<5x4xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %x, %gb : tensor<5x4xf32>
  %q = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<5x4xf32>, tensor<4x4xf32>) -> tensor<5x4xf32>
  %k = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<5x4xf32>, tensor<4x4xf32>) -> tensor<5x4xf32>
  %v = stablehlo.dot_general %y, %wv, contracting_dims = [1] x [0] : (tensor<5x4xf32>, tensor<4x4xf32>) -> tensor<5x4xf32>
  return %q, %k, %v : tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>
}

// -----

// The input side, a shift alone (an argument) before a dense layer with its own bias: the
// bias would become L(t, W) + b, a contraction of the 12 weights on every call, for a
// 4-element add.
// CHECK-LABEL: func.func @no_fold_input_side_shift_contracted_with_larger_weights(
// CHECK:         %[[Y:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4xf32>
// CHECK:         stablehlo.dot_general %[[Y]], %arg2
func.func @no_fold_input_side_shift_contracted_with_larger_weights(%x: tensor<1x4xf32>, %t: tensor<4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.add %x, %tb : tensor<1x4xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %z = stablehlo.add %d, %bb : tensor<1x3xf32>
  return %z : tensor<1x3xf32>
}

// -----

// LeViT's channels-first Linear_BN with weights and statistics as arguments: a fold
// through the transpose would scale the 48 weights in the graph on every call for a
// 6-element activation, which the cost rule refuses (with the option, it folds: a
// transpose passes values computed in the graph).
// CHECK-LABEL: func.func @no_fold_through_transpose_weights_larger(
// CHECK:         stablehlo.transpose
// CHECK:         stablehlo.multiply
func.func @no_fold_through_transpose_weights_larger(%x: tensor<1x2x16xf32>, %w: tensor<16x3xf32>, %s: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<1x3x2xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<1x2x16xf32>, tensor<16x3xf32>) -> tensor<1x2x3xf32>
  %p = stablehlo.transpose %d, dims = [0, 2, 1] : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<1x3x2xf32>
  %m = stablehlo.multiply %p, %sb : tensor<1x3x2xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<3xf32>) -> tensor<1x3x2xf32>
  // REPORT-DAG: weight_cost.mlir:[[# @LINE + 2]]:8: not folded stablehlo.add: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_scale_through_relu]
  // LARGER-DAG: weight_cost.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.transpose [fold_scale_through_relu]
  %y = stablehlo.add %m, %tb : tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}
