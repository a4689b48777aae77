"""The cost rule of weights scaled in the graph on every call (`fold.plan.per_call_larger`,
pass option `fold-larger-weight-arguments`) changes nothing where nothing is an argument
but the data: every lit case whose functions take one argument folds to the same module
and report with the option as without it."""

from __future__ import annotations

import pathlib

import pytest
from helpers import LARGER, op_count
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold import FoldError

TRANSFORMS = pathlib.Path(__file__).resolve().parents[1] / "transforms"


def _data_only_cases() -> list[tuple[str, str]]:
    """(name, text) of each `// -----` case of test/transforms whose functions all take at
    most one argument (the data) and which parses."""
    cases = []
    for path in sorted(TRANSFORMS.glob("*.mlir")):
        for index, chunk in enumerate(path.read_text().split("// -----")):
            with make_ir_context():
                try:
                    module = ir.Module.parse(chunk)
                except ir.MLIRError:
                    continue
                functions = [op for op in module.body.operations if op.operation.name == "func.func"]
                if functions and all(len(f.regions[0].blocks[0].arguments) <= 1 for f in functions):
                    cases.append((f"{path.stem}-{index}", chunk))
    return cases


CASES = _data_only_cases()


def test_there_are_data_only_cases_in_every_kind_of_lit_file():
    assert len(CASES) > 100
    assert {name.rsplit("-", 1)[0] for name, _ in CASES} >= {"batch_norm", "decomposed", "input_side", "weight_cost"}


def _fold(text: str, options: str):
    try:
        folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, trusted=True, options=options)
    except FoldError as error:
        return "error", str(error)
    return folded, [(s.location, s.reason) for s in report.skips], [(f.location, f.pattern) for f in report.folds]


@pytest.mark.parametrize("name,text", CASES, ids=[name for name, _ in CASES])
def test_the_option_changes_nothing_where_only_the_data_is_an_argument(name, text):
    assert _fold(text, "") == _fold(text, LARGER)


BN_WITH_ARGUMENTS = """
func.func @main(%x: tensor<1x8x8x4xf32>, %k: tensor<3x3x4x8xf32>, %scale: tensor<8xf32>,
                %offset: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-05 : f32, feature_index = 3 : i64} : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
"""


def test_a_batch_norm_inference_of_arguments_is_not_folded_into_more_ops_than_it_is():
    # torch_xla's form: the batch norm is one op; computing its scale, the scaled kernel and
    # the bias in the graph on every call takes about ten (ResNet-18: 100 ops became 172).
    folded, report = stablehlo_bnfold.fold_batch_norm(BN_WITH_ARGUMENTS, with_report=True)
    assert op_count(folded) == op_count(BN_WITH_ARGUMENTS)
    assert "would build more ops than it removes" in report.to_text()
    larger, report = stablehlo_bnfold.fold_batch_norm(BN_WITH_ARGUMENTS, with_report=True, options=LARGER)
    assert "batch_norm_inference" not in larger and report.folded == 1
