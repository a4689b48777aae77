// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=max-iterations=2 --split-input-file | FileCheck %s

// The greedy driver sweeps the function until a sweep changes nothing; every sweep is a
// look at every op. A fold leaves nothing it built unread, so two sweeps do: the folds,
// then the one that confirms. A chain folded whole in the graph realizes the shift of
// each of its steps, the subtract's -mean among them, which the bias offset - mean * s
// reads past: left for the driver, the negation was erased in a second sweep, and a
// third was needed ("failed to converge" with max-iterations=2).
// CHECK-LABEL: func.func @chain_of_arguments_folds_in_two_sweeps
// CHECK-NOT:     stablehlo.negate
// CHECK:         %[[MS:.+]] = stablehlo.multiply %arg2, %arg3 : tensor<8xf32>
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.subtract %arg4, %[[MS]] : tensor<8xf32>
// CHECK-NOT:     stablehlo.negate
// CHECK:         return
func.func @chain_of_arguments_folds_in_two_sweeps(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x8xf32>, %mean: tensor<8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %0 = stablehlo.subtract %c, %m : tensor<1x8x8x8xf32>
  %1 = stablehlo.multiply %0, %sb : tensor<1x8x8x8xf32>
  %2 = stablehlo.add %1, %bb : tensor<1x8x8x8xf32>
  return %2 : tensor<1x8x8x8xf32>
}

// -----

// A batch norm folded into the next layer rebuilds it (new weights) with a bias add, into
// which the bias before that layer, L + b, may now fold (moving it onto the layer's
// larger result alone was refused). The driver visits the rebuilt layer again in the
// same sweep, as it does a layer a fold keeps: no third sweep for it.
// CHECK-LABEL: func.func @bias_before_a_rebuilt_layer_folds_in_the_same_sweep
// CHECK:         stablehlo.convolution
// CHECK-NOT:     stablehlo.add
// CHECK:         %[[L:.+]] = stablehlo.convolution
// CHECK-NEXT:    stablehlo.constant
// CHECK-NEXT:    %[[B:.+]] = stablehlo.broadcast_in_dim
// CHECK-NEXT:    stablehlo.add %[[L]], %[[B]]
// CHECK-NEXT:    return
func.func @bias_before_a_rebuilt_layer_folds_in_the_same_sweep(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x8xf32> {
  %w7 = stablehlo.constant dense<0.5> : tensor<3x3x4x4xf32>
  %w8 = stablehlo.constant dense<0.25> : tensor<1x1x4x8xf32>
  %s4 = stablehlo.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
  %t4 = stablehlo.constant dense<[0.1, -0.2, 0.3, 0.4]> : tensor<4xf32>
  %m4 = stablehlo.constant dense<[0.5, 0.25, -0.5, 1.0]> : tensor<4xf32>
  %v4 = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  %s8 = stablehlo.constant dense<[1.0, 2.0, 0.5, 1.5, 1.0, 2.0, 0.5, 1.5]> : tensor<8xf32>
  %t8 = stablehlo.constant dense<[0.1, -0.2, 0.3, 0.4, 0.1, -0.2, 0.3, 0.4]> : tensor<8xf32>
  %m8 = stablehlo.constant dense<[0.5, 0.25, -0.5, 1.0, 0.5, 0.25, -0.5, 1.0]> : tensor<8xf32>
  %v8 = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0, 1.0, 4.0, 0.25, 2.0]> : tensor<8xf32>
  %c7 = stablehlo.convolution(%x, %w7) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x8x8x4xf32>
  %b7 = "stablehlo.batch_norm_inference"(%c7, %s4, %t4, %m4, %v4) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %c8 = stablehlo.convolution(%b7, %w8) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x8x8x8xf32>
  %b8 = "stablehlo.batch_norm_inference"(%c8, %s8, %t8, %m8, %v8) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  return %b8 : tensor<1x8x8x8xf32>
}
