"""`verify`, `fold_batch_norm(verify=True)` and `--verify` catch a corrupted fold."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import stablehlo_bnfold
from stablehlo_bnfold import cli
from stablehlo_bnfold.verification import NOISE_FACTOR, NOISE_LIMIT
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


def test_verify_says_it_cannot_verify_here_a_module_whose_shapes_it_cannot_refine(capfd):
    # A `shape` dialect op on a dynamic batch: the runner finds out when it first runs,
    # from jax's refinement, whose MLIR context has no `shape` dialect: its diagnostic is
    # the reason given, not a line on stderr beside "Cannot parse module".
    dynamic = """
    func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %s = shape.shape_of %arg0 : tensor<?x4xf32> -> tensor<2xindex>
      %y = stablehlo.dynamic_broadcast_in_dim %arg0, %s, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
      return %y : tensor<?x4xf32>
    }"""
    result = stablehlo_bnfold.verify(dynamic, dynamic)
    assert not result.verified and not result.ok
    assert str(result) == (
        "cannot verify here: its dynamic shapes cannot be refined: dialect 'shape' is unknown"
    )
    assert capfd.readouterr().err == ""


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


# --- each tolerance at its boundary ------------------------------------------------------------
#
# verify's criterion is err <= max(NOISE_FACTOR * noise, floor of the type). A "folded" module
# that differs from the original by a controlled amount sits just inside or just outside it:
# loosening or tightening a floor or the noise factor turns one of these red.

_MANTISSA_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}
_FLOORS = {"f16": 4 * 2.0**-10, "bf16": 4 * 2.0**-7, "f32": 1e-6, "f64": 1e-6}
"""The floors the docs state (verification's module docstring, README): written here again
so that a change to TOLERANCE shows."""


def _constant_module(element: str, value: float) -> str:
    """main(x) = `value` everywhere, whatever x: moving x by an ulp moves nothing (noise 0),
    so the tolerance is the type's floor."""
    return f"""
    func.func @main(%arg0: tensor<4x8x{element}>) -> tensor<4x8x{element}> {{
      %0 = stablehlo.constant dense<{value!r}> : tensor<4x8x{element}>
      return %0 : tensor<4x8x{element}>
    }}"""


def _just_inside_and_outside(floor: float, element: str) -> tuple[float, float]:
    """The two neighbouring values of the type below 1.0 whose distance from 1.0 is the
    last at most `floor` and the first beyond it (the grid below 1 is 2**-(p + 1))."""
    step = 2.0 ** -(_MANTISSA_BITS[element] + 1)
    steps = int(floor / step)
    return 1.0 - steps * step, 1.0 - (steps + 1) * step


@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
def test_verify_passes_an_error_just_under_the_floor_and_fails_one_just_over(element):
    floor = _FLOORS[element]
    inside, outside = _just_inside_and_outside(floor, element)
    assert 1.0 - inside <= floor < 1.0 - outside
    original = _constant_module(element, 1.0)
    under = stablehlo_bnfold.verify(original, _constant_module(element, inside))
    over = stablehlo_bnfold.verify(original, _constant_module(element, outside))
    assert [o.noise for o in under.outputs + over.outputs] == [0.0, 0.0]
    assert under.outputs[0].tolerance == floor
    assert under.outputs[0].max_relative_error == 1.0 - inside
    assert under.ok, under.lines()
    assert over.verified and not over.ok, over.lines()


# main(x) = sin(a * x): moving x by an ulp moves the output by about a * |x| ulps, which
# puts the noise term above the floor (a per type: 8 * noise above the floor, noise below
# NOISE_LIMIT). The "folded" module multiplies it by 1 + r, which rounds in the element
# type: the margin around 8 * noise is wider than that rounding (half an ulp of the output).
_SINE = {"f64": (1e9, 1e-6), "f32": (100.0, 0.02), "f16": (2.0, 0.1), "bf16": (0.5, 0.2)}


def _sine_module(element: str, a: float, factor: float | None = None) -> str:
    """main(x) = sin(a x) + sin(a x), or with `factor` sin(a x) * factor."""
    last = (
        f"%f = stablehlo.constant dense<{factor!r}> : tensor<4x64x{element}>\n"
        f"      %2 = stablehlo.multiply %1, %f : tensor<4x64x{element}>"
        if factor is not None
        else f"%2 = stablehlo.add %1, %1 : tensor<4x64x{element}>"
    )
    return f"""
    func.func @main(%arg0: tensor<4x64x{element}>) -> tensor<4x64x{element}> {{
      %a = stablehlo.constant dense<{a!r}> : tensor<4x64x{element}>
      %0 = stablehlo.multiply %arg0, %a : tensor<4x64x{element}>
      %1 = stablehlo.sine %0 : tensor<4x64x{element}>
      {last}
      return %2 : tensor<4x64x{element}>
    }}"""


@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
def test_verify_passes_an_error_just_under_eight_times_the_noise_and_fails_one_just_over(element):
    a, margin = _SINE[element]
    original = _sine_module(element, a)
    noise = stablehlo_bnfold.verify(original, original).outputs[0].noise
    tolerance = NOISE_FACTOR * noise
    assert NOISE_FACTOR == 8.0
    assert _FLOORS[element] < tolerance and noise < NOISE_LIMIT  # the noise term decides
    # The original adds sin(a x) to itself: the "folded" one multiplies it by 2 (1 + r).
    under = stablehlo_bnfold.verify(original, _sine_module(element, a, 2 * (1 + tolerance * (1 - margin))))
    over = stablehlo_bnfold.verify(original, _sine_module(element, a, 2 * (1 + tolerance * (1 + margin))))
    assert under.outputs[0].tolerance == tolerance == over.outputs[0].tolerance
    assert under.ok, under.lines()
    assert over.verified and not over.ok, over.lines()


@pytest.fixture
def one_channel_off(monkeypatch):
    """Make every exact fold scale the weights of its last output channel by 1 + 1e-4 too
    much: a small error in one channel, as a slip in one channel's scale would make."""
    real = plan.scale_along

    def last_channel_off(array, scale, axis, dtype):
        scale = np.array(scale, dtype=np.float64)
        scale[-1] *= 1 + 1e-4
        return real(array, scale, axis, dtype)

    monkeypatch.setattr(plan, "scale_along", last_channel_off)


def test_cli_verify_fails_a_fold_with_a_small_error_in_one_output_channel(one_channel_off, tmp_path, capsys):
    # 1e-4 in one of 8 channels: 100x the f32 tolerance, far below the one-element 0.5 of
    # `corrupt_folds`.
    source = tmp_path / "model.mlir"
    source.write_text(read_testdata(MODULE))
    out = tmp_path / "out.mlir"
    code = cli.main([str(source), "--stablehlo-fold-batch-norm", "--verify", "-o", str(out)])
    assert code == cli.EXIT_VERIFY_FAILED
    assert not out.exists()
    line = capsys.readouterr().err.splitlines()[0]
    error = float(line.split("max relative error ")[1].split(" ")[0])
    assert 1e-5 < error < 1e-3 and line.endswith(": FAILED"), line


CLOSED_STDERR = '''
import os, stablehlo_bnfold
os.close(2)
dynamic = """
func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = stablehlo.add %arg0, %arg0 : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}"""
os.write(1, str(stablehlo_bnfold.verify(dynamic, dynamic)).encode())
'''


def test_verify_refines_a_symbolic_batch_in_a_process_whose_stderr_is_closed():
    # What jax's refinement printed is written to stderr as usual; that write failing
    # (file descriptor 2 closed) is no failure to refine.
    done = subprocess.run([sys.executable, "-c", CLOSED_STDERR], capture_output=True, text=True, timeout=120)
    assert done.stdout == "verification passed (1 outputs, 3 trials)", done.stdout + done.stderr
