// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file \
// RUN:   | FileCheck --check-prefix=CONST %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefixes=REPORT,LARGER %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefixes=REPORT,DEFAULT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-weight-arguments=false --split-input-file \
// RUN:   --report 2>&1 >/dev/null | FileCheck --check-prefix=CONSTREPORT %s

// Weights passed as arguments at these toy sizes have more elements than the activations;
// fold-larger-weight-arguments=true keeps such folds here to test their mechanics. The
// default's cost rule is tested in weight_cost.mlir.

// 1-D convolution, [b, 0, f]x[0, i, o]->[b, 0, f].
// CHECK-LABEL: func.func @fold_conv1d_nwc_wio(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f]
// CHECK-SAME:      window = {pad = {{\[\[}}1, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x5x2xf32>, tensor<3x2x3xf32>) -> tensor<1x5x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [2] : (tensor<3xf32>) -> tensor<1x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x5x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x5x3xf32>
func.func @fold_conv1d_nwc_wio(%arg0: tensor<1x5x2xf32>) -> tensor<1x5x3xf32> {
  %k = stablehlo.constant dense<[[[0.625, 0.625, 0.5], [1.0, -1.0, -0.75]], [[0.625, 1.0, -0.5], [-0.375, 0.75, -0.125]], [[-0.5, 0.75, -0.5], [-0.25, 0.25, 0.125]]]> : tensor<3x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x2xf32>, tensor<3x2x3xf32>) -> tensor<1x5x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 2 : i64} : (tensor<1x5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x5x3xf32>
  return %y : tensor<1x5x3xf32>
}

// -----

// 2-D convolution, NHWC x HWIO.
// CHECK-LABEL: func.func @fold_nhwc_hwio(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_nhwc_hwio(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// 3-D convolution, NDHWC x DHWIO.
// CHECK-LABEL: func.func @fold_conv3d_ndhwc_dhwio(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x4x2xf32>, tensor<2x2x2x2x3xf32>) -> tensor<1x4x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [4] : (tensor<3xf32>) -> tensor<1x4x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x4x3xf32>
func.func @fold_conv3d_ndhwc_dhwio(%arg0: tensor<1x4x4x4x2xf32>) -> tensor<1x4x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[[0.625, -0.875, -0.625], [-0.5, -0.625, 0.625]], [[0.75, 0.125, -1.0], [-0.875, -0.375, -0.125]]], [[[0.25, 0.625, -0.5], [-0.75, 0.375, 0.5]], [[-1.0, -0.875, -0.125], [-0.25, 0.875, 0.625]]]], [[[[-0.125, -0.125, 0.375], [0.125, -0.75, 0.5]], [[0.5, 1.0, 0.625], [-0.5, -0.375, 0.375]]], [[[0.375, 0.375, 0.75], [-0.5, 0.875, -1.0]], [[-0.875, 1.0, 1.0], [-0.375, -0.75, -0.375]]]]]> : tensor<2x2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f], window = {pad = [[0, 1], [0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4x2xf32>, tensor<2x2x2x2x3xf32>) -> tensor<1x4x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 4 : i64} : (tensor<1x4x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x4x3xf32>
  return %y : tensor<1x4x4x4x3xf32>
}

// -----

// 2-D convolution, NCHW x OIHW: the feature is dimension 1.
// CHECK-LABEL: func.func @fold_nchw_oihw(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x3x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x4x4xf32>
func.func @fold_nchw_oihw(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.5, 1.0], [0.75, 0.625]], [[0.875, 1.0], [1.0, -0.875]]], [[[-0.125, 0.25], [-0.5, -0.25]], [[0.25, 0.625], [0.125, -0.75]]], [[[0.375, 0.75], [-0.625, 0.125]], [[-0.375, 0.875], [-0.875, 0.625]]]]> : tensor<3x2x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// 3-D convolution, NCDHW x OIDHW.
// CHECK-LABEL: func.func @fold_conv3d_ncdhw_oidhw(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x3x4x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x4x4x4xf32>
func.func @fold_conv3d_ncdhw_oidhw(%arg0: tensor<1x2x4x4x4xf32>) -> tensor<1x3x4x4x4xf32> {
  %k = stablehlo.constant dense<[[[[[0.375, 0.625], [-1.0, 0.625]], [[-0.125, 0.625], [0.25, -0.5]]], [[[1.0, -1.0], [-0.5, -0.25]], [[0.125, -0.25], [-0.75, -1.0]]]], [[[[-1.0, -1.0], [-0.75, 1.0]], [[-0.625, 0.375], [0.5, -0.625]]], [[[-0.5, -0.125], [-0.5, 1.0]], [[-0.625, 0.875], [0.625, 0.75]]]], [[[[-0.875, -0.25], [0.25, 0.625]], [[0.375, 0.375], [0.375, -0.875]]], [[[1.0, 0.125], [0.875, -0.5]], [[-0.25, 0.75], [-0.625, -0.875]]]]]> : tensor<3x2x2x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2], window = {pad = [[0, 1], [0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x4x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3x4x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4x4xf32>
  return %y : tensor<1x3x4x4x4xf32>
}

// -----

// Kernel OHWI: the output feature is kernel dimension 0.
// CHECK-LABEL: func.func @fold_nhwc_ohwi(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[o, 0, 1, i]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<3x2x2x2xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_nhwc_ohwi(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.125, 0.125], [0.625, -0.375]], [[1.0, -0.25], [0.375, -0.25]]], [[[-0.125, 1.0], [-0.625, 0.25]], [[-0.125, 0.375], [0.5, -0.375]]], [[[0.375, 0.375], [-0.125, -0.75]], [[0.25, -1.0], [0.875, 0.75]]]]> : tensor<3x2x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[o, 0, 1, i]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x2x2x2xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Kernel IOHW: the output feature is kernel dimension 1.
// CHECK-LABEL: func.func @fold_nchw_iohw(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x3x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x2x4x4xf32>, tensor<2x3x2x2xf32>) -> tensor<1x3x4x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x3x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x4x4xf32>
func.func @fold_nchw_iohw(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[1.0, 0.25], [0.375, 0.875]], [[0.125, 0.625], [0.75, -0.625]], [[-1.0, -0.375], [-0.5, 0.75]]], [[[0.875, -1.0], [0.625, 0.625]], [[-0.75, 0.625], [-0.75, -0.125]], [[0.625, -0.375], [-0.375, -0.5]]]]> : tensor<2x3x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x3x2x2xf32>) -> tensor<1x3x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Unusual permutation: [f, 0, 1, b]x[o, 0, 1, i]->[0, b, 1, f].
// CHECK-LABEL: func.func @fold_chwn_ohwi_to_hnwc(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [f, 0, 1, b]x[o, 0, 1, i]->[0, b, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<2x4x5x1xf32>, tensor<3x2x2x2xf32>) -> tensor<4x1x5x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<4x1x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<4x1x5x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<4x1x5x3xf32>
func.func @fold_chwn_ohwi_to_hnwc(%arg0: tensor<2x4x5x1xf32>) -> tensor<4x1x5x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -0.375], [-0.625, 1.0]], [[-0.75, -0.375], [0.25, 0.625]]], [[[0.25, 0.75], [-1.0, -0.25]], [[0.125, -0.125], [-0.25, -0.25]]], [[[-1.0, -0.875], [0.125, 0.625]], [[1.0, -0.5], [0.75, -0.5]]]]> : tensor<3x2x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [f, 0, 1, b]x[o, 0, 1, i]->[0, b, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x5x1xf32>, tensor<3x2x2x2xf32>) -> tensor<4x1x5x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<4x1x5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x1x5x3xf32>
  return %y : tensor<4x1x5x3xf32>
}

