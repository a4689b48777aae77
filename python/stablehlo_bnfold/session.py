"""One fold of one module, the same for every caller: load, run, report, write.

    data ──load──▶ io.Loaded ──run──▶ FoldReport (module rewritten in place) ──io.write──▶ output

`load` reads the input (text, bytecode, a portable artifact, a `jax.export` serialization,
or a file) into a StableHLO module in a context of its own, legalizing VHLO and verifying
it; `load_module` does the same to an `ir.Module` the caller parsed; `run` runs a pass
pipeline on it while a `Recorder` collects every fold and skip, and finishes the report;
`fold_into` is the three in a row, writing the module back in the format it came in.

The API (`api.fold_batch_norm`) calls `fold_into` (in a child process, `sandbox.run`, for
untrusted input) and `load_module`; the command (`cli`) calls `load` and `run`, since it
writes through a temporary file (`output.write_output`) and may split its input;
`verification` calls `fold_into` with no pipeline to print a module as text; the
benchmarks time `run` on a loaded module.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import BinaryIO

from jaxlib.mlir import ir, passmanager

from . import io
from .passes import ARGUMENT, run_pipeline
from .report import FoldReport, Recorder

__all__ = ["fold_into", "load", "load_module", "run"]


def load(
    data: str | bytes | None, context: ir.Context, *, source: str = "<input>", path: str | None = None
) -> io.Loaded:
    """The module in `data`, or, when `data` is None, in the file at `path` (read by MLIR
    without a copy held here); FoldError with one line naming `source` when it is not a
    valid StableHLO module.

    >>> loaded = load(None, io.make_context(), source="m.mlir", path="m.mlir")  # doctest: +SKIP
    """
    if data is None:
        return io.load_file(path, context)
    return io.load(data, context, source=source)


def load_module(module: ir.Module, *, source: str = "<input>") -> io.Loaded:
    """`load` for an `ir.Module` already parsed: legalized and verified in place."""
    return io.load_module(module, source=source)


def run(
    module: ir.Module,
    pipeline: str = ARGUMENT,
    *,
    source: str = "<input>",
    instrument: Callable[[passmanager.PassManager], None] | None = None,
) -> FoldReport:
    """Run `pipeline` (by default the fold alone; "" runs nothing) on `module` in place,
    in its context; the report of every fold and of every skip of an op still there.
    FoldError if a pass or pattern failed. `instrument` may turn on the pass manager's
    timing or IR printing first.

    >>> report = run(loaded.module, source="m.mlir")  # doctest: +SKIP
    """
    recorder = Recorder(source=source)
    with module.context:
        if pipeline.strip():
            run_pipeline(module, pipeline, recorder, instrument)
        return recorder.finish(module)


def fold_into(
    data: str | bytes,
    output: BinaryIO,
    reading: Callable[[], AbstractContextManager] = nullcontext,
    *,
    source: str = "<input>",
    pipeline: str = ARGUMENT,
    fmt: io.Format | None = None,
) -> FoldReport:
    """Load `data` (inside `with reading():`, which `sandbox.run` bounds in time), run
    `pipeline` on it and write it to the binary file `output` in `fmt`, by default the
    format it came in; the report.

    >>> buffer = BytesIO(); report = fold_into(text, buffer)  # doctest: +SKIP
    """
    context = io.make_context()
    with reading():
        loaded = load(data, context, source=source)
    report = run(loaded.module, pipeline, source=source)
    with context:
        io.write(loaded, output, fmt, consume=True)
    return report
