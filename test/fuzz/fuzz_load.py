"""Coverage-guided fuzzing (atheris, libFuzzer) of the input reader.

Each input is handed, as bytes, to `stablehlo_bnfold.fold_batch_norm`: `io.load` decides
whether it is MLIR text, bytecode or a portable artifact, parses it, legalizes VHLO and
verifies it; the pass then runs and `io.dump` writes the module back. The only acceptable
outcomes are a result or `FoldError` with a one-line message. Anything else is a finding:
another exception (libFuzzer prints "Uncaught Python exception") or the process dying in
MLIR's C++ code ("deadly signal"). Either way libFuzzer writes the input to
`<artifact_prefix>crash-<sha1>` and exits non-zero.

`--formats=text` (the default) fuzzes MLIR text: inputs that start with the bytecode magic
are skipped, and the seed is examples/conv_bn.mlir. `--formats=all` also feeds bytecode
and portable artifacts (seeds: the example as MLIR bytecode and as portable artifacts of
the oldest and the current StableHLO version). MLIR's bytecode readers are not hardened
against corrupted input and crash on it within seconds; docs/dev/reliability.md lists what
was found, and test/python/test_fuzz.py keeps each finding as a regression test.

Only the package's Python code is instrumented (`atheris.instrument_imports`); jaxlib's
parser is not, so coverage guides the mutations through the reader's Python branches
while the seeds keep them near valid input.

    python3 test/fuzz/fuzz_load.py [--formats=text|all] CORPUS_DIR -seed=1 \\
        -max_total_time=300 -artifact_prefix=fuzz-artifacts/

An empty CORPUS_DIR is filled with the seeds first; libFuzzer adds to it what it finds.
`test/python/test_fuzz.py` runs a short, seeded campaign over text in CI.
"""

from __future__ import annotations

import io
import os
import pathlib
import sys

import atheris

with atheris.instrument_imports(include=["stablehlo_bnfold"]):
    import stablehlo_bnfold
    from stablehlo_bnfold.io import BYTECODE_MAGIC
    from stablehlo_bnfold.report import FoldError

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "conv_bn.mlir"


def seeds(formats: str) -> dict[str, bytes]:
    """examples/conv_bn.mlir as text and, for `all`, as MLIR bytecode and portable
    artifacts (the oldest and the current StableHLO version)."""
    text = EXAMPLE.read_text()
    found = {"conv_bn.mlir": text.encode()}
    if formats == "text":
        return found
    from jax._src.interpreters.mlir import make_ir_context
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    with make_ir_context():
        module = ir.Module.parse(text)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        found["conv_bn.mlirbc"] = buffer.getvalue()
        for name, version in (
            ("oldest", stablehlo.get_minimum_version()),
            ("current", stablehlo.get_current_version()),
        ):
            found[f"conv_bn.{name}.stablehlo"] = stablehlo.serialize_portable_artifact(
                module, str(version)
            )
    return found


def fold(data: bytes) -> None:
    """The property: a result or a FoldError with a one-line message, nothing else."""
    try:
        stablehlo_bnfold.fold_batch_norm(data)
    except FoldError as error:
        message = str(error)
        if not message or "\n" in message:
            raise AssertionError(f"FoldError message is not one line: {message!r}") from None


def fold_text(data: bytes) -> None:
    if not data.startswith(BYTECODE_MAGIC):
        fold(data)


def main(argv: list[str]) -> None:
    formats = "text"
    for arg in [a for a in argv if a.startswith("--formats=")]:
        formats = arg.split("=", 1)[1]
        argv.remove(arg)
    if formats not in ("text", "all"):
        sys.exit(f"fuzz_load.py: --formats must be text or all, not {formats!r}")
    corpora = [arg for arg in argv[1:] if not arg.startswith("-")]
    if corpora and os.path.isdir(corpora[0]) and not os.listdir(corpora[0]):
        for name, data in seeds(formats).items():
            pathlib.Path(corpora[0], name).write_bytes(data)
    atheris.Setup(argv, fold_text if formats == "text" else fold)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