// -----

// Unusual permutation with the output feature first: [b, 1, f, 0]x[1, o, i, 0]->[f, 1, b, 0].
// CHECK-LABEL: func.func @fold_feature_first_output(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x3x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 1, f, 0]x[1, o, i, 0]->[f, 1, b, 0]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x5x2x4xf32>, tensor<2x3x2x2xf32>) -> tensor<3x5x1x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [0] : (tensor<3xf32>) -> tensor<3x5x1x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<3x5x1x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<3x5x1x4xf32>
func.func @fold_feature_first_output(%arg0: tensor<1x5x2x4xf32>) -> tensor<3x5x1x4xf32> {
  %k = stablehlo.constant dense<[[[[-0.125, 0.75], [1.0, -0.5]], [[-0.875, 0.25], [0.375, 0.625]], [[0.25, 0.5], [0.875, 0.875]]], [[[0.875, 0.75], [0.5, 0.875]], [[-1.0, -1.0], [0.625, -0.125]], [[0.5, 0.625], [0.875, -0.875]]]]> : tensor<2x3x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 1, f, 0]x[1, o, i, 0]->[f, 1, b, 0], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x2x4xf32>, tensor<2x3x2x2xf32>) -> tensor<3x5x1x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 0 : i64} : (tensor<3x5x1x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3x5x1x4xf32>
  return %y : tensor<3x5x1x4xf32>
}

// -----

// feature_group_count = 2: output feature o still reads kernel slice o only.
// CHECK-LABEL: func.func @fold_grouped(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x6xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
// CHECK-SAME:      : (tensor<1x4x4x4xf32>, tensor<2x2x2x6xf32>) -> tensor<1x4x4x6xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<6xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<6xf32>) -> tensor<1x4x4x6xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x6xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x6xf32>
func.func @fold_grouped(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x4x4x6xf32> {
  %k = stablehlo.constant dense<[[[[0.625, 1.0, -0.5, -0.625, 0.625, 0.75], [0.625, -0.75, 0.75, 0.625, -0.75, -0.75]], [[-0.25, 0.375, -0.25, 0.75, -1.0, -0.125], [0.625, 1.0, -0.5, 0.75, -0.875, -0.375]]], [[[0.5, 0.125, 0.875, 0.5, 0.875, 0.75], [-0.75, 0.875, 0.75, -0.75, 1.0, 0.5]], [[-0.375, -0.75, -0.25, 0.875, 0.625, -0.625], [0.625, 0.75, 0.25, -0.375, -0.875, 1.0]]]]> : tensor<2x2x2x6xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<2x2x2x6xf32>) -> tensor<1x4x4x6xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75, 1.25, 1.0]> : tensor<6xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0, -0.5, 0.25]> : tensor<6xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0, 2.0, -0.5]> : tensor<6xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0, 0.5, 1.0]> : tensor<6xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}

// -----

