// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file \
// RUN:   --report 2>&1 >/dev/null | FileCheck --check-prefix=CONST %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --debug 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEBUG %s

// patterns/bias.py: fold_shift_into_bias, fold_subtrahend_into_bias,
// remove_identity_reshape, remove_identity_broadcast. REPORT lines are the report's folds
// (first) and skips; DEBUG lines are the ops that are no candidate (not in the report,
// only in --debug's log). The identity removals record no fold: their positive cases
// check the IR.

// (L + b) + c = L + (b + c).
// CHECK-LABEL: func.func @fold_shift_into_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[Y]]
func.func @fold_shift_into_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// c + (L + b): the shift may be either operand.
// CHECK-LABEL: func.func @fold_shift_into_bias_shift_first
// CHECK:         %[[C:.+]] = stablehlo.dot_general
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[Y]]
func.func @fold_shift_into_bias_shift_first(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[-0.375, 0.625, -0.25], [0.25, -0.125, 0.5], [-0.375, -0.875, -0.375], [0.25, 0.25, 1.0]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %a = stablehlo.add %d, %b : tensor<2x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_shift_into_bias]
  %y = stablehlo.add %s, %a : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// (L + b) - c = L + (b - c): Flax's and torch-mlir's `y - mean` after a biased layer.
// CHECK-LABEL: func.func @fold_subtrahend_into_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK-NOT:     stablehlo.subtract
// CHECK:         return %[[Y]]
func.func @fold_subtrahend_into_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %mean = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: folded stablehlo.subtract into stablehlo.convolution [fold_subtrahend_into_bias]
  %y = stablehlo.subtract %a, %m : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// L - c = L + (-c): for a subtract the bias add is optional.
// CHECK-LABEL: func.func @fold_subtrahend_without_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.subtract
// CHECK:         return %[[Y]]
func.func @fold_subtrahend_without_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %mean = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: folded stablehlo.subtract into stablehlo.convolution [fold_subtrahend_into_bias]
  %y = stablehlo.subtract %c, %m : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// reshape(reshape(L)) back to L's type is L (Equinox under vmap).
// CHECK-LABEL: func.func @remove_identity_reshape
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK-NOT:     stablehlo.reshape
// CHECK:         return %[[C]]
func.func @remove_identity_reshape(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %r1 = stablehlo.reshape %c : (tensor<1x4x4x3xf32>) -> tensor<16x3xf32>
  %r2 = stablehlo.reshape %r1 : (tensor<16x3xf32>) -> tensor<1x4x4x3xf32>
  return %r2 : tensor<1x4x4x3xf32>
}

// -----

// dynamic_broadcast_in_dim(L, shape_of(L), dims in order) is L (torch-mlir, symbolic batch).
// CHECK-LABEL: func.func @remove_identity_broadcast
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK-NOT:     stablehlo.dynamic_broadcast_in_dim
// CHECK:         return %[[C]]
func.func @remove_identity_broadcast(%arg0: tensor<?x4x4x2xf32>) -> tensor<?x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<?x4x4x3xf32>
  %s = shape.shape_of %c : tensor<?x4x4x3xf32> -> tensor<4xindex>
  %y = stablehlo.dynamic_broadcast_in_dim %c, %s, dims = [0, 1, 2, 3] : (tensor<?x4x4x3xf32>, tensor<4xindex>) -> tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}

// -----

// The same after a per-channel affine op: torch-mlir broadcasts each step of a batch norm
// onto its own shape before the next (symbolic batch); removed, the steps form one chain.
// CHECK-LABEL: func.func @remove_identity_broadcast_after_affine_step
// CHECK:         %[[M:.+]] = stablehlo.multiply
// CHECK-NOT:     stablehlo.dynamic_broadcast_in_dim %[[M]]
// CHECK:         return %[[M]]
func.func @remove_identity_broadcast_after_affine_step(%arg0: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %s = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %shape = shape.shape_of %arg0 : tensor<?x3xf32> -> tensor<2xindex>
  %s_b = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [1] : (tensor<3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  %m = stablehlo.multiply %arg0, %s_b : tensor<?x3xf32>
  %own = shape.shape_of %m : tensor<?x3xf32> -> tensor<2xindex>
  %y = stablehlo.dynamic_broadcast_in_dim %m, %own, dims = [0, 1] : (tensor<?x3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// element type is not f16, bf16, f32 or f64: an integer convolution, bias and shift.
// CHECK-LABEL: func.func @no_fold_shift_integer
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}} : tensor<1x4x4x3xi32>
// CHECK:         stablehlo.add %[[A]], %{{.+}} : tensor<1x4x4x3xi32>
func.func @no_fold_shift_integer(%arg0: tensor<1x4x4x2xi32>) -> tensor<1x4x4x3xi32> {
  %k = stablehlo.constant dense<[[[[1, -1, 2], [3, 0, -2]]]]> : tensor<1x1x2x3xi32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xi32>, tensor<1x1x2x3xi32>) -> tensor<1x4x4x3xi32>
  %bias = stablehlo.constant dense<[1, -2, 3]> : tensor<3xi32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xi32>) -> tensor<1x4x4x3xi32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xi32>
  %shift = stablehlo.constant dense<[5, 5, -7]> : tensor<3xi32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xi32>) -> tensor<1x4x4x3xi32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: element type is not f16, bf16, f32 or f64 [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xi32>
  return %y : tensor<1x4x4x3xi32>
}

