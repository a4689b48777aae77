// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --debug 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEBUG %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-narrow-weights=false --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=NARROW %s

// Weights passed as arguments at these toy sizes have more elements than the activations;
// fold-larger-weight-arguments=true keeps such folds here to test their mechanics. The
// default's cost rule is tested in weight_cost.mlir.

// patterns/precision.py: fold_precision_island, a per-channel chain computed in a wider
// float type between a widening and a narrowing convert. REPORT lines are the report's
// folds (first) and skips; DEBUG lines the converts that are no candidate (only --debug
// logs them).

// Flax bf16: the batch norm runs in f32 between converts, the kernel is a convert of f32
// master weights. The scaled master weights are rounded to bf16 once.
// CHECK-LABEL: func.func @fold_bf16_precision_island
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%{{.+}}, %[[K]]) {{.+}} -> tensor<1x4x4x3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xbf16>)
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xbf16>
// CHECK-NOT:     stablehlo.convert {{.+}} -> tensor<1x4x4x3x
// CHECK:         return %[[Y]]
func.func @fold_bf16_precision_island(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %cf, %m : tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}
// -----

// The same island with the batch norm as one batch_norm_inference op in f32.
// CHECK-LABEL: func.func @fold_bf16_precision_island_with_batch_norm_op
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%{{.+}}, %[[K]]) {{.+}} -> tensor<1x4x4x3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xbf16>)
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xbf16>
// CHECK-NOT:     batch_norm_inference
// CHECK:         return %[[Y]]
func.func @fold_bf16_precision_island_with_batch_norm_op(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %sc = stablehlo.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %off = stablehlo.constant dense<[0.125, -0.25, 0.5]> : tensor<3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %var = stablehlo.constant dense<[1.0, 4.0, 0.25]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %n = "stablehlo.batch_norm_inference"(%cf, %sc, %off, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}
// -----

// Weights as arguments (`model.apply(variables, x)`): the f32 master weights and the
// chain's values are arguments. The graph scales the master weights in f32 and converts
// the product to bf16 once; the bias (b * s + t) is computed in f32 on [C] vectors and
// converted once; its -mean * inv as -(mean * inv), no zero constant to subtract from.
// CHECK-LABEL: func.func @fold_precision_island_with_argument_values
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x4x2xbf16>, %[[W:[^:]+]]: tensor<1x1x2x3xf32>, %[[MEAN:[^:]+]]: tensor<3xf32>, %[[INV:[^:]+]]: tensor<3xf32>
// CHECK-DAG:     %[[M:.+]] = stablehlo.multiply %[[MEAN]], %[[INV]] : tensor<3xf32>
// CHECK-DAG:     %[[T:.+]] = stablehlo.negate %[[M]] : tensor<3xf32>
// CHECK-DAG:     %[[TB:.+]] = stablehlo.convert %[[T]] : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK-DAG:     %[[S:.+]] = stablehlo.broadcast_in_dim %[[INV]], dims = [3] : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-DAG:     %[[P:.+]] = stablehlo.multiply %[[W]], %[[S]] : tensor<1x1x2x3xf32>
// CHECK-DAG:     %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[X]], %[[K]]) {{.+}} -> tensor<1x4x4x3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %[[TB]], dims = [3] : (tensor<3xbf16>) -> tensor<1x4x4x3xbf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xbf16>
// CHECK-NOT:     tensor<1x4x4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_precision_island_with_argument_values(%arg0: tensor<1x4x4x2xbf16>, %w: tensor<1x1x2x3xf32>, %mean: tensor<3xf32>, %inv: tensor<3xf32>) -> tensor<1x4x4x3xbf16> {
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %cf, %m : tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// Weights as arguments, with the dense layer's own bias (an f32 argument converted to
// bf16) and a scale and shift that are arguments: b * s + t in f32, the master weights
// scaled in f32, each converted to bf16 once.
// CHECK-LABEL: func.func @fold_precision_island_argument_bias
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x2xbf16>, %[[W:[^:]+]]: tensor<2x3xf32>
// CHECK:         %[[P:.+]] = stablehlo.multiply %[[W]], %{{.+}} : tensor<2x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %[[X]], %[[K]]
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [1] : (tensor<3xbf16>) -> tensor<4x3xbf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[D]], %[[B]] : tensor<4x3xbf16>
// CHECK-NOT:     tensor<4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_precision_island_argument_bias(%arg0: tensor<4x2xbf16>, %w: tensor<2x3xf32>, %bias: tensor<3xf32>, %scale: tensor<3xf32>, %shift: tensor<3xf32>) -> tensor<4x3xbf16> {
  %k = stablehlo.convert %w : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %bb = stablehlo.convert %bias : (tensor<3xf32>) -> tensor<3xbf16>
  %b = stablehlo.broadcast_in_dim %bb, dims = [1] : (tensor<3xbf16>) -> tensor<4x3xbf16>
  %a = stablehlo.add %d, %b : tensor<4x3xbf16>
  %af = stablehlo.convert %a : (tensor<4x3xbf16>) -> tensor<4x3xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %m = stablehlo.multiply %af, %s : tensor<4x3xf32>
  %t = stablehlo.broadcast_in_dim %shift, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %n = stablehlo.add %m, %t : tensor<4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.dot_general [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// Keras mixed_bfloat16 depthwise convolution: the kernel is a reshape of the bf16 convert
// of its f32 master weights (3x1 per tap to 1x3). The master reshaped is the master of
// the reshaped kernel: the scaled master is rounded to bf16 once, in the kernel's shape.
// CHECK-LABEL: func.func @fold_depthwise_island_master_through_reshape
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x1x3xbf16>
// CHECK-NOT:     stablehlo.reshape
// CHECK:         %[[C:.+]] = stablehlo.convolution(%{{.+}}, %[[K]]) {{.+}} feature_group_count = 3 {{.+}} -> tensor<1x4x4x3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [3] : (tensor<3xbf16>)
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]] : tensor<1x4x4x3xbf16>
// CHECK-NOT:     stablehlo.convert
// CHECK:         return %[[Y]]
func.func @fold_depthwise_island_master_through_reshape(%arg0: tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5], [-1.0], [2.0]]]]> : tensor<1x1x3x1xf32>
  %kc = stablehlo.convert %w : (tensor<1x1x3x1xf32>) -> tensor<1x1x3x1xbf16>
  %k = stablehlo.reshape %kc : (tensor<1x1x3x1xbf16>) -> tensor<1x1x1x3xbf16>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x4x4x3xbf16>, tensor<1x1x1x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %cf, %m : tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// The same depthwise kernel with weights as arguments: the f32 master is reshaped to the
