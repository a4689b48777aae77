// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file \
// RUN:   --report 2>&1 >/dev/null | FileCheck --check-prefix=CONST %s

// --report prints, to stderr, one line per candidate with its location: every fold first,
// then every candidate left alone with the reason, then the totals. stdout (the module)
// goes to /dev/null, so nothing else may appear. Each expected line sits right above the
// op it describes. This file checks the report's form; each pattern's reasons are checked
// in its own file (batch_norm.mlir, bias.mlir, decomposed.mlir, precision.mlir, ...).

// Folded into a convolution.
func.func @fold_nhwc_hwio(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Kernel argument: left alone by default, since computing K * s in the graph builds more
// ops than the one batch_norm_inference it removes; and without fold-weight-arguments.
func.func @fold_weights_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folding in the graph would build more ops than it removes: the scale, weights and bias computed from arguments on every call [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// operand is not a convolution or dot_general: a tanh sits between them.
func.func @no_fold_operand_not_linear(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %h = stablehlo.tanh %c : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: operand is not a convolution or dot_general [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: operand is not a convolution or dot_general [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%h, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// One norm left, refused at two of its ops: the fold after the layer at its subtract (the
// weights, arguments, would be scaled on every call and are larger than the activation),
// the fold into the next layer at its add (a residual add reads it too). Counted once.
// Without fold-weight-arguments no pattern takes it (its values are arguments): it is left,
// and says so at its outermost op.
func.func @no_fold_one_norm_refused_twice(%x: tensor<1x1x1x8xf32>, %w: tensor<1x1x8x8xf32>, %w2: tensor<1x1x8x8xf32>, %mean: tensor<8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x1x8xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
  // CHECK: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.subtract: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_subtrahend_into_bias]
  %0 = stablehlo.subtract %c, %m : tensor<1x1x1x8xf32>
  %1 = stablehlo.multiply %0, %sb : tensor<1x1x1x8xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.add: affine result has other users (stablehlo.add) [fold_input_affine_into_conv]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the per-channel values are function arguments and fold-weight-arguments is off [stablehlo-fold-batch-norm]
  %2 = stablehlo.add %1, %bb : tensor<1x1x1x8xf32>
  %3 = stablehlo.convolution(%2, %w2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x1x8xf32>
  %4 = stablehlo.add %2, %x : tensor<1x1x1x8xf32>
  return %3, %4 : tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
}

// -----

// Two norms, one after the other, left: the fold after the first layer refused at the first
// one's subtract (the layer's result is returned too), the fold into the next layer at the
// second one's add (returned too), though the input side sees the two as one chain of
// per-channel ops. Counted twice, once per norm.
func.func @no_fold_two_norms_in_one_chain(%x: tensor<1x1x1x4xf32>) -> (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) {
  %w = stablehlo.constant dense<0.25> : tensor<1x1x4x4xf32>
  %m = stablehlo.constant dense<[0.125, 0.25, 0.375, 0.5]> : tensor<4xf32>
  %s = stablehlo.constant dense<[1.5, 2.0, 0.5, 1.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[0.25, -0.25, 0.125, 0.0]> : tensor<4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.subtract: producer result has other users [fold_subtrahend_into_bias]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.subtract: producer result has other users [fold_subtrahend_into_bias]
  %0 = stablehlo.subtract %c, %mb : tensor<1x1x1x4xf32>
  %1 = stablehlo.multiply %0, %sb : tensor<1x1x1x4xf32>
  %2 = stablehlo.add %1, %bb : tensor<1x1x1x4xf32>
  %3 = stablehlo.subtract %2, %bb : tensor<1x1x1x4xf32>
  %4 = stablehlo.multiply %3, %sb : tensor<1x1x1x4xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.add: affine result has other users (func.return) [fold_input_affine_into_conv]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: affine result has other users (func.return) [fold_input_affine_into_conv]
  %5 = stablehlo.add %4, %mb : tensor<1x1x1x4xf32>
  %6 = stablehlo.convolution(%5, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
  return %6, %5, %c : tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>
}

// CHECK:         6 norms: 1 folded whole, 0 folded partly, 5 left (1 op folded); 0 activation-sized ops removed
// CHECK-NOT:     func.func
// CONST:         6 norms: 1 folded whole, 0 folded partly, 5 left (1 op folded); 0 activation-sized ops removed
// CONST-NOT:     func.func
