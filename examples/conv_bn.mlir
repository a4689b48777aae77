// A small two-layer block as a StableHLO module: conv (NHWC x HWIO) + bias + batch norm
// + relu, then a 1x1 conv (NCHW x OIHW after a transpose) + batch norm. Used by the README's
// quick start: stablehlo-bnfold-opt examples/conv_bn.mlir --stablehlo-fold-batch-norm
func.func @main(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x8x8xf32> {
  %k1 = stablehlo.constant dense<[[[[3.771907e-02, -3.963146e-02, 1.921268e-01, 3.147003e-02],   [-1.607008e-01, 1.084785e-01, 3.912000e-01, 2.841243e-01],   [-2.111206e-01, -3.796265e-01, -1.869823e-01, 1.239779e-02]],  [[-6.975093e-01, -6.563750e-02, -3.737733e-01, -2.196802e-01],   [-1.632777e-01, -9.489005e-02, 1.234892e-01, 3.127540e-01],   [-3.856040e-02, 4.099391e-01, -1.995584e-01, 1.054530e-01]],  [[2.710411e-01, 2.820369e-02, -2.230498e-01, -2.765176e-01],   [-1.373177e-01, 6.605854e-02, -3.028855e-01, -6.275267e-02],   [-4.776751e-02, 1.622537e-01, 6.439774e-02, 1.066118e-01]]], [[[-1.961486e-01, -3.888409e-02, 2.351927e-01, 4.480293e-01],   [-3.777197e-01, 4.541771e-01, 4.037626e-01, 2.343934e-01],   [7.933669e-02, -9.417685e-02, 4.374062e-01, 5.880775e-01]],  [[5.404905e-01, 3.945312e-01, 1.072141e-01, -3.624956e-01],   [-1.336240e-03, 1.969425e-01, -3.865084e-01, 1.185366e-01],   [1.289591e-01, 2.088128e-01, -3.552354e-01, -1.985108e-01]],  [[-1.309306e-01, -3.509406e-01, 5.218104e-01, -1.487732e-01],   [9.869089e-02, -7.757176e-02, 4.750419e-01, 3.961083e-01],   [1.900058e-01, -6.610529e-01, 1.560869e-02, 2.051059e-01]]], [[[3.011885e-01, -1.853721e-01, 5.466034e-01, -3.961293e-01],   [-1.984584e-01, 2.805150e-01, 1.471638e-02, 6.007178e-01],   [5.655576e-02, -1.899582e-01, -1.132691e-01, -3.273439e-01]],  [[-3.833041e-01, 1.891235e-01, 1.743497e-01, 3.883677e-01],   [-2.263817e-01, 5.067322e-01, -8.621632e-02, 4.723225e-01],   [-1.298358e-01, -2.206450e-01, 7.493562e-02, 3.094360e-01]],  [[4.830288e-02, -1.756587e-01, -4.023659e-01, -4.204561e-01],   [1.508049e-01, 2.969139e-01, -4.928838e-02, -3.223095e-01],   [2.619127e-01, -3.841182e-01, -2.139204e-01, 1.863054e-01]]]]> : tensor<3x3x3x4xf32>
  %b1 = stablehlo.constant dense<[-2.250141e-01, 3.863696e-02, -5.816409e-02, 1.092797e-02]> : tensor<4xf32>
  %scale1 = stablehlo.constant dense<[1.054090e+00, 1.309711e+00, 1.060476e+00, 7.884212e-01]> : tensor<4xf32>
  %offset1 = stablehlo.constant dense<[3.586720e-02, 1.322457e-01, -1.391467e-03, 1.041840e-01]> : tensor<4xf32>
  %mean1 = stablehlo.constant dense<[1.402265e-01, 1.150166e-01, -2.365304e-01, 1.228684e-01]> : tensor<4xf32>
  %var1 = stablehlo.constant dense<[7.182103e-01, 1.109766e+00, 1.864938e+00, 5.646003e-01]> : tensor<4xf32>
  %scale2 = stablehlo.constant dense<[1.322706e+00, 9.153841e-01, 1.329804e+00, 5.099546e-01]> : tensor<4xf32>
  %offset2 = stablehlo.constant dense<[-8.037318e-02, 1.080163e-01, -2.887665e-02, 8.347536e-03]> : tensor<4xf32>
  %mean2 = stablehlo.constant dense<[-8.496059e-02, -5.106225e-02, -1.153306e-03, -1.485375e-01]> : tensor<4xf32>
  %var2 = stablehlo.constant dense<[5.891962e-01, 1.071156e+00, 1.144661e+00, 1.233274e+00]> : tensor<4xf32>
  %conv1 = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %bias1 = stablehlo.broadcast_in_dim %b1, dims = [3] : (tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %y1 = stablehlo.add %conv1, %bias1 : tensor<1x8x8x4xf32>
  %bn1 = "stablehlo.batch_norm_inference"(%y1, %scale1, %offset1, %mean1, %var1) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x8x8x4xf32>
  %relu = stablehlo.maximum %bn1, %zero : tensor<1x8x8x4xf32>
  %nchw = stablehlo.transpose %relu, dims = [0, 3, 1, 2] : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %k2 = stablehlo.constant dense<[[[[-2.271046e-02]],  [[6.063432e-02]],  [[2.082516e-01]],  [[-2.275109e-01]]], [[[4.262946e-01]],  [[2.178281e-01]],  [[2.531198e-01]],  [[3.494592e-01]]], [[[2.362765e-01]],  [[2.532236e-01]],  [[2.267808e-02]],  [[-4.280322e-01]]], [[[-4.051353e-02]],  [[-2.308544e-01]],  [[-4.268225e-01]],  [[7.753585e-02]]]]> : tensor<4x4x1x1xf32>
  %conv2 = stablehlo.convolution(%nchw, %k2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %bn2 = "stablehlo.batch_norm_inference"(%conv2, %scale2, %offset2, %mean2, %var2) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %bn2 : tensor<1x4x8x8xf32>
}
