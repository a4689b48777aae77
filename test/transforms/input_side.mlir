// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefixes=REPORT,LARGER %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefixes=REPORT,DEFAULT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file --report \
// RUN:   2>&1 >/dev/null | FileCheck --check-prefix=CONST %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --debug 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEBUG %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-narrow-weights=false --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=NARROW %s

// Weights passed as arguments at these toy sizes have more elements than the activations;
// fold-larger-weight-arguments=true keeps such folds here to test their mechanics. The
// default's cost rule is tested in weight_cost.mlir.

// Input-side folds: a per-feature affine map (batch norm or per-feature add, subtract,
// multiply, divide by constants) feeding a dot_general along a contracting dimension or a
// convolution along its input-feature dimension. Each REPORT-DAG line sits right above the
// op the report names; folds are reported at the outermost affine op.

// Batch norm before a dense layer (BNNeck): dot_general(x, W * s) + W . t.
// CHECK-LABEL: func.func @fold_bn_into_dense(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bn_into_dense(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 2.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// The activation is the rhs: W[3, 4] . y[2, 4] contracting 1 with 1; the bias lies along
// the result's dimension 0, which W's free dimension gives.
// CHECK-LABEL: func.func @fold_decomposed_into_dense_rhs(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x4xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[W]], %arg0, contracting_dims = [1] x [1]
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_decomposed_into_dense_rhs(%arg0: tensor<2x4xf32>) -> tensor<3x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0, 1.5], [0.25, -0.5, 1.0, 1.0], [1.0, -2.0, 0.75, 0.5]]> : tensor<3x4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 2.0]> : tensor<4xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %inv_b = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %bias_b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %centred = stablehlo.subtract %arg0, %mean_b : tensor<2x4xf32>
  %scaled = stablehlo.multiply %centred, %inv_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %bias_b : tensor<2x4xf32>
  %d = stablehlo.dot_general %w, %y, contracting_dims = [1] x [1] : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
  return %d : tensor<3x2xf32>
}

// -----

// torch-mlir's nn.Linear: the weights a `transpose` of the constant. They are constant
// weights (also without weight arguments): W^T * s is computed in float64 from the
// constant, rounded once and written as one constant of the transposed shape, which the
// dot_general reads in place of the transpose.
// CHECK-LABEL: func.func @fold_affine_into_transposed_dense_weights(
// CHECK-NOT:     stablehlo.transpose
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{\[}}[1.000000e+00, 5.000000e-01, 2.000000e+00], {{.+}}]> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]]
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.transpose
// CHECK:         return %[[Y]]
func.func @fold_affine_into_transposed_dense_weights(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0, 1.5], [0.25, -0.5, 1.0, 1.0], [1.0, -2.0, 0.75, 0.5]]> : tensor<3x4xf32>
  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %s = stablehlo.constant dense<[2.0, 0.5, 4.0, 1.0]> : tensor<4xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %t = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %s_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // CONST: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %t_b : tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %wt, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// Batched weights: W . t would vary along the batch and the free dimension, on a result
// larger than the input (4 features from 3), so only the scale folds and the shift stays
// in front as x + t / s: one add on the smaller tensor instead of two.
// CHECK-LABEL: func.func @fold_scale_and_shift_into_batched_dot_general(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<2x5x3xf32>
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x3x4xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[X]], %[[W]], batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[D]]
func.func @fold_scale_and_shift_into_batched_dot_general(%arg0: tensor<2x5x3xf32>) -> tensor<2x5x4xf32> {
  %w = stablehlo.constant dense<[[[0.5, -1.0, 2.0, 1.5], [0.25, -0.5, 1.0, 1.0], [1.0, -2.0, 0.75, 0.5]], [[1.5, 1.0, -2.0, 0.5], [-0.25, 0.5, 1.0, 2.0], [0.0, 2.0, -0.75, 0.25]]]> : tensor<2x3x4xf32>
  %s = stablehlo.constant dense<[2.0, 0.5, -1.5]> : tensor<3xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
  %t = stablehlo.constant dense<[0.25, -0.75, 1.0]> : tensor<3xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
  %scaled = stablehlo.multiply %s_b, %arg0 : tensor<2x5x3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %t_b, %scaled : tensor<2x5x3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %y, %w, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  return %d : tensor<2x5x4xf32>
}

// -----

// Input normalization (x - mean) / std before a VALID convolution, NCHW x OIHW: the shift
// folds too, since every window tap reads the input.
// CHECK-LABEL: func.func @fold_normalization_into_valid_conv_nchw(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_normalization_into_valid_conv_nchw(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x3x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5], [-0.375, 0.625]], [[-0.125, -0.875], [0.25, 0.5]]], [[[1.0, -0.625], [-1.0, 0.125]], [[-0.625, 0.375], [0.125, -0.75]]], [[[0.5, 0.5], [-0.25, 1.0]], [[0.375, -0.125], [0.875, -0.5]]]]> : tensor<3x2x2x2xf32>
  %mean = stablehlo.constant dense<[0.485, 0.456]> : tensor<2xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %std = stablehlo.constant dense<[0.229, 0.224]> : tensor<2xf32>
  %std_b = stablehlo.broadcast_in_dim %std, dims = [1] : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %centred = stablehlo.subtract %arg0, %mean_b : tensor<1x2x4x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.divide into stablehlo.convolution [fold_input_affine_into_conv]
  %x = stablehlo.divide %centred, %std_b : tensor<1x2x4x4xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32>
  return %c : tensor<1x3x3x3xf32>
}

// -----

// A grouped VALID convolution, NHWC x HWIO, 2 groups: input feature g * 2 + i meets
// kernel slice i of the outputs of group g.
// CHECK-LABEL: func.func @fold_bn_into_grouped_valid_conv(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x2x2x6xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      feature_group_count = 2
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<6xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<6xf32>) -> tensor<1x3x3x6xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bn_into_grouped_valid_conv(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x3x3x6xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0, 1.5, 0.25, -0.5], [1.0, 1.0, -2.0, 0.75, 0.5, 0.125]], [[0.25, 0.5, -0.75, 1.0, -1.5, 2.0], [0.375, -0.25, 0.5, 1.25, -0.5, 1.0]]], [[[1.5, 1.0, -2.0, 0.5, 0.75, -1.0], [-0.25, 0.5, 1.0, 2.0, 0.5, 0.25]], [[0.0, 2.0, -0.75, 0.25, 1.0, -0.125], [0.625, -1.0, 0.25, 0.5, -0.25, 0.75]]]]> : tensor<2x2x2x6xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 2.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<2x2x2x6xf32>) -> tensor<1x3x3x6xf32>
  return %c : tensor<1x3x3x6xf32>
}

// -----

// A scale alone folds into a padded convolution: zero padding commutes with it.
// CHECK-LABEL: func.func @fold_scale_into_padded_conv(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      pad = {{\[\[}}1, 1], [1, 1]]
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[C]]
func.func @fold_scale_into_padded_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x5x5x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %s = stablehlo.constant dense<[2.0, -0.5]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_input_affine_into_conv]
  %x = stablehlo.multiply %arg0, %s_b : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32>
  return %c : tensor<1x5x5x3xf32>
}

// -----

// Batch norm before a padded convolution: the scale folds, the shift moves in front of
// it as x + t / s and stays, with the reason in the report.
// CHECK-LABEL: func.func @fold_scale_keep_shift_before_padded_conv(
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %[[B]]
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[X]], %[[K]])
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[C]]
func.func @fold_scale_keep_shift_before_padded_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x5x5x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: convolution pads or dilates its input: the shift cannot pass its zeros [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32>
  return %c : tensor<1x5x5x3xf32>
}

// -----