// Depthwise (feature_group_count = input features) with channel multiplier 2.
// CHECK-LABEL: func.func @fold_depthwise(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x1x4xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x4xf32>
func.func @fold_depthwise(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32> {
  %k = stablehlo.constant dense<[[[[-0.75, -0.75, 0.625, 0.625]], [[0.25, 0.25, 0.5, -1.0]]], [[[0.625, -0.75, -0.25, 0.875]], [[0.125, -0.875, 0.125, -0.75]]]]> : tensor<2x2x1x4xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x1x4xf32>) -> tensor<1x4x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// batch_group_count = 2 (a weight-gradient style convolution).
// CHECK-LABEL: func.func @fold_batch_group_count(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x4xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 2 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<2x4x4x2xf32>, tensor<2x2x2x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x4xf32>
func.func @fold_batch_group_count(%arg0: tensor<2x4x4x2xf32>) -> tensor<1x4x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.25, -0.5, 1.0, 1.0], [-0.875, -0.625, -0.625, -0.625]], [[0.125, -0.375, 0.625, -0.625], [1.0, 0.375, 0.375, -0.875]]], [[[-0.75, 0.875, -0.375, 0.75], [0.625, -1.0, 0.625, 0.125]], [[-0.125, -0.875, 0.5, -0.5], [-0.375, -0.125, -0.375, -0.125]]]]> : tensor<2x2x2x4xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<2x4x4x2xf32>, tensor<2x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Stride 2 with padding.
// CHECK-LABEL: func.func @fold_strided_padded(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {stride = [2, 2], pad = {{\[\[}}1, 1], [1, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x5x5x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x3x3x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x3x3xf32>
func.func @fold_strided_padded(%arg0: tensor<1x5x5x2xf32>) -> tensor<1x3x3x3xf32> {
  %k = stablehlo.constant dense<[[[[0.875, 0.75, 0.625], [0.75, -0.875, 0.625]], [[1.0, -0.5, -0.75], [-0.875, 0.625, 1.0]]], [[[0.25, 0.25, 0.625], [-1.0, 0.75, 0.875]], [[-0.75, 1.0, 0.75], [-0.5, 0.625, 0.625]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x3x3x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x3x3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// Transposed convolution: lhs dilation 2.
// CHECK-LABEL: func.func @fold_conv_transpose(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}1, 1], [1, 1]], lhs_dilate = [2, 2]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x3x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x6x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x6x6x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x6x6x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x6x6x3xf32>
func.func @fold_conv_transpose(%arg0: tensor<1x3x3x2xf32>) -> tensor<1x6x6x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.75, 0.75, 0.375], [-0.25, -0.875, 0.375]], [[-0.375, 0.75, -0.375], [0.25, -0.625, 0.125]]], [[[-0.875, 0.5, -0.875], [0.5, 0.5, -0.125]], [[0.625, 0.125, 0.75], [0.5, 0.875, -0.875]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x6x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x6x6x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x6x6x3xf32>
  return %y : tensor<1x6x6x3xf32>
}

// -----

// Atrous convolution: rhs dilation 2.
// CHECK-LABEL: func.func @fold_rhs_dilation(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}1, 1], [1, 1]], rhs_dilate = [2, 2]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_rhs_dilation(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.875, 0.375, 0.375], [0.625, -0.5, -0.375]], [[-0.625, -1.0, -0.125], [0.125, 1.0, -0.75]]], [[[1.0, 0.5, -0.125], [-0.375, 0.375, -0.125]], [[-0.5, 1.0, -0.625], [0.625, -0.875, 0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Window reversal on both spatial dimensions.
// CHECK-LABEL: func.func @fold_window_reversal(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]], reverse = [true, true]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_window_reversal(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.125, 0.125, 0.75], [-0.125, 0.625, -0.875]], [[0.625, -0.375, -1.0], [0.25, -0.125, -1.0]]], [[[-0.375, 0.75, -0.875], [0.75, 0.875, -1.0]], [[-0.75, 0.625, -1.0], [-0.625, 0.625, 0.375]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]], reverse = [true, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Grouped transposed convolution: lhs dilation, window reversal and feature_group_count = 2.
// CHECK-LABEL: func.func @fold_conv_transpose_grouped(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x6xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {stride = [1, 1], pad = {{\[\[}}1, 1], [1, 1]], lhs_dilate = [2, 2], rhs_dilate = [1, 1], reverse = [true, true]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
// CHECK-SAME:      : (tensor<1x3x3x4xf32>, tensor<2x2x2x6xf32>) -> tensor<1x6x6x6xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<6xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<6xf32>) -> tensor<1x6x6x6xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x6x6x6xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x6x6x6xf32>
func.func @fold_conv_transpose_grouped(%arg0: tensor<1x3x3x4xf32>) -> tensor<1x6x6x6xf32> {
  %k = stablehlo.constant dense<[[[[0.5, 0.75, -0.875, -0.75, -0.125, 0.125], [0.5, -0.25, -1.0, -0.625, -0.125, -0.25]], [[0.875, -0.125, 0.25, 0.25, -0.875, 0.5], [-1.0, -1.0, 0.125, -0.5, -0.25, 0.25]]], [[[-0.75, -0.875, 0.375, 1.0, 0.375, 0.75], [-0.125, -1.0, 0.375, 0.125, 0.5, 0.25]], [[0.625, -1.0, 0.375, -0.625, 0.625, -0.75], [0.125, -0.125, -0.25, 0.125, -0.75, -0.125]]]]> : tensor<2x2x2x6xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2], rhs_dilate = [1, 1], reverse = [true, true]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x3x3x4xf32>, tensor<2x2x2x6xf32>) -> tensor<1x6x6x6xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75, 1.25, 1.0]> : tensor<6xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0, -0.5, 0.25]> : tensor<6xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0, 2.0, -0.5]> : tensor<6xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0, 0.5, 1.0]> : tensor<6xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x6x6x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %y : tensor<1x6x6x6xf32>
}

// -----

// precision_config survives the rewrite.
// CHECK-LABEL: func.func @fold_precision_config(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_precision_config(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.875, -0.25, -0.625], [0.5, 0.75, -0.5]], [[-0.25, -0.875, 1.0], [1.0, 0.375, 0.125]]], [[[0.125, 0.25, 0.5], [0.125, 0.625, 0.625]], [[-0.25, -0.75, 0.625], [-0.375, 0.375, 0.5]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// f64 throughout.
// CHECK-LABEL: func.func @fold_f64(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf64>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf64>, tensor<2x2x2x3xf64>) -> tensor<1x4x4x3xf64>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf64>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf64>) -> tensor<1x4x4x3xf64>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf64>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf64>
func.func @fold_f64(%arg0: tensor<1x4x4x2xf64>) -> tensor<1x4x4x3xf64> {
  %k = stablehlo.constant dense<[[[[0.25, -0.125, -0.25], [0.875, -0.25, -0.5]], [[0.75, -0.875, -0.125], [-0.375, -1.0, 0.5]]], [[[1.0, 0.625, -0.375], [0.125, 0.75, -0.375]], [[-0.125, 0.875, -0.625], [0.875, 0.375, -0.125]]]]> : tensor<2x2x2x3xf64>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf64>, tensor<2x2x2x3xf64>) -> tensor<1x4x4x3xf64>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf64>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf64>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf64>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf64>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<1x4x4x3xf64>
  return %y : tensor<1x4x4x3xf64>
}

// -----

