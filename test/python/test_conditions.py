"""Conditions no other test reached: each case here fails when its condition is loosened.

- Which operand of an input-side consumer holds the affine value, and along which
  dimension it reads it (`input_side`'s walk matches a consumer's `input_layouts` by
  operand number, feature dimension and weights operand): the value as a dot_general's
  rhs folds, with the bias along the result's lhs dimensions; the value as a
  convolution's kernel, as both operands of a dot_general, or contracted along a dimension
  that is not its feature, is not an input to fold into (loosened, each computes something
  else or crashes the pass).
- A `dense_resource` blob of integers is left as it is, while float blobs beside it become
  `dense` constants (`io.resources`).
- The output's temporary file is made beside the output, never in the system temp
  directory: a rename across filesystems would not be atomic (`output`).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from helpers import assert_close, random_inputs, run_on_cpu

import stablehlo_bnfold
from stablehlo_bnfold.output import write_output

_MAP = """
  %s = stablehlo.constant dense<[1.5, -0.5, 2.0, 0.75]> : tensor<4xf32>
  %t = stablehlo.constant dense<[0.25, -1.0, 0.5, 0.125]> : tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [{dim}] : (tensor<4xf32>) -> {type}
  %tb = stablehlo.broadcast_in_dim %t, dims = [{dim}] : (tensor<4xf32>) -> {type}
  %m = stablehlo.multiply %{value}, %sb : {type}
  %y = stablehlo.add %m, %tb : {type}"""
"""y = value * s + t along dimension `dim` of `value` (4 channels)."""

_W = "dense<[[0.5, -1.25, 2.0, 0.125], [1.5, 0.25, -0.75, 3.0], [-2.0, 1.0, 0.375, -0.5], [0.625, -0.25, 1.75, -1.5], [0.0625, 2.5, -0.875, 1.125]]> : tensor<5x4xf32>"

CONSUMERS = {
    # W[5, 4] . y[3, 4] contracting y's feature (1) with W's 1: folds into W, the bias W . t
    # along the result's first dimension (W's free one).
    "the value as a dot_general's rhs": (
        "func.func @main(%x: tensor<3x4xf32>) -> tensor<5x3xf32> {"
        + _MAP.format(dim=1, type="tensor<3x4xf32>", value="x")
        + f"\n  %w = stablehlo.constant {_W}"
        "\n  %d = stablehlo.dot_general %w, %y, contracting_dims = [1] x [1] : (tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<5x3xf32>"
        "\n  return %d : tensor<5x3xf32>\n}",
        1,
    ),
    # conv(x, y): y, per channel along its dimension 3 (the kernel's output feature), is the
    # kernel; the lhs's input feature is dimension 3 too.
    "the value as a convolution's kernel": (
        "func.func @main(%x: tensor<1x3x3x4xf32>, %k: tensor<1x1x4x4xf32>) -> tensor<1x3x3x4xf32> {"
        + _MAP.format(dim=3, type="tensor<1x1x4x4xf32>", value="k")
        + "\n  %c = stablehlo.convolution(%x, %y) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x3x4xf32>"
        "\n  return %c : tensor<1x3x3x4xf32>\n}",
        0,
    ),
    # y^T . y: the value is both operands, contracted along its rows.
    "the value as both operands": (
        "func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {"
        + _MAP.format(dim=1, type="tensor<4x4xf32>", value="x")
        + "\n  %d = stablehlo.dot_general %y, %y, contracting_dims = [0] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>"
        "\n  return %d : tensor<4x4xf32>\n}",
        0,
    ),
    # y[4, 4] per channel along 1, read by two dense layers: one contracts the channels,
    # the other dimension 0 (the channels are its result's rows, which the input side
    # cannot take): neither folds.
    "a second reader contracting another dimension": (
        "func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {"
        + _MAP.format(dim=1, type="tensor<4x4xf32>", value="x")
        + "\n  %w = stablehlo.constant dense<[[0.5, -1.25, 2.0, 0.125, 1.0], [1.5, 0.25, -0.75, 3.0, -1.0], [-2.0, 1.0, 0.375, -0.5, 0.5], [0.625, -0.25, 1.75, -1.5, 2.0]]> : tensor<4x5xf32>"
        "\n  %d1 = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>"
        "\n  %d2 = stablehlo.dot_general %y, %w, contracting_dims = [0] x [0] : (tensor<4x4xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>"
        "\n  return %d1, %d2 : tensor<4x5xf32>, tensor<4x5xf32>\n}",
        0,
    ),
    # y[1, 1, 4, 4], per channel along 3, is the input of one convolution (NHWC, its input
    # feature) and the kernel of another (HWIO: its output feature): neither folds.
    "a second reader taking the value as its kernel": (
        "func.func @main(%x: tensor<1x3x3x4xf32>, %k: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x3x3x4xf32>) {"
        + _MAP.format(dim=3, type="tensor<1x1x4x4xf32>", value="k")
        + f"\n  %w = stablehlo.constant dense<0.5> : tensor<1x1x4x4xf32>"
        "\n  %c1 = stablehlo.convolution(%y, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>"
        "\n  %c2 = stablehlo.convolution(%x, %y) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x3x4xf32>"
        "\n  return %c1, %c2 : tensor<1x1x4x4xf32>, tensor<1x3x3x4xf32>\n}",
        0,
    ),
}


@pytest.mark.parametrize("case", CONSUMERS)
def test_an_input_side_consumer_folds_only_the_operand_and_dimension_it_contracts(case):
    text, folds = CONSUMERS[case]
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert report.folded == folds, report.to_text()
    if folds:
        assert "stablehlo.multiply" not in folded
    inputs = random_inputs(text, seed=3)
    for expected, actual in zip(run_on_cpu(text, inputs), run_on_cpu(folded, inputs), strict=True):
        assert_close(expected, actual)


_NON_FLOAT_RESOURCE = """
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi32>, tensor<2xi1>) {
  %a = stablehlo.constant dense_resource<floats> : tensor<2xf32>
  %i = stablehlo.constant dense_resource<ints> : tensor<2xi32>
  %b = stablehlo.constant dense_resource<bools> : tensor<2xi1>
  %y = stablehlo.multiply %x, %a : tensor<2xf32>
  return %y, %i, %b : tensor<2xf32>, tensor<2xi32>, tensor<2xi1>
}
{-#
  dialect_resources: {
    builtin: {
      floats: "0x040000000000C03F00002040",
      ints: "0x0400000001000000FEFFFFFF",
      bools: "0x010000000100"
    }
  }
#-}
"""


def test_integer_and_boolean_dense_resource_blobs_are_left_as_they_are():
    # The float blob becomes dense<[1.5, 2.5]>; the others are not read as floats.
    folded = stablehlo_bnfold.fold_batch_norm(_NON_FLOAT_RESOURCE)
    assert "dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>" in folded
    assert "dense_resource<ints> : tensor<2xi32>" in folded
    assert "dense_resource<bools> : tensor<2xi1>" in folded
    assert 'ints: "0x0400000001000000FEFFFFFF"' in folded
    assert 'bools: "0x010000000100"' in folded


@pytest.fixture
def system_temp(tmp_path, monkeypatch):
    """A system temp directory of its own (TMPDIR), apart from the output's directory."""
    directory = tmp_path / "system-temp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def _written_from(target) -> list[str]:
    """Write `target` with write_output and return the directory of the file the output
    was written into (read from /proc while it is written)."""
    seen = []

    def emit(file) -> None:
        seen.append(os.path.dirname(os.readlink(f"/proc/self/fd/{file.fileno()}")))
        file.write(b"folded\n")

    write_output(str(target), emit)
    assert target.read_bytes() == b"folded\n"
    return seen


@pytest.mark.parametrize("kind", ["new file", "existing file", "hard-linked file", "no O_TMPFILE"])
def test_the_output_is_written_beside_it_never_in_the_system_temp_directory(kind, tmp_path, system_temp, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "model.mlir"
    if kind != "new file":
        target.write_bytes(b"old\n")
    if kind == "hard-linked file":
        os.link(target, out / "other-name.mlir")  # rewritten in place, through a staging copy
    if kind == "no O_TMPFILE":
        monkeypatch.delattr(os, "O_TMPFILE")  # a named temporary file instead
    assert _written_from(target) == [str(out)]
    assert list(system_temp.iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["model.mlir"] + (["other-name.mlir"] if kind == "hard-linked file" else [])
    )