// conv -> batch norm -> 1x1 VALID conv: the batch norm folds into the convolution before
// it (the output side comes first); the bias add that fold built stays in front of the
// second convolution: passing it on would build an add after it and remove nothing (an
// op a fold built is not reported).
// CHECK-LABEL: func.func @fold_bn_between_two_convolutions(
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK:         %[[D:.+]] = stablehlo.convolution(%[[Y]], %{{.+}})
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[D]]
func.func @fold_bn_between_two_convolutions(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %k2 = stablehlo.constant dense<[[[[0.5, -1.0], [2.0, 1.5], [0.25, -0.5]]]]> : tensor<1x1x3x2xf32>
  %d = stablehlo.convolution(%y, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x2x2x2xf32>
  return %d : tensor<1x2x2x2xf32>
}

// -----

// LayerNorm's x * gamma + beta before separate Q, K and V projections (a pre-norm
// transformer block): gamma scales each projection's weights, W . beta joins each one's
// own bias, and no op is left on the [2, 4] input.
// CHECK-LABEL: func.func @fold_layer_norm_affine_into_q_k_v(
// CHECK-NOT:     stablehlo.multiply
// CHECK:         stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add
// CHECK-NOT:     stablehlo.add
// CHECK:         return
func.func @fold_layer_norm_affine_into_q_k_v(%arg0: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %gamma = stablehlo.constant dense<[1.375, 1.375, 1.25, 0.75]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta = stablehlo.constant dense<[-0.875, 0.875, 0.25, -1.0]> : tensor<4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %wq = stablehlo.constant dense<[[0.875, 1.0, -0.375, 0.625], [-0.875, -0.125, 0.625, -0.125], [0.0, -0.75, 0.625, -0.0], [-0.5, 0.5, 1.0, 0.125]]> : tensor<4x4xf32>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bq = stablehlo.constant dense<[0.5, 1.0, -1.0, 0.25]> : tensor<4xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %q = stablehlo.add %dq, %bq_b : tensor<2x4xf32>
  %wk = stablehlo.constant dense<[[0.875, -0.75, -0.5, 0.125], [0.5, 0.125, 0.125, -0.875], [0.5, -0.375, -0.875, 0.875], [0.375, -0.125, 0.5, -0.0]]> : tensor<4x4xf32>
  %dk = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bk = stablehlo.constant dense<[-0.75, 0.25, 0.5, 0.5]> : tensor<4xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %k = stablehlo.add %dk, %bk_b : tensor<2x4xf32>
  %wv = stablehlo.constant dense<[[0.125, 0.875, 0.875, 0.75], [-0.25, -0.5, 0.0, 0.25], [-0.625, 0.125, -0.125, -1.0], [-0.125, -0.25, 0.875, -0.875]]> : tensor<4x4xf32>
  %dv = stablehlo.dot_general %y, %wv, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bv = stablehlo.constant dense<[0.875, 0.875, 0.25, -0.625]> : tensor<4xf32>
  %bv_b = stablehlo.broadcast_in_dim %bv, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %v = stablehlo.add %dv, %bv_b : tensor<2x4xf32>
  return %q, %k, %v : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// RMSNorm's x * gamma before LLaMA's gate and up projections: gamma scales both
// weights; no shift, so no bias.
// CHECK-LABEL: func.func @fold_rms_norm_scale_into_gate_and_up(
// CHECK-NOT:     stablehlo.multiply
// CHECK:         %[[G:.+]] = stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[U:.+]] = stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[G]], %[[U]]
func.func @fold_rms_norm_scale_into_gate_and_up(%arg0: tensor<2x4xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>) {
  %gamma = stablehlo.constant dense<[1.25, 0.625, 0.875, 1.125]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: folded stablehlo.multiply into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %w_gate = stablehlo.constant dense<[[-0.125, -0.125, -0.375, -0.875, -0.25, 0.625], [0.625, -0.875, 0.125, -0.25, -0.25, 1.0], [0.625, 0.0, 0.0, 0.875, -0.25, 0.625], [0.5, 0.5, -0.125, 0.375, 0.625, -0.375]]> : tensor<4x6xf32>
  %gate = stablehlo.dot_general %y, %w_gate, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  %w_up = stablehlo.constant dense<[[0.5, -0.0, 0.125, -0.125, -0.25, 0.5], [-0.25, -0.625, 0.625, -0.25, 0.125, 1.0], [0.25, 0.0, -0.375, 0.375, 0.875, 0.375], [0.5, -0.375, -0.375, -0.25, -0.0, 0.75]]> : tensor<4x6xf32>
  %up = stablehlo.dot_general %y, %w_up, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  return %gate, %up : tensor<2x6xf32>, tensor<2x6xf32>
}

// -----

// A batch norm feeding two 1x1 convolution branches, each with its own bias add: the
// batch norm folds into both kernels and each bias.
// CHECK-LABEL: func.func @fold_bn_into_two_pointwise_conv_branches(
// CHECK:         %[[A:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[YA:.+]] = stablehlo.add %[[A]], %{{.+}}
// CHECK:         %[[B:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[YB:.+]] = stablehlo.add %[[B]], %{{.+}}
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[YA]], %[[YB]]
func.func @fold_bn_into_two_pointwise_conv_branches(%arg0: tensor<1x2x2x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %scale = stablehlo.constant dense<[1.0, 0.625, 1.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[-0.5, 0.25, -0.375]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.875, -0.125, 0.125]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.25, 1.0, 2.0]> : tensor<3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %ka = stablehlo.constant dense<[[[[-0.875, 0.5], [-0.5, -0.875], [-0.625, 0.5]]]]> : tensor<1x1x3x2xf32>
  %ca = stablehlo.convolution(%y, %ka) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x2x2x2xf32>
  %ba = stablehlo.constant dense<[0.875, 0.5]> : tensor<2xf32>
  %ba_b = stablehlo.broadcast_in_dim %ba, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %a = stablehlo.add %ca, %ba_b : tensor<1x2x2x2xf32>
  %kb = stablehlo.constant dense<[[[[-0.375, -0.0], [-0.75, -0.125], [-0.5, -0.875]]]]> : tensor<1x1x3x2xf32>
  %cb = stablehlo.convolution(%y, %kb) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x2x2x2xf32>
  %bb = stablehlo.constant dense<[-0.375, 0.875]> : tensor<2xf32>
  %bb_b = stablehlo.broadcast_in_dim %bb, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %b = stablehlo.add %cb, %bb_b : tensor<1x2x2x2xf32>
  return %a, %b : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// The same without bias adds: two bias adds after the branches would replace the batch
// norm's two steps, removing nothing, so only the scale folds and the shift stays as one
// add x + t / s that both branches read.
// CHECK-LABEL: func.func @fold_bn_scale_into_two_conv_branches_without_bias(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x2x2x3xf32>
// CHECK:         %[[A:.+]] = stablehlo.convolution(%[[X]], %{{.+}})
// CHECK:         %[[B:.+]] = stablehlo.convolution(%[[X]], %{{.+}})
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[A]], %[[B]]
func.func @fold_bn_scale_into_two_conv_branches_without_bias(%arg0: tensor<1x2x2x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %scale = stablehlo.constant dense<[1.0, 0.75, 0.625]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.75, -0.875, -0.875]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[-0.75, 0.5, 0.875]> : tensor<3xf32>
  %var = stablehlo.constant dense<[0.375, 1.375, 1.375]> : tensor<3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %ka = stablehlo.constant dense<[[[[0.0, -1.0], [0.375, -0.125], [0.875, 1.0]]]]> : tensor<1x1x3x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.add: folding would add as many activation-sized ops as it removes [fold_input_affine_into_conv]
  %ca = stablehlo.convolution(%y, %ka) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x2x2x2xf32>
  %kb = stablehlo.constant dense<[[[[0.25, -0.75], [-0.375, 0.25], [0.75, -0.125]]]]> : tensor<1x1x3x2xf32>
  %cb = stablehlo.convolution(%y, %kb) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x2x2x2xf32>
  return %ca, %cb : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Weights as arguments: each projection's weights become W * broadcast_in_dim(gamma)
