// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file | FileCheck %s
// RUN: stablehlo-bnfold-opt %s --stablehlo-fold-batch-norm --split-input-file --report 2>&1 >/dev/null \
// RUN:   | FileCheck --check-prefix=REPORT %s
// RUN: stablehlo-bnfold-opt %s "--stablehlo-fold-batch-norm=merge-parallel-branches=false" --split-input-file \
// RUN:   | FileCheck --check-prefix=UNMERGED %s
// RUN: stablehlo-bnfold-opt %s "--stablehlo-fold-batch-norm=fold-weight-arguments=false" --split-input-file --report \
// RUN:   2>&1 >/dev/null | FileCheck --check-prefix=NOARGS %s
// RUN: stablehlo-bnfold-opt %s "--stablehlo-fold-batch-norm=fold-narrow-weights=false" --split-input-file --report \
// RUN:   2>&1 >/dev/null | FileCheck --check-prefix=NARROW %s

// fold/branches.py: after the patterns, parallel convolution branches that read one input
// and meet in a sum (RepVGG, MobileOne, ACNet) become one convolution and one bias add:
// each branch's kernel embedded at its taps in the largest, an identity branch x * s + t
// as s at the tap that reads input p at output p, the biases and shifts summed. Positive
// cases first, then one negative case per reason (reported at the sum).

// RepVGG's block: a 3x3 convolution and its bias, a 1x1 and its bias, and the identity
// branch x * 3 + 1: one 3x3 convolution whose centre tap is 1 + 2 + 3, its bias
// 0.5 + 0.25 + 1. The identity branch is a norm folded; the sum one merge.
// CHECK-LABEL: func.func @repvgg_block
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}1.000000e+00]], {{\[\[}}6.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<3x3x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]]) {{.*}}pad = {{\[\[}}1, 1], [1, 1]]
// CHECK:         %[[B:.+]] = stablehlo.constant dense<1.750000e+00> : tensor<1xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
// UNMERGED-LABEL: func.func @repvgg_block
// UNMERGED-COUNT-2: stablehlo.convolution
// UNMERGED:         stablehlo.multiply %arg0
// REPORT-DAG: branches.mlir:[[# @LINE + 16]]:{{[0-9]+}}: folded stablehlo.multiply, stablehlo.add into stablehlo.convolution [merge_parallel_branches]
// REPORT-DAG: branches.mlir:[[# @LINE + 19]]:{{[0-9]+}}: merged 3 branches into stablehlo.convolution [merge_parallel_branches]
func.func @repvgg_block(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k3 = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %k1 = stablehlo.constant dense<2.0> : tensor<1x1x1x1xf32>
  %b3 = stablehlo.constant dense<0.5> : tensor<1xf32>
  %b1 = stablehlo.constant dense<0.25> : tensor<1xf32>
  %s = stablehlo.constant dense<3.0> : tensor<1xf32>
  %t = stablehlo.constant dense<1.0> : tensor<1xf32>
  %c3 = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %bb3 = stablehlo.broadcast_in_dim %b3, dims = [3] : (tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %y3 = stablehlo.add %c3, %bb3 : tensor<1x4x4x1xf32>
  %c1 = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %bb1 = stablehlo.broadcast_in_dim %b1, dims = [3] : (tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %y1 = stablehlo.add %c1, %bb1 : tensor<1x4x4x1xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %xs = stablehlo.multiply %x, %bs : tensor<1x4x4x1xf32>
  %bt = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %yi = stablehlo.add %xs, %bt : tensor<1x4x4x1xf32>
  %sum = stablehlo.add %y3, %y1 : tensor<1x4x4x1xf32>
  %out = stablehlo.add %sum, %yi : tensor<1x4x4x1xf32>
  return %out : tensor<1x4x4x1xf32>
}

// -----

// MobileOne's depthwise stage, summed in its order (identity first): two depthwise 3x3
// kernels (1 and 0.5), a depthwise 1x1 (2) and a batch norm of the input (scale
// [2, 4] / sqrt([1, 4]) = 2, shift [1, 1] - [0, 1] * 2): output feature o reads input
// index o mod 1 = 0, the centre tap 1 + 0.5 + 2 + 2 on both channels, 1.5 elsewhere.
// CHECK-LABEL: func.func @mobileone_depthwise
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.500000e+00, 1.500000e+00]], {{.*}} {{\[\[}}5.500000e+00, 5.500000e+00]], {{.*}} : tensor<3x3x1x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]]) {{.*}}feature_group_count = 2
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
// REPORT-DAG: branches.mlir:[[# @LINE + 10]]:{{[0-9]+}}: folded stablehlo.batch_norm_inference into stablehlo.convolution [merge_parallel_branches]
// REPORT-DAG: branches.mlir:[[# @LINE + 15]]:{{[0-9]+}}: merged 4 branches into stablehlo.convolution [merge_parallel_branches]
func.func @mobileone_depthwise(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %scale = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %ka = stablehlo.constant dense<1.0> : tensor<3x3x1x2xf32>
  %kb = stablehlo.constant dense<0.5> : tensor<3x3x1x2xf32>
  %k1 = stablehlo.constant dense<2.0> : tensor<1x1x1x2xf32>
  %id = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %ca = stablehlo.convolution(%x, %ka) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32>
  %cb = stablehlo.convolution(%x, %kb) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32>
  %c1 = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %s0 = stablehlo.add %id, %ca : tensor<1x4x4x2xf32>
  %s1 = stablehlo.add %s0, %cb : tensor<1x4x4x2xf32>
  %s2 = stablehlo.add %s1, %c1 : tensor<1x4x4x2xf32>
  return %s2 : tensor<1x4x4x2xf32>
}

