// input_bn_valid_depthwise_stride2_f64: batch_norm_inference before a VALID stride-2 depthwise
// convolution, NHWC x HWIO, in f64.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(21)).
// EXPECT-BATCH-NORMS-LEFT: 0
func.func @main(%x: tensor<1x9x9x3xf64>) -> (tensor<1x4x4x3xf64>) {
  %bn_scale = stablehlo.constant dense<[1.2811175888174708, 1.1058470295709681, 1.2098011904084252]> : tensor<3xf64>
  %bn_offset = stablehlo.constant dense<[-0.16436085083111643, 0.052285766349561724, 0.1923242808897811]> : tensor<3xf64>
  %bn_mean = stablehlo.constant dense<[-0.04595689658414637, -0.23255814999159463, 0.27495986721950544]> : tensor<3xf64>
  %bn_variance = stablehlo.constant dense<[1.5139732773825603, 0.7957891039174183, 1.5080888847901806]> : tensor<3xf64>
  %bn = "stablehlo.batch_norm_inference"(%x, %bn_scale, %bn_offset, %bn_mean, %bn_variance) {epsilon = 1.0e-03 : f32, feature_index = 3 : i64} : (tensor<1x9x9x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<1x9x9x3xf64>
  %conv_k = stablehlo.constant dense<"0xF8C3A6EFF413E2BF9F389D1DC6C1E0BFCD471525EB92E03FBCCCD9EB67ABD43FBB450534A149E73FDD8BC12135CFD93F987432E48ADAD5BF0831FD214D6BDB3F8C29ACB7BDCFCA3F0FB43F12EC54B23F159846FC997DD1BFB0CD234A105E4E3FBB09CDA57816A9BF119293876E0AD33F8DC648BF5A3FA53FED491BB069E7E03FC5D97090B985D0BF2B229F3BB219C43F0B11D662B048C53F95626EDD7070D2BFD5A774A24933D9BF30F3D0D97E9FD53FEBF6086DD413C63F19020ABAF5BBABBF5B94EF2B8BD3C03FA43D32C68ED0CCBFA3A29EC1CB56B43F"> : tensor<3x3x1x3xf64>
  %conv = stablehlo.convolution(%bn, %conv_k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x9x9x3xf64>, tensor<3x3x1x3xf64>) -> tensor<1x4x4x3xf64>
  return %conv : tensor<1x4x4x3xf64>
}