// (weight-sized), and its bias beta . W + b is computed on C-sized values.
// CHECK-LABEL: func.func @fold_layer_norm_affine_with_weights_as_arguments(
// CHECK:         %[[G:.+]] = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
// CHECK:         %[[W:.+]] = stablehlo.multiply %arg3, %[[G]] : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[T:.+]] = stablehlo.dot_general %arg2, %arg3, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.add %[[T]], %arg4 : tensor<3xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1]
// CHECK:         stablehlo.add %[[D]], %[[BB]] : tensor<2x3xf32>
// CHECK:         stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         return
func.func @fold_layer_norm_affine_with_weights_as_arguments(%arg0: tensor<2x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4x3xf32>, %arg4: tensor<3xf32>, %arg5: tensor<4x3xf32>, %arg6: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %gamma_b = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // LARGER-DAG: input_side.mlir:[[# @LINE + 2]]:{{[0-9]+}}: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // DEFAULT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.add: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %dq = stablehlo.dot_general %y, %arg3, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bq_b = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %q = stablehlo.add %dq, %bq_b : tensor<2x3xf32>
  %dk = stablehlo.dot_general %y, %arg5, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bk_b = stablehlo.broadcast_in_dim %arg6, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %k = stablehlo.add %dk, %bk_b : tensor<2x3xf32>
  return %q, %k : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Flax's LayerNorm: (x - mean) * (rsqrt(var + eps) * scale) + bias, the per-feature scale
// multiplied into the per-token factor first. The scale is split off the product:
// x * r, then the scale and bias fold into both projections (the product r * scale and
// the add are gone, x * r is built: one activation-sized op fewer, two with the add).
// CHECK-LABEL: func.func @fold_layer_norm_scale_split_off_the_per_token_factor(
// CHECK:         %[[R:.+]] = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
// CHECK:         %[[X:.+]] = stablehlo.multiply %arg0, %[[R]] : tensor<2x4xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         stablehlo.dot_general %[[X]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.dot_general %[[X]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return
func.func @fold_layer_norm_scale_split_off_the_per_token_factor(%arg0: tensor<2x4xf32>, %arg1: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r_b = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0]> : tensor<4xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %factor = stablehlo.multiply %r_b, %scale_b : tensor<2x4xf32>
  %normalized = stablehlo.multiply %arg0, %factor : tensor<2x4xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %bias_b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %normalized, %bias_b : tensor<2x4xf32>
  %wq = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bq = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %q = stablehlo.add %dq, %bq_b : tensor<2x3xf32>
  %wk = stablehlo.constant dense<[[1.0, 0.5, -0.25], [0.75, -1.5, 0.5], [-1.0, 2.0, 0.25], [0.5, 0.5, -0.75]]> : tensor<4x3xf32>
  %dk = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bk = stablehlo.constant dense<[-0.125, 0.75, 0.5]> : tensor<3xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %k = stablehlo.add %dk, %bk_b : tensor<2x3xf32>
  return %q, %k : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Exact GELU, (x * 0.5) * (1 + erf(x / sqrt(2))), before a 1x1 convolution (the erf term
// here a logistic): 0.5 is split off the product of the two activations, x * 0.5 goes,
// and the 0.5 folds into the kernel. The report names the multiply by 0.5, through the
// multiply of the two activations.
// CHECK-LABEL: func.func @fold_gelu_half_through_the_product_of_activations(
// CHECK:         %[[E:.+]] = stablehlo.logistic %arg0
// CHECK:         %[[Y:.+]] = stablehlo.multiply %[[E]], %arg0 : tensor<1x4x4x2xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         stablehlo.convolution(%[[Y]], %{{.+}})
func.func @fold_gelu_half_through_the_product_of_activations(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %half = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution through stablehlo.multiply [fold_input_affine_into_conv]
  %h = stablehlo.multiply %half, %arg0 : tensor<1x4x4x2xf32>
  %e = stablehlo.logistic %arg0 : tensor<1x4x4x2xf32>
  %g = stablehlo.multiply %h, %e : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %o = stablehlo.convolution(%g, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %o : tensor<1x4x4x3xf32>
}

// -----

// Mixed bf16, Flax's LayerNorm computed in f32 and converted to bf16 before a bf16 Dense
// whose weights are a convert of f32 master weights: the scale folds into
// round_bf16(W * s), from the master weights; the shift stays in f32 before the narrowing
// convert, as x + t / s (as a bias after the Dense it would cancel in bf16 at the size of
// x, not of the norm's result).
// CHECK-LABEL: func.func @fold_mixed_bf16_layer_norm_through_convert(
// CHECK:         %[[T:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[A:.+]] = stablehlo.add %arg0, %[[T]] : tensor<2x4xf32>
// CHECK:         %[[X:.+]] = stablehlo.convert %[[A]] : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[X]], %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<2x3xbf16>
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     tensor<4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_mixed_bf16_layer_norm_through_convert(%arg0: tensor<2x4xf32>) -> tensor<2x3xbf16> {
  %gamma = stablehlo.constant dense<[1.5, 0.3, -2.0, 0.7]> : tensor<4xf32>
  %beta = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %master = stablehlo.constant dense<[[0.1, -1.0, 2.0], [1.5, 0.3, -0.5], [1.0, 0.7, 1.0], [-2.0, 0.75, 0.2]]> : tensor<4x3xf32>
  %w = stablehlo.convert %master : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift stays before the narrowing convert: as a bias after the layer it would cancel in the narrow type at the size of x, not of the norm's result [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bias_h = stablehlo.convert %bias : (tensor<3xf32>) -> tensor<3xbf16>
  %bias_b = stablehlo.broadcast_in_dim %bias_h, dims = [1] : (tensor<3xbf16>) -> tensor<2x3xbf16>
  %o = stablehlo.add %d, %bias_b : tensor<2x3xbf16>
  return %o : tensor<2x3xbf16>
}

// -----

// Mixed f16, a batch norm computed in f32 before an f16 1x1 convolution whose kernel is a
// convert of an f32 master kernel: conv(convert(x + t / s), round_f16(K * s)), the shift
// in f32 before the convert.
// CHECK-LABEL: func.func @fold_mixed_f16_bn_into_conv_through_convert(
// CHECK:         %[[T:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK:         %[[A:.+]] = stablehlo.add %arg0, %[[T]] : tensor<1x2x2x2xf32>
// CHECK:         %[[X:.+]] = stablehlo.convert %[[A]] : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16>
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x2xf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[X]], %[[K]])
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[C]]
func.func @fold_mixed_f16_bn_into_conv_through_convert(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %yh = stablehlo.convert %y : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16>
  %master = stablehlo.constant dense<[[[[0.1, -0.75], [-0.375, 0.7]]]]> : tensor<1x1x2x2xf32>
  %k = stablehlo.convert %master : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift stays before the narrowing convert: as a bias after the layer it would cancel in the narrow type at the size of x, not of the norm's result [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%yh, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf16>, tensor<1x1x2x2xf16>) -> tensor<1x2x2x2xf16>
  return %c : tensor<1x2x2x2xf16>
}

// -----

// Flax's MultiHeadDotProductAttention with weights as arguments: a LayerNorm-style scale
// and shift before the q and k projections, each a DenseGeneral [D] -> [heads, head_dim]
// with its own [heads, head_dim] bias argument. The shift, contracted with each kernel in
// the graph (a [2, 3] dot_general), merges into that bias: no add is added.
// CHECK-LABEL: func.func @fold_shift_into_head_biases_as_arguments(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[BETA:[^:]+]]: tensor<4xf32>, %[[WQ:[^:]+]]: tensor<4x2x3xf32>, %[[BQ:[^:]+]]: tensor<2x3xf32>, %[[WK:[^:]+]]: tensor<4x2x3xf32>, %[[BK:[^:]+]]: tensor<2x3xf32>
// CHECK:         %[[SQ:.+]] = stablehlo.multiply %[[WQ]], %{{.+}} : tensor<4x2x3xf32>
// CHECK:         %[[Q:.+]] = stablehlo.dot_general %[[X]], %[[SQ]], contracting_dims = [1] x [0]
// CHECK:         %[[TQ:.+]] = stablehlo.dot_general %[[BETA]], %[[WQ]], contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4x2x3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[MQ:.+]] = stablehlo.add %[[TQ]], %[[BQ]] : tensor<2x3xf32>
// CHECK:         %[[BBQ:.+]] = stablehlo.broadcast_in_dim %[[MQ]], dims = [1, 2] : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
// CHECK:         %[[OQ:.+]] = stablehlo.add %[[Q]], %[[BBQ]] : tensor<2x2x3xf32>
// CHECK:         stablehlo.add %{{.+}}, %[[BK]] : tensor<2x3xf32>
// CHECK-NOT:     tensor<2x4xf32>
// CHECK:         return %[[OQ]]
func.func @fold_shift_into_head_biases_as_arguments(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>, %wq: tensor<4x2x3xf32>, %bq: tensor<2x3xf32>, %wk: tensor<4x2x3xf32>, %bk: tensor<2x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // LARGER-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // DEFAULT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %q = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bq_r = stablehlo.reshape %bq : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq_r, dims = [0, 1, 2] : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  %q_b = stablehlo.add %q, %bq_b : tensor<2x2x3xf32>
  %k = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bk_r = stablehlo.reshape %bk : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk_r, dims = [0, 1, 2] : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  %k_b = stablehlo.add %k, %bk_b : tensor<2x2x3xf32>
  return %q_b, %k_b : tensor<2x2x3xf32>, tensor<2x2x3xf32>
}

// -----

// folding would move an add onto a larger tensor: the same q and k projections with
// weights as arguments, but k's bias argument is laid out [head_dim, heads] (broadcast
// with dims = [2, 1]): only a block in the result's order merges, and k's folded bias
// would need its own add on the [2, 2, 3] result, larger than the [2, 4] input.
// CHECK-LABEL: func.func @no_fold_shift_into_head_biases_in_another_order(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general
func.func @no_fold_shift_into_head_biases_in_another_order(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>, %wq: tensor<4x2x3xf32>, %bq: tensor<2x3xf32>, %wk: tensor<4x2x3xf32>, %bk: tensor<3x2xf32>) -> (tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %q = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bq_r = stablehlo.reshape %bq : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq_r, dims = [0, 1, 2] : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  %q_b = stablehlo.add %q, %bq_b : tensor<2x2x3xf32>
  %k = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk, dims = [2, 1] : (tensor<3x2xf32>) -> tensor<2x2x3xf32>
  %k_b = stablehlo.add %k, %bk_b : tensor<2x2x3xf32>
  return %q_b, %k_b : tensor<2x2x3xf32>, tensor<2x2x3xf32>
}