// kernel's shape first, then scaled along its output-feature dimension (3) in f32 and
// converted to bf16 once.
// CHECK-LABEL: func.func @fold_depthwise_island_argument_master_through_reshape
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x4x3xbf16>, %[[W:[^:]+]]: tensor<1x1x3x1xf32>, %[[MEAN:[^:]+]]: tensor<3xf32>, %[[INV:[^:]+]]: tensor<3xf32>
// CHECK-DAG:     %[[R:.+]] = stablehlo.reshape %[[W]] : (tensor<1x1x3x1xf32>) -> tensor<1x1x1x3xf32>
// CHECK-DAG:     %[[S:.+]] = stablehlo.broadcast_in_dim %[[INV]], dims = [3] : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
// CHECK-DAG:     %[[P:.+]] = stablehlo.multiply %[[R]], %[[S]] : tensor<1x1x1x3xf32>
// CHECK-DAG:     %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[X]], %[[K]]) {{.+}} feature_group_count = 3 {{.+}} -> tensor<1x4x4x3xbf16>
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %{{.+}} : tensor<1x4x4x3xbf16>
// CHECK-NOT:     tensor<1x4x4x3xf32>
// CHECK:         return %[[Y]]
func.func @fold_depthwise_island_argument_master_through_reshape(%arg0: tensor<1x4x4x3xbf16>, %w: tensor<1x1x3x1xf32>, %mean: tensor<3xf32>, %inv: tensor<3xf32>) -> tensor<1x4x4x3xbf16> {
  %kc = stablehlo.convert %w : (tensor<1x1x3x1xf32>) -> tensor<1x1x3x1xbf16>
  %k = stablehlo.reshape %kc : (tensor<1x1x3x1xbf16>) -> tensor<1x1x1x3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x4x4x3xbf16>, tensor<1x1x1x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %d = stablehlo.subtract %cf, %m : tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// LeViT's channels-first Linear_BN in bf16: a Dense layer, `transpose` to [B, C, N], the
// BatchNorm1d in f32 between converts. The transpose only moves elements: the scaled
// master weights are rounded to bf16 once, the bias added before the rebuilt transpose.
// CHECK-LABEL: func.func @fold_island_through_transpose
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[K]], {{.+}} -> tensor<1x8x3xbf16>
// CHECK:         %[[B:.+]] = stablehlo.broadcast_in_dim %{{.+}}, dims = [2] : (tensor<3xbf16>) -> tensor<1x8x3xbf16>
// CHECK:         %[[A:.+]] = stablehlo.add %[[D]], %[[B]] : tensor<1x8x3xbf16>
// CHECK:         %[[T:.+]] = stablehlo.transpose %[[A]], dims = [0, 2, 1] : (tensor<1x8x3xbf16>) -> tensor<1x3x8xbf16>
// CHECK-NOT:     stablehlo.convert
// CHECK:         return %[[T]]
func.func @fold_island_through_transpose(%arg0: tensor<1x8x4xbf16>) -> tensor<1x3x8xbf16> {
  %w = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.125, 1.0, -2.0], [3.0, -0.5, 0.75]]> : tensor<4x3xf32>
  %k = stablehlo.convert %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [2] x [0] : (tensor<1x8x4xbf16>, tensor<4x3xbf16>) -> tensor<1x8x3xbf16>
  %t = stablehlo.transpose %d, dims = [0, 2, 1] : (tensor<1x8x3xbf16>) -> tensor<1x3x8xbf16>
  %tf = stablehlo.convert %t : (tensor<1x3x8xbf16>) -> tensor<1x3x8xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<3xf32>) -> tensor<1x3x8xf32>
  %s = stablehlo.subtract %tf, %m : tensor<1x3x8xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<1x3x8xf32>
  %n = stablehlo.multiply %s, %i : tensor<1x3x8xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.dot_general through stablehlo.transpose [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x3x8xf32>) -> tensor<1x3x8xbf16>
  return %y : tensor<1x3x8xbf16>
}

