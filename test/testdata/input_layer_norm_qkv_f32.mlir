// input_layer_norm_qkv_f32: LayerNorm (per-token mean and variance, then x * gamma + beta)
// before separate Q, K and V projections with biases: gamma and beta fold into each
// projection.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(19)).
// EXPECT-BATCH-NORMS-LEFT: 0
// EXPECT-FOLDS: 1
func.func @main(%x: tensor<6x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) {
  %mu_zero = stablehlo.constant dense<0.0> : tensor<f32>
  %mu_sum = stablehlo.reduce(%x init: %mu_zero) applies stablehlo.add across dimensions = [1] : (tensor<6x8xf32>, tensor<f32>) -> tensor<6xf32>
  %mu_n = stablehlo.constant dense<8.0> : tensor<6xf32>
  %mu_mean = stablehlo.divide %mu_sum, %mu_n : tensor<6xf32>
  %mu = stablehlo.broadcast_in_dim %mu_mean, dims = [0] : (tensor<6xf32>) -> tensor<6x8xf32>
  %centred = stablehlo.subtract %x, %mu : tensor<6x8xf32>
  %var_sq = stablehlo.multiply %centred, %centred : tensor<6x8xf32>
  %var_zero = stablehlo.constant dense<0.0> : tensor<f32>
  %var_sum = stablehlo.reduce(%var_sq init: %var_zero) applies stablehlo.add across dimensions = [1] : (tensor<6x8xf32>, tensor<f32>) -> tensor<6xf32>
  %var_n = stablehlo.constant dense<8.0> : tensor<6xf32>
  %var_mean = stablehlo.divide %var_sum, %var_n : tensor<6xf32>
  %var = stablehlo.broadcast_in_dim %var_mean, dims = [0] : (tensor<6xf32>) -> tensor<6x8xf32>
  %eps = stablehlo.constant dense<1.0e-06> : tensor<6x8xf32>
  %var_eps = stablehlo.add %var, %eps : tensor<6x8xf32>
  %inv = stablehlo.rsqrt %var_eps : tensor<6x8xf32>
  %normalized = stablehlo.multiply %centred, %inv : tensor<6x8xf32>
  %gamma_v = stablehlo.constant dense<[0.9203788042068481, 1.425869345664978, 0.7738699913024902, 0.5600485801696777, 0.8105434775352478, 1.218185305595398, 1.2809655666351318, 1.0386998653411865]> : tensor<8xf32>
  %gamma_b = stablehlo.broadcast_in_dim %gamma_v, dims = [1] : (tensor<8xf32>) -> tensor<6x8xf32>
  %gamma = stablehlo.multiply %normalized, %gamma_b : tensor<6x8xf32>
  %beta_v = stablehlo.constant dense<[-0.11300075054168701, 0.24980983138084412, 0.25684529542922974, -0.03808741271495819, -0.0541844367980957, 0.0679471343755722, 0.12816783785820007, 0.07207071036100388]> : tensor<8xf32>
  %beta_b = stablehlo.broadcast_in_dim %beta_v, dims = [1] : (tensor<8xf32>) -> tensor<6x8xf32>
  %beta = stablehlo.add %gamma, %beta_b : tensor<6x8xf32>
  %q_w = stablehlo.constant dense<"0x07FAD5BE05D8B2BE2069E53DB5F1E13D339383BEEF18DC3EEC7E0C3D91299CBE6D9E07BED37581BDF2960CBF80A596BE85D023BFB08ED4BD99CC5D3E8BC3E8BE2237E93DE915D6BE90F46CBD3FDF3ABEB96DDBBE7ECB46BE69D5DDBE4386D43D15BD853C7237D93E467004BF47D0C53E0A1BE4BCB2C1123EEC7688BDFB030C3F62E5FA3EA16BC13EE4DDBB3D4A9853BF8D69493EEDC23DBC390242BDD1531D3E0D0AD83E3C86C13D3CDD28BE40C98CBEDFFA053EC2DCC63E9263463E55C1253E0B4723BEBDB8DFBEB640AB3EFD865B3EC16A25BF19D381BE7044B53EB64AC13EB70568BED3F54B3F71BDFD3E09EEAC3EF5E538BD63D7FBBEBBB7923EE0F8203F"> : tensor<8x8xf32>
  %q_mm = stablehlo.dot_general %beta, %q_w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %q_b = stablehlo.constant dense<[0.14332468807697296, 0.041745204478502274, -0.03206441551446915, -0.11555730551481247, -0.0012500084703788161, 0.01039152592420578, -0.01042631734162569, -0.29370760917663574]> : tensor<8xf32>
  %q_bcast = stablehlo.broadcast_in_dim %q_b, dims = [1] : (tensor<8xf32>) -> tensor<6x8xf32>
  %q = stablehlo.add %q_mm, %q_bcast : tensor<6x8xf32>
  %k_w = stablehlo.constant dense<"0x2D31B73EF0F9BB3E5044763FDF7A723E2C00B2BE65D65E3E72E4753EE4EA52BE0A631EBF354B07BE04647BBEAB960FBEDE0A88BDB279883EACA2573EDB0F013F86203EBE7BD6A33EECDF1DBFAB85143CE1730FBFD31BA0BE3CEEBC3E0D36ACBE9B51023F2B621B3F336D423E8DC8D8BD3DD5B1BE988297BE4135CCBCC782B3BECF1004BD1E008DBED0835E3E93E625BF83C22E3E8AEDAC3E41A7B5BE281C053F29AF0A3FFCB1793EAA0F07BFD0B6C33DB3B911BFC5F824BEC009E4BEB2CC623D521287BE073AF43D66ACA63E20437FBE29AC433E44AD14BE74AAA0BDA89ADCBD49DB87BED1434EBEF49FA43E997EBC3EAB5259BC0CB8963E5BF3B23E0D376B3E"> : tensor<8x8xf32>
  %k_mm = stablehlo.dot_general %beta, %k_w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %k_b = stablehlo.constant dense<[-0.003143523121252656, 0.005016113631427288, 0.10851174592971802, 0.10779830813407898, 0.24002009630203247, -0.06401024758815765, -0.21407316625118256, 0.09737250953912735]> : tensor<8xf32>
  %k_bcast = stablehlo.broadcast_in_dim %k_b, dims = [1] : (tensor<8xf32>) -> tensor<6x8xf32>
  %k = stablehlo.add %k_mm, %k_bcast : tensor<6x8xf32>
  %v_w = stablehlo.constant dense<"0xE59D983EC4CD09BDD53C4DBBEE872D3ED4AEDC3E2DC65FBD798E213EE6C3C9BD1D1CDABE632CC8BA6C86433E0089003EAB2704BDDCF9BBBD2D6CDEBE2BCE3EBD31060F3F1C9DA7BD09BA68BC8FB6FA3EF654263DA917B53DC387D0BECE70933E2003F93EB5D0AFBCB273BD3E3FB3AF3ECC4777BFE1D8F23E49E3FDBE46231B3EE958233EF7BBABBD4EB202BE4E620ABE68172BBEE37B24BE9B6083BEC0430DBDE5AF0F3DCF9C94BDEA04DB3DCCB795BECFBB813DB963913E08580D3FB4D0E5BE9DA6873E8D83BD3D3E5531BF741B64BE08B0B4BE00CA393E4B03053F88ADE23E4942AE3D4688F83EA2800B3E75389F3D4C2A09BFC90183BECBE105BE19738BBE"> : tensor<8x8xf32>
  %v_mm = stablehlo.dot_general %beta, %v_w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %v_b = stablehlo.constant dense<[-0.11743443459272385, 0.2079167366027832, 0.11565367132425308, -0.2833970785140991, -0.20843005180358887, 0.18156598508358002, 0.02696356363594532, 0.2277911752462387]> : tensor<8xf32>
  %v_bcast = stablehlo.broadcast_in_dim %v_b, dims = [1] : (tensor<8xf32>) -> tensor<6x8xf32>
  %v = stablehlo.add %v_mm, %v_bcast : tensor<6x8xf32>
  return %q, %k, %v : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
}