// -----

// The batch norm's result is also returned: folding it would leave it computed twice.
// CHECK-LABEL: func.func @no_fold_affine_result_with_other_users(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims
func.func @no_fold_affine_result_with_other_users(%arg0: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: affine result has other users (func.return) [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d, %y : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A symbolic batch: only the batch is dynamic, the dense layer's weights static. The
// scale folds into them; no shift, no bias broadcast.
// CHECK-LABEL: func.func @fold_input_side_dynamic_batch(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00], [1.000000e+00, 7.500000e-01]]> : tensor<2x2xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[D]]
func.func @fold_input_side_dynamic_batch(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %s = stablehlo.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %n = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x2xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %two, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %s_b = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [1] : (tensor<2xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %s_b : tensor<?x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %d : tensor<?x2xf32>
}

// -----

// Weights passed as an argument: W * s and W . t are computed in the graph. With
// fold-weight-arguments=false it is left alone: weights are not a constant.
// CHECK-LABEL: func.func @fold_bn_into_dense_weights_argument(
// CHECK:         %[[W:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<2x2xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     batch_norm_inference
func.func @fold_bn_into_dense_weights_argument(%arg0: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // CONST: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// A NaN weight: the folded bias would spread it to every output feature.
// CHECK-LABEL: func.func @no_fold_input_side_weights_not_finite(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims
func.func @no_fold_input_side_weights_not_finite(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, 0x7FC00000], [2.0, 1.5]]> : tensor<2x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not finite [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// f16: W . t = 2 * 60000 overflows f16 although W * s does not (the dense layer's own
// bias add would take the folded bias, so the fold would remove an add).
// CHECK-LABEL: func.func @no_fold_input_side_bias_overflow(
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_bias_overflow(%arg0: tensor<2x2xf16>) -> tensor<2x2xf16> {
  %w = stablehlo.constant dense<[[6.0e+04, 1.0], [6.0e+04, 1.0]]> : tensor<2x2xf16>
  %t = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf16>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<2xf16>) -> tensor<2x2xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folded bias overflows its element type [fold_input_affine_into_dot_general]
  %y = stablehlo.add %arg0, %t_b : tensor<2x2xf16>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  %b = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf16>
  %b_b = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf16>) -> tensor<2x2xf16>
  %z = stablehlo.add %d, %b_b : tensor<2x2xf16>
  return %z : tensor<2x2xf16>
}

// -----

// f16: W * s = 60000 * 2 overflows f16.
// CHECK-LABEL: func.func @no_fold_input_side_weights_overflow(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_weights_overflow(%arg0: tensor<2x2xf16>) -> tensor<2x2xf16> {
  %w = stablehlo.constant dense<[[6.0e+04, 1.0], [1.0, 1.0]]> : tensor<2x2xf16>
  %s = stablehlo.constant dense<[2.0, 1.0]> : tensor<2xf16>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf16>) -> tensor<2x2xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folded weights overflow their element type [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %s_b : tensor<2x2xf16>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  return %d : tensor<2x2xf16>
}

// -----

// Batch-norm statistics passed as arguments: s = scale / sqrt(var + eps) and t are
// computed in the graph, the weights scaled there (with fold-weight-arguments=false they
// are not constants, and stay).
// CHECK-LABEL: func.func @fold_input_side_bn_operands_arguments(
// CHECK:         %[[S:.+]] = stablehlo.divide %arg1, %{{.+}} : tensor<2xf32>
// CHECK:         %[[SB:.+]] = stablehlo.broadcast_in_dim %[[S]], dims = [0] : (tensor<2xf32>) -> tensor<2x2xf32>
// CHECK:         %[[W:.+]] = stablehlo.multiply %{{.+}}, %[[SB]] : tensor<2x2xf32>
// CHECK:         stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.batch_norm_inference
func.func @fold_input_side_bn_operands_arguments(%arg0: tensor<2x2xf32>, %scale: tensor<2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // CONST: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not constants [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// A batch norm whose scale is computed from the data (a per-example mean of the input),
// the other statistics arguments: folded, it would make the weights depend on the data.
// CHECK-LABEL: func.func @no_fold_input_side_bn_scale_from_the_data(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_input_side_bn_scale_from_the_data(%arg0: tensor<2x2xf32>, %offset: tensor<2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %scale = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: per-channel value is computed from the data: folding would make the weights depend on it [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// A batch norm whose scale is an argument and whose constant variance + epsilon is not
// positive: no scale to compute in the graph.
// CHECK-LABEL: func.func @no_fold_input_side_bn_argument_scale_variance_not_positive(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_input_side_bn_argument_scale_variance_not_positive(%arg0: tensor<2x2xf32>, %scale: tensor<2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, -4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// An infinite scale.
// CHECK-LABEL: func.func @no_fold_input_side_bn_operands_not_finite(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims
func.func @no_fold_input_side_bn_operands_not_finite(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %scale = stablehlo.constant dense<[0x7F800000, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// variance + epsilon <= 0: the batch norm is NaN there, and its square root undefined.
// CHECK-LABEL: func.func @no_fold_input_side_negative_variance(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims
func.func @no_fold_input_side_negative_variance(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[-1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// Multiplying by infinity.
// CHECK-LABEL: func.func @no_fold_input_side_factor_not_finite(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_factor_not_finite(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %s = stablehlo.constant dense<[0x7F800000, 1.0]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel factor is not finite [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %s_b : tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// Dividing by zero.
// CHECK-LABEL: func.func @no_fold_input_side_zero_divisor(
// CHECK:         stablehlo.divide
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_zero_divisor(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf32>
  %s = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: per-channel divisor has a zero [fold_input_affine_into_dot_general]
  %y = stablehlo.divide %arg0, %s_b : tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// A shift alone before a transposed (lhs-dilated) convolution: the holes the dilation
// inserts are zeros, not t, and there is no scale to fold.
// CHECK-LABEL: func.func @no_fold_shift_alone_before_lhs_dilated_conv(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}}
// CHECK:         stablehlo.convolution(%[[X]], %{{.+}})
func.func @no_fold_shift_alone_before_lhs_dilated_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x6x6x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %t = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: a shift alone cannot pass the zeros of padding or lhs dilation [fold_input_affine_into_conv]
  %x = stablehlo.add %arg0, %t_b : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x6x3xf32>
  return %c : tensor<1x6x6x3xf32>
}

// -----

// The same shift as another convolution's bias, L + b: the canonical form, no candidate
// (DEBUG lines are --debug's log of what is no candidate).
// CHECK-LABEL: func.func @no_fold_bias_add_before_lhs_dilated_conv(
// CHECK:         %[[L:.+]] = stablehlo.convolution(%arg0
// CHECK:         %[[X:.+]] = stablehlo.add %[[L]], %{{.+}}
// CHECK:         stablehlo.convolution(%[[X]], %{{.+}})
func.func @no_fold_bias_add_before_lhs_dilated_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x6x6x3xf32> {
  %k0 = stablehlo.constant dense<[[[[0.5, -1.0], [1.5, 0.25]]]]> : tensor<1x1x2x2xf32>
  %l = stablehlo.convolution(%arg0, %k0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %t = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: a shift alone cannot pass the zeros of padding or lhs dilation [fold_input_affine_into_conv]
  %x = stablehlo.add %l, %t_b : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x6x3xf32>
  return %c : tensor<1x6x6x3xf32>
}

// -----

// x * s + t before a transposed (lhs-dilated) convolution: the scale folds, the shift
// stays in front as x + t / s, reported at the add (which carries the convolution's
// location).
// CHECK-LABEL: func.func @fold_scale_keep_shift_before_lhs_dilated_conv(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         stablehlo.convolution(%[[X]], %{{[a-z_0-9]+}})
// CHECK-SAME:      lhs_dilate = [2, 2]
func.func @fold_scale_keep_shift_before_lhs_dilated_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x6x6x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %s = stablehlo.constant dense<[2.0, -0.5]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %t = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %s_b : tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution [fold_input_affine_into_conv]
  %x = stablehlo.add %m, %t_b : tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: convolution pads or dilates its input: the shift cannot pass its zeros [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x6x3xf32>
  return %c : tensor<1x6x6x3xf32>
}

// -----

// A padded convolution after x * s + t with a zero in s: t cannot move before the scale.
// CHECK-LABEL: func.func @no_fold_padded_conv_with_zero_scale(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convolution
func.func @no_fold_padded_conv_with_zero_scale(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x5x5x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %s = stablehlo.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %t = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %s_b : tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: convolution pads or dilates its input and a scale is zero [fold_input_affine_into_conv]
  %x = stablehlo.add %m, %t_b : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32>
  return %c : tensor<1x5x5x3xf32>
}

// -----

// An input normalization (x - mean) / std before a padded convolution whose kernel is an
// argument: the shift would stay in front as x + t / s, whose weights K * s cannot be
// checked in the graph. The report says so at the chain (it once said nothing).
// CHECK-LABEL: func.func @no_fold_normalization_before_padded_conv_with_argument_kernel(
// CHECK:         stablehlo.divide
// CHECK:         stablehlo.convolution(%{{.+}}, %arg1)
func.func @no_fold_normalization_before_padded_conv_with_argument_kernel(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32> {
  %mean = stablehlo.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %std = stablehlo.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %std_b = stablehlo.broadcast_in_dim %std, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %c = stablehlo.subtract %arg0, %mean_b : tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: the shift stays in front and the weights or scale are not constants [fold_input_affine_into_conv]
  %x = stablehlo.divide %c, %std_b : tensor<1x4x4x2xf32>
  %o = stablehlo.convolution(%x, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32>
  return %o : tensor<1x5x5x3xf32>
}

// -----

// f16, padded: t / s = 60000 / 0.001 overflows f16, so the shift cannot move before the scale.
// CHECK-LABEL: func.func @no_fold_padded_conv_shift_over_scale_not_finite(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convolution
func.func @no_fold_padded_conv_shift_over_scale_not_finite(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x5x5x3xf16> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf16>
  %s = stablehlo.constant dense<[1.0e-03, 2.0]> : tensor<2xf16>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %t = stablehlo.constant dense<[6.0e+04, -0.5]> : tensor<2xf16>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %m = stablehlo.multiply %arg0, %s_b : tensor<1x4x4x2xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: shift over scale overflows its element type [fold_input_affine_into_conv]
  %x = stablehlo.add %m, %t_b : tensor<1x4x4x2xf16>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x5x5x3xf16>
  return %c : tensor<1x5x5x3xf16>
}

// -----

// f16, padded: s = 1e-6 scales the kernel into f16's subnormals, where it keeps few
// digits; conv(x + t / s, K * s) would multiply that error by the large t / s.
// CHECK-LABEL: func.func @no_fold_padded_conv_weights_underflow(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convolution
func.func @no_fold_padded_conv_weights_underflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x5x5x3xf16> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf16>
  %s = stablehlo.constant dense<[1.0e-06, 2.0]> : tensor<2xf16>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %t = stablehlo.constant dense<[0.01, -0.5]> : tensor<2xf16>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf16>) -> tensor<1x4x4x2xf16>
  %m = stablehlo.multiply %arg0, %s_b : tensor<1x4x4x2xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folded weights underflow their element type [fold_input_affine_into_conv]
  %x = stablehlo.add %m, %t_b : tensor<1x4x4x2xf16>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x5x5x3xf16>
  return %c : tensor<1x5x5x3xf16>
}

// -----

// f16 weights in an f32 dot_general: x * s is computed in f32 with the weights exact;
// rounding W * s to f16 would add an error the original never made.
// CHECK-LABEL: func.func @no_fold_input_side_narrow_weights(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_narrow_weights(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5]]> : tensor<2x2xf16>
  %s = stablehlo.constant dense<[0.3, 0.7]> : tensor<2xf32>
  %s_b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights are narrower than the computation: folding would round them again [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %s_b : tensor<2x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf16>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// Pure bf16: the same LayerNorm in f32 before a Dense whose weights are stored only in
// bf16 (Flax's dtype=param_dtype=bfloat16). The scale folds into the bf16 weights, W * s
// computed in float64 from them and rounded to bf16 again (the report marks it); the
// shift stays in f32 before the convert as x + t / s, as with f32 master weights. With
// fold-narrow-weights=false: weights have no wider master copy.
// CHECK-LABEL: func.func @fold_bf16_weights_stored_in_bf16(
// CHECK:         %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4xf32>
// CHECK:         %[[TB:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1]
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %[[TB]] : tensor<2x4xf32>
// CHECK:         %[[XB:.+]] = stablehlo.convert %[[X]] : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[XB]], %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[D]]
func.func @fold_bf16_weights_stored_in_bf16(%arg0: tensor<2x4xf32>) -> tensor<2x3xbf16> {
  %gamma = stablehlo.constant dense<[1.5, 0.3, -2.0, 0.7]> : tensor<4xf32>
  %beta = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.add into stablehlo.dot_general (rounded again in bf16) [fold_input_affine_into_dot_general]
  // NARROW: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: weights have no wider master copy: folding would round them again [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xbf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %d : tensor<2x3xbf16>
}

// -----

// Pure f16, an RMSNorm-style scale in f32 before a Dense whose weights are stored only in
// f16: the scale folds into them, rounded to f16 again; nothing is left before the convert.
// CHECK-LABEL: func.func @fold_f16_weights_stored_in_f16(
// CHECK:         %[[XB:.+]] = stablehlo.convert %arg0 : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[XB]], %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[D]]
func.func @fold_f16_weights_stored_in_f16(%arg0: tensor<2x4xf32>) -> tensor<2x3xf16> {
  %gamma = stablehlo.constant dense<[1.3, 0.3, -2.7, 0.7]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.multiply into stablehlo.dot_general (rounded again in f16) [fold_input_affine_into_dot_general]
  // NARROW: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights have no wider master copy: folding would round them again [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xf16>
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %d : tensor<2x3xf16>
}

// -----

// Mixed bf16 with weights as arguments (`model.apply(variables, x)`), an RMSNorm-style
// scale: gamma and the f32 master weights are arguments. The graph scales the master
// weights in f32 and converts the product to bf16 once, convert_bf16(W * gamma); the
// chain's input keeps its convert. With fold-weight-arguments=false the chain is no
// candidate.
// CHECK-LABEL: func.func @fold_mixed_bf16_weights_as_arguments(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[M:[^:]+]]: tensor<4x3xf32>
// CHECK:         %[[XB:.+]] = stablehlo.convert %[[X]] : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK:         %[[GB:.+]] = stablehlo.broadcast_in_dim %[[G]], dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
// CHECK:         %[[P:.+]] = stablehlo.multiply %[[M]], %[[GB]] : tensor<4x3xf32>
// CHECK:         %[[W:.+]] = stablehlo.convert %[[P]] : (tensor<4x3xf32>) -> tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[XB]], %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     tensor<2x4xf32>
// CHECK:         return %[[D]]
// CONST-NOT:     input_side.mlir:[[# @LINE + 4]]:8:
func.func @fold_mixed_bf16_weights_as_arguments(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %master: tensor<4x3xf32>) -> tensor<2x3xbf16> {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // LARGER-DAG: input_side.mlir:[[# @LINE + 2]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_input_affine_into_dot_general]
  // DEFAULT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %w = stablehlo.convert %master : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %d : tensor<2x3xbf16>
}

// -----

// Mixed bf16 with weights as arguments, a LayerNorm-style scale and shift: the shift
// would stay in f32 before the convert as x + t / s, which needs s checked for zeros and
// the weights' rounding checked against t / s: not done in the graph.
// CHECK-LABEL: func.func @no_fold_mixed_bf16_shift_with_weights_as_arguments(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convert
// CHECK:         stablehlo.dot_general
func.func @no_fold_mixed_bf16_shift_with_weights_as_arguments(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>, %master: tensor<4x3xf32>) -> tensor<2x3xbf16> {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift stays in front and the weights or scale are not constants [fold_input_affine_into_dot_general]
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %w = stablehlo.convert %master : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %d : tensor<2x3xbf16>
}

// -----

// Pure bf16 with weights as arguments (Flax's RMSNorm in f32 before a bf16 Dense): the
// weights argument is bf16 itself, with no wider master copy; scaling it would round it
// a second time.
// CHECK-LABEL: func.func @no_fold_bf16_weights_as_arguments_without_master(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.convert
// CHECK:         stablehlo.dot_general
func.func @no_fold_bf16_weights_as_arguments_without_master(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %w: tensor<4x3xbf16>) -> tensor<2x3xbf16> {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights have no wider master copy: folding would round them again [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %d : tensor<2x3xbf16>
}

// -----

// The f32 chain's result is also returned: folding through the convert would leave it
// computed twice.
// CHECK-LABEL: func.func @no_fold_mixed_bf16_chain_with_other_users(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.convert
// CHECK:         stablehlo.dot_general
func.func @no_fold_mixed_bf16_chain_with_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x3xbf16>, tensor<2x4xf32>) {
  %gamma = stablehlo.constant dense<[1.5, 0.3, -2.0, 0.7]> : tensor<4xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: affine result has other users than the narrowing convert [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %yb = stablehlo.convert %y : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %master = stablehlo.constant dense<[[0.1, -1.0, 2.0], [1.5, 0.3, -0.5], [1.0, 0.7, 1.0], [-2.0, 0.75, 0.2]]> : tensor<4x3xf32>
  %w = stablehlo.convert %master : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %d = stablehlo.dot_general %yb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %d, %y : tensor<2x3xbf16>, tensor<2x4xf32>
}

// -----

// A shift alone before a dense layer without a bias add: W . t would need an add on the
// result, as many activation-sized ops as it removes.
// CHECK-LABEL: func.func @no_fold_shift_alone_before_dense_without_bias(
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general
func.func @no_fold_shift_alone_before_dense_without_bias(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %t = stablehlo.constant dense<[-0.25, 0.25, 0.75, -0.625]> : tensor<4xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %w = stablehlo.constant dense<[[0.25, 0.25, -0.0], [-0.25, 0.875, 0.625], [-0.75, -1.0, -0.5], [-0.125, -0.625, -0.375]]> : tensor<4x3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.add: folding would add as many activation-sized ops as it removes [fold_input_affine_into_dot_general]
  %y = stablehlo.add %arg0, %t_b : tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// A shift alone before a dense layer that widens 3 features to 4: the add would move onto
// a larger tensor.
// CHECK-LABEL: func.func @no_fold_shift_onto_larger_output(
// CHECK:         stablehlo.add
// CHECK:         stablehlo.dot_general
func.func @no_fold_shift_onto_larger_output(%arg0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %t = stablehlo.constant dense<[0.375, 0.5, 0.625]> : tensor<3xf32>
  %t_b = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %w = stablehlo.constant dense<[[0.625, -0.375, 0.125, 0.5], [0.25, 0.125, 0.625, 0.875], [0.75, -0.5, -0.75, -0.375]]> : tensor<3x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_dot_general]
  %y = stablehlo.add %arg0, %t_b : tensor<2x3xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}

// -----

// The other operand is itself computed by a dot_general (an activation, like
// attention's k): scaling it would move the op onto another activation.
// CHECK-LABEL: func.func @no_fold_input_side_weights_computed_by_linear_op(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.dot_general
func.func @no_fold_input_side_weights_computed_by_linear_op(%arg0: tensor<2x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %scale = stablehlo.constant dense<[1.25, 0.875, 1.25, 1.125]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[1.0, -0.75, 0.625, -0.875]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.25, 0.125, -0.5, -0.5]> : tensor<4xf32>
  %var = stablehlo.constant dense<[0.875, 1.125, 0.5, 1.0]> : tensor<4xf32>
  %z = stablehlo.dot_general %arg1, %arg2, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.batch_norm_inference: weights are computed by a linear op: the op would only move onto them [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %z, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// The same with no batch norm in the chain (attention's q * scale before q @ k^T): no
// candidate at all, so no report line.
// CHECK-LABEL: func.func @no_fold_scale_before_weights_computed_by_linear_op(
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0
// CHECK:         stablehlo.dot_general %[[Y]]
func.func @no_fold_scale_before_weights_computed_by_linear_op(%arg0: tensor<2x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %scale = stablehlo.constant dense<[1.25, 0.875, 1.25, 1.125]> : tensor<4xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %z = stablehlo.dot_general %arg1, %arg2, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: weights are computed by a linear op: the op would only move onto them [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %scale_b : tensor<2x4xf32>
  %d = stablehlo.dot_general %y, %z, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// A grouped convolution whose kernel is an argument: the scale would have to be laid
// over the kernel group by group in the graph.
// CHECK-LABEL: func.func @no_fold_grouped_conv_weights_argument(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.convolution
func.func @no_fold_grouped_conv_weights_argument(%arg0: tensor<1x2x2x4xf32>, %arg1: tensor<1x1x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %scale = stablehlo.constant dense<[0.625, 1.0, 1.0, 0.875]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[-0.0, 0.125, 0.0, -0.625]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[-0.5, -0.5, 1.0, 0.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.5, 0.625, 1.125, 1.0]> : tensor<4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.batch_norm_inference: weights of a grouped convolution are not a constant [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %c = stablehlo.convolution(%y, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x2x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %c : tensor<1x2x2x4xf32>
}

// -----

// A grouped (depthwise) convolution whose kernel is a constant after a batch norm whose
// statistics are arguments: the scale and shift computed in the graph would be laid over
// the kernel's input-feature axis whole, which holds one feature per group (this built an
// invalid broadcast of the 4 scales over that axis of size 1).
// CHECK-LABEL: func.func @no_fold_grouped_conv_statistics_arguments(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.convolution
func.func @no_fold_grouped_conv_statistics_arguments(%arg0: tensor<1x2x2x4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>) -> tensor<1x2x2x4xf32> {
  %scale = stablehlo.constant dense<[0.625, 1.0, 1.0, 0.875]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[-0.0, 0.125, 0.0, -0.625]> : tensor<4xf32>
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0, 0.25]]]]> : tensor<1x1x1x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.batch_norm_inference: scale or shift of a grouped convolution would be computed in the graph [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x2x2x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x2x4xf32>
  return %c : tensor<1x2x2x4xf32>
}

// -----

// A padded convolution whose kernel is an argument: the shift would stay in front as
// x + t / s, which needs the folded weights checked in float64.
// CHECK-LABEL: func.func @no_fold_padded_conv_weights_argument(
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.convolution
func.func @no_fold_padded_conv_weights_argument(%arg0: tensor<1x2x2x4xf32>, %arg1: tensor<2x2x4x3xf32>) -> tensor<1x3x3x3xf32> {
  %scale = stablehlo.constant dense<[0.75, 0.75, 0.75, 1.25]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.5, 0.75, -0.375, 0.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, 0.125, 0.75, -1.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.5, 0.5, 1.125, 0.875]> : tensor<4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:{{[0-9]+}}: not folded stablehlo.batch_norm_inference: the shift stays in front and the weights or scale are not constants [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %c = stablehlo.convolution(%y, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x4xf32>, tensor<2x2x4x3xf32>) -> tensor<1x3x3x3xf32>
  return %c : tensor<1x3x3x3xf32>
}

// -----

// A convolution whose input is not a per-feature affine map is not a candidate (no report line).
// CHECK-LABEL: func.func @not_a_candidate_without_affine_input(
// CHECK:         stablehlo.maximum
// CHECK:         stablehlo.convolution(%{{.+}}, %{{.+}})
func.func @not_a_candidate_without_affine_input(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x5x5x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %x = stablehlo.maximum %arg0, %zero : tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x5x5x3xf32>
  return %c : tensor<1x5x5x3xf32>
}

// A squeeze-excite block: the gate sigmoid(conv(mean over H, W)) is per channel but
// computed from the image. Folded into the projection's kernel it would make the
// kernel a run-time value (and the batch norm after it could no longer fold).
// CHECK-LABEL: func.func @no_fold_squeeze_excite_gate_into_projection(
// CHECK:         %[[G:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [0, 1, 2, 3] : (tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0, %[[G]]
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xf32>
// CHECK:         stablehlo.convolution(%[[Y]], %[[K]])
func.func @no_fold_squeeze_excite_gate_into_projection(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %n = stablehlo.constant dense<16.0> : tensor<1x2xf32>
  // The mean's 1 / 16 is a constant: it folds into the excite convolution, through the
  // reshape that keeps the channels whole (forward.mlir).
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:11: folded stablehlo.divide into stablehlo.convolution through stablehlo.reshape [fold_input_affine_into_conv]
  %mean = stablehlo.divide %sum, %n : tensor<1x2xf32>
  %m4 = stablehlo.reshape %mean : (tensor<1x2xf32>) -> tensor<1x1x1x2xf32>
  %ke = stablehlo.constant dense<[[[[0.5, -1.0], [1.5, 0.25]]]]> : tensor<1x1x2x2xf32>
  %e = stablehlo.convolution(%m4, %ke) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32>
  %gate = stablehlo.logistic %e : tensor<1x1x1x2xf32>
  %g = stablehlo.broadcast_in_dim %gate, dims = [0, 1, 2, 3] : (tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 2]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_input_affine_into_conv]
  // CONST-NOT: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply
  %y = stablehlo.multiply %arg0, %g : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A batch norm before TensorFlow's Dense, a stablehlo.dot: W * s, and W . t as its bias.
// CHECK-LABEL: func.func @fold_bn_into_tf_dense_dot(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x2xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot %arg0, %[[W]]
// CHECK:         %[[B:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[BB]]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bn_into_tf_dense_dot(%arg0: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5], [0.25, -0.75]]> : tensor<3x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 1.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.5]> : tensor<3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot [fold_input_affine_into_dot]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %d = stablehlo.dot %y, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}

// -----

// Flax's batch norm with a NaN variance before a VALID convolution: the chain stops at
// the multiply, and the bias add alone would not pay; the report says why the chain
// stopped, not the cost.
// CHECK-LABEL: func.func @no_fold_nan_variance_under_bias_add(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convolution
func.func @no_fold_nan_variance_under_bias_add(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x3x3x3xf32> {
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[0x7FC00000, 4.0]> : tensor<2xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %ve = stablehlo.add %var, %eps : tensor<2xf32>
  %r = stablehlo.rsqrt %ve : tensor<2xf32>
  %rs = stablehlo.multiply %r, %scale : tensor<2xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %rb = stablehlo.broadcast_in_dim %rs, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %d = stablehlo.subtract %arg0, %mb : tensor<1x4x4x2xf32>
  %n = stablehlo.multiply %d, %rb : tensor<1x4x4x2xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel factor is not finite [fold_input_affine_into_conv]
  %y = stablehlo.add %n, %bb : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x3x3x3xf32>
  return %c : tensor<1x3x3x3xf32>
}

// -----

// A symbolic batch with a shift: the bias broadcast reads its shape from the new dense
// layer.
// CHECK-LABEL: func.func @fold_input_side_shift_on_dynamic_batch(
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %{{.+}} : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
// CHECK:         stablehlo.get_dimension_size %[[D]], dim = 0
// CHECK:         %[[B:.+]] = stablehlo.dynamic_broadcast_in_dim
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_input_side_shift_on_dynamic_batch(%arg0: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5], [0.25, -0.75]]> : tensor<3x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 1.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.5]> : tensor<3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  return %d : tensor<?x2xf32>
}

// -----

// torch-mlir's pre-activation batch norm (DenseNet) with a symbolic batch: each step reads
// a `dynamic_broadcast_in_dim` of the one before onto its own shape (removed: see
// bias.mlir), and each step's shape is read (`shape.shape_of`) for the broadcasts of the
// next, the ReLU's zero among them. Those shape reads are no users: the scale folds forward
// into the convolution through the ReLU, the shift stays in front as x + t / s, whose
// shape the ReLU's zero reads, and no step of the chain is left.
// CHECK-LABEL: func.func @fold_torch_mlir_symbolic_batch_through_relu(
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply
// CHECK:         %[[X:.+]] = stablehlo.add %{{.+}}, %{{.+}} : tensor<?x2x4x4xf32>
// CHECK:         %[[S:.+]] = shape.shape_of %[[X]]
// CHECK:         %[[Z:.+]] = stablehlo.dynamic_broadcast_in_dim %{{.+}}, %[[S]], dims = []
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %[[Z]]
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[R]], %{{.+}})
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[C]]
func.func @fold_torch_mlir_symbolic_batch_through_relu(%arg0: tensor<?x2x4x4xf32>) -> tensor<?x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.5]], [[1.0]]], [[[2.0]], [[-0.25]]], [[[-0.5]], [[0.75]]]]> : tensor<3x2x1x1xf32>
  %mean = stablehlo.constant dense<[[[0.1]], [[-0.3]]]> : tensor<2x1x1xf32>
  %invstd = stablehlo.constant dense<[[[1.5]], [[0.5]]]> : tensor<2x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %beta = stablehlo.constant dense<[[[0.25]], [[-1.0]]]> : tensor<2x1x1xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c = shape.const_shape [2, 1, 1] : tensor<3xindex>
  %s0 = shape.shape_of %arg0 : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %b0 = shape.broadcast %s0, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %x0 = stablehlo.dynamic_broadcast_in_dim %arg0, %b0, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %m0 = stablehlo.dynamic_broadcast_in_dim %mean, %b0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %d = stablehlo.subtract %x0, %m0 : tensor<?x2x4x4xf32>
  %s1 = shape.shape_of %d : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %b1 = shape.broadcast %s1, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %d1 = stablehlo.dynamic_broadcast_in_dim %d, %b1, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %i1 = stablehlo.dynamic_broadcast_in_dim %invstd, %b1, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %n = stablehlo.multiply %d1, %i1 : tensor<?x2x4x4xf32>
  %s2 = shape.shape_of %n : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %b2 = shape.broadcast %s2, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %n2 = stablehlo.dynamic_broadcast_in_dim %n, %b2, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %g2 = stablehlo.dynamic_broadcast_in_dim %gamma, %b2, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %ng = stablehlo.multiply %n2, %g2 : tensor<?x2x4x4xf32>
  %s3 = shape.shape_of %ng : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %b3 = shape.broadcast %s3, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %ng3 = stablehlo.dynamic_broadcast_in_dim %ng, %b3, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %be3 = stablehlo.dynamic_broadcast_in_dim %beta, %b3, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:10: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum [fold_input_affine_into_conv]
  %out = stablehlo.add %ng3, %be3 : tensor<?x2x4x4xf32>
  %s4 = shape.shape_of %out : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %z4 = stablehlo.dynamic_broadcast_in_dim %zero, %s4, dims = [] : (tensor<f32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %r = stablehlo.maximum %out, %z4 : tensor<?x2x4x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_conv]
  %y = stablehlo.convolution(%r, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<?x3x4x4xf32>
  return %y : tensor<?x3x4x4xf32>
}

// -----

// A chain's size read (`get_dimension_size`) for something else than its reader: no user
// of its elements; after the fold it reads the size of x, and no step of the chain is left.
// CHECK-LABEL: func.func @fold_chain_whose_size_is_read(
// CHECK-NOT:     stablehlo.multiply
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %{{.+}}
// CHECK:         stablehlo.get_dimension_size %arg0, dim = 0
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return
func.func @fold_chain_whose_size_is_read(%arg0: tensor<?x3xf32>) -> (tensor<?x2xf32>, tensor<1xi32>) {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5], [0.25, -0.75]]> : tensor<3x2xf32>
  %s = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %shape = shape.shape_of %arg0 : tensor<?x3xf32> -> tensor<2xindex>
  %s_b = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [1] : (tensor<3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %s_b : tensor<?x3xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %n = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  return %d, %n1 : tensor<?x2xf32>, tensor<1xi32>
}

// -----

// A dynamic spatial dimension before a convolution: the result's size along it is not
// the input's, so the cost rule could not compare them.
// CHECK-LABEL: func.func @no_fold_input_side_dynamic_spatial_dim(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.convolution
func.func @no_fold_input_side_dynamic_spatial_dim(%arg0: tensor<1x?x4x2xf32>) -> tensor<1x?x3x3xf32> {
  %s = stablehlo.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %n = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<1x?x4x2xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c1 = stablehlo.constant dense<1> : tensor<1xi32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %shape = stablehlo.concatenate %c1, %n1, %c4, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  %s_b = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [3] : (tensor<2xf32>, tensor<4xi32>) -> tensor<1x?x4x2xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: a dynamic dimension is contracted or windowed: only the batch may be dynamic [fold_input_affine_into_conv]
  %y = stablehlo.multiply %arg0, %s_b : tensor<1x?x4x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%y, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x?x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x?x3x3xf32>
  return %c : tensor<1x?x3x3xf32>
}

// -----

// Flax's attention projections (DenseGeneral): x[T, D] . W[D, H, Dh] + bias[H, Dh]. The
// norm's shift merges into each projection's own [H, Dh] bias, so nothing stays in front.
// CHECK-LABEL: func.func @fold_layer_norm_shift_into_head_biases(
// CHECK-NOT:     stablehlo.multiply
// CHECK:         %[[Q:.+]] = stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[BQ:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
// CHECK:         stablehlo.add %[[Q]], %[[BQ]]
// CHECK:         %[[K:.+]] = stablehlo.dot_general %arg0, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[BK:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
// CHECK:         stablehlo.add %[[K]], %[[BK]]
// CHECK-NOT:     stablehlo.add
// CHECK:         return
func.func @fold_layer_norm_shift_into_head_biases(%arg0: tensor<3x4xf32>) -> (tensor<3x2x2xf32>, tensor<3x2x2xf32>) {
  %g = stablehlo.constant dense<[1.5, 0.5, 1.0, 0.75]> : tensor<4xf32>
  %b = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %g_b = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %b_b = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %s = stablehlo.multiply %arg0, %g_b : tensor<3x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %y = stablehlo.add %s, %b_b : tensor<3x4xf32>
  %wq = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]], [[-0.5, 0.25], [0.75, -1.0]], [[1.25, 0.5], [-0.25, 0.125]]]> : tensor<4x2x2xf32>
  %wk = stablehlo.constant dense<[[[1.0, 0.5], [-0.5, 0.25]], [[0.75, -1.0], [0.5, 1.5]], [[-0.25, 0.5], [1.0, -0.75]], [[0.5, 0.25], [0.125, -0.5]]]> : tensor<4x2x2xf32>
  %bq = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %bk = stablehlo.constant dense<[[-0.1, 0.2], [-0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x2x2xf32>) -> tensor<3x2x2xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bq_b : tensor<3x2x2xf32>
  %k = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x2x2xf32>) -> tensor<3x2x2xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %kb = stablehlo.add %k, %bk_b : tensor<3x2x2xf32>
  return %qb, %kb : tensor<3x2x2xf32>, tensor<3x2x2xf32>
}

