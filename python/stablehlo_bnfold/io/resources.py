"""`dense_resource` constants (torch-mlir's weights) turned into `dense` ones, their bytes
read from the resource section of the printed module: jaxlib can create resource blobs
but not read them back, and a portable artifact cannot hold them.
"""

from __future__ import annotations

import binascii
import io
import mmap
import re
from collections.abc import Callable

import numpy as np
from jaxlib.mlir import ir

from ..constants import dense_attr, float_dtype

__all__ = ["inline_resources"]


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
        printed = io.BytesIO()
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
