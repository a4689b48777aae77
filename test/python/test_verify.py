"""`verify`, `fold_batch_norm(verify=True)` and `--verify` catch a corrupted fold."""

from __future__ import annotations

import numpy as np
import pytest

import stablehlo_bnfold
from stablehlo_bnfold import cli
from stablehlo_bnfold.verification import NOISE_FACTOR
from stablehlo_bnfold.fold import plan

from helpers import LARGER, read_testdata

MODULE = "handwritten_nhwc_hwio_f32.mlir"


@pytest.fixture
def corrupt_folds(monkeypatch):
    """Make every exact fold change one element of the folded kernel, as a subtly wrong
    pass would."""
    real = plan.scale_along

    def one_element_off(*args, **kwargs):
        values = real(*args, **kwargs)
        values = values.copy()
        values.reshape(-1)[0] += 0.5
        return values

    monkeypatch.setattr(plan, "scale_along", one_element_off)


def test_verify_passes_a_correct_fold_and_names_each_output():
    text = read_testdata(MODULE)
    result = stablehlo_bnfold.verify(text, stablehlo_bnfold.fold_batch_norm(text))
    assert result.ok and result.verified
    assert [o.index for o in result.outputs] == [0]
    check = result.outputs[0]
    assert check.tolerance == max(NOISE_FACTOR * check.noise, 1e-6)
    assert 0 < check.noise < 1e-5 and check.max_relative_error <= check.tolerance


def test_verify_catches_a_fold_with_one_kernel_element_changed(corrupt_folds):
    text = read_testdata(MODULE)
    folded = stablehlo_bnfold.fold_batch_norm(text)
    result = stablehlo_bnfold.verify(text, folded)
    assert result.verified and not result.ok
    assert result.outputs[0].max_relative_error > 1e-3


@pytest.mark.parametrize("dialect", ["stablehlo", "vhlo"])
def test_fold_with_verify_raises_and_leaves_an_ir_module_unchanged(corrupt_folds, dialect):
    # A VHLO module is legalized before folding; that too waits until the fold is proven.
    from jax._src.interpreters.mlir import make_ir_context
    from jaxlib.mlir import ir, passmanager
    from jaxlib.mlir.dialects import stablehlo

    text = read_testdata(MODULE)
    with make_ir_context():
        module = ir.Module.parse(text)
        if dialect == "vhlo":
            stablehlo.register_stablehlo_passes()
            legalize = "builtin.module(stablehlo-legalize-to-vhlo)"
            passmanager.PassManager.parse(legalize).run(module.operation)
            assert "vhlo.func_v1" in str(module)
        before = str(module)
        with pytest.raises(stablehlo_bnfold.FoldError, match=r"^<input>: verification FAILED \(1 outputs, 3 trials\): output 0 .*: FAILED$"):
            stablehlo_bnfold.fold_batch_norm(module, verify=True)
        assert str(module) == before


def test_verify_says_it_cannot_verify_here_a_module_without_main():
    other = """
    func.func @other(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      return %arg0 : tensor<4xf32>
    }"""
    result = stablehlo_bnfold.verify(other, other)
    assert not result.verified and not result.ok
    assert str(result) == "cannot verify here: no function named main"


DOUBLED = """
func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}"""
"""A module to verify others against: main returns 2 * x."""


def test_verify_treats_a_nan_where_the_original_has_a_number_as_a_failure():
    one_nan = """
    func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %c = stablehlo.constant dense<[[2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 0x7FC00000]]> : tensor<2x4xf32>
      %0 = stablehlo.multiply %arg0, %c : tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    }"""
    assert stablehlo_bnfold.verify(DOUBLED, DOUBLED).ok
    result = stablehlo_bnfold.verify(DOUBLED, one_nan)
    assert result.verified and not result.ok
    assert result.outputs[0].max_relative_error == float("inf")


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


# --- one verification for every export the pass accepts --------------------------------------


