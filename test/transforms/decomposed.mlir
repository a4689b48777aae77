// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --debug 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEBUG %s

// Weights passed as arguments at these toy sizes have more elements than the activations;
// fold-larger-weight-arguments=true keeps such folds here to test their mechanics. The
// default's cost rule is tested in weight_cost.mlir.

// Flax linen / NNX: (y - mean) * (rsqrt(var + eps) * scale) + bias, per-channel values
// through reshape C -> 1x1x1xC and broadcast_in_dim, eps a scalar broadcast with dims = [].
// CHECK-LABEL: func.func @fold_flax_chain
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[BB]]
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_flax_chain(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<f32>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %scale = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %bias = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %m1 = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %m2 = stablehlo.broadcast_in_dim %m1, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %c, %m2 : tensor<1x4x4x3xf32>
  %v1 = stablehlo.broadcast_in_dim %var, dims = [3] : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %e1 = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<1x1x1x3xf32>
  %ve = stablehlo.add %v1, %e1 : tensor<1x1x1x3xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x1x1x3xf32>
  %s1 = stablehlo.reshape %scale : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %rs = stablehlo.multiply %r, %s1 : tensor<1x1x1x3xf32>
  %rs2 = stablehlo.broadcast_in_dim %rs, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %rs2 : tensor<1x4x4x3xf32>
  %b1 = stablehlo.reshape %bias : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
  %b2 = stablehlo.broadcast_in_dim %b1, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %b2 : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Equinox: (y - mean) / sqrt(var + eps) * w + b, an identity reshape pair after the conv
// (vmap), parameters through three chained broadcasts. NCHW.
// CHECK-LABEL: func.func @fold_equinox_divide
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x2x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[BB]]
// CHECK-NOT:     stablehlo.divide
// CHECK-NOT:     stablehlo.reshape
// CHECK:         return %[[Y]]
func.func @fold_equinox_divide(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.5]], [[-1.0]]], [[[2.0]], [[1.5]]], [[[0.25]], [[-0.75]]]]> : tensor<3x2x1x1xf32>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %w = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %b = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r1 = stablehlo.reshape %c : (tensor<1x3x4x4xf32>) -> tensor<3x4x4xf32>
  %r2 = stablehlo.reshape %r1 : (tensor<3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %m0 = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<3xf32>) -> tensor<3x1x1xf32>
  %m1 = stablehlo.broadcast_in_dim %m0, dims = [1, 2, 3] : (tensor<3x1x1xf32>) -> tensor<1x3x1x1xf32>
  %m2 = stablehlo.broadcast_in_dim %m1, dims = [0, 1, 2, 3] : (tensor<1x3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %d = stablehlo.subtract %r2, %m2 : tensor<1x3x4x4xf32>
  %ve = stablehlo.add %var, %eps : tensor<3xf32>
  %sd = stablehlo.sqrt %ve : tensor<3xf32>
  %s0 = stablehlo.broadcast_in_dim %sd, dims = [0] : (tensor<3xf32>) -> tensor<3x1x1xf32>
  %s1 = stablehlo.broadcast_in_dim %s0, dims = [1, 2, 3] : (tensor<3x1x1xf32>) -> tensor<1x3x1x1xf32>
  %s2 = stablehlo.broadcast_in_dim %s1, dims = [0, 1, 2, 3] : (tensor<1x3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %n = stablehlo.divide %d, %s2 : tensor<1x3x4x4xf32>
  %w0 = stablehlo.broadcast_in_dim %w, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %nw = stablehlo.multiply %n, %w0 : tensor<1x3x4x4xf32>
  %b0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = stablehlo.add %nw, %b0 : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Haiku: inv = scale * rsqrt(var + eps) (scale first), (y - mean) * inv + offset, with
// parameters already shaped 1x1x1xC.
// CHECK-LABEL: func.func @fold_haiku_chain
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_haiku_chain(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<3x3x2x3xf32>
  %mean = stablehlo.constant dense<[[[[0.1, 0.2, 0.3]]]]> : tensor<1x1x1x3xf32>
  %var = stablehlo.constant dense<[[[[1.0, 2.0, 4.0]]]]> : tensor<1x1x1x3xf32>
  %scale = stablehlo.constant dense<[[[[1.5, 0.5, 2.0]]]]> : tensor<1x1x1x3xf32>
  %offset = stablehlo.constant dense<[[[[0.0, 1.0, -1.0]]]]> : tensor<1x1x1x3xf32>
  %eps = stablehlo.constant dense<1.0e-3> : tensor<1x1x1x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  %ve = stablehlo.add %var, %eps : tensor<1x1x1x3xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x1x1x3xf32>
  %inv = stablehlo.multiply %scale, %r : tensor<1x1x1x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %c, %m : tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x4x4x3xf32>
  %o = stablehlo.broadcast_in_dim %offset, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %o : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// torch-mlir: ((y - mean) * (1 / sqrt(var + eps))) * gamma + beta, eps an arith.constant.
// CHECK-LABEL: func.func @fold_torch_mlir_chain
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_torch_mlir_chain(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<3x2x3x3xf32>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %gamma = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %beta = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %eps0 = arith.constant dense<1.0e-5> : tensor<f64>
  %eps1 = stablehlo.convert %eps0 : (tensor<f64>) -> tensor<f32>
  %eps = stablehlo.broadcast_in_dim %eps1, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %d = stablehlo.subtract %c, %m : tensor<1x3x4x4xf32>
  %ve = stablehlo.add %var, %eps : tensor<3xf32>
  %sd = stablehlo.sqrt %ve : tensor<3xf32>
  %inv = stablehlo.divide %one, %sd : tensor<3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x3x4x4xf32>
  %g = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %ng = stablehlo.multiply %n, %g : tensor<1x3x4x4xf32>
  %b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = stablehlo.add %ng, %b : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Dense + BN: dot_general then the per-channel chain along the output feature (dim 1).
// CHECK-LABEL: func.func @fold_dense_chain
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{.+}}> : tensor<2x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_dense_chain(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]> : tensor<2x3xf32>
  %mean = stablehlo.constant dense<[[0.1, 0.2, 0.3]]> : tensor<1x3xf32>
  %inv = stablehlo.constant dense<[[2.0, 0.5, 4.0]]> : tensor<1x3xf32>
  %d = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
  %s = stablehlo.subtract %d, %m : tensor<4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
  %y = stablehlo.multiply %s, %i : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// TensorFlow's Dense lowers to stablehlo.dot, not dot_general: a linear op all the same.
// CHECK-LABEL: func.func @fold_tf_dense_dot_chain
// CHECK-DAG:     %[[W:.+]] = stablehlo.constant dense<{{\[\[}}1.000000e+00, -5.000000e-01, 8.000000e+00], [3.000000e+00, 1.250000e-01, -3.000000e+00]]> : tensor<2x3xf32>
// CHECK:         %[[D:.+]] = stablehlo.dot %arg0, %[[W]]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_tf_dense_dot_chain(%arg0: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]> : tensor<2x3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %shift = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %d = stablehlo.dot %arg0, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<4x3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %y = stablehlo.add %n, %s : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// TensorFlow / Keras scale-shift form with parameters as function arguments:
// y * inv + (beta - mean * inv). The kernel is scaled in the graph, on weight-sized values.
// CHECK-LABEL: func.func @fold_tf_arguments
// CHECK-NOT:     stablehlo.constant
// CHECK:         %[[IB:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xf32>) -> tensor<3x3x2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %[[IB]] : tensor<3x3x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[SB:.+]] = stablehlo.broadcast_in_dim %arg3, dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[SB]] : tensor<1x4x4x3xf32>
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_tf_arguments(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<3x3x2x3xf32>, %inv: tensor<3xf32>, %shift: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %c, %i : tensor<1x4x4x3xf32>
  %s = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %s : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Flax's BatchNorm as jax.export writes it at batch 1 and a 1x1 spatial size, its
// parameters as arguments: the activation has the shape of a reshaped parameter, and the
// scale and offset reach the next convolution's input through the multiply and add that
// apply them to the convolution's result. Met there, they are parameters, not data.
// CHECK-LABEL: func.func @fold_flax_arguments_at_1x1
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<1x1x1x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x1x1x2xf32>
// CHECK:         %[[Z:.+]] = stablehlo.convolution(%[[Y]], %arg6)
// CHECK:         return %[[Z]]
// REPORT: decomposed.mlir:[[# @LINE + 6]]:8: folded stablehlo.subtract, stablehlo.multiply, stablehlo.add into stablehlo.convolution [fold_subtrahend_into_bias, fold_scale_into_linear, fold_shift_into_bias]
func.func @fold_flax_arguments_at_1x1(%x: tensor<1x1x1x1xf32>, %k: tensor<1x1x1x2xf32>, %mean: tensor<2xf32>, %var: tensor<2xf32>, %scale: tensor<2xf32>, %offset: tensor<2xf32>, %k2: tensor<1x1x2x1xf32>) -> tensor<1x1x1x1xf32> {
  %eps = stablehlo.constant dense<1.0e-5> : tensor<f32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<2xf32>) -> tensor<1x1x1x2xf32>
  %vb = stablehlo.broadcast_in_dim %var, dims = [3] : (tensor<2xf32>) -> tensor<1x1x1x2xf32>
  %d = stablehlo.subtract %c, %mb : tensor<1x1x1x2xf32>
  %eb = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<1x1x1x2xf32>
  %ve = stablehlo.add %vb, %eb : tensor<1x1x1x2xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x1x1x2xf32>
  %sr = stablehlo.reshape %scale : (tensor<2xf32>) -> tensor<1x1x1x2xf32>
  %rs = stablehlo.multiply %r, %sr : tensor<1x1x1x2xf32>
  %n = stablehlo.multiply %d, %rs : tensor<1x1x1x2xf32>
  %or = stablehlo.reshape %offset : (tensor<2xf32>) -> tensor<1x1x1x2xf32>
  %y = stablehlo.add %n, %or : tensor<1x1x1x2xf32>
  %z = stablehlo.convolution(%y, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x1x1x1xf32>
  return %z : tensor<1x1x1x1xf32>
}

// -----

// Equinox BatchNorm(mode="batch") in inference with its state as arguments: the running
// statistics are divided by a debiasing factor where(count == 0, 1, 1 - 0.99 ** count),
// computed from the counter through compare, convert, power and a call of `_where` (a
// select): parameters through any ops, so the kernel is scaled in the graph.
// CHECK-LABEL: func.func @fold_statistics_debiased_by_a_counter_argument
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<3x2x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x3x4x4xf32>
// CHECK-NOT:     stablehlo.divide {{.+}} : tensor<1x3x4x4xf32>
// CHECK-NOT:     stablehlo.subtract {{.+}} : tensor<1x3x4x4xf32>
// CHECK:         return %[[Y]]
func.func @fold_statistics_debiased_by_a_counter_argument(%x: tensor<1x2x4x4xf32>, %k: tensor<3x2x1x1xf32>, %count: tensor<i32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %onef = stablehlo.constant dense<1.0> : tensor<f32>
  %momentum = stablehlo.constant dense<0.99> : tensor<f32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<3xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %first = stablehlo.compare EQ, %count, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %n = stablehlo.convert %count : (tensor<i32>) -> tensor<f32>
  %p = stablehlo.power %momentum, %n : tensor<f32>
  %debias = stablehlo.subtract %onef, %p : tensor<f32>
  %d = call @_where(%first, %one, %debias) : (tensor<i1>, tensor<i32>, tensor<f32>) -> tensor<f32>
  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %m = stablehlo.divide %mean, %db : tensor<3xf32>
  %v = stablehlo.divide %var, %db : tensor<3xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %centred = stablehlo.subtract %c, %mb : tensor<1x3x4x4xf32>
  %ve = stablehlo.add %v, %eps : tensor<3xf32>
  %sd = stablehlo.sqrt %ve : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %sd, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = stablehlo.divide %centred, %sb : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
func.func private @_where(%pred: tensor<i1>, %on: tensor<i32>, %off: tensor<f32>) -> tensor<f32> {
  %on_f = stablehlo.convert %on : (tensor<i32>) -> tensor<f32>
  %r = stablehlo.select %pred, %on_f, %off : tensor<i1>, tensor<f32>
  return %r : tensor<f32>
}

// -----

// The same with the counter a constant (the state closed over): the debiasing factor
// where(2 == 0, 1, 1 - 0.5 ** 2) = 0.75 is evaluated in float64 through the compare, the
// power and the call of `_where`, and the kernel and bias become constants.
// CHECK-LABEL: func.func @fold_statistics_debiased_by_a_constant_counter
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x2x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[-4.000000e-01, {{.+}}]> : tensor<3xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[BB]] : tensor<1x3x4x4xf32>
// CHECK-NOT:     stablehlo.divide {{.+}} : tensor<1x3x4x4xf32>
// CHECK:         return %[[Y]]
func.func @fold_statistics_debiased_by_a_constant_counter(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.5]], [[-1.0]]], [[[2.0]], [[1.5]]], [[[0.25]], [[-0.75]]]]> : tensor<3x2x1x1xf32>
  %count = stablehlo.constant dense<2> : tensor<i32>
  %mean = stablehlo.constant dense<[0.3, 0.6, 0.9]> : tensor<3xf32>
  %var = stablehlo.constant dense<[0.75, 1.5, 3.0]> : tensor<3xf32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %onef = stablehlo.constant dense<1.0> : tensor<f32>
  %momentum = stablehlo.constant dense<0.5> : tensor<f32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %first = stablehlo.compare EQ, %count, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %n = stablehlo.convert %count : (tensor<i32>) -> tensor<f32>
  %p = stablehlo.power %momentum, %n : tensor<f32>
  %debias = stablehlo.subtract %onef, %p : tensor<f32>
  %d = call @_where(%first, %one, %debias) : (tensor<i1>, tensor<i32>, tensor<f32>) -> tensor<f32>
  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %m = stablehlo.divide %mean, %db : tensor<3xf32>
  %v = stablehlo.divide %var, %db : tensor<3xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %centred = stablehlo.subtract %c, %mb : tensor<1x3x4x4xf32>
  %sd = stablehlo.sqrt %v : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %sd, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = stablehlo.divide %centred, %sb : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
func.func private @_where(%pred: tensor<i1>, %on: tensor<i32>, %off: tensor<f32>) -> tensor<f32> {
  %on_f = stablehlo.convert %on : (tensor<i32>) -> tensor<f32>
  %r = stablehlo.select %pred, %on_f, %off : tensor<i1>, tensor<f32>
  return %r : tensor<f32>
}

// -----

// As jax.export writes a symbolic batch: the batch size %b is passed to every call, here
// `_where` and `relu`, which read it for shapes only. %b reaches the next convolution's
// input only through `relu`'s shapes, so it is no data argument, and the statistics
// debiased through `_where(%b, ...)` are parameters.
// CHECK-LABEL: func.func @fold_statistics_debiased_through_calls_passed_the_batch_size
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg2, %{{.+}} : tensor<3x2x1x1xf32>
// CHECK:         stablehlo.convolution(%arg1, %[[K]])
// CHECK-NOT:     stablehlo.divide {{.+}} : tensor<1x3x4x4xf32>
func.func @fold_statistics_debiased_through_calls_passed_the_batch_size(%b: tensor<i32>, %x: tensor<1x2x4x4xf32>, %k: tensor<3x2x1x1xf32>, %count: tensor<i32>, %var: tensor<3xf32>, %k2: tensor<1x3x1x1xf32>) -> tensor<1x1x4x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %onef = stablehlo.constant dense<1.0> : tensor<f32>
  %momentum = stablehlo.constant dense<0.99> : tensor<f32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %first = stablehlo.compare EQ, %count, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %n = stablehlo.convert %count : (tensor<i32>) -> tensor<f32>
  %p = stablehlo.power %momentum, %n : tensor<f32>
  %debias = stablehlo.subtract %onef, %p : tensor<f32>
  %d = call @_where(%b, %first, %one, %debias) : (tensor<i32>, tensor<i1>, tensor<i32>, tensor<f32>) -> tensor<f32>
  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %v = stablehlo.divide %var, %db : tensor<3xf32>
  %sd = stablehlo.sqrt %v : tensor<3xf32>
  %sb = stablehlo.broadcast_in_dim %sd, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: folded stablehlo.divide into stablehlo.convolution [fold_divisor_into_linear]
  %y = stablehlo.divide %c, %sb : tensor<1x3x4x4xf32>
  %r = call @relu(%b, %y) : (tensor<i32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %z = stablehlo.convolution(%r, %k2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) -> tensor<1x1x4x4xf32>
  return %z : tensor<1x1x4x4xf32>
}
func.func private @_where(%size: tensor<i32>, %pred: tensor<i1>, %on: tensor<i32>, %off: tensor<f32>) -> tensor<f32> {
  %on_f = stablehlo.convert %on : (tensor<i32>) -> tensor<f32>
  %r = stablehlo.select %pred, %on_f, %off : tensor<i1>, tensor<f32>
  return %r : tensor<f32>
}
func.func private @relu(%size: tensor<i32>, %v: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x3x4x4xf32>
  %r = stablehlo.maximum %v, %zb : tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// -----

// A per-channel factor chosen by a select whose predicate is a scalar compare (as
// `jnp.where` on a scalar condition lowers, inside a call): the predicate is read as a
// uniform value, not along the feature dimension it does not have (which crashed the
// pass), and the factor folds.
// CHECK-LABEL: func.func @fold_factor_selected_by_a_scalar_compare
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[C]]
func.func @fold_factor_selected_by_a_scalar_compare(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0], [1.5, 0.25]]]]> : tensor<1x1x2x2xf32>
  %a = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[8.0, 16.0]> : tensor<2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %ab = stablehlo.broadcast_in_dim %a, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = call @pick(%ab, %bb) : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %s : tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}
