"""A per-channel constant on the LEFT of a subtract or divide is not the same map as on the right.

`c - L(x)` is `L(x) * -1 + c` and `c / L(x)` is not affine at all; folding either as if the
constant were on the right (`L(x) - c`, `L(x) / c`) is a silent miscompile. For each, after a
convolution and after a dot_general, with and without a bias add, and before a linear op
(the input side), the folded module must compute what the original computes (float64 inputs,
`helpers.TOLERANCE_F64`), and whatever the pass does must be visible: either a fold in the
report that is right, or the module left exactly as MLIR prints it. The same shapes with the
constant on the right are the controls: they do fold, so the left-hand cases are candidates
the patterns look at, not modules they ignore for some other reason. A multiply commutes,
and folds with its constant on either side.
"""

from __future__ import annotations

import pytest
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from helpers import TOLERANCE_F64, random_inputs, relative_error, run_on_cpu

CONV_TYPE = "tensor<1x4x4x3xf64>"
CONV = (
    "%lin = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
    "window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
    f"(tensor<1x5x5x2xf64>, tensor<2x2x2x3xf64>) -> {CONV_TYPE}"
)
CONV_KERNEL = (
    "dense<[[[[0.5, -1.25, 0.75], [1.5, 0.25, -0.5]], [[-0.75, 1.0, 0.375], [0.625, -0.5, 1.25]]], "
    "[[[1.0, 0.5, -0.25], [-1.5, 0.75, 0.5]], [[0.25, -0.625, 1.5], [-1.0, 1.25, -0.75]]]]> "
    ": tensor<2x2x2x3xf64>"
)
DOT_TYPE = "tensor<2x3xf64>"
DOT = f"%lin = stablehlo.dot_general %x, %k, contracting_dims = [1] x [0] : (tensor<2x4xf64>, tensor<4x3xf64>) -> {DOT_TYPE}"
DOT_KERNEL = (
    "dense<[[0.5, -1.25, 0.75], [1.5, 0.25, -0.5], [-0.75, 1.0, 0.375], [0.625, -0.5, 1.25]]> "
    ": tensor<4x3xf64>"
)

LINEAR = {
    # name: (argument type, kernel, the op, result type, feature dimension)
    "conv": ("tensor<1x5x5x2xf64>", CONV_KERNEL, CONV, CONV_TYPE, 3),
    "dot_general": ("tensor<2x4xf64>", DOT_KERNEL, DOT, DOT_TYPE, 1),
}

OPS = {"subtract": "stablehlo.subtract", "divide": "stablehlo.divide"}
MULTIPLY = {"multiply": "stablehlo.multiply"}


def after_linear(linear: str, op: str, constant_on_left: bool, bias: bool) -> str:
    """`op(c, L(x) [+ b])` (or `op(L(x) [+ b], c)`), c a per-channel constant."""
    arg, kernel, line, result, feature = LINEAR[linear]
    body = [f"  %k = stablehlo.constant {kernel}", f"  {line}"]
    y = "%lin"
    if bias:
        body += _bias(result, feature)
        y = "%biased"
    body += [
        "  %c = stablehlo.constant dense<[2.0, -3.0, 0.5]> : tensor<3xf64>",
        f"  %cc = stablehlo.broadcast_in_dim %c, dims = [{feature}] : (tensor<3xf64>) -> {result}",
    ]
    operands = f"%cc, {y}" if constant_on_left else f"{y}, %cc"
    name = {**OPS, **MULTIPLY}[op]
    body.append(f"  %out = {name} {operands} : {result}")
    return "\n".join([f"func.func @main(%x: {arg}) -> {result} {{", *body, f"  return %out : {result}", "}", ""])


def _bias(result: str, feature: int) -> list[str]:
    """`%biased = %lin + broadcast(b)`, b per output feature."""
    return [
        "  %b = stablehlo.constant dense<[0.25, -0.5, 0.125]> : tensor<3xf64>",
        f"  %bb = stablehlo.broadcast_in_dim %b, dims = [{feature}] : (tensor<3xf64>) -> {result}",
        f"  %biased = stablehlo.add %lin, %bb : {result}",
    ]