// -----

// no linear op plus a bias on either side: L + c alone is already the canonical form.
// CHECK-LABEL: func.func @no_fold_shift_without_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK:         return %[[Y]]
func.func @no_fold_shift_without_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: no linear op plus a bias on either side [fold_shift_into_bias]
  %y = stablehlo.add %c, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// not a linear op plus a per-channel value: a residual add of an activation to L + b.
// CHECK-LABEL: func.func @no_fold_shift_residual
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         %[[Y:.+]] = stablehlo.add %[[A]], %arg1
// CHECK:         return %[[Y]]
func.func @no_fold_shift_residual(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: not a linear op plus a per-channel value [fold_shift_into_bias]
  %y = stablehlo.add %a, %arg1 : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// already a single bias add: at batch 1, x @ W2 + (x @ W1 + b) reads as L2 plus a narrow
// value; the operand with the bias add is the other layer, not a shift of L2.
// CHECK-LABEL: func.func @no_fold_shift_sum_of_two_layers_at_batch_one
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         %[[D:.+]] = stablehlo.dot_general
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[A]]
// CHECK:         return %[[Y]]
func.func @no_fold_shift_sum_of_two_layers_at_batch_one(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w1 = stablehlo.constant dense<[[-0.375, 0.625, -0.25], [0.25, -0.125, 0.5], [-0.375, -0.875, -0.375], [0.25, 0.25, 1.0]]> : tensor<4x3xf32>
  %w2 = stablehlo.constant dense<[[0.5, 0.625, -0.25], [0.25, -0.125, 0.5], [-0.375, 0.875, -0.375], [0.25, 0.25, -1.0]]> : tensor<4x3xf32>
  %d1 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %a1 = stablehlo.add %d1, %b : tensor<1x3xf32>
  %d2 = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: already a single bias add [fold_shift_into_bias]
  %y = stablehlo.add %d2, %a1 : tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// not a linear op plus a per-channel value: c - (L + b), the subtrahend is the layer.
// CHECK-LABEL: func.func @no_fold_subtrahend_on_the_left
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         stablehlo.subtract %{{.+}}, %[[A]]
func.func @no_fold_subtrahend_on_the_left(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %mean = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: not a linear op plus a per-channel value [fold_subtrahend_into_bias]
  %y = stablehlo.subtract %m, %a : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// bias add result has other users: L + b is also returned.
// CHECK-LABEL: func.func @no_fold_shift_bias_add_multi_user
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         %[[Y:.+]] = stablehlo.add %[[A]], %{{.+}}
// CHECK:         return %[[Y]], %[[A]]
func.func @no_fold_shift_bias_add_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: bias add result has other users [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y, %a : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// producer result has other users: L itself is also returned.
// CHECK-LABEL: func.func @no_fold_shift_producer_multi_user
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK:         %[[Y:.+]] = stablehlo.add %[[A]], %{{.+}}
// CHECK:         return %[[Y]], %[[C]]
func.func @no_fold_shift_producer_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: producer result has other users [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// bias is not finite: b holds an infinity.
// CHECK-LABEL: func.func @no_fold_shift_bias_not_finite
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         stablehlo.add %[[A]], %{{.+}}
func.func @no_fold_shift_bias_not_finite(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, 0x7F800000, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: bias is not finite [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// bias is not a per-channel constant (without fold-weight-arguments): b is an argument.
// CHECK-LABEL: func.func @fold_shift_into_argument_bias
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[Y]]
func.func @fold_shift_into_argument_bias(%arg0: tensor<1x4x4x2xf32>, %bias: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0.5, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // CONST: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: bias is not a per-channel constant [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// per-channel shift is not finite: c holds a NaN.
// CHECK-LABEL: func.func @no_fold_shift_not_finite
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         stablehlo.add %[[A]], %{{.+}}
func.func @no_fold_shift_not_finite(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %shift = stablehlo.constant dense<[0.5, 0x7FC00000, -2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel shift is not finite [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// folded bias overflows its element type: b + c = 120000 in f16.
// CHECK-LABEL: func.func @no_fold_shift_bias_overflow
// CHECK:         %[[A:.+]] = stablehlo.add %{{.+}}, %{{.+}}
// CHECK:         stablehlo.add %[[A]], %{{.+}}
func.func @no_fold_shift_bias_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<1x1x2x3xf16>) -> tensor<1x4x4x3xf16>
  %bias = stablehlo.constant dense<[60000.0, -0.5, 1.0]> : tensor<3xf16>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf16>) -> tensor<1x4x4x3xf16>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf16>
  %shift = stablehlo.constant dense<[60000.0, 0.5, -2.0]> : tensor<3xf16>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf16>) -> tensor<1x4x4x3xf16>
  // REPORT: bias.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folded bias overflows its element type [fold_shift_into_bias]
  %y = stablehlo.add %a, %s : tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// operand is not a reshape: one reshape of L changes the shape and stays.
// CHECK-LABEL: func.func @no_remove_single_reshape
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[R:.+]] = stablehlo.reshape %[[C]]
// CHECK:         return %[[R]]
func.func @no_remove_single_reshape(%arg0: tensor<1x4x4x2xf32>) -> tensor<16x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:9): not a candidate: operand is not a reshape [remove_identity_reshape]
  %r1 = stablehlo.reshape %c : (tensor<1x4x4x3xf32>) -> tensor<16x3xf32>
  return %r1 : tensor<16x3xf32>
}

// -----

// the reshapes do not restore the shape: 1x4x4x3 -> 16x3 -> 4x4x3.
// CHECK-LABEL: func.func @no_remove_reshapes_to_another_shape
// CHECK:         %[[R:.+]] = stablehlo.reshape
// CHECK:         stablehlo.reshape %[[R]]
func.func @no_remove_reshapes_to_another_shape(%arg0: tensor<1x4x4x2xf32>) -> tensor<4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %r1 = stablehlo.reshape %c : (tensor<1x4x4x3xf32>) -> tensor<16x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:9): not a candidate: the reshapes do not restore the shape [remove_identity_reshape]
  %r2 = stablehlo.reshape %r1 : (tensor<16x3xf32>) -> tensor<4x4x3xf32>
  return %r2 : tensor<4x4x3xf32>
}

// -----

// not after a linear op: an identity reshape pair on an argument is left as it was.
// CHECK-LABEL: func.func @no_remove_reshapes_of_an_argument
// CHECK:         %[[R:.+]] = stablehlo.reshape %arg0
// CHECK:         %[[S:.+]] = stablehlo.reshape %[[R]]
// CHECK:         return %[[S]]
func.func @no_remove_reshapes_of_an_argument(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %r1 = stablehlo.reshape %arg0 : (tensor<1x4x4x3xf32>) -> tensor<16x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:9): not a candidate: not after a linear op [remove_identity_reshape]
  %r2 = stablehlo.reshape %r1 : (tensor<16x3xf32>) -> tensor<1x4x4x3xf32>
  return %r2 : tensor<1x4x4x3xf32>
}

