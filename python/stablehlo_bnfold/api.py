"""`fold_batch_norm`: what the API takes and gives back (an `Exported`, an `ir.Module`,
text or bytes), whether it reads them in a child process (`trusted`), and the proof on
XLA (`verify=True`). The fold itself is `session`'s, the child process `sandbox`'s.

Nothing here imports jax or jaxlib until `fold_batch_norm` is called, so that
`import stablehlo_bnfold` and the command's `--help` stay fast (test_startup.py).
"""

from __future__ import annotations

import functools
import io
import os
from typing import TYPE_CHECKING, Literal, TypeVar, overload

if TYPE_CHECKING:  # for annotations only: imported lazily below
    from .report import FoldReport

__all__ = ["fold_batch_norm"]

_T = TypeVar("_T")


@overload
def fold_batch_norm(
    module: os.PathLike,
    *,
    with_report: Literal[False] = False,
    verify: bool = False,
    trusted: bool | None = None,
    options: str = "",
) -> bytes: ...
@overload
def fold_batch_norm(
    module: os.PathLike,
    *,
    with_report: Literal[True],
    verify: bool = False,
    trusted: bool | None = None,
    options: str = "",
) -> tuple[bytes, FoldReport]: ...
@overload
def fold_batch_norm(
    module: _T,
    *,
    with_report: Literal[False] = False,
    verify: bool = False,
    trusted: bool | None = None,
    options: str = "",
) -> _T: ...
@overload
def fold_batch_norm(
    module: _T,
    *,
    with_report: Literal[True],
    verify: bool = False,
    trusted: bool | None = None,
    options: str = "",
) -> tuple[_T, FoldReport]: ...