// -----

// ACNet's asymmetric block: 3x3 (1) + 1x3 (2, padded along the width only) + 3x1 (4,
// along the height only): the middle row gains 2, the middle column 4. (Strides of one
// written out are the default.)
// CHECK-LABEL: func.func @acnet_block
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}7.000000e+00]], {{\[\[}}3.000000e+00]]], {{\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<3x3x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]])
// CHECK-NEXT:    return %[[C]]
// REPORT-DAG: branches.mlir:[[# @LINE + 9]]:{{[0-9]+}}: merged 3 branches into stablehlo.convolution [merge_parallel_branches]
func.func @acnet_block(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k33 = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %k13 = stablehlo.constant dense<2.0> : tensor<1x3x1x1xf32>
  %k31 = stablehlo.constant dense<4.0> : tensor<3x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k33) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k13) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %c = stablehlo.convolution(%x, %k31) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %ab = stablehlo.add %b, %a : tensor<1x4x4x1xf32>
  %abc = stablehlo.add %c, %ab : tensor<1x4x4x1xf32>
  return %abc : tensor<1x4x4x1xf32>
}

// -----

// A dilated branch lands on every other tap of a larger kernel: a 3x3 with dilation 2
// and padding 2 reads what taps 0, 2 and 4 of a 5x5 with padding 2 read.
// CHECK-LABEL: func.func @dilated_branch_on_every_other_tap
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{.*}} : tensor<5x5x1x1xf32>
// CHECK:         stablehlo.convolution(%arg0, %[[K]]) {{.*}}pad = {{\[\[}}2, 2], [2, 2]]}
// CHECK-NOT:     stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
func.func @dilated_branch_on_every_other_tap(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k5 = stablehlo.constant dense<0.0> : tensor<5x5x1x1xf32>
  %k3 = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %a = stablehlo.convolution(%x, %k5) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 2], [2, 2]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<5x5x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 2], [2, 2]], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// Both dilated: a 3x3 with dilation 4 lands on every other tap of a 5x5 with dilation 2.
// CHECK-LABEL: func.func @dilated_branch_on_a_dilated_host
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{.*}} : tensor<5x5x1x1xf32>
// CHECK:         stablehlo.convolution(%arg0, %[[K]]) {{.*}}pad = {{\[\[}}4, 4], [4, 4]], rhs_dilate = [2, 2]}
// CHECK-NOT:     stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
func.func @dilated_branch_on_a_dilated_host(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k5 = stablehlo.constant dense<0.0> : tensor<5x5x1x1xf32>
  %k3 = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %a = stablehlo.convolution(%x, %k5) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[4, 4], [4, 4]], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<5x5x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[4, 4], [4, 4]], rhs_dilate = [4, 4]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// Mixed precision: the identity norm computed in f32 between converts of the bf16 input
