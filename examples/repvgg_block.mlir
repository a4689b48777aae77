// A RepVGG block as torch_xla exports one (NCHW x OIHW): a 3x3 convolution and its
// batch norm, a 1x1 convolution and its batch norm, and the identity branch's batch norm,
// summed, then relu. The pass folds each branch's norm and merges the three branches into
// one 3x3 convolution: stablehlo-bnfold-opt examples/repvgg_block.mlir --stablehlo-fold-batch-norm
func.func @main(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %k3 = stablehlo.constant dense<[[[[0.816368, -1.022266, 0.16724], [-0.227108, -0.18106, -0.086239], [-0.807994, -0.092773, -0.346085]], [[1.3292, 0.090315, -0.141052], [-0.112515, -0.267219, -0.42206], [-0.15632, 0.192778, -0.095421]]], [[[0.383103, -0.079921, 0.009704], [0.618328, 0.218042, -0.202092], [-0.073136, 0.21621, 0.774035]], [[-0.107848, -0.097423, 0.400925], [-0.354584, -0.116688, 0.353016], [0.23214, 0.036607, 0.268042]]]]> : tensor<2x2x3x3xf32>
  %k1 = stablehlo.constant dense<[[[[-1.696897]], [[0.612784]]], [[[-0.575787]], [[-1.001172]]]]> : tensor<2x2x1x1xf32>
  %scale3 = stablehlo.constant dense<[1.157652, 1.182799]> : tensor<2xf32>
  %offset3 = stablehlo.constant dense<[-0.088953, -0.215281]> : tensor<2xf32>
  %mean3 = stablehlo.constant dense<[0.005225, -0.010549]> : tensor<2xf32>
  %var3 = stablehlo.constant dense<[0.60232, 1.349768]> : tensor<2xf32>
  %scale1 = stablehlo.constant dense<[0.893927, 0.979684]> : tensor<2xf32>
  %offset1 = stablehlo.constant dense<[-0.041105, -0.18518]> : tensor<2xf32>
  %mean1 = stablehlo.constant dense<[0.116812, 0.116508]> : tensor<2xf32>
  %var1 = stablehlo.constant dense<[0.775374, 1.06181]> : tensor<2xf32>
  %scalei = stablehlo.constant dense<[0.899656, 1.112909]> : tensor<2xf32>
  %offseti = stablehlo.constant dense<[0.138025, 0.098274]> : tensor<2xf32>
  %meani = stablehlo.constant dense<[-0.327771, 0.012271]> : tensor<2xf32>
  %vari = stablehlo.constant dense<[1.066978, 1.42108]> : tensor<2xf32>
  %c3 = stablehlo.convolution(%x, %k3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  %n3 = "stablehlo.batch_norm_inference"(%c3, %scale3, %offset3, %mean3, %var3) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %c1 = stablehlo.convolution(%x, %k1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  %n1 = "stablehlo.batch_norm_inference"(%c1, %scale1, %offset1, %mean1, %var1) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %ni = "stablehlo.batch_norm_inference"(%x, %scalei, %offseti, %meani, %vari) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %s = stablehlo.add %n3, %n1 : tensor<1x2x8x8xf32>
  %y = stablehlo.add %s, %ni : tensor<1x2x8x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x2x8x8xf32>
  %relu = stablehlo.maximum %y, %zero : tensor<1x2x8x8xf32>
  return %relu : tensor<1x2x8x8xf32>
}