def fold_batch_norm(
    module,
    *,
    with_report: bool = False,
    verify: bool = False,
    trusted: bool | None = None,
    options: str = "",
):
    """Fold every foldable inference batch norm into the convolution or dot_general before it.

    `module` may be
    - a `jax.export.Exported`: a new `Exported` is returned, which still `.call()`s and
      `.serialize()`s; the argument is not changed;
    - a jaxlib `ir.Module`: rewritten in place and returned (VHLO ops legalized to
      StableHLO and the module verified first, as for the other kinds);
    - `str` MLIR text: text is returned;
    - `bytes`, MLIR bytecode, a StableHLO portable artifact or an `Exported.serialize()`:
      the same format is returned (a portable artifact keeps its StableHLO version); a
      `bytearray` (what `Exported.serialize()` returns) is folded as its bytes and comes
      back a `bytearray`;
    - an `os.PathLike` (`pathlib.Path("model.jax")`): the file's bytes, folded as `bytes`
      are (the folded file's bytes are returned, in its format; messages name the file).

    `dense_resource` constants (torch-mlir's weights) are turned into `dense` ones, exactly,
    since the patterns must read them and a portable artifact cannot hold them.

    With `with_report=True` the result is `(folded, FoldReport)`; the report lists every
    fold and every candidate left alone, with the reason. With `verify=True` the original
    and the folded module are run through XLA on the CPU (`stablehlo_bnfold.verify`) and a
    `FoldError` is raised, with nothing changed, when an output differs beyond tolerance
    or the module cannot be run there. Raises `FoldError` on input that is not a valid
    StableHLO module.

    An `Exported`, `str` and `bytes` are folded in a forked child process: jaxlib's C++
    readers crash on some corrupted bytes and loop without end on others, MLIR's text
    parser overflows the stack on deeply nested regions (a `stablehlo.case` 3,000 deep),
    and a bug in the pass itself must not end the caller's process either; there a crash
    or a read that takes longer than `stablehlo_bnfold.sandbox.read_seconds(len(data))`
    (30 s and more) is a `FoldError`. That costs a fork and a copy of the output (about
    0.25 s on ResNet-50, docs/dev/reliability.md). `trusted=True` folds in this process
    instead, for a caller who prefers speed to that protection (a crash then ends the
    process). An `ir.Module` is folded in this process: it lives there already. A `str`
    that is a file name (`"model.mlir"`) is refused with a FoldError that says to pass a
    path: `fold_batch_norm(pathlib.Path("model.mlir"))`.

    `options` are the pass's options, as in a pipeline (docs/passes.md), e.g.
    `"fold-larger-weight-arguments=true"`; an unknown one is a FoldError.

    >>> folded_text = fold_batch_norm(open("model.mlir").read())   # doctest: +SKIP
    """
    from jaxlib.mlir import ir

    from . import exported as _exported
    from . import sandbox as _sandbox
    from . import session as _session
    from .passes import ARGUMENT, FoldBatchNormPass
    from .report import FoldError

    if not isinstance(options, str):
        raise FoldError(f"fold_batch_norm: options must be a str of key=value pairs, got {type(options).__name__}")
    FoldBatchNormPass.parse_options(options)  # a FoldError before anything is read
    if isinstance(module, bytearray):  # what Exported.serialize() returns: folded as its bytes
        folded = fold_batch_norm(bytes(module), with_report=with_report, verify=verify, trusted=trusted, options=options)
        return (bytearray(folded[0]), folded[1]) if with_report else bytearray(folded)
    source = "<input>"
    if isinstance(module, os.PathLike):  # its bytes, as `bytes` are folded
        from .io import read_file

        source = os.fsdecode(module)
        module = read_file(source)
    pipeline = f"{ARGUMENT}{{{options}}}" if options.strip() else ARGUMENT
    if verify and isinstance(module, ir.Module):
        # Prove it on copies first: a module rewritten in place (legalized, then folded)
        # cannot be given back. An invalid module is a FoldError here.
        original = _session.load(str(module), module.context).module
        _check(original, fold_batch_norm(ir.Module.parse(str(original), module.context), options=options))
    if isinstance(module, ir.Module):
        # Legalized (VHLO -> StableHLO) and verified in place, as any other input is when
        # read; an invalid module is a FoldError before anything else runs.
        _session.load_module(module)
    elif verify:
        folded = fold_batch_norm(module, with_report=with_report, trusted=trusted, options=options)
        _check(module, folded[0] if with_report else folded)
        return folded
    if isinstance(module, ir.Module):
        result = module
        report = _session.run(module, pipeline)
    else:
        if _exported.is_exported(module):
            data = module.mlir_module_serialized
        elif isinstance(module, (str, bytes)):
            data = module
        else:
            raise FoldError(
                f"fold_batch_norm: expected jax.export.Exported, ir.Module, str, bytes, bytearray or os.PathLike, "
                f"got {type(module).__name__}"
            )
        if isinstance(data, str):
            _refuse_a_file_name(data)
        fold = functools.partial(_session.fold_into, data, pipeline=pipeline, source=source)
        if not trusted:
            # jaxlib's bytecode readers can crash or hang on corrupted bytes, MLIR's text
            # parser recurses once per nested region (a stablehlo.case 3,000 deep
            # overflows the stack), and a bug in the pass can crash it (two clamps
            # rebuilt in one chain did): fold in a child process, where neither a crash
            # nor a hang can reach the caller.
            report, out = _sandbox.run(fold, source=source, size=len(data))
        else:
            buffer = io.BytesIO()
            report, out = fold(buffer), buffer.getvalue()
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
            f"fold_batch_norm: {name!r} {what}, not MLIR text: pass a path, "
            f"fold_batch_norm(pathlib.Path({name!r}))"
        )
    )


def _check(original, folded) -> None:
    """FoldError unless `folded` computes what `original` does (`verification.verify`)."""
    from . import verification
    from .report import FoldError

    result = verification.verify(original, folded)
    if not result.ok:  # the line the command prints, with the first output that failed
        raise FoldError(f"<input>: {result.message()}")
