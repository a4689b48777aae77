// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm=max-iterations=2 | FileCheck %s

// The greedy driver sweeps the function until a sweep changes nothing; every sweep is a
// look at every op. A fold leaves nothing it built unread, so two sweeps do: the folds,
// then the one that confirms. A chain folded whole in the graph realizes the shift of
// each of its steps, the subtract's -mean among them, which the bias offset - mean * s
// reads past: left for the driver, the negation was erased in a second sweep, and a
// third was needed ("failed to converge" with max-iterations=2).
// CHECK-LABEL: func.func @chain_of_arguments_folds_in_two_sweeps
// CHECK-NOT:     stablehlo.negate
// CHECK:         %[[MS:.+]] = stablehlo.multiply %arg2, %arg3 : tensor<8xf32>
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.subtract %arg4, %[[MS]] : tensor<8xf32>
// CHECK-NOT:     stablehlo.negate
// CHECK:         return
func.func @chain_of_arguments_folds_in_two_sweeps(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x8xf32>, %mean: tensor<8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %0 = stablehlo.subtract %c, %m : tensor<1x8x8x8xf32>
  %1 = stablehlo.multiply %0, %sb : tensor<1x8x8x8xf32>
  %2 = stablehlo.add %1, %bb : tensor<1x8x8x8xf32>
  return %2 : tensor<1x8x8x8xf32>
}