// -----

// LeViT's flattened Linear_BN in bf16: the tokens reshaped into the batch ([B * N, C]),
// the norm in f32; the weights' master is an argument (scaled in f32, rounded to bf16
// once, in the graph).
// CHECK-LABEL: func.func @fold_island_through_reshape_argument_master
// CHECK:         %[[P:.+]] = stablehlo.multiply %arg1, %{{.+}} : tensor<4x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<4x3xf32>) -> tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[K]], {{.+}} -> tensor<1x8x3xbf16>
// CHECK:         %[[A:.+]] = stablehlo.add %[[D]], %{{.+}} : tensor<1x8x3xbf16>
// CHECK:         %[[R:.+]] = stablehlo.reshape %[[A]] : (tensor<1x8x3xbf16>) -> tensor<8x3xbf16>
// CHECK-NOT:     stablehlo.convert %{{.+}} : (tensor<8x3xf32>)
// CHECK:         return %[[R]]
func.func @fold_island_through_reshape_argument_master(%arg0: tensor<1x8x4xbf16>, %w: tensor<4x3xf32>) -> tensor<8x3xbf16> {
  %k = stablehlo.convert %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %mean = stablehlo.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [2] x [0] : (tensor<1x8x4xbf16>, tensor<4x3xbf16>) -> tensor<1x8x3xbf16>
  %r = stablehlo.reshape %d : (tensor<1x8x3xbf16>) -> tensor<8x3xbf16>
  %rf = stablehlo.convert %r : (tensor<8x3xbf16>) -> tensor<8x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<3xf32>) -> tensor<8x3xf32>
  %s = stablehlo.subtract %rf, %m : tensor<8x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<8x3xf32>
  %n = stablehlo.multiply %s, %i : tensor<8x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: folded stablehlo.convert into stablehlo.dot_general through stablehlo.reshape [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<8x3xf32>) -> tensor<8x3xbf16>
  return %y : tensor<8x3xbf16>
}

// -----

// The kernel is stored only in bf16 (Flax's dtype=param_dtype=bfloat16): W * s is
// computed in float64 from the bf16 kernel and rounded to bf16 again (scales that are not
// powers of two: the rounding shows), and the report marks it. With
// fold-narrow-weights=false: weights have no wider master copy.
// CHECK-LABEL: func.func @fold_island_narrow_weights
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x3xbf16>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.convert
// CHECK:         return %[[C]]
func.func @fold_island_narrow_weights(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %k = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xbf16>
  %inv = stablehlo.constant dense<[1.3, 0.7, 3.1]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 2]]:8: folded stablehlo.convert into stablehlo.convolution (rounded again in bf16) [fold_precision_island]
  // NARROW: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights have no wider master copy: folding would round them again [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}
