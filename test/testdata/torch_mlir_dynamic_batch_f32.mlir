// torch_mlir_dynamic_batch_f32: torch-mlir's form of a decomposed batch norm with a symbolic
// batch (hand-written after TorchToStablehlo's lowering of aten.sub/mul/add.Tensor to CHLO
// broadcasting ops and the torch-backend-to-stablehlo-backend pipeline's chlo-legalize-to-
// stablehlo, canonicalize, cse): two NCHW conv + batch norm blocks, each step reading the
// activation's shape with shape.shape_of and broadcasting it onto its own shape; the runner
// sets the batch to 2 before XLA runs it.
// Produced by: python3 test/testdata/generate.py (constants from numpy.random.default_rng(18)).
// EXPECT-BATCH-NORMS-LEFT: 0
// EXPECT-FOLDS: 8
func.func @main(%x: tensor<?x3x8x8xf32>) -> (tensor<?x6x8x8xf32>) {
  %k0 = stablehlo.constant dense<"0xCB66AABDF9B45EBE2BCB043ED8505ABEA870C63E1E1D363E5F998DBD9FDCE03D0BCC9E3E2E9F0B3F5EF235BE95E4513EA70FCC3DFE5C5CBD003D573E29BDC73DF517543ED546CFBD6063FBB94BAB9B3DA23B773BB404513B556E17BE5B3EC73CC5EA133D0F5141BCCF013ABB2E40093E49CA01BE5243093E68F9F1BCF118313CA27916BD6933313E7AE2153E41C69A3A74D6ACBD59EBB63E8B72D43DF5EB61BE4D085DBA7E1AB1BC56430E3EB29E32BDCAB211BEB1DB833E8755C4BE5A578BBEAD0BCEBD3CB8CABD61AEC8BC06EE10BBB1A2443EA7C195BE70FE123F21F8F03D955918BEF63AE1BD4A54BEBD49E1DBBE61F59D3D2EFB5ABE0AB3D5BD06FB57BED4AFEBBDA517963BBD657DBE6176953E5B5B7BBEA25CC4BDEE91A1BB40E0F43D7EFC253D2174C53B0758BF3DC7848E3DD63D41BE7A8BDF3DFE3C03BE413B66BEFB31B7BC780DD0BDABDC293DEE32503D211EFABD8A1C5F3D656F95BCA4D5A3BEB5B3943ECE1D08BCD35817BD1F2F203E57438EBE1D0210BE38462F3E5619C1BEB5EE31BE0E5E9E3EF9BED83DFBFC4ABEBCB5773A7D0E093E3D1925BE1DBFA7BB101F703DA48A75B95D8D923E4EAD673C"> : tensor<4x3x3x3xf32>
  %conv0 = stablehlo.convolution(%x, %k0) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  %mean0 = stablehlo.constant dense<[0.2354470193386078, -0.12352769076824188, 0.023449331521987915, -0.24642886221408844]> : tensor<4xf32>
  %var0 = stablehlo.constant dense<[1.4745731353759766, 1.1064239740371704, 0.8050655722618103, 1.7536935806274414]> : tensor<4xf32>
  %eps0 = stablehlo.constant dense<[9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06]> : tensor<4xf32>
  %weight0 = stablehlo.constant dense<[0.5402547121047974, 1.4810703992843628, 1.0240569114685059, 1.3507754802703857]> : tensor<4xf32>
  %bias0 = stablehlo.constant dense<[0.11639713495969772, 0.06838290393352509, 0.11669811606407166, -0.09130982309579849]> : tensor<4xf32>
  %ve0 = stablehlo.add %var0, %eps0 : tensor<4xf32>
  %invstd0 = stablehlo.rsqrt %ve0 : tensor<4xf32>
  %mean0_c = stablehlo.reshape %mean0 : (tensor<4xf32>) -> tensor<4x1x1xf32>
  %invstd0_c = stablehlo.reshape %invstd0 : (tensor<4xf32>) -> tensor<4x1x1xf32>
  %weight0_c = stablehlo.reshape %weight0 : (tensor<4xf32>) -> tensor<4x1x1xf32>
  %bias0_c = stablehlo.reshape %bias0 : (tensor<4xf32>) -> tensor<4x1x1xf32>
  %cshape0 = shape.const_shape [4, 1, 1] : tensor<3xindex>
  %s0 = shape.shape_of %conv0 : tensor<?x4x8x8xf32> -> tensor<4xindex>
  %s0b = shape.broadcast %s0, %cshape0 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s0l = stablehlo.dynamic_broadcast_in_dim %conv0, %s0b, dims = [0, 1, 2, 3] : (tensor<?x4x8x8xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %s0r = stablehlo.dynamic_broadcast_in_dim %mean0_c, %s0b, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %bn0 = stablehlo.subtract %s0l, %s0r : tensor<?x4x8x8xf32>
  %s1 = shape.shape_of %bn0 : tensor<?x4x8x8xf32> -> tensor<4xindex>
  %s1b = shape.broadcast %s1, %cshape0 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s1l = stablehlo.dynamic_broadcast_in_dim %bn0, %s1b, dims = [0, 1, 2, 3] : (tensor<?x4x8x8xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %s1r = stablehlo.dynamic_broadcast_in_dim %invstd0_c, %s1b, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %bn1 = stablehlo.multiply %s1l, %s1r : tensor<?x4x8x8xf32>
  %s2 = shape.shape_of %bn1 : tensor<?x4x8x8xf32> -> tensor<4xindex>
  %s2b = shape.broadcast %s2, %cshape0 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s2l = stablehlo.dynamic_broadcast_in_dim %bn1, %s2b, dims = [0, 1, 2, 3] : (tensor<?x4x8x8xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %s2r = stablehlo.dynamic_broadcast_in_dim %weight0_c, %s2b, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %bn2 = stablehlo.multiply %s2l, %s2r : tensor<?x4x8x8xf32>
  %s3 = shape.shape_of %bn2 : tensor<?x4x8x8xf32> -> tensor<4xindex>
  %s3b = shape.broadcast %s3, %cshape0 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s3l = stablehlo.dynamic_broadcast_in_dim %bn2, %s3b, dims = [0, 1, 2, 3] : (tensor<?x4x8x8xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %s3r = stablehlo.dynamic_broadcast_in_dim %bias0_c, %s3b, dims = [1, 2, 3] : (tensor<4x1x1xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %bn3 = stablehlo.add %s3l, %s3r : tensor<?x4x8x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %zeros = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x1x1x1xf32>
  %zs = shape.shape_of %bn3 : tensor<?x4x8x8xf32> -> tensor<4xindex>
  %zb = stablehlo.dynamic_broadcast_in_dim %zeros, %zs, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xf32>, tensor<4xindex>) -> tensor<?x4x8x8xf32>
  %relu = stablehlo.maximum %bn3, %zb : tensor<?x4x8x8xf32>
  %k1 = stablehlo.constant dense<"0x9C6103BE69C2FEBE861D5FBE9F0C0FBF927E8ABE7EDC3B3F5D1724BE9D180B3F3F9E233E1B3640BFBC934CBD5AF26CBE3BCB1DBF770D72BEA19E1B3F10FE1A3F1E0157BEF37AB8BE2C64C4BC769F2B3EDC14273F7F2396BEEF2BF2BEB4C5F4BC"> : tensor<6x4x1x1xf32>
  %conv1 = stablehlo.convolution(%relu, %k1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x4x8x8xf32>, tensor<6x4x1x1xf32>) -> tensor<?x6x8x8xf32>
  %mean1 = stablehlo.constant dense<[0.2970002591609955, -0.2927497923374176, -0.12684036791324615, -0.02554795891046524, -0.10490322858095169, 0.02072637900710106]> : tensor<6xf32>
  %var1 = stablehlo.constant dense<[0.5461020469665527, 1.919527530670166, 0.8968170285224915, 1.259945034980774, 1.5118882656097412, 1.812209129333496]> : tensor<6xf32>
  %eps1 = stablehlo.constant dense<[9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06, 9.999999747378752e-06]> : tensor<6xf32>
  %weight1 = stablehlo.constant dense<[1.4956680536270142, 0.7456186413764954, 0.8150781393051147, 0.7666043639183044, 1.0279158353805542, 1.3894861936569214]> : tensor<6xf32>
  %bias1 = stablehlo.constant dense<[0.19022917747497559, 0.1011415421962738, -0.13855063915252686, 0.1405031532049179, -0.15793688595294952, -0.017380179837346077]> : tensor<6xf32>
  %ve1 = stablehlo.add %var1, %eps1 : tensor<6xf32>
  %invstd1 = stablehlo.rsqrt %ve1 : tensor<6xf32>
  %mean1_c = stablehlo.reshape %mean1 : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %invstd1_c = stablehlo.reshape %invstd1 : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %weight1_c = stablehlo.reshape %weight1 : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %bias1_c = stablehlo.reshape %bias1 : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %cshape1 = shape.const_shape [6, 1, 1] : tensor<3xindex>
  %s4 = shape.shape_of %conv1 : tensor<?x6x8x8xf32> -> tensor<4xindex>
  %s4b = shape.broadcast %s4, %cshape1 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s4l = stablehlo.dynamic_broadcast_in_dim %conv1, %s4b, dims = [0, 1, 2, 3] : (tensor<?x6x8x8xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %s4r = stablehlo.dynamic_broadcast_in_dim %mean1_c, %s4b, dims = [1, 2, 3] : (tensor<6x1x1xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %bn4 = stablehlo.subtract %s4l, %s4r : tensor<?x6x8x8xf32>
  %s5 = shape.shape_of %bn4 : tensor<?x6x8x8xf32> -> tensor<4xindex>
  %s5b = shape.broadcast %s5, %cshape1 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s5l = stablehlo.dynamic_broadcast_in_dim %bn4, %s5b, dims = [0, 1, 2, 3] : (tensor<?x6x8x8xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %s5r = stablehlo.dynamic_broadcast_in_dim %invstd1_c, %s5b, dims = [1, 2, 3] : (tensor<6x1x1xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %bn5 = stablehlo.multiply %s5l, %s5r : tensor<?x6x8x8xf32>
  %s6 = shape.shape_of %bn5 : tensor<?x6x8x8xf32> -> tensor<4xindex>
  %s6b = shape.broadcast %s6, %cshape1 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s6l = stablehlo.dynamic_broadcast_in_dim %bn5, %s6b, dims = [0, 1, 2, 3] : (tensor<?x6x8x8xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %s6r = stablehlo.dynamic_broadcast_in_dim %weight1_c, %s6b, dims = [1, 2, 3] : (tensor<6x1x1xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %bn6 = stablehlo.multiply %s6l, %s6r : tensor<?x6x8x8xf32>
  %s7 = shape.shape_of %bn6 : tensor<?x6x8x8xf32> -> tensor<4xindex>
  %s7b = shape.broadcast %s7, %cshape1 : tensor<4xindex>, tensor<3xindex> -> tensor<4xindex>
  %s7l = stablehlo.dynamic_broadcast_in_dim %bn6, %s7b, dims = [0, 1, 2, 3] : (tensor<?x6x8x8xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %s7r = stablehlo.dynamic_broadcast_in_dim %bias1_c, %s7b, dims = [1, 2, 3] : (tensor<6x1x1xf32>, tensor<4xindex>) -> tensor<?x6x8x8xf32>
  %bn7 = stablehlo.add %s7l, %s7r : tensor<?x6x8x8xf32>
  return %bn7 : tensor<?x6x8x8xf32>
}
