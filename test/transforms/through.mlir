// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=KEPT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file \
// RUN:   | FileCheck --check-prefix=LARGER %s

// conv -> relu -> batch_norm_inference, NHWC x HWIO: the scale goes into the kernel, the
// shift stays behind the relu as one add.
// CHECK-LABEL: func.func @fold_nhwc_relu_batch_norm(
// CHECK-DAG:     %[[Z:.+]] = stablehlo.constant dense<0.000000e+00> : tensor<1x4x4x3xf32>
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]], %[[Z]] : tensor<1x4x4x3xf32>
// CHECK:         %[[T:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_nhwc_relu_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// conv + bias -> relu -> (v - mean) * s + offset, the decomposed form, with the zero a
// broadcast scalar on the left: the bias is scaled too, one add is left behind the relu.
// CHECK-LABEL: func.func @fold_conv_bias_relu_decomposed(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BC:.+]] = stablehlo.constant dense<[{{.+}}]> : tensor<3xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[BC]], dims = [3]
// CHECK:         %[[CB:.+]] = stablehlo.add %[[C]], %[[BB]] : tensor<1x4x4x3xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %{{.+}}, %[[CB]] : tensor<1x4x4x3xf32>
// CHECK:         %[[T:.+]] = stablehlo.constant dense<[{{.+}}]> : tensor<3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[T]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_bias_relu_decomposed(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %b = stablehlo.constant dense<[0.25, -0.5, 0.75]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %cb = stablehlo.add %c, %bb : tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %z, %cb : tensor<1x4x4x3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %r, %m : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.25, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %p = stablehlo.multiply %d, %s : tensor<1x4x4x3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %o = stablehlo.broadcast_in_dim %offset, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum [fold_scale_through_relu]
  %y = stablehlo.add %p, %o : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// dot_general (a Dense layer) -> relu -> batch_norm_inference on the feature dimension 1.
// CHECK-LABEL: func.func @fold_dot_general_relu_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[D]], %{{.+}} : tensor<2x3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_relu_batch_norm(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x3xf32>
  %r = stablehlo.maximum %d, %zero : tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A scalar after relu(dot_general) is per-channel along both result dimensions: it goes
