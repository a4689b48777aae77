"""The `stablehlo-fold-batch-norm` pass: options, pass-manager registration, pipelines.

The pass runs `patterns.PATTERNS` on MLIR's greedy driver (C++) until nothing changes, on
every op nested in the module: all functions and nested regions (`stablehlo.case`,
`while`). Folding by op folders, constant CSE and region simplification are off, so the
driver's only changes are the patterns' rewrites and the removal of the ops they leave
dead. Then parallel convolution branches that read one input and meet in a sum
(RepVGG, MobileOne, ACNet: each branch's batch norm folded by then) become one
convolution and one bias add (`fold/branches.py`, `merge_parallel_branches` in the
report). Then, where a linear op's weights or the bias its bias add broadcasts are computed
from constants alone (Keras's `beta - mean * rsqrt(var + eps) * gamma`, a depthwise
`reshape(K) * s`, torch-mlir's `transpose(W)`, a mixed-precision `convert(W)`), each
becomes one constant, computed in float64 and rounded once, when no other op reads the
constants it replaces and it is no larger than they are (`fold/literals.py`; not
reported, since it removes no activation-sized op): each linear op with constant weights
then reads `L(x, W) + broadcast_in_dim(b)`. Last, every per-channel chain no pattern
reported gets its line (`patterns/left.py`).

jaxlib's Python bindings turn the pass into a real pass (`PassManager.add(callable)`), but
cannot register it by name in MLIR's pass registry. `build_pass_manager` therefore parses
a textual pipeline itself: our pass becomes the Python pass, every other element is handed
to MLIR's pipeline parser. A `func.func(...)` element that names our pass runs it on the
module, which visits the same functions.
"""

from __future__ import annotations

import gc

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, fields

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir._mlir_libs._mlir import rewrite

from .analysis.passage import callees_read_once
from .analysis.walk import ops_named
from .basics import ARGUMENT
from .fold.branches import MERGE_NAMES, merge_branches
from .fold.literals import LITERAL_NAMES, evaluate_literals
from .patterns import PATTERNS, build_pattern_set
from .patterns.left import CHAIN_NAMES, report_chains_left
from .report import FoldError, Recorder, describe_location

__all__ = ["ARGUMENT", "FoldBatchNormPass", "build_pass_manager", "documentation", "run_pipeline"]


