"""`verify`, `fold_batch_norm(verify=True)` and `--verify` catch a corrupted fold."""

from __future__ import annotations

import numpy as np
import pytest

import stablehlo_bnfold
from stablehlo_bnfold import cli
from stablehlo_bnfold.patterns import affine

from helpers import read_testdata

MODULE = "handwritten_nhwc_hwio_f32.mlir"


@pytest.fixture
def corrupt_folds(monkeypatch):
    """Make every exact fold change one element of the folded kernel, as a subtly wrong
    pass would."""
    real = affine.scale_along

    def one_element_off(*args, **kwargs):
        values = real(*args, **kwargs)
        values = values.copy()
        values.reshape(-1)[0] += 0.5
        return values

    monkeypatch.setattr(affine, "scale_along", one_element_off)


def test_verify_passes_a_correct_fold_and_names_each_output():
    text = read_testdata(MODULE)
    result = stablehlo_bnfold.verify(text, stablehlo_bnfold.fold_batch_norm(text))
    assert result.ok and result.verified
    assert [o.index for o in result.outputs] == [0]
    assert result.outputs[0].tolerance == 1e-6
    assert result.outputs[0].max_relative_error <= 1e-6


def test_verify_catches_a_fold_with_one_kernel_element_changed(corrupt_folds):
    text = read_testdata(MODULE)
    folded = stablehlo_bnfold.fold_batch_norm(text)
    result = stablehlo_bnfold.verify(text, folded)
    assert result.verified and not result.ok
    assert result.outputs[0].max_relative_error > 1e-3


def test_fold_with_verify_raises_and_leaves_an_ir_module_unchanged(corrupt_folds):
    from jax._src.interpreters.mlir import make_ir_context
    from jaxlib.mlir import ir

    text = read_testdata(MODULE)
    with make_ir_context():
        module = ir.Module.parse(text)
        before = str(module)
        with pytest.raises(stablehlo_bnfold.FoldError, match="fold not verified: output 0"):
            stablehlo_bnfold.fold_batch_norm(module, verify=True)
        assert str(module) == before


def test_verify_says_not_verified_for_a_module_xla_cannot_be_given_inputs_for():
    dynamic = """
    func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %arg0 : tensor<?x4xf32>
    }"""
    result = stablehlo_bnfold.verify(dynamic, dynamic)
    assert not result.verified and not result.ok
    assert str(result) == "not verified: main has arguments of dynamic shape"


def test_verify_treats_a_nan_where_the_original_has_a_number_as_a_failure():
    from stablehlo_bnfold.verification import _relative_error

    assert _relative_error(np.array([1.0, np.nan]), np.array([1.0, np.nan])) == 0.0
    assert _relative_error(np.array([1.0, 2.0]), np.array([1.0, np.nan])) == float("inf")


def test_cli_verify_exits_3_and_writes_nothing_on_a_corrupted_fold(corrupt_folds, tmp_path, capsys):
    source = tmp_path / "model.mlir"
    source.write_text(read_testdata(MODULE))
    out = tmp_path / "out.mlir"
    code = cli.main([str(source), "--stablehlo-fold-batch-norm", "--verify", "-o", str(out)])
    assert code == cli.EXIT_VERIFY_FAILED == 3
    assert not out.exists()
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{source}: output 0 (float32): max relative error")
    assert err[0].endswith(": FAILED")
    assert err[-1] == f"{source}: verification FAILED (1 outputs, 3 trials)"


def test_cli_verify_prints_a_passing_line_per_output_and_writes_the_output(tmp_path, capsys):
    source = tmp_path / "model.mlir"
    source.write_text(read_testdata(MODULE))
    out = tmp_path / "out.mlir"
    code = cli.main([str(source), "--stablehlo-fold-batch-norm", "--verify", "-o", str(out)])
    assert code == 0
    assert "batch_norm_inference" not in out.read_text()
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"{source}: verification passed (1 outputs, 3 trials)"
    )
