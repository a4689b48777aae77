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
import io as _stdio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import BinaryIO, Literal, TypeVar, overload

from jaxlib.mlir import ir

from . import exported as _exported
from . import io as _io
from . import isolation as _isolation
from .passes import ARGUMENT as _ARGUMENT
from .passes import run_pipeline as _run_pipeline
from .report import FoldError, FoldReport, Recorder as _Recorder
from .verification import Verification, verify

__all__ = ["FoldError", "FoldReport", "Verification", "__version__", "fold_batch_norm", "verify"]

__version__ = "0.1.0"

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

    `bytes` (bytecode or a portable artifact) are folded in a forked child process:
    jaxlib's C++ readers crash on some corrupted bytes and loop without end on others, and
    there a crash or a read that takes longer than
    `stablehlo_bnfold.isolation.read_seconds(len(data))` (30 s and more) is a `FoldError`,
    not the end of the caller's process. That costs a fork and a copy of the output (about
    0.25 s on ResNet-50, docs/reliability.md). `trusted` chooses: by default (`None`)
    `bytes` are untrusted and an `Exported` is trusted, since JAX reads an `Exported`'s
    module in this process whenever it is called; `trusted=False` folds an `Exported`
    deserialized from someone else's bytes in a child too, and `trusted=True` reads bytes
    from a producer you trust (your own `jax.export`) in this process.

    >>> folded_text = fold_batch_norm(open("model.mlir").read())   # doctest: +SKIP
    """
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
        if trusted is None:
            trusted = _exported.is_exported(module)
        fold = functools.partial(_fold_into, data)
        if isinstance(data, bytes) and _io.is_binary(data) and not trusted:
            # jaxlib's bytecode readers can crash or hang on corrupted bytes: read them in
            # a child process, where neither can reach the caller.
            report, out = _isolation.run(fold, source="<input>", size=len(data))
        else:  # MLIR text: its parser is fuzzed in CI
            buffer = _stdio.BytesIO()
            report, out = fold(buffer, contextlib.nullcontext), buffer.getvalue()
        if isinstance(data, str):
            out = out.decode()
        result = _exported.replace_module(module, out) if _exported.is_exported(module) else out
    return (result, report) if with_report else result


def _fold_into(
    data: str | bytes, output: BinaryIO, reading: Callable[[], AbstractContextManager]
) -> FoldReport:
    """Fold the module `data`, reading it inside `with reading():`, and write it to
    `output` in the format it came in; the report."""
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
    result = verify(original, folded)
    if not result.ok:  # the line the command prints, with the first output that failed
        raise FoldError(f"<input>: {result.message()}")
