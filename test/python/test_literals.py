"""Literal weights and biases (fold/literals.py): the constant a linear op reads in place of
arithmetic on constants is that arithmetic in float64, rounded once (a convert on the way
rounds where the graph rounds), and the module still computes what it computed, through
XLA on the CPU. test/transforms/literals.mlir checks which values become constants."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
from helpers import assert_close, fold_and_compare, random_inputs, run_on_cpu
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold.constants import read_dense, round_to
from stablehlo_bnfold.io import make_context

BF16 = np.dtype(ml_dtypes.bfloat16)
C = 64


def _dense(values: np.ndarray, element: str) -> str:
    """An MLIR dense attribute holding `values` exactly (each written as its float64 repr)."""
    shape = "x".join(str(n) for n in values.shape)
    return f"dense<{json.dumps(values.astype(np.float64).tolist())}> : tensor<{shape}x{element}>"


def _operands_of_the_linear_op(text: str) -> list[np.ndarray]:
    """The constant values the one dot_general of `text` reads as weights and its bias add
    broadcasts, in that order."""
    with make_context():
        module = ir.Module.parse(text)
        found = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "stablehlo.dot_general":
                found.append(op.operands[1])
            if op.name == "stablehlo.broadcast_in_dim" and len(op.results[0].type.shape) == 2:
                found.append(op.operands[0])
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return [np.array(read_dense(v.owner.opview.value)) for v in found]


def _keras_bias_module(mean, var, gamma, beta, eps) -> str:
    """x @ W + broadcast(beta - mean * rsqrt(var + eps) * gamma), as Keras computes it."""
    w = np.full((4, C), 0.25, np.float32)
    return f"""
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x{C}xf32> {{
  %w = stablehlo.constant {_dense(w, "f32")}
  %eps = stablehlo.constant dense<{float(eps)!r}> : tensor<f32>
  %mean = stablehlo.constant {_dense(mean, "f32")}
  %var = stablehlo.constant {_dense(var, "f32")}
  %gamma = stablehlo.constant {_dense(gamma, "f32")}
  %beta = stablehlo.constant {_dense(beta, "f32")}
  %e = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<{C}xf32>
  %ve = stablehlo.add %var, %e : tensor<{C}xf32>
  %r = stablehlo.rsqrt %ve : tensor<{C}xf32>
  %inv = stablehlo.multiply %r, %gamma : tensor<{C}xf32>
  %n = stablehlo.negate %mean : tensor<{C}xf32>
  %nm = stablehlo.multiply %n, %inv : tensor<{C}xf32>
  %bias = stablehlo.add %nm, %beta : tensor<{C}xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x{C}xf32>) -> tensor<2x{C}xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{C}xf32>) -> tensor<2x{C}xf32>
  %y = stablehlo.add %d, %b : tensor<2x{C}xf32>
  return %y : tensor<2x{C}xf32>
}}
"""


def test_a_computed_bias_becomes_its_float64_value_rounded_once():
    rng = np.random.default_rng(7)
    mean, beta = (rng.normal(0, 0.5, C).astype(np.float32) for _ in range(2))
    var, gamma = (rng.uniform(0.5, 1.5, C).astype(np.float32) for _ in range(2))
    eps = np.float32(1e-3)
    folded = stablehlo_bnfold.fold_batch_norm(_keras_bias_module(mean, var, gamma, beta, eps))
    _, bias = _operands_of_the_linear_op(folded)
    f64 = [v.astype(np.float64) for v in (mean, var, gamma, beta)]
    exact = -f64[0] * ((1.0 / np.sqrt(f64[1] + np.float64(eps))) * f64[2]) + f64[3]
    np.testing.assert_array_equal(bias, round_to(np.dtype(np.float32), exact))
    # Computed step by step in f32, as the graph would, some channels differ: the test
    # tells the two apart.
    stepwise = -mean * ((np.float32(1) / np.sqrt(var + eps)) * gamma) + beta
    assert np.any(stepwise != bias)


def test_a_convert_on_the_way_rounds_where_the_graph_rounds():
    # bf16 weights scaled in the graph: convert(W_f32) * s. The convert rounds W to bf16
    # first (as the original does), the product is rounded once.
    rng = np.random.default_rng(3)
    w = rng.normal(0, 1, (4, C)).astype(np.float32)
    s = rng.uniform(0.5, 1.5, C).astype(BF16)
    text = f"""