def _conv_batch_norm(x):
    """A convolution and Flax's decomposed batch norm, constants of the export."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(11)
    kernel = rng.standard_normal((3, 3, 4, 8)).astype(np.float32) / 6
    scale, mean = rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (y - mean) * (jax.lax.rsqrt(jnp.float32(1.5) + 1e-5) * scale) + 0.25


@pytest.mark.parametrize("kind", ["symbolic batch", "multi-platform"])
def test_an_export_verifies_alike_through_the_api_and_the_command(kind, tmp_path, capsys):
    import jax
    from jax import export

    if kind == "symbolic batch":
        (batch,) = export.symbolic_shape("b")
        exported = export.export(jax.jit(_conv_batch_norm))(jax.ShapeDtypeStruct((batch, 8, 8, 4), np.float32))
    else:  # the CPU lowering is not the first: a bare module runs the first one's
        exported = export.export(jax.jit(_conv_batch_norm), platforms=("cuda", "cpu"))(
            jax.ShapeDtypeStruct((2, 8, 8, 4), np.float32)
        )
    folded = stablehlo_bnfold.fold_batch_norm(exported, verify=True)
    api = stablehlo_bnfold.verify(exported, folded)
    assert api.ok, api.lines()
    (tmp_path / "model.jax").write_bytes(exported.serialize())
    (tmp_path / "model.stablehlo").write_bytes(exported.mlir_module_serialized)
    capsys.readouterr()
    for name in ("model.jax", "model.stablehlo"):
        path = tmp_path / name
        code = cli.main([str(path), "--stablehlo-fold-batch-norm", "--verify", "-o", str(tmp_path / "out")])
        assert code == 0, name
        lines = capsys.readouterr().err.splitlines()
        assert lines[-1] == f"{path}: verification passed (1 outputs, 3 trials)", lines


SHARDED = """
import sys, jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
sys.path.insert(0, sys.argv[2])
from test_verify import _conv_batch_norm
mesh = Mesh(np.array(jax.devices()), ("data",))
batch = NamedSharding(mesh, P("data"))
f = jax.jit(_conv_batch_norm, in_shardings=batch, out_shardings=batch)
exported = jax.export.export(f)(jax.ShapeDtypeStruct((4, 8, 8, 4), np.float32))
open(sys.argv[1], "wb").write(exported.serialize())
"""


def test_a_sharded_export_verifies_on_its_devices_through_the_api_and_the_command(tmp_path, capsys):
    import os
    import pathlib
    import subprocess
    import sys

    import jax
    from jax import export

    path = tmp_path / "model.jax"
    environment = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", SHARDED, str(path), str(pathlib.Path(__file__).parent)],
                   env=environment, check=True, timeout=300)
    exported = export.deserialize(bytearray(path.read_bytes()))
    assert exported.nr_devices == 2 and len(jax.devices("cpu")) == 1
    folded = stablehlo_bnfold.fold_batch_norm(exported, verify=True)  # raised before
    api = stablehlo_bnfold.verify(exported, folded)
    assert api.ok, api.lines()
    code = cli.main([str(path), "--stablehlo-fold-batch-norm", "--verify", "--emit-bytecode", "-o", str(tmp_path / "f.jax")])
    assert code == 0
    said = capsys.readouterr().err.splitlines()
    assert said == [f"{path}: {line}" for line in api.lines()]


def test_verify_never_passes_an_original_whose_outputs_are_not_finite():
    logarithm = """
    func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %0 = stablehlo.log %arg0 : tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    }"""
    result = stablehlo_bnfold.verify(logarithm, logarithm)
    assert not result.ok
    assert str(result) == "cannot verify here: output 0 of the original is not finite on random inputs"


def _deep_dense_network(layers: int, width: int) -> str:
    """`layers` dense layers, weights as arguments, each with a batch norm and a ReLU."""
    vector = f"tensor<{width}xf32>"
    act = f"tensor<4x{width}xf32>"
    weights = ", ".join(f"%w{n}: tensor<{width}x{width}xf32>" for n in range(layers))
    lines = [f"func.func @main(%x: {act}, {weights}) -> {act} {{",
             f"  %s = stablehlo.constant dense<1.0> : {vector}",
             f"  %m = stablehlo.constant dense<0.0> : {vector}",
             f"  %zero = stablehlo.constant dense<0.0> : {act}"]
    value = "%x"
    for n in range(layers):
        lines += [
            f"  %d{n} = stablehlo.dot_general {value}, %w{n}, contracting_dims = [1] x [0] : ({act}, tensor<{width}x{width}xf32>) -> {act}",
            f'  %b{n} = "stablehlo.batch_norm_inference"(%d{n}, %s, %m, %m, %s) {{epsilon = 1.0e-5 : f32, feature_index = 1 : i64}} : ({act}, {vector}, {vector}, {vector}, {vector}) -> {act}',
            f"  %r{n} = stablehlo.maximum %b{n}, %zero : {act}",
        ]
        value = f"%r{n}"
    lines += [f"  return {value} : {act}", "}"]
    return "\n".join(lines)


def test_verify_draws_weight_arguments_at_a_trained_networks_scale():
    # Standard normal weights grow the activations by about sqrt(width / 2) a layer: 8^50
    # overflows float32, and an output of infinities compared nothing. He-scaled weights
    # keep them of order one, so the fold is really compared.
    text = _deep_dense_network(layers=50, width=128)
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, options=LARGER)
    assert report.folded == 50
    result = stablehlo_bnfold.verify(text, folded)
    assert result.ok, result.lines()
    assert 0 < result.outputs[0].max_relative_error <= result.outputs[0].tolerance


def test_verify_fails_a_folded_module_whose_output_element_type_differs():
    # The same values, widened to f64: a fold that changes main's result type changes the
    # calling convention, however close the numbers.
    widened = """
    func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf64> {
      %0 = stablehlo.add %arg0, %arg0 : tensor<2x4xf32>
      %1 = stablehlo.convert %0 : (tensor<2x4xf32>) -> tensor<2x4xf64>
      return %1 : tensor<2x4xf64>
    }"""
    result = stablehlo_bnfold.verify(DOUBLED, widened)
    assert result.verified and not result.ok
    assert result.outputs[0].max_relative_error == float("inf")