func.func private @pick(%on: tensor<1x4x4x2xf32>, %off: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.compare GT, %one, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %r = stablehlo.select %p, %on, %off : tensor<i1>, tensor<1x4x4x2xf32>
  return %r : tensor<1x4x4x2xf32>
}

// -----

// A weight-normalized convolution, kernel g · v / ‖v‖ (the norm a reduce over each output
// channel's weights, all arguments), then a per-channel scale and shift (arguments): the
// scale folds into the computed kernel.
// CHECK-LABEL: func.func @fold_scale_into_a_weight_normalized_kernel
// CHECK:         stablehlo.divide
// CHECK:         %[[W:.+]] = stablehlo.multiply %{{.+}} : tensor<1x1x2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.multiply %[[W]], %{{.+}} : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xf32>
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_scale_into_a_weight_normalized_kernel(%x: tensor<1x4x4x2xf32>, %v: tensor<1x1x2x3xf32>, %g: tensor<3xf32>, %s: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %v, %v : tensor<1x1x2x3xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %norm = stablehlo.sqrt %ss : tensor<3xf32>
  %nb = stablehlo.broadcast_in_dim %norm, dims = [3] : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
  %unit = stablehlo.divide %v, %nb : tensor<1x1x2x3xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [3] : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
  %w = stablehlo.multiply %unit, %gb : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %n = stablehlo.multiply %c, %sb : tensor<1x4x4x3xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %tb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Weight normalization applied after the convolution, conv(x, v) · g / ‖v‖: the factor
// is a reduce over the weights (arguments), a parameter, and folds into them.
// CHECK-LABEL: func.func @fold_weight_norm_applied_as_an_output_scale
// CHECK:         stablehlo.reduce
// CHECK:         %[[K:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<1x1x2x3xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
// CHECK:         return %[[C]]
func.func @fold_weight_norm_applied_as_an_output_scale(%x: tensor<1x4x4x2xf32>, %v: tensor<1x1x2x3xf32>, %g: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %v, %v : tensor<1x1x2x3xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %norm = stablehlo.sqrt %ss : tensor<3xf32>
  %f = stablehlo.divide %g, %norm : tensor<3xf32>
  %c = stablehlo.convolution(%x, %v) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %fb = stablehlo.broadcast_in_dim %f, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: folded stablehlo.multiply into stablehlo.convolution [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %fb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Multi-platform export: the convolution is lowered once per platform inside a case; each
// branch's kernel is scaled.
// CHECK-LABEL: func.func @fold_through_case_branches
// CHECK:         %[[CASE:.+]] = "stablehlo.case"
// CHECK:           stablehlo.convolution
// CHECK:           stablehlo.convolution
// CHECK:         %[[Y:.+]] = stablehlo.add %[[CASE]], %{{.+}}
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_through_case_branches(%p: tensor<i32>, %arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %r = "stablehlo.case"(%p) ({
    %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c : tensor<1x4x4x3xf32>
  }, {
    %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
    stablehlo.return %c : tensor<1x4x4x3xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %r, %i : tensor<1x4x4x3xf32>
  %m = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.add %n, %mb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Shape-polymorphic batch: per-channel values reach the activation through
// dynamic_broadcast_in_dim; the new bias broadcast reuses that shape.
// CHECK-LABEL: func.func @fold_dynamic_batch
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         %[[B:.+]] = stablehlo.dynamic_broadcast_in_dim %{{.+}}, %arg1, dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.subtract
// CHECK:         return %[[Y]]
func.func @fold_dynamic_batch(%arg0: tensor<?x4x4x2xf32>, %arg1: tensor<4xi32>) -> tensor<?x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %mean = stablehlo.constant dense<[[[[0.1, 0.2, 0.3]]]]> : tensor<1x1x1x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<?x4x4x3xf32>
  %m = stablehlo.dynamic_broadcast_in_dim %mean, %arg1, dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>, tensor<4xi32>) -> tensor<?x4x4x3xf32>
  %y = stablehlo.subtract %c, %m : tensor<?x4x4x3xf32>
  return %y : tensor<?x4x4x3xf32>
}

// -----

// A per-channel chain with no convolution or dot_general before it is left alone.
// CHECK-LABEL: func.func @no_fold_without_linear_producer
// CHECK:         stablehlo.subtract %arg0
// CHECK:         stablehlo.multiply
func.func @no_fold_without_linear_producer(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %arg0, %m : tensor<1x4x4x3xf32>
  %y = stablehlo.multiply %d, %m : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The factor varies along a spatial dimension, not per channel ("not a linear op times a
// per-channel value").
// CHECK-LABEL: func.func @no_fold_factor_not_per_channel
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         stablehlo.multiply %[[C]], %arg1
func.func @no_fold_factor_not_per_channel(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.multiply %c, %arg1 : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A zero divisor cannot be folded ("per-channel divisor has a zero").
// CHECK-LABEL: func.func @no_fold_zero_divisor
// CHECK:         stablehlo.divide
func.func @no_fold_zero_divisor(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %z = stablehlo.constant dense<[1.0, 0.0, 2.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: per-channel divisor has a zero [fold_divisor_into_linear]
  %y = stablehlo.divide %c, %zb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// per-channel factor is not finite: one factor is an infinity.
// CHECK-LABEL: func.func @no_fold_scale_not_finite
// CHECK:         stablehlo.multiply
func.func @no_fold_scale_not_finite(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %s = stablehlo.constant dense<[1.0, 0x7F800000, 2.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel factor is not finite [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %sb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// The convolution result is also returned, so scaling its kernel would change it.
// CHECK-LABEL: func.func @no_fold_scale_multi_user
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_scale_multi_user(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %y = stablehlo.multiply %c, %i : tensor<1x4x4x3xf32>
  return %y, %c : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// torch-mlir keeps weights in dense_resource blobs; they are read from the resource
// section and folded like dense constants.
// CHECK-LABEL: func.func @fold_dense_resource_weights
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}2.250000e+00]], {{\[\[}}3.750000e+00]]], {{.+}}> : tensor<3x2x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     dense_resource
// CHECK:         return %[[C]]
func.func @fold_dense_resource_weights(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %k = stablehlo.constant dense_resource<torch_tensor_3_2_1_1_torch.float32> : tensor<3x2x1x1xf32>
  %g = stablehlo.constant dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = stablehlo.multiply %c, %gb : tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      torch_tensor_3_2_1_1_torch.float32: "0x040000000000C03F0000204000006040000080400000A0400000C040",
      torch_tensor_3_torch.float32: "0x040000000000C03F0000204000006040"
    }
  }
#-}

// -----

// f16 weights in an f32 dot_general: y * c is computed in f32 with the weights exact;
// rounding W * c to f16 would add an error the original never made.
// CHECK-LABEL: func.func @no_fold_scale_into_narrow_weights
// CHECK:         stablehlo.dot_general
// CHECK:         stablehlo.multiply
func.func @no_fold_scale_into_narrow_weights(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0], [2.0, 1.5], [0.25, -0.5]]> : tensor<3x2xf16>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x2xf16>) -> tensor<4x2xf32>
  %s = stablehlo.constant dense<[[0.3, 0.7]]> : tensor<1x2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<4x2xf32>
  %y = stablehlo.multiply %d, %sb : tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A residual add (h = L(x) + x, read again later) is no bias add: the subtract after it
// is no candidate of the bias patterns; the report names it as a chain left with no
// linear op next to it.
// CHECK-LABEL: func.func @not_a_candidate_after_residual_add
// CHECK:         %[[H:.+]] = stablehlo.add
// CHECK:         stablehlo.subtract %[[H]]
// REPORT-NOT:    bias add result has other users
func.func @not_a_candidate_after_residual_add(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 1.0, 1.0]]> : tensor<3x3xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %h = stablehlo.add %d, %x : tensor<4x3xf32>
  %c = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c_b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.subtract: no convolution or dot_general next to the chain (reads stablehlo.add, read by func.return) [stablehlo-fold-batch-norm]
  %y = stablehlo.subtract %h, %c_b : tensor<4x3xf32>
  return %y, %h : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Attention's scores / sqrt(d) with weights as arguments: the "weights" of q @ k^T are k,
// itself computed by a dot_general. k * (1 / sqrt(d)) would remove the divide on the
// [4, 4] scores and add a multiply on the [4, 8] k: nothing removed, more elements.
// CHECK-LABEL: func.func @no_fold_divisor_into_activation_weights
// CHECK:         %[[S:.+]] = stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims = [1] x [1]
// CHECK:         stablehlo.divide %[[S]]
// CHECK-NOT:     stablehlo.multiply
func.func @no_fold_divisor_into_activation_weights(%x: tensor<4x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>) -> tensor<4x4xf32> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = stablehlo.dot_general %q, %k, contracting_dims = [1] x [1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %c = stablehlo.constant dense<2.82842708> : tensor<4x4xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: weights are computed by a linear op: the op would only move onto them [fold_divisor_into_linear]
  %y = stablehlo.divide %s, %c : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// torch-mlir's addmm: alpha * (h @ W^T) with h computed by a dot_general. The scalar is
// per-channel along both result dimensions; dimension 0 is h's: it goes onto W.
// CHECK-LABEL: func.func @fold_scalar_after_dense_onto_constant_weights
// CHECK:         %[[H:.+]] = stablehlo.dot_general %arg0
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00], [3.000000e+00, 5.000000e-01]]> : tensor<2x2xf32>
// CHECK:         %[[Y:.+]] = stablehlo.dot_general %[[H]], %[[W]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_scalar_after_dense_onto_constant_weights(%x: tensor<4x2xf32>, %w1: tensor<2x2xf32>) -> tensor<4x2xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %w = stablehlo.constant dense<[[0.5, -1.0], [1.5, 0.25]]> : tensor<2x2xf32>
  %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %alpha = stablehlo.constant dense<2.0> : tensor<f32>
  %a = stablehlo.broadcast_in_dim %alpha, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %y = stablehlo.multiply %d, %a : tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// The same with the dense layer reading the function's argument: the scalar goes into
// the constant weights, not onto the argument (the 4x larger activation).
// CHECK-LABEL: func.func @fold_scalar_after_dense_on_argument_onto_constant_weights
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[}}1.000000e+00], [-2.000000e+00]]> : tensor<2x1xf32>
// CHECK:         %[[Y:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_scalar_after_dense_on_argument_onto_constant_weights(%x: tensor<2x2xf32>) -> tensor<2x1xf32> {
  %w = stablehlo.constant dense<[[0.5], [-1.0]]> : tensor<2x1xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %alpha = stablehlo.constant dense<2.0> : tensor<f32>
  %a = stablehlo.broadcast_in_dim %alpha, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
  %y = stablehlo.multiply %d, %a : tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// The same with both dense operands arguments (`f(x, W) = (x @ W) * 2`, weights passed
// as arguments): neither is a constant nor computed by a linear op. The scalar goes onto
// the rhs, the weights (x @ W), computed in the graph, not onto x, whose rows are the batch.
// CHECK-LABEL: func.func @fold_scalar_after_dense_onto_rhs_when_both_are_arguments
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x2xf32>, %[[W:[^:]+]]: tensor<2x1xf32>
// CHECK:         %[[S:.+]] = stablehlo.multiply %[[W]], %{{.+}} : tensor<2x1xf32>
// CHECK:         %[[Y:.+]] = stablehlo.dot_general %[[X]], %[[S]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_scalar_after_dense_onto_rhs_when_both_are_arguments(%x: tensor<4x2xf32>, %w: tensor<2x1xf32>) -> tensor<4x1xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %alpha = stablehlo.constant dense<2.0> : tensor<f32>
  %a = stablehlo.broadcast_in_dim %alpha, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
  %y = stablehlo.multiply %d, %a : tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// torch-mlir's addmm as it prints it: the weights a `transpose` of the constant, alpha an
// integer `arith.constant` converted to f32, batch 1. The integer reads as the constant
// 2.0; the weights, a transpose of a constant, are constant weights and take it, never the
// argument (at batch 1 the argument's dimension 0 matches the scalar first): W^T * 2 is
// computed in float64 and written as one constant of the transposed shape.
// CHECK-LABEL: func.func @fold_integer_scalar_after_dense_onto_transposed_weights
// CHECK-NOT:     stablehlo.transpose
// CHECK:         %[[S:.+]] = stablehlo.constant dense<{{\[}}[1.000000e+00], [-2.000000e+00]]> : tensor<2x1xf32>
// CHECK:         %[[Y:.+]] = stablehlo.dot_general %arg0, %[[S]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[Y]]
func.func @fold_integer_scalar_after_dense_onto_transposed_weights(%x: tensor<1x2xf32>) -> tensor<1x1xf32> {
  %w = stablehlo.constant dense<[[0.5, -1.0]]> : tensor<1x2xf32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<1x2xf32>) -> tensor<2x1xf32>
  %d = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %two = arith.constant dense<2> : tensor<1xi64>
  %f = stablehlo.convert %two : (tensor<1xi64>) -> tensor<1xf32>
  %r = stablehlo.reshape %f : (tensor<1xf32>) -> tensor<f32>
  %a = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
  %y = stablehlo.multiply %d, %a : tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// A squeeze-excite gate after a convolution: sigmoid(dense(mean over H, W)), per channel
// but computed from the image. Folded, it would make the kernel a run-time value.
// CHECK-LABEL: func.func @no_fold_gate_computed_from_the_data
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_gate_computed_from_the_data(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0], [1.5, 0.25]]]]> : tensor<1x1x2x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %g = stablehlo.logistic %sum : tensor<1x2xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [0, 3] : (tensor<1x2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %gb : tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A per-channel factor computed elementwise from the data input itself (at batch 1 and a
// 1x1 spatial size, shaped like a parameter): the convolution reads %x as its input, so
// %x is data, and so is the factor. Folded, it would make the kernel a run-time value.
// CHECK-LABEL: func.func @no_fold_factor_computed_elementwise_from_the_data_input
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %arg1)
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_factor_computed_elementwise_from_the_data_input(%x: tensor<1x1x1x2xf32>, %k: tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32>
  %g = stablehlo.logistic %x : tensor<1x1x1x2xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [0, 1, 2, 3] : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %gb : tensor<1x1x1x2xf32>
  return %y : tensor<1x1x1x2xf32>
}

// -----

// A squeeze-excite gate at a 1x1 spatial size, its dense layer's weights an argument:
// sigmoid(mean(x) @ w) goes through a call (as jax.export writes `jax.nn.sigmoid`), a
// reduce and a dot_general, any of which a parameter may pass, but reads the data.
// CHECK-LABEL: func.func @no_fold_gate_at_1x1_through_a_call_of_weight_arguments
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %arg1)
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_gate_at_1x1_through_a_call_of_weight_arguments(%x: tensor<1x1x1x2xf32>, %k: tensor<1x1x2x2xf32>, %w: tensor<2x2xf32>) -> tensor<1x1x1x2xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x1x1x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %e = stablehlo.dot_general %sum, %w, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %g = call @sigmoid(%e) : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [0, 3] : (tensor<1x2xf32>) -> tensor<1x1x1x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %gb : tensor<1x1x1x2xf32>
  return %y : tensor<1x1x1x2xf32>
}
func.func private @sigmoid(%v: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %r = stablehlo.logistic %v : tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}

