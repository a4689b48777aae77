"""Reading and writing modules: MLIR text, MLIR bytecode, StableHLO portable artifacts,
and the files `jax.export.Exported.serialize()` writes (a portable artifact inside a
flatbuffer with the calling convention, `exported.serialized_module_span`).

`load` (from memory) and `load_file` turn any of them into a StableHLO `ir.Module`,
legalizing VHLO once, and remember the format (and, for a portable artifact, its StableHLO
version) so that `dump` (to memory) and `write` (to a file) can write the module back the
way it came. Nothing is round-tripped through text on the way.

Memory: MLIR keeps every constant it has parsed or built until its context dies, so a fold
holds the input's constants and the folded ones at once (2x the weights that fold).
`load_file` and `write` add nothing to that for text and bytecode: MLIR reads the file
itself and frees its buffer after parsing, and the output is streamed to the file.
"""

from __future__ import annotations

import binascii
import codecs
import contextlib
import enum
import functools
import io as _stdio
import mmap
import os
import re
import stat
from collections.abc import Callable, Iterator
import dataclasses
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from jax import export as _export
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from . import exported as _exported
from .constants import dense_attr, float_dtype
from .report import FoldError, describe_location, one_line

__all__ = [
    "Format",
    "Loaded",
    "dump",
    "inline_resources",
    "load",
    "load_file",
    "load_module",
    "make_context",
    "read_file",
    "sniff",
    "sniff_file",
    "write",
]

BYTECODE_MAGIC = b"ML\xefR"
"""The first bytes of MLIR bytecode (and so of a portable artifact)."""
_PORTABLE_PRODUCER = "StableHLO_v"


class Format(enum.Enum):
    """How a module was (or will be) stored."""

    TEXT = "text"
    BYTECODE = "bytecode"
    PORTABLE = "portable artifact"
    EXPORTED = "jax.export serialization"


@dataclass(frozen=True)
class Loaded:
    """A parsed StableHLO module, the format it came in and a portable artifact's version;
    for a `jax.export` serialization, the deserialized `Exported` it came in."""

    module: ir.Module
    format: Format
    version: str | None = None
    source: str = "<input>"
    exported: object | None = None


_passes_registered = False


def make_context() -> ir.Context:
    """A context with every dialect JAX emits and StableHLO's passes registered."""
    _register_passes()
    return make_ir_context()


def _register_passes() -> None:
    """StableHLO's passes (vhlo-legalize-to-stablehlo among them), once per process."""
    global _passes_registered
    if not _passes_registered:
        stablehlo.register_stablehlo_passes()
        _passes_registered = True


def load(data: str | bytes, context: ir.Context, *, source: str = "<input>") -> Loaded:
    """Parse `data` (text, bytecode or portable artifact) into a StableHLO module.

    Raises FoldError with a one-line message naming `source` on anything that is not a
    valid module.

    >>> load(open("model.mlir").read(), make_context(), source="model.mlir")  # doctest: +SKIP
    Loaded(module=..., format=<Format.TEXT: 'text'>, version=None)
    """
    if isinstance(data, bytes) and not is_binary(data):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise FoldError(_not_mlir(source)) from None
    # isspace stops at the first other character; strip() would copy the whole text.
    if not data or (isinstance(data, str) and data.isspace()):
        raise FoldError(f"{source}: input is empty")
    fmt, version = sniff(data) if isinstance(data, bytes) else (Format.TEXT, None)
    if fmt is Format.EXPORTED:
        return _load_exported(data, context, source)
    if fmt is Format.PORTABLE:
        return _load(lambda: stablehlo.deserialize_portable_artifact(context, data), context, fmt, version, source)
    text = (lambda: data) if fmt is Format.TEXT else None
    return _load(lambda: ir.Module.parse(data), context, fmt, version, source, text)