// -----

// Through a transpose as without one, a kernel stored only in bf16 is scaled and rounded
// to bf16 again; with fold-narrow-weights=false it is refused.
// CHECK-LABEL: func.func @fold_island_through_transpose_narrow_weights
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3xbf16>
// CHECK:         %[[D:.+]] = stablehlo.dot_general %arg0, %[[K]]
// CHECK:         %[[T:.+]] = stablehlo.transpose %[[D]]
// CHECK-NOT:     stablehlo.multiply
// CHECK:         return %[[T]]
func.func @fold_island_through_transpose_narrow_weights(%arg0: tensor<1x8x4xbf16>) -> tensor<1x3x8xbf16> {
  %k = stablehlo.constant dense<0.5> : tensor<4x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [2] x [0] : (tensor<1x8x4xbf16>, tensor<4x3xbf16>) -> tensor<1x8x3xbf16>
  %t = stablehlo.transpose %d, dims = [0, 2, 1] : (tensor<1x8x3xbf16>) -> tensor<1x3x8xbf16>
  %tf = stablehlo.convert %t : (tensor<1x3x8xbf16>) -> tensor<1x3x8xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<1x3x8xf32>
  %n = stablehlo.multiply %tf, %i : tensor<1x3x8xf32>
  // REPORT: precision.mlir:[[# @LINE + 2]]:8: folded stablehlo.convert into stablehlo.dot_general through stablehlo.transpose (rounded again in bf16) [fold_precision_island]
  // NARROW: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights have no wider master copy: folding would round them again [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x3x8xf32>) -> tensor<1x3x8xbf16>
  return %y : tensor<1x3x8xbf16>
}

// -----