// onto the constant weights, never onto the data operand %arg0.
// CHECK-LABEL: func.func @fold_scalar_onto_constant_weights(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{\[\[}}2.500000e-01{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[D]], %{{.+}} : tensor<2x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[R]] : tensor<2x3xf32>
func.func @fold_scalar_onto_constant_weights(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x3xf32>
  %r = stablehlo.maximum %d, %zero : tensor<2x3xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general through stablehlo.maximum [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %h : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A symbolic batch: jax.export passes the dimension size first, `call @relu(%dim, %x)`,
// and the callee's zero is broadcast to a shape built from it. The data operand is the
// one the callee's maximum reads; the call is rebuilt on the scaled dot_general.
// CHECK-LABEL: func.func @fold_dot_general_relu_call_with_dimension_argument(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg1, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[R:.+]] = call @relu(%arg0, %[[D]]) : (tensor<i32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %{{.+}} : tensor<?x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<?x3xf32>
func.func @fold_dot_general_relu_call_with_dimension_argument(%arg0: tensor<i32>, %arg1: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg1, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %r = call @relu(%arg0, %d) : (tensor<i32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
func.func private @relu(%arg0: tensor<i32>, %arg1: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %cst, %1, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
  %3 = stablehlo.maximum %arg1, %2 : tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}

// -----

// conv -> relu -> max-pool -> batch_norm_inference (a VGG or ResNet stem): the scale passes
// the relu and the max-pool (-inf init, a window of one along the channels) into the
// kernel; the shift stays behind the max-pool as one add.
// CHECK-LABEL: func.func @fold_conv_relu_max_pool_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[R]], %{{.+}})
// CHECK:         stablehlo.maximum
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[P]], %[[B]] : tensor<1x2x2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x2x3xf32>
func.func @fold_conv_relu_max_pool_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.maximum, stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// conv -> max-pool -> batch_norm_inference with the type's lowest value as init (no relu).
// CHECK-LABEL: func.func @fold_conv_max_pool_lowest_init_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[C]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[P]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x2x3xf32>
func.func @fold_conv_max_pool_lowest_init_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// conv + bias -> max-pool (-inf, padded) -> batch_norm_inference: for s > 0 the scale
// passes the max-pool, and so does the shift (maxpool(v + t) = maxpool(v) + t: rounding is
// monotonic, -inf + t = -inf), into the bias add the convolution already has: no op is
// left behind the pool.
// CHECK-LABEL: func.func @fold_conv_bias_max_pool_batch_norm_whole(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[A]], %{{.+}})
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[P]] : tensor<1x2x2x3xf32>
func.func @fold_conv_bias_max_pool_batch_norm_whole(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The same with the lowest finite value as the max-pool's init value, and padding that
// no window reads alone (each window holds an element of v): scale and shift both pass.
// CHECK-LABEL: func.func @fold_conv_bias_padded_lowest_init_max_pool_whose_windows_hold_an_element(
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[A]],
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[P]] : tensor<1x2x2x3xf32>
func.func @fold_conv_bias_padded_lowest_init_max_pool_whose_windows_hold_an_element(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The lowest finite value as the init value and padding a window reads alone (padding 2
// before 4 elements, windows of 2, 2 apart): that window's maximum is the lowest value,
// where the pooled value times s is that value times s. Neither the scale nor the shift
// passes.
// CHECK-LABEL: func.func @no_fold_lowest_init_max_pool_with_a_window_of_padding_alone(
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"
// CHECK:         %[[Y:.+]] = stablehlo.multiply %[[P]], %{{.+}} : tensor<1x3x3x3xf32>
// CHECK:         return %[[Y]]
func.func @no_fold_lowest_init_max_pool_with_a_window_of_padding_alone(%x: tensor<1x4x4x2xf32>) -> tensor<1x3x3x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -0.5, -0.25], [0.875, -0.875, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %lowest = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %lowest) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>, padding = dense<[[0, 0], [2, 0], [2, 0], [0, 0]]> : tensor<4x2xi64>} : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3x3x3xf32>
  %s = stablehlo.constant dense<[0.5, 0.75, 0.25]> : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
  // KEPT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the max-pool's init value is the lowest finite value, not -inf, and a window may hold only padding: the scale cannot pass it (its maximum is the lowest value, not the lowest value times s) [fold_scale_through_relu]
  %y = stablehlo.multiply %p, %sb : tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// LeViT's `bn(x.flatten(0, 1)).reshape_as(x)` after a Dense layer: dot_general + bias ->
// reshape [2, 5, 3] -> [10, 3] -> batch_norm_inference -> reshape back. A reshape is linear:
// scale and shift both go into the weights and the bias, no add is left, and the reshapes
// that restore the shape go too.
// CHECK-LABEL: func.func @fold_dot_general_reshape_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [2] x [0]
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]] : tensor<2x5x3xf32>
// CHECK-NOT:     stablehlo.reshape
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x5x3xf32>
func.func @fold_dot_general_reshape_batch_norm(%arg0: tensor<2x5x4xf32>) -> tensor<2x5x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %b = stablehlo.constant dense<[0.25, -0.5, 0.75]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
  %db = stablehlo.add %d, %bb : tensor<2x5x3xf32>
  %flat = stablehlo.reshape %db : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.reshape [fold_scale_through_relu]
  %n = "stablehlo.batch_norm_inference"(%flat, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<10x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<10x3xf32>
  %y = stablehlo.reshape %n : (tensor<10x3xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// The same without a bias add, the norm's result kept flat: the shift becomes the bias,
// added before the rebuilt reshape along the dot_general's feature dimension 2.
// CHECK-LABEL: func.func @fold_dot_general_reshape_without_bias(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [2] x [0]
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [2] : (tensor<3xf32>) -> tensor<2x5x3xf32>
// CHECK:         %[[A:.+]] = stablehlo.add %[[D]], %[[B]] : tensor<2x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.reshape %[[A]] : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<10x3xf32>
func.func @fold_dot_general_reshape_without_bias(%arg0: tensor<2x5x4xf32>) -> tensor<10x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %flat = stablehlo.reshape %d : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.reshape [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%flat, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<10x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<10x3xf32>
  return %y : tensor<10x3xf32>
}

// -----

// An NHWC convolution transposed to NCHW before its batch norm (feature_index 1): the
// feature dimension maps through the permutation to the convolution's 3.
// CHECK-LABEL: func.func @fold_conv_transpose_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.transpose %[[A]], dims = [0, 3, 1, 2]
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x3x4x4xf32>
func.func @fold_conv_transpose_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %t = stablehlo.transpose %c, dims = [0, 3, 1, 2] : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.transpose [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%t, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// A reshape below a relu: the scale passes both, the shift stays behind the relu as one
// add along the relu's feature dimension 1.
// CHECK-LABEL: func.func @fold_dot_general_reshape_relu_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [2] x [0]
// CHECK:         %[[F:.+]] = stablehlo.reshape %[[D]] : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[F]], %{{.+}} : tensor<10x3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<10x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<10x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<10x3xf32>
func.func @fold_dot_general_reshape_relu_batch_norm(%arg0: tensor<2x5x4xf32>) -> tensor<10x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %flat = stablehlo.reshape %d : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<10x3xf32>
  %r = stablehlo.maximum %flat, %zero : tensor<10x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.reshape, stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<10x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<10x3xf32>
  return %y : tensor<10x3xf32>
}

// -----

// A symbolic batch flattened into the tokens: a dynamic_reshape whose shape is built from
// the dimension argument (jax.export's form). The feature keeps the same number of
// elements after it on both sides, so the whole norm goes into the dot_general.
// CHECK-LABEL: func.func @fold_dot_general_dynamic_reshape_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg1, %[[W]], contracting_dims = [2] x [0]
// CHECK:         %[[A:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<?x5x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.dynamic_reshape %[[A]], %{{.+}} : (tensor<?x5x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<?x3xf32>
func.func @fold_dot_general_dynamic_reshape_batch_norm(%arg0: tensor<i32>, %arg1: tensor<?x5x4xf32>) -> tensor<?x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg1, %w, contracting_dims = [2] x [0] : (tensor<?x5x4xf32>, tensor<4x3xf32>) -> tensor<?x5x3xf32>
  %five = stablehlo.constant dense<5> : tensor<i32>
  %n = stablehlo.multiply %arg0, %five : tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %flat = stablehlo.dynamic_reshape %d, %shape : (tensor<?x5x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %sb = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %p = stablehlo.multiply %flat, %sb : tensor<?x3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %o = stablehlo.broadcast_in_dim %offset, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %ob = stablehlo.dynamic_broadcast_in_dim %o, %shape, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.dynamic_reshape [fold_scale_through_relu]
  %y = stablehlo.add %p, %ob : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// ReLU6 as a clamp with scalar bounds after a Dense layer: for s > 0 clamp(lo, v, hi) * s =
// clamp(lo * s, v * s, hi * s); the clamp is rebuilt with per-channel bounds.
// CHECK-LABEL: func.func @fold_dot_general_clamp_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[LO:.+]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK:         %[[LB:.+]] = stablehlo.broadcast_in_dim %[[LO]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[HI:.+]] = stablehlo.constant dense<[{{.+}}]> : tensor<3xf32>
// CHECK:         %[[HB:.+]] = stablehlo.broadcast_in_dim %[[HI]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %[[LB]], %[[D]], %[[HB]] : tensor<2x3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_clamp_batch_norm(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %d, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.clamp [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// jax.nn.relu6 as jax.export writes it, `call @relu6(%v)`, its bounds 0 and 6 in the callee:
// the call is replaced by an inline clamp with bounds 0 * s and 6 * s.
// CHECK-LABEL: func.func @fold_dot_general_relu6_call_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[LB:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[HB:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %[[LB]], %[[D]], %[[HB]] : tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %{{.+}} : tensor<2x3xf32>
// CHECK-NOT:     call @relu6
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_relu6_call_batch_norm(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r = call @relu6(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.clamp [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @relu6(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<6.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<2x3xf32>
  %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.minimum %1, %2 : tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// A clamp with per-channel bounds broadcast to the convolution's shape, then a scalar
// multiply: the bounds are scaled channel by channel, nothing is left behind the clamp.
// CHECK-LABEL: func.func @fold_conv_clamp_per_channel_bounds(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[LO:.+]] = stablehlo.constant dense<[-5.000000e-01, -1.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK:         %[[LB:.+]] = stablehlo.broadcast_in_dim %[[LO]], dims = [3]
// CHECK:         %[[HI:.+]] = stablehlo.constant dense<[5.000000e-01, 1.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK:         %[[HB:.+]] = stablehlo.broadcast_in_dim %[[HI]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.clamp %[[LB]], %[[C]], %[[HB]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_clamp_per_channel_bounds(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %lo = stablehlo.constant dense<[-1.0, -2.0, 0.0]> : tensor<3xf32>
  %lb = stablehlo.broadcast_in_dim %lo, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %hi = stablehlo.constant dense<[1.0, 2.0, 6.0]> : tensor<3xf32>
  %hb = stablehlo.broadcast_in_dim %hi, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %r = stablehlo.clamp %lb, %c, %hb : tensor<1x4x4x3xf32>
  %h = stablehlo.constant dense<0.5> : tensor<1x4x4x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution through stablehlo.clamp [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %h : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// jax.nn.leaky_relu as jax.export writes it: `call @leaky_relu(%v, %alpha)`, whose select is
// itself a call of `_where`. select(v >= 0, v, a * v) * s = select(v * s >= 0, v * s, a * v * s)
// for s > 0: the call is rebuilt on the scaled dot_general, one add left behind it.
// CHECK-LABEL: func.func @fold_dot_general_leaky_relu_call_batch_norm(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]], contracting_dims = [1] x [0]
// CHECK:         %[[R:.+]] = call @leaky_relu(%[[D]], %{{.+}}) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x3xf32>
func.func @fold_dot_general_leaky_relu_call_batch_norm(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<f32>
  %r = call @leaky_relu(%d, %alpha) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.select [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @leaky_relu(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = stablehlo.convert %arg1 : tensor<f32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %4 = stablehlo.multiply %3, %arg0 : tensor<2x3xf32>
  %5 = call @_where(%1, %arg0, %4) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %5 : tensor<2x3xf32>
}
func.func private @_where(%arg0: tensor<2x3xi1>, %arg1: tensor<2x3xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2x3xi1>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A symbolic batch: the dimension size comes first, to the leaky relu and to `_where`; its
// select is inline here, with `v > 0`.
// CHECK-LABEL: func.func @fold_dot_general_leaky_relu_call_with_dimension_argument(
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg1, %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[R:.+]] = call @leaky_relu(%arg0, %[[D]], %{{.+}}) : (tensor<i32>, tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %{{.+}} : tensor<?x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<?x3xf32>
func.func @fold_dot_general_leaky_relu_call_with_dimension_argument(%arg0: tensor<i32>, %arg1: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg1, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %alpha = stablehlo.constant dense<0.2> : tensor<f32>
  %r = call @leaky_relu(%arg0, %d, %alpha) : (tensor<i32>, tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %n = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %n, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %sb = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %p = stablehlo.multiply %r, %sb : tensor<?x3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %o = stablehlo.broadcast_in_dim %offset, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %ob = stablehlo.dynamic_broadcast_in_dim %o, %shape, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.select [fold_scale_through_relu]
  %y = stablehlo.add %p, %ob : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
func.func private @leaky_relu(%arg0: tensor<i32>, %arg1: tensor<?x3xf32>, %arg2: tensor<f32>) -> tensor<?x3xf32> {
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %cst, %1, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
  %3 = stablehlo.compare GT, %arg1, %2, FLOAT : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
  %4 = stablehlo.dynamic_broadcast_in_dim %arg2, %1, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
  %5 = stablehlo.multiply %arg1, %4 : tensor<?x3xf32>
  %6 = stablehlo.select %3, %arg1, %5 : tensor<?x3xi1>, tensor<?x3xf32>
  return %6 : tensor<?x3xf32>
}

// -----

// concat(x . W1, x . W2 + b2) along the feature -> batch_norm_inference: each dot_general
// takes its range of the scale and shift (channels 0-2 and 3-4), any sign; nothing is left.
// CHECK-LABEL: func.func @fold_concatenate_of_dot_generals_batch_norm(
// CHECK-DAG:     %[[W1:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D1:.+]] = stablehlo.dot_general %arg0, %[[W1]], contracting_dims = [1] x [0]
// CHECK:         %[[B1:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[A1:.+]] = stablehlo.add %[[D1]], %[[B1]] : tensor<2x3xf32>
// CHECK:         %[[W2:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<4x2xf32>
// CHECK:         %[[D2:.+]] = stablehlo.dot_general %arg0, %[[W2]], contracting_dims = [1] x [0]
// CHECK:         %[[B2:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
// CHECK:         %[[A2:.+]] = stablehlo.add %[[D2]], %[[B2]] : tensor<2x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.concatenate %[[A1]], %[[A2]], dim = 1
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<2x5xf32>
func.func @fold_concatenate_of_dot_generals_batch_norm(%arg0: tensor<2x4xf32>) -> tensor<2x5xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %v = stablehlo.constant dense<[[0.5, -0.25], [0.75, 0.5], [-0.5, 0.25], [1.0, -0.75]]> : tensor<4x2xf32>
  %e = stablehlo.dot_general %arg0, %v, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  %b = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  %eb = stablehlo.add %e, %bb : tensor<2x2xf32>
  %c = stablehlo.concatenate %d, %eb, dim = 1 : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, -1.0, 4.0]> : tensor<5xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0, 2.0]> : tensor<5xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0, 1.0]> : tensor<5xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 1.0, 1.0]> : tensor<5xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.concatenate [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// An Inception-style relu(concat(conv1, conv2)) -> batch norm: the scale passes the relu
// and each range goes into its convolution; the shift stays behind the relu as one add.
// CHECK-LABEL: func.func @fold_relu_of_concatenate_of_convolutions_batch_norm(
// CHECK:         %[[C1:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[C2:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[C:.+]] = stablehlo.concatenate %[[C1]], %[[C2]], dim = 3
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]], %{{.+}} : tensor<1x4x4x5xf32>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<5xf32>) -> tensor<1x4x4x5xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %[[B]] : tensor<1x4x4x5xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x5xf32>
func.func @fold_relu_of_concatenate_of_convolutions_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x5xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c1 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %j = stablehlo.constant dense<[[[[0.5, -0.25], [0.75, 0.5]]]]> : tensor<1x1x2x2xf32>
  %c2 = stablehlo.convolution(%arg0, %j) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %c = stablehlo.concatenate %c1, %c2, dim = 3 : (tensor<1x4x4x3xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x5xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x5xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x5xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0, 4.0]> : tensor<5xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0, 2.0]> : tensor<5xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0, 1.0]> : tensor<5xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 1.0, 1.0]> : tensor<5xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.concatenate, stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<1x4x4x5xf32>
  return %y : tensor<1x4x4x5xf32>
}

// -----

// A concatenate along the batch: each dot_general takes the whole scale.
// CHECK-LABEL: func.func @fold_concatenate_along_the_batch(
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}7.500000e-01{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D1:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[V:.+]] = stablehlo.constant dense<{{\[\[}}1.500000e+00{{.+}}> : tensor<4x3xf32>
// CHECK:         %[[D2:.+]] = stablehlo.dot_general %arg1, %[[V]]
// CHECK:         %[[Y:.+]] = stablehlo.concatenate %[[D1]], %[[D2]], dim = 0
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<4x3xf32>
func.func @fold_concatenate_along_the_batch(%arg0: tensor<2x4xf32>, %arg1: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %v = stablehlo.constant dense<[[1.0, -0.5, 2.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %e = stablehlo.dot_general %arg1, %v, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.concatenate %d, %e, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general through stablehlo.concatenate [fold_scale_through_relu]
  %y = stablehlo.multiply %c, %s : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// torch's chunk of a convolution's output channels, one chunk normed: conv + b -> slice
// of channels 2-3 -> batch_norm_inference, any sign. slice(v) * s + t = slice(v * s' + t'):
// channels 2-3 of the kernel and bias take s and t, channels 0-1 keep 1 and 0; nothing is
// left after the slice.
// CHECK-LABEL: func.func @fold_conv_bias_slice_of_channels_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}7.500000e-01, -5.000000e-01, {{.+}}> : tensor<1x1x2x4xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x4xf32>
// CHECK:         %[[S:.+]] = stablehlo.slice %[[A]] [0:1, 0:4, 0:4, 2:4]
// CHECK-NOT:     batch_norm_inference
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[S]] : tensor<1x4x4x2xf32>
func.func @fold_conv_bias_slice_of_channels_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875, 0.5], [-0.375, -0.125, 0.625, 0.25]]]]> : tensor<1x1x2x4xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x4x4x4xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0, 2.0]> : tensor<4xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x4xf32>
  %s = stablehlo.slice %c [0:1, 0:4, 0:4, 2:4] : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x2xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.slice [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%s, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A strided slice of a dot_general's channels (1 and 3) -> multiply, add: the scale goes
// into columns 1 and 3 of the weights (1 on the others); with no bias add on the
// dot_general the shift would need a new add on its larger result, so it stays behind the
// slice as one add.
// CHECK-LABEL: func.func @fold_dot_general_strided_slice_of_channels_keeps_the_shift(
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{\[\[}}5.000000e-01, -5.000000e-01, 1.000000e+00, -1.000000e+00]{{.+}}> : tensor<4x4xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[S:.+]] = stablehlo.slice %[[D]] [0:2, 1:4:2]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[S]], %{{.+}} : tensor<2x2xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]] : tensor<2x2xf32>
func.func @fold_dot_general_strided_slice_of_channels_keeps_the_shift(%arg0: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5], [0.75, 0.5, -1.0, 0.25], [-0.5, 0.25, 0.125, 1.0], [1.0, -0.75, 0.5, -0.5]]> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  // KEPT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_scale_through_relu]
  %s = stablehlo.slice %d [0:2, 1:4:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %m = stablehlo.constant dense<[2.0, -2.0]> : tensor<2xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  %x = stablehlo.multiply %s, %mb : tensor<2x2xf32>
  %t = stablehlo.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.slice [fold_scale_through_relu]
  %y = stablehlo.add %x, %tb : tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A slice along the height (a crop) keeps every channel: conv -> slice -> relu -> batch
// norm takes the whole scale into the kernel; the shift stays behind the relu.
// CHECK-LABEL: func.func @fold_conv_slice_of_rows_relu_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.1249944, {{.+}}> : tensor<1x1x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[S:.+]] = stablehlo.slice %[[C]] [0:1, 1:3, 0:4, 0:2]
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[S]], %{{.+}} : tensor<1x2x4x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[R]], %{{.+}} : tensor<1x2x4x2xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x4x2xf32>
func.func @fold_conv_slice_of_rows_relu_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x4x2xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5], [-0.375, 0.625]]]]> : tensor<1x1x2x2xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.slice %c [0:1, 1:3, 0:4, 0:2] : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x2x4x2xf32>
  %r = stablehlo.maximum %s, %zero : tensor<1x2x4x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.slice, stablehlo.maximum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x2xf32>
  return %y : tensor<1x2x4x2xf32>
}

