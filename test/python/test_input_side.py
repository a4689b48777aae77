"""Input-side folds on modules that once miscompiled or crashed the pass, each folded and
run through XLA on the CPU against the original (`fold_and_compare`)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DTYPES, LARGER, fold_and_compare
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold.constants import read_dense
from stablehlo_bnfold.fold import reasons

_AFFINE = """
  %s = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %t = stablehlo.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<4xf32>) -> tensor<{n}x4xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<{n}x4xf32>
  %m = stablehlo.multiply %x, %sb : tensor<{n}x4xf32>
  %y = stablehlo.add %m, %tb : tensor<{n}x4xf32>
"""
_W1 = "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, -1.0]]> : tensor<4x3xf32>"
_W2 = "dense<[[2.0, 1.0, 0.5], [-1.0, 3.0, 2.0], [0.0, 1.0, 1.0], [2.0, 2.0, -2.0]]> : tensor<4x3xf32>"

# At batch 1 a linear op's result [1, 3] looks like a bias [1, N] to `own_bias`: the sum
# of two consumers made each the other's bias (the process crashed), and a result
# defined after the consumer was read before it (operand does not dominate its use).
TWO_CONSUMERS_ADDED = f"""
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {{{_AFFINE.format(n=1)}
  %w1 = stablehlo.constant {_W1}
  %w2 = stablehlo.constant {_W2}
  %a = stablehlo.dot_general %y, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %b = stablehlo.dot_general %y, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %o = stablehlo.add %a, %b : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}}
"""

LATER_LINEAR_ADDED = f"""
func.func @main(%x: tensor<1x4xf32>, %z: tensor<1x4xf32>) -> tensor<1x3xf32> {{{_AFFINE.format(n=1)}
  %w1 = stablehlo.constant {_W1}
  %w2 = stablehlo.constant {_W2}
  %a = stablehlo.dot_general %y, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %r = stablehlo.tanh %z : tensor<1x4xf32>
  %b = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %o = stablehlo.add %a, %b : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}}
"""

# The consumer's own bias, an argument converted after the consumer: the merged bias was
# built before the consumer, reading the convert before it is defined.
BIAS_CONVERTED_AFTER = f"""
func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xbf16>) -> tensor<2x3xf32> {{{_AFFINE.format(n=2)}
  %a = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bc = stablehlo.convert %bias : (tensor<3xbf16>) -> tensor<3xf32>
  %bb = stablehlo.broadcast_in_dim %bc, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %o = stablehlo.add %a, %bb : tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}}
"""

# Weights with no free dimension (x[T, C] . w[C]): the folded bias, a sum over every
# axis, was a numpy scalar and crashed the bias add.
VECTOR_WEIGHTS = f"""
func.func @main(%x: tensor<3x4xf32>) -> tensor<3xf32> {{{_AFFINE.format(n=3)}
  %w = stablehlo.constant dense<[1.0, -2.0, 0.5, 3.0]> : tensor<4xf32>
  %a = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %a : tensor<3xf32>
}}
"""

# x[T, C] * broadcast_in_dim(reshape(z[1, C] -> [C]), dims = [0]): the factor varies along
# T, not along the contracted C. Asked for a single element past the broadcast, the
# in-graph source analysis went through the reshape to z's C and folded z into W along C
# (relative error 1.86).
PER_TOKEN_THROUGH_RESHAPE = """
func.func @main(%x: tensor<4x4xf32>, %z: tensor<1x4xf32>, %w: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = stablehlo.reshape %z : (tensor<1x4xf32>) -> tensor<4xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x4xf32>
  %y = stablehlo.multiply %x, %rb : tensor<4x4xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}