// -----

// A per-channel value computed from constants by a function that holds a custom call:
// not a function of its operands (it may read anything), so not a parameter.
// CHECK-LABEL: func.func @no_fold_factor_from_a_call_of_an_impure_function
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %{{.+}})
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_factor_from_a_call_of_an_impure_function(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x2x2xf32>
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = call @read_gate(%c) : (tensor<2xf32>) -> tensor<2xf32>
  %y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %b = stablehlo.broadcast_in_dim %g, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %m = stablehlo.multiply %y, %b : tensor<1x4x4x2xf32>
  return %m : tensor<1x4x4x2xf32>
}
func.func private @read_gate(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @read_sensor(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// A per-token statistic of one token, a scalar: x * rsqrt(mean(x * x)) before a dense
// layer whose weights are an argument (an RMSNorm without its scale). The statistic is a
// reduce of the data, not a parameter.
// CHECK-LABEL: func.func @no_fold_per_token_statistic_of_one_token
// CHECK:         stablehlo.rsqrt
// CHECK:         %[[Y:.+]] = stablehlo.multiply %arg0, %{{.+}} : tensor<1x1x2xf32>
// CHECK:         stablehlo.dot_general %[[Y]], %arg1
func.func @no_fold_per_token_statistic_of_one_token(%x: tensor<1x1x2xf32>, %w: tensor<2x3xf32>) -> tensor<1x1x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<1x1x2xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<1x1x2xf32>, tensor<f32>) -> tensor<1x1xf32>
  %r = stablehlo.rsqrt %ss : tensor<1x1xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x1x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_input_affine_into_dot_general]
  %y = stablehlo.multiply %x, %rb : tensor<1x1x2xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [2] x [0] : (tensor<1x1x2xf32>, tensor<2x3xf32>) -> tensor<1x1x3xf32>
  return %d : tensor<1x1x3xf32>
}