// (Flax's dtype=bfloat16) joins the bf16 convolution like any other; its scale is
// rounded into the bf16-only kernel with the rest (the report says so).
// CHECK-LABEL: func.func @identity_computed_in_a_wider_type
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{.+}}> : tensor<1x1x2x2xbf16>
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.convert
// REPORT-DAG: branches.mlir:[[# @LINE + 10]]:{{[0-9]+}}: folded stablehlo.multiply, stablehlo.add into stablehlo.convolution (rounded again in bf16) [merge_parallel_branches]
// REPORT-DAG: branches.mlir:[[# @LINE + 12]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
func.func @identity_computed_in_a_wider_type(%x: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xbf16> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x2x2xbf16>
  %s = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %t = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x2xbf16>) -> tensor<1x4x4x2xbf16>
  %w = stablehlo.convert %x : (tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %bt = stablehlo.broadcast_in_dim %t, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %xs = stablehlo.multiply %w, %bs : tensor<1x4x4x2xf32>
  %xst = stablehlo.add %xs, %bt : tensor<1x4x4x2xf32>
  %n = stablehlo.convert %xst : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xbf16>
  %y = stablehlo.add %c, %n : tensor<1x4x4x2xbf16>
  return %y : tensor<1x4x4x2xbf16>
}

// -----

// The same, the widened input read by another op too: it stays, and the identity with it.
// CHECK-LABEL: func.func @identity_whose_widened_input_is_read_elsewhere
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.multiply
// REPORT-DAG: branches.mlir:[[# @LINE + 9]]:{{[0-9]+}}: branches not merged: a branch's convolution or bias add has other readers [merge_parallel_branches]
func.func @identity_whose_widened_input_is_read_elsewhere(%x: tensor<1x4x4x2xbf16>) -> (tensor<1x4x4x2xbf16>, tensor<1x4x4x2xf32>) {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x2x2xbf16>
  %s = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xbf16>, tensor<1x1x2x2xbf16>) -> tensor<1x4x4x2xbf16>
  %w = stablehlo.convert %x : (tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %xs = stablehlo.multiply %w, %bs : tensor<1x4x4x2xf32>
  %n = stablehlo.convert %xs : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xbf16>
  %y = stablehlo.add %c, %n : tensor<1x4x4x2xbf16>
  return %y, %w : tensor<1x4x4x2xbf16>, tensor<1x4x4x2xf32>
}

// -----

