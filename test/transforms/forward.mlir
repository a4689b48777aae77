// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s

// Input-side folds forward through the ops a positive scale passes (patterns/input_side.py,
// analysis/passage.py): a per-feature affine chain x * s + t read by a linear op through a
// relu, a max-pool or a zero pad. The scale goes into the linear ops' weights, the shift
// stays in front as one add x + t / s, and a relu becomes a per-channel clamp where a scale
// is negative. Each REPORT-DAG line sits right above the op the report names.

// Keras's pre-activation batch norm, y * inv + shift -> relu -> 1x1 convolution, every
// scale positive: the relu stays a maximum, on x + t / s.
// CHECK-LABEL: func.func @fold_preactivation_bn_into_conv(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[R]], %[[K]])
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[C]]
func.func @fold_preactivation_bn_into_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A negative scale: relu(s * u) = s * clamp(lo, u, hi), (lo, hi) = (0, +inf) where s > 0
// and (-inf, 0) where s < 0, the s into the dense layer's weights.
// CHECK-LABEL: func.func @fold_negative_scale_bn_relu_dense_as_clamp(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK-DAG:     %[[LO:.+]] = stablehlo.constant dense<[0.000000e+00, 0xFF800000]> : tensor<2xf32>
// CHECK-DAG:     %[[HI:.+]] = stablehlo.constant dense<[0x7F800000, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[LB:.+]] = stablehlo.broadcast_in_dim %[[LO]], dims = [1]
// CHECK-DAG:     %[[HB:.+]] = stablehlo.broadcast_in_dim %[[HI]], dims = [1]
// CHECK:         %[[R:.+]] = stablehlo.clamp %[[LB]], %[[X]], %[[HB]] : tensor<4x2xf32>
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[R]], %[[W]], contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.maximum
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[D]]
func.func @fold_negative_scale_bn_relu_dense_as_clamp(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.maximum [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %r = stablehlo.maximum %zero, %y : tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// ResNetV2's pre-activation: `call @relu` (jax.nn.relu is jitted) read by the residual
// branch's convolution and the shortcut's. The call becomes a clamp in place; the callee
// stays as it is.
// CHECK-LABEL: func.func @fold_through_relu_call_into_two_convolutions(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK-NOT:     call @relu
// CHECK-DAG:     stablehlo.convolution(%[[R]], %{{.+}}) {{.+}} -> tensor<1x4x4x3xf32>
// CHECK-DAG:     stablehlo.convolution(%[[R]], %{{.+}}) {{.+}} -> tensor<1x4x4x4xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK-LABEL: func.func private @relu(
// CHECK:         stablehlo.maximum
func.func @fold_through_relu_call_into_two_convolutions(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x4xf32>) {
  %inv = stablehlo.constant dense<[-1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %r = call @relu(%y) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %k1 = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %k2 = stablehlo.constant dense<[[[[0.5, 0.25, -1.0, 0.125], [1.0, -0.75, 0.5, 0.25]]]]> : tensor<1x1x2x4xf32>
  %c1 = stablehlo.convolution(%r, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %c2 = stablehlo.convolution(%r, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x4x4x4xf32>
  return %c1, %c2 : tensor<1x4x4x3xf32>, tensor<1x4x4x4xf32>
}
func.func private @relu(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<1x4x4x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// A scale alone (t = 0): nothing is left in front; the relu reads x.
// CHECK-LABEL: func.func @fold_scale_alone_through_relu(
// CHECK:         %[[R:.+]] = stablehlo.maximum %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         stablehlo.convolution(%[[R]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.add
func.func @fold_scale_alone_through_relu(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution through stablehlo.maximum [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %m, %zero : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// relu -> zero pad -> max-pool -> convolution (a ResNet stem's ZeroPadding2D and
// MaxPool2D): each passes a positive scale.
// CHECK-LABEL: func.func @fold_through_relu_pad_and_max_pool(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %{{.+}}
// CHECK:         %[[P:.+]] = stablehlo.pad %[[R]]
// CHECK:         %[[M:.+]] = "stablehlo.reduce_window"(%[[P]]
// CHECK:         stablehlo.convolution(%[[M]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_relu_pad_and_max_pool(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum, stablehlo.pad, stablehlo.reduce_window [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<1x4x4x2xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %r, %pz, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%p, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// A symbolic batch, as jax.export writes it: `call @relu(%dim, %v)`, the chain's values
// broadcast to a shape built from the batch argument. The kept add and the clamp's bounds
// read that same shape (not the data's).
// CHECK-LABEL: func.func @fold_symbolic_batch_relu_call_as_clamp(
// CHECK:         %[[SHAPE:.+]] = stablehlo.concatenate
// CHECK:         %[[X:.+]] = stablehlo.add %arg1, %{{.+}} : tensor<?x2xf32>
// CHECK-DAG:     stablehlo.dynamic_broadcast_in_dim %{{.+}}, %[[SHAPE]], dims = [1] : (tensor<2xf32>, tensor<2xi32>) -> tensor<?x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<?x2xf32>
// CHECK:         stablehlo.dot_general %[[R]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     get_dimension_size
// CHECK-NOT:     stablehlo.multiply
func.func @fold_symbolic_batch_relu_call_as_clamp(%arg0: tensor<i32>, %arg1: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %b = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %b, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [1] : (tensor<2xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %s = stablehlo.dynamic_broadcast_in_dim %shift, %shape, dims = [1] : (tensor<2xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %m = stablehlo.multiply %arg1, %i : tensor<?x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.maximum [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<?x2xf32>
  %r = call @relu_dim(%arg0, %y) : (tensor<i32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %d : tensor<?x3xf32>
}
func.func private @relu_dim(%arg0: tensor<i32>, %arg1: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %c = stablehlo.constant dense<2> : tensor<1xi32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %cst, %1, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x2xf32>
  %3 = stablehlo.maximum %arg1, %2 : tensor<?x2xf32>
  return %3 : tensor<?x2xf32>
}

// -----

// A negative scale before a max-pool: maxpool(v * s) = minpool(v) * s for s < 0, which no
// op after it can take.
// CHECK-LABEL: func.func @no_fold_negative_scale_before_max_pool(
// CHECK:         stablehlo.multiply
func.func @no_fold_negative_scale_before_max_pool(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[-1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale is negative before a max-pool: maxpool(v * s) is not maxpool(v) * s [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// A zero scale (a dead channel): x + t / s cannot be built.
// CHECK-LABEL: func.func @no_fold_zero_scale_before_relu(
// CHECK:         stablehlo.multiply
func.func @no_fold_zero_scale_before_relu(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale has a zero: a dead channel is not moved through a relu, clamp or pool [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A scale that is a function argument (weights as arguments): its sign is unknown.
// CHECK-LABEL: func.func @no_fold_argument_scale_before_relu(
// CHECK:         stablehlo.multiply
func.func @no_fold_argument_scale_before_relu(%arg0: tensor<4x2xf32>, %gamma: tensor<2xf32>) -> tensor<4x3xf32> {
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale or shift is not a constant: the scale's sign is unknown [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A maximum against 0.5, not a relu: max(v * s, 0.5) is not max(v, 0.5) * s.
// CHECK-LABEL: func.func @no_fold_maximum_not_against_zero(
// CHECK:         stablehlo.multiply
func.func @no_fold_maximum_not_against_zero(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the maximum is not against zero: not a relu [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %half = stablehlo.constant dense<0.5> : tensor<4x2xf32>
  %r = stablehlo.maximum %y, %half : tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A pad with a padding value of 1: 1 * s is not 1.
// CHECK-LABEL: func.func @no_fold_pad_value_not_zero(
// CHECK:         stablehlo.multiply
func.func @no_fold_pad_value_not_zero(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the pad's padding value is not zero: scaling would change it [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %p = stablehlo.pad %m, %one, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<3x3x2x3xf32>
  %c = stablehlo.convolution(%p, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A pad along the feature dimension (one channel off the front, one zero channel at the
// back): channel c would meet the scale of channel c + 1.
// CHECK-LABEL: func.func @no_fold_pad_along_the_feature(
// CHECK:         stablehlo.multiply
func.func @no_fold_pad_along_the_feature(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the pad pads the feature dimension [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %m, %zero, low = [0, 0, 0, -1], high = [0, 0, 0, 1], interior = [0, 0, 0, 0] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%p, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A max-pool whose init value is 0: its padding and each window's start would be scaled.
// CHECK-LABEL: func.func @no_fold_max_pool_init_not_lowest(
// CHECK:         stablehlo.multiply
func.func @no_fold_max_pool_init_not_lowest(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the max-pool's init value is not -inf or the lowest value: scaling would change its padding [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%m, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// A max-pool whose window spans two channels: it mixes channels of different scales.
// CHECK-LABEL: func.func @no_fold_max_pool_across_channels(
// CHECK:         stablehlo.multiply
func.func @no_fold_max_pool_across_channels(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the max-pool's window spans the feature dimension [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x4xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%m, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 1, 1, 2>, padding = dense<[[0, 0], [0, 0], [0, 0], [0, 1]]> : tensor<4x2xi64>} : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %k = stablehlo.constant dense<0.5> : tensor<1x1x4x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// conv -> relu -> batch norm (x * s + t) -> max-pool (-inf, SAME padding) -> 1x1 conv + b:
// maxpool(v + t) = maxpool(v) + t, so the shift passes the pool into the 1x1
// convolution's bias add and the scale into its kernel (or, folded back first, into the
// first kernel through the relu): no op is left on the full-size tensor.
// CHECK-LABEL: func.func @fold_shift_through_max_pool_into_bias(
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[C]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[R]], %{{.+}})
// CHECK:         %[[D:.+]] = stablehlo.convolution(%[[P]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_shift_through_max_pool_into_bias(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %k0 = stablehlo.constant dense<[[[[0.75, -0.5], [-0.375, -0.125]]]]> : tensor<1x1x2x2xf32>
  %c0 = stablehlo.convolution(%arg0, %k0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %c0, %zero : tensor<1x4x4x2xf32>
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %r, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum [fold_scale_through_relu]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %ninf) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x2x2x3xf32>
  return %o : tensor<1x2x2x3xf32>
}

// -----

// A batch norm x * s + t -> max-pool (init the lowest finite value, no padding: every
// window holds elements of x) -> 1x1 convolution without a bias: the whole map folds, the
// shift as a bias add after the convolution, on the pooled tensor (two ops for one).
// CHECK-LABEL: func.func @fold_shift_through_unpadded_lowest_init_max_pool(
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%arg0, %{{.+}})
// CHECK:         %[[D:.+]] = stablehlo.convolution(%[[P]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_shift_through_unpadded_lowest_init_max_pool(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.reduce_window [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %low = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %low) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// A max-pool whose init value is the lowest finite value and which pads so that a window
// reads padding alone (padding 2, windows of 2, 4 apart): that window keeps the lowest
// value where the original's is moved by s and t. Neither passes: the chain stays.
// CHECK-LABEL: func.func @no_fold_through_lowest_init_max_pool_with_a_window_of_padding_alone(
// CHECK:         %[[M:.+]] = stablehlo.multiply %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[X:.+]] = stablehlo.add %[[M]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[X]], %{{.+}})
// CHECK:         stablehlo.convolution(%[[P]], %{{.+}})
func.func @no_fold_through_lowest_init_max_pool_with_a_window_of_padding_alone(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the max-pool's init value is the lowest finite value, not -inf, and a window may hold only padding: the scale cannot pass it (its maximum is the lowest value, not the lowest value times s) [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %low = stablehlo.constant dense<0xFF7FFFFF> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %low) <{padding = dense<[[0, 0], [2, 2], [2, 2], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 4, 4, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x2x2x3xf32>
  return %o : tensor<1x2x2x3xf32>
}

// -----

// A zero pad before the max-pool: pad(v + t, 0) is not pad(v, 0) + t (the padding would
// move), so the shift stays in front as x + t / s; the scale folds.
// CHECK-LABEL: func.func @no_shift_through_zero_padded_max_pool(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[Z:.+]] = stablehlo.pad %[[X]]
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[Z]], %{{.+}})
// CHECK:         stablehlo.convolution(%[[P]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
func.func @no_shift_through_zero_padded_max_pool(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.pad, stablehlo.reduce_window [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.pad %y, %pz, low = [0, 0, 0, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x5x5x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%z, %ninf) <{window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x5x5x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x2x2x3xf32>
  return %o : tensor<1x2x2x3xf32>
}

// -----

// A shift alone (a batch norm's, its scale folded back through the relu) before a
// max-pool whose window spans two channels: maxpool(v + t) mixes two channels' shifts, so
// nothing passes it and the add stays.
// CHECK-LABEL: func.func @no_shift_alone_through_max_pool_across_channels(
// CHECK:         %[[X:.+]] = stablehlo.add %{{.+}}, %{{.+}} : tensor<1x4x4x4xf32>
// CHECK:         "stablehlo.reduce_window"(%[[X]], %{{.+}})
func.func @no_shift_alone_through_max_pool_across_channels(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x4x4x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x4xf32>
  %r = stablehlo.maximum %arg0, %zero : tensor<1x4x4x4xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5, 1.0, 0.125]> : tensor<4xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %y = stablehlo.add %r, %s : tensor<1x4x4x4xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 1, 1, 2>, padding = dense<[[0, 0], [0, 0], [0, 0], [0, 1]]> : tensor<4x2xi64>} : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %k = stablehlo.constant dense<0.5> : tensor<1x1x4x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x4x4x3xf32>
  return %o : tensor<1x4x4x3xf32>
}

// -----

// A shift alone before a max-pool whose init value is 0, not -inf: max(v + t, 0) is not
// max(v, 0) + t. The add stays.
// CHECK-LABEL: func.func @no_shift_alone_through_max_pool_init_not_lowest(
// CHECK:         %[[X:.+]] = stablehlo.add %{{.+}}, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         "stablehlo.reduce_window"(%[[X]], %{{.+}})
func.func @no_shift_alone_through_max_pool_init_not_lowest(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %arg0, %zero : tensor<1x4x4x2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y = stablehlo.add %r, %s : tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %mp = "stablehlo.reduce_window"(%y, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%mp, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x2x2x3xf32>
  return %o : tensor<1x2x2x3xf32>
}

// -----

// A shift alone (a pre-activation batch norm's x + t / s, its scale folded forward) before
// a clamp: moved into the convolution's bias it would cancel there at the size of t, and
// the clamp's bounds be rounded at that size, for no scale moved. It stays.
// CHECK-LABEL: func.func @no_shift_alone_through_clamp(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}}
// CHECK:         stablehlo.convolution(%[[C]], %{{.+}})
func.func @no_shift_alone_through_clamp(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y = stablehlo.add %arg0, %s : tensor<1x4x4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bias = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %o = stablehlo.add %c, %bb : tensor<1x4x4x3xf32>
  return %o : tensor<1x4x4x3xf32>
}

// -----

// DenseNet's and ResNetV2's head: the last batch norm -> relu -> global average pool
// (reduce add over H and W, then a divide by H * W, which folds into the Dense first) ->
// Dense. The scale passes the relu and the sum along the feature, dimension 3 then 1.
// CHECK-LABEL: func.func @fold_through_relu_and_global_average_pool(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x2x2x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %{{.+}}
// CHECK:         %[[S:.+]] = stablehlo.reduce(%[[R]] init: %{{.+}}) applies stablehlo.add across dimensions = [1, 2]
// CHECK:         stablehlo.dot_general %[[S]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.divide
func.func @fold_through_relu_and_global_average_pool(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.maximum, stablehlo.reduce [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x2x2x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x2x2x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<1x2x2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:11: folded stablehlo.divide into stablehlo.dot_general [fold_input_affine_into_dot_general]
  %mean = stablehlo.divide %sum, %n : tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %mean, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// batch norm -> global average pool -> Dense, no relu: the shift passes the sum too, as
// n * t (n = 4 elements per channel), into the Dense's own bias. Nothing is left.
// CHECK-LABEL: func.func @fold_bn_global_average_pool_dense_whole(
// CHECK:         %[[S:.+]] = stablehlo.reduce(%arg0 init: %{{.+}}) applies stablehlo.add across dimensions = [1, 2]
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[S]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[Y]]
func.func @fold_bn_global_average_pool_dense_whole(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.reduce [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %n = stablehlo.constant dense<4.0> : tensor<1x2xf32>
  %avg = stablehlo.divide %sum, %n : tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %avg, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %b = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %o = stablehlo.add %d, %bb : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}

// -----

// A sum whose init value is 1: the scale would scale it too.
// CHECK-LABEL: func.func @no_fold_reduce_init_not_zero(
// CHECK:         stablehlo.multiply
func.func @no_fold_reduce_init_not_zero(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the reduce's init value is not its identity: scaling would change it [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %sum = stablehlo.reduce(%m init: %one) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %sum, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// A maximum over the spatial dimensions that starts at 0, not -inf: max(0, v + t) is not
// max(0, v) + t, so the shift cannot pass it (without the check: 0.125 off).
// CHECK-LABEL: func.func @no_fold_reduce_max_init_not_lowest(
// CHECK:         stablehlo.add
// CHECK:         stablehlo.reduce
func.func @no_fold_reduce_max_init_not_lowest(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  %sh = stablehlo.constant dense<[0.25, -0.75]> : tensor<2xf32>
  %s = stablehlo.broadcast_in_dim %sh, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the reduce's init value is not its identity: scaling would change it [fold_input_affine_into_dot_general]
  %a = stablehlo.add %m, %s : tensor<1x2x2x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %mx = stablehlo.reduce(%a init: %zero) applies stablehlo.maximum across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %mx, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// A maximum from the lowest finite value over a dimension of dynamic size, which may be
// zero: then the result is the lowest value, not the lowest value times s.
// CHECK-LABEL: func.func @no_fold_reduce_max_lowest_over_a_dynamic_size(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.reduce
func.func @no_fold_reduce_max_lowest_over_a_dynamic_size(%arg0: tensor<1x?x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %d1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<1x?x2xf32>) -> tensor<i32>
  %r1 = stablehlo.reshape %d1 : (tensor<i32>) -> tensor<1xi32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %sh = stablehlo.concatenate %one, %r1, %two, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %sh, dims = [2] : (tensor<2xf32>, tensor<3xi32>) -> tensor<1x?x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the max-pool's init value is the lowest finite value, not -inf, and a window may hold only padding: the scale cannot pass it (its maximum is the lowest value, not the lowest value times s) [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<1x?x2xf32>
  %low = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
  %mx = stablehlo.reduce(%m init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<1x?x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %mx, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// The chain is also summed over its feature dimension: the sum mixes channels of
// different scales.
// CHECK-LABEL: func.func @no_fold_reduce_over_the_feature(
// CHECK:         stablehlo.multiply
func.func @no_fold_reduce_over_the_feature(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the reduce reduces the feature dimension [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<2x4xf32>
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %m, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  return %d, %sum : tensor<2x3xf32>, tensor<2xf32>
}

// -----

// batch_norm_inference -> average pool (a 2 x 2 sum pool without padding, then a divide by
// 4, which folds into the convolution first) -> convolution: a sum pool passes any scale
// (a negative gamma too) and the shift as 4 * t, pool(x * s + t) = pool(x) * s + 4 * t:
// the whole norm goes into the convolution's kernel and a bias after it.
// CHECK-LABEL: func.func @fold_bn_average_pool_conv_whole(
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%arg0, %{{.+}})
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[P]], %{{.+}})
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x2x2x3xf32>
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bn_average_pool_conv_whole(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %four = stablehlo.constant dense<4.0> : tensor<1x2x2x2xf32>
  %avg = stablehlo.divide %p, %four : tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%avg, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// batch_norm_inference -> a padded 3 x 3 sum pool -> convolution: the scale passes (0 * s
// = 0 in the padding), any sign; the shift cannot (the windows at the edge add fewer
// elements) and stays in front as one add x + t / s.
// CHECK-LABEL: func.func @fold_bn_padded_sum_pool_keeps_the_shift_in_front(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[X]], %{{.+}})
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[P]], %{{.+}})
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[C]]
func.func @fold_bn_padded_sum_pool_keeps_the_shift_in_front(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%p, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// The sum pool's init value is 1: the scale would meet it on one side only.
// CHECK-LABEL: func.func @no_fold_sum_pool_init_not_zero(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_sum_pool_init_not_zero(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the sum pool's init value is not 0: scaling would change its padding [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<1.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%p, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// The sum pool adds two channels: a per-channel scale cannot pass it.
// CHECK-LABEL: func.func @no_fold_sum_pool_across_channels(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_sum_pool_across_channels(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the sum pool's window spans the feature dimension [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{window_dimensions = array<i64: 1, 1, 1, 2>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875]]]]> : tensor<1x1x1x3xf32>
  %c = stablehlo.convolution(%p, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// batch_norm_inference -> an average pool that excludes its padding (flax's
// count_include_pad=False: the sum pool divided by the count of each window, a sum pool
// of ones) -> convolution: the count m is the same for every channel, (v * s) / m = (v /
// m) * s for any s; the shift stays in front as x + t / s.
// CHECK-LABEL: func.func @fold_bn_average_pool_excluding_padding_conv(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[P:.+]] = "stablehlo.reduce_window"(%[[X]], %{{.+}})
// CHECK:         %[[D:.+]] = stablehlo.divide %[[P]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[D]], %{{.+}})
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[C]]
func.func @fold_bn_average_pool_excluding_padding_conv(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window, stablehlo.divide [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<1x4x4x1xf32>
  %cnt = "stablehlo.reduce_window"(%ones, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x1xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %m = stablehlo.broadcast_in_dim %cnt, dims = [0, 1, 2, 3] : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%avg, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// The average pool's divisor differs from channel to channel: it does not commute with s.
// CHECK-LABEL: func.func @no_fold_average_pool_divisor_along_the_feature(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_average_pool_divisor_along_the_feature(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the average pool's divisor varies along the feature dimension [fold_input_affine_into_conv]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%y, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.constant dense<[[[[4.0, 6.0], [6.0, 9.0], [6.0, 9.0], [4.0, 6.0]], [[6.0, 9.0], [9.0, 9.0], [9.0, 9.0], [6.0, 9.0]], [[6.0, 9.0], [9.0, 9.0], [9.0, 9.0], [6.0, 9.0]], [[4.0, 6.0], [6.0, 9.0], [6.0, 9.0], [4.0, 4.0]]]]> : tensor<1x4x4x2xf32>
  %avg = stablehlo.divide %p, %m : tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%avg, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A divide after a sum pool by a value that varies along the channels only is no count
// map: it is a per-channel divide, the end of a chain the convolution reads, and folds
// into it (the walk forward does not take it for an average pool's divisor). The batch
// norm before the pool then folds forward through the pool.
// CHECK-LABEL: func.func @fold_per_channel_divide_after_a_sum_pool(
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     stablehlo.batch_norm_inference
// CHECK:         stablehlo.convolution
func.func @fold_per_channel_divide_after_a_sum_pool(%arg0: tensor<1x6x6x3xf32>) -> tensor<1x3x3x2xf32> {
  %scale = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.reduce_window [fold_input_affine_into_conv]
  %x = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x6x6x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x6x6x3xf32>
  %init_p = stablehlo.constant dense<0.0> : tensor<f32>
  %p = "stablehlo.reduce_window"(%x, %init_p) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1x6x6x3xf32>, tensor<f32>) -> tensor<1x3x3x3xf32>
  %mm = stablehlo.constant dense<[[1.0, 2.0, 4.0], [1.0, 2.0, 4.0], [1.0, 2.0, 4.0]]> : tensor<3x3xf32>
  %m = stablehlo.broadcast_in_dim %mm, dims = [1, 3] : (tensor<3x3xf32>) -> tensor<1x3x3x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.divide into stablehlo.convolution [fold_input_affine_into_conv]
  %q = stablehlo.divide %p, %m : tensor<1x3x3x3xf32>
  %k2 = stablehlo.constant dense<[[[[0.5, -1.0], [0.25, 0.75], [-0.5, 1.5]]]]> : tensor<1x1x3x2xf32>
  %z = stablehlo.convolution(%q, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x3x3x2xf32>
  return %z : tensor<1x3x3x2xf32>
}

// -----

// A transpose moves the feature (dimension 2 of the chain, 1 of the Dense's input), and
// any per-channel map passes it: with no relu the shift passes too, into a bias after
// the Dense (one output feature: a bias add on a result no larger than the chain's).
// Nothing is left in front.
// CHECK-LABEL: func.func @fold_through_transpose_whole(
// CHECK:         %[[T:.+]] = stablehlo.transpose %arg0, dims = [0, 2, 1]
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[T]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add %[[D]], %{{.+}} : tensor<2x3x1xf32>
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_transpose_whole(%arg0: tensor<2x3x2xf32>) -> tensor<2x3x1xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [2] : (tensor<2xf32>) -> tensor<2x3x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [2] : (tensor<2xf32>) -> tensor<2x3x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<2x3x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.transpose [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<2x3x2xf32>
  %t = stablehlo.transpose %y, dims = [0, 2, 1] : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
  %w = stablehlo.constant dense<[[0.5], [0.75]]> : tensor<2x1xf32>
  %d = stablehlo.dot_general %t, %w, contracting_dims = [1] x [0] : (tensor<2x2x3xf32>, tensor<2x1xf32>) -> tensor<2x3x1xf32>
  return %d : tensor<2x3x1xf32>
}

// -----

// relu -> a reshape that flattens H and W and keeps the channels whole -> Dense (a
// transformer's tokens from a feature map).
// CHECK-LABEL: func.func @fold_through_relu_and_reshape(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x2x2x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %{{.+}}
// CHECK:         %[[F:.+]] = stablehlo.reshape %[[R]] : (tensor<1x2x2x2xf32>) -> tensor<1x4x2xf32>
// CHECK:         stablehlo.dot_general %[[F]], %{{.+}}, contracting_dims = [2] x [0]
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_relu_and_reshape(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.maximum, stablehlo.reshape [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x2x2x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x2x2x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<1x2x2x2xf32>
  %f = stablehlo.reshape %r : (tensor<1x2x2x2xf32>) -> tensor<1x4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %f, %w, contracting_dims = [2] x [0] : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  return %d : tensor<1x4x3xf32>
}

// -----

// The chain is also flattened with another dimension: its channels are no longer one
// dimension there.
// CHECK-LABEL: func.func @no_fold_reshape_merging_the_feature(
// CHECK:         stablehlo.multiply
func.func @no_fold_reshape_merging_the_feature(%arg0: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<8xf32>) {
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: a reshape splits or merges the feature dimension [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<2x4xf32>
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %m, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %flat = stablehlo.reshape %m : (tensor<2x4xf32>) -> tensor<8xf32>
  return %d, %flat : tensor<2x3xf32>, tensor<8xf32>
}

// -----

// torch.export's nn.Linear on a 4-D activation, view(-1, C) then mm: the reshape merges
// the batch and spatial dimensions before the channels and keeps the channels whole.
// The whole map folds into the Dense: its scale into the weights, its shift into a bias.
// CHECK-LABEL: func.func @fold_through_reshape_merging_the_leading_dimensions(
// CHECK:         %[[F:.+]] = stablehlo.reshape %arg0 : (tensor<1x2x3x4xf32>) -> tensor<6x4xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[F]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add %[[D]], %{{.+}} : tensor<6x3xf32>
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_reshape_merging_the_leading_dimensions(%arg0: tensor<1x2x3x4xf32>) -> tensor<6x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5, -2.0, 1.0]> : tensor<4xf32>
  %shift = stablehlo.constant dense<[0.125, -0.25, 0.5, 1.0]> : tensor<4xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<4xf32>) -> tensor<1x2x3x4xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<4xf32>) -> tensor<1x2x3x4xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x3x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.reshape [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x2x3x4xf32>
  %f = stablehlo.reshape %y : (tensor<1x2x3x4xf32>) -> tensor<6x4xf32>
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %f, %w, contracting_dims = [1] x [0] : (tensor<6x4xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %d : tensor<6x3xf32>
}

// -----

// The same view(-1, C) with a symbolic batch: a dynamic reshape merging the batch and
// spatial dimensions, the channels whole.
// CHECK-LABEL: func.func @fold_through_dynamic_reshape_merging_the_leading_dimensions(
// CHECK:         %[[F:.+]] = stablehlo.dynamic_reshape %arg0, %{{.+}} : (tensor<?x2x3x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[F]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         stablehlo.add %[[D]], %{{.+}} : tensor<?x3xf32>
// CHECK-NOT:     stablehlo.multiply {{.+}}xf32>
func.func @fold_through_dynamic_reshape_merging_the_leading_dimensions(%arg0: tensor<?x2x3x4xf32>) -> tensor<?x3xf32> {
  %inv = stablehlo.constant dense<[[[[1.5, 0.5, -2.0, 1.0]]]]> : tensor<1x1x1x4xf32>
  %shift = stablehlo.constant dense<[[[[0.125, -0.25, 0.5, 1.0]]]]> : tensor<1x1x1x4xf32>
  %b = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x2x3x4xf32>) -> tensor<i32>
  %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %shape = stablehlo.concatenate %b1, %c2, %c3, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>, tensor<4xi32>) -> tensor<?x2x3x4xf32>
  %s = stablehlo.dynamic_broadcast_in_dim %shift, %shape, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>, tensor<4xi32>) -> tensor<?x2x3x4xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<?x2x3x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.dynamic_reshape [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<?x2x3x4xf32>
  %six = stablehlo.constant dense<6> : tensor<i32>
  %rows = stablehlo.multiply %b, %six : tensor<i32>
  %rows1 = stablehlo.reshape %rows : (tensor<i32>) -> tensor<1xi32>
  %flat_shape = stablehlo.concatenate %rows1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %f = stablehlo.dynamic_reshape %y, %flat_shape : (tensor<?x2x3x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0], [-2.0, 0.75, 0.5]]> : tensor<4x3xf32>
  %d = stablehlo.dot_general %f, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  return %d : tensor<?x3xf32>
}

// -----

// timm's ConvNeXt with weights as arguments: a channels-last LayerNorm's gamma and beta,
// a permute to channels-first, a 1x1 convolution. A transpose only moves elements: a
// scale of any sign passes it, computed in the graph, and so does the shift.
// CHECK-LABEL: func.func @fold_argument_norm_through_transpose(
// CHECK:         %[[T:.+]] = stablehlo.transpose %arg0, dims = [0, 3, 1, 2]
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg3, %{{.+}} : tensor<3x4x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[T]], %[[K]])
// CHECK:         stablehlo.add %[[C]], %{{.+}} : tensor<1x3x2x3xf32>
// CHECK-NOT:     stablehlo.multiply {{.+}} tensor<1x
func.func @fold_argument_norm_through_transpose(%arg0: tensor<1x2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<3x4x1x1xf32>) -> tensor<1x3x2x3xf32> {
  %g = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<4xf32>) -> tensor<1x2x3x4xf32>
  %b = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<4xf32>) -> tensor<1x2x3x4xf32>
  %m = stablehlo.multiply %arg0, %g : tensor<1x2x3x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.transpose [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %b : tensor<1x2x3x4xf32>
  %t = stablehlo.transpose %y, dims = [0, 3, 1, 2] : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %c = stablehlo.convolution(%t, %arg3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x3xf32>, tensor<3x4x1x1xf32>) -> tensor<1x3x2x3xf32>
  return %c : tensor<1x3x2x3xf32>
}

// -----

// A scale that is an argument before a zero pad: pad(v * s, 0) = pad(v, 0) * s for any
// s, so its sign does not matter; it folds into the kernel (an argument), computed in
// the graph.
// CHECK-LABEL: func.func @fold_argument_scale_through_pad(
// CHECK:         %[[P:.+]] = stablehlo.pad %arg0, %{{.+}}, low = [0, 1, 1, 0], high = [0, 1, 1, 0]
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg2, %{{.+}} : tensor<3x3x3x2xf32>
// CHECK:         stablehlo.convolution(%[[P]], %[[K]])
// CHECK-NOT:     stablehlo.multiply {{.+}} tensor<1x
func.func @fold_argument_scale_through_pad(%arg0: tensor<1x8x8x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<3x3x3x2xf32>) -> tensor<1x8x8x2xf32> {
  %g = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x8x8x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution through stablehlo.pad [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %g : tensor<1x8x8x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %m, %z, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x8x8x3xf32>, tensor<f32>) -> tensor<1x10x10x3xf32>
  %c = stablehlo.convolution(%p, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x10x10x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x8x8x2xf32>
  return %c : tensor<1x8x8x2xf32>
}

// -----

// Keras's input Normalization before ZeroPadding2D with weights as arguments: the scale
// passes the pad, but the shift cannot (the padding is not shifted); it would stay in
// front as x + t / s, which needs constants.
// CHECK-LABEL: func.func @no_fold_argument_normalization_through_pad(
// CHECK:         stablehlo.divide
func.func @no_fold_argument_normalization_through_pad(%arg0: tensor<1x8x8x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>, %arg3: tensor<3x3x3x2xf32>) -> tensor<1x8x8x2xf32> {
  %mb = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<3xf32>) -> tensor<1x8x8x3xf32>
  %sb = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<3xf32>) -> tensor<1x8x8x3xf32>
  %c = stablehlo.subtract %arg0, %mb : tensor<1x8x8x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: the shift stays in front and the weights or scale are not constants [fold_input_affine_into_conv]
  %n = stablehlo.divide %c, %sb : tensor<1x8x8x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %n, %z, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x8x8x3xf32>, tensor<f32>) -> tensor<1x10x10x3xf32>
  %o = stablehlo.convolution(%p, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x10x10x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x8x8x2xf32>
  return %o : tensor<1x8x8x2xf32>
}

// -----

// A scale that is an argument before a slice of the channels: its values would have to
// be laid over the channels the slice keeps in the graph.
// CHECK-LABEL: func.func @no_fold_argument_scale_through_slice_of_channels(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_argument_scale_through_slice_of_channels(%arg0: tensor<8x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<2x3xf32>) -> tensor<8x3xf32> {
  %g = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale or shift is not a constant: only constants are laid over the channels a slice or concatenate keeps [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %g : tensor<8x4xf32>
  %s = stablehlo.slice %m [0:8, 1:3] : (tensor<8x4xf32>) -> tensor<8x2xf32>
  %d = stablehlo.dot_general %s, %arg2, contracting_dims = [1] x [0] : (tensor<8x2xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  return %d : tensor<8x3xf32>
}

// -----

// A constant scale with a shift that is an argument before a clamp: the clamp's bounds
// would move by the shift, computed in the graph.
// CHECK-LABEL: func.func @no_fold_argument_shift_through_clamp(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_argument_shift_through_clamp(%arg0: tensor<8x2xf32>, %arg1: tensor<2xf32>) -> tensor<8x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<8x2xf32>
  %s = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<8x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<8x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel shift is not a constant: the clamp's bounds cannot move by it [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<8x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<8x2xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  return %d : tensor<8x3xf32>
}

// -----

// A shift that is an argument before a global sum: it would pass as n * t, computed in
// the graph.
// CHECK-LABEL: func.func @no_fold_argument_shift_through_global_sum(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_argument_shift_through_global_sum(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2xf32>, %arg2: tensor<2xf32>) -> tensor<1x3xf32> {
  %i = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale or shift is not a constant: only constants pass a sum pool or reduce [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %p, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// A global max pool (reduce maximum from -inf over H and W) passes a positive scale like
// a max-pool, and the shift too (max(v + t) = max(v) + t): both fold into the Dense, the
// shift as a bias add after it, on the pooled vector.
// CHECK-LABEL: func.func @fold_through_global_max_pool(
// CHECK:         %[[M:.+]] = stablehlo.reduce(%arg0 init: %{{.+}}) applies stablehlo.maximum across dimensions = [1, 2]
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[M]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_through_global_max_pool(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.reduce [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x2x2x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mx = stablehlo.reduce(%y init: %ninf) applies stablehlo.maximum across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %mx, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// A negative scale before a global max pool: refused, as before a max-pool.
// CHECK-LABEL: func.func @no_fold_negative_scale_before_global_max_pool(
// CHECK:         stablehlo.multiply
func.func @no_fold_negative_scale_before_global_max_pool(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel scale is negative before a max-pool: maxpool(v * s) is not maxpool(v) * s [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<1x2x2x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mx = stablehlo.reduce(%m init: %ninf) applies stablehlo.maximum across dimensions = [1, 2] : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %mx, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>
}

// -----

// torch-mlir's (and TensorFlow's) inline leaky relu, select(v > 0, v, v * constant_like(a)):
// for s > 0, leaky(v * s) = leaky(v) * s, the compare, multiply and select read x + t / s.
// CHECK-LABEL: func.func @fold_through_inline_leaky_relu(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK-DAG:     %[[A:.+]] = stablehlo.multiply %[[X]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK-DAG:     %[[P:.+]] = stablehlo.compare GT, %[[X]], %{{.+}}, FLOAT
// CHECK:         %[[R:.+]] = stablehlo.select %[[P]], %[[X]], %[[A]]
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[R]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[C]]
func.func @fold_through_inline_leaky_relu(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.select [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %alpha = stablehlo.constant dense<0.01> : tensor<1x4x4x2xf32>
  %a = stablehlo.multiply %y, %alpha : tensor<1x4x4x2xf32>
  %gt = stablehlo.compare GT, %y, %zero, FLOAT : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xi1>
  %r = stablehlo.select %gt, %y, %a : tensor<1x4x4x2xi1>, tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// jax.nn.leaky_relu as jax.export writes it, `call @leaky_relu(%v, %alpha)` (its select a call
// of `_where`), then a dense layer: the call reads x + t / s; the callee stays as it is.
// CHECK-LABEL: func.func @fold_through_leaky_relu_call(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK:         %[[R:.+]] = call @leaky_relu(%[[X]], %{{.+}})
// CHECK:         stablehlo.dot_general %[[R]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     batch_norm_inference
// CHECK-LABEL: func.func private @leaky_relu(
// CHECK:         stablehlo.multiply
func.func @fold_through_leaky_relu_call(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.select [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %alpha = stablehlo.constant dense<0.1> : tensor<f32>
  %r = call @leaky_relu(%y, %alpha) : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}
func.func private @leaky_relu(%arg0: tensor<4x2xf32>, %arg1: tensor<f32>) -> tensor<4x2xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %1 = stablehlo.compare GE, %arg0, %0, FLOAT : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xi1>
  %2 = stablehlo.convert %arg1 : tensor<f32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %4 = stablehlo.multiply %3, %arg0 : tensor<4x2xf32>
  %5 = call @_where(%1, %arg0, %4) : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %5 : tensor<4x2xf32>
}
func.func private @_where(%arg0: tensor<4x2xi1>, %arg1: tensor<4x2xf32>, %arg2: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x2xi1>, tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A negative scale before a leaky relu: for s < 0 the slope moves to the other side of zero.
// CHECK-LABEL: func.func @no_fold_negative_scale_before_leaky_relu(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_negative_scale_before_leaky_relu(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale is negative before a leaky relu: leaky(v * s) is not leaky(v) * s [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %alpha = stablehlo.constant dense<0.01> : tensor<4x2xf32>
  %a = stablehlo.multiply %y, %alpha : tensor<4x2xf32>
  %gt = stablehlo.compare GT, %y, %zero, FLOAT : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xi1>
  %r = stablehlo.select %gt, %y, %a : tensor<4x2xi1>, tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A zero scale before a leaky relu (a dead channel): x + t / s cannot be built.
// CHECK-LABEL: func.func @no_fold_zero_scale_before_leaky_relu(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_zero_scale_before_leaky_relu(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.0]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale has a zero: a dead channel is not moved through a relu, clamp or pool [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %alpha = stablehlo.constant dense<0.01> : tensor<4x2xf32>
  %a = stablehlo.multiply %y, %alpha : tensor<4x2xf32>
  %gt = stablehlo.compare GT, %y, %zero, FLOAT : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xi1>
  %r = stablehlo.select %gt, %y, %a : tensor<4x2xi1>, tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// The leaky relu's compare is also returned: the fold would change it, so the select is
// no leaky relu to pass, and no linear op reads the chain.
// CHECK-LABEL: func.func @no_fold_leaky_relu_compare_with_other_users(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_leaky_relu_compare_with_other_users(%arg0: tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<4x2xi1>) {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: no convolution or dot_general next to the chain (reads an argument, read by stablehlo.compare, stablehlo.multiply, stablehlo.select) [stablehlo-fold-batch-norm]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %alpha = stablehlo.constant dense<0.01> : tensor<4x2xf32>
  %a = stablehlo.multiply %y, %alpha : tensor<4x2xf32>
  %gt = stablehlo.compare GT, %y, %zero, FLOAT : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xi1>
  %r = stablehlo.select %gt, %y, %a : tensor<4x2xi1>, tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d, %gt : tensor<4x3xf32>, tensor<4x2xi1>
}

// -----

// ReLU6 as a clamp, then a dense layer with its own bias: the bounds move with the whole map,
// clamp(lo, v * s + t, hi) = clamp((lo - t) / s, v, (hi - t) / s) * s + t (swapped where
// s < 0), so the shift passes it into the dense layer's bias: nothing is left in front.
// CHECK-LABEL: func.func @fold_through_clamp_shift_into_bias(
// CHECK-DAG:     %[[LO:.+]] = stablehlo.constant dense<[-0.166666672, -1.300000e+01]> : tensor<2xf32>
// CHECK-DAG:     %[[HI:.+]] = stablehlo.constant dense<[3.83333325, -1.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[LB:.+]] = stablehlo.broadcast_in_dim %[[LO]], dims = [1]
// CHECK-DAG:     %[[HB:.+]] = stablehlo.broadcast_in_dim %[[HI]], dims = [1]
// CHECK:         %[[R:.+]] = stablehlo.clamp %[[LB]], %arg0, %[[HB]] : tensor<4x2xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[R]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<4x3xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_through_clamp_shift_into_bias(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.clamp [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %b = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %o = stablehlo.add %d, %bb : tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}

// -----

// The same clamp before a 1x1 convolution with more output channels than input ones: a bias
// add after it would sit on a larger tensor, so the shift stays in front as x + t / s and
// the bounds move by the scale alone, lo / s and hi / s (swapped where s < 0).
// CHECK-LABEL: func.func @fold_through_clamp_shift_kept(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x2xf32>
// CHECK-DAG:     %[[LO:.+]] = stablehlo.constant dense<[0.000000e+00, -1.200000e+01]> : tensor<2xf32>
// CHECK-DAG:     %[[HI:.+]] = stablehlo.constant dense<[4.000000e+00, -0.000000e+00]> : tensor<2xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<1x4x4x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[R]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[C]]
func.func @fold_through_clamp_shift_kept(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.clamp [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_conv]
  %c = stablehlo.convolution(%r, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// jax.nn.relu6 as jax.export writes it, `call @relu6(%v)` of minimum(maximum(v, 0), 6): the
// call becomes an inline clamp with the moved bounds; the callee stays.
// CHECK-LABEL: func.func @fold_through_relu6_call(
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK-NOT:     call @relu6
// CHECK:         stablehlo.dot_general %[[R]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     batch_norm_inference
// CHECK-LABEL: func.func private @relu6(
func.func @fold_through_relu6_call(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.clamp [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %r = call @relu6(%y) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5], [0.75]]> : tensor<2x1xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %w2 = stablehlo.constant dense<[[0.5, -0.25, 1.0]]> : tensor<1x3xf32>
  %e = stablehlo.dot_general %d, %w2, contracting_dims = [1] x [0] : (tensor<4x1xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}
func.func private @relu6(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<4x2xf32>
  %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %3 = stablehlo.minimum %1, %2 : tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}

// -----

// A clamp whose upper bound is an argument: it cannot move with the scale.
// CHECK-LABEL: func.func @no_fold_clamp_bounds_not_constant(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_clamp_bounds_not_constant(%arg0: tensor<4x2xf32>, %hi: tensor<f32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the clamp's bounds are not per-channel constants: they cannot move with the scale [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A zero scale before a clamp (a dead channel): its bounds would move to (lo - t) / 0.
// CHECK-LABEL: func.func @no_fold_zero_scale_before_clamp(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_zero_scale_before_clamp(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.0]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: per-channel scale has a zero: a dead channel is not moved through a relu, clamp or pool [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// Bounds that overflow f32 once moved: 3e38 / 0.5 is not finite.
// CHECK-LABEL: func.func @no_fold_clamp_bounds_overflow(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_clamp_bounds_overflow(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the clamp's bounds times the scale overflow their element type [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<3.0e38> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// relu -> a slice of channels 1 and 2 -> convolution: the convolution's input channels are
// the chain's 1 and 2, so its weights take those channels' scales (one of them negative:
// the relu becomes a clamp on every channel).
// CHECK-LABEL: func.func @fold_through_relu_and_slice_of_channels(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x4x4x4xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<1x4x4x4xf32>
// CHECK:         %[[S:.+]] = stablehlo.slice %[[R]] [0:1, 0:4, 0:4, 1:3]
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}-3.750000e-01, 2.500000e-01, 4.375000e-01], [-7.500000e-01, -2.500000e-01, 1.250000e+00]]]]> : tensor<1x1x2x3xf32>
// CHECK:         stablehlo.convolution(%[[S]], %[[K]])
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_relu_and_slice_of_channels(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x4x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5, 2.0, 0.25]> : tensor<4xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5, 1.0, 0.125]> : tensor<4xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x4xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.maximum, stablehlo.slice [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x4xf32>
  %r = stablehlo.maximum %y, %zero : tensor<1x4x4x4xf32>
  %sl = stablehlo.slice %r [0:1, 0:4, 0:4, 1:3] : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%sl, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  return %c : tensor<1x4x4x3xf32>
}

// -----

// A concatenate of an argument (channel 0: identity) and the chain (channels 1 and 2) along
// the feature: the convolution's weights take the chain's scale on its range and 1 on the
// other, its bias L(t, K) over that range; nothing is left in front.
// CHECK-LABEL: func.func @fold_through_concatenate_with_an_identity_operand(
// CHECK:         %[[J:.+]] = stablehlo.concatenate %arg1, %arg0, dim = 3
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}7.500000e-01], [-7.500000e-01], [4.375000e-01]]]]> : tensor<1x1x3x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[J]], %[[K]])
// CHECK-DAG:     %[[B:.+]] = stablehlo.constant dense<3.125000e-01> : tensor<1xf32>
// CHECK:         stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x1xf32>
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_concatenate_with_an_identity_operand(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.concatenate [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %cc = stablehlo.concatenate %arg1, %y, dim = 3 : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  %k = stablehlo.constant dense<[[[[0.75], [-0.5], [-0.875]]]]> : tensor<1x1x3x1xf32>
  %c = stablehlo.convolution(%cc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x3xf32>, tensor<1x1x3x1xf32>) -> tensor<1x4x4x1xf32>
  return %c : tensor<1x4x4x1xf32>
}

// -----

// A concatenate along H, not the channels: the other operand's elements would meet the
// scale in the convolution's weights too.
// CHECK-LABEL: func.func @no_fold_concatenate_along_another_dimension(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_concatenate_along_another_dimension(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x2xf32>) -> tensor<1x8x4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: the concatenate joins another dimension: its other operands would meet the scale too [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %cc = stablehlo.concatenate %m, %arg1, dim = 1 : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x8x4x2xf32>
  %k = stablehlo.constant dense<[[[[0.75, -0.5, -0.875], [-0.375, -0.125, 0.625]]]]> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%cc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x8x4x3xf32>
  return %c : tensor<1x8x4x3xf32>
}

// -----

// The chain and its relu concatenated: each range would need its own map (the relu's reads
// x after the fold, the other the chain's result), which one concatenate cannot take.
// CHECK-LABEL: func.func @no_fold_concatenate_of_the_chain_and_its_relu(
// CHECK:         stablehlo.multiply %arg0
func.func @no_fold_concatenate_of_the_chain_and_its_relu(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x1xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: affine result has other users (stablehlo.concatenate) [fold_input_affine_into_conv]
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x4x2xf32>
  %r = stablehlo.maximum %m, %zero : tensor<1x4x4x2xf32>
  %cc = stablehlo.concatenate %m, %r, dim = 3 : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %k = stablehlo.constant dense<[[[[0.75], [-0.5], [-0.875], [0.25]]]]> : tensor<1x1x4x1xf32>
  %c = stablehlo.convolution(%cc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x1x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %c : tensor<1x4x4x1xf32>
}

// -----

// A slice of H and W keeps every channel: scale and shift pass it, the shift into a bias
// after the dense layer (as through a transpose). Nothing is left in front.
// CHECK-LABEL: func.func @fold_through_slice_of_other_dimensions(
// CHECK:         %[[S:.+]] = stablehlo.slice %arg0 [0:1, 1:3, 0:2, 0:2]
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[S]], %{{.+}}, contracting_dims = [3] x [0]
// CHECK:         stablehlo.add %[[D]], %{{.+}} : tensor<1x2x2x1xf32>
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_slice_of_other_dimensions(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x2x2x1xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.slice [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %sl = stablehlo.slice %y [0:1, 1:3, 0:2, 0:2] : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  %w = stablehlo.constant dense<[[0.5], [0.75]]> : tensor<2x1xf32>
  %d = stablehlo.dot_general %sl, %w, contracting_dims = [3] x [0] : (tensor<1x2x2x2xf32>, tensor<2x1xf32>) -> tensor<1x2x2x1xf32>
  return %d : tensor<1x2x2x1xf32>
}

// -----

// Two chains concatenated along the channels (after a slice of another input, which is no
// chain), then a convolution: each chain folds on its own range, one fold each; nothing is
// left in front of the concatenate.
// CHECK-LABEL: func.func @fold_two_chains_through_one_concatenate(
// CHECK:         %[[L:.+]] = stablehlo.slice %arg2
// CHECK:         %[[J:.+]] = stablehlo.concatenate %[[L]], %arg0, %arg1, dim = 3
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[J]], %{{.+}})
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     batch_norm_inference
func.func @fold_two_chains_through_one_concatenate(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x2xf32>, %arg2: tensor<1x4x4x2xf32>) -> tensor<1x4x4x1xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<1x4x4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.convolution through stablehlo.concatenate [fold_input_affine_into_conv]
  %y = stablehlo.add %m, %s : tensor<1x4x4x2xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.convolution through stablehlo.concatenate [fold_input_affine_into_conv]
  %z = "stablehlo.batch_norm_inference"(%arg1, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %l = stablehlo.slice %arg2 [0:1, 0:4, 0:4, 0:1] : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x1xf32>
  %cc = stablehlo.concatenate %l, %y, %z, dim = 3 : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x5xf32>
  %k = stablehlo.constant dense<[[[[0.75], [-0.5], [-0.875], [0.25], [0.5]]]]> : tensor<1x1x5x1xf32>
  %c = stablehlo.convolution(%cc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x5xf32>, tensor<1x1x5x1xf32>) -> tensor<1x4x4x1xf32>
  return %c : tensor<1x4x4x1xf32>
}

// -----

// torchvision's DenseNet head through torch-mlir with a symbolic batch: the last batch
// norm (each step broadcast onto the activation's shape) -> relu -> sum over H and W ->
// `dynamic_reshape` to [?, C, 1, 1] (its shape read from the relu, which stays) -> a
// broadcast onto its own shape -> divide by H * W (a broadcast scalar, which folds into
// the Linear first) -> `dynamic_reshape` to [?, C] -> Linear. Each keeps the channels
// whole; the scale goes into the Linear, the shift stays in front of the relu.
// CHECK-LABEL: func.func @fold_through_relu_pool_and_dynamic_reshapes(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<?x2x2x2xf32>
// CHECK:         %[[R:.+]] = stablehlo.maximum %[[X]], %{{.+}}
// CHECK:         %[[S:.+]] = stablehlo.reduce(%[[R]] init: %{{.+}}) applies stablehlo.add across dimensions = [2, 3]
// CHECK:         %[[D:.+]] = tensor.dim %[[R]]
// CHECK:         %[[P:.+]] = stablehlo.dynamic_reshape %[[S]], %{{.+}} -> tensor<?x2x1x1xf32>
// CHECK:         %[[F:.+]] = stablehlo.dynamic_reshape %{{.+}}, %{{.+}} -> tensor<?x2xf32>
// CHECK:         stablehlo.dot_general %[[F]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.divide
func.func @fold_through_relu_pool_and_dynamic_reshapes(%arg0: tensor<?x2x2x2xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %shape = shape.shape_of %arg0 : tensor<?x2x2x2xf32> -> tensor<4xindex>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [1] : (tensor<2xf32>, tensor<4xindex>) -> tensor<?x2x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<?x2x2x2xf32>
  %s = stablehlo.dynamic_broadcast_in_dim %shift, %shape, dims = [1] : (tensor<2xf32>, tensor<4xindex>) -> tensor<?x2x2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.maximum, stablehlo.reduce, stablehlo.dynamic_reshape, stablehlo.dynamic_broadcast_in_dim, stablehlo.dynamic_reshape [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<?x2x2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %yshape = shape.shape_of %y : tensor<?x2x2x2xf32> -> tensor<4xindex>
  %zero = stablehlo.dynamic_broadcast_in_dim %z, %yshape, dims = [] : (tensor<f32>, tensor<4xindex>) -> tensor<?x2x2x2xf32>
  %r = stablehlo.maximum %y, %zero : tensor<?x2x2x2xf32>
  %sum = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [2, 3] : (tensor<?x2x2x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %b = tensor.dim %r, %c0 : tensor<?x2x2x2xf32>
  %pshape = tensor.from_elements %b, %c2, %c1, %c1 : tensor<4xindex>
  %p = stablehlo.dynamic_reshape %sum, %pshape : (tensor<?x2xf32>, tensor<4xindex>) -> tensor<?x2x1x1xf32>
  %own = shape.shape_of %p : tensor<?x2x1x1xf32> -> tensor<4xindex>
  %pb = stablehlo.dynamic_broadcast_in_dim %p, %own, dims = [0, 1, 2, 3] : (tensor<?x2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x1x1xf32>
  %four = stablehlo.constant dense<4.0> : tensor<f32>
  %n = stablehlo.dynamic_broadcast_in_dim %four, %own, dims = [] : (tensor<f32>, tensor<4xindex>) -> tensor<?x2x1x1xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:11: folded stablehlo.divide into stablehlo.dot_general through stablehlo.dynamic_reshape [fold_input_affine_into_dot_general]
  %mean = stablehlo.divide %pb, %n : tensor<?x2x1x1xf32>
  %a = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x2x2x2xf32>) -> tensor<i32>
  %a1 = stablehlo.reshape %a : (tensor<i32>) -> tensor<1xi32>
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %fshape = stablehlo.concatenate %a1, %two, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %f = stablehlo.dynamic_reshape %mean, %fshape : (tensor<?x2x1x1xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift cannot pass the ops after it (a relu, a pool, a pad, or a sum over a dynamic size) [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %f, %w, contracting_dims = [1] x [0] : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %d : tensor<?x3xf32>
}

// -----

// torch-mlir's flattening reads the batch size from the chain's result: the shape read
// goes with the result, to what replaces it (here x itself: with only a dynamic reshape
// passed, the shift goes into the Linear's bias too, and nothing is left in front).
// CHECK-LABEL: func.func @fold_through_dynamic_reshape_reading_the_chain_shape(
// CHECK:         %[[B:.+]] = tensor.dim %arg0
// CHECK:         %[[E:.+]] = tensor.from_elements %[[B]]
// CHECK:         %[[F:.+]] = stablehlo.dynamic_reshape %arg0, %[[E]]
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[F]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<?x2xf32>
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_through_dynamic_reshape_reading_the_chain_shape(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %shape = shape.shape_of %arg0 : tensor<?x2xf32> -> tensor<2xindex>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [1] : (tensor<2xf32>, tensor<2xindex>) -> tensor<?x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<?x2xf32>
  %s = stablehlo.dynamic_broadcast_in_dim %shift, %shape, dims = [1] : (tensor<2xf32>, tensor<2xindex>) -> tensor<?x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.dynamic_reshape [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<?x2xf32>
  %b = tensor.dim %y, %c0 : tensor<?x2xf32>
  %fshape = tensor.from_elements %b, %c2 : tensor<2xindex>
  %f = stablehlo.dynamic_reshape %y, %fshape : (tensor<?x2xf32>, tensor<2xindex>) -> tensor<?x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25], [0.75, 0.5]]> : tensor<2x2xf32>
  %d = stablehlo.dot_general %f, %w, contracting_dims = [1] x [0] : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %d : tensor<?x2xf32>
}

// -----

// A dynamic reshape that merges the channels with the tokens ([?, 2, 2] -> [?, 4]) is no
// passage: the chain along the last dimension is not per feature of the Linear's input,
// and nothing folds (no candidate, so no report line).
// CHECK-LABEL: func.func @no_fold_dynamic_reshape_merging_the_feature(
// CHECK:         stablehlo.multiply
// CHECK:         stablehlo.dynamic_reshape
func.func @no_fold_dynamic_reshape_merging_the_feature(%arg0: tensor<?x2x2xf32>, %fshape: tensor<2xindex>) -> tensor<?x3xf32> {
  %inv = stablehlo.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %shape = shape.shape_of %arg0 : tensor<?x2x2xf32> -> tensor<3xindex>
  %i = stablehlo.dynamic_broadcast_in_dim %inv, %shape, dims = [2] : (tensor<2xf32>, tensor<3xindex>) -> tensor<?x2x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<?x2x2xf32>
  %f = stablehlo.dynamic_reshape %m, %fshape : (tensor<?x2x2xf32>, tensor<2xindex>) -> tensor<?x4xf32>
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %d = stablehlo.dot_general %f, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  return %d : tensor<?x3xf32>
}

// -----

// A negative scale before a clamp whose bounds are inverted on channel 0 (lo = 2 > hi = -1:
// StableHLO's clamp is min(max(v, lo), hi), -1 there whatever v). Its lower bound is lowered
// to hi first, so both moved bounds are -1 / s: the channel stays constant. (Swapping the
// inverted bounds for the negative scale gave 6 instead of -3.)
// CHECK-LABEL: func.func @fold_through_clamp_inverted_bounds(
// CHECK-DAG:     %[[LO:.+]] = stablehlo.constant dense<[0.666666686, -2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[HI:.+]] = stablehlo.constant dense<[0.666666686, -0.000000e+00]> : tensor<2xf32>
// CHECK:         stablehlo.clamp
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_clamp_inverted_bounds(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[-1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.clamp [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %hi = stablehlo.constant dense<[-1.0, 1.0]> : tensor<2xf32>
  %lb = stablehlo.broadcast_in_dim %lo, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %hb = stablehlo.broadcast_in_dim %hi, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %r = stablehlo.clamp %lb, %y, %hb : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// relu(relu(x * s)) with a negative scale: each relu becomes a clamp, the second one on the
// first's rebuilt result (rebuilding the first one first read the second's erased operand:
// a crash).
// CHECK-LABEL: func.func @fold_through_two_relus_negative_scale(
// CHECK:         %[[R1:.+]] = stablehlo.clamp %{{.+}}, %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK:         %[[R2:.+]] = stablehlo.clamp %{{.+}}, %[[R1]], %{{.+}} : tensor<4x2xf32>
// CHECK:         stablehlo.dot_general %[[R2]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.maximum
func.func @fold_through_two_relus_negative_scale(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[-1.5, 0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.dot_general through stablehlo.maximum, stablehlo.maximum [fold_input_affine_into_dot_general]
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %r1 = stablehlo.maximum %m, %z : tensor<4x2xf32>
  %r2 = stablehlo.maximum %r1, %z : tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  %d = stablehlo.dot_general %r2, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// relu6(relu6(x * s + t)): two clamps, each rebuilt with the moved bounds, the second on the
// first's result.
// CHECK-LABEL: func.func @fold_through_two_clamps(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK:         %[[R1:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<4x2xf32>
// CHECK:         %[[R2:.+]] = stablehlo.clamp %{{.+}}, %[[R1]], %{{.+}} : tensor<4x2xf32>
// CHECK:         stablehlo.dot_general %[[R2]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.multiply
func.func @fold_through_two_clamps(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %inv = stablehlo.constant dense<[1.5, -0.5]> : tensor<2xf32>
  %shift = stablehlo.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %m = stablehlo.multiply %arg0, %i : tensor<4x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.add into stablehlo.dot_general through stablehlo.clamp, stablehlo.clamp [fold_input_affine_into_dot_general]
  %y = stablehlo.add %m, %s : tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r1 = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %r2 = stablehlo.clamp %lo, %r1, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]]> : tensor<2x3xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: folding would move an add onto a larger tensor [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %r2, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// A dead channel (variance 0: s = 316) before relu6 and a dense layer of as many outputs: the
// shift c = offset - mean * s (-632) is large against the bounds (0, 6), so it stays in front as
// x + t / s and the bounds move by s alone (0, 6 / s); passed into the bias it would cancel
// the clamp's saturated results at the size of c.
// CHECK-LABEL: func.func @fold_through_clamp_large_shift_kept(
// CHECK:         %[[X:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<4x2xf32>
// CHECK-DAG:     stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-DAG:     stablehlo.constant dense<[0.0189736653, 6.000030e+00]> : tensor<2xf32>
// CHECK:         %[[R:.+]] = stablehlo.clamp %{{.+}}, %[[X]], %{{.+}} : tensor<4x2xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[R]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NEXT:    return %[[D]]
func.func @fold_through_clamp_large_shift_kept(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %scale = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: folded stablehlo.batch_norm_inference into stablehlo.dot_general through stablehlo.clamp [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<6.0> : tensor<f32>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -0.25], [0.75, 0.5]]> : tensor<2x2xf32>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.add: the shift is large against the clamp's bounds: passed into the bias it would cancel the clamp's saturated results at its size [fold_input_affine_into_dot_general]
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}

// -----

// The same in bf16: kept in front, x + t / s would round t / s in bf16 at the size of the
// mean, as lossy as the bias; nothing moves.
// CHECK-LABEL: func.func @no_fold_through_clamp_large_shift_bf16(
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_through_clamp_large_shift_bf16(%arg0: tensor<4x2xbf16>) -> tensor<4x2xbf16> {
  %scale = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xbf16>
  %offset = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xbf16>
  %mean = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xbf16>
  %var = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xbf16>
  // REPORT-DAG: forward.mlir:[[# @LINE + 1]]:8: not folded stablehlo.batch_norm_inference: the shift is large against the clamp's bounds: in f16 or bf16 it would cancel the clamp's saturated results, as a bias or as x + t / s [fold_input_affine_into_dot_general]
  %y = "stablehlo.batch_norm_inference"(%arg0, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>) -> tensor<4x2xbf16>
  %lo = stablehlo.constant dense<0.0> : tensor<bf16>
  %hi = stablehlo.constant dense<6.0> : tensor<bf16>
  %r = stablehlo.clamp %lo, %y, %hi : (tensor<bf16>, tensor<4x2xbf16>, tensor<bf16>) -> tensor<4x2xbf16>
  %w = stablehlo.constant dense<[[0.5, -0.25], [0.75, 0.5]]> : tensor<2x2xbf16>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<4x2xbf16>, tensor<2x2xbf16>) -> tensor<4x2xbf16>
  return %d : tensor<4x2xbf16>
}
