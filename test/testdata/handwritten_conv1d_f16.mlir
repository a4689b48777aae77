// handwritten_conv1d_f16: 1-D convolution, NCW x OIW, then batch_norm_inference over dimension
// 1, in f16.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(7)).
// EXPECT-BATCH-NORMS-LEFT: 0
func.func @main(%x: tensor<2x4x16xf16>) -> (tensor<2x8x16xf16>) {
  %conv_k = stablehlo.constant dense<"0xD10D852D11AD1DB433B095B4722431368CB0BBB18630982ECA274CB453A06C3235B63AB064B8F5B541B858ACDBB5032DCB29E8AAD0B9FAB02BA3302811B76AB085B479B3E63476B3CFA0163464B121A81528B724A9B5A025473625B7F0336928EDB19F380B338AB582255431FAAA4F32EAA42A32A5363EB2822B48B0B4287CB55AB140AB27344A351DB657B3FA319AB847B031A7CE355E320CAECFAE9FAC0937E8AF9CAD842E76A84AAB25B5D09A19B063350832239F2D3247AEDC3462966431"> : tensor<8x4x3xf16>
  %conv = stablehlo.convolution(%x, %conv_k) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x16xf16>, tensor<8x4x3xf16>) -> tensor<2x8x16xf16>
  %bn_scale = stablehlo.constant dense<[0.8720703125, 0.5302734375, 0.623046875, 1.466796875, 1.158203125, 0.92822265625, 1.0234375, 1.373046875]> : tensor<8xf16>
  %bn_offset = stablehlo.constant dense<[-0.06231689453125, 0.036102294921875, 0.073486328125, -0.057830810546875, 0.007640838623046875, 0.1060791015625, 0.1636962890625, -0.1395263671875]> : tensor<8xf16>
  %bn_mean = stablehlo.constant dense<[0.260009765625, -0.296875, 0.1517333984375, 0.186279296875, -0.2178955078125, -0.04864501953125, 0.189208984375, -0.29150390625]> : tensor<8xf16>
  %bn_variance = stablehlo.constant dense<[1.4423828125, 1.689453125, 1.26953125, 1.5888671875, 0.83984375, 0.7978515625, 1.044921875, 0.76904296875]> : tensor<8xf16>
  %bn = "stablehlo.batch_norm_inference"(%conv, %bn_scale, %bn_offset, %bn_mean, %bn_variance) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<2x8x16xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x8x16xf16>
  return %bn : tensor<2x8x16xf16>
}