// -----

// folding would add as many activation-sized ops as it removes: x * (r * gamma) with
// r * gamma also returned; splitting gamma off would build x * r for the x * (r * gamma)
// it removes, one for one.
// CHECK-LABEL: func.func @no_fold_split_product_read_elsewhere(
// CHECK:         %[[F:.+]] = stablehlo.multiply %{{.+}}, %{{.+}} : tensor<2x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0, %[[F]]
// CHECK:         stablehlo.dot_general %[[Y]]
func.func @no_fold_split_product_read_elsewhere(%arg0: tensor<2x4xf32>, %arg1: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>) {
  %r_b = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0]> : tensor<4xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %factor = stablehlo.multiply %r_b, %scale_b : tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folding would add as many activation-sized ops as it removes [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %factor : tensor<2x4xf32>
  %wq = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %dq, %factor : tensor<2x3xf32>, tensor<2x4xf32>
}

// -----

// element type is not f16, bf16, f32 or f64: the dense layer's result is f8E4M3FN.
// CHECK-LABEL: func.func @no_fold_into_f8_result(
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0
// CHECK:         stablehlo.dot_general %[[Y]]
func.func @no_fold_into_f8_result(%arg0: tensor<2x4xf32>) -> tensor<2x3xf8E4M3FN> {
  %scale = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0]> : tensor<4xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: element type is not f16, bf16, f32 or f64 [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %scale_b : tensor<2x4xf32>
  %wq = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf8E4M3FN>
  return %dq : tensor<2x3xf8E4M3FN>
}

