"""Every example module in examples/ folds, verifies and reports through the CLI, as the
README shows (`--stablehlo-fold-batch-norm --report --verify`)."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples").glob("*.mlir"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_each_example_folds_every_batch_norm_and_passes_verification(path):
    result = subprocess.run(
        ["stablehlo-bnfold-opt", str(path), "--stablehlo-fold-batch-norm", "--report", "--verify"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"{path.name}: verification passed" in result.stderr
    assert "not folded" not in result.stderr
    folded = [line for line in result.stderr.splitlines() if ": folded " in line]
    assert folded and result.stderr.rstrip().endswith(f"folded {len(folded)}, skipped 0")
    assert "batch_norm_inference" not in result.stdout


def test_examples_cover_both_sides_of_a_linear_op():
    assert {p.name for p in EXAMPLES} >= {"conv_bn.mlir", "bn_head.mlir"}
