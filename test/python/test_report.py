"""report.describe_location: names as written, whatever MLIR's printer escapes; results frozen.

MLIR prints a location's file name escaped (llvm::printEscapedString): a byte outside
printable ASCII or a double quote as a backslash and two hex digits, a backslash as two
backslashes. The report shows the name as written. The expected strings are the names the
locations were made with, not anything the package computes.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

from stablehlo_bnfold import FoldReport
from stablehlo_bnfold.report import Fold, Skip, describe_location

NAMES = [
    "plain.mlir",
    'with "quotes".mlir',
    "mödel.mlir",
    "模型.mlir",
    "dir\\model.mlir",  # a backslash: printed as two
    "dir\\22.mlir",  # a backslash then "22": not the escape of a quote
    "tab\there.mlir",
    "\\",
]


@pytest.mark.parametrize("name", NAMES, ids=[ascii(n) for n in NAMES])
def test_a_file_location_is_described_with_its_name_as_written(name):
    with make_ir_context():
        location = ir.Location.file(name, 12, 5)
        assert describe_location(location) == f"{name}:12:5", str(location)


@pytest.mark.parametrize("name", NAMES, ids=[ascii(n) for n in NAMES])
def test_a_name_location_is_described_as_written(name):
    with make_ir_context():
        assert describe_location(ir.Location.name(name)) == name


def test_the_parser_standard_input_name_becomes_the_source():
    with make_ir_context():
        assert describe_location(ir.Location.file("-", 3, 1), "model.mlir") == "model.mlir:3:1"


def test_report_records_are_frozen():
    report = FoldReport()
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.folds = ()
    fold = Fold("m.mlir:1:1", "fold_bn_into_linear", "stablehlo.batch_norm_inference", "stablehlo.convolution")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fold.location = "elsewhere"
    skip = Skip("m.mlir:1:1", "fold_bn_into_linear", "stablehlo.batch_norm_inference", "why")
    with pytest.raises(dataclasses.FrozenInstanceError):
        skip.reason = "another"


def test_a_skip_of_an_erased_op_is_not_reported_for_a_new_op_at_its_address():
    # Report keys are op addresses: an op built where a skipped one was erased takes over
    # its address, and the old skip (its location and reason) must not be reported for it.
    from stablehlo_bnfold.report import Recorder

    with make_ir_context():
        module = ir.Module.parse(
            "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %y = stablehlo.add %x, %x : tensor<2xf32>\n"
            "  return %y : tensor<2xf32>\n}"
        )
        (add,) = [op for op in module.body.operations[0].regions[0].blocks[0].operations
                  if op.operation.name == "stablehlo.add"]
        kept = Recorder(source="m.mlir")
        kept.skip(add, "a_pattern", "some reason")
        assert [s.reason for s in kept.finish(module).skips] == ["some reason"]
        reused = Recorder(source="m.mlir")
        reused.skip(add, "a_pattern", "some reason")
        reused.created(add.operation)  # as when a new op gets the erased op's address
        assert reused.finish(module).skips == ()



def test_a_fold_through_a_relu_names_the_op_it_passed_and_other_lines_stay_as_they_were():
    plain = Fold("m.mlir:1:1", "fold_bn_into_linear", "stablehlo.batch_norm_inference", "stablehlo.convolution")
    through = Fold(
        "m.mlir:2:1", "fold_scale_through_relu", "stablehlo.batch_norm_inference",
        "stablehlo.convolution", "stablehlo.maximum",
    )
    report = FoldReport((plain, through))
    assert report.to_text().splitlines()[:2] == [
        "m.mlir:1:1: folded stablehlo.batch_norm_inference into stablehlo.convolution [fold_bn_into_linear]",
        "m.mlir:2:1: folded stablehlo.batch_norm_inference into stablehlo.convolution"
        " through stablehlo.maximum [fold_scale_through_relu]",
    ]
    folds = json.loads(report.to_json())["folds"]
    assert "through" not in folds[0]
    assert folds[1]["through"] == "stablehlo.maximum"


def test_a_fold_into_narrow_weights_is_marked_rounded_again_in_text_and_json():
    plain = Fold("m.mlir:1:1", "fold_precision_island", "stablehlo.convert", "stablehlo.convolution")
    narrow = Fold(
        "m.mlir:2:1", "fold_precision_island", "stablehlo.convert", "stablehlo.dot_general",
        "stablehlo.transpose", "bf16",
    )
    report = FoldReport((plain, narrow))
    assert report.to_text().splitlines()[:2] == [
        "m.mlir:1:1: folded stablehlo.convert into stablehlo.convolution [fold_precision_island]",
        "m.mlir:2:1: folded stablehlo.convert into stablehlo.dot_general through"
        " stablehlo.transpose (rounded again in bf16) [fold_precision_island]",
    ]
    folds = json.loads(report.to_json())["folds"]
    assert "rounded_again" not in folds[0]
    assert folds[1]["rounded_again"] == "bf16"


# --- one line per norm ------------------------------------------------------------------

_CONV = (
    "stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} "
    "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) "
    "-> tensor<1x4x4x3xf32>"
)

TWO_DECOMPOSED_NORMS = f"""
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {{
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %beta = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %ib = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %bb = stablehlo.broadcast_in_dim %beta, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = {_CONV}
  %s = stablehlo.subtract %c, %mb : tensor<1x4x4x3xf32>
  %m = stablehlo.multiply %s, %ib : tensor<1x4x4x3xf32>
  %y = stablehlo.add %m, %bb : tensor<1x4x4x3xf32>
  %z = stablehlo.multiply %y, %ib : tensor<1x4x4x3xf32>
  return %z : tensor<1x4x4x3xf32>
}}
"""


def test_a_decomposed_batch_norm_is_one_line_and_the_summary_counts_norms():
    import stablehlo_bnfold

    _, report = stablehlo_bnfold.fold_batch_norm(TWO_DECOMPOSED_NORMS, with_report=True)
    lines = report.to_text().splitlines()
    assert report.folded == 4  # ops: subtract, multiply, add, and the scale after them
    assert len(lines) == 3, lines  # two norms, then the summary
    assert "folded stablehlo.subtract, stablehlo.multiply, stablehlo.add into stablehlo.convolution" in lines[0]
    assert lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (4 ops folded); 3 activation-sized ops removed"
    summary = json.loads(report.to_json())["summary"]
    assert summary == {
        "norms": 2, "folded_whole": 2, "folded_partly": 0, "left": 0, "ops_folded": 4, "merges": 0,
        "activation_ops_removed": 3,  # subtract, multiply, add, multiply; a bias add built
    }


TWO_NORMS_WITH_WEIGHT_ARGUMENTS = f"""
func.func @main(%k: tensor<1x1x2x3xf32>, %mean: tensor<3xf32>, %inv: tensor<3xf32>, %beta: tensor<3xf32>,
                %x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {{
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %ib = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %bb = stablehlo.broadcast_in_dim %beta, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c = {_CONV}
  %s = stablehlo.subtract %c, %mb : tensor<1x4x4x3xf32>
  %m = stablehlo.multiply %s, %ib : tensor<1x4x4x3xf32>
  %y = stablehlo.add %m, %bb : tensor<1x4x4x3xf32>
  %z = stablehlo.multiply %y, %ib : tensor<1x4x4x3xf32>
  return %z : tensor<1x4x4x3xf32>
}}
"""


def test_the_activation_sized_ops_removed_do_not_count_the_weights_scaled_in_the_graph():
    # Weights as arguments: the fold computes W * s and the bias in the graph, and
    # broadcasts of the statistics were there before: none of them is computed from the
    # data (the last argument), so only the chain on the activation counts, as with
    # constants (a kernel of 1x1x2x3 has the shape of an activation).
    import stablehlo_bnfold

    _, report = stablehlo_bnfold.fold_batch_norm(TWO_NORMS_WITH_WEIGHT_ARGUMENTS, with_report=True)
    assert report.folded == 4
    assert report.summary()["activation_ops_removed"] == 3
    assert str(report).endswith("(4 ops folded); 3 activation-sized ops removed")


def test_merged_reports_keep_the_norms_left_of_each_chunk_apart():
    # --split-input-file: each chunk's recorder numbers its chains from 1; a norm refused at
    # two of its ops (a line per pattern) in one chunk is not the one of another chunk.
    def chunk(line: int) -> FoldReport:
        return FoldReport(skips=(
            Skip(f"m.mlir:{line}:1", "fold_subtrahend_into_bias", "stablehlo.subtract", "why", chain=1),
            Skip(f"m.mlir:{line + 2}:1", "fold_input_affine_into_conv", "stablehlo.add", "why", chain=1),
        ))

    merged = chunk(1).merged(chunk(10))
    assert [len(norm.skips) for norm in merged.norms()] == [2, 2]
    assert str(merged).startswith("2 norms: 0 folded whole, 0 folded partly, 2 left")


def test_merged_reports_add_their_activation_sized_ops_removed():
    # --split-input-file: one report per chunk, merged.
    merged = FoldReport(activation_ops_removed=2).merged(FoldReport(activation_ops_removed=1))
    assert merged.activation_ops_removed == 3
    assert str(merged) == "0 norms: 0 folded whole, 0 folded partly, 0 left (0 ops folded); 3 activation-sized ops removed"
    assert str(FoldReport(activation_ops_removed=1)).endswith("; 1 activation-sized op removed")


FINAL_FORM_BIAS_ADD_READ_TWICE = """
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %k2 = stablehlo.constant dense<0.25> : tensor<1x1x3x3xf32>
  %b = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = stablehlo.add %c, %bb : tensor<1x4x4x3xf32>
  %d = stablehlo.convolution(%a, %k2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32>
  %r = stablehlo.add %d, %a : tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}
"""


def test_a_bias_add_in_its_final_form_is_no_norm_left():
    # The input side cannot move the bias into the next convolution, since the residual add
    # reads it too; it is the first convolution's bias, already L(x, W) +
    # broadcast_in_dim(b), no norm left: nothing to report (MobileNetV3's project layers).
    import stablehlo_bnfold

    _, report = stablehlo_bnfold.fold_batch_norm(FINAL_FORM_BIAS_ADD_READ_TWICE, with_report=True)
    assert report.skips == ()
    assert str(report) == "0 norms: 0 folded whole, 0 folded partly, 0 left (0 ops folded); 0 activation-sized ops removed"


SQUEEZE_EXCITE_GATE = """
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x2xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  %gate = stablehlo.logistic %sum : tensor<1x2xf32>
  %gb = stablehlo.broadcast_in_dim %gate, dims = [0, 3] : (tensor<1x2xf32>) -> tensor<1x4x4x2xf32>
  %gated = stablehlo.multiply %c, %gb : tensor<1x4x4x2xf32>
  return %gated : tensor<1x4x4x2xf32>
}
"""


def test_a_squeeze_excite_gate_is_no_norm_left_but_says_why_at_the_op():
    # The gate is a per-channel value computed from the data, not a parameter: no norm
    # (MobileNetV3Small's nine gates read '9 left' with every batch norm folded).
    import stablehlo_bnfold

    _, report = stablehlo_bnfold.fold_batch_norm(SQUEEZE_EXCITE_GATE, with_report=True)
    lines = report.to_text().splitlines()
    assert str(report) == "0 norms: 0 folded whole, 0 folded partly, 0 left (0 ops folded); 0 activation-sized ops removed"
    assert len(lines) == 2 and "per-channel value is computed from the data" in lines[0], lines
    data = json.loads(report.to_json())
    assert data["norms"] == [] and data["summary"]["left"] == 0
    assert [entry["op"] for entry in data["not_norms"]] == ["stablehlo.multiply"]


def _budget_passing_scalar_module() -> str:
    """%n, a scalar read by more ops than is_data_argument's walk visits (as jax.export's
    symbolic batch size is, through every shape computation), broadcast to an
    activation's shape; %x, the data, read by a convolution."""
    adds = "\n".join(f"  %n{i + 1} = stablehlo.add %n{i}, %n{i} : tensor<i32>" for i in range(70))
    return f"""
func.func @main(%n0: tensor<i32>, %x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {{
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %c = {_CONV}
{adds}
  %f = stablehlo.convert %n70 : (tensor<i32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<1x4x4x3xf32>
  return %c, %b : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}}
"""