func.func @main(%x: tensor<2x4xbf16>) -> tensor<2x{C}xbf16> {{
  %w = stablehlo.constant {_dense(w, "f32")}
  %s = stablehlo.constant {_dense(s.astype(np.float32), "bf16")}
  %k = stablehlo.convert %w : (tensor<4x{C}xf32>) -> tensor<4x{C}xbf16>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<{C}xbf16>) -> tensor<4x{C}xbf16>
  %ks = stablehlo.multiply %k, %sb : tensor<4x{C}xbf16>
  %d = stablehlo.dot_general %x, %ks, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x{C}xbf16>) -> tensor<2x{C}xbf16>
  return %d : tensor<2x{C}xbf16>
}}
"""
    folded = stablehlo_bnfold.fold_batch_norm(text)
    (weights,) = _operands_of_the_linear_op(folded)
    rounded_w = w.astype(BF16).astype(np.float64)  # f32 -> bf16 is one rounding
    expected = round_to(BF16, rounded_w * s.astype(np.float64))
    np.testing.assert_array_equal(weights.view(np.uint16), expected.view(np.uint16))
    # Without the convert's own rounding (W * s from the f32 master) some weights differ.
    unrounded = round_to(BF16, w.astype(np.float64) * s.astype(np.float64))
    assert np.any(unrounded.view(np.uint16) != weights.view(np.uint16))


def test_literal_weights_and_biases_compute_what_the_original_computes_through_xla():
    # A batch norm to fold (so the report has one fold), a computed bias, a depthwise
    # kernel reshaped and a dense layer's transposed weights.
    rng = np.random.default_rng(11)
    mean, beta = (rng.normal(0, 0.5, 8).astype(np.float32) for _ in range(2))
    var, gamma = (rng.uniform(0.5, 1.5, 8).astype(np.float32) for _ in range(2))
    k = rng.normal(0, 0.3, (3, 3, 4, 8)).astype(np.float32)
    depthwise = rng.normal(0, 0.3, (3, 3, 8, 1)).astype(np.float32)
    w = rng.normal(0, 0.3, (5, 8)).astype(np.float32)
    text = f"""
