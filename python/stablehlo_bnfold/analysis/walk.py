"""One walk of a module for the steps after the greedy driver: each step reads the ops of a
few names (`fold.branches` its sums, `fold.literals` the linear ops and constants,
`patterns.left` the affine ops), and a Python callback on every op costs more than what
most steps do with the few they read.
"""

from __future__ import annotations

from collections.abc import Iterable

from jaxlib.mlir import ir

__all__ = ["ops_named"]


def ops_named(root: ir.Operation, *names: Iterable[str]) -> tuple[list[ir.Operation], ...]:
    """For each set of op names in `names`, the ops under `root` with one of them, in the
    order MLIR's walk visits them (post-order): one walk for all the sets.

    >>> sums, constants = ops_named(module.operation, {"stablehlo.add"}, {"stablehlo.constant"})   # doctest: +SKIP
    """
    found: tuple[list[ir.Operation], ...] = tuple([] for _ in names)
    lists: dict[str, list[list[ir.Operation]]] = {}
    for ops, wanted in zip(found, names):
        for name in wanted:
            lists.setdefault(name, []).append(ops)

    def visit(op: ir.Operation) -> ir.WalkResult:
        for ops in lists.get(op.name, ()):  # (a name costs less than an OpView)
            ops.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found
