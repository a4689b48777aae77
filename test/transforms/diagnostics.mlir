// RUN: stablehlo-bnfold-opt %s -stablehlo-fold-batch-norm -split-input-file -verify-diagnostics -o /dev/null

// --verify-diagnostics: every fold and every skip of the report is a remark at its op, and
// every located error an error; each must be expected here, and each expectation met
// (a missing or extra one exits 1, which fails this file).

// Folded into a convolution: a remark with the report's words.
func.func @fold_nhwc_hwio(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %s = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  // expected-remark@+1 {{folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]}}
  %y = "stablehlo.batch_norm_inference"(%c, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The convolution result is also returned: a remark with the reason.
func.func @no_fold_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %s = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  // expected-remark@+1 {{not folded stablehlo.batch_norm_inference: producer result has other users}}
  %y = "stablehlo.batch_norm_inference"(%c, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// An error in one chunk is checked like a remark; the other chunks still fold.
func.func @undeclared_value(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  %y = stablehlo.add %x, %z : tensor<2xf32>
  return %y : tensor<2xf32>
}