// -----

// Attention weights of one query and one key, a scalar exp(q · k) computed from the token
// by dense layers whose weights are arguments, multiplied into the value projection: the
// weight reads the data, and stays.
// CHECK-LABEL: func.func @no_fold_attention_weight_of_one_token
// CHECK:         %[[V:.+]] = stablehlo.dot_general %arg0, %arg3
// CHECK:         stablehlo.multiply %[[V]]
func.func @no_fold_attention_weight_of_one_token(%x: tensor<1x2xf32>, %wq: tensor<2x2xf32>, %wk: tensor<2x2xf32>, %wv: tensor<2x2xf32>) -> tensor<1x2xf32> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %logit = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1xf32>
  %p = stablehlo.exponential %logit : tensor<1xf32>
  %pb = stablehlo.broadcast_in_dim %p, dims = [0] : (tensor<1xf32>) -> tensor<1x2xf32>
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  // REPORT-DAG: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel value is computed from the data: folding would make the weights depend on it [fold_scale_into_linear]
  %y = stablehlo.multiply %v, %pb : tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Flax attention's query / sqrt(head_dim) after a DenseGeneral with a [heads, head_dim]
// bias: the scalar goes into the weights and the bias block.
// CHECK-LABEL: func.func @fold_query_scaling_over_head_bias
// CHECK:         %[[W:.+]] = stablehlo.constant dense<{{\[\[\[}}2.500000e-01, -5.000000e-01], [1.000000e+00, 7.500000e-01]], {{.+}}> : tensor<2x2x2xf32>
// CHECK:         %[[Q:.+]] = stablehlo.dot_general %arg0, %[[W]]
// CHECK:         %[[B:.+]] = stablehlo.constant dense<{{\[\[}}5.000000e-02, 1.000000e-01], [1.500000e-01, 2.000000e-01]]> : tensor<2x2xf32>
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1, 2]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[Q]], %[[BB]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_query_scaling_over_head_bias(%x: tensor<3x2xf32>) -> tensor<3x2x2xf32> {
  %w = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]]]> : tensor<2x2x2xf32>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3x2x2xf32>
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// The same with weights as arguments (`model.apply(variables, x)`): the kernel and the
// [heads, head_dim] bias are arguments, scaled in the graph, W * c and b * c.
// CHECK-LABEL: func.func @fold_query_scaling_over_head_bias_as_arguments
// CHECK-SAME:    %[[X:[^:]+]]: tensor<3x2xf32>, %[[W:[^:]+]]: tensor<2x2x2xf32>, %[[B:[^:]+]]: tensor<2x2xf32>
// CHECK-DAG:     %[[SB:.+]] = stablehlo.multiply %[[B]], %{{.+}} : tensor<2x2xf32>
// CHECK-DAG:     %[[SW:.+]] = stablehlo.multiply %[[W]], %{{.+}} : tensor<2x2x2xf32>
// CHECK:         %[[Q:.+]] = stablehlo.dot_general %[[X]], %[[SW]]
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[SB]], dims = [1, 2]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[Q]], %[[BB]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_query_scaling_over_head_bias_as_arguments(%x: tensor<3x2xf32>, %w: tensor<2x2x2xf32>, %b: tensor<2x2xf32>) -> tensor<3x2x2xf32> {
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %br = stablehlo.reshape %b : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %br, dims = [0, 1, 2] : (tensor<1x2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3x2x2xf32>
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// The query scaling after a LayerNorm whose shift a fold merged into q's and k's bias
// arguments: q's bias is then L(beta, Wq) + bq, computed in the graph, and is scaled as
// it is, (L(beta, Wq) + bq) * c; the multiply the fold builds for it is no candidate
// (folded again, c would move into L(beta, Wq)'s weights: more ops for the same value).
// CHECK-LABEL: func.func @fold_query_scaling_over_a_folded_head_bias
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[BETA:[^:]+]]: tensor<4xf32>, %[[WQ:[^:]+]]: tensor<4x2x3xf32>, %[[BQ:[^:]+]]: tensor<2x3xf32>
// CHECK:         %[[T:.+]] = stablehlo.dot_general %[[BETA]], %[[WQ]], contracting_dims = [0] x [0]
// CHECK:         %[[B:.+]] = stablehlo.add %[[T]], %[[BQ]] : tensor<2x3xf32>
// CHECK:         %[[SB:.+]] = stablehlo.multiply %[[B]], %{{.+}} : tensor<2x3xf32>
// CHECK:         %[[Q:.+]] = stablehlo.dot_general %[[X]], %{{.+}}, contracting_dims = [1] x [0]
// CHECK:         %[[BB:.+]] = stablehlo.broadcast_in_dim %[[SB]], dims = [1, 2]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[Q]], %[[BB]]
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[Y]]
func.func @fold_query_scaling_over_a_folded_head_bias(%arg0: tensor<2x4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>, %wq: tensor<4x2x3xf32>, %bq: tensor<2x3xf32>, %wk: tensor<4x2x3xf32>, %bk: tensor<2x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
  %gamma_b = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %scaled = stablehlo.multiply %arg0, %gamma_b : tensor<2x4xf32>
  %y = stablehlo.add %scaled, %beta_b : tensor<2x4xf32>
  %q = stablehlo.dot_general %y, %wq, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bq_r = stablehlo.reshape %bq : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %bq_b = stablehlo.broadcast_in_dim %bq_r, dims = [0, 1, 2] : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  %q_b = stablehlo.add %q, %bq_b : tensor<2x2x3xf32>
  %c = stablehlo.constant dense<2.0> : tensor<2x2x3xf32>
  %q_s = stablehlo.divide %q_b, %c : tensor<2x2x3xf32>
  %k = stablehlo.dot_general %y, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x2x3xf32>) -> tensor<2x2x3xf32>
  %bk_r = stablehlo.reshape %bk : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %bk_b = stablehlo.broadcast_in_dim %bk_r, dims = [0, 1, 2] : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  %k_b = stablehlo.add %k, %bk_b : tensor<2x2x3xf32>
  return %q_s, %k_b : tensor<2x2x3xf32>, tensor<2x2x3xf32>
}

