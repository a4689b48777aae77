// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=fold-larger-weight-arguments=true --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=LARGER %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=DEFAULT %s

// Weights passed as arguments at these toy sizes have more elements than the activations;
// fold-larger-weight-arguments=true keeps such folds here to test their mechanics. The
// default's cost rule is tested in weight_cost.mlir.

// Every fold ends: what a fold builds is never a candidate of the same fold again.

// torch-mlir's classifier head (MobileNetV3's hardswish / 6, then addmm's alpha) with the
// scalars as arguments: the input side folds (x - m) / d into the dense layer and builds
// the shift's term, dot_general(-m / d, W^T * alpha), in the graph. That term reads a
// chain too (a constant divided by d), but on constants: parameter arithmetic, not an
// input. Folded again, it built another such term each time, until the driver gave up
// ("pattern application failed to converge", torchvision's mobilenet_v3_small).
// CHECK-LABEL: func.func @shift_term_of_a_fold_is_not_folded_again
// CHECK-NOT:     stablehlo.divide %{{.+}} : tensor<1x4xf32>
// CHECK:         stablehlo.dot_general %{{.+}}, %{{.+}}, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4x3xf32>)
// CHECK:         stablehlo.dot_general %arg2, %{{.+}}, contracting_dims = [1] x [0]
// CHECK-NOT:     stablehlo.dot_general
// CHECK:         return
// LARGER: convergence.mlir:[[# @LINE + 14]]:8: folded stablehlo.divide into stablehlo.dot_general [fold_input_affine_into_dot_general]
// LARGER: convergence.mlir:[[# @LINE + 18]]:8: folded stablehlo.multiply, stablehlo.add into stablehlo.dot_general [fold_scale_into_linear, fold_shift_into_bias]
// LARGER: 2 norms: 2 folded whole, 0 folded partly, 0 left (3 ops folded); 0 activation-sized ops removed
// DEFAULT: convergence.mlir:[[# @LINE + 11]]:8: not folded stablehlo.divide: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_input_affine_into_dot_general]
// DEFAULT: convergence.mlir:[[# @LINE + 15]]:8: not folded stablehlo.multiply: weights the graph would scale or contract on every call have more elements than the activation: the fold would move the op onto a larger tensor [fold_scale_into_linear]
// DEFAULT: 2 norms: 0 folded whole, 0 folded partly, 2 left (0 ops folded); 0 activation-sized ops removed
func.func @shift_term_of_a_fold_is_not_folded_again(%six: tensor<1xf32>, %alpha: tensor<1xf32>, %x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.5], [0.25, 0.0, -2.0, 1.0]]> : tensor<3x4xf32>
  %bias = stablehlo.constant dense<[0.5, -0.25, 1.0]> : tensor<3xf32>
  %m = stablehlo.constant dense<[0.5, -0.25, 1.0, 2.0]> : tensor<4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
  %xs = stablehlo.subtract %x, %mb : tensor<1x4xf32>
  %1 = stablehlo.reshape %six : (tensor<1xf32>) -> tensor<f32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<1x4xf32>
  %3 = stablehlo.divide %xs, %2 : tensor<1x4xf32>
  %4 = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %7 = stablehlo.reshape %alpha : (tensor<1xf32>) -> tensor<f32>
  %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
  %9 = stablehlo.multiply %5, %8 : tensor<1x3xf32>
  %10 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %11 = stablehlo.multiply %10, %bias : tensor<3xf32>
  %12 = stablehlo.broadcast_in_dim %11, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %13 = stablehlo.add %9, %12 : tensor<1x3xf32>
  return %13 : tensor<1x3xf32>
}

// -----

// The bias term t . (W * s) a fold builds for a layer with one output feature, its
// weights an argument scaled in the graph, t the shift passed on from the layer before:
// every dimension of t is contracted, so W is weights, not an input. A one-element s is
// per feature along any dimension of W; folded as an input-side scale it moved onto t,
// removing no op, on every fold of the folded module.
// CHECK-LABEL: func.func @bias_term_of_one_output_feature_is_not_folded_again
// CHECK:         %[[KS:.+]] = stablehlo.multiply %arg0, %{{.+}} : tensor<1x3x1x1xf32>
// CHECK:         %[[B:.+]] = stablehlo.dot_general %cst, %[[KS]]
// CHECK-NEXT:    return %[[B]]
func.func @bias_term_of_one_output_feature_is_not_folded_again(%k: tensor<1x3x1x1xf32>, %s: tensor<1xf32>) -> tensor<1xf32> {
  %t = stablehlo.constant dense<[[[0.5]], [[-0.25]], [[1.0]]]> : tensor<3x1x1xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<1xf32>) -> tensor<1x3x1x1xf32>
  %ks = stablehlo.multiply %k, %sb : tensor<1x3x1x1xf32>
  %b = stablehlo.dot_general %t, %ks, contracting_dims = [0, 1, 2] x [1, 2, 3] : (tensor<3x1x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1xf32>
  return %b : tensor<1xf32>
}
