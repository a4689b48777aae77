// input_bn_valid_depthwise_multiplier_f32: batch_norm_inference before a VALID depthwise
// convolution with channel multiplier 2 (4 groups of 1 input, 2 outputs each), NHWC x HWIO:
// the result (1x6x6x8) is larger than the input (1x8x8x4), so the scale folds group by group
// and x + t/s stays.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(20)).
// EXPECT-BATCH-NORMS-LEFT: 0
// EXPECT-SKIP: folding would move an add onto a larger tensor
func.func @main(%x: tensor<1x8x8x4xf32>) -> (tensor<1x6x6x8xf32>) {
  %bn_scale = stablehlo.constant dense<[0.7800759673118591, 0.9611467123031616, 0.6217197179794312, 1.0226083993911743]> : tensor<4xf32>
  %bn_offset = stablehlo.constant dense<[-0.0363326370716095, -0.17134417593479156, -0.16041332483291626, 0.19451534748077393]> : tensor<4xf32>
  %bn_mean = stablehlo.constant dense<[0.11644072830677032, -0.030786924064159393, 0.08410608768463135, -0.1377066820859909]> : tensor<4xf32>
  %bn_variance = stablehlo.constant dense<[0.9528109431266785, 0.6100131273269653, 0.5788783431053162, 1.7112126350402832]> : tensor<4xf32>
  %bn = "stablehlo.batch_norm_inference"(%x, %bn_scale, %bn_offset, %bn_mean, %bn_variance) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %conv_k = stablehlo.constant dense<"0x1D834C3E356AC93B51E91BBEEE58A3BD3C99F3BE5609D23E009ACFBE0676673CEF5A363F9AB359BF011FF0BE650677BEC0211F3D0C5612BF129EA0BDC6401BBCD3D1683DD0CE4BBF68A65C3E1E44083F9E06153EDFD276BEA06251BE7CD161BFBB79223E0343003F08EC5D3E560F7EBF6B6611BEED6E0CBD6A0B25BE4756B03E7BD814BF75FE74BE294A4B3E511EA93EB0EF663DD719B43EA18E313E20C8B4BEBAC2DC3EED992CBE66240BBF2C84153E60D11A3FE5B2A33E1F36AA3E8324823DDA5852BFCF1D683EF613573D496061BFC27F5EBE022296BE5519B53E3473283D0C96CB3DA1B1A53DA4A7E2BE5B9427BF651A9C3CE247C8BDFEA79BBBBC2663BD42662ABEF9803D3E67F6823D6D9C54BE7C1922BF04045DBF84E1F5BE3C3B51BD"> : tensor<3x3x1x8xf32>
  %conv = stablehlo.convolution(%bn, %conv_k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x1x8xf32>) -> tensor<1x6x6x8xf32>
  return %conv : tensor<1x6x6x8xf32>
}
