"""Coverage-guided fuzzing of the input reader (test/fuzz/fuzz_load.py), and every crash it
found, kept as a regression test.

CI runs a short, seeded campaign over MLIR text. Binary formats are fuzzed by hand
(`--formats=all`, see docs/dev/reliability.md): MLIR's bytecode readers crash on corrupted
input within seconds, inside jaxlib's C++ code, before anything this package could check,
and loop without end on some. The command, and the API for bytecode and portable
artifacts, read in a child process and turn such a crash into one line, and end a read
that does not finish (tested below).

Every finding runs in a subprocess, the CLI as a user runs it: a regression aborts that
process, not pytest's.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest
from jaxlib.mlir.dialects import stablehlo
from test_cli import (  # noqa: F401 (work is a fixture)
    EXAMPLE,
    PROG,
    Run,
    assert_one_error,
    bnfold,
    bytecode_of,
    names_the_file,
    portable_artifact_of,
    work,
)

import stablehlo_bnfold

FUZZ = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
CRASHES = FUZZ / "crashes"
HANGS_DIR = FUZZ / "hangs"


def test_fuzzing_the_text_reader_finds_no_crash(tmp_path):
    """2000 seeded runs (at most 25 seconds) from examples/conv_bn.mlir: every input
    either folds or raises a one-line FoldError."""
    corpus, artifacts = tmp_path / "corpus", tmp_path / "artifacts"
    corpus.mkdir()
    artifacts.mkdir()
    run = subprocess.run(
        [
            sys.executable, str(FUZZ / "fuzz_load.py"), "--formats=text", str(corpus),
            "-seed=1", "-runs=2000", "-max_total_time=25", f"-dict={FUZZ / 'mlir.dict'}",
            f"-artifact_prefix={artifacts}/",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = {p.name: p.read_bytes()[:300] for p in artifacts.iterdir()}
    assert run.returncode == 0 and not found, f"{found}\n{run.stderr[-3000:]}"
    assert re.search(r"^Done \d+ runs in \d+ second", run.stderr, re.MULTILINE), run.stderr[-2000:]


# --- findings, fixed: diagnostics that are not UTF-8 ----------------------------------------
#
# MLIR quotes bytes of the input in its messages. jaxlib turns a message into a Python
# string inside its own error capture and, when the bytes are not UTF-8, aborts the
# process (std::terminate: "str_from_cstr_and_size(): conversion error"). io.load now has
# MLIR's errors delivered to its own handler, where the failure is catchable.


def _with_producer(data: bytes, producer: bytes) -> bytes:
    """Bytecode `data` with its header's producer string replaced by `producer`."""
    width = (data[4] & -data[4]).bit_length()  # the version varint, one byte in practice
    end = data.index(b"\0", 4 + width)
    return data[: 4 + width] + producer + data[end:]


def test_cli_exits_1_with_one_line_when_a_bytecode_producer_is_not_utf8(work):
    # Every error after the header carries a note "produced by: <producer>".
    data = _with_producer(bytecode_of(EXAMPLE.read_text()), b"MLIR\xff\xfe")
    (work / "model.mlirbc").write_bytes(data[: len(data) // 2])
    run = bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, names_the_file("model.mlirbc"))


def test_cli_exits_1_with_one_line_when_a_bytecode_operation_name_is_not_utf8(work):
    # The string table names the op "stablehlo.convolutio\xa1": "unregistered operation".
    data = bytecode_of(EXAMPLE.read_text())
    assert data.count(b"convolution\0") == 1
    (work / "model.mlirbc").write_bytes(data.replace(b"convolution\0", b"convolutio\xa1\0"))
    run = bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, r"model\.mlirbc:\d+:\d+: error: .*not UTF-8.*")


@pytest.mark.parametrize("byte", [b"\n", b"\r", b"\x0b", b"\x0c", b"\x1e"])
def test_cli_exits_1_with_one_line_when_a_bytecode_operation_name_holds_a_line_break(work, byte):
    # Found by test/fuzz/mutate_cli.py: MLIR quotes the name in its message, and the
    # message went out on two lines ("unregistered operation 'stablehlo.con\rolution'").
    data = bytecode_of(EXAMPLE.read_text())
    (work / "model.mlirbc").write_bytes(data.replace(b"convolution\0", b"convol" + byte + b"tion\0"))
    run = bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm")
    escaped = re.escape(byte.decode().encode("unicode_escape").decode())
    assert_one_error(run, 1, rf"model\.mlirbc:\d+:\d+: error: unregistered operation 'stablehlo\.convol{escaped}tion'.*")