// -----

// conv + bias -> average pool (a sum pool of 2 x 2 without padding, then a divide by 4)
// -> batch_norm_inference: sums are linear, so any scale passes (a negative gamma too),
// and so does the shift, as t / 4 per element summed: pool(v) / 4 * s + t =
// pool(v * s / 4 + t / 4). The whole norm and the divide go into the kernel and bias.
// CHECK-LABEL: func.func @fold_conv_bias_average_pool_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[A]], %{{.+}})
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[P]] : tensor<1x2x2x3xf32>
func.func @fold_conv_bias_average_pool_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2x2x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// conv (no bias) -> average pool -> batch_norm_inference: the scale goes into the
// kernel; the shift would need a new bias add on the convolution's larger result, so it
// stays behind the pool as one add (the report says why).
// CHECK-LABEL: func.func @fold_conv_average_pool_keeps_the_shift_on_the_pooled_tensor(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[C]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[P]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x2x3xf32>
func.func @fold_conv_average_pool_keeps_the_shift_on_the_pooled_tensor(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  // KEPT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_scale_through_relu]
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2x2x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// conv + bias -> a padded 3 x 3 average pool (count_include_pad, a divide by 9) ->
// batch_norm_inference: the scale passes (0 * s = 0 in the padding), the shift cannot
// (a window at the edge adds fewer than 9 elements): it stays behind the pool as one add.
// CHECK-LABEL: func.func @fold_conv_padded_average_pool_batch_norm_keeps_the_shift(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[A]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[P]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_padded_average_pool_batch_norm_keeps_the_shift(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  // KEPT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: a sum pool pads or dilates its input, or a sum's size is dynamic: the shift cannot pass it [fold_scale_through_relu]
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.constant dense<9.0> : tensor<1x4x4x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// conv + bias -> global average pool (reduce add over H and W, a divide by 16) ->
// batch_norm_inference over [N, C]: mean(v) * s + t = sum(v * s / 16 + t / 16), all of
// it into the kernel and bias.
// CHECK-LABEL: func.func @fold_conv_bias_global_average_pool_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[S:.+]] = stablehlo.reduce(%[[A]] init: %{{.+}}) applies stablehlo.add across dimensions = [1, 2]
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[S]] : tensor<1x3xf32>
func.func @fold_conv_bias_global_average_pool_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3xf32>
  %n = stablehlo.constant dense<16.0> : tensor<1x3xf32>
  %avg = stablehlo.divide %sum, %n : tensor<1x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// conv -> relu -> average pool -> batch_norm_inference: a positive scale passes both