@dataclass(frozen=True)
class FoldBatchNormPass:
    """Options of `stablehlo-fold-batch-norm`. Each field is one pipeline option.

    >>> FoldBatchNormPass.parse_options("max-iterations=20")   # doctest: +SKIP
    FoldBatchNormPass(max_iterations=20)
    """

    max_iterations: int = 10
    """Greedy-driver sweeps before giving up on a fixed point (the pass then fails with an
    error); each sweep visits every op once, so more sweeps cost time only on modules that
    keep changing. The last sweep only confirms that nothing changes: a module where
    anything folds needs two."""

    fold_weight_arguments: bool = True
    """Also fold when weights or statistics are function arguments (jax.export of
    `model.apply(variables, x)`): the folded weights and bias are computed in the graph,
    in the element type, on weight- and C-sized tensors. Off: such candidates are left
    alone, and only constants fold (in float64, rounded once)."""

    fold_larger_weight_arguments: bool = False
    """With `fold-weight-arguments`, also fold where the graph would scale, on every call,
    weights with more elements than the activation the scale is on now (a dynamic dimension
    counted as 1): dense layers and late convolutions at batch 1. Off: such candidates are
    left alone, since the fold would move the multiply onto a larger tensor (at batch 1 it
    made inference slower, docs/performance.md), as is a shift alone whose contraction with
    the weights would build more ops than it removes; on: for backends that need the
    canonical linear op + bias form whatever it costs."""

    fold_narrow_weights: bool = True
    """Also fold a norm computed in a wider type (f32 between converts, as Flax's
    `dtype=param_dtype=bfloat16`) into constant weights stored only in the narrow type
    (bf16, f16), with no wider master copy: W * s is computed in float64 from the narrow
    weights and rounded to their type once, a second rounding of each weight (the report
    marks such a fold `rounded again in bf16`; on the networks measured the folded
    model's error against a float64 evaluation is at most 1.17x the original's,
    docs/networks.md). Off: such norms are left as they are, and only weights with a
    wider master copy are scaled."""

    merge_parallel_branches: bool = True
    """Merge parallel convolution branches that read one input and meet in a sum (RepVGG,
    MobileOne, ACNet) into one convolution and bias add, once their batch norms are
    folded. Off: each branch keeps its own convolution."""

    @classmethod
    def parse_options(cls, text: str) -> FoldBatchNormPass:
        """Options from `key=value` pairs separated by spaces (MLIR's `{...}` syntax)."""
        known = {f.name.replace("_", "-"): f for f in fields(cls)}
        values = {}
        for item in text.split():
            key, sep, raw = item.partition("=")
            if key not in known or not sep:
                raise FoldError(
                    f"unknown option '{item}' for {ARGUMENT}; known: {', '.join(sorted(known))}"
                )
            values[known[key].name] = _option_value(key, raw, known[key].type)
        return cls(**values)

    def add_to(self, pm: passmanager.PassManager, recorder: Recorder) -> None:
        """Append this pass to `pm` (a `builtin.module` pass manager)."""
        config = rewrite.GreedyRewriteConfig()
        config.max_iterations = self.max_iterations
        config.use_top_down_traversal = True  # report outcomes in IR order
        config.enable_folding = False
        config.enable_constant_cse = False
        config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED

        def run(op: ir.Operation, _pass) -> None:
            frozen = build_pattern_set(
                op.context, recorder, PATTERNS, fold_weight_arguments=self.fold_weight_arguments,
                fold_larger_weight_arguments=self.fold_larger_weight_arguments,
                fold_narrow_weights=self.fold_narrow_weights,
            )
            # A full collection inside the driver took 9% of a MobileNetV2 pass; the little
            # garbage the patterns leave is collected after it.
            collecting = gc.isenabled()
            gc.disable()
            with callees_read_once():
                try:
                    recorder.number(op)  # (data arguments read once a run, as the patterns see them)
                    _apply_greedily(op, frozen, config)
                finally:
                    if collecting:
                        gc.enable()
                self._after_driver(op, recorder)
                recorder.ran(op)

        pm.add(run, name="FoldBatchNorm", argument=ARGUMENT)

    def _after_driver(self, op: ir.Operation, recorder: Recorder) -> None:
        """Merge parallel branches, evaluate literals, report the chains left: the ops
        each reads found in one walk, walked again only after a step changed the IR."""
        merging, literal, chain = ops_named(op, MERGE_NAMES, LITERAL_NAMES, CHAIN_NAMES)
        if self.merge_parallel_branches and merge_branches(
            op, recorder, self.fold_weight_arguments, self.fold_narrow_weights, merging
        ):
            literal, chain = ops_named(op, LITERAL_NAMES, CHAIN_NAMES)
        if evaluate_literals(op, recorder, literal):
            (chain,) = ops_named(op, CHAIN_NAMES)
        report_chains_left(op, recorder, self.fold_weight_arguments, chain)


def _apply_greedily(op: ir.Operation, frozen, config: rewrite.GreedyRewriteConfig) -> None:
    """MLIR's greedy driver on `op`; FoldError where its sweeps did not reach a fixed point
    (the last sweep still changed something) within `config.max_iterations`: each fold
    is whole, but some op may still be foldable."""
    try:
        rewrite.apply_patterns_and_fold_greedily(op, frozen, config)
    except RuntimeError as error:
        if "failed to converge" not in str(error):
            raise
        raise FoldError(
            f"the folds did not settle within max-iterations={config.max_iterations}: the last "
            "sweep of the module still changed it; a larger max-iterations lets them finish"
        ) from None


def _option_value(key: str, raw: str, kind: object) -> int | bool:
    if kind in (bool, "bool"):
        if raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
        raise FoldError(f"option '{key}' of {ARGUMENT} expects true or false, got '{raw}'")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= _MAX_ITERATIONS:
        raise FoldError(
            f"option '{key}' of {ARGUMENT} expects an integer from 1 to {_MAX_ITERATIONS}, "
            f"got '{raw}'"
        )
    return value


_MAX_ITERATIONS = 2**31 - 1
"""The largest max-iterations accepted (the greedy driver keeps it in a C++ int64; no
module needs anywhere near this many sweeps)."""


_ELEMENT = re.compile(r"\s*([\w.\-]+)\s*(\{[^}]*\})?\s*")