// -----

// Weights as arguments, but the rhs is computed by a linear op (attention's k, plus a
// [heads, head_dim] block): an activation, not weights; no candidate.
// CHECK-LABEL: func.func @no_fold_query_scaling_over_head_bias_on_an_activation
// CHECK:         stablehlo.divide
func.func @no_fold_query_scaling_over_head_bias_on_an_activation(%x: tensor<3x2xf32>, %a: tensor<2x2xf32>, %v: tensor<2x2x2xf32>, %b: tensor<2x2xf32>) -> tensor<3x2x2xf32> {
  %w = stablehlo.dot_general %a, %v, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3x2x2xf32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: {{.+}} [fold_divisor_into_linear]
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// bias add result has other users (a scalar over a [heads, head_dim] bias): q + b is also
// returned.
// CHECK-LABEL: func.func @no_fold_query_scaling_bias_add_multi_user
// CHECK:         %[[QB:.+]] = stablehlo.add
// CHECK:         stablehlo.divide %[[QB]]
func.func @no_fold_query_scaling_bias_add_multi_user(%x: tensor<3x2xf32>) -> (tensor<3x2x2xf32>, tensor<3x2x2xf32>) {
  %w = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]]]> : tensor<2x2x2xf32>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3x2x2xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: bias add result has other users [fold_divisor_into_linear]
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y, %qb : tensor<3x2x2xf32>, tensor<3x2x2xf32>
}