// into the kernel; the shift stays behind the pool (it cannot pass the relu).
// CHECK-LABEL: func.func @fold_conv_relu_average_pool_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[R]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[P]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x2x3xf32>
func.func @fold_conv_relu_average_pool_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2x2x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.maximum, stablehlo.reduce_window [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// conv + bias -> a padded 3 x 3 average pool that excludes its padding (flax's
// count_include_pad=False: a divide by the count of each window, a sum pool of ones) ->
// batch_norm_inference: the count m is computed from constants and is the same for every
// channel, so (v / m) * s = (v * s) / m for any s; t / m is not per-channel: the shift
// stays behind the divide as one add.
// CHECK-LABEL: func.func @fold_conv_average_pool_excluding_padding_batch_norm(
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<[{{.+}}> : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[A:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[A]], %{{.+}})
// CHECK:         %[[D:.+]] = stablehlo.divide %[[P]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x4x4x3xf32>
func.func @fold_conv_average_pool_excluding_padding_batch_norm(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<1x4x4x1xf32>
  %cnt = "stablehlo.reduce_window"(%ones, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x1xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %m = stablehlo.broadcast_in_dim %cnt, dims = [0, 1, 2, 3] : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32>
  // KEPT: through.mlir:[[# @LINE + 1]]:10: not folded stablehlo.add: the average pool divides by a count per position: the shift cannot pass it (t / m is not per-channel) [fold_scale_through_relu]
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window, stablehlo.divide [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The same with a sum pool without padding and a constant divisor that differs from
// position to position: the pool alone would pass the shift (as t / 4), the divide does
// not: one add stays behind it.
// CHECK-LABEL: func.func @fold_conv_sum_pool_divided_by_a_map_keeps_the_shift(
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"
// CHECK:         %[[D:.+]] = stablehlo.divide %[[P]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]] : tensor<1x2x2x3xf32>
func.func @fold_conv_sum_pool_divided_by_a_map_keeps_the_shift(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %w = stablehlo.constant dense<[[[[1.0], [2.0]], [[3.0], [4.0]]]]> : tensor<1x2x2x1xf32>
  %m = stablehlo.broadcast_in_dim %w, dims = [0, 1, 2, 3] : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x3xf32>
  // KEPT: through.mlir:[[# @LINE + 1]]:10: not folded stablehlo.add: the average pool divides by a count per position: the shift cannot pass it (t / m is not per-channel) [fold_scale_through_relu]
  %avg = stablehlo.divide %p, %m : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window, stablehlo.divide [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The scale after the transpose is a function argument: a transpose only moves
// elements, so it passes, computed in the graph, into the kernel (channel for channel).
// CHECK-LABEL: func.func @fold_transpose_scale_argument(
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<2x2x2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.multiply %{{.+}}, %[[S]] : tensor<2x2x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[T:.+]] = stablehlo.transpose %[[C]], dims = [0, 3, 1, 2]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[T]]
func.func @fold_transpose_scale_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %t = stablehlo.transpose %c, dims = [0, 3, 1, 2] : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  %s = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution through stablehlo.transpose [fold_scale_through_relu]
  %y = stablehlo.multiply %t, %s : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// LeViT's Linear -> flatten -> BatchNorm1d with the statistics as arguments: the batch
// norm, computed in the graph, passes the reshape whole, into the weights and the bias
// (with fold-larger-weight-arguments; by default it stays, since computing it in the
// graph builds more ops than the one batch_norm_inference it removes).
// CHECK-LABEL: func.func @fold_batch_norm_arguments_through_reshape(
// CHECK:         "stablehlo.batch_norm_inference"
// LARGER-LABEL: func.func @fold_batch_norm_arguments_through_reshape(
// LARGER:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<8x6xf32>
// LARGER:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[K]], contracting_dims = [2] x [0]
// LARGER:         %[[A:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<2x4x6xf32>
// LARGER:         %[[R:.+]] = stablehlo.reshape %[[A]] : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
// LARGER-NOT:     batch_norm_inference
// LARGER:         return %[[R]]
func.func @fold_batch_norm_arguments_through_reshape(%arg0: tensor<2x4x8xf32>, %arg1: tensor<8x6xf32>, %arg2: tensor<6xf32>, %arg3: tensor<6xf32>, %arg4: tensor<6xf32>, %arg5: tensor<6xf32>) -> tensor<8x6xf32> {
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %r = stablehlo.reshape %d : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
  // KEPT: through.mlir:[[# @LINE + 1]]:9: not folded stablehlo.batch_norm_inference: folding in the graph would build more ops than it removes: the scale, weights and bias computed from arguments on every call [fold_scale_through_relu]
  %bn = "stablehlo.batch_norm_inference"(%r, %arg2, %arg3, %arg4, %arg5) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  return %bn : tensor<8x6xf32>
}

// -----

// The same in Flax's form, the statistics' arithmetic computed after the reshape:
// (y - mean) * (rsqrt(var + eps) * scale) + bias, every value an argument. The fold is
// built before the chain, where those values are defined (built before the reshape, it
// read them before their definition).
// CHECK-LABEL: func.func @fold_flax_batch_norm_arguments_through_reshape(
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<8x6xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[K]], contracting_dims = [2] x [0]
// CHECK:         %[[A:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<2x4x6xf32>
// CHECK:         %[[R:.+]] = stablehlo.reshape %[[A]] : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<8x6xf32>
// CHECK:         return %[[R]]
func.func @fold_flax_batch_norm_arguments_through_reshape(%arg0: tensor<2x4x8xf32>, %arg1: tensor<8x6xf32>, %scale: tensor<6xf32>, %bias: tensor<6xf32>, %mean: tensor<6xf32>, %var: tensor<6xf32>) -> tensor<8x6xf32> {
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %r = stablehlo.reshape %d : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<6xf32>) -> tensor<8x6xf32>
  %c = stablehlo.subtract %r, %mb : tensor<8x6xf32>
  %eps = stablehlo.constant dense<1.0e-05> : tensor<6xf32>
  %ve = stablehlo.add %var, %eps : tensor<6xf32>
  %rs = stablehlo.rsqrt %ve : tensor<6xf32>
  %inv = stablehlo.multiply %rs, %scale : tensor<6xf32>
  %ib = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<6xf32>) -> tensor<8x6xf32>
  %m = stablehlo.multiply %c, %ib : tensor<8x6xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<6xf32>) -> tensor<8x6xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.reshape [fold_scale_through_relu]
  %y = stablehlo.add %m, %bb : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// Not a candidate here: only a VALID convolution reads the batch norm, and the input side
// folds all of it (scale and shift) into that convolution, leaving no add; this pattern
// would leave one behind the relu.
// CHECK-LABEL: func.func @no_fold_only_linear_ops_read_the_chain(
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.maximum
// CHECK-NOT:     stablehlo.add
// CHECK:         stablehlo.convolution
// CHECK-NOT:     batch_norm_inference
// CHECK:         return
// REPORT-NOT:    [fold_scale_through_relu]
// REPORT:        folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_input_affine_into_conv]
func.func @no_fold_only_linear_ops_read_the_chain(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x3x3x2xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %k2 = stablehlo.constant dense<[[[[0.5, -0.25], [0.75, 0.125], [-0.5, 1.0]], [[0.25, 0.5], [-0.125, 0.375], [0.625, -0.75]]], [[[1.0, 0.25], [-0.5, 0.5], [0.125, 0.25]], [[-0.25, 0.75], [0.5, -1.0], [0.375, 0.125]]]]> : tensor<2x2x3x2xf32>
  %c2 = stablehlo.convolution(%y, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x3xf32>, tensor<2x2x3x2xf32>) -> tensor<1x3x3x2xf32>
  return %c2 : tensor<1x3x3x2xf32>
}

// -----

// A negative scale turns the maximum into a minimum: max(v, 0) * s = min(v * s, 0).
// CHECK-LABEL: func.func @no_fold_negative_scale(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_negative_scale(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: per-channel scale is negative: a maximum (relu, clamp, max-pool) times s < 0 is a minimum [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A zero scale (a dead channel) is refused, not rewritten.
// CHECK-LABEL: func.func @no_fold_zero_scale(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_zero_scale(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.0, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: per-channel scale has a zero: a dead channel is not moved through a relu, clamp or pool [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The relu is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_relu_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_relu_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: relu result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %r : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// maximum(v, 0.5) is not a relu.
// CHECK-LABEL: func.func @no_fold_maximum_not_zero(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_maximum_not_zero(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %half = stablehlo.constant dense<0.5> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %half : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the maximum is not against zero: not a relu [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The convolution is also returned: its kernel cannot change.
// CHECK-LABEL: func.func @no_fold_conv_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_conv_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: producer result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// The scale is a function argument: its sign cannot be checked.
// CHECK-LABEL: func.func @no_fold_scale_argument(
// CHECK:         stablehlo.multiply
func.func @no_fold_scale_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %s = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale or shift is not a constant: the scale's sign is unknown [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Symbolic batch: the relu's zero is broadcast onto the convolution's own shape (torch-mlir's
// form), so the rebuilt relu would keep the old convolution computed beside the new one.
// CHECK-LABEL: func.func @no_fold_zero_shape_read_from_the_convolution(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_zero_shape_read_from_the_convolution(%arg0: tensor<?x4x4x2xf32>) -> tensor<?x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<?x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %shape = shape.shape_of %c : tensor<?x4x4x3xf32> -> tensor<4xindex>
  %z = stablehlo.dynamic_broadcast_in_dim %zero, %shape, dims = [] : (tensor<f32>, tensor<4xindex>) -> tensor<?x4x4x3xf32>
  %r = stablehlo.maximum %c, %z : tensor<?x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the relu's zero reads its shape from the linear op: it would stay computed [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<?x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}

// -----

// The dot_general's weights are computed by another dot_general (an activation): the
// scale would only move onto them.
// CHECK-LABEL: func.func @no_fold_weights_are_activations(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_weights_are_activations(%arg0: tensor<2x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.dot_general %arg1, %arg2, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x3xf32>
  %r = stablehlo.maximum %d, %zero : tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: weights are computed by a linear op: the op would only move onto them [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Attention's scores q . k^T reshaped to add a leading 1, then scaled by 1 / sqrt(d): a
// scalar is per-channel along every dimension, and the one the reshape keeps whole says
// why it stays (the same as without the reshape), not the size-1 dimension it adds.
// CHECK-LABEL: func.func @no_fold_attention_scores_reshaped_then_scaled(
// CHECK:         stablehlo.multiply
func.func @no_fold_attention_scores_reshaped_then_scaled(%arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>) -> tensor<1x4x4xf32> {
  %q = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %kt = stablehlo.transpose %k, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %s = stablehlo.dot_general %q, %kt, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %r = stablehlo.reshape %s : (tensor<4x4xf32>) -> tensor<1x4x4xf32>
  %c = stablehlo.constant dense<0.125> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1x4x4xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights are computed by a linear op: the op would only move onto them [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %cb : tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// K * s overflows f32 (s is about 3.4e39).
// CHECK-LABEL: func.func @no_fold_folded_weights_overflow(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_folded_weights_overflow(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[3.4e+38, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[0.01, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded weights overflow their element type [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The max-pool's init value is 0, not -inf: scaling would move it off the maximum's identity.
// CHECK-LABEL: func.func @no_fold_max_pool_init_not_lowest(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_max_pool_init_not_lowest(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the max-pool's init value is not -inf or the lowest value: scaling would change its padding [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The max-pool's window spans two channels: each output mixes two scales.
// CHECK-LABEL: func.func @no_fold_max_pool_window_spans_feature(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_max_pool_window_spans_feature(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 1]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 2>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the max-pool's window spans the feature dimension [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The max-pool result is also returned, so moving the scale into the kernel would change it.
// CHECK-LABEL: func.func @no_fold_max_pool_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_max_pool_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: max-pool result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y, %p : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
}

// -----

// The relu below the max-pool is also returned: it is read by more than the max-pool.
// CHECK-LABEL: func.func @no_fold_relu_before_max_pool_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_relu_before_max_pool_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %init) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: relu result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%p, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y, %r : tensor<1x2x2x3xf32>, tensor<1x4x4x3xf32>
}
// -----

// The shift left behind the relu does not fit its element type: f16 offset 60000 minus
// mean -100 times scale 100 is 70000.
// CHECK-LABEL: func.func @no_fold_shift_after_relu_overflows(
// CHECK:         stablehlo.maximum
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_shift_after_relu_overflows(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<2x2x2x3xf16>) -> tensor<1x4x4x3xf16>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf16>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf16>
  %scale = stablehlo.constant dense<[100.0, 100.0, 100.0]> : tensor<3xf16>
  %offset = stablehlo.constant dense<[60000.0, 60000.0, 60000.0]> : tensor<3xf16>
  %mean = stablehlo.constant dense<[-100.0, -100.0, -100.0]> : tensor<3xf16>
  %var = stablehlo.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf16>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: folded bias overflows its element type [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// Integers: an i32 convolution, its relu and a per-channel integer multiply are no
// float chain (not a candidate; the module is left as it is).
// CHECK-LABEL: func.func @no_fold_integer_relu(
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]]
// CHECK:         stablehlo.multiply %[[R]]
func.func @no_fold_integer_relu(%arg0: tensor<1x4x4x2xi32>) -> tensor<1x4x4x3xi32> {
  %k = stablehlo.constant dense<1> : tensor<2x2x2x3xi32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xi32>, tensor<2x2x2x3xi32>) -> tensor<1x4x4x3xi32>
  %zero = stablehlo.constant dense<0> : tensor<1x4x4x3xi32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xi32>
  %s = stablehlo.constant dense<[2, 3, 4]> : tensor<3xi32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xi32>) -> tensor<1x4x4x3xi32>
  %y = stablehlo.multiply %r, %sb : tensor<1x4x4x3xi32>
  return %y : tensor<1x4x4x3xi32>
}

