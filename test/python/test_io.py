"""`stablehlo_bnfold.io`: reading a file without holding a copy of it, and streaming the
output, give what reading and writing in memory give, for every format."""

from __future__ import annotations

import io
import os
import re
import subprocess

import pytest
from helpers import read_testdata
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo
from test_cli import (
    BYTECODE_MAGIC,
    EXAMPLE,
    bytecode_of,
    oldest_version,
    portable_artifact_of,
    printed,
)

from stablehlo_bnfold import FoldError
from stablehlo_bnfold import io as bnio

FORMATS = {
    "text": (".mlir", lambda: EXAMPLE.read_bytes()),
    "bytecode": (".mlirbc", lambda: bytecode_of(EXAMPLE.read_text())),
    "portable artifact": (".stablehlo", lambda: portable_artifact_of(EXAMPLE.read_text(), oldest_version())),
}


@pytest.mark.parametrize("what", sorted(FORMATS))
def test_load_file_reads_what_load_reads_and_write_streams_what_dump_returns(tmp_path, what):
    suffix, make = FORMATS[what]
    data = make()
    path = tmp_path / f"model{suffix}"
    path.write_bytes(data)
    from_file = bnio.load_file(str(path), bnio.make_context())
    from_memory = bnio.load(data, bnio.make_context())
    assert from_file.format.value == what == from_memory.format.value
    assert from_file.version == from_memory.version == (oldest_version() if what == "portable artifact" else None)
    assert from_file.source == str(path)
    assert str(from_file.module) == str(from_memory.module)
    for fmt in bnio.Format:
        if fmt is bnio.Format.PORTABLE and what != "portable artifact":
            continue  # written for the current version: the same, but not what is compared here
        if fmt is bnio.Format.EXPORTED:
            continue  # only a module that came in an Exported is written as one
        streamed = io.BytesIO()
        assert bnio.write(from_file, streamed, fmt) is fmt
        dumped = bnio.dump(from_memory, fmt)
        if fmt is bnio.Format.TEXT:
            assert streamed.getvalue() == dumped.encode()
        elif what == "text":  # locations name the file, or "-" for text parsed from memory
            assert printed(streamed.getvalue()) == printed(dumped)
            assert str(path).encode() in streamed.getvalue() and str(path).encode() not in dumped
        else:
            assert streamed.getvalue() == dumped
    assert bnio.write(from_file, io.BytesIO()) is from_file.format


def test_written_text_ends_with_exactly_one_newline():
    loaded = bnio.load(EXAMPLE.read_text(), bnio.make_context())
    text = bnio.dump(loaded, bnio.Format.TEXT)
    assert text.endswith("}\n") and not text.endswith("\n\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("directory", "is a directory"),
        (b"", "input is empty"),
        (b"  \n\t\n", "input is empty"),
        (b"func.func @f() {\xff}", "not MLIR text, bytecode or a portable artifact"),
        # The text check reads in 16 MiB pieces: a bad byte far into the file is found.
        (b" " * (40 << 20) + b"\xc3", "not MLIR text, bytecode or a portable artifact"),
    ],
)
def test_load_file_names_the_file_and_the_problem(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "in.mlir"
    if content == "directory":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(FoldError) as raised:
        bnio.load_file("in.mlir", bnio.make_context())
    assert str(raised.value) == f"in.mlir: {message}"


def test_load_file_names_the_file_as_written_in_located_errors(tmp_path, monkeypatch):
    # MLIR escapes a quote in a location's file name as \22; the message shows the name.
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'q"uote.mlir').write_text("func.func @f() {\n  return %x : tensor<2xf32>\n}\n")
    with pytest.raises(FoldError, match=r'^q"uote\.mlir:2:\d+: error: use of undeclared SSA value'):
        bnio.load_file('q"uote.mlir', bnio.make_context())


def test_load_file_reads_a_file_whose_name_is_not_utf8(tmp_path):
    # MLIR takes only UTF-8 names; such a file is read into memory and parsed from there.
    name = os.fsdecode(str(tmp_path).encode() + b"/lat\xe9.mlir")
    with open(name, "wb") as handle:
        handle.write(EXAMPLE.read_bytes())
    loaded = bnio.load_file(name, bnio.make_context())
    assert str(loaded.module) == str(bnio.load(EXAMPLE.read_text(), bnio.make_context()).module)