// -----

// the broadcast changes the type: L's ?x4x4x3 onto a static 2x4x4x3.
// CHECK-LABEL: func.func @no_remove_broadcast_that_changes_the_type
// CHECK:         stablehlo.dynamic_broadcast_in_dim
func.func @no_remove_broadcast_that_changes_the_type(%arg0: tensor<?x4x4x2xf32>) -> tensor<2x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<?x4x4x3xf32>
  %s = shape.shape_of %c : tensor<?x4x4x3xf32> -> tensor<4xindex>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: the broadcast changes the type [remove_identity_broadcast]
  %y = stablehlo.dynamic_broadcast_in_dim %c, %s, dims = [0, 1, 2, 3] : (tensor<?x4x4x3xf32>, tensor<4xindex>) -> tensor<2x4x4x3xf32>
  return %y : tensor<2x4x4x3xf32>
}

// -----

// the shape is not provably the operand's own: it is an argument.
// CHECK-LABEL: func.func @no_remove_broadcast_onto_an_argument_shape
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.+}}, %arg1
func.func @no_remove_broadcast_onto_an_argument_shape(%arg0: tensor<?x4x4x2xf32>, %arg1: tensor<4xindex>) -> tensor<?x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<?x4x4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: the shape is not provably the operand's own [remove_identity_broadcast]
  %y = stablehlo.dynamic_broadcast_in_dim %c, %arg1, dims = [0, 1, 2, 3] : (tensor<?x4x4x3xf32>, tensor<4xindex>) -> tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}

// -----

// not after a linear op or a per-channel affine op: an argument broadcast onto its own
// shape is left as it was.
// CHECK-LABEL: func.func @no_remove_broadcast_of_an_argument
// CHECK:         stablehlo.dynamic_broadcast_in_dim %arg0
func.func @no_remove_broadcast_of_an_argument(%arg0: tensor<?x4x4x3xf32>) -> tensor<?x4x4x3xf32> {
  %s = shape.shape_of %arg0 : tensor<?x4x4x3xf32> -> tensor<4xindex>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: not after a linear op or a per-channel affine op [remove_identity_broadcast]
  %y = stablehlo.dynamic_broadcast_in_dim %arg0, %s, dims = [0, 1, 2, 3] : (tensor<?x4x4x3xf32>, tensor<4xindex>) -> tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}