// -----

// The reshape merges the dot_general's 3 features with the 5 tokens: the norm's 15
// channels are not one dimension of the linear op's result.
// CHECK-LABEL: func.func @no_fold_reshape_merges_feature(
// CHECK:         stablehlo.multiply
func.func @no_fold_reshape_merges_feature(%arg0: tensor<2x5x4xf32>) -> tensor<2x15xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %flat = stablehlo.reshape %d : (tensor<2x5x3xf32>) -> tensor<2x15xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.5, 0.5, 2.0, 1.5, 0.5, 2.0, 1.5, 0.5, 2.0, 1.5, 0.5, 2.0]> : tensor<15xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<15xf32>) -> tensor<2x15xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: a reshape splits or merges the feature dimension [fold_scale_through_relu]
  %y = stablehlo.multiply %flat, %s : tensor<2x15xf32>
  return %y : tensor<2x15xf32>
}

// -----

// The reshape is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_reshape_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_reshape_other_users(%arg0: tensor<2x5x4xf32>) -> (tensor<10x3xf32>, tensor<10x3xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  %flat = stablehlo.reshape %d : (tensor<2x5x3xf32>) -> tensor<10x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: reshape or transpose result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%flat, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<10x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<10x3xf32>
  return %y, %flat : tensor<10x3xf32>, tensor<10x3xf32>
}