def test_load_file_reads_a_pipe_once(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    writer = subprocess.Popen(["sh", "-c", f"cat {EXAMPLE} > {tmp_path / 'pipe'}"])
    loaded = bnio.load_file(str(tmp_path / "pipe"), bnio.make_context())
    writer.wait(timeout=60)
    assert str(loaded.module) == str(bnio.load(EXAMPLE.read_text(), bnio.make_context()).module)


def test_sniff_tells_the_formats_apart_from_the_first_bytes():
    assert bnio.sniff(EXAMPLE.read_bytes()[:4096]) == (bnio.Format.TEXT, None)
    assert bnio.sniff(bytecode_of(EXAMPLE.read_text())[:4096]) == (bnio.Format.BYTECODE, None)
    artifact = portable_artifact_of(EXAMPLE.read_text(), oldest_version())
    assert bnio.sniff(artifact[:4096]) == (bnio.Format.PORTABLE, oldest_version())
    assert bnio.sniff(b"") == (bnio.Format.TEXT, None)


def test_read_file_names_the_source_it_was_given(tmp_path):
    with pytest.raises(FoldError, match=r"^shown\.mlir: no such file$"):
        bnio.read_file(str(tmp_path / "missing.mlir"), source="shown.mlir")
    (tmp_path / "x").write_bytes(b"abc")
    assert bnio.read_file(str(tmp_path / "x")) == b"abc"


@pytest.mark.parametrize("version", [oldest_version(), "1.0.0", str(stablehlo.get_current_version())])
@pytest.mark.parametrize("name", ["handwritten_conv_bias_bf16.mlir", "handwritten_two_blocks_f32.mlir", "input_bn_batch_group_f32.mlir"])
def test_a_portable_artifact_written_in_place_is_byte_for_byte_the_one_jaxlib_writes(name, version):
    text = read_testdata(name)
    artifact = portable_artifact_of(text, version)
    by_jaxlib = bnio.dump(bnio.load(artifact, bnio.make_context()))
    streamed = io.BytesIO()
    consumed = bnio.load(artifact, bnio.make_context())
    assert bnio.write(consumed, streamed, consume=True) is bnio.Format.PORTABLE
    assert streamed.getvalue() == by_jaxlib
    assert streamed.getvalue().startswith(BYTECODE_MAGIC) and f"StableHLO_v{version}\0".encode() in by_jaxlib[:40]
    # The module was turned into VHLO to be written; jaxlib's writer leaves its input alone.
    assert "vhlo." in str(consumed.module) and "vhlo." not in str(bnio.load(artifact, bnio.make_context()).module)


def test_writing_a_portable_artifact_for_a_version_jaxlib_cannot_write_is_a_fold_error():
    loaded = bnio.load(EXAMPLE.read_text(), bnio.make_context(), source="m.mlir")
    claimed = bnio.Loaded(loaded.module, bnio.Format.PORTABLE, "99.0.0", "m.mlir")
    for consume in (False, True):
        with pytest.raises(FoldError, match=r"^m\.mlir: cannot write a portable artifact for StableHLO 99\.0\.0: "):
            bnio.dump(claimed, consume=consume)
    assert "stablehlo.convolution" in str(loaded.module)  # refused before anything changed


def test_a_portable_artifact_that_cannot_be_written_says_why_in_both_writers():
    # VHLO has no form for arith ops (torch-mlir's arith.constant, here an arith.addf).
    text = (
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = arith.addf %x, %x : tensor<2xf32>\n  return %y : tensor<2xf32>\n}\n"
    )
    for consume in (False, True):
        loaded = bnio.load(text, bnio.make_context(), source="m.mlir")
        with pytest.raises(FoldError) as raised:
            bnio.dump(loaded, bnio.Format.PORTABLE, consume=consume)
        # MLIR's own words (its first error), not a stand-in.
        assert re.fullmatch(
            r"m\.mlir: cannot write a portable artifact: failed to legalize .*",
            str(raised.value),
        ), (consume, str(raised.value))