def test_a_scalar_argument_is_no_data_for_the_activation_sized_count():
    from stablehlo_bnfold.analysis.activations import count_activation_sized, data_arguments
    from stablehlo_bnfold.fold.affine_map import is_data_argument

    with make_ir_context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(_budget_passing_scalar_module())
        function = module.body.operations[0]
        arguments = function.regions[0].blocks[0].arguments
        assert is_data_argument(arguments[0])  # its walk passes the budget
        assert data_arguments(function) == (1,)
        # The convolution only: the broadcast of the scalar is computed from it alone.
        assert count_activation_sized([arguments[1]]) == 1
        assert count_activation_sized([arguments[0], arguments[1]]) == 2


DECOMPOSED_NORM_AFTER_A_PLATFORM_CASE = f"""
func.func @main(%platform: tensor<i32>, %x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {{
  %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %inv = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
  %beta = stablehlo.constant dense<[0.25, -0.5, 1.0]> : tensor<3xf32>
  %c = "stablehlo.case"(%platform) ({{
    %c0 = {_CONV}
    stablehlo.return %c0 : tensor<1x4x4x3xf32>
  }}, {{
    %c1 = {_CONV}
    stablehlo.return %c1 : tensor<1x4x4x3xf32>
  }}) : (tensor<i32>) -> tensor<1x4x4x3xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %ib = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %bb = stablehlo.broadcast_in_dim %beta, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %s = stablehlo.subtract %c, %mb : tensor<1x4x4x3xf32>
  %m = stablehlo.multiply %s, %ib : tensor<1x4x4x3xf32>
  %y = stablehlo.add %m, %bb : tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}}
"""