// weights have no wider master copy: the master weights are f16, narrower than the f32
// the chain runs in.
// CHECK-LABEL: func.func @no_fold_island_with_narrower_master_weights
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_with_narrower_master_weights(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf16>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf16>) -> tensor<1x1x2x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights have no wider master copy: folding would round them again [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// weights have no wider master copy: with weights as arguments, the kernel argument is
// bf16 itself (pure bf16), and scaling it in the graph would round it a second time.
// CHECK-LABEL: func.func @no_fold_island_argument_weights_without_master
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_argument_weights_without_master(%arg0: tensor<1x4x4x2xbf16>, %k: tensor<1x1x2x3xbf16>, %inv: tensor<3xf32>) -> tensor<1x4x4x3xbf16> {
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights have no wider master copy: folding would round them again [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// weights have no wider master copy: with weights as arguments, the master argument is
// f16, narrower than the f32 the chain runs in.
// CHECK-LABEL: func.func @no_fold_island_argument_master_narrower
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_argument_master_narrower(%arg0: tensor<1x4x4x2xbf16>, %w: tensor<1x1x2x3xf16>, %inv: tensor<3xf32>) -> tensor<1x4x4x3xbf16> {
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf16>) -> tensor<1x1x2x3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights have no wider master copy: folding would round them again [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// weights are computed by a linear op: the bf16 weights are a convert of an f32 matmul
// of arguments (an activation, not master weights); scaling them would only move the
// multiply onto them.
// CHECK-LABEL: func.func @no_fold_island_weights_computed_by_linear_op
// CHECK:         stablehlo.multiply {{.+}} : tensor<4x3xf32>
func.func @no_fold_island_weights_computed_by_linear_op(%arg0: tensor<4x2xbf16>, %a: tensor<2x2xf32>, %b: tensor<2x3xf32>, %inv: tensor<3xf32>) -> tensor<4x3xbf16> {
  %m = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %k = stablehlo.convert %m : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %df = stablehlo.convert %d : (tensor<4x3xbf16>) -> tensor<4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %n = stablehlo.multiply %df, %i : tensor<4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: weights are computed by a linear op: the op would only move onto them [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// batch-norm operands are not constants: a batch_norm_inference op whose operands are
// arguments (exporters write it decomposed; only decomposed chains fold in the graph).
// CHECK-LABEL: func.func @no_fold_island_batch_norm_op_with_argument_operands
// CHECK:         stablehlo.batch_norm_inference
func.func @no_fold_island_batch_norm_op_with_argument_operands(%arg0: tensor<4x2xbf16>, %w: tensor<2x3xf32>, %sc: tensor<3xf32>, %off: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<4x3xbf16> {
  %k = stablehlo.convert %w : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %df = stablehlo.convert %d : (tensor<4x3xbf16>) -> tensor<4x3xf32>
  %n = "stablehlo.batch_norm_inference"(%df, %sc, %off, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: batch-norm operands are not constants [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// widening convert result has other users: the f32 activation is also returned.
// CHECK-LABEL: func.func @no_fold_island_widening_convert_multi_user
// CHECK:         stablehlo.convolution
// CHECK-NOT:     stablehlo.convolution
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_widening_convert_multi_user(%arg0: tensor<1x4x4x2xbf16>) -> (tensor<1x4x4x3xbf16>, tensor<1x4x4x3xf32>) {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: widening convert result has other users [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y, %cf : tensor<1x4x4x3xbf16>, tensor<1x4x4x3xf32>
}

// -----

// bias add result has other users (a reason of the chain's bias): L + b is also returned.
// CHECK-LABEL: func.func @no_fold_island_bias_add_multi_user
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_bias_add_multi_user(%arg0: tensor<1x4x4x2xbf16>) -> (tensor<1x4x4x3xbf16>, tensor<1x4x4x3xbf16>) {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %bias = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<3xbf16>) -> tensor<1x4x4x3xbf16>
  %a = stablehlo.add %c, %b : tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %a : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: bias add result has other users [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y, %a : tensor<1x4x4x3xbf16>, tensor<1x4x4x3xbf16>
}

// -----

// A chain that stops at a per-channel op it cannot fold: its reason (a NaN factor).
// CHECK-LABEL: func.func @no_fold_island_factor_not_finite
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_factor_not_finite(%arg0: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x3xbf16> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0x7FC00000, 4.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x3xbf16>) -> tensor<1x4x4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: per-channel factor is not finite [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// not a narrowing float convert: f32 rounded to bf16 for a chain in bf16, widened back to
// f32. Folding would drop the rounding to bf16 the original makes.
// CHECK-LABEL: func.func @no_fold_widening_island
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xbf16>
func.func @no_fold_widening_island(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = stablehlo.constant dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]]]> : tensor<1x1x2x3xf64>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf64>) -> tensor<1x1x2x3xf32>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xbf16>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %cb = stablehlo.convert %c : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xbf16>) -> tensor<1x4x4x3xbf16>
  %n = stablehlo.multiply %cb, %i : tensor<1x4x4x3xbf16>
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: not a narrowing float convert [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xbf16>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// no per-channel chain over a widening convert: f32 data rounded to bf16.
// CHECK-LABEL: func.func @no_fold_narrowing_convert_alone
// CHECK:         stablehlo.convert %arg0
func.func @no_fold_narrowing_convert_alone(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16> {
  // DEBUG: loc("{{.+}}":[[# @LINE + 1]]:8): not a candidate: no per-channel chain over a widening convert [fold_precision_island]
  %y = stablehlo.convert %arg0 : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xbf16>
  return %y : tensor<1x4x4x3xbf16>
}

// -----

// folded weights overflow their element type: f32 master weights 60000 rounded to f16,
// times 2 in the f32 island: 120000 is no f16.
// CHECK-LABEL: func.func @no_fold_island_weights_overflow
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x4x4x3xf32>
func.func @no_fold_island_weights_overflow(%arg0: tensor<1x4x4x2xf16>) -> tensor<1x4x4x3xf16> {
  %w = stablehlo.constant dense<60000.0> : tensor<1x1x2x3xf32>
  %k = stablehlo.convert %w : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf16>
  %inv = stablehlo.constant dense<[2.0, 2.0, 2.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf16>, tensor<1x1x2x3xf16>) -> tensor<1x4x4x3xf16>
  %cf = stablehlo.convert %c : (tensor<1x4x4x3xf16>) -> tensor<1x4x4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %n = stablehlo.multiply %cf, %i : tensor<1x4x4x3xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: folded weights overflow their element type [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf16>
  return %y : tensor<1x4x4x3xf16>
}

// -----

// Constant f32 master weights, the chain's values arguments: the scale is computed in the
// graph, and it scales the master in f32, rounded to bf16 once: convert(W_f32 * s), never
// convert(W) * convert(s) in bf16 (three roundings; review of the argument path).
// CHECK-LABEL: func.func @fold_island_argument_chain_scales_constant_master
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<3xf32>) -> tensor<8x3xf32>
// CHECK:         %[[P:.+]] = stablehlo.multiply %{{.+}}, %[[S]] : tensor<8x3xf32>
// CHECK:         %[[K:.+]] = stablehlo.convert %[[P]] : (tensor<8x3xf32>) -> tensor<8x3xbf16>
// CHECK:         stablehlo.dot_general %arg0, %[[K]]
// CHECK-NOT:     tensor<8x3xbf16>) -> tensor<8x3xbf16>
func.func @fold_island_argument_chain_scales_constant_master(%arg0: tensor<4x8xbf16>, %mean: tensor<3xf32>, %inv: tensor<3xf32>) -> tensor<4x3xbf16> {
  %w = stablehlo.constant dense<[[0.1234567, -0.7654321, 1.3333333], [0.987654, 0.55555, -0.3141592], [1.1, 2.2, 3.3], [-0.123, 0.456, -0.789], [0.1, 0.2, 0.3], [0.77, 0.88, 0.99], [-1.01, 1.02, -1.03], [0.31, 0.37, 0.41]]> : tensor<8x3xf32>
  %k = stablehlo.convert %w : (tensor<8x3xf32>) -> tensor<8x3xbf16>
  %c = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  %cf = stablehlo.convert %c : (tensor<4x3xbf16>) -> tensor<4x3xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %d = stablehlo.subtract %cf, %m : tensor<4x3xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %n = stablehlo.multiply %d, %i : tensor<4x3xf32>
  %y = stablehlo.convert %n : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// reshape or transpose result has other users: the transposed bf16 activation is also
// returned, and would stay computed from the old Dense layer.
// CHECK-LABEL: func.func @no_fold_island_transpose_multi_user
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x3x8xf32>
func.func @no_fold_island_transpose_multi_user(%arg0: tensor<1x8x4xbf16>) -> (tensor<1x3x8xbf16>, tensor<1x3x8xbf16>) {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %k = stablehlo.convert %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [2] x [0] : (tensor<1x8x4xbf16>, tensor<4x3xbf16>) -> tensor<1x8x3xbf16>
  %t = stablehlo.transpose %d, dims = [0, 2, 1] : (tensor<1x8x3xbf16>) -> tensor<1x3x8xbf16>
  %tf = stablehlo.convert %t : (tensor<1x3x8xbf16>) -> tensor<1x3x8xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<3xf32>) -> tensor<1x3x8xf32>
  %n = stablehlo.multiply %tf, %i : tensor<1x3x8xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: reshape or transpose result has other users [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x3x8xf32>) -> tensor<1x3x8xbf16>
  return %y, %t : tensor<1x3x8xbf16>, tensor<1x3x8xbf16>
}

// -----

// a reshape splits or merges the feature dimension: the chain's 24 channels are the Dense
// layer's 8 tokens times its 3 features.
// CHECK-LABEL: func.func @no_fold_island_reshape_merges_feature
// CHECK:         stablehlo.multiply {{.+}} : tensor<1x24xf32>
func.func @no_fold_island_reshape_merges_feature(%arg0: tensor<1x8x4xbf16>) -> tensor<1x24xbf16> {
  %w = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %k = stablehlo.convert %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %inv = stablehlo.constant dense<[2.0, 0.5, 4.0, 1.0, 2.0, 0.5, 4.0, 1.0, 2.0, 0.5, 4.0, 1.0, 2.0, 0.5, 4.0, 1.0, 2.0, 0.5, 4.0, 1.0, 2.0, 0.5, 4.0, 1.0]> : tensor<24xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [2] x [0] : (tensor<1x8x4xbf16>, tensor<4x3xbf16>) -> tensor<1x8x3xbf16>
  %r = stablehlo.reshape %d : (tensor<1x8x3xbf16>) -> tensor<1x24xbf16>
  %rf = stablehlo.convert %r : (tensor<1x24xbf16>) -> tensor<1x24xf32>
  %i = stablehlo.broadcast_in_dim %inv, dims = [1] : (tensor<24xf32>) -> tensor<1x24xf32>
  %n = stablehlo.multiply %rf, %i : tensor<1x24xf32>
  // REPORT: precision.mlir:[[# @LINE + 1]]:8: not folded stablehlo.convert: a reshape splits or merges the feature dimension [fold_precision_island]
  %y = stablehlo.convert %n : (tensor<1x24xf32>) -> tensor<1x24xbf16>
  return %y : tensor<1x24xbf16>
}
