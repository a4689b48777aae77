"""`stablehlo-bnfold-opt`: an mlir-opt style driver for `stablehlo-fold-batch-norm`.

    stablehlo-bnfold-opt [INPUT|-] --stablehlo-fold-batch-norm [-o OUT]
        [--canonicalize] [--cse] [--pass-pipeline=PIPELINE]
        [--split-input-file] [--emit-bytecode] [--report[=text|json]] [--verify]
        [--allow-unregistered-dialect] [--debug]

Exit codes: 0 success; 1 bad input or a failed pass; 2 bad usage; 3 --verify found an
output that differs beyond tolerance, or could not run the module (no output is written). Problems print one line
to stderr (`file:line:col: error: ...` when located, else `stablehlo-bnfold-opt: error:
...`), with a traceback only under --debug. Output files are written to a temporary file
beside the target and renamed, so a failure leaves nothing half-written and an input given
as its own output is replaced atomically.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Sequence

import jax

from . import __version__
from . import io as bnio
from .passes import ARGUMENT
from .report import FoldError, FoldReport, Recorder
from .passes import build_pass_manager, run_pipeline
from .verification import verify

__all__ = ["EXIT_INPUT_ERROR", "EXIT_OK", "EXIT_USAGE", "EXIT_VERIFY_FAILED", "main"]

PROG = "stablehlo-bnfold-opt"
EXIT_OK = 0
EXIT_INPUT_ERROR = 1
EXIT_USAGE = 2
EXIT_VERIFY_FAILED = 3

_SPLIT_MARKER = re.compile(r"^// -----.*$", re.MULTILINE)


class _AppendPass(argparse.Action):
    """Keep pass flags in command-line order, as mlir-opt does. Options come only as
    `--pass=OPTIONS` (`_split_pass_options` moves them aside), so a file named after the
    flag is never taken for its options."""

    def __call__(self, parser, namespace, values, option_string=None):
        passes = list(getattr(namespace, "passes", None) or [])
        name = option_string.lstrip("-")
        options = parser.pass_options.pop(0) if name == ARGUMENT else ""
        passes.append(f"{name}{{{options}}}" if options else name)
        namespace.passes = passes


def _split_pass_options(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--stablehlo-fold-batch-norm=OPTS` -> the bare flag, OPTS queued in order."""
    parser.pass_options = []
    flag = f"--{ARGUMENT}"
    out = []
    for arg in argv:
        if arg == flag or arg.startswith(flag + "="):
            parser.pass_options.append(arg.partition("=")[2])
            arg = flag
        elif arg.startswith(("--canonicalize=", "--cse=")):
            parser.error(f"{arg.split('=')[0]} takes no options")
        out.append(arg)
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like mlir-opt's usage errors
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Fold inference batch norm into the preceding convolution or dot_general in a "
            "StableHLO module (MLIR text, MLIR bytecode or a StableHLO portable artifact)."
        ),
        epilog=(
            "Exit codes: 0 success, 1 bad input or a failed pass, 2 bad usage, "
            "3 --verify failed or could not run the module (nothing written). "
            "Example: stablehlo-bnfold-opt examples/conv_bn.mlir --stablehlo-fold-batch-norm"
        ),
    )
    parser.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    parser.add_argument("-o", dest="output", default="-", help="output file, or - for stdout (default)")
    parser.add_argument(
        f"--{ARGUMENT}",
        action=_AppendPass,
        nargs=0,
        dest="passes",
        help="fold batch norm into convolutions and dot_generals; options as "
        f"--{ARGUMENT}='max-iterations=N fold-weight-arguments=false'",
    )
    for name, what in (("canonicalize", "MLIR's canonicalizer"), ("cse", "common subexpression elimination")):
        parser.add_argument(
            f"--{name}", action=_AppendPass, nargs=0, dest="passes", help=f"run {what}"
        )
    parser.add_argument(
        "--pass-pipeline",
        metavar="PIPELINE",
        help="a textual pipeline mixing our pass with registered passes, e.g. "
        f"'builtin.module(func.func({ARGUMENT}), canonicalize)'; excludes the pass flags",
    )
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help="split text input on '// -----' lines and process each chunk on its own",
    )
    parser.add_argument(
        "--emit-bytecode",
        action="store_true",
        help="write MLIR bytecode (a portable artifact input is written back as a portable "
        "artifact of the same StableHLO version) instead of text",
    )
    parser.add_argument(
        "--report",
        nargs="?",
        const="text",
        choices=("text", "json"),
        help="print every fold and every candidate left alone, with the reason, to stderr",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run the original and the folded module through XLA on the CPU on seeded "
        "random inputs, print one line per output to stderr, and exit 3 without writing "
        "anything if one differs beyond tolerance or cannot be run",
    )
    parser.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help="accept ops of dialects this tool does not know (they are never folded)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="log pattern decisions and show tracebacks"
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.set_defaults(passes=[])
    return parser


