"""jax.export integration: an `Exported` in, a new `Exported` out.

`jax.export.Exported` is a frozen dataclass whose `mlir_module_serialized` holds a
StableHLO portable artifact. Folding changes nothing in the calling convention (the same
arguments, results, shardings and effects), so the new `Exported` differs only in that
field; the caller's object is never mutated.
"""

from __future__ import annotations

import dataclasses

from jax import export

__all__ = ["is_exported", "replace_module"]


def is_exported(value: object) -> bool:
    """Whether `value` is a `jax.export.Exported`."""
    return isinstance(value, export.Exported)


def replace_module(exported: export.Exported, serialized: bytes) -> export.Exported:
    """A copy of `exported` whose module is the portable artifact `serialized`.

    >>> folded = replace_module(exp, new_bytes); folded.call(x)   # doctest: +SKIP
    """
    return dataclasses.replace(exported, mlir_module_serialized=serialized)