_RESOURCES = """
func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf16>) {
  %a = stablehlo.constant dense_resource<first> : tensor<2xf32>
  %b = stablehlo.constant dense_resource<first_1> : tensor<2xf32>
  %c = stablehlo.constant dense_resource<"third: c"> : tensor<2xf16>
  return %a, %b, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xf16>
}
{-#
  dialect_resources: {
    builtin: {
      first: "0x040000000000C03F00002040",
      first_1: "0x04000000000080BF0000803F",
      "third: c": "0x02000000003C00C0"
    }
  }
#-}
"""
_RESOURCE_VALUES = [[1.5, 2.5], [-1.0, 1.0], [1.0, -2.0]]


def _constant_values(module) -> list[list[float]]:
    ops = list(module.body.operations[0].regions[0].blocks[0].operations)[:3]
    return [np.asarray(op.attributes["value"]).tolist() for op in ops]


def test_dense_resource_blobs_become_the_same_dense_constants_from_text_bytecode_and_a_reused_context():
    # From the text's own resource section (a quoted name included), from bytecode (the
    # module printed with dense constants elided), and in a context that already holds a
    # blob named "first": MLIR renames the new "first" to "first_1" and "first_1" to
    # "first_1_1", so the text's names point at the wrong blobs and the printed module
    # must be read instead.
    context = bnio.make_context()
    assert _constant_values(bnio.load(_RESOURCES, context).module) == _RESOURCE_VALUES
    with context:
        buffer = io.BytesIO()
        ir.Module.parse(_RESOURCES).operation.write_bytecode(buffer)
    from_bytecode = bnio.load(buffer.getvalue(), bnio.make_context()).module
    assert _constant_values(from_bytecode) == _RESOURCE_VALUES
    reused = bnio.make_context()
    bnio.load(_RESOURCES, reused)
    again = bnio.load(_RESOURCES, reused).module
    assert _constant_values(again) == _RESOURCE_VALUES
    assert "dense_resource" not in str(again)


# A sharded module as jax.export holds it: Shardy's mesh, shardings and a constraint.
SHARDED = """\
module @sharded attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["batch"=2]>
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"batch"}, {}]> : tensor<4x2xf32>
    %1 = stablehlo.add %0, %0 : tensor<4x2xf32>
    return %1 : tensor<4x2xf32>
  }
}
"""


@pytest.mark.parametrize("version", [oldest_version(), str(stablehlo.get_current_version())])
def test_a_mixed_portable_artifact_as_jax_export_writes_it_is_written_back_byte_for_byte(version):
    # jax.export writes Shardy's dialect as it is beside VHLO (jaxlib's
    # serialize_portable_artifact with use_mixed_serialization, what `serialize_with_sdy`
    # turns on); writing it back as a pure artifact failed on func.func's sdy.sharding.
    from jax._src.lib import _jax

    with bnio.make_context():
        artifact = _jax.mlir.serialize_portable_artifact(SHARDED, version, True)
    loaded = bnio.load(artifact, bnio.make_context())
    assert "sdy.sharding_constraint" in str(loaded.module) and "vhlo." not in str(loaded.module)
    assert bnio.dump(loaded) == artifact
    streamed = io.BytesIO()
    bnio.write(bnio.load(artifact, bnio.make_context()), streamed, consume=True)
    assert streamed.getvalue() == artifact


def test_a_module_read_from_text_is_written_as_a_portable_artifact_only_if_it_is_all_stablehlo():
    # Only an input that was a (mixed) portable artifact is written back mixed: a text
    # module with Shardy's ops asked for as a portable artifact fails as jaxlib's writer does.
    for consume in (False, True):
        loaded = bnio.load(SHARDED, bnio.make_context(), source="m.mlir")
        with pytest.raises(FoldError, match=r"^m\.mlir: cannot write a portable artifact: failed to legalize"):
            bnio.dump(loaded, bnio.Format.PORTABLE, consume=consume)