// -----

// per-channel factor is not finite (a scalar over a [heads, head_dim] bias): c is an
// infinity (a NaN is no uniform scalar: NaN != NaN).
// CHECK-LABEL: func.func @no_fold_query_scaling_by_infinity
// CHECK:         stablehlo.multiply
func.func @no_fold_query_scaling_by_infinity(%x: tensor<3x2xf32>) -> tensor<3x2x2xf32> {
  %w = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]]]> : tensor<2x2x2xf32>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<0x7F800000> : tensor<3x2x2xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: per-channel factor is not finite [fold_scale_into_linear]
  %y = stablehlo.multiply %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// per-channel divisor has a zero (a scalar over a [heads, head_dim] bias).
// CHECK-LABEL: func.func @no_fold_query_scaling_by_zero_divisor
// CHECK:         stablehlo.divide
func.func @no_fold_query_scaling_by_zero_divisor(%x: tensor<3x2xf32>) -> tensor<3x2x2xf32> {
  %w = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]]]> : tensor<2x2x2xf32>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<0.0> : tensor<3x2x2xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: per-channel divisor has a zero [fold_divisor_into_linear]
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// weights narrower than the result (a scalar over a [heads, head_dim] bias): f16 weights
// in an f32 dot_general.
// CHECK-LABEL: func.func @no_fold_query_scaling_into_narrow_weights
// CHECK:         stablehlo.divide
func.func @no_fold_query_scaling_into_narrow_weights(%x: tensor<3x2xf32>) -> tensor<3x2x2xf32> {
  %w = stablehlo.constant dense<[[[0.5, -1.0], [2.0, 1.5]], [[0.25, -0.75], [1.0, 0.5]]]> : tensor<2x2x2xf16>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x2x2xf16>) -> tensor<3x2x2xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<3x2x2xf32>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3x2x2xf32>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.divide: weights are narrower than the computation: folding would round them again [fold_divisor_into_linear]
  %y = stablehlo.divide %qb, %c : tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// folded weights overflow their element type (a scalar over a [heads, head_dim] bias):
