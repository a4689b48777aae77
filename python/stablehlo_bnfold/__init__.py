"""Fold inference batch norm into the preceding convolution or dot_general in StableHLO.

>>> import stablehlo_bnfold
>>> folded = stablehlo_bnfold.fold_batch_norm(exported)            # doctest: +SKIP
>>> folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)  # doctest: +SKIP
>>> print(report)                                                    # doctest: +SKIP
folded 2, skipped 0
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io as _stdio
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, BinaryIO, Literal, TypeVar, overload

from .basics import ARGUMENT as _ARGUMENT

if TYPE_CHECKING:  # for annotations only: imported lazily below
    from .report import FoldReport

__all__ = ["FoldError", "FoldReport", "Verification", "__version__", "fold_batch_norm", "verify"]

__version__ = "0.1.0"

_LAZY = {"FoldError": "report", "FoldReport": "report", "Verification": "verification", "verify": "verification"}
"""Public names imported when first asked for (PEP 562): they need jaxlib, which the
command's --help, --version and start-up do without (`stablehlo_bnfold.names`)."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


_T = TypeVar("_T")


@overload
def fold_batch_norm(
    module: _T,
    *,
    with_report: Literal[False] = False,
    verify: bool = False,
    trusted: bool | None = None,
) -> _T: ...
@overload
def fold_batch_norm(
    module: _T, *, with_report: Literal[True], verify: bool = False, trusted: bool | None = None
) -> tuple[_T, FoldReport]: ...


def fold_batch_norm(
    module, *, with_report: bool = False, verify: bool = False, trusted: bool | None = None
):
    """Fold every foldable inference batch norm into the convolution or dot_general before it.

    `module` may be
    - a `jax.export.Exported`: a new `Exported` is returned, which still `.call()`s and
      `.serialize()`s; the argument is not changed;
    - a jaxlib `ir.Module`: rewritten in place and returned;
    - `str` MLIR text: text is returned;
    - `bytes`, MLIR bytecode, a StableHLO portable artifact or an `Exported.serialize()`:
      the same format is returned (a portable artifact keeps its StableHLO version).

    `dense_resource` constants (torch-mlir's weights) are turned into `dense` ones, exactly,
    since the patterns must read them and a portable artifact cannot hold them.

    With `with_report=True` the result is `(folded, FoldReport)`; the report lists every
    fold and every candidate left alone, with the reason. With `verify=True` the original
    and the folded module are run through XLA on the CPU (`stablehlo_bnfold.verify`) and a
    `FoldError` is raised, with nothing changed, when an output differs beyond tolerance
    or the module cannot be run there. Raises `FoldError` on input that is not a valid
    StableHLO module.

    `str` and `bytes` are folded in a forked child process: jaxlib's C++ readers crash on
    some corrupted bytes and loop without end on others, and MLIR's text parser overflows
    the stack on deeply nested regions (a `stablehlo.case` 3,000 deep); there a crash or a
    read that takes longer than `stablehlo_bnfold.isolation.read_seconds(len(data))` (30 s
    and more) is a `FoldError`, not the end of the caller's process. That costs a fork and
    a copy of the output (about 0.25 s on ResNet-50, docs/reliability.md). `trusted`
    chooses: by default (`None`) `str` and `bytes` are untrusted and an `Exported` is
    trusted, since JAX reads an `Exported`'s module in this process whenever it is called;
    `trusted=False` folds an `Exported` deserialized from someone else's bytes in a child
    too, and `trusted=True` reads text or bytes from a producer you trust (your own
    `jax.export`) in this process. A `str` that is a file name (`"model.mlir"`) is refused
    with a FoldError that says to pass the file's contents:
    `fold_batch_norm(pathlib.Path("model.mlir").read_bytes())`.

    >>> folded_text = fold_batch_norm(open("model.mlir").read())   # doctest: +SKIP
    """
    from jaxlib.mlir import ir

    from . import exported as _exported
    from . import io as _io
    from . import isolation as _isolation
    from .passes import run_pipeline as _run_pipeline
    from .report import FoldError
    from .report import Recorder as _Recorder

    if verify and isinstance(module, ir.Module):
        # Prove it on a copy first: a module rewritten in place cannot be given back.
        copy = ir.Module.parse(str(module), module.context)
        _check(module, fold_batch_norm(copy))
    elif verify:
        folded = fold_batch_norm(module, with_report=with_report, trusted=trusted)
        _check(module, folded[0] if with_report else folded)
        return folded
    if isinstance(module, ir.Module):
        recorder = _Recorder(source="<input>")
        with module.context:
            _io.inline_resources(module)
        _run_pipeline(module, _ARGUMENT, recorder)
        result = module
        report = recorder.finish(module)
    else:
        if _exported.is_exported(module):
            data = module.mlir_module_serialized
        elif isinstance(module, (str, bytes)):
            data = module
        else:
            raise FoldError(
                f"fold_batch_norm: expected jax.export.Exported, ir.Module, str or bytes, "
                f"got {type(module).__name__}"
            )
        if isinstance(data, str):
            _refuse_a_file_name(data)
        if trusted is None:
            trusted = _exported.is_exported(module)
        fold = functools.partial(_fold_into, data)
        if not trusted:
            # jaxlib's bytecode readers can crash or hang on corrupted bytes, and MLIR's
            # text parser recurses once per nested region (a stablehlo.case 3,000 deep
            # overflows the stack): read them in a child process, where neither a crash
            # nor a hang can reach the caller.
            report, out = _isolation.run(fold, source="<input>", size=len(data))
        else:
            buffer = _stdio.BytesIO()
            report, out = fold(buffer, contextlib.nullcontext), buffer.getvalue()
        if isinstance(data, str):
            out = out.decode()
        result = _exported.replace_module(module, out) if _exported.is_exported(module) else out
    return (result, report) if with_report else result


