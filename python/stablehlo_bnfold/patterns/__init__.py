"""The rewrite patterns, in application order, and the adapter to MLIR's greedy driver.

A pattern is a function `(op, rw: FoldRewriter) -> Outcome` that decides, then builds: it
matches and checks the conditions its docstring states, in that order, from
`fold.affine_map`'s analysis, stopping at the first that fails with `rw.skip(op, reason)`
(or `rw.not_candidate`) and a constant of `fold.reasons`; it ends with a `fold.plan.FoldPlan`
and returns `fold.plan.build(plan, rw)`, the only step that creates IR. MLIR's Python
callback reads a *truthy* return as "did not match"; `build_pattern_set` makes that
translation once, so patterns never return booleans.

Where a new pattern goes: in the module of its identity family (`batch_norm`: the op
itself after a linear op; `decomposed`: a per-channel factor after one; `bias`: a
per-channel shift after one, and the identity ops between; `precision`: a chain between
a convert pair; `through`: a chain moved across an op it commutes with, a relu or a max-pool;
`input_side`: a chain before a linear op), or a new module when it is a
new family, with its lit file in test/transforms/ naming it. Its first docstring line is
the identity (docs/passes.md is generated from it: `python3 -m stablehlo_bnfold.docs >
docs/passes.md`); it goes into `PATTERNS` below. A new way to see a per-channel value
belongs in `analysis/`, a new per-channel analysis in `fold.affine_map`, a new reason in
`fold.reasons`, a new kind of rewrite in `fold.plan`: not in the pattern.

A pattern that raises is a bug. The adapter erases every op the pattern had created,
leaves the matched op untouched, and records the error with the op's location and the
pattern's name; the pass then fails instead of returning a half-rewritten module.
"""

from __future__ import annotations

import logging

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs._mlir import rewrite

from ..fold.rewriter import FoldRewriter, Outcome, Pattern
from ..report import Recorder
from .batch_norm import FOLD_BN_INTO_LINEAR
from .bias import (
    FOLD_SHIFT_INTO_BIAS,
    FOLD_SUBTRAHEND_INTO_BIAS,
    REMOVE_IDENTITY_BROADCAST,
    REMOVE_IDENTITY_RESHAPE,
)
from .decomposed import FOLD_DIVISOR_INTO_LINEAR, FOLD_SCALE_INTO_LINEAR
from .input_side import (
    FOLD_INPUT_AFFINE_INTO_CONV,
    FOLD_INPUT_AFFINE_INTO_DOT,
    FOLD_INPUT_AFFINE_INTO_DOT_GENERAL,
    reads_chain_op,
)
from .precision import FOLD_PRECISION_ISLAND
from .through import (
    FOLD_SCALE_THROUGH_MAX_POOL,
    FOLD_SCALE_THROUGH_OTHER_OPS,
    FOLD_SCALE_THROUGH_RELU,
    FOLD_SCALE_THROUGH_RELU_CALL,
)

__all__ = ["PATTERNS", "FoldRewriter", "Outcome", "Pattern", "build_pattern_set"]

_log = logging.getLogger(__name__)

PATTERNS: tuple[Pattern, ...] = (
    FOLD_BN_INTO_LINEAR,
    REMOVE_IDENTITY_RESHAPE,
    REMOVE_IDENTITY_BROADCAST,
    FOLD_SUBTRAHEND_INTO_BIAS,
    FOLD_SCALE_INTO_LINEAR,
    FOLD_DIVISOR_INTO_LINEAR,
    FOLD_SHIFT_INTO_BIAS,
    FOLD_PRECISION_ISLAND,
    FOLD_SCALE_THROUGH_RELU,
    FOLD_SCALE_THROUGH_RELU_CALL,
    FOLD_SCALE_THROUGH_MAX_POOL,
    *FOLD_SCALE_THROUGH_OTHER_OPS,
    FOLD_INPUT_AFFINE_INTO_CONV,
    FOLD_INPUT_AFFINE_INTO_DOT_GENERAL,
    FOLD_INPUT_AFFINE_INTO_DOT,
)
"""Every pattern, in the order the driver tries them on an op."""


def build_pattern_set(
    context: ir.Context,
    recorder: Recorder,
    patterns: tuple[Pattern, ...] = PATTERNS,
    *,
    fold_weight_arguments: bool = True,
    fold_larger_weight_arguments: bool = False,
    fold_narrow_weights: bool = True,
) -> rewrite.FrozenRewritePatternSet:
    """Freeze `patterns` for MLIR's greedy driver, reporting to `recorder`;
    `fold_weight_arguments`, `fold_larger_weight_arguments` and `fold_narrow_weights` (the
    pass options) let them fold per-channel values that are function arguments, scale
    weights that are larger than the activation on every call, and round weights stored
    only in a narrow type again."""
    pattern_set = rewrite.RewritePatternSet(context)
    options = (fold_weight_arguments, fold_larger_weight_arguments, fold_narrow_weights)
    for pattern in patterns:
        pattern_set.add(pattern.root, _adapt(pattern, recorder, options))
    return pattern_set.freeze()


def _adapt(pattern: Pattern, recorder: Recorder, options: tuple[bool, bool, bool]):
    def callback(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
        rw = FoldRewriter(op, rewriter, recorder, pattern.name, *options)
        rw.revisits = reads_chain_op
        try:
            with op.location:
                outcome = pattern.apply(op, rw)
        except Exception as error:  # a bug: never leave half-built IR behind
            rw.discard_created()
            recorder.error(op, pattern.name, error)
            _log.debug("pattern %s raised", pattern.name, exc_info=True)
            return True
        return outcome not in (Outcome.FOLDED, Outcome.REMOVED)

    return callback
