"""Limits that must hold: many functions and deeply nested regions fold without recursion
errors, every candidate found."""

from __future__ import annotations

import stablehlo_bnfold
from helpers import count_batch_norms

CONV_BN = """%c = stablehlo.convolution(%arg0, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %s, %s, %s, %s) {{epsilon = 1.0e-5 : f32, feature_index = 3 : i64}} : (tensor<1x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>"""
CONSTANTS = """%k = stablehlo.constant dense<0.5> : tensor<1x1x2x3xf32>
  %s = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>"""


def test_a_thousand_functions_all_fold():
    function = (
        "func.func @f{i}(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {{\n  "
        + CONSTANTS.replace("{", "{{").replace("}", "}}")
        + "\n  "
        + CONV_BN
        + "\n  return %y : tensor<1x4x4x3xf32>\n}}\n"
    )
    text = "".join(function.format(i=i) for i in range(1000))
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert report.folded == 1000
    assert count_batch_norms(folded) == 0


def test_a_candidate_nested_in_a_hundred_case_regions_folds():
    body = CONV_BN.format() + "\n  stablehlo.return %y : tensor<1x4x4x3xf32>"
    for depth in range(100):
        body = (
            f'%r{depth} = "stablehlo.case"(%p) ({{\n  {body}\n}}) : (tensor<i32>) -> tensor<1x4x4x3xf32>\n'
            f"  stablehlo.return %r{depth} : tensor<1x4x4x3xf32>"
        )
    body = body.rsplit("stablehlo.return", 1)[0] + "return %r99 : tensor<1x4x4x3xf32>"
    text = (
        "func.func @main(%p: tensor<i32>, %arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {\n  "
        + CONSTANTS
        + "\n  "
        + body
        + "\n}\n"
    )
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert report.folded == 1
    assert count_batch_norms(folded) == 0


def test_limits_script_leaves_the_modules_and_their_folded_copies_in_its_workdir(tmp_path):
    # Its --help says it writes the modules there; it used to write them into a temporary
    # folder inside it, removed at the end.
    import pathlib
    import subprocess
    import sys

    script = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "limits.py"
    workdir = tmp_path / "modules"
    run = subprocess.run(
        [sys.executable, str(script), "--gigabytes", "0.001", "--formats", "bytecode", "--workdir", str(workdir)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in workdir.iterdir()) == ["folded.mlirbc", "model.mlirbc"]