_FILE_SUFFIXES = (".mlir", ".mlirbc", ".stablehlo", ".bc", ".vhlo", ".txt")


def _refuse_a_file_name(text: str) -> None:
    """FoldError for a str that names a file instead of holding MLIR text, which MLIR
    would parse as an op name ("Dialect `model' not found"). Every module with an op has a
    region, so text without a '{' on one line that is a file or looks like a file name
    cannot be one."""
    if "{" in text or "\n" in text.strip() or len(text) > 4096:
        return
    name = text.strip()
    exists = os.path.isfile(name)
    if not exists and not (os.sep in name or name.endswith(_FILE_SUFFIXES)):
        return
    from .report import FoldError, one_line

    what = "is a file name" if exists else "looks like a file name (and there is no such file)"
    raise FoldError(
        one_line(
            f"fold_batch_norm: {name!r} {what}, not MLIR text: pass the file's contents, "
            f"fold_batch_norm(pathlib.Path({name!r}).read_bytes())"
        )
    )


def _fold_into(
    data: str | bytes, output: BinaryIO, reading: Callable[[], AbstractContextManager]
) -> FoldReport:
    """Fold the module `data`, reading it inside `with reading():`, and write it to
    `output` in the format it came in; the report."""
    from . import io as _io
    from .passes import run_pipeline as _run_pipeline
    from .report import Recorder as _Recorder

    recorder = _Recorder(source="<input>")
    context = _io.make_context()
    with reading():
        loaded = _io.load(data, context)
    with context:
        _run_pipeline(loaded.module, _ARGUMENT, recorder)
        report = recorder.finish(loaded.module)
        _io.write(loaded, output, consume=True)
    return report


def _check(original, folded) -> None:
    from .report import FoldError
    from .verification import verify

    result = verify(original, folded)
    if not result.ok:  # the line the command prints, with the first output that failed
        raise FoldError(f"<input>: {result.message()}")