def load_module(module: ir.Module, *, source: str = "<input>") -> Loaded:
    """`load` for a module already parsed (the API's `ir.Module`), in place and in its own
    context: VHLO legalized to StableHLO, verified, `dense_resource` constants inlined.
    Raises FoldError with a one-line message naming `source` if it does not verify. Its
    format is TEXT: such a module is given back as it is, never written.

    >>> load_module(ir.Module.parse(text, make_context()))  # doctest: +SKIP
    Loaded(module=..., format=<Format.TEXT: 'text'>, version=None)
    """
    _register_passes()
    return _load(lambda: module, module.context, Format.TEXT, None, source)


def load_file(path: str, context: ir.Context) -> Loaded:
    """`load` for the file at `path`, holding no copy of it once parsed: MLIR reads text
    and bytecode itself; a portable artifact's bytes are dropped before VHLO is legalized.
    Messages and locations name `path` as given. A pipe or device, or a name MLIR cannot
    take (not UTF-8), is read once into memory and handed to `load`.
    """
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
        path.encode("utf-8")
    except OSError as error:
        raise FoldError(_unreadable(path, error)) from None
    except UnicodeEncodeError:
        regular = False
    if not regular:
        return load(read_file(path), context, source=path)
    fmt, version = sniff_file(path)
    if fmt is Format.EXPORTED:
        return _load_exported(read_file(path), context, path)
    if fmt is Format.PORTABLE:

        def parse() -> ir.Module:
            return stablehlo.deserialize_portable_artifact(context, read_file(path))

    else:
        if fmt is Format.TEXT:
            _check_text_file(path)

        def parse() -> ir.Module:
            return ir.Module.parseFile(path)

    text = (lambda: _mapped(path)) if fmt is Format.TEXT else None
    return _load(parse, context, fmt, version, path, text)


def _mapped(path: str) -> mmap.mmap | bytes:
    """The file at `path`, mapped read-only (its pages stay the page cache's)."""
    with open(path, "rb") as handle:
        try:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # not mappable (or empty): read it
            return handle.read()


def sniff(data: bytes) -> tuple[Format, str | None]:
    """The format of the input `data` and, for a portable artifact, its StableHLO version.
    Bytecode is told by its first bytes, a `jax.export` serialization by its offsets
    (`exported.serialized_module_span`); anything else is taken for text here, and `load`
    and `load_file` check that it is."""
    if data.startswith(BYTECODE_MAGIC):
        version = _portable_version(data[:4096])
        return (Format.PORTABLE if version else Format.BYTECODE), version
    if _exported.serialized_module_span(lambda at, n: data[at : at + n], len(data)):
        return Format.EXPORTED, None
    return Format.TEXT, None


def is_binary(data: bytes) -> bool:
    """Whether `data` is bytecode (a portable artifact too) or a `jax.export` serialization."""
    return sniff(data)[0] is not Format.TEXT


def sniff_file(path: str, *, source: str | None = None) -> tuple[Format, str | None]:
    """`sniff` for the file at `path`; FoldError naming `source` (default `path`) when it
    is missing, a directory or unreadable."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
            if head.startswith(BYTECODE_MAGIC):
                return sniff(head)
            size = os.fstat(handle.fileno()).st_size
            read = functools.partial(os.pread, handle.fileno())
            if _exported.serialized_module_span(lambda at, n: read(n, at), size):
                return Format.EXPORTED, None
            return Format.TEXT, None
    except OSError as error:
        raise FoldError(_unreadable(source or path, error)) from None


def _check_text_file(path: str) -> None:
    """FoldError unless the file is UTF-8 and not blank; read in 16 MiB pieces, so that a
    large text is never held whole."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    blank = True
    try:
        with open(path, "rb") as handle:
            while piece := handle.read(1 << 24):
                text = decoder.decode(piece)
                blank = blank and not text.strip()
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise FoldError(_not_mlir(path)) from None
    except OSError as error:
        raise FoldError(_unreadable(path, error)) from None
    if blank:
        raise FoldError(f"{path}: input is empty")