def _split_top_level(text: str) -> list[str]:
    """Split a pipeline body on commas outside parentheses and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise FoldError(f"invalid pass pipeline: unbalanced ')' in '{text}'")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise FoldError(f"invalid pass pipeline: unbalanced '(' in '{text}'")
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _parse_element(text: str) -> tuple[str, str, str | None]:
    """(name, options without braces, nested pipeline or None) of one pipeline element."""
    match = _ELEMENT.match(text)
    if not match:
        raise FoldError(f"invalid pass pipeline element '{text}'")
    name, options = match.group(1), (match.group(2) or "{}")[1:-1]
    rest = text[match.end() :].strip()
    if not rest:
        return name, options, None
    if not (rest.startswith("(") and rest.endswith(")")):
        raise FoldError(f"invalid pass pipeline element '{text}'")
    return name, options, rest[1:-1]


def build_pass_manager(
    context: ir.Context, pipeline: str, recorder: Recorder
) -> passmanager.PassManager:
    """A pass manager for `pipeline`, e.g. `builtin.module(func.func(stablehlo-fold-batch-norm),
    canonicalize)`; a bare list of elements is taken as nested in `builtin.module`."""
    elements = _split_top_level(pipeline)
    body = pipeline
    if len(elements) == 1:
        name, _, nested = _parse_element(elements[0])
        if name == "builtin.module" and nested is not None:
            body = nested
    with context:
        pm = passmanager.PassManager("builtin.module")
        pending: list[str] = []
        for element in _expand(_split_top_level(body)):
            if isinstance(element, FoldBatchNormPass):
                _flush(pm, pending)
                element.add_to(pm, recorder)
            else:
                pending.append(element)
        _flush(pm, pending)
    return pm


def _expand(elements: list[str]) -> list[str | FoldBatchNormPass]:
    """Our pass as FoldBatchNormPass; `func.func(a, ours, b)` split around it."""
    out: list[str | FoldBatchNormPass] = []
    for element in elements:
        name, options, nested = _parse_element(element)
        if name == ARGUMENT:
            if nested is not None:
                raise FoldError(f"invalid pass pipeline: {ARGUMENT} takes no nested pipeline")
            out.append(FoldBatchNormPass.parse_options(options))
        elif nested is not None and ARGUMENT in nested:
            for inner in _expand(_split_top_level(nested)):
                out.append(inner if isinstance(inner, FoldBatchNormPass) else f"{name}({inner})")
        else:
            out.append(element)
    return out


def _flush(pm: passmanager.PassManager, pending: list[str]) -> None:
    if pending:
        text = ",".join(pending)
        try:
            pm.add(text)
        except ValueError as error:
            message = str(error).splitlines()
            detail = next((line for line in message if "error:" in line), message[0])
            raise FoldError(f"invalid pass pipeline: {detail.split('error:', 1)[-1].strip()}")
        pending.clear()


def run_pipeline(
    module: ir.Module,
    pipeline: str,
    recorder: Recorder,
    instrument: Callable[[passmanager.PassManager], None] | None = None,
) -> None:
    """Run `pipeline` on `module` in place; raise FoldError if a pass or pattern failed.
    `instrument` may turn on the pass manager's timing or IR printing first (the
    command's --mlir-timing, --mlir-print-ir-after-all)."""
    pm = build_pass_manager(module.context, pipeline, recorder)
    if instrument is not None:
        instrument(pm)
    try:
        pm.run(module.operation)
    except ir.MLIRError as error:
        raise FoldError(_first_diagnostic(error, recorder.source)) from None
    if recorder.errors:
        raise FoldError(recorder.errors[0])


def _first_diagnostic(error: ir.MLIRError, source: str | None) -> str:
    for diagnostic in error.error_diagnostics:
        return f"{describe_location(diagnostic.location, source)}: error: {diagnostic.message}"
    return str(error)


def documentation() -> str:
    """docs/passes.md: the pass, its options and each pattern's identity and conditions,
    generated from the docstrings so the list of what we fold cannot drift from the code.

        python3 -m stablehlo_bnfold.docs > docs/passes.md
    """
    lines = [
        f"# `{ARGUMENT}`",
        "",
        "<!-- Generated by `python3 -m stablehlo_bnfold.docs > docs/passes.md`; do not edit. -->",
        "",
        inspect.cleandoc(__doc__ or ""),
        "",
        "## Options",
        "",
    ]
    source = inspect.getsource(FoldBatchNormPass)
    for option in fields(FoldBatchNormPass):
        match = re.search(rf'{option.name}: .*?\n\s*"""(.*?)"""', source, re.S)
        help_text = " ".join(match.group(1).split()) if match else ""
        lines.append(f"- `{option.name.replace('_', '-')}` (default {option.default}): {help_text}")
    lines += ["", "## Patterns", "", "Tried on every op in this order.", ""]
    roots: dict[object, list[str]] = {}  # one section per pattern, on each of its roots
    for pattern in PATTERNS:
        roots.setdefault(pattern.apply, []).append(f"`{pattern.root.OPERATION_NAME}`")
    for pattern in PATTERNS:
        if pattern.apply not in roots:
            continue
        doc = inspect.cleandoc(pattern.apply.__doc__ or "")
        identity, _, rest = doc.partition("\n")
        on = ", ".join(roots.pop(pattern.apply))
        lines += [f"### `{pattern.name}` (on {on})", "", f"    {identity}", "", rest.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"