// f16 with a small kernel (24 elements, printed as decimals).
// CHECK-LABEL: func.func @fold_f16_small(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf16>) -> tensor<1x4x4x3xf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf16>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf16>
func.func @fold_f16_small(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<[[[[0.875, -0.5, -0.5], [-0.125, 0.875, -0.75]], [[-0.5, 0.625, -0.5], [-0.25, -0.375, -0.875]]], [[[-1.0, -0.875, 0.375], [1.0, 0.875, 0.375]], [[0.875, -0.125, 0.125], [0.25, -0.25, -0.5]]]]> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf16>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// f16 with a large kernel (144 elements, printed as hex).
// CHECK-LABEL: func.func @fold_f16_large(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<"0x{{[0-9A-F]+}}"> : tensor<3x3x4x4xf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}1, 1], [1, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x4xf16>, tensor<3x3x4x4xf16>) -> tensor<1x4x4x4xf16>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4xf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<4xf16>) -> tensor<1x4x4x4xf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x4xf16>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x4xf16>
func.func @fold_f16_large(%arg0: tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16> {
  %k = stablehlo.constant dense<"0x00B6003900B4003400B0003800B600BB00B600340034003C00B800B0003C00BB0036003C003B0036003B00B9003800360039003C003A00B9003C003A00B40036003900B900B800B900B0003C00B400B6003B00B000BB0036003800B0003C00BC003A00B80039003900360038003B0034003400B000BC00B900BB003900BB00B900B9003800B6003900360030003900B4003C00B9003900BA0039003400B800B800BA00BC00B800B90036003B00BC003800B40030003C00B400BA0039003B00B80030003400BA00BC00BC00340034003C0034003800B000BB00B60034003600B600BA003B00B900BC00B400BC003600BB00B600B60038003B0036003000B90036003800BC003000BA00BB00B400390034003B003800B6003000B800B8003600B9"> : tensor<3x3x4x4xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4xf16>, tensor<3x3x4x4xf16>) -> tensor<1x4x4x4xf16>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xf16>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf16>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<1x4x4x4xf16>
  return %y : tensor<1x4x4x4xf16>
}

// -----

// bf16 with a small kernel (24 elements, printed as decimals).
// CHECK-LABEL: func.func @fold_bf16_small(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xbf16>, tensor<2x2x2x3xbf16>) -> tensor<1x4x4x3xbf16>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xbf16>) -> tensor<1x4x4x3xbf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xbf16>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xbf16>
func.func @fold_bf16_small(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %k = stablehlo.constant dense<[[[[0.625, -0.25, 0.375], [-0.625, 1.0, -0.875]], [[-0.5, 0.375, -1.0], [-0.125, -0.75, 1.0]]], [[[-0.375, 0.75, -0.375], [0.75, -1.0, -1.0]], [[-0.5, 0.125, -0.75], [0.25, 0.625, -1.0]]]]> : tensor<2x2x2x3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<2x2x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xbf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xbf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xbf16>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xbf16>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xbf16>, tensor<3xbf16>, tensor<3xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// bf16 with a large kernel (144 elements, printed as hex).
// CHECK-LABEL: func.func @fold_bf16_large(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<"0x{{[0-9A-F]+}}"> : tensor<3x3x4x4xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}1, 1], [1, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x4xbf16>, tensor<3x3x4x4xbf16>) -> tensor<1x4x4x4xbf16>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<4xbf16>) -> tensor<1x4x4x4xbf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x4xbf16>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x4xbf16>
func.func @fold_bf16_large(%arg0: tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xbf16> {
  %k = stablehlo.constant dense<"0x80BFC03E00BE803E00BF40BF803E60BF40BFC03EC03E403F00BE20BF20BF20BF60BF003F003F203FC03E00BE003FC0BE203F60BF20BF00BE40BFC0BE80BF80BE40BF003EC0BEC03E60BF803E80BF003F00BF80BF00BFC03E00BF003E803F403F60BF603F00BE80BF20BF403F203F00BF40BF803E00BE003F80BF403F003E603F80BF803E60BF403F403F203F40BF20BF003E40BF003E203F203F003F803F00BE80BEC03E00BF40BFC0BE803F803F203F203F403F80BF003F80BF203F60BF80BE803F60BF60BF00BE803EC0BE80BE80BE20BF803F00BFC0BE00BF203F003F40BF403F803E003EC0BE60BF00BF80BF80BE80BE603F40BF003E803E203F203F203F603F203F80BE60BF80BE40BF00BE003F403F00BE203F20BF203F803F80BE00BF"> : tensor<3x3x4x4xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4xbf16>, tensor<3x3x4x4xbf16>) -> tensor<1x4x4x4xbf16>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xbf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xbf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xbf16>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xbf16>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<1x4x4x4xbf16>
  return %y : tensor<1x4x4x4xbf16>
}

// -----

// A splat kernel becomes a per-channel (non-splat) kernel.
// CHECK-LABEL: func.func @fold_splat_kernel(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
// CHECK-SAME:      window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK-SAME:      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
// CHECK-SAME:      : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_splat_kernel(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Convolution + per-channel bias, add(conv, broadcast_in_dim(bias)): the bias moves into the new one.
// CHECK-LABEL: func.func @fold_conv_bias_add(
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim}}
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim}}
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_bias_add(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.75, -0.75, 0.625], [0.625, 0.25, 0.25]], [[0.5, -1.0, 0.625], [-0.75, -0.25, 0.875]]], [[[0.125, -0.875, 0.125], [-0.75, 0.5, 1.0]], [[1.0, 0.25, 0.75], [-0.25, -0.75, 0.625]]]]> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The bias on the left of the add, add(broadcast_in_dim(bias), conv), NCHW.
// CHECK-LABEL: func.func @fold_conv_bias_add_commuted(
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim}}
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x2x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim}}
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x3x4x4xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x4x4xf32>
func.func @fold_conv_bias_add_commuted(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.25, -0.5], [1.0, 1.0]], [[-0.875, -0.625], [-0.625, -0.625]]], [[[0.125, -0.375], [0.625, -0.625]], [[1.0, 0.375], [0.375, -0.875]]], [[[-0.75, 0.875], [-0.375, 0.75]], [[0.625, -1.0], [0.625, 0.125]]]]> : tensor<3x2x2x2xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %a = stablehlo.add %b, %c : tensor<1x3x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// The bias as Flax and TF write it: reshape to 1x1x1xC, then broadcast_in_dim.
// CHECK-LABEL: func.func @fold_conv_bias_reshaped(
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim|reshape}}
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     {{stablehlo.add|broadcast_in_dim|reshape}}
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_bias_reshaped(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.875, 0.75, 0.625], [0.75, -0.875, 0.625]], [[1.0, -0.5, -0.75], [-0.875, 0.625, 1.0]]], [[[0.25, 0.25, 0.625], [-1.0, 0.75, 0.875]], [[-0.75, 1.0, 0.75], [-0.5, 0.625, 0.625]]]]> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %r = stablehlo.reshape %bias : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A uniform bias, a splat constant of the full result type, is per-channel too.
// CHECK-LABEL: func.func @fold_conv_bias_splat(
// CHECK-NOT:     stablehlo.add
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.add
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_bias_splat(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.75, 0.75, 0.375], [-0.25, -0.875, 0.375]], [[-0.375, 0.75, -0.375], [0.25, -0.625, 0.125]]], [[[-0.875, 0.5, -0.875], [0.5, 0.5, -0.125]], [[0.625, 0.125, 0.75], [0.5, 0.875, -0.875]]]]> : tensor<2x2x2x3xf32>
  %bias = stablehlo.constant dense<0.75> : tensor<1x4x4x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %bias : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Dense layer: dot_general with rhs [K, N], feature_index = last dim; precision survives.
