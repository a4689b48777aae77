// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s

// torch-mlir (TorchToStablehlo, then chlo-legalize-to-stablehlo, canonicalize, cse) with a
// symbolic batch: each of the batch norm's subtract, multiply, multiply and add is a CHLO
// broadcasting op, lowered to `shape.shape_of` of the activation, `shape.broadcast` with
// the per-channel operand's constant shape [C, 1, 1], and a `dynamic_broadcast_in_dim` of
// both operands onto that shape; the activation's broadcast is onto its own shape.
// CHECK-LABEL: func.func @fold_torch_mlir_symbolic_batch
// CHECK-DAG:     %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<4x3x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.dynamic_broadcast_in_dim %{{.+}}, %{{.+}}, dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[B]]
// CHECK-NOT:     stablehlo.subtract
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     shape.
// CHECK:         return %[[Y]]
func.func @fold_torch_mlir_symbolic_batch(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x4x4x4xf32> {
  %k = stablehlo.constant dense<[[[[0.5]], [[1.0]], [[-1.5]]], [[[2.0]], [[0.25]], [[1.0]]], [[[-0.5]], [[0.75]], [[1.25]]], [[[1.0]], [[-2.0]], [[0.5]]]]> : tensor<4x3x1x1xf32>
  %mean = stablehlo.constant dense<[[[0.1]], [[0.2]], [[-0.3]], [[0.4]]]> : tensor<4x1x1xf32>
  %invstd = stablehlo.constant dense<[[[1.5]], [[0.5]], [[2.0]], [[1.25]]]> : tensor<4x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]], [[-0.7]], [[1.3]]]> : tensor<4x1x1xf32>
  %beta = stablehlo.constant dense<[[[0.0]], [[1.0]], [[-1.0]], [[0.5]]]> : tensor<4x1x1xf32>
  %c = shape.const_shape [4, 1, 1] : tensor<3xindex>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<?x4x4x4xf32>
  %s0 = shape.shape_of %y : tensor<?x4x4x4xf32> -> tensor<4xindex>
  %b0 = shape.broadcast %s0, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %b0, dims = [0, 1, 2, 3] : (tensor<?x4x4x4xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %m0 = stablehlo.dynamic_broadcast_in_dim %mean, %b0, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %d = stablehlo.subtract %y0, %m0 : tensor<?x4x4x4xf32>
  %s1 = shape.shape_of %d : tensor<?x4x4x4xf32> -> tensor<4xindex>
  %b1 = shape.broadcast %s1, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %d1 = stablehlo.dynamic_broadcast_in_dim %d, %b1, dims = [0, 1, 2, 3] : (tensor<?x4x4x4xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %i1 = stablehlo.dynamic_broadcast_in_dim %invstd, %b1, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %n = stablehlo.multiply %d1, %i1 : tensor<?x4x4x4xf32>
  %s2 = shape.shape_of %n : tensor<?x4x4x4xf32> -> tensor<4xindex>
  %b2 = shape.broadcast %s2, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %n2 = stablehlo.dynamic_broadcast_in_dim %n, %b2, dims = [0, 1, 2, 3] : (tensor<?x4x4x4xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %g2 = stablehlo.dynamic_broadcast_in_dim %gamma, %b2, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %ng = stablehlo.multiply %n2, %g2 : tensor<?x4x4x4xf32>
  %s3 = shape.shape_of %ng : tensor<?x4x4x4xf32> -> tensor<4xindex>
  %b3 = shape.broadcast %s3, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %ng3 = stablehlo.dynamic_broadcast_in_dim %ng, %b3, dims = [0, 1, 2, 3] : (tensor<?x4x4x4xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %be3 = stablehlo.dynamic_broadcast_in_dim %beta, %b3, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x4x4xf32>
  %out = stablehlo.add %ng3, %be3 : tensor<?x4x4x4xf32>
  return %out : tensor<?x4x4x4xf32>
}

// -----

// The shape as shape legalization writes it: each dimension size read with
// get_dimension_size, joined by concatenate, cast to index.
// CHECK-LABEL: func.func @fold_shape_read_with_get_dimension_size
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     stablehlo.dynamic_broadcast_in_dim
// CHECK:         return %[[C]]
func.func @fold_shape_read_with_get_dimension_size(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %n = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?x2x4x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %s = stablehlo.concatenate %n1, %c2, %c4, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xi32>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xi32>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// shape.broadcast with [3, 1, 1] is not the activation's shape (3 channels against its
// 2): the broadcast is not seen through.
// CHECK-LABEL: func.func @no_fold_shape_broadcast_that_changes_the_shape
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.+}}, %{{.+}}, dims = [0, 1, 2, 3]
// CHECK:         stablehlo.multiply
func.func @no_fold_shape_broadcast_that_changes_the_shape(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %c = shape.const_shape [3, 1, 1] : tensor<3xindex>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %s0 = shape.shape_of %y : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %b0 = shape.broadcast %s0, %c : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %b0, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %b0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// A broadcast that really broadcasts: the batch of the result comes from another value
// (%arg1's), which may be larger than the convolution's (a size-1 batch repeated).
// CHECK-LABEL: func.func @no_fold_broadcast_onto_another_shape
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.+}}, %{{.+}}, dims = [0, 1, 2, 3]
// CHECK:         stablehlo.multiply
func.func @no_fold_broadcast_onto_another_shape(%arg0: tensor<?x3x4x4xf32>, %arg1: tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %s0 = shape.shape_of %arg1 : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s0, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// The dimensions are permuted: the broadcast is a transpose, not the identity.
// CHECK-LABEL: func.func @no_fold_broadcast_with_permuted_dimensions
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.+}}, %{{.+}}, dims = [0, 1, 3, 2]
// CHECK:         stablehlo.multiply
func.func @no_fold_broadcast_with_permuted_dimensions(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %s0 = shape.shape_of %y : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s0, dims = [0, 1, 3, 2] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// The shape is also read for an op that stays (the returned broadcast of %gamma): the
// convolution has a second reader and is left as it was.
// CHECK-LABEL: func.func @no_fold_shape_read_for_an_op_that_stays
// CHECK:         stablehlo.multiply
// CHECK:         return
func.func @no_fold_shape_read_for_an_op_that_stays(%arg0: tensor<?x3x4x4xf32>) -> (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %s0 = shape.shape_of %y : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s0, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xindex>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out, %g0 : tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>
}

// -----

// The shape through shape.to_extent_tensor and arith.index_cast to i64.
// CHECK-LABEL: func.func @fold_shape_through_extent_tensor_and_index_cast
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     shape.
// CHECK:         return %[[C]]
func.func @fold_shape_through_extent_tensor_and_index_cast(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %s0 = shape.shape_of %y : tensor<?x2x4x4xf32> -> tensor<4xindex>
  %e0 = shape.to_extent_tensor %s0 : tensor<4xindex> -> tensor<4xindex>
  %i0 = arith.index_cast %e0 : tensor<4xindex> to tensor<4xi64>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %i0, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xi64>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %i0, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xi64>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// torch-mlir's own dimension sizes: tensor.dim of each dimension, index_cast to i64,
// joined by tensor.from_elements, with a constant for a static one.
// CHECK-LABEL: func.func @fold_shape_from_tensor_dims
// CHECK:         %[[C:.+]] = stablehlo.convolution
// CHECK-NOT:     stablehlo.multiply
// CHECK-NOT:     tensor.dim
// CHECK:         return %[[C]]
func.func @fold_shape_from_tensor_dims(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %four = arith.constant 4 : i64
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %d0 = tensor.dim %y, %c0 : tensor<?x2x4x4xf32>
  %d1 = tensor.dim %y, %c1 : tensor<?x2x4x4xf32>
  %d2 = tensor.dim %y, %c2 : tensor<?x2x4x4xf32>
  %n0 = arith.index_cast %d0 : index to i64
  %n1 = arith.index_cast %d1 : index to i64
  %n2 = arith.index_cast %d2 : index to i64
  %s = tensor.from_elements %n0, %n1, %n2, %four : tensor<4xi64>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xi64>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xi64>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}

// -----

// The dimension sizes are read in the wrong order (1 before 0): not the operand's shape.
// CHECK-LABEL: func.func @no_fold_dimension_sizes_out_of_order
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.+}}, %{{.+}}, dims = [0, 1, 2, 3]
// CHECK:         stablehlo.multiply
func.func @no_fold_dimension_sizes_out_of_order(%arg0: tensor<?x3x4x4xf32>) -> tensor<?x2x4x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<2x3x1x1xf32>
  %gamma = stablehlo.constant dense<[[[0.9]], [[1.1]]]> : tensor<2x1x1xf32>
  %c4 = stablehlo.constant dense<4> : tensor<1xi32>
  %y = stablehlo.convolution(%arg0, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x4x4xf32>
  %n = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?x2x4x4xf32>) -> tensor<i32>
  %n0 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %m = stablehlo.get_dimension_size %y, dim = 1 : (tensor<?x2x4x4xf32>) -> tensor<i32>
  %m1 = stablehlo.reshape %m : (tensor<i32>) -> tensor<1xi32>
  %s = stablehlo.concatenate %m1, %n0, %c4, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  %y0 = stablehlo.dynamic_broadcast_in_dim %y, %s, dims = [0, 1, 2, 3] : (tensor<?x2x4x4xf32>, tensor<4xi32>) -> tensor<?x2x4x4xf32>
  %g0 = stablehlo.dynamic_broadcast_in_dim %gamma, %s, dims = [1, 2, 3] : (tensor<2x1x1xf32>, tensor<4xi32>) -> tensor<?x2x4x4xf32>
  %out = stablehlo.multiply %y0, %g0 : tensor<?x2x4x4xf32>
  return %out : tensor<?x2x4x4xf32>
}