class _Failure(Exception):
    """A problem already worded for the user."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; returns the exit code (the console script exits with it)."""
    parser = _parser()
    argv = list(argv if argv is not None else sys.argv[1:])
    args = parser.parse_args(_split_pass_options(parser, argv))
    if args.pass_pipeline is not None and args.passes:
        parser.error("--pass-pipeline cannot be combined with individual pass flags")
    if args.split_input_file and args.emit_bytecode:
        parser.error("--emit-bytecode cannot be combined with --split-input-file")
    pipeline = args.pass_pipeline if args.pass_pipeline is not None else ",".join(args.passes)
    try:  # a bad pipeline is a usage error, found before the input is read
        build_pass_manager(bnio.make_context(), pipeline, Recorder())
    except FoldError as error:
        parser.error(str(error))
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    else:
        # XLA logs INFO lines to stderr when --verify starts the CPU backend; the CLI's
        # stderr is for its own one-line messages.
        jax.config.update("jax_logging_level", "WARNING")
    try:
        return _run(args, pipeline)
    except _Failure as failure:
        print(failure, file=sys.stderr)
        return EXIT_INPUT_ERROR
    except Exception as error:  # a bug: one line unless --debug
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INPUT_ERROR


def _say(message: str) -> str:
    """A FoldError's message as the CLI prints it: located lines stay as they are."""
    return message if ": error: " in message else f"{PROG}: error: {message}"


def _run(args: argparse.Namespace, pipeline: str) -> int:
    source = "<stdin>" if args.input == "-" else args.input
    data = _read(args.input)
    if args.split_input_file and not data.startswith(bnio.BYTECODE_MAGIC):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _Failure(f"{PROG}: error: {source}: not MLIR text, bytecode or a portable artifact") from None
    chunks = _chunks(data) if isinstance(data, str) else [data]
    outputs: list[str | bytes] = []
    report = FoldReport()
    failed = unverified = False
    for chunk in chunks:
        try:
            out, chunk_report = _process(chunk, source, pipeline, args)
        except FoldError as error:
            if not args.split_input_file:
                raise _Failure(_say(str(error))) from None
            print(_say(str(error)), file=sys.stderr)
            failed = True
            continue
        outputs.append(out)
        report = report.merged(chunk_report)
        if args.verify:
            verification = verify(chunk, out)
            for line in verification.lines():
                print(f"{source}: {line}", file=sys.stderr)
            unverified |= not verification.ok
    if args.report:
        print(report.to_json() if args.report == "json" else report.to_text(), file=sys.stderr)
    if unverified:
        return EXIT_VERIFY_FAILED
    if outputs:
        _write(args.output, _join(outputs))
    return EXIT_INPUT_ERROR if failed else EXIT_OK


def _process(
    data: str | bytes, source: str, pipeline: str, args: argparse.Namespace
) -> tuple[str | bytes, FoldReport]:
    context = bnio.make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    loaded = bnio.load(data, context, source=source)
    recorder = Recorder(source=source)
    with context:
        if pipeline.strip():
            run_pipeline(loaded.module, pipeline, recorder)
        report = recorder.finish(loaded.module)
        if not args.emit_bytecode:
            return bnio.dump(loaded, bnio.Format.TEXT), report
        fmt = bnio.Format.PORTABLE if loaded.format is bnio.Format.PORTABLE else bnio.Format.BYTECODE
        return bnio.dump(loaded, fmt), report


def _chunks(text: str) -> list[str]:
    """Chunks between '// -----' lines, each padded with the newlines before it so that
    line numbers in diagnostics are those of the whole file."""
    chunks, start = [], 0
    for match in _SPLIT_MARKER.finditer(text):
        chunks.append("\n" * text.count("\n", 0, start) + text[start : match.start()])
        start = match.end()
    chunks.append("\n" * text.count("\n", 0, start) + text[start:])
    return chunks


def _join(outputs: list[str | bytes]) -> str | bytes:
    if len(outputs) == 1:
        return outputs[0]
    return "\n// -----\n".join(str(o).rstrip("\n") for o in outputs) + "\n"


def _read(path: str) -> str | bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise _Failure(f"{PROG}: error: {path}: no such file") from None
    except IsADirectoryError:
        raise _Failure(f"{PROG}: error: {path}: is a directory") from None
    except OSError as error:
        raise _Failure(f"{PROG}: error: {path}: cannot read: {error.strerror}") from None


def _write(path: str, content: str | bytes) -> None:
    data = content.encode() if isinstance(content, str) else content
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".bnfold-", dir=directory)
    except OSError as error:
        raise _Failure(f"{PROG}: error: {path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if os.path.exists(path):
            mode = os.stat(path).st_mode & 0o7777
        else:  # what open() would have created: 0666 less the umask
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise _Failure(f"{PROG}: error: {path}: cannot write: {error.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