// -----

// A scale that is an argument after a concatenate of linear ops: each would take its
// range of it, picked in the graph.
// CHECK-LABEL: func.func @no_fold_concatenate_scale_argument(
// CHECK:         stablehlo.multiply
func.func @no_fold_concatenate_scale_argument(%arg0: tensor<8x4xf32>, %arg1: tensor<5xf32>) -> tensor<8x5xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %v = stablehlo.constant dense<[[0.5, -0.25], [0.75, 0.5], [-0.5, 0.25], [1.0, -0.75]]> : tensor<4x2xf32>
  %e = stablehlo.dot_general %arg0, %v, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %c = stablehlo.concatenate %d, %e, dim = 1 : (tensor<8x3xf32>, tensor<8x2xf32>) -> tensor<8x5xf32>
  %s = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<5xf32>) -> tensor<8x5xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale or shift is not a constant: only constants pass a concatenate [fold_scale_through_relu]
  %y = stablehlo.multiply %c, %s : tensor<8x5xf32>
  return %y : tensor<8x5xf32>
}

// -----

// torch-mlir's flatten with a symbolic batch reads the dimension sizes of the dot_general
// itself: the rebuilt dynamic_reshape would keep the old dot_general computed.
// CHECK-LABEL: func.func @no_fold_dynamic_reshape_shape_read_from_the_dot_general(
// CHECK:         stablehlo.multiply
func.func @no_fold_dynamic_reshape_shape_read_from_the_dot_general(%arg0: tensor<?x5x4xf32>) -> tensor<?x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [2] x [0] : (tensor<?x5x4xf32>, tensor<4x3xf32>) -> tensor<?x5x3xf32>
  %b = stablehlo.get_dimension_size %d, dim = 0 : (tensor<?x5x3xf32>) -> tensor<i32>
  %five = stablehlo.constant dense<5> : tensor<i32>
  %n = stablehlo.multiply %b, %five : tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %flat = stablehlo.dynamic_reshape %d, %shape : (tensor<?x5x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %sb = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the dynamic reshape reads its shape from the linear op: it would stay computed [fold_scale_through_relu]
  %y = stablehlo.multiply %flat, %sb : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// The clamp's upper bound is a function argument: it cannot move with the scale.
// CHECK-LABEL: func.func @no_fold_clamp_bounds_argument(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_clamp_bounds_argument(%arg0: tensor<2x4xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %d, %arg1 : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the clamp's bounds are not per-channel constants: they cannot move with the scale [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The clamp is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_clamp_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_clamp_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %d, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: clamp result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y, %r : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// The relu6 call is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_relu6_call_other_users(
// CHECK:         stablehlo.multiply
// CHECK:         return
func.func @no_fold_relu6_call_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r = call @relu6(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: clamp result has other users [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %h : tensor<2x3xf32>
  return %y, %r : tensor<2x3xf32>, tensor<2x3xf32>
}
func.func private @relu6(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<6.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<2x3xf32>
  %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.minimum %1, %2 : tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// A negative scale swaps a clamp's bounds: it is refused, as after a relu.
// CHECK-LABEL: func.func @no_fold_clamp_negative_scale(
// CHECK:         stablehlo.multiply
func.func @no_fold_clamp_negative_scale(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %d, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale is negative: a maximum (relu, clamp, max-pool) times s < 0 is a minimum [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %s : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The upper bound times the scale (6e38 * 2) overflows f32.
// CHECK-LABEL: func.func @no_fold_clamp_bounds_overflow(
// CHECK:         stablehlo.multiply
func.func @no_fold_clamp_bounds_overflow(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<3.0e38> : tensor<f32>
  %r = stablehlo.clamp %lo, %d, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %h = stablehlo.constant dense<2.0> : tensor<2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the clamp's bounds times the scale overflow their element type [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %h : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The leaky relu is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_leaky_relu_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_leaky_relu_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<f32>
  %r = call @leaky_relu(%d, %alpha) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: leaky relu result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%r, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y, %r : tensor<2x3xf32>, tensor<2x3xf32>
}
func.func private @leaky_relu(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.multiply %2, %arg0 : tensor<2x3xf32>
  %4 = stablehlo.select %1, %arg0, %3 : tensor<2x3xi1>, tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// A negative scale after a leaky relu: select(v >= 0, v, a * v) * s swaps the branches.
// CHECK-LABEL: func.func @no_fold_leaky_relu_negative_scale(
// CHECK:         stablehlo.multiply %{{.+}}, %{{.+}} : tensor<2x3xf32>
// CHECK:         return
func.func @no_fold_leaky_relu_negative_scale(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<f32>
  %r = call @leaky_relu(%d, %alpha) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale is negative: a maximum (relu, clamp, max-pool) times s < 0 is a minimum [fold_scale_through_relu]
  %y = stablehlo.multiply %r, %s : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @leaky_relu(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.multiply %2, %arg0 : tensor<2x3xf32>
  %4 = stablehlo.select %1, %arg0, %3 : tensor<2x3xi1>, tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// One operand of the concatenate is a function argument: its range of the scale has no
// weights to go into.
// CHECK-LABEL: func.func @no_fold_concatenate_operand_not_linear(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_concatenate_operand_not_linear(%arg0: tensor<2x4xf32>, %arg1: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.concatenate %d, %arg1, dim = 1 : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0, -1.0, 4.0]> : tensor<5xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0, 2.0]> : tensor<5xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25, 0.0, 1.0]> : tensor<5xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25, 1.0, 1.0]> : tensor<5xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: an operand of the concatenate is not a linear op (an argument) [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// The second operand is a tanh of a dot_general: named in the report.
// CHECK-LABEL: func.func @no_fold_concatenate_operand_tanh(
// CHECK:         stablehlo.multiply
func.func @no_fold_concatenate_operand_tanh(%arg0: tensor<2x4xf32>) -> tensor<2x6xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %e = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %t = stablehlo.tanh %e : tensor<2x3xf32>
  %c = stablehlo.concatenate %d, %t, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x6xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: an operand of the concatenate is not a linear op (stablehlo.tanh) [fold_scale_through_relu]
  %y = stablehlo.multiply %c, %h : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// The concatenate is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_concatenate_other_users(
// CHECK:         stablehlo.multiply
func.func @no_fold_concatenate_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %e = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.concatenate %d, %e, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x6xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: concatenate result has other users [fold_scale_through_relu]
  %y = stablehlo.multiply %c, %h : tensor<2x6xf32>
  return %y, %c : tensor<2x6xf32>, tensor<2x6xf32>
}

// -----

// The second dot_general's weights are a function argument: each range is scaled exactly,
// as a constant.
// CHECK-LABEL: func.func @no_fold_concatenate_weights_argument(
// CHECK:         stablehlo.multiply
func.func @no_fold_concatenate_weights_argument(%arg0: tensor<2x4xf32>, %arg1: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %e = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.concatenate %d, %e, dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x6xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: weights are not a constant [fold_scale_through_relu]
  %y = stablehlo.multiply %c, %h : tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// The slice is also returned: its value must stay.
// CHECK-LABEL: func.func @no_fold_slice_other_users(
// CHECK:         stablehlo.multiply
func.func @no_fold_slice_other_users(%arg0: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5], [0.75, 0.5, -1.0, 0.25], [-0.5, 0.25, 0.125, 1.0], [1.0, -0.75, 0.5, -0.5]]> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = stablehlo.slice %d [0:2, 0:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: slice result has other users [fold_scale_through_relu]
  %y = stablehlo.multiply %s, %h : tensor<2x2xf32>
  return %y, %s : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// torch's chunk: two slices read the dot_general, so the other chunk would see the
// scaled channels too.
// CHECK-LABEL: func.func @no_fold_chunk_of_dot_general(
// CHECK:         stablehlo.multiply
func.func @no_fold_chunk_of_dot_general(%arg0: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5], [0.75, 0.5, -1.0, 0.25], [-0.5, 0.25, 0.125, 1.0], [1.0, -0.75, 0.5, -0.5]]> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = stablehlo.slice %d [0:2, 0:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %r = stablehlo.slice %d [0:2, 2:4] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: producer result has other users [fold_scale_through_relu]
  %y = stablehlo.multiply %s, %h : tensor<2x2xf32>
  return %y, %r : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A slice of the channels after a relu: the relu below it meets all four channels, the
// chain only two.
// CHECK-LABEL: func.func @no_fold_slice_of_channels_after_relu(
// CHECK:         stablehlo.multiply
func.func @no_fold_slice_of_channels_after_relu(%arg0: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5], [0.75, 0.5, -1.0, 0.25], [-0.5, 0.25, 0.125, 1.0], [1.0, -0.75, 0.5, -0.5]]> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r = stablehlo.maximum %d, %zero : tensor<2x4xf32>
  %s = stablehlo.slice %r [0:2, 1:3] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the slice of the channels does not read the linear op: the ops below it have other channels [fold_scale_through_relu]
  %y = stablehlo.multiply %s, %h : tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A slice of some channels, then a slice of some of those: the second slice's channels
// are not the first's, so the chain stays (it crashed the pass when the first slice's
// channels were taken for the chain's).
// CHECK-LABEL: func.func @no_fold_slice_of_a_slice_of_channels(
// CHECK:         stablehlo.multiply
func.func @no_fold_slice_of_a_slice_of_channels(%arg0: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5, 0.3, 0.2], [0.75, 0.5, -1.0, 0.25, 0.1, -0.4], [-0.5, 0.25, 0.125, 1.0, 0.7, 0.9], [1.0, -0.75, 0.5, -0.5, -0.6, 0.8]]> : tensor<4x6xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  %s1 = stablehlo.slice %d [0:2, 1:6] : (tensor<2x6xf32>) -> tensor<2x5xf32>
  %s = stablehlo.slice %s1 [0:2, 1:5:2] : (tensor<2x5xf32>) -> tensor<2x2xf32>
  %m = stablehlo.constant dense<[2.0, -3.0]> : tensor<2xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the slice of the channels does not read the linear op: the ops below it have other channels [fold_scale_through_relu]
  %x = stablehlo.multiply %s, %mb : tensor<2x2xf32>
  return %x : tensor<2x2xf32>
}

// -----

// The scale is a function argument: only constants pass a slice.
// CHECK-LABEL: func.func @no_fold_slice_scale_argument(
// CHECK:         stablehlo.multiply
func.func @no_fold_slice_scale_argument(%arg0: tensor<16x4xf32>, %arg1: tensor<2xf32>) -> tensor<16x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0, 0.5], [0.75, 0.5, -1.0, 0.25], [-0.5, 0.25, 0.125, 1.0], [1.0, -0.75, 0.5, -0.5]]> : tensor<4x4xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
  %s = stablehlo.slice %d [0:16, 0:2] : (tensor<16x4xf32>) -> tensor<16x2xf32>
  %h = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<16x2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale or shift is not a constant: only constants pass a slice [fold_scale_through_relu]
  %y = stablehlo.multiply %s, %h : tensor<16x2xf32>
  return %y : tensor<16x2xf32>
}

// -----

// The sum pool's init value is 1: it would be scaled on one side only.
// CHECK-LABEL: func.func @no_fold_sum_pool_init_not_zero(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_sum_pool_init_not_zero(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<1.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2x2x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the sum pool's init value is not 0: scaling would change its padding [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The sum pool's window spans two channels: a per-channel scale cannot pass it.
// CHECK-LABEL: func.func @no_fold_sum_pool_across_channels(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_sum_pool_across_channels(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 1, 1, 2>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %n = stablehlo.constant dense<2.0> : tensor<1x4x4x2xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x4x4x2xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the sum pool's window spans the feature dimension [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// The sum pool's result is also returned: rebuilding it would change that result.
// CHECK-LABEL: func.func @no_fold_sum_pool_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_sum_pool_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2x2x3xf32>
  %avg = stablehlo.divide %p, %n : tensor<1x2x2x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: sum pool result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y, %p : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
}

// -----

// The reduce's result is also returned: rebuilding it would change that result.
// CHECK-LABEL: func.func @no_fold_reduce_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_reduce_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3xf32>
  %n = stablehlo.constant dense<16.0> : tensor<1x3xf32>
  %avg = stablehlo.divide %sum, %n : tensor<1x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: reduce result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y, %sum : tensor<1x3xf32>, tensor<1x3xf32>
}