"""

# f16 weights as an argument after x * 1000 * 1000 (constants; x made small by a factor
# that is not per-channel, which ends the chain): the scale 1e6 does not fit in f16, and
# the vector built for W * broadcast_in_dim(s) was None (ValueError). Now refused with
# the reason.
SCALE_OVERFLOWS_ARGUMENT_WEIGHTS = """
func.func @main(%x: tensor<2x4xf16>, %w: tensor<4x3xf16>) -> tensor<2x3xf16> {
  %c = stablehlo.constant dense<1000.0> : tensor<4xf16>
  %cb = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<4xf16>) -> tensor<2x4xf16>
  %small = stablehlo.constant dense<[[1.0e-04, 2.0e-04, 1.0e-04, 3.0e-04], [2.0e-04, 1.0e-04, 1.0e-04, 1.0e-04]]> : tensor<2x4xf16>
  %xs = stablehlo.multiply %x, %small : tensor<2x4xf16>
  %m1 = stablehlo.multiply %xs, %cb : tensor<2x4xf16>
  %m2 = stablehlo.multiply %m1, %cb : tensor<2x4xf16>
  %d = stablehlo.dot_general %m2, %w, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %d : tensor<2x3xf16>
}
"""


def test_a_scale_that_does_not_fit_argument_weights_is_refused_with_the_reason():
    # Not run through XLA: its CPU compiler itself multiplies 1000 * 1000 in f16 first.
    folded, report = stablehlo_bnfold.fold_batch_norm(
        SCALE_OVERFLOWS_ARGUMENT_WEIGHTS, with_report=True, options=LARGER
    )
    assert report.folded == 0
    assert [s.reason for s in report.skips] == ["folded weights overflow their element type"]
    with make_ir_context():
        assert folded == str(ir.Module.parse(SCALE_OVERFLOWS_ARGUMENT_WEIGHTS))


@pytest.mark.parametrize(
    "text, folds",
    [
        (TWO_CONSUMERS_ADDED, 1),
        (LATER_LINEAR_ADDED, 2),
        (BIAS_CONVERTED_AFTER, 1),
        (VECTOR_WEIGHTS, 1),
        (PER_TOKEN_THROUGH_RESHAPE, 0),
    ],
    ids=[
        "two_consumers_added",
        "later_linear_added",
        "bias_converted_after",
        "vector_weights",
        "per_token_through_reshape",
    ],
)
def test_folded_module_computes_what_the_original_computes(text, folds):
    fold_and_compare(text, seed=0, batch_norms_left=0, folds=folds, options=LARGER)


# The same scale below a step computed in the graph (x * 1000 * 1000 * gamma, gamma an
# argument): the float64 product 1e6 became a vector in f16 inside AffineChain.affine and
# the multiply built on it raised.
SCALE_OVERFLOWS_BELOW_ARGUMENT_STEP = """
func.func @main(%x: tensor<2x4xf16>, %w: tensor<4x3xf16>, %g: tensor<4xf16>) -> tensor<2x3xf16> {
  %c = stablehlo.constant dense<1000.0> : tensor<4xf16>
  %cb = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<4xf16>) -> tensor<2x4xf16>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<4xf16>) -> tensor<2x4xf16>
  %m1 = stablehlo.multiply %x, %cb : tensor<2x4xf16>
  %m2 = stablehlo.multiply %m1, %cb : tensor<2x4xf16>
  %m3 = stablehlo.multiply %m2, %gb : tensor<2x4xf16>
  %d = stablehlo.dot_general %m3, %w, contracting_dims = [1] x [0] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  return %d : tensor<2x3xf16>
}
"""


def test_a_constant_below_an_argument_step_that_does_not_fit_is_refused_with_the_reason():
    folded, report = stablehlo_bnfold.fold_batch_norm(SCALE_OVERFLOWS_BELOW_ARGUMENT_STEP, with_report=True)
    assert report.folded == 0
    assert [s.reason for s in report.skips] == ["per-feature values overflow their element type"]


# x * g * h + b, every value an argument, before a padded convolution with argument
# weights: the shift would have to stay in front as x + t / s, which needs constants, so
# the chain is refused after its scale g * h is known. Deciding creates no IR: the pass
# once built g * h in the graph first and erased it when it refused.
REFUSED_AFTER_THE_SCALE_IN_THE_GRAPH = """
func.func @main(%x: tensor<1x8x8x4xf32>, %g: tensor<4xf32>, %h: tensor<4xf32>, %b: tensor<4xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32> {
  %gb = stablehlo.broadcast_in_dim %g, dims = [3] : (tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %hb = stablehlo.broadcast_in_dim %h, dims = [3] : (tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<4xf32>) -> tensor<1x8x8x4xf32>
  %m = stablehlo.multiply %x, %gb : tensor<1x8x8x4xf32>
  %n = stablehlo.multiply %m, %hb : tensor<1x8x8x4xf32>
  %a = stablehlo.add %n, %bb : tensor<1x8x8x4xf32>
  %y = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
"""


def test_a_refused_input_side_fold_creates_no_op(monkeypatch):
    created = []
    monkeypatch.setattr(stablehlo_bnfold.report.Recorder, "created", lambda self, op: created.append(op.name))
    with make_ir_context():
        module = ir.Module.parse(REFUSED_AFTER_THE_SCALE_IN_THE_GRAPH)
        original = str(module)
        _, report = stablehlo_bnfold.fold_batch_norm(module, with_report=True)
        assert (report.folded, str(module)) == (0, original)
    assert created == []


def _f32(values: np.ndarray) -> str:
    """`values` as the body of an f32 dense attribute, each printed exactly."""
    rows = [repr(float(v)) for v in np.asarray(values, np.float32).ravel()]
    return "[" + ", ".join(rows) + "]" if values.ndim == 1 else "[" + ", ".join(
        "[" + ", ".join(rows[i * values.shape[1]:(i + 1) * values.shape[1]]) + "]" for i in range(values.shape[0])
    ) + "]"


_RNG = np.random.default_rng(0)
GAMMA = (_RNG.choice([-1.0, 1.0], 16) * _RNG.uniform(0.5, 1.5, 16)).astype(np.float32)
BETA = _RNG.normal(0.0, 0.2, 16).astype(np.float32)
MASTER = _RNG.normal(0.0, 0.25, (16, 8)).astype(np.float32)
BIAS = _RNG.normal(0.0, 0.2, 8).astype(np.float32)


def _mixed_layer_norm_dense(narrow: str) -> str:
    """A norm's x * gamma + beta in f32, converted to `narrow` (bf16 or f16) before a Dense
    in `narrow` whose weights and bias are converts of f32 master copies (Flax's
    `dtype=bfloat16` with f32 parameters)."""
    return f"""
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8x{narrow}> {{
  %gamma = stablehlo.constant dense<{_f32(GAMMA)}> : tensor<16xf32>
  %beta = stablehlo.constant dense<{_f32(BETA)}> : tensor<16xf32>
  %gb = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %bb = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %m = stablehlo.multiply %x, %gb : tensor<4x16xf32>
  %y = stablehlo.add %m, %bb : tensor<4x16xf32>
  %yn = stablehlo.convert %y : (tensor<4x16xf32>) -> tensor<4x16x{narrow}>
  %master = stablehlo.constant dense<{_f32(MASTER)}> : tensor<16x8xf32>
  %w = stablehlo.convert %master : (tensor<16x8xf32>) -> tensor<16x8x{narrow}>
  %d = stablehlo.dot_general %yn, %w, contracting_dims = [1] x [0] : (tensor<4x16x{narrow}>, tensor<16x8x{narrow}>) -> tensor<4x8x{narrow}>
  %bias = stablehlo.constant dense<{_f32(BIAS)}> : tensor<8xf32>
  %bn = stablehlo.convert %bias : (tensor<8xf32>) -> tensor<8x{narrow}>
  %bias_b = stablehlo.broadcast_in_dim %bn, dims = [1] : (tensor<8x{narrow}>) -> tensor<4x8x{narrow}>
  %o = stablehlo.add %d, %bias_b : tensor<4x8x{narrow}>
  return %o : tensor<4x8x{narrow}>
}}
"""


@pytest.mark.parametrize("narrow", ["bf16", "f16"])
def test_a_norm_in_f32_folds_through_the_convert_into_a_narrow_dense_within_its_tolerance(narrow):
    fold_and_compare(_mixed_layer_norm_dense(narrow), seed=0, batch_norms_left=0, folds=1)


@pytest.mark.parametrize("narrow", ["bf16", "f16"])
def test_weights_folded_through_a_convert_are_rounded_once_from_the_master_copy(narrow):
    # round_T(W * gamma) from the f32 master, not round_T(round_T(W) * gamma): the weights
    # carry one rounding to T, as in the original.
    dtype = DTYPES[narrow]
    folded, report = stablehlo_bnfold.fold_batch_norm(_mixed_layer_norm_dense(narrow), with_report=True)
    assert report.folded == 1
    with make_ir_context():
        module = ir.Module.parse(folded)
        weights = [
            read_dense(op.attributes["value"])
            for op in module.body.operations[0].regions[0].blocks[0].operations
            if op.name == "stablehlo.constant" and str(op.result.type) == f"tensor<16x8x{narrow}>"
        ]
    expected = (MASTER.astype(np.float64) * GAMMA.astype(np.float64)[:, None]).astype(dtype)
    twice = (MASTER.astype(dtype).astype(np.float64) * GAMMA[:, None]).astype(dtype)
    assert not np.array_equal(expected, twice), "the case should tell one rounding from two"
    assert len(weights) == 1
    np.testing.assert_array_equal(weights[0], expected)


def _large_mean_batch_norm_dense(narrow: str) -> str:
    """A batch norm in f32 of values near 1000 (mean 1000, variance 1; exp(6.9078 + x / 1000)
    is 1000 * (1 + x / 1000), outside any per-channel chain), converted to `narrow` before a
    Dense whose weights are a convert of f32 master weights."""
    ones = np.ones(16, np.float32)
    return f"""
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8x{narrow}> {{
  %milli = stablehlo.constant dense<0.001> : tensor<4x16xf32>
  %log = stablehlo.constant dense<6.9077554> : tensor<4x16xf32>
  %xm = stablehlo.multiply %x, %milli : tensor<4x16xf32>
  %xl = stablehlo.add %xm, %log : tensor<4x16xf32>
  %big = stablehlo.exponential %xl : tensor<4x16xf32>
  %scale = stablehlo.constant dense<{_f32(GAMMA)}> : tensor<16xf32>
  %offset = stablehlo.constant dense<{_f32(BETA)}> : tensor<16xf32>
  %mean = stablehlo.constant dense<{_f32(ones * 1000)}> : tensor<16xf32>
  %var = stablehlo.constant dense<{_f32(ones)}> : tensor<16xf32>
  %y = "stablehlo.batch_norm_inference"(%big, %scale, %offset, %mean, %var) {{epsilon = 0.0 : f32, feature_index = 1 : i64}} : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %yn = stablehlo.convert %y : (tensor<4x16xf32>) -> tensor<4x16x{narrow}>
  %master = stablehlo.constant dense<{_f32(MASTER)}> : tensor<16x8xf32>
  %w = stablehlo.convert %master : (tensor<16x8xf32>) -> tensor<16x8x{narrow}>
  %d = stablehlo.dot_general %yn, %w, contracting_dims = [1] x [0] : (tensor<4x16x{narrow}>, tensor<16x8x{narrow}>) -> tensor<4x8x{narrow}>
  return %d : tensor<4x8x{narrow}>
}}
"""


@pytest.mark.parametrize("narrow", ["bf16", "f16"])
def test_a_large_mean_before_a_narrowing_convert_stays_in_front_and_keeps_its_accuracy(narrow):
    # Folded as a bias after the Dense, L(x, K * s) would be rounded to `narrow` at the
    # size of x (1000, a bf16 ulp of 4) and the bias -1000 * K * s would cancel it: an
    # error of about 7 on outputs of about 4 (review, 2026-11-26). The shift stays in f32
    # before the convert: x - 1000, then the convert, as the original rounds.
    compared = fold_and_compare(_large_mean_batch_norm_dense(narrow), seed=0, batch_norms_left=0, folds=1)
    assert [s.reason for s in compared.report.skips] == [reasons.SHIFT_KEPT_WIDE]


# A residual add of two blocks whose norms stay unfolded (%r: their scales and shifts
# arguments), beside adds that are steps of a chain (%an, a shift argument; %o, a
# constant one).
RESIDUAL_OF_UNFOLDED_NORMS = """
func.func @main(%x: tensor<2x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<4x4xf32>, %s: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<2x4xf32> {
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %c = stablehlo.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %a = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %am = stablehlo.multiply %a, %sb : tensor<2x4xf32>
  %an = stablehlo.add %am, %tb : tensor<2x4xf32>
  %b = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bs = stablehlo.subtract %b, %cb : tensor<2x4xf32>
  %bm = stablehlo.multiply %bs, %sb : tensor<2x4xf32>
  %r = stablehlo.add %an, %bm : tensor<2x4xf32>
  %o = stablehlo.add %r, %cb : tensor<2x4xf32>
  return %o : tensor<2x4xf32>
}
"""


@pytest.mark.parametrize("fold_weight_arguments", [False, True])
def test_an_add_the_input_side_reads_as_two_activations_is_one_affine_chain_finds_nothing_in(fold_weight_arguments):
    from jaxlib.mlir.dialects import stablehlo

    from stablehlo_bnfold.fold.affine_map import affine_chain
    from stablehlo_bnfold.patterns.input_side import _adds_activations

    with make_ir_context():
        module = ir.Module.parse(RESIDUAL_OF_UNFOLDED_NORMS)
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)
        adds = dict(zip(["%an", "%r", "%o"], (op.result for op in ops if isinstance(op, stablehlo.AddOp))))
        chains = {name: affine_chain(value, 1, 4, fold_weight_arguments, split=True) for name, value in adds.items()}
        read_as_activations = [name for name, value in adds.items() if _adds_activations(value)]
        assert all(chains[name] is None for name in read_as_activations)
        assert read_as_activations == ["%r"]
        # The adds that are steps: the shift argument's with weight arguments only.
        assert chains["%o"] is not None
        assert (chains["%an"] is not None) == fold_weight_arguments


# Two dense layers' L + b added at batch 1: each [1, 3] result is narrow, so with weight
# arguments each is the other's per-channel value as `per_channel` reads it (its own
# narrow source).
TWO_BIASED_DENSES_ADDED = """
func.func @main(%x: tensor<1x4xf32>, %w1: tensor<4x3xf32>, %w2: tensor<4x3xf32>, %b1: tensor<3xf32>, %b2: tensor<3xf32>) -> tensor<1x3xf32> {
  %a = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %ab = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %aa = stablehlo.add %a, %ab : tensor<1x3xf32>
  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %cb = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %ca = stablehlo.add %c, %cb : tensor<1x3xf32>
  %o = stablehlo.add %aa, %ca : tensor<1x3xf32>
  return %o : tensor<1x3xf32>
}
"""


@pytest.mark.parametrize("fold_weight_arguments", [False, True])
def test_an_add_of_two_linear_chains_matches_each_side_as_per_channel_reads_it(fold_weight_arguments):
    from stablehlo_bnfold.analysis.layouts import linear_layouts
    from stablehlo_bnfold.fold.affine_map import per_channel
    from stablehlo_bnfold.patterns.decomposed import linear_operands, per_channel_matches

    orders = ((0, 1), (1, 0))
    with make_ir_context():
        module = ir.Module.parse(TWO_BIASED_DENSES_ADDED)
        add = list(module.body.operations[0].regions[0].blocks[0].operations)[-2]
        candidates = linear_operands(add, orders)
        assert len(candidates) == 2
        expected = []
        for chain, other in candidates:
            for feature in sorted(linear_layouts(chain.linear)):
                factor = per_channel(other, feature, (1, 3)[feature], fold_weight_arguments)
                bias = per_channel(chain.bias_value, feature, (1, 3)[feature], True)
                if factor is not None and bias is not None:
                    expected.append((chain.linear_value, feature, factor, bias))
        found = per_channel_matches(add, orders, fold_weight_arguments, candidates)
        assert [(c.linear_value, f, factor, bias) for c, f, factor, bias in found] == expected
        assert bool(expected) == fold_weight_arguments