// CHECK-LABEL: func.func @fold_dot_general_dense(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_dense(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[-0.375, 0.625, -0.25], [0.25, -0.125, 0.5], [-0.375, -0.875, -0.375], [0.25, 0.25, 1.0]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Dense layer with a bias: add(dot_general, broadcast_in_dim(bias)).
// CHECK-LABEL: func.func @fold_dot_general_bias_add(
// CHECK-NOT:     stablehlo.add
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     stablehlo.add
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_bias_add(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.625, -0.25, 0.375], [-0.625, 1.0, -0.875], [-0.5, 0.375, -1.0], [-0.125, -0.75, 1.0]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %a = stablehlo.add %d, %b : tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// dot_general with batching dims: result [batch, lhs free, rhs free].
// CHECK-LABEL: func.func @fold_dot_general_batching(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x4x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.dot_general %arg0, %[[W]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<2x5x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x5x3xf32>
func.func @fold_dot_general_batching(%arg0: tensor<2x5x4xf32>) -> tensor<2x5x3xf32> {
  %w = stablehlo.constant dense<[[[-1.0, 0.375, -0.125], [0.25, -0.5, -0.75], [0.25, -0.875, -0.75], [0.375, 0.375, 0.75]], [[-0.125, -0.625, -0.625], [-0.625, -0.875, 0.5], [0.5, 0.625, 0.375], [-0.125, 0.5, -0.375]]]> : tensor<2x4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 2 : i64} : (tensor<2x5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// Weights as the lhs: the feature is the lhs free dimension (result dim 0).
// CHECK-LABEL: func.func @fold_dot_general_weights_lhs(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<3x4xf32>
// CHECK:         %[[C:.+]] = stablehlo.dot_general %[[W]], %arg0, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<3x5xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<3x5xf32>
func.func @fold_dot_general_weights_lhs(%arg0: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %w = stablehlo.constant dense<[[-0.25, -0.375, 0.5, -0.25], [0.625, 0.125, -0.75, 0.625], [-0.25, 0.125, 0.125, 0.125]]> : tensor<3x4xf32>
  %d = stablehlo.dot_general %w, %arg0, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 0 : i64} : (tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// Two conv + batch norm pairs in a row, both folded.
// CHECK-LABEL: func.func @fold_two_bns(
// CHECK-DAG:     %[[K1:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C1:.+]] = stablehlo.convolution(%arg0, %[[K1]])
// CHECK-DAG:     %[[T1:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B1:.+]] = stablehlo.broadcast_in_dim %[[T1]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y1:.+]] = stablehlo.add %[[C1]], %[[B1]] : tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[K2:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x3x3xf32>
// CHECK:         %[[C2:.+]] = stablehlo.convolution(%[[Y1]], %[[K2]])
// CHECK-DAG:     %[[T2:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B2:.+]] = stablehlo.broadcast_in_dim %[[T2]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y2:.+]] = stablehlo.add %[[C2]], %[[B2]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y2]] : tensor<1x4x4x3xf32>
func.func @fold_two_bns(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k1 = stablehlo.constant dense<[[[[0.125, 0.875, 0.625], [-0.875, 0.125, 0.375]], [[-0.875, 0.625, -0.25], [0.375, 0.375, -1.0]]], [[[-0.625, -1.0, 0.5], [-0.625, 0.875, 1.0]], [[0.25, -0.375, -0.375], [0.25, 0.625, 1.0]]]]> : tensor<2x2x2x3xf32>
  %c1 = stablehlo.convolution(%arg0, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale1 = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset1 = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean1 = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var1 = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y1 = "stablehlo.batch_norm_inference"(%c1, %scale1, %offset1, %mean1, %var1) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %k2 = stablehlo.constant dense<[[[[0.75, -0.75, 0.75], [0.125, -0.125, -0.25], [-0.5, -0.375, 0.375]], [[0.375, -0.25, 1.0], [0.625, 1.0, 0.375], [0.375, 0.125, 0.75]]], [[[0.875, -0.125, 0.25], [-0.375, 0.75, 0.125], [0.125, 0.25, -0.5]], [[0.875, -0.25, -0.25], [-0.875, 0.125, 0.25], [-0.25, 0.25, -0.75]]]]> : tensor<2x2x3x3xf32>
  %c2 = stablehlo.convolution(%y1, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x3xf32>, tensor<2x2x3x3xf32>) -> tensor<1x4x4x3xf32>
  %scale2 = stablehlo.constant dense<[0.5, 1.0, 1.5]> : tensor<3xf32>
  %offset2 = stablehlo.constant dense<[1.0, 0.0, -1.0]> : tensor<3xf32>
  %mean2 = stablehlo.constant dense<[0.0, 0.125, -0.125]> : tensor<3xf32>
  %var2 = stablehlo.constant dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
  %y2 = "stablehlo.batch_norm_inference"(%c2, %scale2, %offset2, %mean2, %var2) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y2 : tensor<1x4x4x3xf32>
}

// -----

// Two convolutions share one kernel; each batch norm folds into its own new kernel.
// CHECK-LABEL: func.func @fold_shared_kernel(
// CHECK-DAG:     %[[K1:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C1:.+]] = stablehlo.convolution(%arg0, %[[K1]])
// CHECK-DAG:     %[[T1:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B1:.+]] = stablehlo.broadcast_in_dim %[[T1]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y1:.+]] = stablehlo.add %[[C1]], %[[B1]] : tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[K2:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C2:.+]] = stablehlo.convolution(%arg1, %[[K2]])
// CHECK-DAG:     %[[T2:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B2:.+]] = stablehlo.broadcast_in_dim %[[T2]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y2:.+]] = stablehlo.add %[[C2]], %[[B2]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y1]], %[[Y2]] : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
func.func @fold_shared_kernel(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.125, -0.25], [0.125, 0.75, 0.875]], [[-0.375, -0.5, 0.125], [0.25, -0.5, -0.25]]], [[[0.875, 0.5, 0.75], [0.125, -0.25, -0.625]], [[0.375, 0.625, -0.125], [-0.5, 0.625, -1.0]]]]> : tensor<2x2x2x3xf32>
  %c1 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %c2 = stablehlo.convolution(%arg1, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale1 = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset1 = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean1 = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var1 = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y1 = "stablehlo.batch_norm_inference"(%c1, %scale1, %offset1, %mean1, %var1) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %scale2 = stablehlo.constant dense<[0.5, 1.0, 1.5]> : tensor<3xf32>
  %offset2 = stablehlo.constant dense<[1.0, 0.0, -1.0]> : tensor<3xf32>
  %mean2 = stablehlo.constant dense<[0.0, 0.125, -0.125]> : tensor<3xf32>
  %var2 = stablehlo.constant dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
  %y2 = "stablehlo.batch_norm_inference"(%c2, %scale2, %offset2, %mean2, %var2) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y1, %y2 : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// The batch norm lives in a second function, reached through a call.
// CHECK-LABEL: func.func @fold_in_second_function(
// CHECK:         call @conv_bn_callee(%arg0)
// CHECK-LABEL: func.func private @conv_bn_callee(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_in_second_function(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %0 = func.call @conv_bn_callee(%arg0) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}
func.func private @conv_bn_callee(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.375, 1.0, 0.75], [0.625, 0.5, -0.75]], [[-0.5, 0.75, -0.375], [0.75, -0.75, -0.375]]], [[[1.0, 0.625, 0.75], [0.25, -0.875, -0.375]], [[0.625, 0.25, 1.0], [0.5, -0.375, 0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The batch norm is inside a stablehlo.case branch.
// CHECK-LABEL: func.func @fold_in_case_branch(
// CHECK:         stablehlo.case
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg1, %[[K]])
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         stablehlo.return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_in_case_branch(%arg0: tensor<i32>, %arg1: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %r = "stablehlo.case"(%arg0) ({
    %k = stablehlo.constant dense<[[[[-0.25, 1.0, 0.875], [-0.375, -0.375, -0.5]], [[-0.375, -0.625, 0.625], [0.625, 0.875, -0.625]]], [[[-0.25, 0.625, -0.25], [0.5, -1.0, -0.125]], [[-0.625, 0.625, -0.625], [0.875, 0.625, 0.625]]]]> : tensor<2x2x2x3xf32>
    %c = stablehlo.convolution(%arg1, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
    %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
    %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
    %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
    %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
    %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %y : tensor<1x4x4x3xf32>
  }, {
    %z = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
    stablehlo.return %z : tensor<1x4x4x3xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}

// -----

// The batch norm is inside a stablehlo.while body.
// CHECK-LABEL: func.func @fold_in_while_body(
// CHECK:         stablehlo.while
// CHECK:         do {
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x3x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%{{[^,]+}}, %[[K]])
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         stablehlo.return %{{[^,]+}}, %[[Y]] :
func.func @fold_in_while_body(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %x = %arg0) : tensor<i64>, tensor<1x4x4x3xf32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i64>
    %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %j = stablehlo.add %i, %one : tensor<i64>
    %k = stablehlo.constant dense<[[[[-0.125, -0.25, 0.5], [0.625, 0.625, 0.375], [0.5, 0.5, -0.75]], [[-0.125, 0.75, 1.0], [0.5, 1.0, -0.5], [1.0, 0.75, -0.625]]], [[[-0.75, 0.375, 0.625], [0.375, 0.125, 0.25], [0.25, 0.125, -0.75]], [[0.375, 1.0, -0.5], [0.5, -0.125, -0.375], [-0.875, -0.875, 0.75]]]]> : tensor<2x2x3x3xf32>
    %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x3xf32>, tensor<2x2x3x3xf32>) -> tensor<1x4x4x3xf32>
    %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
    %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
    %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
    %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
    %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %j, %y : tensor<i64>, tensor<1x4x4x3xf32>
  }
  return %r#1 : tensor<1x4x4x3xf32>
}

// -----

// Offset and mean are zero and there is no bias: the shift is zero, so no add is built.
// CHECK-LABEL: func.func @fold_zero_shift_no_add(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.add
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[C]] : tensor<1x4x4x3xf32>
func.func @fold_zero_shift_no_add(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[1.0, -0.5, 0.625], [0.625, 0.625, 0.5]], [[-0.25, 0.25, 0.25], [-0.625, -1.0, -1.0]]], [[[0.875, 0.625, 0.625], [-0.625, -0.625, 0.25]], [[-0.5, -1.0, 0.25], [0.625, -0.875, -0.25]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The batch norm follows a stablehlo.case whose branches are convolutions (a multi-platform
// export): each branch gets its own scaled kernel, the bias is added after the case.
// CHECK-LABEL: func.func @fold_linear_in_case_branches(
// CHECK:         %[[R:.+]] = "stablehlo.case"(%arg0)
// CHECK:         %[[K0:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         stablehlo.convolution(%arg1, %[[K0]])
// CHECK:         %[[K1:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         stablehlo.convolution(%arg1, %[[K1]])
// CHECK-DAG:     %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_linear_in_case_branches(%arg0: tensor<i32>, %arg1: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k0 = stablehlo.constant dense<[[[[-1.0, -0.125, -1.0], [-0.625, 0.375, 0.875]], [[-0.25, 0.25, -0.625], [-0.125, 0.625, 0.625]]], [[[-0.5, -0.125, 0.625], [-0.875, 0.125, -0.5]], [[0.875, -1.0, -0.875], [0.875, -0.625, 0.5]]]]> : tensor<2x2x2x3xf32>
  %k1 = stablehlo.constant dense<[[[[0.5, 1.0, 0.375], [0.75, 0.875, -0.625]], [[1.0, 1.0, 0.375], [-0.25, 0.75, 0.875]]], [[[0.125, -0.625, -1.0], [-0.375, -0.5, 1.0]], [[0.125, -0.75, 0.625], [0.625, 0.5, -0.25]]]]> : tensor<2x2x2x3xf32>
  %r = "stablehlo.case"(%arg0) ({
    %c0 = stablehlo.convolution(%arg1, %k0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c0 : tensor<1x4x4x3xf32>
  }, {
    %c1 = stablehlo.convolution(%arg1, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c1 : tensor<1x4x4x3xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The kernel is a function argument: K * s is computed in the graph.
// With fold-weight-arguments=false it is left alone: weights are not a constant.
// By default it stays: computing it in the graph builds more ops than the one
// batch_norm_inference it removes (fold-larger-weight-arguments folds it anyway).
// CHECK-LABEL: func.func @fold_weights_argument(
// CHECK:         %[[S:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[SB:.+]] = stablehlo.broadcast_in_dim %[[S]], dims = [3] : (tensor<3xf32>) -> tensor<2x2x2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %[[SB]] : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK:         %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
// CONST-LABEL: func.func @fold_weights_argument(
// CONST:         %[[C:.+]] = stablehlo.convolution(%arg0, %arg1)
// CONST:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CONST:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @fold_weights_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // LARGER: batch_norm.mlir:[[# @LINE + 3]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // DEFAULT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folding in the graph would build more ops than it removes: the scale, weights and bias computed from arguments on every call [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The variance is a function argument: s and the shift are computed in the graph.
// With fold-weight-arguments=false it is left alone: batch-norm operands are not constants.
// By default it stays: computing it in the graph builds more ops than the one
// batch_norm_inference it removes (fold-larger-weight-arguments folds it anyway).
// CHECK-LABEL: func.func @fold_statistics_argument(
// CHECK:         %[[VE:.+]] = stablehlo.add %arg1, %{{.+}} : tensor<3xf32>
// CHECK:         %[[SQ:.+]] = stablehlo.sqrt %[[VE]] : tensor<3xf32>
// CHECK:         %[[S:.+]] = stablehlo.divide %{{.+}}, %[[SQ]] : tensor<3xf32>
// CHECK:         %[[SB:.+]] = stablehlo.broadcast_in_dim %[[S]], dims = [3] : (tensor<3xf32>) -> tensor<2x2x2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.multiply %{{.+}}, %[[SB]] : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
// CONST-LABEL: func.func @fold_statistics_argument(
// CONST:         %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CONST:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CONST:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]], {{.+}}, %arg1)
// CONST:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @fold_statistics_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -0.5, -0.25], [0.875, -0.875, 0.625]], [[0.625, -0.5, 0.625], [0.75, -0.75, 0.875]]], [[[0.75, -0.5, 0.75], [0.875, -0.125, -0.25]], [[-0.875, 0.125, -0.5], [-0.625, -0.125, 0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  // LARGER: batch_norm.mlir:[[# @LINE + 3]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // DEFAULT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folding in the graph would build more ops than it removes: the scale, weights and bias computed from arguments on every call [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not constants [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %arg1) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The bias between them is a function argument: the shift is computed in the graph.
// With fold-weight-arguments=false it is left alone: bias is not a per-channel constant.
// By default it stays: computing it in the graph builds more ops than the one
// batch_norm_inference it removes (fold-larger-weight-arguments folds it anyway).
// CHECK-LABEL: func.func @fold_bias_argument(
// CHECK:         %[[D:.+]] = stablehlo.subtract %arg1, %{{.+}} : tensor<3xf32>
// CHECK:         %[[M:.+]] = stablehlo.multiply %[[D]], %{{.+}} : tensor<3xf32>
// CHECK:         %[[T:.+]] = stablehlo.add %{{.+}}, %[[M]] : tensor<3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %{{[^)]+}})
// CHECK-SAME:      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = {{\[\[}}0, 1], [0, 1]]}
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
// CONST-LABEL: func.func @fold_bias_argument(
// CONST:         %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CONST:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CONST:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CONST:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[A]],
// CONST:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @fold_bias_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[-0.125, 0.25, 1.0], [-0.875, 0.625, -0.375]], [[-0.25, -0.375, 0.25], [-1.0, 0.375, 0.75]]], [[[-0.5, -1.0, 0.25], [-1.0, 0.625, 0.25]], [[-1.0, -1.0, -0.5], [-0.75, -0.25, -0.625]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // LARGER: batch_norm.mlir:[[# @LINE + 3]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]
  // DEFAULT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folding in the graph would build more ops than it removes: the scale, weights and bias computed from arguments on every call [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// element type is not f16, bf16, f32 or f64: an f8E4M3FN convolution and batch norm.
// CHECK-LABEL: func.func @no_fold_f8_batch_norm(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf8E4M3FN>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf8E4M3FN>
func.func @no_fold_f8_batch_norm(%arg0: tensor<1x4x4x2xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf8E4M3FN>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf8E4M3FN>, tensor<2x2x2x3xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf8E4M3FN>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf8E4M3FN>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf8E4M3FN>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf8E4M3FN>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>) -> tensor<1x4x4x3xf8E4M3FN>
  return %y : tensor<1x4x4x3xf8E4M3FN>
}

// -----

// feature dimension is dynamic: the result is 1x4x4x? (the static kernel still says 3).
// CHECK-LABEL: func.func @no_fold_dynamic_feature_dim(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x?xf32>
func.func @no_fold_dynamic_feature_dim(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x?xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x?xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: feature dimension is dynamic [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: feature dimension is dynamic [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x?xf32>
  return %y : tensor<1x4x4x?xf32>
}

// -----

// A dynamic batch (torch-mlir's batch_norm_inference on tensor<?x...>), the feature
// dimension static: folded, the bias broadcast reading its shape from the new
// convolution, never from the old one (which would stay alive beside it): its batch size
// read, the static sizes one constant.
// CHECK-LABEL: func.func @fold_dynamic_batch_dim(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.convolution
// CHECK:         stablehlo.get_dimension_size %[[C]], dim = 0
// CHECK-NOT:     get_dimension_size
// CHECK:         stablehlo.constant dense<[4, 4, 3]> : tensor<3xi32>
// CHECK:         %[[B:.+]] = stablehlo.dynamic_broadcast_in_dim
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<?x4x4x3xf32>
// CHECK-NOT:     stablehlo.convolution
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<?x4x4x3xf32>
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
// CHECK-LABEL: func.func @no_fold_operand_not_linear(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[H:.+]] = stablehlo.tanh %[[C]] : tensor<1x4x4x3xf32>
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[H]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_operand_not_linear(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %h = stablehlo.tanh %c : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: operand is not a convolution or dot_general [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: operand is not a convolution or dot_general [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%h, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// operand is not a convolution or dot_general: an integer (i8) convolution, then a convert to f32.
// CHECK-LABEL: func.func @no_fold_integer_conv_convert(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1> : tensor<2x2x2x3xi8>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[F:.+]] = stablehlo.convert %[[C]] : (tensor<1x4x4x3xi32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[F]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_integer_conv_convert(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1> : tensor<2x2x2x3xi8>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xi8>, tensor<2x2x2x3xi8>) -> tensor<1x4x4x3xi32>
  %f = stablehlo.convert %c : (tensor<1x4x4x3xi32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: operand is not a convolution or dot_general [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%f, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// bias add result has other users: the biased result is also returned.
// CHECK-LABEL: func.func @no_fold_bias_add_multi_user(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[A]],
// CHECK:         return %[[BN]], %[[A]] : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
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
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias add result has other users [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias add result has other users [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %a : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// producer result has other users: the convolution result is also returned.
// CHECK-LABEL: func.func @no_fold_producer_multi_user(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]], %[[C]] : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
func.func @no_fold_producer_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: producer result has other users [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: producer result has other users [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// bias is not a per-channel constant: the bias varies along H (dims = [1]), not along the feature.
// CHECK-LABEL: func.func @no_fold_bias_not_per_channel(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[A]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
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
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not a per-channel constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// batch-norm operands are not finite: the per-channel bias between them holds a NaN.
// CHECK-LABEL: func.func @no_fold_nan_bias(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[A]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
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
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: bias is not finite [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: bias is not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// feature_index is not the output-feature dimension: feature_index = 2 (W) on an NHWC result.
// CHECK-LABEL: func.func @no_fold_feature_index_mismatch(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_feature_index_mismatch(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 0.75]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 0.0]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: feature_index is not the output-feature dimension [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: feature_index is not the output-feature dimension [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 2 : i64} : (tensor<1x4x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// feature_index is not the output-feature dimension: feature_index names a dot_general batching dimension.
// CHECK-LABEL: func.func @no_fold_dot_general_feature_index_batch(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]],
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[D]],
// CHECK:         return %[[BN]] : tensor<2x5x3xf32>
func.func @no_fold_dot_general_feature_index_batch(%arg0: tensor<2x5x4xf32>) -> tensor<2x5x3xf32> {
  %w = stablehlo.constant dense<1.0> : tensor<2x4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: feature_index is not the output-feature dimension [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 0 : i64} : (tensor<2x5x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// weight element type is not f16, bf16, f32 or f64: an f8E4M3FN convolution with an f32 result.
// CHECK-LABEL: func.func @no_fold_f8_weights(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf8E4M3FN>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_f8_weights(%arg0: tensor<1x4x4x2xf8E4M3FN>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf8E4M3FN>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf8E4M3FN>, tensor<2x2x2x3xf8E4M3FN>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: weight element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weight element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// weight element type is not f16, bf16, f32 or f64: an i8 convolution with an f32 result.
// CHECK-LABEL: func.func @no_fold_i8_weights(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1> : tensor<2x2x2x3xi8>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_i8_weights(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1> : tensor<2x2x2x3xi8>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xi8>, tensor<2x2x2x3xi8>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weight element type is not f16, bf16, f32 or f64 [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// batch-norm operands are not finite: the mean holds a NaN.
// CHECK-LABEL: func.func @no_fold_nan_mean(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_nan_mean(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, 0x7FC00000, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// batch-norm operands are not finite: the scale holds +Inf.
// CHECK-LABEL: func.func @no_fold_inf_scale(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_inf_scale(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0x7F800000, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: batch-norm operands are not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// variance + epsilon is not positive: one variance is -1.
// CHECK-LABEL: func.func @no_fold_negative_variance(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_negative_variance(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, -1.0, 1.0]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// variance + epsilon is not positive: variance = -epsilon exactly, so variance + epsilon == 0.
// CHECK-LABEL: func.func @no_fold_variance_plus_epsilon_zero(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
func.func @no_fold_variance_plus_epsilon_zero(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, -1.0e-05, 1.0]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: variance + epsilon is not positive [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// folded bias overflows its element type: f16 offset 60000 minus mean -60000.
// CHECK-LABEL: func.func @no_fold_bias_overflow(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf16>
func.func @no_fold_bias_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<1.0> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[60000.0, 0.0, 0.0]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[-60000.0, 0.0, 0.0]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folded bias overflows its element type [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded bias overflows its element type [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// weights in case branches are not constants: the batch norm follows a stablehlo.case whose branches are convolutions, one with its kernel passed as an argument.
// CHECK-LABEL: func.func @no_fold_case_branch_weights_argument(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<1.000000e+00> : tensor<2x2x2x3xf32>
// CHECK:         %[[R:.+]] = "stablehlo.case"(%arg0)
// CHECK:         stablehlo.convolution(%arg1, %[[K]])
// CHECK:         stablehlo.convolution(%arg1, %arg2)
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[R]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf32>
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
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: weights in case branches are not constants [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not a constant [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// folded weights overflow their element type: f16 kernel 60000 times scale 100.
// CHECK-LABEL: func.func @no_fold_weights_overflow(
// CHECK:         %[[K:.+]] = stablehlo.constant dense<6.000000e+04> : tensor<2x2x2x3xf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[C]],
// CHECK:         return %[[BN]] : tensor<1x4x4x3xf16>
func.func @no_fold_weights_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<60000.0> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[100.0, 100.0, 100.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  // REPORT: batch_norm.mlir:[[# @LINE + 2]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_bn_into_linear]
  // CONSTREPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// folded weights overflow their element type: f16 weights as an argument, scaled in the
// graph by 60000 / sqrt(1e-4), which no f16 constant holds (once an internal error).
// CHECK-LABEL: func.func @no_fold_weights_argument_overflow(
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %arg1
// CHECK:         %[[BN:.+]] = "stablehlo.batch_norm_inference"(%[[D]],
// CHECK:         return %[[BN]] : tensor<2x3xf16>
func.func @no_fold_weights_argument_overflow(%x: tensor<2x4xf16>, %w: tensor<4x3xf16>) -> tensor<2x3xf16> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  %scale = stablehlo.constant dense<[60000.0, 2.0, 3.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0e-4, 1.0, 1.0]> : tensor<3xf16>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%d, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %y : tensor<2x3xf16>
}

// -----

// weights are not finite: the kernel holds an infinity (so would K * s).
// CHECK-LABEL: func.func @no_fold_weights_not_finite(
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         "stablehlo.batch_norm_inference"(%[[C]],
func.func @no_fold_weights_not_finite(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0x7F800000, -0.75]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: batch_norm.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are not finite [fold_bn_into_linear]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}
