"""The Python API: `stablehlo_bnfold.fold_batch_norm` on every input kind, its report, its
errors, and the one rounding step in `stablehlo_bnfold.constants`."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import warnings
import zipfile

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from helpers import (
    TESTDATA,
    assert_close,
    count_batch_norms,
    fold_and_compare,
    main_input_types,
    random_inputs,
    read_testdata,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import export
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

import stablehlo_bnfold
from stablehlo_bnfold import FoldError, FoldReport, sandbox
from stablehlo_bnfold.constants import read_dense, round_to
from stablehlo_bnfold.verification import TOLERANCE

CONV_BN = "handwritten_nhwc_hwio_f32.mlir"  # one conv + batch norm: folds
MULTI_USER = "handwritten_multi_user_f32.mlir"  # one fold, one skip
CONV_BIAS_BF16 = "handwritten_conv_bias_bf16.mlir"

BF16 = np.dtype(ml_dtypes.bfloat16)
MAGIC = b"ML\xefR"


def _parse(data: str | bytes) -> ir.Module:
    """Parse text or MLIR bytecode in a fresh context that stays usable while the module lives."""
    context = make_ir_context()
    with context:
        return ir.Module.parse(data)


def _bytecode(text: str) -> bytes:
    buffer = io.BytesIO()
    _parse(text).operation.write_bytecode(buffer)
    return buffer.getvalue()


def _portable_artifact(text: str, version: str) -> bytes:
    with make_ir_context():
        return stablehlo.serialize_portable_artifact(ir.Module.parse(text), version)


def _producer(data: bytes) -> str:
    """The producer string of MLIR bytecode: after the magic and a prefix-varint version
    (as many bytes as the first byte has trailing zero bits, plus one), up to a NUL."""
    assert data[:4] == MAGIC
    first = data[4]
    start = 4 + ((first & -first).bit_length() if first else 9)
    return data[start : data.index(b"\0", start)].decode("ascii")


def _folded_text(name: str) -> str:
    return stablehlo_bnfold.fold_batch_norm(read_testdata(name))


# ----- input kinds ---------------------------------------------------------------------------


def test_text_in_gives_text_out_that_computes_the_same_without_the_batch_norm():
    compared = fold_and_compare(read_testdata(CONV_BN), seed=101, batch_norms_left=0)
    assert "stablehlo.convolution" in compared.folded
    assert str(compared.report) == "1 norm: 1 folded whole, 0 folded partly, 0 left (1 op folded); 0 activation-sized ops removed"


def test_bytecode_in_gives_bytecode_out_holding_the_same_fold_as_text():
    folded = stablehlo_bnfold.fold_batch_norm(_bytecode(read_testdata(CONV_BN)))
    assert isinstance(folded, bytes)
    assert folded.startswith(MAGIC)
    assert not _producer(folded).startswith("StableHLO_v")
    assert str(_parse(folded)) == _folded_text(CONV_BN)


@pytest.mark.parametrize("version", ["1.0.0", str(stablehlo.get_current_version())])
def test_portable_artifact_in_gives_portable_artifact_out_for_the_same_stablehlo_version(version):
    artifact = _portable_artifact(read_testdata(CONV_BN), version)
    assert _producer(artifact) == f"StableHLO_v{version}"

    folded = stablehlo_bnfold.fold_batch_norm(artifact)

    assert isinstance(folded, bytes)
    assert _producer(folded) == f"StableHLO_v{version}"
    with make_ir_context() as context:
        # What the artifact holds (VHLO drops attributes at their defaults), folded as text.
        unfolded = str(stablehlo.deserialize_portable_artifact(context, artifact))
        module = stablehlo.deserialize_portable_artifact(context, folded)
        assert str(module) == stablehlo_bnfold.fold_batch_norm(unfolded)


def test_text_given_as_bytes_comes_back_as_bytes():
    # fold_batch_norm promises the type it was given (`_T -> _T`); UTF-8 text in bytes is
    # text, so it comes back as UTF-8 text in bytes.
    folded = stablehlo_bnfold.fold_batch_norm(read_testdata(CONV_BN).encode())
    assert isinstance(folded, bytes)
    assert folded.decode() == _folded_text(CONV_BN)


def test_ir_module_is_rewritten_in_place_and_returned():
    module = _parse(read_testdata(CONV_BN))
    result, report = stablehlo_bnfold.fold_batch_norm(module, with_report=True)
    assert result is module
    assert count_batch_norms(module) == 0
    assert report.folded == 1
    assert str(module) == _folded_text(CONV_BN)


def test_an_ir_module_of_vhlo_ops_is_legalized_and_folded_like_its_stablehlo():
    module = _parse(read_testdata(CONV_BN))
    stablehlo.register_stablehlo_passes()
    with module.context:
        passmanager.PassManager.parse("builtin.module(stablehlo-legalize-to-vhlo)").run(module.operation)
    assert "vhlo.func_v1" in str(module)
    result, report = stablehlo_bnfold.fold_batch_norm(module, with_report=True)
    assert result is module
    assert report.folded == 1
    assert count_batch_norms(module) == 0
    assert "vhlo." not in str(module)


@pytest.mark.parametrize("verify", [False, True])
def test_an_ir_module_that_does_not_verify_raises_fold_error_naming_the_problem(verify):
    # With verify=True the module used to be printed and parsed back for a copy, which
    # raised MLIRError, not FoldError.
    module = _parse(read_testdata(CONV_BN))
    with module.context:  # a second @main: the module's symbol table does not verify
        module.body.operations[0].operation.clone(ip=ir.InsertionPoint(module.body))
    with pytest.raises(FoldError, match=r"^<input>:\d+:\d+: error: redefinition of symbol named 'main'$"):
        stablehlo_bnfold.fold_batch_norm(module, verify=verify)


# ----- jax.export ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported_with_batch_norm() -> export.Exported:
    """An Exported whose module is CONV_BN (conv + batch_norm_inference).

    jax never emits batch_norm_inference, so this exports a convolution with the same
    signature and swaps in CONV_BN as a portable artifact of the same StableHLO version.
    """
    text = read_testdata(CONV_BN)
    ((shape, dtype),) = main_input_types(text)

    def conv(x):
        kernel = jnp.ones((3, 3, shape[-1], 8), dtype)
        return jax.lax.conv_general_dilated(
            x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    exported = export.export(jax.jit(conv))(jax.ShapeDtypeStruct(shape, dtype))
    version = _producer(exported.mlir_module_serialized).removeprefix("StableHLO_v")
    artifact = _portable_artifact(text, version)
    return dataclasses.replace(exported, mlir_module_serialized=artifact)


def test_folding_an_exported_returns_a_new_exported_and_leaves_the_original_untouched(
    exported_with_batch_norm,
):
    original = exported_with_batch_norm
    before = original.mlir_module_serialized

    folded = stablehlo_bnfold.fold_batch_norm(original)

    assert isinstance(folded, export.Exported)
    assert folded is not original
    assert original.mlir_module_serialized == before
    assert count_batch_norms(original.mlir_module()) == 1
    assert count_batch_norms(folded.mlir_module()) == 0
    assert _producer(folded.mlir_module_serialized) == _producer(before)
    assert (folded.in_avals, folded.out_avals) == (original.in_avals, original.out_avals)


def test_folded_exported_calls_like_the_original(exported_with_batch_norm):
    original = exported_with_batch_norm
    folded = stablehlo_bnfold.fold_batch_norm(original)
    (x,) = random_inputs(read_testdata(CONV_BN), seed=102)
    assert_close(np.asarray(original.call(x)), np.asarray(folded.call(x)))


def test_folded_exported_survives_serialize_and_deserialize(exported_with_batch_norm):
    folded = stablehlo_bnfold.fold_batch_norm(exported_with_batch_norm)
    restored = export.deserialize(folded.serialize())
    assert count_batch_norms(restored.mlir_module()) == 0
    (x,) = random_inputs(read_testdata(CONV_BN), seed=103)
    np.testing.assert_array_equal(np.asarray(restored.call(x)), np.asarray(folded.call(x)))


def test_a_serialized_exported_folds_into_a_serialized_exported_that_calls_like_the_original(
    exported_with_batch_norm,
):
    data = bytes(exported_with_batch_norm.serialize())
    folded, report = stablehlo_bnfold.fold_batch_norm(data, with_report=True)
    assert isinstance(folded, bytes) and report.folded == 1
    restored = export.deserialize(bytearray(folded))
    assert count_batch_norms(restored.mlir_module()) == 0
    assert restored.in_avals == exported_with_batch_norm.in_avals
    assert _producer(restored.mlir_module_serialized) == _producer(
        exported_with_batch_norm.mlir_module_serialized
    )
    (x,) = random_inputs(read_testdata(CONV_BN), seed=104)
    assert_close(np.asarray(exported_with_batch_norm.call(x)), np.asarray(restored.call(x)))



@pytest.mark.parametrize("verify", [False, True])
def test_what_exported_serialize_returns_folds_as_is_into_the_same_kind(exported_with_batch_norm, verify):
    # Exported.serialize() returns a bytearray, not bytes: passed on as it is, it folds
    # as its bytes do and comes back a bytearray, which export.deserialize takes.
    data = exported_with_batch_norm.serialize()
    assert isinstance(data, bytearray)
    folded, report = stablehlo_bnfold.fold_batch_norm(data, with_report=True, verify=verify)
    assert isinstance(folded, bytearray) and report.folded == 1
    assert folded == bytearray(stablehlo_bnfold.fold_batch_norm(bytes(data)))
    restored = export.deserialize(folded)
    assert count_batch_norms(restored.mlir_module()) == 0
    (x,) = random_inputs(read_testdata(CONV_BN), seed=105)
    assert_close(np.asarray(exported_with_batch_norm.call(x)), np.asarray(restored.call(x)))

SHARDED_EXPORT = pathlib.Path(__file__).with_name("sharded_export.py")
SAME_CALLING_CONVENTION = (
    "nr_devices", "in_shardings_hlo", "out_shardings_hlo", "in_shardings", "out_shardings",
    "sharding", "sharding_constraints",
)


@pytest.mark.parametrize("form", ["constant", "argument"])
@pytest.mark.parametrize("devices", [2, 4])
def test_a_sharded_export_folds_into_one_that_calls_on_its_mesh_like_the_original(
    tmp_path, devices, form
):
    # jax.export writes Shardy's ops and attributes (sdy.mesh, sdy.sharding,
    # sdy.sharding_constraint) into the artifact as they are, beside VHLO; writing the folded
    # module back once failed ("failed to legalize operation 'func.func'"). The mesh is of
    # CPU devices, whose number is fixed when jax starts: sharded_export.py runs in its own
    # process and says what it saw.
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}"
    run = subprocess.run(
        [sys.executable, str(SHARDED_EXPORT), str(devices), form, str(tmp_path)],
        env={**os.environ, "XLA_FLAGS": flags.strip()},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["folded_count"] == 3, seen["report"]  # subtract, multiply, add: Flax's form
    assert seen["command"] == {"returncode": 0, "stderr": ""}
    original = seen["original"]
    assert original["activation_steps"] == 3 and original["sharding_constraints"] == 2
    assert f"devices=[{devices},1,1,1]" in seen["original_restored"]["in_shardings_hlo"]
    tolerance = TOLERANCE[np.dtype(np.float32)]
    for name, reference in (
        ("folded", original), ("by_command", original), ("restored", seen["original_restored"])
    ):
        folded = seen[name]
        assert {k: folded[k] for k in SAME_CALLING_CONVENTION} == {
            k: reference[k] for k in SAME_CALLING_CONVENTION
        }, name
        assert folded["error"] <= tolerance, (name, folded["error"])
        # What is left on the activation is the one bias add: convolution(x, K') + b'.
        assert folded["activation_steps"] == 1, name


# ----- the report ----------------------------------------------------------------------------


def _batch_norm_position(text: str, result: str) -> str:
    """`line:column` of the op name of the batch norm defining `result`: its location."""
    op = '"stablehlo.batch_norm_inference"'
    ((line, column),) = [
        (i, text_line.index(op) + 1)
        for i, text_line in enumerate(text.splitlines(), 1)
        if text_line.lstrip().startswith(f"{result} = {op}")
    ]
    return f"{line}:{column}"


def test_report_lists_each_fold_and_each_skip_with_location_pattern_and_reason():
    text = read_testdata(MULTI_USER)
    _, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)

    assert isinstance(report, FoldReport)
    assert str(report) == "2 norms: 1 folded whole, 0 folded partly, 1 left (1 op folded); 0 activation-sized ops removed"
    (fold,) = report.folds
    (skip,) = report.skips
    assert fold.location.endswith(":" + _batch_norm_position(text, "%bn1"))
    assert (fold.pattern, fold.op, fold.linear) == (
        "fold_bn_into_linear",
        "stablehlo.batch_norm_inference",
        "stablehlo.convolution",
    )
    assert fold.producer == fold.linear  # its first name, for code written against it
    assert skip.location.endswith(":" + _batch_norm_position(text, "%bn2"))
    assert (skip.pattern, skip.op, skip.reason) == (
        "fold_bn_into_linear",
        "stablehlo.batch_norm_inference",
        "producer result has other users",
    )
    assert "producer result has other users" in report.to_text()
    assert json.loads(report.to_json())["skips"][0]["reason"] == "producer result has other users"


def test_report_is_only_returned_when_asked_for():
    assert isinstance(stablehlo_bnfold.fold_batch_norm(read_testdata(CONV_BN)), str)


# A dense layer at batch 1 with its weights (4x3) and BN statistics passed as arguments: the
# weights have more elements than the [1, 3] activation.
DENSE_BN_ARGUMENTS = """
func.func @main(%x: tensor<1x4xf32>, %w: tensor<4x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>,
                %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %y = "stablehlo.batch_norm_inference"(%d, %s, %o, %m, %v) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
"""


@pytest.mark.parametrize("kind", ["text", "bytes", "module"])
def test_options_are_the_pass_options_for_every_input_kind(kind):
    def fold(options):
        if kind == "module":
            with make_ir_context() as context:
                module = ir.Module.parse(DENSE_BN_ARGUMENTS, context)
                return stablehlo_bnfold.fold_batch_norm(module, with_report=True, options=options)[1]
        data = DENSE_BN_ARGUMENTS if kind == "text" else _bytecode(DENSE_BN_ARGUMENTS)
        return stablehlo_bnfold.fold_batch_norm(data, with_report=True, options=options)[1]

    refused = fold("")
    assert refused.folded == 0
    assert [s.reason for s in refused.skips] == [
        "weights the graph would scale or contract on every call have more elements than the "
        "activation: the fold would move the op onto a larger tensor"
    ]
    assert fold("fold-larger-weight-arguments=true").folded == 1
    assert fold("fold-weight-arguments=false").skips[0].reason == "weights are not a constant"


NARROW_ISLAND = """
func.func @main(%arg0: tensor<2x4xbf16>) -> tensor<2x3xbf16> {
  %k = stablehlo.constant dense<0.75> : tensor<4x3xbf16>
  %s = stablehlo.constant dense<[1.3, 0.7, 3.1]> : tensor<3xf32>
  %d = stablehlo.dot_general %arg0, %k, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %df = stablehlo.convert %d : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %n = stablehlo.multiply %df, %sb : tensor<2x3xf32>
  %y = stablehlo.convert %n : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
"""


@pytest.mark.parametrize("options, folded", [("", 1), ("fold-narrow-weights=true", 1), ("fold-narrow-weights=false", 0)])
def test_fold_narrow_weights_is_a_pass_option_on_by_default(options, folded):
    report = stablehlo_bnfold.fold_batch_norm(NARROW_ISLAND, with_report=True, options=options)[1]
    assert report.folded == folded
    if not folded:
        assert [s.reason for s in report.skips] == [
            "weights have no wider master copy: folding would round them again"
        ]


def test_an_unknown_option_is_a_fold_error_before_anything_is_read():
    with pytest.raises(FoldError, match="unknown option 'fold-larger=1'.*known: fold-larger-weight-arguments"):
        stablehlo_bnfold.fold_batch_norm("not mlir", options="fold-larger=1")


# ----- errors --------------------------------------------------------------------------------


def _truncated_bytecode() -> bytes:
    data = _bytecode(read_testdata(CONV_BN))
    return data[: len(data) // 2]


def _truncated_artifact() -> bytes:
    data = _portable_artifact(read_testdata(CONV_BN), "1.0.0")
    return data[: len(data) // 2]


def test_a_path_is_folded_as_the_bytes_of_its_file_and_gives_the_same_kind_back(tmp_path, exported_with_batch_norm):
    (tmp_path / "model.jax").write_bytes(exported_with_batch_norm.serialize())
    (tmp_path / "model.mlir").write_text(read_testdata(CONV_BN))
    folded_jax, report = stablehlo_bnfold.fold_batch_norm(tmp_path / "model.jax", with_report=True)
    assert report.folded == 1
    folded = export.deserialize(bytearray(folded_jax))
    assert "batch_norm_inference" not in str(folded.mlir_module())
    assert folded.out_avals == exported_with_batch_norm.out_avals
    text = read_testdata(CONV_BN).encode()
    assert stablehlo_bnfold.fold_batch_norm(tmp_path / "model.mlir") == stablehlo_bnfold.fold_batch_norm(text)
    with pytest.raises(FoldError, match=r"^\S*missing.mlir: no such file$"):
        stablehlo_bnfold.fold_batch_norm(tmp_path / "missing.mlir")


def test_report_lines_name_each_op_of_a_jax_export_by_its_place_in_its_function_and_its_layer():
    rng = np.random.default_rng(3)
    kernel = rng.standard_normal((3, 3, 4, 4)).astype(np.float32) / 6
    scale, mean = rng.uniform(0.5, 1.5, 4).astype(np.float32), rng.standard_normal(4).astype(np.float32)

    def model(x):  # two blocks of the same ops: every name but the scope repeats
        for scope in ("block1", "block2"):
            with jax.named_scope(scope):
                y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
                x = (y - mean) * scale + 0.25
        return x

    exported = export.export(jax.jit(model))(jax.ShapeDtypeStruct((1, 8, 8, 4), jnp.float32))
    _, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    assert report.folded == 6
    lines = report.to_text().splitlines()[:-1]
    # One line per norm, at its first op (the subtract), named by its place: two blocks.
    assert [line.split(": ")[0] for line in lines] == ["jit(model)/block1/sub, @main op 8", "jit(model)/block2/sub, @main op 17"]
    assert str(report) == "2 norms: 2 folded whole, 0 folded partly, 0 left (6 ops folded); 4 activation-sized ops removed"
    body = str(exported.mlir_module()).split("func.func public @main", 1)[1].splitlines()
    for fold, (where, _) in zip(report.folds, report.entries()):
        number = int(re.fullmatch(r"@main op (\d+)", fold.position).group(1))
        assert where == f"{fold.location}, {fold.position}"
        assert f"= {fold.op} " in body[number], (fold, body[number])  # op N is line N of @main
    layers = [f["layer"] for f in json.loads(report.to_json())["folds"]]
    assert layers == ["block1"] * 3 + ["block2"] * 3


def test_report_lines_of_text_with_file_locations_name_no_position():
    _, report = stablehlo_bnfold.fold_batch_norm(read_testdata(CONV_BN), with_report=True)
    assert [f.position for f in report.folds] == [""]
    assert "position" not in json.loads(report.to_json())["folds"][0]


BAD_INPUTS = {
    "garbage text": (lambda: "this is not MLIR {", "<input>:1:1: error:"),
    "empty text": (lambda: "", "input is empty"),
    "blank text": (lambda: " \n\t", "input is empty"),
    "empty bytes": (lambda: b"", "input is empty"),
    "random bytes": (lambda: np.random.default_rng(7).bytes(512), "<input>"),
    "random bytes after the bytecode magic": (
        lambda: MAGIC + np.random.default_rng(8).bytes(512),
        "<input>",
    ),
    "truncated bytecode": (_truncated_bytecode, "<input>"),
    "truncated portable artifact": (_truncated_artifact, "<input>"),
    "an int": (lambda: 42, "got int"),
    "None": (lambda: None, "got NoneType"),
    "a memoryview": (lambda: memoryview(_bytecode(read_testdata(CONV_BN))), "got memoryview"),
    "a list of text": (lambda: [read_testdata(CONV_BN)], "got list"),
}


@pytest.mark.parametrize("make, fragment", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_raises_fold_error_with_a_one_line_message_and_prints_nothing(
    make, fragment, capfd
):
    data = make()
    capfd.readouterr()
    with pytest.raises(FoldError) as caught:
        stablehlo_bnfold.fold_batch_norm(data)
    message = str(caught.value)
    assert message and "\n" not in message
    assert fragment in message
    # Library code never prints: the reason belongs in the FoldError, not on stderr.
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("make", [_bytecode, lambda text: _portable_artifact(text, "1.0.0")], ids=["bytecode", "portable"])
def test_binary_input_is_folded_in_a_child_unless_trusted_and_gives_the_same_bytes(monkeypatch, make):
    data = make(read_testdata(CONV_BN))
    children = []
    run = sandbox.run
    monkeypatch.setattr(sandbox, "run", lambda *a, **k: children.append(k["size"]) or run(*a, **k))
    in_child, report = stablehlo_bnfold.fold_batch_norm(data, with_report=True)
    assert children == [len(data)]
    in_process, trusted_report = stablehlo_bnfold.fold_batch_norm(data, with_report=True, trusted=True)
    assert children == [len(data)]
    assert in_child == in_process and report == trusted_report and report.folded == 1
    text = read_testdata(CONV_BN)
    stablehlo_bnfold.fold_batch_norm(text)  # text too: MLIR's parser can crash on it
    assert children == [len(data), len(text)]
    stablehlo_bnfold.fold_batch_norm(text, trusted=True)
    assert children == [len(data), len(text)]


def test_an_exported_is_folded_in_a_child_unless_trusted(monkeypatch, exported_with_batch_norm):
    # A crash of the pass itself must not end the caller's process: an Exported is folded
    # in a child by default, as text and bytes are; trusted=True folds it here.
    children = []
    run = sandbox.run
    monkeypatch.setattr(sandbox, "run", lambda *a, **k: children.append(k["size"]) or run(*a, **k))
    in_child = stablehlo_bnfold.fold_batch_norm(exported_with_batch_norm)
    assert children == [len(exported_with_batch_norm.mlir_module_serialized)]
    in_process = stablehlo_bnfold.fold_batch_norm(exported_with_batch_norm, trusted=True)
    assert children == [len(exported_with_batch_norm.mlir_module_serialized)]
    assert in_child.mlir_module_serialized == in_process.mlir_module_serialized


def test_a_crash_of_the_pass_on_an_exported_is_a_fold_error_and_the_caller_lives(monkeypatch, exported_with_batch_norm):
    # The pass crashing (SIGSEGV) while folding an Exported, as two clamps rebuilt in one
    # forward chain once did: a FoldError, this process goes on.
    from stablehlo_bnfold import session

    monkeypatch.setattr(session, "fold_into", lambda *a, **k: os.kill(os.getpid(), signal.SIGSEGV))
    with pytest.raises(stablehlo_bnfold.FoldError, match="SIGSEGV"):
        stablehlo_bnfold.fold_batch_norm(exported_with_batch_norm)


def test_bytecode_folds_after_this_process_has_used_jaxs_mlir_thread_pool():
    # Bytecode is folded in a forked child (stablehlo_bnfold.sandbox). JAX gives every
    # context one thread pool; once its worker threads have started here, they are missing
    # in the child, and MLIR's verifier there waited for them for ever (found on
    # MobileNetV2; bounded by the read alarm, made 10 s here). In a fresh Python, whose
    # pool only this test starts.
    run = subprocess.run(
        [sys.executable, "-c", f"""
import sys
sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir
import stablehlo_bnfold, stablehlo_bnfold.sandbox
from test_cli import EXAMPLE, bytecode_of
stablehlo_bnfold.sandbox.READ_SECONDS = 10
functions = "\\n".join(
    f"func.func @f{{i}}(%x: tensor<2xf32>) -> tensor<2xf32> {{{{ return %x : tensor<2xf32> }}}}"
    for i in range(8)
)
with make_ir_context():
    ir.Module.parse(functions)  # the verifier hands the functions to JAX's thread pool
folded, report = stablehlo_bnfold.fold_batch_norm(bytecode_of(EXAMPLE.read_text() + functions), with_report=True)
print(folded[:4] == b"ML\\xefR", report)
"""],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "True 2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed\n", "")


# ----- idempotency ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(TESTDATA.glob("*.mlir")), ids=lambda p: p.stem)
def test_folding_twice_gives_the_same_text_as_folding_once(path):
    once = stablehlo_bnfold.fold_batch_norm(path.read_text())
    twice, report = stablehlo_bnfold.fold_batch_norm(once, with_report=True)
    assert twice == once
    assert report.folded == 0


# ----- rounding and constants ----------------------------------------------------------------


def test_round_to_bf16_rounds_once_where_a_cast_through_f32_rounds_twice():
    # Halfway between bf16 1.0 and 1.0078125, plus 2**-30: nearest is 1.0078125. Through
    # f32 the 2**-30 is lost first, and the tie then goes to even: 1.0.
    value = np.array([1 + 2**-8 + 2**-30])
    assert float(value.astype(BF16)[0]) == 1.0  # ml_dtypes' float64 -> bf16 cast
    rounded = round_to(BF16, value)
    assert rounded.dtype == BF16
    assert float(rounded[0]) == 1.0078125
    assert float(round_to(BF16, -value)[0]) == -1.0078125


# (dtype, significand bits including the implicit one, smallest normal exponent)
_FORMATS = {
    "bf16": (BF16, 8, -126),
    "f16": (np.dtype(np.float16), 11, -14),
    "f32": (np.dtype(np.float32), 24, -126),
}


def _nearest_even(value: float, bits: int, min_exponent: int) -> float:
    """`value` rounded to `bits` significant bits, ties to even, as a float64: scaling by
    the target's ulp (a power of two) is exact, and so is np.rint on the scaled value."""
    if value == 0:
        return value
    _, exponent = np.frexp(value)  # value = m * 2**exponent, 0.5 <= |m| < 1
    ulp = 2.0 ** (max(int(exponent) - 1, min_exponent) - (bits - 1))
    with np.errstate(over="ignore"):  # near float64's limit: inf, beyond every target
        return float(np.rint(value / ulp) * ulp)


@pytest.mark.parametrize("name", _FORMATS)
def test_round_to_returns_none_on_overflow_without_a_warning(name):
    dtype = _FORMATS[name][0]
    beyond = 2.0 * float(ml_dtypes.finfo(dtype).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a library reports overflow by returning None
        assert round_to(dtype, np.array([1.0, beyond])) is None
        assert round_to(dtype, np.array([1.0, -beyond])) is None


@pytest.mark.parametrize("name", _FORMATS)
@settings(max_examples=300, derandomize=True, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_round_to_is_one_correct_rounding_to_nearest_even(name, value):
    dtype, bits, min_exponent = _FORMATS[name]
    expected = _nearest_even(value, bits, min_exponent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow has its own test
        rounded = round_to(dtype, np.array([value]))
    if abs(expected) > float(ml_dtypes.finfo(dtype).max):
        assert rounded is None
    else:
        assert rounded is not None and rounded.dtype == dtype
        assert float(rounded[0]) == expected


# Every bf16 bit pattern but the NaNs (a NaN never folds: the pattern skips it first).
_ALL_BF16 = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
_ALL_BF16 = _ALL_BF16[(_ALL_BF16 & 0x7F80) != 0x7F80]
_ALL_BF16 = np.concatenate([_ALL_BF16, np.array([0x7F80, 0xFF80], np.uint16)])  # +-inf


@pytest.mark.parametrize("size, printed", [(100, "decimal"), (len(_ALL_BF16), "hex")])
def test_every_bf16_value_reads_back_exactly_whether_printed_as_decimals_or_hex(size, printed):
    # MLIR prints a dense attribute of up to 100 elements as decimals, a larger one as hex;
    # jaxlib has no buffer view for bf16, so read_dense parses whichever it gets.
    with make_ir_context():
        bf16 = ir.BF16Type.get()
        for start in range(0, len(_ALL_BF16), size):
            bits = _ALL_BF16[start : start + size]
            attr = ir.DenseElementsAttr.get(bits, type=bf16, shape=[len(bits)])
            assert str(attr).startswith('dense<"0x') == (printed == "hex")
            values = read_dense(attr)
            assert values.dtype == BF16
            np.testing.assert_array_equal(values.view(np.uint16), bits)


def _vectors_and_kernel(text: str) -> dict[str, np.ndarray]:
    """The named constants of a generated bf16 module: 1-D decimals, others as hex."""
    out = {}
    for name, body, shape in re.findall(
        r"%(\w+) = stablehlo.constant dense<(.*?)> : tensor<([\dx]+)xbf16>", text
    ):
        dims = tuple(int(d) for d in shape.split("x"))
        if body.startswith('"0x'):
            raw = np.frombuffer(bytes.fromhex(body[3:-1]), dtype="<u2").view(BF16)
        else:
            raw = np.array([float(v) for v in body.strip("[]").split(",")]).astype(BF16)
        out[name] = raw.reshape(dims)
    return out


def test_folded_bf16_weights_and_bias_are_the_float64_values_rounded_once():
    text = read_testdata(CONV_BIAS_BF16)
    c = {k: v.astype(np.float64) for k, v in _vectors_and_kernel(text).items()}
    (epsilon,) = re.findall(r"epsilon = ([-+.e\d]+) : f32", text)
    epsilon = float(np.float32(epsilon))  # the value of the f32 attribute, exactly
    s = c["bn_scale"] / np.sqrt(c["bn_variance"] + epsilon)
    expected_kernel = [_nearest_even(v, 8, -126) for v in (c["conv_k"] * s).reshape(-1)]
    expected_bias = [
        _nearest_even(v, 8, -126)
        for v in c["bn_offset"] + (c["biased_b"] - c["bn_mean"]) * s
    ]

    module = _parse(_folded_text(CONV_BIAS_BF16))
    with module.context:
        ops = module.body.operations[0].regions[0].blocks[0].operations
        conv = next(op for op in ops if op.operation.name == "stablehlo.convolution")
        add = next(op for op in ops if op.operation.name == "stablehlo.add")
        kernel = read_dense(ir.DenseElementsAttr(conv.operands[1].owner.attributes["value"]))
        broadcast = add.operands[1].owner
        bias = read_dense(
            ir.DenseElementsAttr(broadcast.operands[0].owner.attributes["value"])
        )
    np.testing.assert_array_equal(kernel.astype(np.float64).reshape(-1), expected_kernel)
    np.testing.assert_array_equal(bias.astype(np.float64), expected_bias)


# ----- packaging -----------------------------------------------------------------------------


def test_the_wheel_ships_the_license_py_typed_and_a_main_module(tmp_path):
    # Built from a copy, so that the build leaves nothing in the checkout.
    root = pathlib.Path(__file__).resolve().parents[2]
    source = tmp_path / "source"
    shutil.copytree(root / "python", source / "python", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(root / name, source / name)
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("stablehlo_bnfold-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (license_name,) = [n for n in names if n.endswith("/LICENSE")]
        license_text = archive.read(license_name).decode()
        (metadata,) = [archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA")]
    assert {"stablehlo_bnfold/py.typed", "stablehlo_bnfold/__main__.py"} <= set(names)
    assert license_text == (root / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert re.search(r"^License(-Expression)?: Apache-2\.0$", metadata, re.MULTILINE), metadata[:2000]