// f16 weights 60000 times 100.
// CHECK-LABEL: func.func @no_fold_query_scaling_weights_overflow
// CHECK:         stablehlo.multiply
func.func @no_fold_query_scaling_weights_overflow(%x: tensor<3x2xf16>) -> tensor<3x2x2xf16> {
  %w = stablehlo.constant dense<60000.0> : tensor<2x2x2xf16>
  %b = stablehlo.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf16>
  %q = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x2xf16>, tensor<2x2x2xf16>) -> tensor<3x2x2xf16>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1, 2] : (tensor<2x2xf16>) -> tensor<3x2x2xf16>
  %qb = stablehlo.add %q, %bb : tensor<3x2x2xf16>
  %c = stablehlo.constant dense<100.0> : tensor<3x2x2xf16>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folded weights overflow their element type [fold_scale_into_linear]
  %y = stablehlo.multiply %qb, %c : tensor<3x2x2xf16>
  return %y : tensor<3x2x2xf16>
}

// -----

// element type is not f16, bf16, f32 or f64: an integer convolution times per-channel
// integers (no candidate: only --debug says why).
// CHECK-LABEL: func.func @no_fold_integer_scale
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK:         stablehlo.multiply %[[C]]
func.func @no_fold_integer_scale(%arg0: tensor<1x4x4x2xi32>) -> tensor<1x4x4x3xi32> {
  %k = stablehlo.constant dense<[[[[1, -1, 2], [3, 0, -2]]]]> : tensor<1x1x2x3xi32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xi32>, tensor<1x1x2x3xi32>) -> tensor<1x4x4x3xi32>
  %s = stablehlo.constant dense<[2, 3, -1]> : tensor<3xi32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xi32>) -> tensor<1x4x4x3xi32>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: element type is not f16, bf16, f32 or f64 [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %sb : tensor<1x4x4x3xi32>
  return %y : tensor<1x4x4x3xi32>
}

// -----

// folded weights overflow their element type: an f16 kernel of 60000 times a per-channel
// factor of 100.
// CHECK-LABEL: func.func @no_fold_factor_weights_overflow
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf16>
func.func @no_fold_factor_weights_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %k = stablehlo.constant dense<60000.0> : tensor<1x1x2x3xf16>
  %s = stablehlo.constant dense<[100.0, 100.0, 100.0]> : tensor<3xf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<1x1x2x3xf16>) -> tensor<1x4x4x3xf16>
  %b = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<3xf16>) -> tensor<1x4x4x3xf16>
  // REPORT: decomposed.mlir:[[# @LINE + 1]]:8: not folded stablehlo.multiply: folded weights overflow their element type [fold_scale_into_linear]
  %y = stablehlo.multiply %c, %b : tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}