def test_cli_exits_1_with_one_line_when_text_calls_a_symbol_that_is_not_utf8(work):
    # `\FF` is a valid escape in an MLIR string; the verifier quotes the missing callee.
    (work / "call.mlir").write_text(
        'func.func @main() {\n  func.call @"\\FF"() : () -> ()\n  return\n}\n'
    )
    run = bnfold(work, "call.mlir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, r"call\.mlir:2:3: error: .*not UTF-8.*")


def test_cli_exits_1_with_one_line_when_an_unregistered_operation_name_is_not_utf8(work):
    # Accepted by the parser with --allow-unregistered-dialect; jaxlib aborted walking it.
    (work / "op.mlir").write_text('func.func @main() {\n  "a\\FF.b"() : () -> ()\n  return\n}\n')
    run = bnfold(work, "op.mlir", "--stablehlo-fold-batch-norm", "--allow-unregistered-dialect")
    assert_one_error(run, 1, rf"{PROG}: error: op\.mlir: an operation name is not UTF-8")


# --- findings, fixed: a portable artifact that claims a version jaxlib cannot write -------


def _claiming_a_newer_stablehlo() -> tuple[bytes, str]:
    """The example as a portable artifact whose header names a StableHLO version with the
    major number 9 (same length, so the sections stay aligned), and that version."""
    current = stablehlo.get_current_version()
    claimed = "9" + current[1:]
    data = portable_artifact_of(EXAMPLE.read_text(), current)
    producer = f"StableHLO_v{current}\0".encode()
    assert data.count(producer) == 1
    return data.replace(producer, f"StableHLO_v{claimed}\0".encode()), claimed


def test_cli_exits_1_with_one_line_when_asked_to_write_a_portable_artifact_of_a_newer_stablehlo(
    work,
):
    # The reader does not check the header's version; jaxlib's writer raised a bare
    # ValueError ("failed to serialize module"), which the CLI called an internal error.
    data, claimed = _claiming_a_newer_stablehlo()
    (work / "model.stablehlo").write_bytes(data)
    run = bnfold(work, "model.stablehlo", "--stablehlo-fold-batch-norm", "--emit-bytecode")
    assert_one_error(
        run,
        1,
        rf"{PROG}: error: model\.stablehlo: cannot write a portable artifact for StableHLO "
        rf"{re.escape(claimed)}: this jaxlib writes \S+ to {re.escape(stablehlo.get_current_version())}",
    )
    as_text = bnfold(work, "model.stablehlo", "--stablehlo-fold-batch-norm", "--emit-text")
    assert as_text.returncode == 0, as_text.stderr
    assert "batch_norm_inference" not in as_text.text


def test_fold_raises_fold_error_when_a_portable_artifact_claims_a_newer_stablehlo():
    data, claimed = _claiming_a_newer_stablehlo()
    with pytest.raises(stablehlo_bnfold.FoldError, match=rf"StableHLO {re.escape(claimed)}"):
        stablehlo_bnfold.fold_batch_norm(data)


# --- findings, not fixed: MLIR's bytecode readers crash -------------------------------------

UPSTREAM = {
    "vhlo_function_type_that_is_a_location.stablehlo": (
        "one byte of a portable artifact makes vhlo.func_v1's function_type a location; "
        "vhlo-legalize-to-stablehlo builds func.func through setPropertiesFromAttr with a "
        "null emitError and jumps to address 0 (SIGSEGV)"
    ),
    "vhlo_integer_attribute_of_unsupported_width.stablehlo": (
        "VhloBytecodeInterface::readIntegerV1Attr calls report_fatal_error "
        "('unsupported integer type'): the process aborts"
    ),
    "vhlo_tensor_attribute_with_a_non_shaped_type.stablehlo": (
        "VhloBytecodeInterface::readTensorV1Attr hands a non-shaped type to "
        "DenseElementsAttr::getFromRawBuffer (SIGSEGV in ShapedType::getElementType)"
    ),
    "bytecode_corrupt_block_header.mlirbc": (
        "BytecodeReader::Impl::parseBlockHeader -> defineValues writes outside the value "
        "table (SIGSEGV)"
    ),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_cli_exits_1_with_one_line_on_bytecode_that_crashes_mlirs_reader(work, name):
    (work / name).write_bytes((CRASHES / name).read_bytes())
    output = work / "out.mlir"
    run = bnfold(work, name, "--stablehlo-fold-batch-norm", "-o", "out.mlir")
    line = assert_one_error(
        run,
        1,
        rf"{PROG}: error: {re.escape(name)}: invalid input: the MLIR reader crashed on it "
        r"\((SIGSEGV|SIGABRT, LLVM ERROR: .+)\)",
    )
    assert ("SIGABRT" in line) == ("report_fatal_error" in UPSTREAM[name]), line
    assert not output.exists() and not list(work.glob(".bnfold-*"))


def _fold_in_a_python(
    path: pathlib.Path, *, read_seconds: float | None = None, prelude: str = ""
) -> subprocess.CompletedProcess:
    """`fold_batch_norm` on the bytes of `path` in a fresh Python, which prints the
    FoldError's message: should a regression crash or hang the reader in the caller's
    process again, that process dies (or times out), not pytest's. `prelude` runs first."""
    bound = prelude
    if read_seconds is not None:
        bound += f"stablehlo_bnfold.sandbox.READ_SECONDS = {read_seconds}\n"
    return subprocess.run(
        [
            sys.executable, "-c",
            "import sys, stablehlo_bnfold, stablehlo_bnfold.sandbox\n" + bound +
            "try:\n    stablehlo_bnfold.fold_batch_norm(open(sys.argv[1], 'rb').read())\n"
            "except stablehlo_bnfold.FoldError as error:\n    print(error)\n",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_the_api_raises_fold_error_on_bytecode_that_crashes_mlirs_reader(name):
    # The API reads bytecode in a forked child (stablehlo_bnfold.sandbox): the crash ends
    # the child, and the caller gets the line the command prints, and nothing on stderr.
    run = _fold_in_a_python(CRASHES / name)
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    line = run.stdout.rstrip("\n")
    assert re.fullmatch(
        r"<input>: invalid input: the MLIR reader crashed on it \((SIGSEGV|SIGABRT, LLVM ERROR: .+)\)", line
    ), line
    assert ("SIGABRT" in line) == ("report_fatal_error" in UPSTREAM[name]), line


def test_verify_says_not_verified_on_bytecode_that_crashes_mlirs_reader():
    # stablehlo_bnfold.verify reads bytecode in a child too; every kept crash in one Python.
    run = subprocess.run(
        [
            sys.executable, "-c",
            "import sys, stablehlo_bnfold\n"
            "for path in sys.argv[1:]:\n"
            "    data = open(path, 'rb').read()\n"
            "    print(stablehlo_bnfold.verify(data, data))\n",
            *[str(CRASHES / name) for name in sorted(UPSTREAM)],
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stderr) == (0, ""), run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert len(lines) == len(UPSTREAM), run.stdout
    for line in lines:
        assert re.fullmatch(
            r"cannot verify here: <input>: invalid input: the MLIR reader crashed on it \((SIGSEGV|SIGABRT, LLVM ERROR: .+)\)",
            line,
        ), line


def test_the_api_raises_fold_error_on_a_reader_crash_when_the_caller_ignores_sigchld():
    # Then the kernel reaps the child itself, and its signal cannot be learnt.
    run = _fold_in_a_python(
        CRASHES / "bytecode_corrupt_block_header.mlirbc",
        prelude="import signal\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n",
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == "<input>: invalid input: the MLIR reader crashed on it\n"


# --- findings, bounded: MLIR's bytecode reader loops -------------------------------------

HANGS = {
    "bytecode_dense_attribute_that_loops_the_reader.mlirbc": (
        "one byte of the example's bytecode (offset 1044, 0x04 -> 0x00) makes a count a "
        "9-byte varint: reading a convolution's dense attribute, "
        "DenseTypedElementsAttrStorage::getKey compares elements for ever (found by "
        "test/fuzz: one process, 100% of a core, memory flat)"
    ),
}


@pytest.mark.parametrize("name", sorted(HANGS))
def test_the_api_stops_a_read_that_does_not_finish_with_a_fold_error(name):
    # Reading may take stablehlo_bnfold.sandbox.read_seconds(size): 30 s and more by
    # default, made 2 s here. An alarm in the child ends the loop in C++ code.
    run = _fold_in_a_python(HANGS_DIR / name, read_seconds=2)
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    assert run.stdout == "<input>: invalid input: the MLIR reader did not finish in 2 s\n"


@pytest.mark.parametrize("name", sorted(HANGS))
def test_cli_exits_1_with_one_line_on_bytecode_whose_read_does_not_finish(work, name):
    (work / name).write_bytes((HANGS_DIR / name).read_bytes())
    run = subprocess.run(
        [
            sys.executable, "-c",
            "import sys, stablehlo_bnfold.sandbox\n"
            "stablehlo_bnfold.sandbox.READ_SECONDS = 2\n"
            "from stablehlo_bnfold.cli import console_main\n"
            "sys.argv[0] = 'stablehlo-bnfold-opt'\nsys.exit(console_main())\n",
            name, "--stablehlo-fold-batch-norm", "-o", "out.mlir",
        ],
        cwd=work,
        capture_output=True,
        timeout=120,
    )
    assert_one_error(
        Run(run.returncode, run.stdout, run.stderr.decode(errors="replace")),
        1,
        rf"{PROG}: error: {re.escape(name)}: invalid input: the MLIR reader did not finish in 2 s",
    )
    assert not (work / "out.mlir").exists() and not list(work.glob(".bnfold-*"))


def test_every_kept_crash_input_has_a_regression_test():
    assert sorted(p.name for p in CRASHES.iterdir()) == sorted(UPSTREAM)
    assert sorted(p.name for p in HANGS_DIR.iterdir()) == sorted(HANGS)