DECOMPOSED_NORM_IN_A_WHILE_BODY = f"""
func.func @main(%x0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %init = stablehlo.constant dense<0.0> : tensor<1x4x4x3xf32>
  %r:3 = stablehlo.while(%i = %zero, %x = %x0, %acc = %init) : tensor<i64>, tensor<1x4x4x2xf32>, tensor<1x4x4x3xf32>
  cond {{
    %n = stablehlo.constant dense<2> : tensor<i64>
    %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i64>
    %j = stablehlo.add %i, %one : tensor<i64>
    %k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
    %mean = stablehlo.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
    %inv = stablehlo.constant dense<[1.5, 0.5, 2.0]> : tensor<3xf32>
    %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
    %ib = stablehlo.broadcast_in_dim %inv, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
    %c = {_CONV}
    %s = stablehlo.subtract %c, %mb : tensor<1x4x4x3xf32>
    %m = stablehlo.multiply %s, %ib : tensor<1x4x4x3xf32>
    %a = stablehlo.add %acc, %m : tensor<1x4x4x3xf32>
    stablehlo.return %j, %x, %a : tensor<i64>, tensor<1x4x4x2xf32>, tensor<1x4x4x3xf32>
  }}
  return %r#2 : tensor<1x4x4x3xf32>
}}
"""


@pytest.mark.parametrize(
    "module, removed",
    [
        # subtract and multiply go; the add stays as the bias add (jax.export's
        # multi-platform lowering: the platform index selects a branch)
        (DECOMPOSED_NORM_AFTER_A_PLATFORM_CASE, 2),
        # subtract and multiply go, a bias add is built: the loop's data enters the body
        # through its block arguments
        (DECOMPOSED_NORM_IN_A_WHILE_BODY, 1),
    ],
    ids=["after_a_case", "in_a_while_body"],
)
def test_the_activation_sized_ops_removed_count_ops_the_data_reaches_through_regions(module, removed):
    # The data reaches the convolution inside the case's branches or the while's body, and
    # the ops after it through the region's results.
    import stablehlo_bnfold

    _, report = stablehlo_bnfold.fold_batch_norm(module, with_report=True)
    assert report.summary()["norms"] == 1 and report.summary()["folded_whole"] == 1, str(report)
    assert report.summary()["activation_ops_removed"] == removed, str(report)
