"""Reading modules: `load` (from memory) and `load_file` turn MLIR text, MLIR bytecode, a
StableHLO portable artifact or a `jax.export` serialization into a StableHLO `ir.Module`,
legalizing VHLO once and verifying it; every MLIR error becomes one FoldError line naming
the input. The format (and a portable artifact's StableHLO version) is kept in `Loaded`
for the writer.
"""

from __future__ import annotations

import codecs
import dataclasses
import enum
import functools
import mmap
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from jax import export as _export
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from .. import exported as _exported
from ..report import FoldError, describe_location, one_line
from .resources import inline_resources

__all__ = [
    "BYTECODE_MAGIC",
    "Format",
    "Loaded",
    "describe_diagnostic",
    "is_binary",
    "load",
    "load_file",
    "load_module",
    "make_context",
    "read_file",
    "sniff",
    "sniff_file",
    "varint",
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
found by fuzzing (docs/dev/reliability.md). What such a read left in them is small."""


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
            errors.append(describe_diagnostic(diagnostic, source))
        return True

    # Errors go to `collect` instead of into an MLIRError: jaxlib's own capture aborts the
    # process (std::terminate, "str_from_cstr_and_size(): conversion error") on a message
    # that is not UTF-8, and MLIR quotes the input's bytes in its messages (a bytecode's
    # producer in a note on every error, operation and symbol names). `describe_diagnostic`
    # gets a catchable error instead.
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
    start = 4 + varint(data, 4)[1]
    end = data.find(b"\0", start)
    if end < 0:
        return None
    producer = data[start:end].decode("ascii", errors="replace")
    if producer.startswith(_PORTABLE_PRODUCER):
        return producer[len(_PORTABLE_PRODUCER) :]
    return None


def varint(data: bytes, start: int) -> tuple[int, int]:
    """MLIR bytecode's prefix varint at `start`: (value, width). The first byte's trailing
    zero bits, plus one, give the width; a zero first byte is followed by 8 value bytes."""
    first = data[start]
    if not first:
        return int.from_bytes(data[start + 1 : start + 9], "little"), 9
    width = (first & -first).bit_length()
    return int.from_bytes(data[start : start + width], "little") >> width, width


def describe_diagnostic(diagnostic: ir.Diagnostic, source: str) -> str:
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
