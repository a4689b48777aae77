"""`stablehlo-bnfold-opt`: an mlir-opt style driver for `stablehlo-fold-batch-norm`.

    stablehlo-bnfold-opt [INPUT|-] --stablehlo-fold-batch-norm [-o OUT]
        [--canonicalize] [--cse] [--pass-pipeline=PIPELINE]
        [--split-input-file] [--emit-bytecode | --emit-text]
        [--mlir-elide-elementsattrs-if-larger=N]
        [--mlir-print-debuginfo] [--mlir-print-op-generic] [--mlir-print-ir-after-all]
        [--mlir-timing] [--mlir-disable-threading] [--verify-diagnostics]
        [--report[=text|json]] [--report-file=FILE] [--verify] [--no-memory-check]
        [--fold-parameters=INDICES --prepare-output=FILE]
        [--allow-unregistered-dialect] [--debug]

Every long flag may be spelled with one dash, as mlir-opt takes them
(`-stablehlo-fold-batch-norm`, `-split-input-file`, `-pass-pipeline=...`).

A portable artifact or an `Exported.serialize()` file is written back as the same kind
(`--emit-text` for text; never to a terminal); MLIR text and bytecode as text, as mlir-opt
does (`--emit-bytecode` for bytecode). `--report-file FILE` keeps the report (and
--verify's result) apart from everything else, JSON when FILE ends with .json.

Exit codes: 0 success; 1 bad input or a failed pass; 2 bad usage; 3 --verify found an
output that differs beyond tolerance (`verification FAILED`), or cannot verify the module
here (`cannot verify here: ...`); no output is written then. Problems print one line
to stderr (`file:line:col: error: ...` when located, else `stablehlo-bnfold-opt: error:
...`), with a traceback only under --debug. `-o` writes a regular file through a
temporary file renamed over it, so a failure leaves nothing half-written and an input given
as its own output is replaced atomically; devices, FIFOs and /dev/stdout are written
straight, links are followed, and nothing that is not ours is replaced (`output`).

The command (`console_main`) runs `main` in a forked child and waits for it
(`sandbox.command`): jaxlib's C++ bytecode readers can crash on a corrupted file, and the
kernel kills a process that runs out of memory, before any Python code can object. Then
the parent prints the one line (what the child was doing, on which file, and the signal),
removes the child's temporary output file and exits 1. The child reads under an alarm
(`sandbox.reading`): a corrupted count can make MLIR's reader loop without end.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import logging
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, BinaryIO

from . import __version__, sandbox
from .basics import ARGUMENT, one_line
from .output import write_output

if TYPE_CHECKING:  # for annotations only: imported through `_lazy`
    from jaxlib.mlir.passmanager import PassManager

    from .io import Format, Loaded
    from .report import FoldReport
    from .verification import Verification

__all__ = [
    "EXIT_INPUT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_VERIFY_FAILED",
    "console_main",
    "main",
]

PROG = "stablehlo-bnfold-opt"
EXIT_OK = 0
EXIT_INPUT_ERROR = 1
EXIT_USAGE = 2
EXIT_VERIFY_FAILED = 3

_SPLIT_MARKER = re.compile(r"^// -----.*$", re.MULTILINE)


class _AppendPass(argparse.Action):
    """Keep pass flags in command-line order, as mlir-opt does. Options come only as
    `--pass=OPTIONS` (`_split_options` moves them aside), so a file named after the
    flag is never taken for its options."""

    def __call__(self, parser, namespace, values, option_string=None):
        passes = list(getattr(namespace, "passes", None) or [])
        name = option_string.lstrip("-")
        options = parser.pass_options.pop(0) if name == ARGUMENT else ""
        passes.append(f"{name}{{{options}}}" if options else name)
        namespace.passes = passes


class _ReportFormat(argparse.Action):
    """`--report` (text) or `--report=FORMAT`: the format only after `=`, so that the
    file after a bare `--report` stays the input (`_split_options` moves it aside)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.report = parser.report_formats.pop(0) or "text"


REPORT_FORMATS = ("text", "json")


