// handwritten_two_blocks_f32: two conv + batch-norm pairs: NHWC conv + bias + bn + relu,
// transpose, NCHW 1x1 conv + bn.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(10)).
// EXPECT-BATCH-NORMS-LEFT: 0
func.func @main(%x: tensor<1x8x8x3xf32>) -> (tensor<1x4x8x8xf32>) {
  %conv1_k = stablehlo.constant dense<"0x066F59BE3BE10EBECA111ABE5773523D3BF343BD3168C73C3123263E9612293EAF49BB3D39AAB1BD0FC614BE139320BEB48687BDB60122BCDA9A3FBE7C925FBEDEFA703D6B74B6BE24910BBD80D5A73DD52E42BE22545BBE4FE515BE3669FF3D8FAFCCBC4038B8BE9EDBA6BDBACE473E15DC413EC652F83DECA73BBD46CAB5BE8AAC053D0FB80ABD6728723C57F8973E12CB103DC3D3593DE57DEE3D3B3F4ABD89EC02BE345011BE2E25173E00DDC63DE2F2C0BD0F29633ED34D113DC40E84BEBFCCEE3D04E8DBBCC9EE82BE0C2CCB3DBCE787BD15A39ABD1280E83D5509D8BE55B77BBEC751A7BDD968443D6C1203BE066C44BE5D664FBE2DEBB8BC8306053E0AE08EBE2FFDCCBE146A6ABD5A9196BDBC2133BE661CF13D5F911E3E195CDEBDE6C287BD88ABE03D3E2BA9BD10428ABEB20C55BC333232BE8534803DAE1BC7BDA51A15BD6DB8CC3DA0C8C4BCC6E3F9BD625746BEAD95A93E00145A3E5E2994BEFC664FBE642EE63D96E5E7BD463F3F3B976A203EE80ACB3C5BB7CBBCD1A9BABDE93F88BC2968983D2CEFAA3E05E1513E1F381DBD5BA0343E54AEB83C9EF791BE3D24A8BC9B05443E920CEBBD6074383E"> : tensor<3x3x3x4xf32>
  %conv1 = stablehlo.convolution(%x, %conv1_k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %biased_b = stablehlo.constant dense<[0.18225017189979553, -0.14789775013923645, -0.19078350067138672, -0.15978582203388214]> : tensor<4xf32>
  %biased_bcast = stablehlo.broadcast_in_dim %biased_b, dims = [3] : (tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %biased = stablehlo.add %conv1, %biased_bcast : tensor<1x8x8x4xf32>
  %bn1_scale = stablehlo.constant dense<[1.043587565422058, 1.4628721475601196, 0.7842406630516052, 0.9563952088356018]> : tensor<4xf32>
  %bn1_offset = stablehlo.constant dense<[0.04518161341547966, 0.19032669067382812, 0.18137067556381226, -0.04020337387919426]> : tensor<4xf32>
  %bn1_mean = stablehlo.constant dense<[-0.07627717405557632, -0.04261307418346405, -0.23348812758922577, 0.19809412956237793]> : tensor<4xf32>
  %bn1_variance = stablehlo.constant dense<[1.832686185836792, 1.0633726119995117, 1.5879310369491577, 1.6125195026397705]> : tensor<4xf32>
  %bn1 = "stablehlo.batch_norm_inference"(%biased, %bn1_scale, %bn1_offset, %bn1_mean, %bn1_variance) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %relu_zero = stablehlo.constant dense<0.0> : tensor<1x8x8x4xf32>
  %relu = stablehlo.maximum %bn1, %relu_zero : tensor<1x8x8x4xf32>
  %nchw = stablehlo.transpose %relu, dims = [0, 3, 1, 2] : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %conv2_k = stablehlo.constant dense<"0x72B625BF558F15BF3C5157BFEE8067BFB68224BF4E58F9BE8CF96ABE2D701BBF0B4299BDFF32BB3EF9E300BEC75F423E4B14F5BE2DD6F23DFBEA4E3E2EDCB7BE"> : tensor<4x4x1x1xf32>
  %conv2 = stablehlo.convolution(%nchw, %conv2_k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %bn2_scale = stablehlo.constant dense<[0.9737529754638672, 0.7725505828857422, 0.5145485997200012, 0.6941961646080017]> : tensor<4xf32>
  %bn2_offset = stablehlo.constant dense<[0.11146484315395355, -0.12639547884464264, -0.11751584708690643, 0.16275542974472046]> : tensor<4xf32>
  %bn2_mean = stablehlo.constant dense<[-0.2309306263923645, -0.07667569071054459, -0.22954736649990082, 0.1092362180352211]> : tensor<4xf32>
  %bn2_variance = stablehlo.constant dense<[0.5300997495651245, 1.7668297290802002, 0.7038003206253052, 1.7834891080856323]> : tensor<4xf32>
  %bn2 = "stablehlo.batch_norm_inference"(%conv2, %bn2_scale, %bn2_offset, %bn2_mean, %bn2_variance) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %bn2 : tensor<1x4x8x8xf32>
}