// -----

// weight element type is not f16, bf16, f32 or f64: f8E4M3FN weights.
// CHECK-LABEL: func.func @no_fold_into_f8_weights(
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0
// CHECK:         stablehlo.dot_general %[[Y]]
func.func @no_fold_into_f8_weights(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %scale = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0]> : tensor<4xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weight element type is not f16, bf16, f32 or f64 [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %arg0, %scale_b : tensor<2x4xf32>
  %wq = stablehlo.constant dense<1.0> : tensor<4x3xf8E4M3FN>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf8E4M3FN>) -> tensor<2x3xf32>
  return %dq : tensor<2x3xf32>
}

// -----

// per-feature values overflow their element type: with gamma an argument the chain is
// computed in the graph, in f16, where its constants 1000 * 1000 do not fit.
// CHECK-LABEL: func.func @no_fold_constants_that_overflow_in_the_graph(
// CHECK:         %[[G:.+]] = stablehlo.broadcast_in_dim %arg1
// CHECK:         %[[Y:.+]] = stablehlo.multiply %{{.+}}, %[[G]] : tensor<2x4xf16>
// CHECK:         stablehlo.dot_general %[[Y]]
func.func @no_fold_constants_that_overflow_in_the_graph(%arg0: tensor<2x4xf16>, %gamma: tensor<4xf16>) -> tensor<2x3xf16> {
  %c = stablehlo.constant dense<1000.0> : tensor<2x4xf16>
  %a = stablehlo.multiply %arg0, %c : tensor<2x4xf16>
  %b = stablehlo.multiply %a, %c : tensor<2x4xf16>
  %g = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf16>) -> tensor<2x4xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-feature values overflow their element type [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %b, %g : tensor<2x4xf16>
  %wq = stablehlo.constant dense<0.5> : tensor<4x3xf16>
  %dq = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %dq : tensor<2x3xf16>
}

