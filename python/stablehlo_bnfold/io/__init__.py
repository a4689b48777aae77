"""Reading and writing modules: MLIR text, MLIR bytecode, StableHLO portable artifacts,
and the files `jax.export.Exported.serialize()` writes (a portable artifact inside a
flatbuffer with the calling convention, `exported.serialized_module_span`).

`load` (from memory) and `load_file` turn any of them into a StableHLO `ir.Module`,
legalizing VHLO once, and remember the format (and, for a portable artifact, its StableHLO
version) so that `dump` (to memory) and `write` (to a file) can write the module back the
way it came. Nothing is round-tripped through text on the way.

- `reader`: `load`, `load_file`, the format sniffers, and MLIR's errors as one FoldError;
- `resources`: `dense_resource` constants inlined as `dense` ones, once read;
- `writer`: `dump`, `write`, and the portable artifact's header.

Memory: MLIR keeps every constant it has parsed or built until its context dies, so a fold
holds the input's constants and the folded ones at once (2x the weights that fold).
`load_file` and `write` add nothing to that for text and bytecode: MLIR reads the file
itself and frees its buffer after parsing, and the output is streamed to the file.

Inside this package `import io` is the standard library (imports are absolute); this
package is `from . import io`.
"""

from __future__ import annotations

from .reader import (
    BYTECODE_MAGIC,
    Format,
    Loaded,
    is_binary,
    load,
    load_file,
    load_module,
    make_context,
    read_file,
    sniff,
    sniff_file,
)
from .resources import inline_resources
from .writer import dump, write

__all__ = [
    "BYTECODE_MAGIC",
    "Format",
    "Loaded",
    "dump",
    "inline_resources",
    "is_binary",
    "load",
    "load_file",
    "load_module",
    "make_context",
    "read_file",
    "sniff",
    "sniff_file",
    "write",
]