// The convolution reads its input converted (mixed precision converts it once per layer)
// and the identity term is another convert of it: the input is read once as converted,
// twice as it was; they merge.
// CHECK-LABEL: func.func @identity_of_a_convolution_that_reads_a_converted_input
// CHECK:         %[[W:.+]] = stablehlo.convert %arg0
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}2.000000e+00, 2.000000e+00], [3.000000e+00, 5.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%[[W]], %[[K]])
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[C]]
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
func.func @identity_of_a_convolution_that_reads_a_converted_input(%x: tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %xc = stablehlo.convert %x : (tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xf32>
  %c = stablehlo.convolution(%xc, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %w = stablehlo.convert %x : (tensor<1x4x4x2xbf16>) -> tensor<1x4x4x2xf32>
  %y = stablehlo.add %c, %w : tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// torch's layout (NCHW, OIHW), the plain input as the identity branch (x + conv(x)), and
// a term of the sum that reads another input: the input's branches merge, the other term
// is added after them.
// CHECK-LABEL: func.func @nchw_with_plain_identity_and_another_term
// CHECK:         %[[K:.+]] = stablehlo.constant dense<{{\[\[\[\[}}3.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}3.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg0, %[[K]]) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
// CHECK:         %[[B:.+]] = stablehlo.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [1]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK:         %[[Z:.+]] = stablehlo.add %[[Y]], %arg1
// CHECK-NEXT:    return %[[Z]]
// REPORT-DAG: branches.mlir:[[# @LINE + 8]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
func.func @nchw_with_plain_identity_and_another_term(%x: tensor<1x2x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %k = stablehlo.constant dense<[[[[2.0]], [[0.0]]], [[[0.0]], [[2.0]]]]> : tensor<2x2x1x1xf32>
  %b = stablehlo.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = stablehlo.add %c, %bb : tensor<1x2x4x4xf32>
  %xz = stablehlo.add %x, %z : tensor<1x2x4x4xf32>
  %out = stablehlo.add %y, %xz : tensor<1x2x4x4xf32>
  return %out : tensor<1x2x4x4xf32>
}

// -----

// A transposed branch (lhs dilation) stays: its taps read the dilated input.
// CHECK-LABEL: func.func @transposed_branch
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: a branch is a transposed convolution (lhs dilation) or reverses its window [merge_parallel_branches]
func.func @transposed_branch(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, -3], [0, -3]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @reversed_window
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: a branch is a transposed convolution (lhs dilation) or reverses its window [merge_parallel_branches]
func.func @reversed_window(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @different_strides
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: the branches' convolutions have different strides [merge_parallel_branches]
func.func @different_strides(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[2, 2], [2, 2]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @different_groups
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: the branches' convolutions have different feature or batch group counts [merge_parallel_branches]
func.func @different_groups(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x2x2xf32>
  %kd = stablehlo.constant dense<1.0> : tensor<1x1x1x2xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %b = stablehlo.convolution(%x, %kd) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// CHECK-LABEL: func.func @different_dimension_numbers
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: the branches' convolutions have different dimension numbers [merge_parallel_branches]
func.func @different_dimension_numbers(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %ko = stablehlo.constant dense<1.0> : tensor<1x1x3x3xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %ko) dim_numbers = [b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @different_precision
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: the branches' convolutions have different precision configs [merge_parallel_branches]
func.func @different_precision(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// A branch computed outside the region the sum is in stays: merged there, the
// convolution would run on every iteration or branch taken.
// CHECK-LABEL: func.func @branch_in_another_block
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 8]]:{{[0-9]+}}: branches not merged: a branch is computed in another block than the sum [merge_parallel_branches]
func.func @branch_in_another_block(%p: tensor<i32>, %x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %r = "stablehlo.case"(%p) ({
    stablehlo.return %x : tensor<1x4x4x1xf32>
  }, {
    %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
    %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
    stablehlo.return %y : tensor<1x4x4x1xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x1xf32>
  return %r : tensor<1x4x4x1xf32>
}

// -----

// The same for a branch that a one-branch case returns (the case's result is the term):
// it is a branch, and stays for the same reason.
// CHECK-LABEL: func.func @branch_returned_by_a_case
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.add
// REPORT-DAG: branches.mlir:[[# @LINE + 7]]:{{[0-9]+}}: branches not merged: a branch is computed in another block than the sum [merge_parallel_branches]
func.func @branch_returned_by_a_case(%p: tensor<i32>, %x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %r = "stablehlo.case"(%p) ({
    %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
    stablehlo.return %b : tensor<1x4x4x1xf32>
  }) : (tensor<i32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %r, %x : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// CHECK-LABEL: func.func @branch_read_elsewhere
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: a branch's convolution or bias add has other readers [merge_parallel_branches]
func.func @branch_read_elsewhere(%x: tensor<1x4x4x1xf32>) -> (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y, %b : tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>
}

// -----

// ACNet's 1x3 and 3x1 without the 3x3: neither kernel holds the other's taps, and a 3x3
// would cost more than both.
// CHECK-LABEL: func.func @taps_in_no_kernel
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: no branch's kernel holds the other branches' taps [merge_parallel_branches]
func.func @taps_in_no_kernel(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k13 = stablehlo.constant dense<2.0> : tensor<1x3x1x1xf32>
  %k31 = stablehlo.constant dense<4.0> : tensor<3x1x1x1xf32>
  %b = stablehlo.convolution(%x, %k13) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 0], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %c = stablehlo.convolution(%x, %k31) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %b, %c : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// A 1x1 branch whose padding shifts it by one, between the taps of a dilated 3x3.
// CHECK-LABEL: func.func @tap_between_dilated_taps
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: no branch's kernel holds the other branches' taps [merge_parallel_branches]
func.func @tap_between_dilated_taps(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k3 = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %k1 = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 2], [2, 2]], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, -1], [1, -1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// An undilated 3x3 aligned with the first tap of a 3x3 dilated by 2: its second tap
// reads between the host's.
// CHECK-LABEL: func.func @undilated_taps_between_dilated_ones
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: no branch's kernel holds the other branches' taps [merge_parallel_branches]
func.func @undilated_taps_between_dilated_ones(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<3x3x1x1xf32>
  %k2 = stablehlo.constant dense<2.0> : tensor<3x3x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 2], [2, 2]], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 0], [2, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// The input as a branch of a strided convolution that keeps the size (padded): output p
// reads input 2p - 2, not p.
// CHECK-LABEL: func.func @identity_of_a_strided_convolution
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.add %{{.+}}, %arg0
// REPORT-DAG: branches.mlir:[[# @LINE + 4]]:{{[0-9]+}}: branches not merged: the identity branch's convolution is strided or changes the size [merge_parallel_branches]
func.func @identity_of_a_strided_convolution(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[2, 2], [2, 2]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %x : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// A 1x1 convolution shifted by its padding: output p reads input p - 1.
// CHECK-LABEL: func.func @identity_without_a_centre_tap
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.add %{{.+}}, %arg0
// REPORT-DAG: branches.mlir:[[# @LINE + 4]]:{{[0-9]+}}: branches not merged: the identity branch's convolution has no tap at offset zero [merge_parallel_branches]
func.func @identity_without_a_centre_tap(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, -1], [1, -1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %x : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// A convolution whose output swaps the spatial dimensions: output (p, q) is no tap of
// input (p, q).
// CHECK-LABEL: func.func @identity_of_a_convolution_that_moves_dimensions
// CHECK:         stablehlo.convolution
// CHECK:         stablehlo.add %{{.+}}, %arg0
// REPORT-DAG: branches.mlir:[[# @LINE + 4]]:{{[0-9]+}}: branches not merged: the identity branch's convolution does not map its input features to the same output features [merge_parallel_branches]
func.func @identity_of_a_convolution_that_moves_dimensions(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 1, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %x : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// Weights passed as arguments merge in the graph: the other kernel added to the host's
// (padded to its taps where it is smaller), on every call; without fold-weight-arguments
// they stay in their branches.
// CHECK-LABEL: func.func @weights_passed_as_an_argument
// CHECK:         %[[K:.+]] = stablehlo.add %{{.+}}, %arg0 : tensor<1x1x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg1, %[[K]])
// CHECK-NEXT:    return %[[C]]
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
// NOARGS: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: a branch's weights or bias are not constants [merge_parallel_branches]
func.func @weights_passed_as_an_argument(%w: tensor<1x1x1x1xf32>, %x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// The same, the branch read first (the host) with its weights passed in.
// CHECK-LABEL: func.func @host_weights_passed_as_an_argument
// CHECK:         %[[K:.+]] = stablehlo.add %arg0, %{{.+}} : tensor<1x1x1x1xf32>
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg1, %[[K]])
// CHECK-NEXT:    return %[[C]]
// NOARGS: branches.mlir:[[# @LINE + 5]]:{{[0-9]+}}: branches not merged: a branch's weights or bias are not constants [merge_parallel_branches]
func.func @host_weights_passed_as_an_argument(%w: tensor<1x1x1x1xf32>, %x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %b, %a : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// RepVGG with its weights and biases passed in (each branch's norm folded in the graph
// already) and a constant identity branch: the 1x1 kernel padded to the 3x3's centre, the
// identity's scale a constant kernel at the centre, the biases and the shift summed on
// [C] vectors.
// CHECK-LABEL: func.func @repvgg_block_with_weight_arguments
// CHECK-DAG:     %[[Z:.+]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[P:.+]] = stablehlo.pad %arg1, %[[Z]], low = [1, 1, 0, 0], high = [1, 1, 0, 0], interior = [0, 0, 0, 0]
// CHECK:         %[[K1:.+]] = stablehlo.add %arg0, %[[P]]
// CHECK:         %[[I:.+]] = stablehlo.constant dense<{{.+}}> : tensor<3x3x2x2xf32>
// CHECK:         %[[K:.+]] = stablehlo.add %[[K1]], %[[I]]
// CHECK:         %[[C:.+]] = stablehlo.convolution(%arg4, %[[K]])
// CHECK:         %[[B:.+]] = stablehlo.add %arg2, %arg3 : tensor<2xf32>
// CHECK:         %[[S:.+]] = stablehlo.broadcast_in_dim %[[B]], dims = [3]
// CHECK:         %[[Y:.+]] = stablehlo.add %[[C]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
// REPORT-DAG: branches.mlir:[[# @LINE + 12]]:{{[0-9]+}}: merged 3 branches into stablehlo.convolution [merge_parallel_branches]
func.func @repvgg_block_with_weight_arguments(%k3: tensor<3x3x2x2xf32>, %k1: tensor<1x1x2x2xf32>, %b3: tensor<2xf32>, %b1: tensor<2xf32>, %x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %s = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %c3 = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  %bb3 = stablehlo.broadcast_in_dim %b3, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y3 = stablehlo.add %c3, %bb3 : tensor<1x4x4x2xf32>
  %c1 = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %bb1 = stablehlo.broadcast_in_dim %b1, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y1 = stablehlo.add %c1, %bb1 : tensor<1x4x4x2xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %yi = stablehlo.multiply %x, %bs : tensor<1x4x4x2xf32>
  %sum = stablehlo.add %y3, %y1 : tensor<1x4x4x2xf32>
  %out = stablehlo.add %sum, %yi : tensor<1x4x4x2xf32>
  return %out : tensor<1x4x4x2xf32>
}

// -----

// Kernels passed in and no bias adds: padding the 1x1 kernel (a pad and its zero) and
// adding it takes more ops than the convolution and the sum that go.
// CHECK-LABEL: func.func @merging_in_the_graph_costs_more_ops
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 4]]:{{[0-9]+}}: branches not merged: merging in the graph would build more ops than it removes [merge_parallel_branches]
func.func @merging_in_the_graph_costs_more_ops(%k3: tensor<3x3x1x1xf32>, %k1: tensor<1x1x1x1xf32>, %x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %a = stablehlo.convolution(%x, %k3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// Kernels stored only in bf16: merged, their sum is rounded to bf16 again (without
// fold-narrow-weights they stay, as the norms folded into them would).
// CHECK-LABEL: func.func @narrow_kernels_without_a_master_copy
// CHECK:         %[[K:.+]] = stablehlo.constant dense<3.000000e+00> : tensor<1x1x1x1xbf16>
// CHECK:         stablehlo.convolution(%arg0, %[[K]])
// CHECK-NOT:     stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 7]]:{{[0-9]+}}: merged 2 branches into stablehlo.convolution [merge_parallel_branches]
// NARROW: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: weights have no wider master copy: folding would round them again [merge_parallel_branches]
func.func @narrow_kernels_without_a_master_copy(%x: tensor<1x4x4x1xbf16>) -> tensor<1x4x4x1xbf16> {
  %k = stablehlo.constant dense<1.0> : tensor<1x1x1x1xbf16>
  %k2 = stablehlo.constant dense<2.0> : tensor<1x1x1x1xbf16>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xbf16>, tensor<1x1x1x1xbf16>) -> tensor<1x4x4x1xbf16>
  %b = stablehlo.convolution(%x, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xbf16>, tensor<1x1x1x1xbf16>) -> tensor<1x4x4x1xbf16>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xbf16>
  return %y : tensor<1x4x4x1xbf16>
}

// -----

// CHECK-LABEL: func.func @merged_weights_overflow
// CHECK-COUNT-2: stablehlo.convolution
// REPORT-DAG: branches.mlir:[[# @LINE + 6]]:{{[0-9]+}}: branches not merged: the merged weights or bias are not finite in their element type [merge_parallel_branches]
// REPORT: 5 norms: 4 folded whole, 0 folded partly, 1 left (6 ops folded); 12 sums of parallel branches merged; 37 activation-sized ops removed
func.func @merged_weights_overflow(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %k = stablehlo.constant dense<3.0e38> : tensor<1x1x1x1xf32>
  %a = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %b = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %y = stablehlo.add %a, %b : tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}