// -----

// The reduce starts each sum at 1: it would be scaled on one side only.
// CHECK-LABEL: func.func @no_fold_reduce_init_not_zero(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_reduce_init_not_zero(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %z = stablehlo.constant dense<1.0> : tensor<f32>
  %sum = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3xf32>
  %n = stablehlo.constant dense<16.0> : tensor<1x3xf32>
  %avg = stablehlo.divide %sum, %n : tensor<1x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the reduce's init value is not its identity: scaling would change it [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// The scale is a function argument: only constants pass a sum pool.
// CHECK-LABEL: func.func @no_fold_sum_pool_scale_argument(
// CHECK:         stablehlo.multiply
func.func @no_fold_sum_pool_scale_argument(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3xf32>) -> tensor<1x2x2x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %s = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale or shift is not a constant: only constants pass a sum pool or reduce [fold_scale_through_relu]
  %y = stablehlo.multiply %p, %s : tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// The average pool's divisor is computed from an argument: it may be the data.
// CHECK-LABEL: func.func @no_fold_average_pool_divisor_from_data(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_average_pool_divisor_from_data(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.broadcast_in_dim %arg1, dims = [0, 1, 2, 3] : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32>
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the average pool's divisor is computed from the data [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The average pool's divisor differs from channel to channel: it does not commute with s.
// CHECK-LABEL: func.func @no_fold_average_pool_divisor_along_the_feature(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_average_pool_divisor_along_the_feature(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.constant dense<[[[[4.0, 6.0, 9.0], [6.0, 9.0, 9.0], [6.0, 9.0, 9.0], [4.0, 6.0, 6.0]], [[6.0, 9.0, 9.0], [9.0, 9.0, 9.0], [9.0, 9.0, 9.0], [6.0, 9.0, 9.0]], [[6.0, 9.0, 9.0], [9.0, 9.0, 9.0], [9.0, 9.0, 9.0], [6.0, 9.0, 9.0]], [[4.0, 6.0, 6.0], [6.0, 9.0, 9.0], [6.0, 9.0, 9.0], [4.0, 6.0, 4.0]]]]> : tensor<1x4x4x3xf32>
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the average pool's divisor varies along the feature dimension [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The average pool's divide is also returned: rebuilding it would change that result.
// CHECK-LABEL: func.func @no_fold_average_pool_divide_other_users(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_average_pool_divide_other_users(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c0 = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = stablehlo.add %c0, %bb : tensor<1x4x4x3xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%c, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<1x4x4x1xf32>
  %cnt = "stablehlo.reduce_window"(%ones, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x1xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %m = stablehlo.broadcast_in_dim %cnt, dims = [0, 1, 2, 3] : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32>
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT: through.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: average pool divide result has other users [fold_scale_through_relu]
  %y = "stablehlo.batch_norm_inference"(%avg, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y, %avg : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// Not candidates, no line of this pattern: a relu of an argument, and a relu of a
// convolution that no per-channel chain reads.
// CHECK-LABEL: func.func @no_fold_relu_of_argument_or_without_chain(
// CHECK:         stablehlo.maximum
// CHECK:         stablehlo.batch_norm_inference
// CHECK:         stablehlo.maximum
// REPORT-NOT:    [fold_scale_through_relu]
// REPORT:        {{[0-9]+}} norms: {{[0-9]+}} folded whole
func.func @no_fold_relu_of_argument_or_without_chain(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]], [[-0.125, -0.875, -0.375], [0.25, 0.625, 0.5]]], [[[1.0, -0.625, 0.75], [-1.0, 0.125, -0.5]], [[-0.625, 0.375, -0.375], [0.125, -0.5, -0.75]]]]> : tensor<2x2x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %a = stablehlo.maximum %arg1, %zero : tensor<1x4x4x3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %y = "stablehlo.batch_norm_inference"(%a, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %r = stablehlo.maximum %c, %zero : tensor<1x4x4x3xf32>
  return %y, %r : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// A call whose select keeps v where v < 0 is no leaky relu: no candidate.
// CHECK-LABEL: func.func @no_fold_select_call_that_is_no_leaky_relu(
// CHECK:         %[[R:.+]] = call @not_leaky(
// CHECK:         stablehlo.multiply %[[R]],
func.func @no_fold_select_call_that_is_no_leaky_relu(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0], [-0.5, 0.25, 0.125], [1.0, -0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<f32>
  %r = call @not_leaky(%d, %alpha) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x3xf32>
  %y = stablehlo.multiply %r, %h : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @not_leaky(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.compare LT, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.multiply %2, %arg0 : tensor<2x3xf32>
  %4 = stablehlo.select %1, %arg0, %3 : tensor<2x3xi1>, tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}
