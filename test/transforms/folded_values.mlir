// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s

// Folded constants, value by value. The other lit files check structure and leave values
// to the numerical tests; here each case is small enough to fold by hand, and its values
// are chosen so that the folded constants are exact (f32) or pinned to 13 digits (f64,
// irrational), so that a wrong factor, a wrong axis or a step in float32 shows up in lit.
// The derivation of each value is in the comment above its case.

// bn(conv(x, K) + b), epsilon 0: s = scale / sqrt(var) = [1 / 2, 1.5 / 0.5] = [0.5, 3].
// K (HWIO, rows i, columns o) [[1, -2], [0.5, 4]] * s along o = [[0.5, -6], [0.25, 12]];
// t = offset + (b - mean) * s = [0.25 + (1 - 3) * 0.5, -0.5 + (-1 - 1) * 3] = [-0.75, -6.5].
// CHECK-LABEL: func.func @fold_bn_exact(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}5.000000e-01, -6.000000e+00], [2.500000e-01, 1.200000e+01]]]]> : tensor<1x1x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[T:.+]] = stablehlo.constant dense<[-7.500000e-01, -6.500000e+00]> : tensor<2xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bn_exact(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %k = stablehlo.constant dense<[[[[1.0, -2.0], [0.5, 4.0]]]]> : tensor<1x1x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %b = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = stablehlo.add %c, %bb : tensor<1x2x2x2xf32>
  %scale = stablehlo.constant dense<[1.0, 1.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[3.0, 1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %bn = "stablehlo.batch_norm_inference"(%y, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %bn : tensor<1x2x2x2xf32>
}


// -----

// f64, s = [1 / sqrt(2), 1 / sqrt(3)] = [0.70710678118654752.., 0.57735026918962576..]:
// W [[1, 1], [3, -1]] * s along columns = [[0.7071.., 0.5773..], [2.1213203435596.., -0.5773..]];
// t = -mean * s = [-0.7071.., 0]. 13 digits: a square root taken in float32 is off in the 8th.
// CHECK-LABEL: func.func @fold_f64_irrational(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}0.7071067811865{{[0-9]*}}, 0.5773502691896{{[0-9]*}}], [2.121320343559{{[0-9]*}}, -0.5773502691896{{[0-9]*}}]]> : tensor<2x2xf64>
// CHECK:         %[[M:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[T:.+]] = stablehlo.constant dense<[-0.7071067811865{{[0-9]*}}, 0.000000e+00]> : tensor<2xf64>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[M]], %[[B]]
// CHECK:         return %[[Y]]
func.func @fold_f64_irrational(%arg0: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %w = stablehlo.constant dense<[[1.0, 1.0], [3.0, -1.0]]> : tensor<2x2xf64>
  %mm = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %scale = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf64>
  %offset = stablehlo.constant dense<[0.0, 0.0]> : tensor<2xf64>
  %mean = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf64>
  %var = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf64>
  %bn = "stablehlo.batch_norm_inference"(%mm, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<2x2xf64>
  return %bn : tensor<2x2xf64>
}


// -----

// Equinox's (x . W - mean) / std: W [[1, 2], [-1, 0.5], [4, -3]] / std [4, 0.5] along columns
// = [[0.25, 4], [-0.25, 1], [1, -6]]; t = -mean / std = [-1 / 4, 2 / 0.5] = [-0.25, 4].
// CHECK-LABEL: func.func @fold_equinox_divide(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}2.500000e-01, 4.000000e+00], [-2.500000e-01, 1.000000e+00], [1.000000e+00, -6.000000e+00]]> : tensor<3x2xf32>
// CHECK:         %[[M:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[T:.+]] = stablehlo.constant dense<[-2.500000e-01, 4.000000e+00]> : tensor<2xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[M]], %[[B]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_equinox_divide(%arg0: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[1.0, 2.0], [-1.0, 0.5], [4.0, -3.0]]> : tensor<3x2xf32>
  %mm = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %mean = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %meanb = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  %c = stablehlo.subtract %mm, %meanb : tensor<2x2xf32>
  %std = stablehlo.constant dense<[4.0, 0.5]> : tensor<2xf32>
  %stdb = stablehlo.broadcast_in_dim %std, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  %n = stablehlo.divide %c, %stdb : tensor<2x2xf32>
  return %n : tensor<2x2xf32>
}


// -----

// Input side: conv((x - mean) / std, K) with s = 1 / std = [0.5, 4], t = -mean / std = [-0.5, 8].
// K (HWIO, one output) times s along i: input 0 [1, -1, 3, 0.5] -> [0.5, -0.5, 1.5, 0.25],
// input 1 [2, 0.5, -4, 1] -> [8, 2, -16, 4]; the bias sum(K * t) over the window and inputs
// = -0.5 * 3.5 + 8 * -0.5 = -5.75.
// CHECK-LABEL: func.func @fold_input_normalization(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}5.000000e-01], [8.000000e+00]], {{\[\[}}-5.000000e-01], [2.000000e+00]]], {{\[\[\[}}1.500000e+00], [-1.600000e+01]], {{\[\[}}2.500000e-01], [4.000000e+00]]]]> : tensor<2x2x2x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[T:.+]] = stablehlo.constant dense<-5.750000e+00> : tensor<1xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_input_normalization(%arg0: tensor<1x3x3x2xf32>) -> tensor<1x2x2x1xf32> {
  %mean = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %meanb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %c = stablehlo.subtract %arg0, %meanb : tensor<1x3x3x2xf32>
  %std = stablehlo.constant dense<[2.0, 0.25]> : tensor<2xf32>
  %stdb = stablehlo.broadcast_in_dim %std, dims = [3] : (tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %n = stablehlo.divide %c, %stdb : tensor<1x3x3x2xf32>
  %k = stablehlo.constant dense<[[[[1.0], [2.0]], [[-1.0], [0.5]]], [[[3.0], [-4.0]], [[0.5], [1.0]]]]> : tensor<2x2x2x1xf32>
  %y = stablehlo.convolution(%n, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x2xf32>, tensor<2x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %y : tensor<1x2x2x1xf32>
}
