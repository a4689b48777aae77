// input_bn_two_branches_f32: batch_norm_inference read by two 1x1 convolution branches, each
// with its own bias add: folded into both kernels and both biases.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(18)).
// EXPECT-BATCH-NORMS-LEFT: 0
func.func @main(%x: tensor<1x6x6x8xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x6xf32>) {
  %bn_scale = stablehlo.constant dense<[0.8993057608604431, 1.2174147367477417, 0.7808233499526978, 0.582724928855896, 1.4697712659835815, 1.0639266967773438, 1.1443209648132324, 1.0768715143203735]> : tensor<8xf32>
  %bn_offset = stablehlo.constant dense<[-0.009855612181127071, -0.15103919804096222, -0.07456155121326447, 0.09448343515396118, 0.1629556119441986, 0.1554407775402069, 0.17932835221290588, -0.18983842432498932]> : tensor<8xf32>
  %bn_mean = stablehlo.constant dense<[0.14282314479351044, 0.10356004536151886, 0.07511258125305176, 0.0825745090842247, -0.22423747181892395, 0.07569966465234756, 0.17225508391857147, -0.2955593764781952]> : tensor<8xf32>
  %bn_variance = stablehlo.constant dense<[1.8815656900405884, 0.6959467530250549, 1.0635590553283691, 1.3260477781295776, 1.4123831987380981, 1.3241429328918457, 1.0815798044204712, 1.8204742670059204]> : tensor<8xf32>
  %bn = "stablehlo.batch_norm_inference"(%x, %bn_scale, %bn_offset, %bn_mean, %bn_variance) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x6x6x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
  %conv_a_k = stablehlo.constant dense<"0x61388ABDF4C4A23E88AD893E5E2B0E3BF6C21EBEAA05283F3A25433EB885CFBEFF07CBBA11AE22BD4CAD823EA712A4BD20D585BE2B3DF23E2A5834BF75FCFFBED5433DBEBC353ABE615638BD622085BB0A9FB43E628F09BFC305873F2A585D3E3DF18BBE23E34EBE1ED42EBE03F949BF1B18113EA525C9BEA04B44BE0C64C6BE"> : tensor<1x1x8x4xf32>
  %conv_a = stablehlo.convolution(%bn, %conv_a_k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x6x6x4xf32>
  %a_b = stablehlo.constant dense<[0.019407497718930244, 0.15157563984394073, 0.14039529860019684, 0.07093478739261627]> : tensor<4xf32>
  %a_bcast = stablehlo.broadcast_in_dim %a_b, dims = [3] : (tensor<4xf32>) -> tensor<1x6x6x4xf32>
  %a = stablehlo.add %conv_a, %a_bcast : tensor<1x6x6x4xf32>
  %conv_c_k = stablehlo.constant dense<"0xD2E2E6BEB05E34BE5B6914BCD6EE603ED977983D6C5F353CB4C22F3E69E9023EF280B1BECC564D3E9E1971BE297BD3BE8C4628BDC81B3FBE37079C3D323EBF3D6EBF65BEE4F0CC3DD34309BDDC7D16BF6C97083FD50F7ABC65058BBD7223933E4DAD02BFB04784BEEEFFA03E6C5F31BFFF70A3BE4178113F0A18473EE274BABE3C89E33AFFC97B3E19A797BEC5151ABCC790DC3D598BE1B9E69D063F13CFD43CFEF68BBD476E873D1E0317BE2EF898BE5CCDC3BD6B7475BE913E243FA08E3F3F"> : tensor<1x1x8x6xf32>
  %conv_c = stablehlo.convolution(%bn, %conv_c_k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x8xf32>, tensor<1x1x8x6xf32>) -> tensor<1x6x6x6xf32>
  %c_b = stablehlo.constant dense<[-0.2758471965789795, 0.2886422872543335, 0.014434133656322956, 0.21046531200408936, 0.1745956987142563, 0.10257435590028763]> : tensor<6xf32>
  %c_bcast = stablehlo.broadcast_in_dim %c_b, dims = [3] : (tensor<6xf32>) -> tensor<1x6x6x6xf32>
  %c = stablehlo.add %conv_c, %c_bcast : tensor<1x6x6x6xf32>
  return %a, %c : tensor<1x6x6x4xf32>, tensor<1x6x6x6xf32>
}