func.func @main(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x5xf32> {{
  %k = stablehlo.constant {_dense(k, "f32")}
  %mean = stablehlo.constant {_dense(mean, "f32")}
  %var = stablehlo.constant {_dense(var, "f32")}
  %gamma = stablehlo.constant {_dense(gamma, "f32")}
  %beta = stablehlo.constant {_dense(beta, "f32")}
  %dw = stablehlo.constant {_dense(depthwise, "f32")}
  %w = stablehlo.constant {_dense(w, "f32")}
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x6x6x8xf32>
  %bn = "stablehlo.batch_norm_inference"(%c, %gamma, %beta, %mean, %var) {{epsilon = 1.0e-3 : f32, feature_index = 3 : i64}} : (tensor<1x6x6x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
  %dk = stablehlo.reshape %dw : (tensor<3x3x8x1xf32>) -> tensor<3x3x1x8xf32>
  %d = stablehlo.convolution(%bn, %dk) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 8 : i64}} : (tensor<1x6x6x8xf32>, tensor<3x3x1x8xf32>) -> tensor<1x4x4x8xf32>
  %eps = stablehlo.constant dense<1.0e-3> : tensor<8xf32>
  %ve = stablehlo.add %var, %eps : tensor<8xf32>
  %r = stablehlo.rsqrt %ve : tensor<8xf32>
  %shift = stablehlo.multiply %r, %mean : tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %a = stablehlo.add %d, %sb : tensor<1x4x4x8xf32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<5x8xf32>) -> tensor<8x5xf32>
  %y = stablehlo.dot_general %a, %t, contracting_dims = [3] x [0] : (tensor<1x4x4x8xf32>, tensor<8x5xf32>) -> tensor<1x4x4x5xf32>
  return %y : tensor<1x4x4x5xf32>
}}
"""
    compared = fold_and_compare(text, seed=5, batch_norms_left=0, folds=1)
    for op in ("stablehlo.reshape", "stablehlo.transpose", "stablehlo.rsqrt"):
        assert op not in compared.folded, op


def test_a_weight_normalized_kernel_and_a_contracted_bias_are_their_float64_values_rounded_once():
    # g * v / max(sqrt(sum(v * v)), eps) (a reduce and a maximum), and the bias b + t . W (a
    # dot_general reading W, whose scaled copy is the weights: evaluated together).
    rng = np.random.default_rng(5)
    v = rng.normal(0, 1, (4, C)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, C).astype(np.float32)
    t = rng.normal(0, 1, 4).astype(np.float32)
    text = f"""
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x{C}xf32> {{
  %v = stablehlo.constant {_dense(v, "f32")}
  %g = stablehlo.constant {_dense(g, "f32")}
  %t = stablehlo.constant {_dense(t, "f32")}
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %eps = stablehlo.constant dense<1.0e-12> : tensor<{C}xf32>
  %sq = stablehlo.multiply %v, %v : tensor<4x{C}xf32>
  %sum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x{C}xf32>, tensor<f32>) -> tensor<{C}xf32>
  %n = stablehlo.sqrt %sum : tensor<{C}xf32>
  %m = stablehlo.maximum %n, %eps : tensor<{C}xf32>
  %f = stablehlo.divide %g, %m : tensor<{C}xf32>
  %fb = stablehlo.broadcast_in_dim %f, dims = [1] : (tensor<{C}xf32>) -> tensor<4x{C}xf32>
  %w = stablehlo.multiply %v, %fb : tensor<4x{C}xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x{C}xf32>) -> tensor<2x{C}xf32>
  %bias = stablehlo.dot_general %t, %v, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4x{C}xf32>) -> tensor<{C}xf32>
  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{C}xf32>) -> tensor<2x{C}xf32>
  %y = stablehlo.add %d, %b : tensor<2x{C}xf32>
  return %y : tensor<2x{C}xf32>
}}
"""
    folded = stablehlo_bnfold.fold_batch_norm(text)
    inputs = random_inputs(text, 2)
    assert_close(run_on_cpu(text, inputs)[0], run_on_cpu(folded, inputs)[0])
    weights, bias = _operands_of_the_linear_op(folded)
    assert "reduce" not in folded and folded.count("dot_general") == 1
    v64 = v.astype(np.float64)
    norm = np.maximum(np.sqrt((v64 * v64).sum(axis=0)), np.float64(np.float32(1e-12)))
    np.testing.assert_array_equal(weights, round_to(np.dtype(np.float32), v64 * (g / norm)))
    np.testing.assert_array_equal(bias, round_to(np.dtype(np.float32), t.astype(np.float64) @ v64))


def test_a_batched_dot_general_weight_and_a_max_reduced_bias_are_their_float64_values_rounded_once():
    # W[c] = A[c] . B[c] (batching dims first in the result, then the lhs's free dim) and
    # the bias max over M's dimension 1: each one constant, as numpy computes it in float64.
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, (C, 4, 3)).astype(np.float32)
    b = rng.normal(0, 1, (C, 3)).astype(np.float32)
    m = rng.normal(0, 1, (C, 3)).astype(np.float32)
    text = f"""
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x{C}xf32> {{
  %a = stablehlo.constant {_dense(a, "f32")}
  %b = stablehlo.constant {_dense(b, "f32")}
  %m = stablehlo.constant {_dense(m, "f32")}
  %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %w = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<{C}x4x3xf32>, tensor<{C}x3xf32>) -> tensor<{C}x4xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<{C}x4xf32>) -> tensor<2x{C}xf32>
  %bias = stablehlo.reduce(%m init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<{C}x3xf32>, tensor<f32>) -> tensor<{C}xf32>
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{C}xf32>) -> tensor<2x{C}xf32>
  %y = stablehlo.add %d, %bb : tensor<2x{C}xf32>
  return %y : tensor<2x{C}xf32>
}}
"""
    folded = stablehlo_bnfold.fold_batch_norm(text)
    inputs = random_inputs(text, 2)
    assert_close(run_on_cpu(text, inputs)[0], run_on_cpu(folded, inputs)[0])
    weights, bias = _operands_of_the_linear_op(folded)
    assert "reduce" not in folded and folded.count("dot_general") == 1
    w64 = np.einsum("cij,cj->ci", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(weights, round_to(np.dtype(np.float32), w64))
    np.testing.assert_array_equal(bias, m.max(axis=1))
