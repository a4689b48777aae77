"""Reading and writing modules: MLIR text, MLIR bytecode, StableHLO portable artifacts.

`load` turns any of them into a StableHLO `ir.Module`, legalizing VHLO once, and remembers
the format (and, for a portable artifact, its StableHLO version) so that `dump` can write
the module back the way it came. Nothing is round-tripped through text on the way.
"""

from __future__ import annotations

import enum
import io as _stdio
import re
from dataclasses import dataclass

import numpy as np

from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from .constants import dense_attr, float_dtype
from .report import FoldError, describe_location

__all__ = ["Format", "Loaded", "dump", "inline_resources", "load", "make_context"]

BYTECODE_MAGIC = b"ML\xefR"
"""The first bytes of MLIR bytecode (and so of a portable artifact)."""
_PORTABLE_PRODUCER = "StableHLO_v"


class Format(enum.Enum):
    """How a module was (or will be) stored."""

    TEXT = "text"
    BYTECODE = "bytecode"
    PORTABLE = "portable artifact"


@dataclass(frozen=True)
class Loaded:
    """A parsed StableHLO module, the format it came in and a portable artifact's version."""

    module: ir.Module
    format: Format
    version: str | None = None
    source: str = "<input>"


_passes_registered = False


def make_context() -> ir.Context:
    """A context with every dialect JAX emits and StableHLO's passes registered."""
    global _passes_registered
    if not _passes_registered:
        stablehlo.register_stablehlo_passes()
        _passes_registered = True
    return make_ir_context()


def load(data: str | bytes, context: ir.Context, *, source: str = "<input>") -> Loaded:
    """Parse `data` (text, bytecode or portable artifact) into a StableHLO module.

    Raises FoldError with a one-line message naming `source` on anything that is not a
    valid module.

    >>> load(open("model.mlir").read(), make_context(), source="model.mlir")  # doctest: +SKIP
    Loaded(module=..., format=<Format.TEXT: 'text'>, version=None)
    """
    if isinstance(data, bytes) and not data.startswith(BYTECODE_MAGIC):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise FoldError(f"{source}: not MLIR text, bytecode or a portable artifact") from None
    if not data or (isinstance(data, str) and not data.strip()):
        raise FoldError(f"{source}: input is empty")
    version = _portable_version(data) if isinstance(data, bytes) else None
    fmt = Format.TEXT if isinstance(data, str) else Format.PORTABLE if version else Format.BYTECODE
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
            if fmt is Format.PORTABLE:
                module = stablehlo.deserialize_portable_artifact(context, data)
            else:
                module = ir.Module.parse(data)
            _legalize_vhlo(module)
            verified = module.operation.verify()
        except Exception:  # MLIRError, or the artifact reader's plain errors
            detail = errors[0] if errors else f"{source}: error: invalid {fmt.value}"
            if fmt is Format.PORTABLE:
                detail = f"{source}: invalid {fmt.value}: {detail.split(': error: ', 1)[-1]}"
            raise FoldError(detail) from None
        finally:
            context.emit_error_diagnostics = emitted
            handler.detach()
        if not verified:
            raise FoldError(errors[0] if errors else f"{source}: module does not verify")
        if context.allow_unregistered_dialects:
            _check_operation_names(module, source)
        inline_resources(module)
    return Loaded(module, fmt, version, source)


def _portable_version(data: bytes) -> str | None:
    """The StableHLO version in a bytecode header's producer string, if it names one.

    Header: magic, a prefix-encoded varint (the bytecode version), a NUL-terminated
    producer string. jax.export writes producers like "StableHLO_v1.15.0".
    """
    if len(data) < 5:
        return None
    first = data[4]
    width = ((first & -first).bit_length()) if first else 9
    start = 4 + width
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
    return f"{where}: error: {message}"


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


_RESOURCE_ENTRY = re.compile(r'^\s*"?([^":\s]+)"?\s*:\s*"0x([0-9A-Fa-f]*)"', re.MULTILINE)


def inline_resources(module: ir.Module) -> int:
    """Turn `dense_resource` constants (torch-mlir's weights) into `dense` ones; returns
    how many. jaxlib can create resource blobs but not read them back, and a portable
    artifact cannot hold them, so their bytes are read from the module's printed resource
    section: `name: "0x<4-byte alignment><raw little-endian data>"`, exact.
    """
    constants = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "stablehlo.constant" and str(op.attributes["value"]).startswith(
            "dense_resource<"
        ):
            constants.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not constants:
        return 0
    text = str(module)
    section = text[text.rfind("dialect_resources") :]
    blobs = {name: bytes.fromhex(data) for name, data in _RESOURCE_ENTRY.findall(section)}
    for op in constants:
        attr = op.attributes["value"]
        name = str(attr)[len("dense_resource<") : str(attr).index(">")].strip('"')
        tensor_type = ir.RankedTensorType(attr.type)
        dtype = float_dtype(tensor_type.element_type)
        if name not in blobs or dtype is None:
            continue  # left as it is: patterns see a constant they cannot read
        values = np.frombuffer(blobs[name][4:], dtype=dtype.newbyteorder("<"))
        op.attributes["value"] = dense_attr(values.reshape(tensor_type.shape), tensor_type)
    return len(constants)


def dump(loaded: Loaded, fmt: Format | None = None) -> str | bytes:
    """The module of `loaded` in `fmt` (default: the format it was loaded from).

    A portable artifact is written for the StableHLO version it was read with, so whatever
    consumed the input can consume the output.
    """
    fmt = fmt or loaded.format
    module = loaded.module
    if fmt is Format.TEXT:
        text = str(module)
        return text if text.endswith("\n") else text + "\n"
    if fmt is Format.PORTABLE:
        return _portable_artifact(loaded)
    buffer = _stdio.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _portable_artifact(loaded: Loaded) -> bytes:
    """`loaded.module` as a portable artifact of the version it was read with (the current
    one for other formats); FoldError naming the source when jaxlib cannot write it.

    The version comes from the input's header, unchecked by the reader: an artifact that
    claims a StableHLO newer than jaxlib's (or a malformed one) reads fine, and jaxlib's
    writer then fails with a bare ValueError("failed to serialize module")."""
    version = loaded.version or str(stablehlo.get_current_version())
    oldest, newest = str(stablehlo.get_minimum_version()), str(stablehlo.get_current_version())
    if not _version_between(version, oldest, newest):
        raise FoldError(
            f"{loaded.source}: cannot write a portable artifact for StableHLO {version}: "
            f"this jaxlib writes {oldest} to {newest}"
        )
    context = loaded.module.context
    errors: list[str] = []
    handler = context.attach_diagnostic_handler(
        lambda diagnostic: errors.append(_describe(diagnostic, loaded.source)) or True
    )
    try:
        return stablehlo.serialize_portable_artifact(loaded.module, version)
    except Exception:
        detail = errors[0].split(": error: ", 1)[-1] if errors else "jaxlib's writer failed"
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
