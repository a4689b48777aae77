// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file \
// RUN:   --report 2>&1 >/dev/null | FileCheck --check-prefix=CONST %s

// --report prints, to stderr, one line per batch norm with its location: every fold first,
// then every batch norm left alone with the reason, then the totals. stdout (the module)
// goes to /dev/null, so nothing else may appear. Each expected line sits right above the
// batch norm it describes.

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

// Folded into a dot_general.
func.func @fold_dot_general_dense(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[-0.375, 0.625, -0.25], [0.25, -0.125, 0.5], [-0.375, -0.875, -0.375], [0.25, 0.25, 1.0]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Kernel argument: folded in the graph; left alone without fold-weight-arguments.
func.func @fold_weights_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Variance argument: folded in the graph; left alone without fold-weight-arguments.
func.func @fold_statistics_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -0.5, -0.25], [0.875, -0.875, 0.625]], [[0.625, -0.5, 0.625], [0.75, -0.75, 0.875]]], [[[0.75, -0.5, 0.75], [0.875, -0.125, -0.25]], [[-0.875, 0.125, -0.5], [-0.625, -0.125, 0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not constants [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %arg1) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Bias argument: folded in the graph; left alone without fold-weight-arguments.
func.func @fold_bias_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.125, 0.25, 1.0], [-0.875, 0.625, -0.375]], [[-0.25, -0.375, 0.25], [-1.0, 0.375, 0.75]]], [[[-0.5, -1.0, 0.25], [-1.0, 0.625, 0.25]], [[-1.0, -1.0, -0.5], [-0.75, -0.25, -0.625]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// element type is not f16, bf16, f32 or f64: an f8E4M3FN convolution and batch norm.
func.func @no_fold_f8_batch_norm(%arg0: tensor<1x4x4x2xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf8E4M3FN>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf8E4M3FN>, tensor<2x2x2x3xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf8E4M3FN>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf8E4M3FN>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf8E4M3FN>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf8E4M3FN>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN>
  return %y : tensor<1x4x4x3xf8E4M3FN>
}

// -----

// feature dimension is dynamic: the result is 1x4x4x? (the static kernel still says 3).
func.func @no_fold_dynamic_feature_dim(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x?xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x?xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: feature dimension is dynamic [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: feature dimension is dynamic [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x?xf32>
  return %y : tensor<1x4x4x?xf32>
}

// -----

// A dynamic batch dimension with a static feature dimension folds: its line is among the
// folds above.
func.func @fold_dynamic_batch_dim(%arg0: tensor<?x4x4x2xf32>) -> tensor<?x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<?x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<?x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
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

// bias add result has other users: the biased result is also returned.
func.func @no_fold_bias_add_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias add result has other users [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias add result has other users [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %a : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// producer result has other users: the convolution result is also returned.
func.func @no_fold_producer_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: producer result has other users [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: producer result has other users [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// bias is not a per-channel constant: the bias varies along H (dims = [1]), not along the feature.
func.func @no_fold_bias_not_per_channel(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0, 2.0]> : tensor<4xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// batch-norm operands are not finite: the per-channel bias between them holds a NaN.
func.func @no_fold_nan_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, 0x7FC00000, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias is not finite [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// feature_index is not the output-feature dimension: feature_index = 2 (W) on an NHWC result.
func.func @no_fold_feature_index_mismatch(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: feature_index is not the output-feature dimension [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: feature_index is not the output-feature dimension [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 2 : i64} : (tensor<1x4x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// weight element type is not f16, bf16, f32 or f64: an f8E4M3FN convolution with an f32 result.
func.func @no_fold_f8_weights(%arg0: tensor<1x4x4x2xf8E4M3FN>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf8E4M3FN>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf8E4M3FN>, tensor<2x2x2x3xf8E4M3FN>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: weight element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weight element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// batch-norm operands are not finite: the mean holds a NaN.
func.func @no_fold_nan_mean(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, 0x7FC00000, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// variance + epsilon is not positive: one variance is -1.
func.func @no_fold_negative_variance(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, -1.0, 1.0]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// folded bias overflows its element type: f16 offset 60000 minus mean -60000.
func.func @no_fold_bias_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[60000.0, 0.0, 0.0]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[-60000.0, 0.0, 0.0]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folded bias overflows its element type [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded bias overflows its element type [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// weights in case branches are not constants: the batch norm follows a stablehlo.case whose branches are convolutions, one with its kernel passed as an argument.
func.func @no_fold_case_branch_weights_argument(%arg0: tensor<i32>, %arg1: tensor<1x4x4x2xf32>, %arg2: tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %r = "stablehlo.case"(%arg0) ({
    %c0 = stablehlo.convolution(%arg1, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c0 : tensor<1x4x4x3xf32>
  }, {
    %c1 = stablehlo.convolution(%arg1, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c1 : tensor<1x4x4x3xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: weights in case branches are not constants [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// folded weights overflow their element type: f16 kernel 60000 times scale 100.
func.func @no_fold_weights_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<60000.0> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[100.0, 100.0, 100.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  // CHECK: report.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_bn_into_linear]
  // CONST: report.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// CHECK:         folded 6, skipped 14
// CHECK-NOT:     func.func
// CONST:         folded 3, skipped 17
// CONST-NOT:     func.func