def before_linear(linear: str, op: str, constant_on_left: bool) -> str:
    """`L(op(c, x)) + b` (or `L(op(x, c)) + b`), c per input feature, the weights constant.
    L has a bias add of its own: a shift folded before L merges into it, so the fold
    removes an activation-sized op (without it, it would add the one it removes)."""
    out_feature = LINEAR[linear][4]
    if linear == "conv":
        arg, kernel, line, result, feature = LINEAR["conv"]
        vector, size = "dense<[2.0, -3.0]> : tensor<2xf64>", 2
        feature = 3
    else:
        arg, kernel, line, result, feature = LINEAR["dot_general"]
        vector, size = "dense<[2.0, -3.0, 0.5, 4.0]> : tensor<4xf64>", 4
        feature = 1
    operands = "%cc, %x" if constant_on_left else "%x, %cc"
    body = [
        f"  %c = stablehlo.constant {vector}",
        f"  %cc = stablehlo.broadcast_in_dim %c, dims = [{feature}] : (tensor<{size}xf64>) -> {arg}",
        f"  %a = {OPS[op]} {operands} : {arg}",
        f"  %k = stablehlo.constant {kernel}",
        "  " + line.replace("(%x, %k)", "(%a, %k)").replace("%x, %k,", "%a, %k,"),
        *_bias(result, out_feature),
    ]
    return "\n".join([f"func.func @main(%x: {arg}) -> {result} {{", *body, f"  return %biased : {result}", "}", ""])


def fold_and_run(text: str, seed: int) -> stablehlo_bnfold.FoldReport:
    """Fold `text`; the folded module computes what `text` computes (float64, 1e-12), and a
    fold that the report does not show leaves the module exactly as MLIR prints it."""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    if report.folded == 0:
        with make_ir_context():
            assert folded == str(ir.Module.parse(text)), "changed without a fold in the report"
    inputs = random_inputs(text, seed)
    (expected,), (actual,) = run_on_cpu(text, inputs), run_on_cpu(folded, inputs)
    error = relative_error(expected, actual)
    assert error <= TOLERANCE_F64, f"relative error {error:.3g} > {TOLERANCE_F64:.3g}\n{folded}"
    return report


CASES = [
    (linear, op, bias)
    for linear in LINEAR
    for op in OPS
    for bias in (False, True)
]
IDS = [f"{op}-{linear}{'-bias' if bias else ''}" for linear, op, bias in CASES]


@pytest.mark.parametrize("linear, op, bias", CASES, ids=IDS)
def test_a_constant_left_of_a_subtract_or_divide_after_a_linear_op_is_not_folded_as_if_right(
    linear, op, bias
):
    fold_and_run(after_linear(linear, op, constant_on_left=True, bias=bias), seed=1)


@pytest.mark.parametrize("linear, op, bias", CASES, ids=IDS)
def test_the_same_constant_on_the_right_folds(linear, op, bias):
    report = fold_and_run(after_linear(linear, op, constant_on_left=False, bias=bias), seed=2)
    assert report.folded >= 1 and not report.skips, report


MULTIPLY_CASES = [(linear, bias) for linear in LINEAR for bias in (False, True)]


@pytest.mark.parametrize(
    "linear, bias", MULTIPLY_CASES, ids=[f"{l}{'-bias' if b else ''}" for l, b in MULTIPLY_CASES]
)
@pytest.mark.parametrize("constant_on_left", [True, False], ids=["c-times-L", "L-times-c"])
def test_a_multiply_folds_with_the_constant_on_either_side(linear, bias, constant_on_left):
    # A multiply commutes: c * L(x) is L(x) * c, and both fold.
    text = after_linear(linear, "multiply", constant_on_left=constant_on_left, bias=bias)
    report = fold_and_run(text, seed=5)
    assert [f.pattern for f in report.folds] == ["fold_scale_into_linear"], report


INPUT_CASES = [(linear, op) for linear in LINEAR for op in OPS]
INPUT_IDS = [f"{op}-before-{linear}" for linear, op in INPUT_CASES]


@pytest.mark.parametrize("linear, op", INPUT_CASES, ids=INPUT_IDS)
def test_a_constant_left_of_a_subtract_or_divide_before_a_linear_op_is_not_folded_as_if_right(linear, op):
    fold_and_run(before_linear(linear, op, constant_on_left=True), seed=3)


@pytest.mark.parametrize("linear, op", INPUT_CASES, ids=INPUT_IDS)
def test_the_same_constant_on_the_right_before_a_linear_op_folds(linear, op):
    report = fold_and_run(before_linear(linear, op, constant_on_left=False), seed=4)
    assert report.folded == 1 and not report.skips, report
