"""`stablehlo-bnfold-opt` as a user runs it: a subprocess, its exit code, stdout and stderr.

Every hostile input gets one line on stderr that names the file and the problem
(`FILE:LINE:COL: error: ...` when the problem has a place, else
`stablehlo-bnfold-opt: error: FILE: ...`), no traceback, nothing on stdout, and the documented
exit code: 0 success, 1 bad input or a failed pass, 2 bad usage. Output files appear whole or
not at all, and the input is never touched.

Every command runs in a fresh `tmp_path` holding a copy of examples/conv_bn.mlir as
`model.mlir`, with relative paths, so the messages are predictable.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass

import numpy as np
import pytest
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

import stablehlo_bnfold

PROG = "stablehlo-bnfold-opt"
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "conv_bn.mlir"
BYTECODE_MAGIC = b"ML\xefR"

# Where examples/conv_bn.mlir has its two batch norms.
EXAMPLE_BATCH_NORMS = ("18:10", "24:10")

# A module of two identical convolutions, one read by a batch norm and one returned: CSE
# merges them, after which the convolution has two users and cannot be folded. So
# `--cse --stablehlo-fold-batch-norm` folds nothing and the reverse order folds.
TWIN_CONVOLUTIONS = """\
func.func @main(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %k = stablehlo.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %scale = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %offset = stablehlo.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %mean = stablehlo.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %var = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c1 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %c2 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %bn = "stablehlo.batch_norm_inference"(%c1, %scale, %offset, %mean, %var) {epsilon = 1.0e-03 : f32, feature_index = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %bn, %c2 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}
"""

# Line 2 lacks the '>' closing the tensor type: the parser stops at column 43.
SYNTAX_ERROR = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.add %x, %x : tensor<2xf32
  return %y : tensor<2xf32>
}
"""


@dataclass(frozen=True)
class Run:
    """What one run of the tool did."""

    returncode: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode()

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


def bnfold(
    cwd: pathlib.Path,
    *args: str,
    stdin: bytes = b"",
    umask: int | None = None,
    address_space: int | None = None,
) -> Run:
    """Run `python -m stablehlo_bnfold.cli ARGS` in `cwd`; stdin is empty unless given, so
    a command that wrongly reads stdin fails instead of hanging. `address_space` caps the
    process's virtual memory (bytes), so that an allocation too large for it fails at once
    on any machine instead of paging in under the kernel's overcommit."""

    # Set by `sh` before it execs the command: a preexec_fn would fork this process, which
    # runs JAX, and JAX warns of every such fork ("os.fork() was called ...").
    settings = [f"umask {umask:03o}"] if umask is not None else []
    settings += [f"ulimit -v {address_space // 1024}"] if address_space is not None else []
    shell = ["sh", "-c", "; ".join(settings) + '; exec "$@"', "sh"] if settings else []
    result = subprocess.run(
        [*shell, sys.executable, "-m", "stablehlo_bnfold.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=300,
    )
    return Run(result.returncode, result.stdout, result.stderr.decode(errors="replace"))


def assert_one_error(run: Run, exit_code: int, pattern: str) -> str:
    """The run failed with `exit_code`, printed nothing on stdout, and printed exactly one
    line on stderr, with no traceback, that matches the regular expression `pattern`."""
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == exit_code, run.stderr
    assert run.stdout == b"", run.stdout[:200]
    assert len(run.stderr_lines) == 1, f"expected one line on stderr, got:\n{run.stderr}"
    (line,) = run.stderr_lines
    assert re.fullmatch(pattern, line), f"{line!r} does not match {pattern!r}"
    return line


def names_the_file(name: str) -> str:
    """The two shapes of a message about file `name`: located, or the tool's own."""
    file = re.escape(name)
    return rf"(?:{file}:\d+:\d+: error: .+|{PROG}: error: {file}: .+)"


def printed(module: str | bytes) -> str:
    """A module (text or bytecode) as MLIR prints it."""
    with make_ir_context():
        return str(ir.Module.parse(module))


def bytecode_of(text: str) -> bytes:
    with make_ir_context():
        buffer = io.BytesIO()
        ir.Module.parse(text).operation.write_bytecode(buffer)
        return buffer.getvalue()


def portable_artifact_of(text: str, version: str) -> bytes:
    with make_ir_context():
        return stablehlo.serialize_portable_artifact(ir.Module.parse(text), version)


def oldest_version() -> str:
    """The oldest StableHLO version jaxlib writes; not the current one, so a tool that
    ignored the input's version would be caught."""
    version = str(stablehlo.get_minimum_version())
    assert version != str(stablehlo.get_current_version())
    return version


def artifact_version(data: bytes) -> str:
    """The StableHLO version in a portable artifact's producer string."""
    match = re.match(rb"ML\xefR.StableHLO_v([0-9.]+)\x00", data, re.DOTALL)
    assert match, data[:32]
    return match.group(1).decode()


def files_in(directory: pathlib.Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.fixture
def work(tmp_path: pathlib.Path) -> pathlib.Path:
    """A directory holding `model.mlir`, a copy of examples/conv_bn.mlir."""
    shutil.copy(EXAMPLE, tmp_path / "model.mlir")
    return tmp_path


@pytest.fixture(scope="module")
def folded_example(tmp_path_factory) -> str:
    """examples/conv_bn.mlir folded, as the tool prints it to stdout."""
    directory = tmp_path_factory.mktemp("reference")
    shutil.copy(EXAMPLE, directory / "model.mlir")
    run = bnfold(directory, "model.mlir", "--stablehlo-fold-batch-norm")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert "batch_norm_inference" not in run.text
    return run.text


# --- hostile inputs ------------------------------------------------------------------------


def test_cli_exits_1_and_names_the_file_on_missing_input(work):
    run = bnfold(work, "missing.mlir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, rf"{PROG}: error: missing\.mlir: (?i:.*no such file.*)")


def test_cli_exits_1_and_names_the_directory_given_as_input(work):
    (work / "adir").mkdir()
    run = bnfold(work, "adir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, rf"{PROG}: error: adir: (?i:.*is a directory.*)")


@pytest.mark.parametrize("content", [b"", b"   \n\t\n  \r\n"], ids=["empty", "whitespace"])
def test_cli_exits_1_and_says_the_input_is_empty(work, content):
    (work / "empty.mlir").write_bytes(content)
    run = bnfold(work, "empty.mlir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, rf"{PROG}: error: empty\.mlir: (?i:.*empty.*)")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cli_exits_1_and_names_the_file_on_random_bytes(work, seed):
    # 0xff never occurs in UTF-8 and is not the bytecode magic: neither text nor bytecode.
    data = b"\xff" + np.random.default_rng(seed).bytes(500)
    (work / "random.bin").write_bytes(data)
    run = bnfold(work, "random.bin", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, names_the_file("random.bin"))


TRUNCATIONS = [4, 5, 12, 40, 0.5, -1]  # bytes kept: a count, a fraction, or all but -n


def _truncated(data: bytes, keep: float) -> bytes:
    if isinstance(keep, float):
        return data[: int(len(data) * keep)]
    return data[:keep]


@pytest.mark.parametrize("keep", TRUNCATIONS)
def test_cli_exits_1_and_names_the_file_on_truncated_bytecode(work, keep):
    data = bytecode_of(EXAMPLE.read_text())
    (work / "model.mlirbc").write_bytes(_truncated(data, keep))
    run = bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, names_the_file("model.mlirbc"))


@pytest.mark.parametrize("keep", TRUNCATIONS)
def test_cli_exits_1_and_names_the_file_on_a_truncated_portable_artifact(work, keep):
    data = portable_artifact_of(EXAMPLE.read_text(), oldest_version())
    (work / "model.stablehlo").write_bytes(_truncated(data, keep))
    run = bnfold(work, "model.stablehlo", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, names_the_file("model.stablehlo"))


def test_cli_exits_1_with_file_line_col_on_a_syntax_error(work):
    (work / "syntax.mlir").write_text(SYNTAX_ERROR)
    run = bnfold(work, "syntax.mlir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, r"syntax\.mlir:2:43: error: \S.*")


def test_cli_reports_a_syntax_error_in_stdin_as_stdin(work):
    run = bnfold(work, "-", "--stablehlo-fold-batch-norm", stdin=SYNTAX_ERROR.encode())
    assert_one_error(run, 1, r"<stdin>:2:43: error: \S.*")


@pytest.mark.parametrize(
    "op",
    ['%y = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>', "%y = foo.bar %x : tensor<2xf32>"],
    ids=["generic", "custom"],
)
def test_cli_exits_1_with_file_line_col_on_an_op_of_an_unknown_dialect(work, op):
    (work / "unknown.mlir").write_text(
        f"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {op}\n"
        "  return %y : tensor<2xf32>\n}\n"
    )
    run = bnfold(work, "unknown.mlir", "--stablehlo-fold-batch-norm")
    line = assert_one_error(run, 1, r"unknown\.mlir:2:\d+: error: .+")
    # Advice to pass a flag must name a flag this tool accepts.
    for flag in re.findall(r"(?<![\w-])--?[a-z][\w-]+", line.split(": error: ", 1)[1]):
        usage = bnfold(work, "model.mlir", "--" + flag.lstrip("-"))
        assert usage.returncode != 2, f"the message advises {flag}, which is a usage error: {usage.stderr}"


def test_cli_exits_1_with_file_line_col_when_the_module_does_not_verify(work):
    (work / "verify.mlir").write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {\n"
        "  %y = stablehlo.add %x, %x : tensor<2xf32>\n"
        "  return %y : tensor<2xf32>\n}\n"
    )
    run = bnfold(work, "verify.mlir", "--stablehlo-fold-batch-norm")
    assert_one_error(run, 1, r"verify\.mlir:3:3: error: .+")


# A convolution whose kernel is a splat of 1000x1000x100000x4 f32: 1.5 TiB once its output
# features are scaled differently, 200 bytes in the file.
GIGANTIC_SPLAT_KERNEL = """\
func.func @main(%x: tensor<1x1000x1000x100000xf32>) -> tensor<1x1x1x4xf32> {
  %k = stablehlo.constant dense<0.5> : tensor<1000x1000x100000x4xf32>
  %scale = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %offset = stablehlo.constant dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4xf32>
  %mean = stablehlo.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %var = stablehlo.constant dense<[1.0, 1.0, 4.0, 4.0]> : tensor<4xf32>
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1000x1000x100000xf32>, tensor<1000x1000x100000x4xf32>) -> tensor<1x1x1x4xf32>
  %y = "stablehlo.batch_norm_inference"(%c, %scale, %offset, %mean, %var) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<1x1x1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x1x1x4xf32>
  return %y : tensor<1x1x1x4xf32>
}
"""
EIGHT_GIB = 8 << 30


def test_cli_exits_1_and_says_there_is_not_enough_memory_to_fold_a_gigantic_splat_kernel(work):
    (work / "giant.mlir").write_text(GIGANTIC_SPLAT_KERNEL)
    run = bnfold(work, "giant.mlir", "--stablehlo-fold-batch-norm", address_space=EIGHT_GIB)
    assert_one_error(
        run, 1, r"giant\.mlir:8:8: error: not enough memory to fold \[fold_bn_into_linear\]: .*TiB.*"
    )


def test_cli_passes_a_gigantic_splat_constant_it_does_not_fold_through_without_materialising_it(
    work,
):
    # 40 GB as a tensor; reading, the pass and printing all keep it a splat.
    text = (
        "func.func @main(%x: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {\n"
        "  %k = stablehlo.constant dense<5.000000e-01> : tensor<100000x100000xf32>\n"
        "  %y = stablehlo.add %x, %k : tensor<100000x100000xf32>\n"
        "  return %y : tensor<100000x100000xf32>\n}\n"
    )
    (work / "splat.mlir").write_text(text)
    run = bnfold(work, "splat.mlir", "--stablehlo-fold-batch-norm", address_space=EIGHT_GIB)
    assert run.returncode == 0, run.stderr
    assert run.text == printed(text)
    assert "dense<5.000000e-01> : tensor<100000x100000xf32>" in run.text


def test_cli_evaluates_gigantic_splat_weights_computed_from_splats_into_a_splat(work):
    # reshape(splat) * broadcast(scalar): 40 GB as tensors; the literal step computes the
    # one element and writes a splat, never the elements.
    text = (
        "func.func @main(%x: tensor<1x100000xf32>) -> tensor<1x100000xf32> {\n"
        "  %w = stablehlo.constant dense<5.000000e-01> : tensor<10000000000xf32>\n"
        "  %s = stablehlo.constant dense<2.500000e+00> : tensor<f32>\n"
        "  %r = stablehlo.reshape %w : (tensor<10000000000xf32>) -> tensor<100000x100000xf32>\n"
        "  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<100000x100000xf32>\n"
        "  %k = stablehlo.multiply %r, %b : tensor<100000x100000xf32>\n"
        "  %y = stablehlo.dot_general %x, %k, contracting_dims = [1] x [0] :"
        " (tensor<1x100000xf32>, tensor<100000x100000xf32>) -> tensor<1x100000xf32>\n"
        "  return %y : tensor<1x100000xf32>\n}\n"
    )
    (work / "splat.mlir").write_text(text)
    run = bnfold(work, "splat.mlir", "--stablehlo-fold-batch-norm", address_space=EIGHT_GIB)
    assert run.returncode == 0, run.stderr
    assert "dense<1.250000e+00> : tensor<100000x100000xf32>" in run.text
    assert "stablehlo.multiply" not in run.text and "tensor<10000000000xf32>" not in run.text


# A file this size (sparse: no disk) needs more memory to fold than any machine in CI has,
# and more than the address space the tests allow.
FORTY_GB = 40 * 10**9


@pytest.mark.parametrize(
    ("name", "what", "factor"), [("big.mlirbc", "bytecode", 3.3), ("big.stablehlo", "portable artifact", 3.3), ("big.mlir", "text", 3.3)]
)
def test_cli_stops_before_reading_an_input_too_large_to_fold_in_the_memory_left(
    work, name, what, factor
):
    head = {
        "bytecode": lambda: bytecode_of(EXAMPLE.read_text()),
        "portable artifact": lambda: portable_artifact_of(EXAMPLE.read_text(), oldest_version()),
        "text": lambda: EXAMPLE.read_bytes(),
    }[what]()
    with open(work / name, "wb") as handle:
        handle.write(head)
        handle.truncate(FORTY_GB)
    assert os.stat(work / name).st_blocks * 512 < 10**6, "the file system wrote the zeros"
    run = bnfold(work, name, "--stablehlo-fold-batch-norm", "-o", "out", address_space=EIGHT_GIB)
    line = assert_one_error(
        run,
        1,
        rf"{PROG}: error: {re.escape(name)}: not enough memory to fold: a 40\.00 GB "
        rf"{what} input needs about (\d+\.\d\d) GB, (\d+\.\d\d) GB available",
    )
    need, room = map(float, re.search(r"about (\S+) GB, (\S+) GB", line).groups())
    assert need == pytest.approx(40 * factor, abs=0.1) and room < EIGHT_GIB / 1e9
    assert not (work / "out").exists()


def test_cli_skips_the_memory_check_when_asked(work):
    with open(work / "big.mlirbc", "wb") as handle:
        handle.write(bytecode_of(EXAMPLE.read_text()))
        handle.truncate(FORTY_GB)
    run = bnfold(
        work, "big.mlirbc", "--stablehlo-fold-batch-norm", "--no-memory-check", address_space=EIGHT_GIB
    )
    # MLIR then tries to map 40 GB into 8 GiB of address space.
    assert_one_error(run, 1, r"big\.mlirbc: error: could not open input file big\.mlirbc")


def _child_of(parent: int) -> int:
    """The one child process of `parent`, once it has started."""
    for _ in range(600):
        with open(f"/proc/{parent}/task/{parent}/children") as handle:
            children = handle.read().split()
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError(f"process {parent} started no child")


def _blocked_reading_a_pipe(pid: int) -> bool:
    with open(f"/proc/{pid}/wchan") as handle:  # the kernel function it sleeps in
        where = handle.read()
    with open(f"/proc/{pid}/syscall") as handle:  # x86-64: read(0, ...)
        call = handle.read()
    return "pipe" in where or call.startswith("0 0x0 ")


def interruptible(command: list[str]) -> list[str]:
    """`command`, started with SIGINT at its default action whatever this process
    inherited: run as a background job of a script, the suite has it ignored, and the
    command, which keeps an ignored interrupt ignored (as it should), would never end. A
    Python execs it (`sh` cannot: a signal ignored on entry to a non-interactive shell
    stays ignored there; a preexec_fn would fork this process, which runs JAX)."""
    return [sys.executable, "-c", _INTERRUPTIBLE, *command]


_INTERRUPTIBLE = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def _waiting_on_stdin(work: pathlib.Path, *args: str) -> tuple[subprocess.Popen, int]:
    """The command (with `args`) reading a stdin that never ends, and its child, blocked
    reading it."""
    process = subprocess.Popen(
        interruptible([sys.executable, "-m", "stablehlo_bnfold.cli", "--stablehlo-fold-batch-norm", *args]),
        cwd=work,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdin.write(EXAMPLE.read_bytes()[:100])
    process.stdin.flush()
    child = _child_of(process.pid)
    for _ in range(1200):
        if _blocked_reading_a_pipe(child):
            return process, child
        time.sleep(0.05)
    raise AssertionError(f"process {child} never blocked reading its standard input")


def test_cli_says_in_one_line_that_its_process_was_killed_most_likely_for_lack_of_memory(work):
    # What the kernel's OOM killer does to a fold too large for the machine.
    process, child = _waiting_on_stdin(work)
    os.kill(child, signal.SIGKILL)
    stdout, stderr = _ended(process)
    assert_one_error(
        Run(process.returncode, stdout, stderr.decode()),
        1,
        rf"{PROG}: error: <stdin>: killed \(SIGKILL\) while reading it, most likely for lack of memory",
    )


def _ended(process: subprocess.Popen) -> tuple[bytes, bytes]:
    """stdout and stderr of `process` once it has exited, its stdin held open until then:
    closing it first (as `communicate` does) would let the child read the end of its input
    and finish on its own before the signal reaches it."""
    process.wait(timeout=60)
    stdout, stderr = process.stdout.read(), process.stderr.read()
    with contextlib.suppress(BrokenPipeError):  # nobody reads it any more
        process.stdin.close()
    process.stdout.close()
    process.stderr.close()
    return stdout, stderr


def test_cli_passes_a_terminate_signal_on_to_its_child_and_prints_nothing(work):
    process, child = _waiting_on_stdin(work)
    process.terminate()
    stdout, stderr = _ended(process)
    assert (process.returncode, stdout, stderr) == (128 + signal.SIGTERM, b"", b"")
    assert not os.path.exists(f"/proc/{child}/status") or "zombie" in open(f"/proc/{child}/status").read()


def test_cli_passes_an_interrupt_sent_to_it_alone_on_to_its_child(work):
    # `kill -INT PID`, `timeout -s INT`: not the terminal, which signals both processes.
    process, child = _waiting_on_stdin(work)
    process.send_signal(signal.SIGINT)
    stdout, stderr = _ended(process)
    assert (process.returncode, stdout, stderr) == (128 + signal.SIGINT, b"", b"")


def test_the_command_exits_130_without_a_word_when_interrupted_while_it_imports(work):
    # The console script pip writes: `from MODULE import FUNCTION; sys.exit(FUNCTION())`,
    # here interrupted (as by Ctrl-C) the moment it starts importing the command's module.
    import tomllib

    with open(EXAMPLE.parents[1] / "pyproject.toml", "rb") as handle:
        entry = tomllib.load(handle)["project"]["scripts"][PROG]
    module, function = entry.split(":")
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        if sys.argv[1] == "ignored":
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `sh` starts a background job
        else:  # as Python starts in a terminal, whatever this suite inherited
            signal.signal(signal.SIGINT, signal.default_int_handler)
        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == "stablehlo_bnfold.cli":
                    os.kill(os.getpid(), signal.SIGINT)
        sys.meta_path.insert(0, Interrupt())
        sys.argv[1:] = ["--version"]
        from {module} import {function}
        sys.exit({function}())
        """
    )
    for started, expected in (("handled", (128 + signal.SIGINT, "", "")), ("ignored", (0, f"{PROG} ", ""))):
        result = subprocess.run(
            [sys.executable, "-c", script, started], cwd=work, capture_output=True, text=True, timeout=300
        )
        assert (result.returncode, result.stdout[: len(expected[1])], result.stderr) == expected, started


def test_cli_child_dies_with_its_parent_and_writes_nothing(work):
    # subprocess.run(..., timeout=...) kills the command with SIGKILL, which cannot be
    # passed on: the child must not go on to write the output.
    process, child = _waiting_on_stdin(work, "-o", "out.mlir")
    process.kill()
    process.wait(timeout=60)
    # What the child waited for. The child may already be gone, and with it the pipe's
    # last reader: then the write fails with a broken pipe, and there is nobody left to
    # write the output, which is what the test checks.
    with contextlib.suppress(BrokenPipeError):
        process.stdin.write(EXAMPLE.read_bytes()[100:])
        process.stdin.close()
    for stream in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(BrokenPipeError):
            stream.close()
    for _ in range(200):
        if not os.path.exists(f"/proc/{child}") or "Z" in open(f"/proc/{child}/stat").read().split()[2]:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"child {child} outlived its parent")
    time.sleep(0.5)
    assert not (work / "out.mlir").exists() and not list(work.glob(".bnfold-*"))


def test_cli_leaves_no_temporary_file_whatever_stops_the_write(tmp_path):
    from stablehlo_bnfold import cli

    def interrupted(file):
        file.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cli._write(str(tmp_path / "out.mlir"), interrupted)
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_the_same_bytecode_with_and_without_verify(work):
    plain = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--emit-bytecode")
    verified = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--emit-bytecode", "--verify")
    assert plain.returncode == verified.returncode == 0, verified.stderr
    assert plain.stdout == verified.stdout and plain.stdout.startswith(BYTECODE_MAGIC)


def test_cli_reads_a_named_pipe_once(work, folded_example):
    os.mkfifo(work / "pipe")
    writer = subprocess.Popen(["sh", "-c", f"cat {EXAMPLE} > pipe"], cwd=work)
    run = bnfold(work, "pipe", "--stablehlo-fold-batch-norm")
    writer.wait(timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example


def test_cli_passes_a_module_without_functions_through_unchanged(work):
    # Valid MLIR with nothing to fold: like mlir-opt, print it and succeed.
    (work / "nofunc.mlir").write_text("module {\n}\n")
    run = bnfold(work, "nofunc.mlir", "--stablehlo-fold-batch-norm", "--report")
    assert run.returncode == 0, run.stderr
    assert run.text == printed("module {\n}\n")
    assert run.stderr_lines == ["0 norms: 0 folded whole, 0 folded partly, 0 left (0 ops folded); 0 activation-sized ops removed"]


# --- bad usage -----------------------------------------------------------------------------


def test_cli_exits_2_on_an_unknown_flag(work):
    run = bnfold(work, "model.mlir", "--bogus")
    assert_one_error(run, 2, rf"{PROG}: error: .*--bogus.*")


@pytest.mark.parametrize(
    "option", ["bogus=1", "max-iterations=x", "max-iterations=0", "max-iterations=99999999999999999999"]
)
def test_cli_exits_2_and_names_the_option_on_a_bad_pass_option(work, option):
    run = bnfold(work, "model.mlir", f"--stablehlo-fold-batch-norm={option}")
    assert_one_error(run, 2, rf"{PROG}: error: .*{re.escape(option.split('=')[0])}.*")


def test_cli_says_the_folds_did_not_settle_when_max_iterations_is_too_few(work):
    # The sweep that confirms nothing changes is one of them: with one, a module that
    # folds never settles. An error of the input's fold, not an internal one.
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm=max-iterations=1")
    assert_one_error(run, 1, rf"{PROG}: error: the folds did not settle within max-iterations=1: .*")


def test_cli_exits_2_and_names_the_pass_on_an_unknown_pass_in_the_pipeline(work):
    run = bnfold(work, "model.mlir", "--pass-pipeline=builtin.module(no-such-pass)")
    assert_one_error(run, 2, rf"{PROG}: error: .*no-such-pass.*")


def test_cli_exits_2_on_an_unbalanced_pipeline(work):
    run = bnfold(work, "model.mlir", "--pass-pipeline=builtin.module(func.func(canonicalize)")
    assert_one_error(run, 2, rf"{PROG}: error: .*pipeline.*")


def test_cli_exits_2_when_pass_pipeline_is_combined_with_a_pass_flag(work):
    run = bnfold(
        work, "model.mlir", "--pass-pipeline=builtin.module(canonicalize)", "--stablehlo-fold-batch-norm"
    )
    assert_one_error(run, 2, rf"{PROG}: error: .*--pass-pipeline.*")


def test_cli_reports_bad_usage_before_reading_the_input(work):
    # A usage error is the command line's fault whatever the input holds.
    run = bnfold(work, "missing.mlir", "--pass-pipeline=builtin.module(no-such-pass)")
    assert_one_error(run, 2, rf"{PROG}: error: .*no-such-pass.*")


# --- output files --------------------------------------------------------------------------


def test_cli_exits_1_and_creates_nothing_when_the_output_directory_does_not_exist(work):
    before = files_in(work)
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "nonexistent-dir/out.mlir")
    assert_one_error(run, 1, rf"{PROG}: error: nonexistent-dir/out\.mlir: .+")
    assert not (work / "nonexistent-dir").exists()
    assert files_in(work) == before


def test_cli_exits_1_when_the_output_is_a_directory(work):
    (work / "adir").mkdir()
    before = files_in(work)
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "adir")
    assert_one_error(run, 1, rf"{PROG}: error: adir: .+")
    assert list((work / "adir").iterdir()) == []
    assert files_in(work) == before


def test_cli_writes_the_output_file_with_what_it_prints_on_stdout(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "out.mlir")
    assert run.returncode == 0, run.stderr
    assert run.stdout == b"" and run.stderr == ""
    assert (work / "out.mlir").read_text() == folded_example
    assert sorted(files_in(work)) == ["model.mlir", "out.mlir"]  # no temporary left behind


def test_cli_creates_the_output_file_with_the_permissions_the_umask_allows(work):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "out.mlir", umask=0o022)
    assert run.returncode == 0, run.stderr
    assert oct((work / "out.mlir").stat().st_mode & 0o777) == oct(0o644)


def test_cli_replaces_its_own_input_atomically_with_the_folded_module(work, folded_example):
    (work / "model.mlir").chmod(0o640)
    inode = (work / "model.mlir").stat().st_ino
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "-o", "model.mlir")
    assert run.returncode == 0, run.stderr
    assert run.stdout == b"" and run.stderr == ""
    assert (work / "model.mlir").read_text() == folded_example
    # Renamed over the input, not rewritten in place: a reader never sees half a file.
    assert (work / "model.mlir").stat().st_ino != inode
    assert (work / "model.mlir").stat().st_mode & 0o777 == 0o640
    assert sorted(files_in(work)) == ["model.mlir"]


@pytest.mark.parametrize("existing", [None, b"keep me\n"], ids=["absent", "present"])
def test_cli_leaves_no_output_file_when_the_input_is_bad(work, existing):
    (work / "syntax.mlir").write_text(SYNTAX_ERROR)
    if existing is not None:
        (work / "out.mlir").write_bytes(existing)
    run = bnfold(work, "syntax.mlir", "--stablehlo-fold-batch-norm", "-o", "out.mlir")
    assert_one_error(run, 1, r"syntax\.mlir:2:43: error: .+")
    if existing is None:
        assert not (work / "out.mlir").exists()
    else:
        assert (work / "out.mlir").read_bytes() == existing
    assert sorted(files_in(work)) == sorted(["model.mlir", "syntax.mlir"] + (["out.mlir"] if existing else []))


@pytest.mark.parametrize(
    "args",
    [
        ["--stablehlo-fold-batch-norm"],
        ["--stablehlo-fold-batch-norm", "--emit-bytecode", "-o", "out.mlirbc"],
        ["--stablehlo-fold-batch-norm", "-o", "nonexistent-dir/out.mlir"],
        ["--stablehlo-fold-batch-norm=bogus=1"],
        ["--pass-pipeline=builtin.module(func.func(stablehlo-fold-batch-norm), canonicalize)"],
        ["--split-input-file", "--stablehlo-fold-batch-norm", "--report=json"],
    ],
    ids=["fold", "bytecode", "unwritable", "bad-option", "pipeline", "split"],
)
def test_cli_never_modifies_its_input(work, args):
    before = (work / "model.mlir").read_bytes()
    bnfold(work, "model.mlir", *args)
    assert (work / "model.mlir").read_bytes() == before


# --- formats -------------------------------------------------------------------------------


def test_cli_reads_stdin_given_as_dash_or_no_input(work, folded_example):
    source = EXAMPLE.read_bytes()
    for args in (["-", "--stablehlo-fold-batch-norm"], ["--stablehlo-fold-batch-norm"]):
        run = bnfold(work, *args, stdin=source)
        assert run.returncode == 0, run.stderr
        assert run.text == folded_example


def test_cli_reads_the_file_named_after_the_pass_flag(work, folded_example):
    # mlir-opt takes options in any order; a pass flag must not swallow the input file.
    run = bnfold(work, "--stablehlo-fold-batch-norm", "model.mlir")
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example


def test_cli_emits_bytecode_that_reads_back_as_the_folded_module(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--emit-bytecode", "-o", "out.mlirbc")
    assert run.returncode == 0, run.stderr
    data = (work / "out.mlirbc").read_bytes()
    assert data.startswith(BYTECODE_MAGIC)
    assert printed(data) == folded_example


def test_cli_reads_bytecode_and_prints_the_folded_module_as_text(work, folded_example):
    (work / "model.mlirbc").write_bytes(bytecode_of(EXAMPLE.read_text()))
    run = bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm")
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example


def test_cli_writes_a_portable_artifact_back_with_the_version_it_was_read_with(work):
    version = oldest_version()
    (work / "model.stablehlo").write_bytes(portable_artifact_of(EXAMPLE.read_text(), version))
    run = bnfold(
        work, "model.stablehlo", "--stablehlo-fold-batch-norm", "--emit-bytecode", "-o", "out.stablehlo"
    )
    assert run.returncode == 0, run.stderr
    data = (work / "out.stablehlo").read_bytes()
    assert artifact_version(data) == version
    with make_ir_context() as context:
        module = str(stablehlo.deserialize_portable_artifact(context, data))
    assert "batch_norm_inference" not in module
    assert module.count("stablehlo.convolution") == 2


# --- --split-input-file ----------------------------------------------------------------------


def _split_file(*chunks: str) -> str:
    return "// -----\n".join(chunks)


def test_cli_split_input_file_prints_the_good_chunks_and_exits_1_on_a_bad_one(work, folded_example):
    example = EXAMPLE.read_text()
    (work / "split.mlir").write_text(_split_file(example, SYNTAX_ERROR, example))
    bad_line = example.count("\n") + 1 + 2  # the marker line, then line 2 of the chunk
    run = bnfold(work, "split.mlir", "--split-input-file", "--stablehlo-fold-batch-norm")
    assert "Traceback" not in run.stderr
    assert run.returncode == 1
    assert len(run.stderr_lines) == 1, run.stderr
    assert re.fullmatch(rf"split\.mlir:{bad_line}:43: error: .+", run.stderr_lines[0]), run.stderr
    chunks = [c.strip() for c in run.text.split("// -----")]
    assert chunks == [folded_example.strip()] * 2


# A module XLA cannot run: --verify says "cannot verify here", which fails the run.
NO_MAIN = """\
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
"""


def test_cli_split_input_file_verify_fails_when_an_earlier_chunk_fails_and_a_later_passes(work):
    # The last chunk must not decide: a chunk that fails verification followed by one that
    # passes still fails the run with exit 3, and nothing at all is written.
    (work / "split.mlir").write_text(_split_file(NO_MAIN, EXAMPLE.read_text()))
    run = bnfold(work, "split.mlir", "--split-input-file", "--stablehlo-fold-batch-norm", "--verify",
                 "-o", "out.mlir")
    assert "Traceback" not in run.stderr
    assert run.returncode == 3, run.stderr
    assert run.stdout == b""
    lines = run.stderr_lines
    assert lines[0] == "split.mlir: cannot verify here: no function named main", run.stderr
    assert lines[-1] == "split.mlir: verification passed (1 outputs, 3 trials)", run.stderr
    assert not (work / "out.mlir").exists() and not list(work.glob(".bnfold-*"))


def test_cli_split_input_file_verify_exits_1_when_an_earlier_chunk_is_bad_and_a_later_passes(
    work, folded_example
):
    # As without --verify: the good chunk is written, and the bad one decides the exit code.
    (work / "split.mlir").write_text(_split_file(SYNTAX_ERROR, EXAMPLE.read_text()))
    run = bnfold(work, "split.mlir", "--split-input-file", "--stablehlo-fold-batch-norm", "--verify",
                 "-o", "out.mlir")
    assert "Traceback" not in run.stderr
    assert run.returncode == 1, run.stderr
    assert re.fullmatch(r"split\.mlir:2:43: error: .+", run.stderr_lines[0]), run.stderr
    assert run.stderr_lines[-1] == "split.mlir: verification passed (1 outputs, 3 trials)"
    assert (work / "out.mlir").read_text().strip() == folded_example.strip()


def test_cli_split_input_file_reports_lines_of_the_whole_file(work):
    example = EXAMPLE.read_text()
    (work / "split.mlir").write_text(_split_file(example, example))
    second = example.count("\n") + 1  # lines before the second chunk
    run = bnfold(work, "split.mlir", "--split-input-file", "--stablehlo-fold-batch-norm", "--report=json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stderr)
    expected = [f"split.mlir:{where}" for where in EXAMPLE_BATCH_NORMS]
    expected += [
        f"split.mlir:{int(line) + second}:{col}"
        for line, col in (where.split(":") for where in EXAMPLE_BATCH_NORMS)
    ]
    assert [f["location"] for f in report["folds"]] == expected


# --- report --------------------------------------------------------------------------------


def test_cli_report_prints_each_fold_and_the_totals_to_stderr(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report")
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example
    lines = run.stderr_lines
    assert lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"
    for where, line in zip(EXAMPLE_BATCH_NORMS, lines[:-1], strict=True):
        assert line.startswith(f"model.mlir:{where}: folded stablehlo.batch_norm_inference into ")


def test_cli_report_json_is_data_about_each_fold(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report=json")
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example
    report = json.loads(run.stderr)
    assert report["folded"] == 2 and report["skipped"] == 0 and report["skips"] == []
    assert [f["location"] for f in report["folds"]] == [f"model.mlir:{w}" for w in EXAMPLE_BATCH_NORMS]
    assert {f["op"] for f in report["folds"]} == {"stablehlo.batch_norm_inference"}
    assert {f["producer"] for f in report["folds"]} == {"stablehlo.convolution"}


def test_cli_report_json_gives_the_reason_for_a_batch_norm_left_alone(work):
    (work / "twin.mlir").write_text(TWIN_CONVOLUTIONS)
    run = bnfold(
        work, "twin.mlir", "--pass-pipeline=builtin.module(cse, stablehlo-fold-batch-norm)", "--report=json"
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stderr)
    assert report["folded"] == 0
    assert [(s["location"], s["reason"]) for s in report["skips"]] == [
        ("twin.mlir:9:9", "producer result has other users")
    ]



def test_cli_report_and_verify_lines_escape_control_characters_of_the_file_name(work):
    # A newline in the name must not split a line: errors escape it, and so do these.
    name = "a\nb\rc.mlir"
    shutil.copy(work / "model.mlir", work / name)
    run = bnfold(work, name, "--stablehlo-fold-batch-norm", "--report", "--verify")
    assert run.returncode == 0, run.stderr
    escaped = "a\\nb\\rc.mlir"
    lines = run.stderr.split("\n")[:-1]
    assert [line.split(": ")[0].split(":")[0] for line in lines[:-1]] == [escaped] * (len(lines) - 1)
    assert lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"
    assert sum("verification passed" in line for line in lines) == 1


def test_cli_report_never_takes_the_file_after_it_for_its_format(work, folded_example):
    run = bnfold(work, "--stablehlo-fold-batch-norm", "--report", "model.mlir")
    assert run.returncode == 0, run.stderr
    assert run.text == folded_example
    assert run.stderr_lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"
    as_json = bnfold(work, "--report=json", "model.mlir", "--stablehlo-fold-batch-norm")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stderr)["folded"] == 2


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_cli_report_with_a_space_before_its_format_is_a_usage_error_that_shows_the_equals(work, fmt):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report", fmt)
    assert_one_error(run, 2, rf"{PROG}: error: --report {fmt}: .*--report={fmt}.*")


def test_cli_report_before_a_file_named_like_a_format_takes_it_as_the_input(work):
    shutil.copy(work / "model.mlir", work / "json")
    run = bnfold(work, "--stablehlo-fold-batch-norm", "--report", "json")
    assert run.returncode == 0, run.stderr
    assert run.stderr_lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"


def _report_file_run(work: pathlib.Path, name: str, *more: str) -> tuple[Run, str]:
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--verify", "--report-file", name, *more)
    assert run.returncode == 0, run.stderr
    return run, (work / name).read_text()


def test_cli_report_file_holds_the_report_and_the_verification_as_json_and_nothing_else(work, folded_example):
    run, written = _report_file_run(work, "report.json", "-o", "out.mlir")
    report = json.loads(written)
    assert (report["folded"], report["skipped"]) == (2, 0)
    assert sorted(f["location"] for f in report["folds"]) == [f"model.mlir:{at}" for at in EXAMPLE_BATCH_NORMS]
    (verification,) = report["verification"]
    assert verification["ok"] and verification["reason"] is None
    assert verification["verdict"].startswith("verification passed")
    assert [o["ok"] for o in verification["outputs"]] == [True]
    assert (work / "out.mlir").read_text() == folded_example
    assert all("folded" not in line for line in run.stderr_lines)  # only --verify's lines


def test_cli_report_file_not_ending_in_json_holds_the_text_report_and_verify_lines(work):
    _, written = _report_file_run(work, "report.txt")
    lines = written.splitlines()
    assert lines[2] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"
    assert lines[-1].startswith("model.mlir: verification passed")


def test_cli_exits_2_when_the_report_file_and_the_output_are_both_stdout(work):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report-file", "-")
    assert_one_error(run, 2, rf"{PROG}: error: --report-file and the output cannot both be stdout.*")
    apart = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report-file=-", "-o", "out.mlir")
    assert apart.returncode == 0, apart.stderr
    assert apart.text.splitlines()[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"


def test_cli_report_json_with_verify_is_one_json_document_holding_the_verification(work):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--verify", "--report=json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stderr)
    assert report["folded"] == 2 and report["verification"][0]["ok"]


def test_cli_report_with_an_unknown_format_is_a_usage_error(work):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--report=xml")
    assert_one_error(run, 2, rf"{PROG}: error: .*--report.*xml.*")


def _exported_conv_batch_norm():
    """A jax.export of a convolution and Flax's decomposed batch norm, and an input."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(7)
    kernel = rng.standard_normal((3, 3, 4, 8)).astype(np.float32) / 6
    scale, mean = rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.standard_normal(8).astype(np.float32)

    def model(x):
        y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return (y - mean) * (jax.lax.rsqrt(jnp.float32(1.5) + 1e-5) * scale) + 0.25

    exported = jax.export.export(jax.jit(model))(jax.ShapeDtypeStruct((2, 8, 8, 4), jnp.float32))
    return exported, rng.standard_normal((2, 8, 8, 4)).astype(np.float32)


def test_cli_folds_an_exported_serialize_file_into_one_that_deserializes_and_calls_alike(work):
    import jax

    exported, x = _exported_conv_batch_norm()
    (work / "model.jax").write_bytes(exported.serialize())
    run = bnfold(work, "model.jax", "--stablehlo-fold-batch-norm", "--emit-bytecode", "-o", "folded.jax", "--report")
    assert run.returncode == 0, run.stderr
    assert run.stderr_lines[-1] == "1 norm: 1 folded whole, 0 folded partly, 0 left (3 ops folded); 2 activation-sized ops removed"
    folded = jax.export.deserialize(bytearray((work / "folded.jax").read_bytes()))
    assert (folded.in_avals, folded.out_avals) == (exported.in_avals, exported.out_avals)
    assert "stablehlo.subtract" not in str(folded.mlir_module())
    expected, actual = np.asarray(exported.call(x)), np.asarray(folded.call(x))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    as_text = bnfold(work, "model.jax", "--stablehlo-fold-batch-norm", "--emit-text")
    assert as_text.returncode == 0, as_text.stderr
    assert printed(as_text.text) == as_text.text and "stablehlo.convolution" in as_text.text


def test_cli_writes_an_exported_serialize_file_back_as_one_unless_asked_for_text(work):
    import jax

    exported, x = _exported_conv_batch_norm()
    (work / "model.jax").write_bytes(exported.serialize())
    run = bnfold(work, "model.jax", "--stablehlo-fold-batch-norm", "-o", "folded.jax")
    assert (run.returncode, run.stderr) == (0, "")
    folded = jax.export.deserialize(bytearray((work / "folded.jax").read_bytes()))
    assert "stablehlo.subtract" not in str(folded.mlir_module())
    expected, actual = np.asarray(exported.call(x)), np.asarray(folded.call(x))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    piped = bnfold(work, "--stablehlo-fold-batch-norm", stdin=exported.serialize())
    assert piped.returncode == 0, piped.stderr
    assert jax.export.deserialize(bytearray(piped.stdout)).out_avals == exported.out_avals
    elided = bnfold(work, "model.jax", "--stablehlo-fold-batch-norm", "--mlir-elide-elementsattrs-if-larger=4")
    assert elided.returncode == 0, elided.stderr
    assert "dense_resource<__elided__>" in elided.text


def test_cli_writes_a_portable_artifact_back_as_one_by_default_and_bytecode_as_text(work, folded_example):
    version = oldest_version()
    (work / "model.stablehlo").write_bytes(portable_artifact_of(EXAMPLE.read_text(), version))
    run = bnfold(work, "model.stablehlo", "--stablehlo-fold-batch-norm", "-o", "out.stablehlo")
    assert (run.returncode, run.stderr) == (0, "")
    assert artifact_version((work / "out.stablehlo").read_bytes()) == version
    as_text = bnfold(work, "model.stablehlo", "--stablehlo-fold-batch-norm", "--emit-text")
    assert as_text.returncode == 0, as_text.stderr
    assert printed(as_text.text) == as_text.text  # text (the artifact drops default strides)
    assert "batch_norm_inference" not in as_text.text and as_text.text.count("stablehlo.convolution") == 2
    (work / "model.mlirbc").write_bytes(bytecode_of(EXAMPLE.read_text()))
    assert bnfold(work, "model.mlirbc", "--stablehlo-fold-batch-norm").text == folded_example


def _on_a_terminal(work: pathlib.Path, *args: str) -> tuple[int, str, bytes]:
    """Run the command with its stdout on a pseudo-terminal: (exit code, stderr, what the
    terminal received)."""
    import pty

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "stablehlo_bnfold.cli", *args],
            cwd=work, stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE, timeout=300,
        )
        os.close(follower)
        received = b""
        with contextlib.suppress(OSError):  # EIO once the terminal is drained and closed
            while chunk := os.read(leader, 1 << 16):
                received += chunk
    finally:
        os.close(leader)
    return result.returncode, result.stderr.decode(), received


def test_cli_writes_no_exported_serialization_to_a_terminal_and_says_how_to_get_text(work):
    exported, _ = _exported_conv_batch_norm()
    (work / "model.jax").write_bytes(exported.serialize())
    code, stderr, received = _on_a_terminal(work, "model.jax", "--stablehlo-fold-batch-norm")
    assert (code, received) == (2, b""), stderr
    assert re.fullmatch(rf"{PROG}: error: the input is a jax.export serialization .*--emit-text.*\n", stderr)
    code, stderr, received = _on_a_terminal(work, "model.jax", "--stablehlo-fold-batch-norm", "--emit-text")
    assert (code, stderr) == (0, "")
    assert b"stablehlo.convolution" in received


def test_cli_exits_2_when_asked_for_text_and_bytecode_at_once(work):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--emit-text", "--emit-bytecode")
    assert_one_error(run, 2, rf"{PROG}: error: --emit-text cannot be combined with --emit-bytecode.*")


def test_cli_warns_in_one_line_when_no_pass_is_given_and_writes_the_module_unchanged(work):
    run = bnfold(work, "model.mlir", "-o", "out.mlir")
    assert run.returncode == 0
    assert run.stderr_lines == [
        f"{PROG}: warning: no pass given: the module is written unchanged (add --stablehlo-fold-batch-norm)"
    ]
    assert printed((work / "out.mlir").read_text()) == printed(EXAMPLE.read_text())
    explicit = bnfold(work, "model.mlir", "--pass-pipeline=builtin.module(canonicalize)")
    assert (explicit.returncode, explicit.stderr) == (0, "")

# --- pipelines -----------------------------------------------------------------------------


def test_cli_pass_pipeline_mixes_our_pass_with_registered_passes(work):
    run = bnfold(
        work,
        "model.mlir",
        "--pass-pipeline=builtin.module(func.func(stablehlo-fold-batch-norm), canonicalize)",
        "--report",
    )
    assert run.returncode == 0, run.stderr
    assert "batch_norm_inference" not in run.text
    assert run.stderr_lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"
    assert printed(run.text) == run.text


@pytest.mark.parametrize("order", [["canonicalize", "cse"], ["cse", "canonicalize"]])
def test_cli_pass_flags_run_as_the_same_pipeline_in_the_same_order(work, order):
    flags = bnfold(work, "model.mlir", *(f"--{name}" for name in order))
    pipeline = bnfold(work, "model.mlir", f"--pass-pipeline=builtin.module({','.join(order)})")
    assert flags.returncode == 0, flags.stderr
    assert pipeline.returncode == 0, pipeline.stderr
    assert flags.text == pipeline.text


def test_cli_runs_pass_flags_in_command_line_order(work):
    (work / "twin.mlir").write_text(TWIN_CONVOLUTIONS)
    cse_first = bnfold(work, "twin.mlir", "--cse", "--stablehlo-fold-batch-norm")
    fold_first = bnfold(work, "twin.mlir", "--stablehlo-fold-batch-norm", "--cse")
    assert cse_first.returncode == 0, cse_first.stderr
    assert fold_first.returncode == 0, fold_first.stderr
    assert "batch_norm_inference" in cse_first.text
    assert "batch_norm_inference" not in fold_first.text



# --- mlir-opt's flags ------------------------------------------------------------------------


def test_cli_takes_mlir_opts_single_dash_spellings_as_the_double_dash_ones(work):
    pipeline = "builtin.module(stablehlo-fold-batch-norm, canonicalize)"
    double = bnfold(work, "model.mlir", f"--pass-pipeline={pipeline}", "--allow-unregistered-dialect",
                    "--split-input-file", "-o", "double.mlir")
    single = bnfold(work, "model.mlir", f"-pass-pipeline={pipeline}", "-allow-unregistered-dialect",
                    "-split-input-file", "-o=single.mlir")
    assert double.returncode == 0 and single.returncode == 0, single.stderr
    assert (work / "single.mlir").read_text() == (work / "double.mlir").read_text()
    flag = bnfold(work, "model.mlir", "-stablehlo-fold-batch-norm=max-iterations=3", "-report")
    assert flag.returncode == 0, flag.stderr
    assert flag.stderr_lines[-1] == "2 norms: 2 folded whole, 0 folded partly, 0 left (2 ops folded); 1 activation-sized op removed"


def test_cli_prints_locations_only_with_mlir_print_debuginfo_and_they_read_back(work, folded_example):
    assert "loc(" not in folded_example
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--mlir-print-debuginfo")
    assert run.returncode == 0, run.stderr
    assert 'loc("model.mlir":18:10)' in run.text  # the folded batch norm's place
    with make_ir_context():
        module = ir.Module.parse(run.text)
        again = io.StringIO()
        module.operation.print(file=again, enable_debug_info=True)
    assert again.getvalue() == run.text
    assert printed(run.text) == folded_example


def test_cli_prints_the_generic_op_form_with_mlir_print_op_generic(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--mlir-print-op-generic")
    assert run.returncode == 0, run.stderr
    assert '"stablehlo.convolution"(' in run.text and '"func.func"()' in run.text
    assert printed(run.text) == folded_example


def test_cli_mlir_timing_and_print_ir_after_all_report_the_passes_on_stderr(work, folded_example):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", "--canonicalize", "--mlir-timing",
                 "--mlir-print-ir-after-all", "--mlir-disable-threading")
    assert run.returncode == 0, run.stderr
    assert "Execution time report" in run.stderr and "FoldBatchNorm" in run.stderr
    assert "IR Dump After FoldBatchNorm" in run.stderr and "IR Dump After Canonicalizer" in run.stderr
    assert "batch_norm_inference" not in run.stderr.split("IR Dump After FoldBatchNorm")[1]
    assert "batch_norm_inference" not in run.text


def test_cli_verify_diagnostics_exits_1_naming_each_unmet_or_unexpected_remark(work):
    text = (work / "model.mlir").read_text().splitlines()
    text.insert(16, "// expected-remark@+1 {{folded stablehlo.batch_norm_inference into stablehlo.dot_general}}")
    (work / "expect.mlir").write_text("\n".join(text) + "\n")
    run = bnfold(work, "expect.mlir", "--stablehlo-fold-batch-norm", "--verify-diagnostics", "-o", "out.mlir")
    assert run.returncode == 1, run.stderr
    assert run.stderr_lines == [
        "expect.mlir:19:10: error: unexpected remark: folded stablehlo.batch_norm_inference "
        "into stablehlo.convolution [fold_bn_into_linear]",
        "expect.mlir:25:10: error: unexpected remark: folded stablehlo.batch_norm_inference "
        "into stablehlo.convolution [fold_bn_into_linear]",
        "expect.mlir:17: error: expected remark "
        '"folded stablehlo.batch_norm_inference into stablehlo.dot_general" was not produced',
    ]

# --- --version, --help, the console script -------------------------------------------------


def test_cli_version_prints_the_package_version(work):
    run = bnfold(work, "--version")
    assert run.returncode == 0, run.stderr
    assert run.text == f"{PROG} {stablehlo_bnfold.__version__}\n"


def test_cli_help_mentions_every_flag_and_the_exit_codes(work):
    run = bnfold(work, "--help")
    assert run.returncode == 0, run.stderr
    flags = [
        "-o", "--stablehlo-fold-batch-norm", "--canonicalize", "--cse", "--pass-pipeline",
        "--split-input-file", "--emit-bytecode", "--emit-text", "--mlir-elide-elementsattrs-if-larger",
        "--report", "--report-file", "--verify", "--no-memory-check", "--allow-unregistered-dialect", "--debug",
        "--version", "--help", "--mlir-print-debuginfo", "--mlir-print-op-generic",
        "--mlir-print-ir-after-all", "--mlir-timing", "--mlir-disable-threading",
        "--verify-diagnostics",
    ]
    for flag in flags:
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", run.text), flag
    assert "Exit codes" in run.text


def test_cli_console_script_is_installed_and_runs(work):
    # pip puts the script beside the interpreter it installs for (a venv's bin, which need
    # not be on PATH when that interpreter is run by its full path).
    beside = os.path.dirname(sys.executable)
    script = shutil.which(PROG, path=os.pathsep.join([beside, os.environ.get("PATH", "")]))
    assert script is not None, f"{PROG} is not in {beside}; install the package with pip install -e ."
    (entry_point,) = [
        e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == PROG
    ]
    assert entry_point.value == "stablehlo_bnfold.entry:console_main"
    run = subprocess.run([script, "--version"], cwd=work, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"{PROG} {stablehlo_bnfold.__version__}\n"


def test_python_m_stablehlo_bnfold_runs_the_command(work, folded_example):
    run = subprocess.run(
        [sys.executable, "-m", "stablehlo_bnfold", "model.mlir", "--stablehlo-fold-batch-norm"],
        cwd=work, capture_output=True, text=True, timeout=300,
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == folded_example
    usage = subprocess.run(
        [sys.executable, "-m", "stablehlo_bnfold", "--no-such-flag"],
        cwd=work, capture_output=True, text=True, timeout=300,
    )
    assert usage.returncode == 2 and usage.stderr.startswith(f"{PROG}: error: "), usage.stderr


# --- printing for a person ------------------------------------------------------------------


def test_cli_elides_weights_larger_than_asked_as_mlir_opt_does(work, folded_example):
    # The folded example's constants: kernels of 3x3x3x4 = 108 and 4x4x1x1 = 16 elements,
    # a splat of 256 (never elided: it prints as one number), biases of 4.
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm",
                 "--mlir-elide-elementsattrs-if-larger=10", "--verify")
    assert run.returncode == 0, run.stderr  # verified on the whole module, not the elided one
    elided = re.findall(r"stablehlo\.constant dense_resource<__elided__> : tensor<(\w+)>", run.text)
    assert elided == ["3x3x3x4xf32", "4x4x1x1xf32"]
    # Everything else is what the fold prints without elision.
    assert run.text == re.sub(
        r"(stablehlo\.constant )dense<.*>( : tensor<(?:3x3x3x4|4x4x1x1)xf32>)",
        r"\1dense_resource<__elided__>\2",
        folded_example,
    )
    at_16 = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm",
                   "--mlir-elide-elementsattrs-if-larger=16")
    assert re.findall(r"dense_resource<__elided__> : tensor<(\w+)>", at_16.text) == ["3x3x3x4xf32"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--mlir-elide-elementsattrs-if-larger=-1",), "expected a non-negative integer, got '-1'"),
        (("--mlir-elide-elementsattrs-if-larger=many",), "expected a non-negative integer, got 'many'"),
        (("--mlir-elide-elementsattrs-if-larger=8", "--emit-bytecode"), "cannot be combined with --emit-bytecode"),
    ],
)
def test_cli_exits_2_on_an_elision_limit_it_cannot_apply(work, args, message):
    run = bnfold(work, "model.mlir", "--stablehlo-fold-batch-norm", *args)
    assert_one_error(run, 2, rf"{PROG}: error: .*{re.escape(message)}.* \(see --help\)")


def test_the_command_works_when_it_starts_with_sigchld_ignored(tmp_path):
    # An ignored SIGCHLD is inherited across exec; with it the kernel reaps the command's
    # child itself and waitpid fails (ChildProcessError: a traceback after --version).
    start = (
        "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
        "os.execv(sys.executable, [sys.executable, '-m', 'stablehlo_bnfold.cli', *sys.argv[1:]])"
    )
    for args in (["--version"], [str(EXAMPLE), "--stablehlo-fold-batch-norm", "-o", "out.mlir"]):
        result = subprocess.run(
            [sys.executable, "-c", start, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
    assert "stablehlo.convolution" in (tmp_path / "out.mlir").read_text()


def test_the_quick_starts_output_file_is_ignored_by_git():
    root = EXAMPLE.parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(["git", "check-ignore", "-q", "folded.mlir"], cwd=root, timeout=60)
    assert result.returncode == 0
