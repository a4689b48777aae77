"""jax.export integration: an `Exported` in, a new `Exported` out.

`jax.export.Exported` is a frozen dataclass whose `mlir_module_serialized` holds a
StableHLO portable artifact. Folding changes nothing in the calling convention (the same
arguments, results, shardings and effects), so the new `Exported` differs only in that
field; the caller's object is never mutated.

`Exported.serialize()` writes a flatbuffer (jax/_src/export/serialization.py) with no file
identifier: its first 4 bytes are the offset of the root table, an `Exported` whose field
`mlir_module_serialized` (vtable slot 13) is a byte vector holding the portable artifact.
`serialized_module_span` follows those offsets, each checked against the size, and finds a
serialization only where they lead to a vector that starts with MLIR bytecode's magic: a
text or another file would have to hold a consistent table, vtable and vector for that.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable

from jax import export

__all__ = ["is_exported", "replace_module", "serialized_module_span"]

_MODULE_SLOT = 30
"""Byte offset of `mlir_module_serialized` in the `Exported` table's vtable (field 13)."""

_BYTECODE_MAGIC = b"ML\xefR"


def serialized_module_span(read: Callable[[int, int], bytes], size: int) -> tuple[int, int] | None:
    """Where the portable artifact lies, (start, end), in an `Exported.serialize()` of
    `size` bytes that `read(offset, count)` reads; None when the bytes are not one.

    >>> serialized_module_span(lambda o, n: data[o : o + n], len(data))   # doctest: +SKIP
    (1234, 56789)
    """

    def number(offset: int, fmt: str) -> int | None:
        width = struct.calcsize(fmt)
        if offset < 0 or offset + width > size:
            return None
        piece = read(offset, width)
        return struct.unpack(fmt, piece)[0] if len(piece) == width else None

    root = number(0, "<I")
    table = number(root, "<i") if root is not None else None
    if table is None:
        return None
    vtable = root - table
    vtable_size = number(vtable, "<H")
    if vtable_size is None or vtable_size < _MODULE_SLOT + 2 or vtable + vtable_size > size:
        return None
    field = number(vtable + _MODULE_SLOT, "<H")
    if not field:
        return None
    vector = number(root + field, "<I")
    length = number(root + field + vector, "<I") if vector is not None else None
    if length is None:
        return None
    start = root + field + vector + 4
    if start + length > size or length < len(_BYTECODE_MAGIC):
        return None
    if read(start, len(_BYTECODE_MAGIC)) != _BYTECODE_MAGIC:
        return None
    return start, start + length


def is_exported(value: object) -> bool:
    """Whether `value` is a `jax.export.Exported`."""
    return isinstance(value, export.Exported)


def replace_module(exported: export.Exported, serialized: bytes) -> export.Exported:
    """A copy of `exported` whose module is the portable artifact `serialized`.

    >>> folded = replace_module(exp, new_bytes); folded.call(x)   # doctest: +SKIP
    """
    return dataclasses.replace(exported, mlir_module_serialized=serialized)