def read_file(path: str, *, source: str | None = None) -> bytes:
    """The bytes of the file at `path`; FoldError naming `source` (default `path`) when it
    is missing, a directory or unreadable."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise FoldError(_unreadable(source or path, error)) from None


def _unreadable(source: str, error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return f"{source}: no such file"
    if isinstance(error, IsADirectoryError):
        return f"{source}: is a directory"
    return f"{source}: cannot read: {error.strerror or error}"


def _not_mlir(source: str) -> str:
    return f"{source}: not MLIR text, bytecode or a portable artifact"


_FAILED_READS: list[ir.Context] = []
"""Contexts in which a bytecode read failed, kept for the life of the process: MLIR's
context destructor crashed (a double free) in one run of three after some failed reads
found by fuzzing (docs/reliability.md). What such a read left in them is small."""


def _load(
    parse: Callable[[], ir.Module],
    context: ir.Context,
    fmt: Format,
    version: str | None,
    source: str,
    text: Callable[[], str | bytes | mmap.mmap] | None = None,
) -> Loaded:
    """Run `parse`, legalize VHLO, verify, inline resources (reading their blobs from
    `text()`, the parsed text, when it has them); every MLIR error becomes one FoldError
    line."""
    errors: list[str] = []

    def collect(diagnostic: ir.Diagnostic) -> bool:
        # Keep MLIR from printing to stderr; the first error goes into the FoldError.
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(_describe(diagnostic, source))
        return True

    # Errors go to `collect` instead of into an MLIRError: jaxlib's own capture aborts the
    # process (std::terminate, "str_from_cstr_and_size(): conversion error") on a message
    # that is not UTF-8, and MLIR quotes the input's bytes in its messages (a bytecode's
    # producer in a note on every error, operation and symbol names). `_describe` gets a
    # catchable error instead.
    handler = context.attach_diagnostic_handler(collect)
    emitted = context.emit_error_diagnostics
    context.emit_error_diagnostics = True
    with context, ir.Location.unknown():
        try:
            module = parse()
            _legalize_vhlo(module)
            verified = module.operation.verify()
        except FoldError:
            raise
        except Exception:  # MLIRError, or the artifact reader's plain errors
            detail = errors[0] if errors else f"{source}: error: invalid {fmt.value}"
            if fmt is Format.PORTABLE:
                detail = f"{source}: invalid {fmt.value}: {detail.split(': error: ', 1)[-1]}"
            if fmt is not Format.TEXT:
                _FAILED_READS.append(context)
            raise FoldError(detail) from None
        finally:
            context.emit_error_diagnostics = emitted
            handler.detach()
        if not verified:
            raise FoldError(errors[0] if errors else f"{source}: module does not verify")
        if context.allow_unregistered_dialects:
            _check_operation_names(module, source)
        inline_resources(module, text)
    return Loaded(module, fmt, version, source)


def _load_exported(data: bytes, context: ir.Context, source: str) -> Loaded:
    """A `jax.export` serialization: the `Exported` and its module, legalized to StableHLO."""
    try:
        exported = _export.deserialize(bytearray(data))
        module = exported.mlir_module_serialized
    except Exception as error:  # jax's flatbuffer reader trusts its input
        raise FoldError(one_line(f"{source}: invalid {Format.EXPORTED.value}: {error}")) from None
    loaded = load(module, context, source=source)
    if loaded.format is not Format.PORTABLE:
        raise FoldError(f"{source}: invalid {Format.EXPORTED.value}: its module is not a portable artifact")
    return dataclasses.replace(loaded, format=Format.EXPORTED, exported=exported)


def _portable_version(data: bytes) -> str | None:
    """The StableHLO version in a bytecode header's producer string, if it names one.

    Header: magic, a prefix-encoded varint (the bytecode version), a NUL-terminated
    producer string. jax.export writes producers like "StableHLO_v1.15.0".
    """
    if len(data) < 5:
        return None
    start = 4 + _varint(data, 4)[1]
    end = data.find(b"\0", start)
    if end < 0:
        return None
    producer = data[start:end].decode("ascii", errors="replace")
    if producer.startswith(_PORTABLE_PRODUCER):
        return producer[len(_PORTABLE_PRODUCER) :]
    return None


def _describe(diagnostic: ir.Diagnostic, source: str) -> str:
    """`where: error: message` for an MLIR error, `where` the file position or `source`."""
    # Nothing may escape a diagnostic handler; jaxlib raises RuntimeError for text that is
    # not UTF-8.
    try:
        where = describe_location(diagnostic.location, source)
    except Exception:  # a location name that is not UTF-8
        where = source
    if not where or where.startswith("loc("):
        where = source
    try:
        message = str(diagnostic.message)
    except Exception:
        message = "a name or string in the input is not UTF-8 (MLIR's message cannot be shown)"
    return one_line(f"{where}: error: {message}")


def _legalize_vhlo(module: ir.Module) -> None:
    """Turn VHLO ops (what a portable artifact holds on disk) into StableHLO, once."""
    if not any(_is_vhlo(op) for op in module.body.operations):
        return
    passmanager.PassManager.parse("builtin.module(vhlo-legalize-to-stablehlo)").run(
        module.operation
    )


def _check_operation_names(module: ir.Module, source: str) -> None:
    """Refuse an operation name that is not UTF-8 (only an unregistered dialect's can be).

    jaxlib aborts the process when it meets one inside a walk or a pattern callback; in a
    plain Python loop, as here, it raises UnicodeDecodeError. A stack, not recursion, so
    that deep nesting cannot exhaust Python's recursion limit."""
    stack = [module.operation]
    try:
        while stack:
            for region in stack.pop().regions:
                for block in region.blocks:
                    stack.extend(op.operation for op in block.operations)
    except UnicodeDecodeError:
        raise FoldError(f"{source}: an operation name is not UTF-8") from None


def _is_vhlo(op: ir.OpView) -> bool:
    return op.operation.name.startswith("vhlo.")


def inline_resources(
    module: ir.Module, text: Callable[[], str | bytes | mmap.mmap] | None = None
) -> int:
    """Turn `dense_resource` constants (torch-mlir's weights) into `dense` ones; returns
    how many. jaxlib can create resource blobs but not read them back, and a portable
    artifact cannot hold them, so their bytes are read from a printed resource section:
    `name: "0x<4-byte alignment><raw little-endian data>"`, exact.

    Finding them costs a walk over the ops and a type check per constant; nothing is
    printed unless a constant is a resource. The section is then read from `text()`, the
    text `module` was parsed from, when its blob names are exactly those the module's
    constants use (MLIR renames a blob whose name its context already holds, so a
    context that parsed other resources first falls back); otherwise from the module
    printed with its `dense` constants elided, so that only the blobs are formatted.
    """
    constants = _resource_constants(module)
    if not constants:
        return 0
    names = {name for _, name in constants}
    blobs = _resource_blobs(text()) if text is not None else None
    if blobs is None or set(blobs) != names:
        printed = _stdio.BytesIO()
        module.operation.print(
            large_elements_limit=16, large_resource_limit=1 << 62, file=printed, binary=True
        )
        blobs = _resource_blobs(printed.getvalue()) or {}
    for op, name in constants:
        tensor_type = ir.RankedTensorType(op.attributes["value"].type)
        dtype = float_dtype(tensor_type.element_type)
        if name not in blobs or dtype is None:
            continue  # left as it is: patterns see a constant they cannot read
        values = np.frombuffer(_unhex(blobs[name]), dtype=dtype.newbyteorder("<"), offset=4)
        op.attributes["value"] = dense_attr(values.reshape(tensor_type.shape), tensor_type)
    return len(constants)


def _resource_constants(module: ir.Module) -> list[tuple[ir.Operation, str]]:
    """Every constant whose value is a `dense_resource` attribute, with its blob's name.
    jaxlib gives resource attributes as plain `ir.Attribute`s, so they are told apart by
    a cast, tried only on what is not already a dense attribute; printing one is cheap
    (`dense_resource<name> : type`, no data)."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in _CONSTANTS:
            attr = op.attributes["value"]
            if not isinstance(attr, ir.DenseElementsAttr):
                try:
                    ir.DenseResourceElementsAttr(attr)
                except ValueError:
                    return ir.WalkResult.ADVANCE
                text = str(attr)
                name = text[len("dense_resource<") : text.rindex(">", 0, text.rindex(":"))]
                found.append((op, name[1:-1] if name.startswith('"') else name))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


_CONSTANTS = ("stablehlo.constant", "arith.constant")


def _resource_blobs(text) -> dict[str, tuple[object, int, int]] | None:
    """Where each blob of the builtin dialect's resources at the end of `text` (str,
    bytes or an mmap) lies: name -> (text, start, end) of its hex digits after "0x"; None
    when `text` has no such section. Other dialects' resources (which may reuse a name)
    are not read. Scanned with `find`, not a regular expression: the section is most of
    a torch-mlir file (two hex digits per byte)."""
    is_str = isinstance(text, str)
    opening, value, quote, colon, close = (
        ("{-#", '"0x', '"', ":", "}") if is_str else (b"{-#", b'"0x', b'"', b":", b"}")
    )
    # The section follows the (small) body: a forward search finds it sooner than rfind
    # through the hex. An earlier "{-#" (in a string) only adds names, which the caller's
    # check against the module's own names turns away.
    start = text.find(opening)
    if start < 0:
        return None
    builtin = (_BUILTIN if is_str else _BUILTIN_BYTES).search(text, start)
    if builtin is None:
        return None
    pos, stop = builtin.end(), text.find(close, builtin.end())
    stop = len(text) if stop < 0 else stop
    blobs = {}
    while 0 <= (begin := text.find(value, pos, stop)):
        end = text.find(quote, begin + 3, stop)
        if end < 0:
            break
        head = text[pos:begin]
        key = head[: head.rindex(colon)] if colon in head else head
        key = (key if is_str else key.decode("utf-8", "replace")).strip()
        if key.endswith('"'):
            key = key[key.rindex('"', 0, len(key) - 1) + 1 : -1]
        else:
            key = re.split(r"[\s{,]", key)[-1]
        blobs[key] = (text, begin + 3, end)
        pos = end + 1
    return blobs


_BUILTIN = re.compile(r"\bbuiltin\s*:\s*\{")
_BUILTIN_BYTES = re.compile(rb"\bbuiltin\s*:\s*\{")


def _unhex(where: tuple[object, int, int]) -> bytes:
    """The bytes of a blob's hex digits; bytes and mmaps are read in place."""
    text, start, end = where
    if isinstance(text, str):
        return binascii.a2b_hex(text[start:end])
    return binascii.a2b_hex(memoryview(text)[start:end])


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
    buffer = _stdio.BytesIO()
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
        artifact = _stdio.BytesIO()
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
        _Reheaded(file, header), desired_version=_varint(header, 4)[0]
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


def _varint(data: bytes, start: int) -> tuple[int, int]:
    """MLIR bytecode's prefix varint at `start`: (value, width). The first byte's trailing
    zero bits, plus one, give the width; a zero first byte is followed by 8 value bytes."""
    first = data[start]
    if not first:
        return int.from_bytes(data[start + 1 : start + 9], "little"), 9
    width = (first & -first).bit_length()
    return int.from_bytes(data[start : start + width], "little") >> width, width


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
            _, width = _varint(self._pending, 4)
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
        lambda diagnostic: errors.append(_describe(diagnostic, loaded.source)) or True
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
