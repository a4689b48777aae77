"""Writing modules back: `dump` (to memory) and `write` (to a file) in the format a module
was read in, text and bytecode streamed from MLIR's printer and bytecode writer, a
portable artifact for the StableHLO version it was read with and with the header jaxlib
writes (`_write_portable_artifact`), a `jax.export` serialization with its artifact
replaced.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from typing import BinaryIO

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from .. import exported as _exported
from ..report import FoldError
from .reader import Format, Loaded, describe_diagnostic, make_context, varint

__all__ = ["dump", "write"]


def dump(
    loaded: Loaded,
    fmt: Format | None = None,
    *,
    consume: bool = False,
    large_elements_limit: int | None = None,
    debug_info: bool = False,
    generic: bool = False,
) -> str | bytes:
    """The module of `loaded` in `fmt` (default: the format it was loaded from): `str`
    for text, `bytes` otherwise. See `write`."""
    buffer = io.BytesIO()
    fmt = write(
        loaded,
        buffer,
        fmt,
        consume=consume,
        large_elements_limit=large_elements_limit,
        debug_info=debug_info,
        generic=generic,
    )
    return buffer.getvalue().decode() if fmt is Format.TEXT else buffer.getvalue()


def write(
    loaded: Loaded,
    file: BinaryIO,
    fmt: Format | None = None,
    *,
    consume: bool = False,
    large_elements_limit: int | None = None,
    debug_info: bool = False,
    generic: bool = False,
) -> Format:
    """Write the module of `loaded` to the binary `file` in `fmt` (default: the format it
    was loaded from); returns the format written. Text ends with a newline; with
    `large_elements_limit`, elements attributes of more elements than that are printed as
    `dense_resource<__elided__>` (as mlir-opt's --mlir-elide-elementsattrs-if-larger does),
    for a person to read: MLIR cannot read them back. `debug_info` prints every op's
    location (`loc(...)`, mlir-opt's --mlir-print-debuginfo; bytecode always keeps them),
    `generic` the generic form of every op (--mlir-print-op-generic).

    Text and bytecode are streamed: MLIR's printer and bytecode writer hand `file` pieces,
    dense constants straight from the attributes' storage. A portable artifact is written
    for the StableHLO version it was read with (the current one for other inputs), so
    whatever consumed the input can consume the output. With `consume=True` it is streamed
    too, from `loaded.module` turned into VHLO in place, after which `loaded` must not be
    used; otherwise jaxlib's writer makes it in memory from a copy (about three more copies
    of the weights at its peak). Both give the same bytes.
    """
    fmt = fmt or loaded.format
    operation = loaded.module.operation
    if fmt is Format.EXPORTED:
        if loaded.exported is None:
            raise FoldError(f"{loaded.source}: only a module read from a {fmt.value} is written as one")
        # The flatbuffer is built in memory by jax; the artifact inside it is written as
        # for a portable artifact input, for the version the Exported held.
        artifact = io.BytesIO()
        write(loaded, artifact, Format.PORTABLE, consume=consume)
        exported = _exported.replace_module(loaded.exported, artifact.getvalue())
        del artifact
        file.write(exported.serialize())
    elif fmt is Format.TEXT:
        tail = _LastByte(file)
        operation.print(
            file=tail,
            binary=True,
            large_elements_limit=large_elements_limit,
            enable_debug_info=debug_info,
            print_generic_op_form=generic,
        )
        if tail.last != b"\n":
            file.write(b"\n")
    elif fmt is Format.PORTABLE and consume:
        _write_portable_artifact(loaded, file)
    elif fmt is Format.PORTABLE:
        with _writer_errors(loaded):
            file.write(
                stablehlo.serialize_portable_artifact(
                    loaded.module, _target_version(loaded), _mixed(loaded)
                )
            )
    else:
        operation.write_bytecode(file)
    return fmt


class _LastByte:
    """A file's `write` that remembers the last byte written."""

    def __init__(self, file: BinaryIO):
        self._write = file.write
        self.last = b""

    def write(self, data: bytes) -> int:
        if data:
            self.last = data[-1:]
        return self._write(data)


def _write_portable_artifact(loaded: Loaded, file: BinaryIO) -> None:
    """What jaxlib's `serialize_portable_artifact` does, without its copies: convert the
    module to VHLO of the target version (here in place; jaxlib converts a clone), write
    its bytecode at the bytecode version StableHLO uses for that target, and name the
    StableHLO version as the producer in the header (jaxlib's writer can set it, Python's
    cannot, so the header is swapped on the way out). Past the header, the bytes are the
    ones jaxlib writes (the tests compare them): sections and blobs are length-prefixed,
    and the one part of bytecode aligned to its offset, resource blobs, cannot be in VHLO.
    """
    version = _target_version(loaded)
    header = _portable_header(version)
    mixed = str(_mixed(loaded)).lower()
    with _writer_errors(loaded):
        passmanager.PassManager.parse(
            f"builtin.module(stablehlo-legalize-to-vhlo{{allow-other-dialects={mixed}}},"
            f"vhlo-to-version{{target={version}}})",
            context=loaded.module.context,
        ).run(loaded.module.operation)
    loaded.module.operation.write_bytecode(
        _Reheaded(file, header), desired_version=varint(header, 4)[0]
    )


_headers: dict[str, bytes] = {}


def _portable_header(version: str) -> bytes:
    """The header jaxlib writes for a portable artifact of StableHLO `version`: magic, the
    bytecode version it picks for that target, "StableHLO_v<version>" and a NUL."""
    if version not in _headers:
        with make_context() as context:
            empty = ir.Module.parse("module {}", context)
            artifact = stablehlo.serialize_portable_artifact(empty, version)
        _headers[version] = artifact[: artifact.index(b"\0", 4) + 1]
    return _headers[version]


class _Reheaded:
    """A file's `write` that replaces the bytecode header it is given first (magic, varint,
    producer, NUL) with `header`, then passes everything on."""

    def __init__(self, file: BinaryIO, header: bytes):
        self._write = file.write
        self._header = header
        self._pending = b""

    def write(self, data: bytes) -> int:
        if self._header is None:
            return self._write(data)
        self._pending += bytes(data)
        if len(self._pending) > 4:
            _, width = varint(self._pending, 4)
            end = self._pending.find(b"\0", 4 + width)
            if end >= 0:
                self._write(self._header + self._pending[end + 1 :])
                self._header = self._pending = None
        return len(data)


def _mixed(loaded: Loaded) -> bool:
    """Whether `loaded` is written as a mixed portable artifact: VHLO, plus the ops and
    attributes of other dialects as they are. jax.export writes every artifact that way
    (jaxlib's `use_mixed_serialization`, which `serialize_with_sdy` turns on): a sharded
    export holds Shardy's `sdy.mesh`, `sdy.sharding` and `sdy.sharding_constraint` in their
    own dialect. An input that was a portable artifact is written back so; when it held
    VHLO only, the bytes are those of a pure artifact, since the patterns build StableHLO
    only. A module read from text or bytecode must be all StableHLO to be written as one,
    as jaxlib's writer requires by default."""
    return loaded.format in (Format.PORTABLE, Format.EXPORTED)


def _target_version(loaded: Loaded) -> str:
    """The StableHLO version to write `loaded` for: the one it was read with, else the
    current one. FoldError unless jaxlib writes it: the version comes from the input's
    header, unchecked by the reader, and jaxlib's writer fails on a version newer than its
    own (or a malformed one) with a bare ValueError("failed to serialize module")."""
    version = loaded.version or str(stablehlo.get_current_version())
    oldest, newest = str(stablehlo.get_minimum_version()), str(stablehlo.get_current_version())
    if not _version_between(version, oldest, newest):
        raise FoldError(
            f"{loaded.source}: cannot write a portable artifact for StableHLO {version}: "
            f"this jaxlib writes {oldest} to {newest}"
        )
    return version


@contextlib.contextmanager
def _writer_errors(loaded: Loaded) -> Iterator[None]:
    """MLIR's errors while writing `loaded` as a portable artifact, as one FoldError."""
    context = loaded.module.context
    errors: list[str] = []
    handler = context.attach_diagnostic_handler(
        lambda diagnostic: errors.append(describe_diagnostic(diagnostic, loaded.source)) or True
    )
    try:
        yield
    except FoldError:
        raise
    except Exception as error:
        # A PassManager run keeps its diagnostics in the MLIRError it raises; jaxlib's
        # writer sends them to the handler.
        found = getattr(error, "error_diagnostics", None) or []
        detail = (
            found[0].message
            if found
            else errors[0].split(": error: ", 1)[-1] if errors else "jaxlib's writer failed"
        )
        raise FoldError(f"{loaded.source}: cannot write a portable artifact: {detail}") from None
    finally:
        handler.detach()


def _version_between(version: str, oldest: str, newest: str) -> bool:
    """Whether `version` is a dotted version (1.17.0) from `oldest` to `newest`."""
    if not re.fullmatch(r"\d+(\.\d+)*", version):
        return False

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(part) for part in v.split("."))

    return key(oldest) <= key(version) <= key(newest)