// -----

// folded weights overflow their element type (weights as arguments, in the graph): the
// constant scale 1000 * 1000 does not fit the f16 weights it would multiply.
// CHECK-LABEL: func.func @no_fold_scale_that_overflows_argument_weights(
// CHECK:         %[[A:.+]] = stablehlo.multiply %arg0
// CHECK:         %[[Y:.+]] = stablehlo.multiply %[[A]]
// CHECK:         stablehlo.dot_general %[[Y]], %arg1
func.func @no_fold_scale_that_overflows_argument_weights(%arg0: tensor<2x4xf16>, %arg1: tensor<4x3xf16>) -> tensor<2x3xf16> {
  %c = stablehlo.constant dense<1000.0> : tensor<2x4xf16>
  %a = stablehlo.multiply %arg0, %c : tensor<2x4xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folded weights overflow their element type [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %a, %c : tensor<2x4xf16>
  %d = stablehlo.dot_general %y, %arg1, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %d : tensor<2x3xf16>
}

// -----

// folded bias overflows its element type (weights as arguments, in the graph): the shift
// of (x + 60000) * 2 is 120000, more than f16 holds.
// CHECK-LABEL: func.func @no_fold_shift_that_overflows_argument_weights(
// CHECK:         %[[A:.+]] = stablehlo.add %arg0
// CHECK:         %[[Y:.+]] = stablehlo.multiply %[[A]]
// CHECK:         stablehlo.dot_general %[[Y]], %arg1
func.func @no_fold_shift_that_overflows_argument_weights(%arg0: tensor<2x4xf16>, %arg1: tensor<4x3xf16>) -> tensor<2x3xf16> {
  %t = stablehlo.constant dense<60000.0> : tensor<2x4xf16>
  %a = stablehlo.add %arg0, %t : tensor<2x4xf16>
  %c = stablehlo.constant dense<2.0> : tensor<2x4xf16>
  // REPORT-DAG: input_side.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folded bias overflows its element type [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %a, %c : tensor<2x4xf16>
  %d = stablehlo.dot_general %y, %arg1, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %d : tensor<2x3xf16>
}

// The totals: the folds and skips above (a folded bias that merges into a linear op's own
// bias add is part of its fold), and one skip by fold_bn_into_linear (operand is not a
// convolution or dot_general) for each of the eleven batch norms left alone, and the chain
// left at no_fold_split_product_read_elsewhere's r * gamma.
// LARGER: 68 norms: 25 folded whole, 8 folded partly, 35 left (33 ops folded); 12 activation-sized ops removed
// DEFAULT: 68 norms: 22 folded whole, 8 folded partly, 38 left (30 ops folded); 12 activation-sized ops removed

// -----

// An RMSNorm-like scale computed in f32 from an argument before a bf16 dense layer with
// constant f32 master weights: the graph scales the master in f32 and rounds to bf16
// once, convert(W_f32 * s), never convert(W) * convert(s) in bf16.
// CHECK-LABEL: func.func @fold_narrowed_argument_scale_into_constant_master
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
// CHECK:         %[[P:.+]] = stablehlo.multiply %{{.+}}, %[[S]] : tensor<8x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<8x3xf32>) -> tensor<8x3xbf16>
// CHECK:         stablehlo.dot_general %{{.+}}, %[[K]]
func.func @fold_narrowed_argument_scale_into_constant_master(%x: tensor<4x8xf32>, %inv: tensor<8xf32>) -> tensor<4x3xbf16> {
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %n = stablehlo.multiply %x, %i : tensor<4x8xf32>
  %nb = stablehlo.convert %n : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %w = stablehlo.constant dense<[[0.1234567, -0.7654321, 1.3333333], [0.987654, 0.55555, -0.3141592], [1.1, 2.2, 3.3], [-0.123, 0.456, -0.789], [0.1, 0.2, 0.3], [0.77, 0.88, 0.99], [-1.01, 1.02, -1.03], [0.31, 0.37, 0.41]]> : tensor<8x3xf32>
  %k = stablehlo.convert %w : (tensor<8x3xf32>) -> tensor<8x3xbf16>
  %c = stablehlo.dot_general %nb, %k, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  return %c : tensor<4x3xbf16>
}

// -----

// A bias add in f32 before a narrowing convert and a bf16 dense layer: a shift alone, seen
// through the convert as a candidate (not declined as a bias add behind a relu: the
// early decline applies only behind the ops a scale passes).
// CHECK-LABEL: func.func @no_fold_bias_add_before_narrowing_convert
// CHECK:         stablehlo.add
// CHECK:         stablehlo.convert
func.func @no_fold_bias_add_before_narrowing_convert(%x: tensor<2x4xf32>) -> tensor<2x3xbf16> {
  %w1 = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.5], [0.25, 0.0, -2.0, 1.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<4x4xf32>
  %b = stablehlo.constant dense<[0.5, -0.25, 1.0, 2.0]> : tensor<4xf32>
  %c = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: a shift alone cannot pass the zeros of padding or lhs dilation [fold_input_affine_into_dot_general]
  %a = stablehlo.add %c, %bb : tensor<2x4xf32>
  %n = stablehlo.convert %a : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %w = stablehlo.constant dense<[[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.25, 0.0, -2.0], [1.0, 1.5, 0.5]]> : tensor<4x3xf32>
  %k = stablehlo.convert %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %y = stablehlo.dot_general %n, %k, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
