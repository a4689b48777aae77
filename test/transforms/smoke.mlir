// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fold_nhwc_hwio
// CHECK-NOT:     batch_norm_inference
func.func @fold_nhwc_hwio(%arg0: tensor<1x8x8x4xf32>) -> tensor<1x8x8x8xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<3x3x4x8xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  %s = stablehlo.constant dense<2.0> : tensor<8xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