def _split_options(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """argv as argparse takes it: mlir-opt's single-dash spellings (`-split-input-file`,
    `-pass-pipeline=P`, `-o=OUT`) as the double-dash ones; `--stablehlo-fold-batch-norm=OPTS`
    and `--report=FORMAT` as bare flags, their values queued in order. Everything after
    `--` is a file name."""
    parser.pass_options, parser.report_formats = [], []
    known = {name for name in parser._option_string_actions if name.startswith("--")}
    out = []
    for position, arg in enumerate(argv):
        if arg == "--":
            return out + argv[position:]
        name, equals, value = arg.partition("=")
        if name.startswith("-") and not name.startswith("--") and "-" + name in known:
            name = "-" + name  # LLVM's options take one dash or two
        elif name == "-o" and equals:
            out += ["-o", value]
            continue
        if name == f"--{ARGUMENT}":
            parser.pass_options.append(value)
            arg = name
        elif name == "--report":
            if equals and value not in REPORT_FORMATS:
                parser.error(f"--report={value}: the format is one of {', '.join(REPORT_FORMATS)}")
            _hint_report_format(parser, equals, argv[position + 1 : position + 2])
            parser.report_formats.append(value)
            arg = name
        elif name in ("--canonicalize", "--cse") and equals:
            parser.error(f"{name} takes no options")
        elif name in known:
            arg = name + equals + value
        out.append(arg)
    return out


def _hint_report_format(parser: argparse.ArgumentParser, equals: str, after: list[str]) -> None:
    """Usage error for `--report json` (a space): the word after a bare `--report` is the
    input, so a format written there would be read as a file named `json`. Only when the
    word is a format and no such file exists: `--report model.mlir` stays the input."""
    if not equals and after and after[0] in REPORT_FORMATS and not os.path.exists(after[0]):
        parser.error(
            f"--report {after[0]}: the format comes after '=', as --report={after[0]} "
            f"(a word after --report is the input file, and there is no file {after[0]!r})"
        )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like mlir-opt's usage errors
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Fold inference batch norm into the preceding convolution or dot_general in a "
            "StableHLO module (MLIR text, MLIR bytecode, a StableHLO portable artifact, or a "
            "file written by jax.export's Exported.serialize(), told apart by content)."
        ),
        epilog=(
            "Long flags also take one dash, as mlir-opt's do (-split-input-file, "
            "-pass-pipeline=...). "
            "Exit codes: 0 success, 1 bad input or a failed pass, 2 bad usage, "
            "3 --verify failed or could not run the module (nothing written). "
            "Example: stablehlo-bnfold-opt examples/conv_bn.mlir --stablehlo-fold-batch-norm; "
            "for jax.export: open('model.jax', 'wb').write(exported.serialize()), then "
            "stablehlo-bnfold-opt model.jax --stablehlo-fold-batch-norm -o folded.jax (the same "
            "kind back), then jax.export.deserialize(open('folded.jax', 'rb').read()).call(x). "
            "Without a pass the module is written unchanged, with a warning."
        ),
    )
    parser.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    parser.add_argument("-o", dest="output", default="-", help="output file, or - for stdout (default)")
    parser.add_argument(
        f"--{ARGUMENT}",
        action=_AppendPass,
        nargs=0,
        dest="passes",
        help="fold batch norm into convolutions and dot_generals, and merge parallel "
        f"convolution branches; options as --{ARGUMENT}='max-iterations=N "
        "fold-weight-arguments=false fold-larger-weight-arguments=true "
        "merge-parallel-branches=false' (docs/passes.md)",
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
        help="write MLIR bytecode instead of text (MLIR text and bytecode inputs are written "
        "as text by default, as mlir-opt does)",
    )
    parser.add_argument(
        "--emit-text",
        action="store_true",
        help="write MLIR text for a portable artifact or an Exported.serialize() file, which "
        "are otherwise written back as the same kind (a portable artifact of the same "
        "StableHLO version; an Exported that jax.export.deserialize reads and .call()s); "
        "such output is not written to a terminal without -o or --emit-text",
    )
    parser.add_argument(
        "--mlir-elide-elementsattrs-if-larger",
        type=_count,
        metavar="N",
        dest="elide",
        help="print elements attributes (weights) of more than N elements as "
        "dense_resource<__elided__>, so that a person can read the module; the output "
        "cannot be read back (text output only: implies --emit-text)",
    )
    for flag, what in (
        ("--mlir-print-debuginfo", "print each op's location (loc(...)) in text output; "
         "bytecode keeps them always"),
        ("--mlir-print-op-generic", "print ops in their generic form"),
        ("--mlir-print-ir-after-all", "print the module to stderr after each pass"),
        ("--mlir-timing", "print the time each pass took to stderr"),
        ("--mlir-disable-threading", "run MLIR on this thread only"),
        ("--verify-diagnostics", "check errors and the report's folds and skips, as remarks "
         "at their ops, against the input's `// expected-remark@+1 {{folded ...}}` and "
         "`expected-error` comments; exit 1 on a difference"),
    ):
        parser.add_argument(flag, action="store_true", help=what)
    parser.add_argument(
        "--report",
        action=_ReportFormat,
        nargs=0,
        help="print every fold and every candidate left alone, with the reason, to stderr; "
        "--report=json the same as JSON, which then holds --verify's result too (instead "
        "of its lines), so that stderr is one JSON document (the format only after '=': a "
        "file after --report is the input)",
    )
    parser.add_argument(
        "--report-file",
        metavar="FILE",
        help="write the report to FILE, alone: JSON when FILE ends with .json, else text; "
        "with --verify it holds the verification too (JSON keys: folds, skips, folded, "
        "skipped, verification)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run the original and the folded module through XLA on the CPU on seeded "
        "random inputs (weight arguments He-scaled, a symbolic batch at sizes 2, 1, 3, a "
        "sharded export on its number of CPU devices), print one line per output to "
        "stderr, and exit 3 without writing anything if one differs by more than "
        "max(8 x the original's own change when its inputs move by one ulp, 1e-6 for "
        "f32/f64, 4 ulps of 1.0 for f16/bf16), or cannot be verified here (NaN or "
        "infinite outputs of the original, XLA cannot run it)",
    )
    parser.add_argument(
        "--fold-parameters",
        type=_indices,
        metavar="INDICES",
        help="the weights are arguments of @main at these comma-separated positions (for an "
        "Exported.serialize() file: positional arguments of the exported function): fold "
        "them once instead of on every call, writing the module that computes the folded "
        "weights from them to --prepare-output and the one that takes the folded weights "
        "in their place, and the data, to -o (stablehlo_bnfold.fold_parameters)",
    )
    parser.add_argument(
        "--prepare-output",
        metavar="FILE",
        help="with --fold-parameters: where the module that computes the folded weights goes",
    )
    parser.add_argument(
        "--no-memory-check",
        action="store_true",
        help="fold even when the estimated peak memory (checked before the input is read) "
        "exceeds what the machine, its cgroup or ulimit -v leaves",
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


def _indices(text: str) -> list[int]:
    """A comma-separated list of argument positions."""
    items = [item.strip() for item in text.split(",")]
    if not all(item.isdigit() for item in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated argument positions, got {text!r}")
    return sorted({int(item) for item in items})


def _count(text: str) -> int:
    """A non-negative integer option, as mlir-opt's `uint` options take."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


class _Failure(Exception):
    """A problem already worded for the user."""


class _Modules:
    """jax and the package's modules that import it (about 2 s), as attributes, each
    imported the first time it is named (`_lazy.io`, `_lazy.session`). That is once the
    arguments are parsed (`_import_the_pass`), so that `--help`, `--version` and usage
    errors answer at once, and, under `console_main`, in the child: the parent never has
    JAX's threads when it forks, and an interrupt while they load is the child's (exit 130)."""

    def __getattr__(self, name: str) -> types.ModuleType:
        module = importlib.import_module(name if name == "jax" else f".{name}", __package__)
        setattr(self, name, module)
        return module


_lazy = _Modules()

_THE_PASS = (
    "jax", "diagnostics", "io", "memory", "parameters", "passes", "report", "session", "verification",
)


def _import_the_pass() -> None:
    """Import every module `main` uses through `_lazy`, now."""
    for name in _THE_PASS:
        getattr(_lazy, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; returns the exit code (the console script exits with it)."""
    parser = _parser()
    argv = list(argv if argv is not None else sys.argv[1:])
    args = parser.parse_args(_split_options(parser, argv))
    _import_the_pass()
    if args.pass_pipeline is not None and args.passes:
        parser.error("--pass-pipeline cannot be combined with individual pass flags")
    if args.split_input_file and args.emit_bytecode:
        parser.error("--emit-bytecode cannot be combined with --split-input-file")
    if args.emit_text and args.emit_bytecode:
        parser.error("--emit-text cannot be combined with --emit-bytecode")
    if args.elide is not None and args.emit_bytecode:
        parser.error(
            "--mlir-elide-elementsattrs-if-larger applies to text: "
            "it cannot be combined with --emit-bytecode"
        )
    _check_parameter_flags(parser, args)
    pipeline = args.pass_pipeline if args.pass_pipeline is not None else ",".join(args.passes)
    try:  # a bad pipeline is a usage error, found before the input is read
        _lazy.passes.build_pass_manager(_lazy.io.make_context(), pipeline, _lazy.report.Recorder())
    except _lazy.report.FoldError as error:
        parser.error(str(error))
    if args.report_file in ("-", "/dev/stdout") and args.output in ("-", "/dev/stdout"):
        parser.error("--report-file and the output cannot both be stdout (give -o FILE)")
    fmt = _input_format(args) if args.output in ("-", "/dev/stdout") else None
    if _binary_to_a_terminal(args, fmt):
        parser.error(_BINARY_TO_A_TERMINAL.format(what=fmt.value))
    if args.pass_pipeline is None and not args.passes:
        print(f"{PROG}: warning: no pass given: the module is written unchanged (add --{ARGUMENT})", file=sys.stderr)
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    else:
        # XLA logs INFO lines to stderr when --verify starts the CPU backend; the CLI's
        # stderr is for its own one-line messages.
        _lazy.jax.config.update("jax_logging_level", "WARNING")
    try:
        return _run(args, pipeline)
    except _Failure as failure:
        print(one_line(str(failure)), file=sys.stderr)
        return EXIT_INPUT_ERROR
    except Exception as error:  # a bug: one line unless --debug
        if args.debug:
            traceback.print_exc()
        print(one_line(f"{PROG}: error: internal error: {type(error).__name__}: {error}"), file=sys.stderr)
        return EXIT_INPUT_ERROR


_BINARY_TO_A_TERMINAL = (
    "the input is a {what} and so would be the output: not written to a terminal "
    "(give -o FILE, or --emit-text to print it as text)"
)


def _check_parameter_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--fold-parameters and --prepare-output go together, with the pass flag alone."""
    if (args.fold_parameters is None) != (args.prepare_output is None):
        parser.error("--fold-parameters and --prepare-output go together")
    if args.fold_parameters is None:
        return
    if args.passes[:1] != [p for p in args.passes if p.startswith(ARGUMENT)] or len(args.passes) != 1:
        parser.error(f"--fold-parameters runs --{ARGUMENT} alone (its options allowed)")
    for flag in ("split_input_file", "verify", "verify_diagnostics", "pass_pipeline"):
        if getattr(args, flag) not in (None, False):
            parser.error(f"--fold-parameters cannot be combined with --{flag.replace('_', '-')}")
    if args.output in ("-", "/dev/stdout"):
        parser.error("--fold-parameters writes two modules: give -o FILE for the folded one")


def _run_parameters(args: argparse.Namespace, source: str) -> int:
    """--fold-parameters: prepare to --prepare-output, folded to -o, each in the input's
    kind (an Exported.serialize() file: both Exported, the positions positional arguments;
    else @main's argument positions)."""
    options = args.passes[0].partition("{")[2].rstrip("}")
    data = sys.stdin.buffer.read() if args.input == "-" else _lazy.io.read_file(args.input)
    sandbox.doing("folding", source)
    try:
        if _lazy.io.sniff(data)[0] is _lazy.io.Format.EXPORTED:
            exported = _lazy.jax.export.deserialize(bytearray(data))
            prepare, folded, report = _lazy.parameters.fold_parameters(
                exported, tuple(args.fold_parameters), options=options, trusted=True, with_report=True
            )
            emitted = [(args.prepare_output, prepare.serialize()), (args.output, folded.serialize())]
        else:
            loaded = _lazy.session.load(data, _lazy.io.make_context(), source=source)
            report, prepare, folded, _ = _lazy.parameters.fold_module(loaded, set(args.fold_parameters), options)
            emitted = [
                (path, _lazy.io.dump(module, _output_format(module.format, args), **_printing(args)))
                for path, module in ((args.prepare_output, prepare), (args.output, folded))
            ]
    except _lazy.report.FoldError as error:
        raise _Failure(_say(f"{source}: {error}" if not str(error).startswith(source) else str(error))) from None
    _report(args, source, report, [])
    for path, output in emitted:
        output = output.encode() if isinstance(output, str) else output
        _write(path, lambda file, output=output: file.write(output))
    return EXIT_OK


def _input_format(args: argparse.Namespace) -> Format | None:
    """The input file's format, told by content; None for stdin or what is not a file."""
    if args.input == "-" or not os.path.isfile(args.input):
        return None
    try:
        return _lazy.io.sniff_file(args.input)[0]
    except _lazy.report.FoldError:  # unreadable: `_run` says so
        return None


def _binary_to_a_terminal(args: argparse.Namespace, fmt: Format | None) -> bool:
    """Whether a portable artifact or jax.export serialization, written back as one
    because the input is one, would go to a terminal, where it is only noise."""
    kinds = (_lazy.io.Format.PORTABLE, _lazy.io.Format.EXPORTED)
    return (
        fmt in kinds
        and args.output in ("-", "/dev/stdout")
        and _output_format(fmt, args) is fmt
        and sys.stdout.isatty()
    )


def _say(message: str) -> str:
    """A FoldError's message as the CLI prints it, one line: located lines keep their
    place, others get the tool's name."""
    return one_line(message if ": error: " in message else f"{PROG}: error: {message}")


def _run(args: argparse.Namespace, pipeline: str) -> int:
    source = "<stdin>" if args.input == "-" else args.input
    if args.fold_parameters is not None:
        return _run_parameters(args, source)
    try:
        chunks = _inputs(args, source)
    except _lazy.report.FoldError as error:
        raise _Failure(_say(str(error))) from None
    outputs: list[Loaded | str | bytes] = []
    report = _lazy.report.FoldReport()
    verifications: list[Verification] = []
    failed = False
    written_as = None  # the format the output is written in, for the terminal check
    errors: list[str] = []  # under --verify-diagnostics, checked instead of printed
    for chunk in chunks:
        try:
            loaded, chunk_report = _process(chunk, source, pipeline, args)
            output = whole = loaded
            if args.verify or args.split_input_file:  # needed whole, or the context can go
                whole = _lazy.io.dump(loaded, _output_format(loaded.format, args), consume=True, **_printing(args))
                if args.elide is not None:  # what is written; `whole` is what is verified
                    output = _lazy.io.dump(loaded, large_elements_limit=args.elide, **_printing(args))
                else:
                    output = whole
        except _lazy.report.FoldError as error:
            if args.verify_diagnostics:
                errors.append(str(error))
                continue
            if not args.split_input_file:
                raise _Failure(_say(str(error))) from None
            print(_say(str(error)), file=sys.stderr)
            failed = True
            continue
        outputs.append(output)
        written_as = written_as or loaded.format
        report = report.merged(chunk_report)
        if args.verify:
            sandbox.doing("verifying", source)
            original = _lazy.io.read_file(args.input) if chunk is None else chunk
            verifications.append(_lazy.verification.verify(original, whole))
            if args.report != "json":  # else in the JSON, so that stderr is one document
                for line in verifications[-1].lines():
                    print(one_line(f"{source}: {line}"), file=sys.stderr)
    _report(args, source, report, verifications)
    if args.verify_diagnostics:
        problems = _check_diagnostics(args, source, chunks, report, errors)
        for problem in problems:
            print(problem, file=sys.stderr)
        failed = bool(problems)
    if not all(v.ok for v in verifications):
        return EXIT_VERIFY_FAILED
    if outputs and _binary_to_a_terminal(args, written_as):  # stdin: known only now
        print(f"{PROG}: error: {_BINARY_TO_A_TERMINAL.format(what=written_as.value)}", file=sys.stderr)
        return EXIT_USAGE
    if outputs:
        _write(args.output, _emitter(outputs, args))
    return EXIT_INPUT_ERROR if failed else EXIT_OK


def _report(
    args: argparse.Namespace, source: str, report: FoldReport, verifications: list[Verification]
) -> None:
    """The report, to stderr with --report and to a file of its own with --report-file:
    text (then --verify's lines) or JSON (then its result under `verification`, one object
    per module verified)."""
    if args.report:  # --verify's lines went to stderr already, unless the report is JSON
        shown = verifications if args.report == "json" else []
        print(_report_as(args.report, source, report, shown), file=sys.stderr)
    if args.report_file is not None:
        kind = "json" if args.report_file.lower().endswith(".json") else "text"
        data = (_report_as(kind, source, report, verifications) + "\n").encode()
        _write(args.report_file, lambda file: file.write(data))


def _report_as(kind: str, source: str, report: FoldReport, verifications: list[Verification]) -> str:
    if kind == "json":
        as_dict = report.to_dict()
        if verifications:
            as_dict["verification"] = [v.to_dict() for v in verifications]
        return json.dumps(as_dict, indent=2)
    lines = [report.to_text()]
    lines += [one_line(f"{source}: {line}") for v in verifications for line in v.lines()]
    return "\n".join(lines)


def _printing(args: argparse.Namespace) -> dict:
    """How text output is printed: --mlir-print-debuginfo, --mlir-print-op-generic."""
    return {"debug_info": args.mlir_print_debuginfo, "generic": args.mlir_print_op_generic}


def _check_diagnostics(
    args: argparse.Namespace,
    source: str,
    chunks: list[str | bytes | None],
    report: FoldReport,
    errors: list[str],
) -> list[str]:
    """--verify-diagnostics: the report's entries as remarks and the errors, against the
    input's expected-* comments; the problems, one line each."""
    if args.split_input_file:  # each chunk is padded to its place in the file
        text = "\n".join(_merge_lines([c for c in chunks if isinstance(c, str)]))
    else:
        data = _lazy.io.read_file(args.input) if chunks == [None] else chunks[0]
        data = data.encode() if isinstance(data, str) else data
        text = "" if _lazy.io.is_binary(data) else data.decode("utf-8", errors="replace")
    diagnostic = _lazy.diagnostics.Diagnostic
    produced = [diagnostic("remark", where, what) for where, what in report.entries()]
    for error in errors:
        where, separator, message = error.partition(": error: ")
        produced.append(diagnostic("error", where, message) if separator else diagnostic("error", "", error))
    return _lazy.diagnostics.check(text, source, produced)


def _merge_lines(chunks: list[str]) -> list[str]:
    """The lines of the whole file from its padded chunks (each chunk's lines in place)."""
    lines: list[str] = []
    for chunk in chunks:
        for number, line in enumerate(chunk.split("\n")):
            if number >= len(lines):
                lines.append(line)
            elif line:
                lines[number] = line
    return lines


def _inputs(args: argparse.Namespace, source: str) -> list[str | bytes | None]:
    """What `_process` loads: None for an input file, which MLIR then reads without a
    copy held here (a fold of large weights needs all the memory it can get); the data in
    memory for stdin, a pipe or device (read once) and `--split-input-file`. FoldError
    when the input cannot be read, or folding it would not fit in memory (unless
    `--no-memory-check`)."""
    sandbox.doing("reading", source)
    fits = (lambda *a, **k: None) if args.no_memory_check else _lazy.memory.check_fits
    if args.input != "-" and os.path.isfile(args.input) and not args.split_input_file:
        fmt, _ = _lazy.io.sniff_file(args.input)
        fits(os.path.getsize(args.input), fmt, source)
        return [None]
    data = sys.stdin.buffer.read() if args.input == "-" else _lazy.io.read_file(args.input)
    fits(len(data), _lazy.io.sniff(data)[0], source, held=True)
    if args.split_input_file and not _lazy.io.is_binary(data):
        try:
            return _chunks(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise _lazy.report.FoldError(f"{source}: not MLIR text, bytecode or a portable artifact") from None
    return [data]


def _process(
    data: str | bytes | None, source: str, pipeline: str, args: argparse.Namespace
) -> tuple[Loaded, FoldReport]:
    """Load `data` (None: the input file), run the pipeline, report."""
    context = _lazy.io.make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    if args.mlir_disable_threading:
        context.enable_multithreading(False)
    seconds = sandbox.read_seconds(len(data) if data is not None else os.path.getsize(args.input))
    # In the child, a read that loops (a corrupted count in bytecode) ends by an alarm.
    with sandbox.reading(source, seconds):
        loaded = _lazy.session.load(data, context, source=source, path=args.input)
    sandbox.doing("folding", source)
    instrument = functools.partial(_instrument, args)
    return loaded, _lazy.session.run(loaded.module, pipeline, source=source, instrument=instrument)


def _instrument(args: argparse.Namespace, pm: PassManager) -> None:
    """--mlir-timing and --mlir-print-ir-after-all: MLIR prints both to stderr."""
    if args.mlir_timing:
        pm.enable_timing()
    if args.mlir_print_ir_after_all:
        pm.enable_ir_printing(
            print_after_all=True,
            large_elements_limit=args.elide,
            enable_debug_info=args.mlir_print_debuginfo,
            print_generic_op_form=args.mlir_print_op_generic,
        )


def _output_format(fmt: Format, args: argparse.Namespace) -> Format:
    """What a module read in `fmt` is written as: a portable artifact or a jax.export
    serialization as the same kind (what reads the input reads the output; their readers
    take no text) unless --emit-text or --mlir-elide-elementsattrs-if-larger (text for
    a person) asks for text; MLIR text and bytecode as text, or bytecode with
    --emit-bytecode, as mlir-opt does."""
    if args.emit_text or args.elide is not None:
        return _lazy.io.Format.TEXT
    if fmt in (_lazy.io.Format.PORTABLE, _lazy.io.Format.EXPORTED):
        return fmt
    return _lazy.io.Format.BYTECODE if args.emit_bytecode else _lazy.io.Format.TEXT


def _emitter(
    outputs: list[Loaded | str | bytes], args: argparse.Namespace
) -> Callable[[BinaryIO], object]:
    """Writes the output to a binary file: one module streamed from its context, or the
    chunks already in memory, joined by '// -----' lines."""
    if len(outputs) == 1 and isinstance(outputs[0], _lazy.io.Loaded):
        loaded = outputs[0]
        return lambda file: _lazy.io.write(
            loaded,
            file,
            _output_format(loaded.format, args),
            consume=True,
            large_elements_limit=args.elide,
            **_printing(args),
        )
    data = outputs[0] if len(outputs) == 1 else "\n// -----\n".join(
        str(o).rstrip("\n") for o in outputs
    ) + "\n"
    data = data.encode() if isinstance(data, str) else data
    return lambda file: file.write(data)


def _chunks(text: str) -> list[str]:
    """Chunks between '// -----' lines, each padded with the newlines before it so that
    line numbers in diagnostics are those of the whole file."""
    chunks, start = [], 0
    for match in _SPLIT_MARKER.finditer(text):
        chunks.append("\n" * text.count("\n", 0, start) + text[start : match.start()])
        start = match.end()
    chunks.append("\n" * text.count("\n", 0, start) + text[start:])
    return chunks


def _write(path: str, emit: Callable[[BinaryIO], object]) -> None:
    """Have `emit` write the output to `path` (- for stdout) without destroying what is
    not ours (`output.write_output`): a failure leaves no partial output, and the parent
    removes a temporary file the child named should the child die."""
    where = "<stdout>" if path in ("-", "/dev/stdout") else path
    sandbox.doing("writing", where)
    try:
        write_output(path, emit, lambda temporary: sandbox.doing("writing", where, temporary))
    except _lazy.report.FoldError as error:
        raise _Failure(_say(str(error))) from None
    except OSError as error:  # one line, whatever the system refused: ENOSPC, EACCES, EISDIR
        raise _Failure(one_line(f"{PROG}: error: {where}: cannot write: {error.strerror or error}")) from None


def console_main() -> int:
    """The `stablehlo-bnfold-opt` command: `main(sys.argv[1:])` in a forked child
    (`sandbox.command`), the exit code its. A crash or a kill for lack of memory ends it with
    one line on stderr and exit 1, its temporary output file removed; SIGINT, SIGTERM and
    SIGHUP are passed on to the child; without `os.fork`, `main` runs in this process.
    Nothing here imports jax (`_import_the_pass` runs in the child)."""
    return sandbox.command(main, _say)


if __name__ == "__main__":
    sys.exit(console_main())
