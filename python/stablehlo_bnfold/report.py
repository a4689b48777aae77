"""What the pass did: one Fold or Skip record per candidate op, as data first, text second;
grouped into norms (`FoldReport.norms`) for the text report, one line per norm.

Patterns record outcomes through a `Recorder` while MLIR's greedy driver runs. The driver
may try a pattern on the same op more than once, so the recorder keeps the last outcome per
(op, pattern); skips of ops that no longer exist when the pass ends (folded later, or erased
as dead) are dropped. The recorder keeps strings only, never op handles, which MLIR
invalidates when it erases ops.
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import json
import re
from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir

from .analysis.activations import count_activation_sized, data_arguments
from .basics import one_line
from .fold.reasons import DATA_DEPENDENT, NO_LINEAR_OP, NOT_LINEAR

__all__ = ["Fold", "FoldError", "FoldReport", "Recorder", "Skip", "describe_location", "one_line"]


class FoldError(Exception):
    """The one exception the API raises; its message is the line the CLI would print."""


@dataclass(frozen=True)
class Fold:
    """A batch norm (or one op of a per-channel affine chain) folded into a linear op:
    `linear`, the convolution or dot_general before it or, for an input-side fold, after
    it (the JSON report keeps its first name for it, `producer`)."""

    location: str
    pattern: str
    op: str
    linear: str
    through: str = ""
    """The ops the fold passed the affine map across (`stablehlo.maximum`), if any."""
    rounded_again: str = ""
    """The narrow type (`bf16`, `f16`) of weights the fold scaled though they had no wider
    master copy: W * s computed in float64 from them and rounded to that type again (the
    pass option `fold-narrow-weights`); empty when every weight was rounded once."""
    position: str = ""
    """`@main op 12` (`position_of`) where the location does not say which op it is."""
    norm: int = 0
    """Which norm the op belongs to: the folds of one chain (a decomposed batch norm's
    subtract, multiply and add) share it."""

    @property
    def producer(self) -> str:
        """`linear` under its first name, kept for code written against it (it named the
        linear op after the batch norm too, for input-side folds)."""
        return self.linear


@dataclass(frozen=True)
class Skip:
    """A candidate batch norm left as it was, and the first condition that failed."""

    location: str
    pattern: str
    op: str
    reason: str
    position: str = ""
    """`@main op 12` (`position_of`) where the location does not say which op it is."""
    kept: bool = False
    """The part of a folded norm that stays (its shift, behind a relu or pool), and why:
    the norm is folded partly."""
    norm: int = 0
    """With `kept`, the norm folded (`Fold.norm`)."""
    chain: int = 0
    """Without `kept`, the chain of per-channel ops this op is one of, where patterns
    refused it at several of its ops (an output side's refusal at its subtract, the
    input side's at its add): one norm left, a line per pattern. 0: an op on its own."""


@dataclass(frozen=True)
class Merge:
    """Parallel branches that read one input and meet in a sum (RepVGG's 3x3, 1x1 and
    identity), merged into one `linear` op; or, with `reason`, left as they were."""

    location: str
    pattern: str
    branches: int
    linear: str
    reason: str = ""
    position: str = ""


GENERIC_REASONS = (str(NOT_LINEAR), str(NO_LINEAR_OP))
"""Reasons that say only that a pattern does not apply to an op; where another pattern
says more about the same op, the report shows that one."""

NOT_A_NORM = (str(DATA_DEPENDENT),)
"""Reasons that say an op is no norm: its per-channel value is computed from the data (a
squeeze-excite gate), not a parameter. An op left alone for these only (not a
`batch_norm_inference`) is not counted as a norm left: the text report still says why at
the op, the JSON lists it under `not_norms`."""


@dataclass(frozen=True)
class Norm:
    """One norm (a per-channel affine map) as the report counts it: `folded` whole, folded
    `partly` (what stays is in `skips`, `kept`), or `left` (each pattern's reason)."""

    status: str
    folds: tuple[Fold, ...] = ()
    skips: tuple[Skip, ...] = ()


@dataclass(frozen=True)
class FoldReport:
    """Every fold and every skip of one run, in IR order of discovery.

    >>> module, report = fold_batch_norm(text, with_report=True)   # doctest: +SKIP
    >>> print(report)
    2 norms: 1 folded whole, 0 folded partly, 1 left (3 ops folded); 2 activation-sized ops removed
    """

    folds: tuple[Fold, ...] = ()
    skips: tuple[Skip, ...] = ()
    merges: tuple[Merge, ...] = ()
    activation_ops_removed: int = 0
    """How many activation-sized ops (`analysis.activations`) the pass removed: counted
    before each run rewrites anything and after it, in every function."""

    @property
    def folded(self) -> int:
        """How many ops were folded: one per batch norm, three per decomposed one."""
        return len(self.folds)

    def norms(self) -> list[Norm]:
        """The norms, in the order of their first fold or skip: the folds of one chain
        as one norm, with the part of it that stays (`Skip.kept`); each op left alone as
        one, with every pattern's reason (a generic one only where no other is given)."""
        groups: dict[object, list] = {}
        for index, fold in enumerate(self.folds):
            groups.setdefault(("norm", fold.norm or -index - 1), []).append(fold)
        for skip in self.skips:
            if skip.kept:
                key = ("norm", skip.norm)
            else:
                key = ("chain", skip.chain) if skip.chain else ("op", skip.location, skip.position)
            groups.setdefault(key, []).append(skip)
        norms = []
        for members in groups.values():
            folds = tuple(m for m in members if isinstance(m, Fold))
            skips = tuple(m for m in members if isinstance(m, Skip))
            if not folds and _not_a_norm(skips):
                continue  # a per-channel value computed from the data (`not_norms`)
            if not folds:
                specific = tuple(s for s in skips if not s.reason.startswith(GENERIC_REASONS))
                norms.append(Norm("left", (), specific or skips))
            else:
                norms.append(Norm("partly" if skips else "folded", folds, skips))
        return norms

    def not_norms(self) -> list[Skip]:
        """The ops left alone that are no norm (`NOT_A_NORM`): shown with their reason,
        not counted among the norms."""
        ops: dict[tuple[str, str], list[Skip]] = {}
        for skip in self.skips:
            if not skip.kept:
                ops.setdefault((skip.location, skip.position), []).append(skip)
        return [s for skips in ops.values() if _not_a_norm(skips) for s in skips]

    def __str__(self) -> str:
        c = self.summary()
        text = (
            f"{c['norms']} {'norm' if c['norms'] == 1 else 'norms'}: {c['folded_whole']} folded whole, "
            f"{c['folded_partly']} folded partly, {c['left']} left "
            f"({c['ops_folded']} {'op' if c['ops_folded'] == 1 else 'ops'} folded)"
        )
        if c.get("merges"):
            text += f"; {c['merges']} {'sum' if c['merges'] == 1 else 'sums'} of parallel branches merged"
        removed = c["activation_ops_removed"]
        return text + f"; {removed} activation-sized {'op' if removed == 1 else 'ops'} removed"

    def merged(self, other: FoldReport) -> FoldReport:
        """This report followed by `other` (for --split-input-file), `other`'s norms and
        chains numbered after this one's (each run's recorder numbers them from 1)."""
        offset = max([f.norm for f in self.folds] + [s.norm for s in self.skips] + [0])
        chains = max([s.chain for s in self.skips] + [0])
        folds = tuple(dataclasses.replace(f, norm=f.norm + offset) for f in other.folds)
        skips = tuple(
            dataclasses.replace(s, norm=s.norm + offset) if s.kept
            else dataclasses.replace(s, chain=s.chain + chains) if s.chain else s
            for s in other.skips
        )
        return FoldReport(
            self.folds + folds, self.skips + skips, self.merges + other.merges,
            self.activation_ops_removed + other.activation_ops_removed,
        )

    def to_text(self) -> str:
        """One line per norm (`norm_entries`), then the totals; control characters of a
        file name are escaped (`one_line`), as in error messages."""
        lines = [one_line(f"{where}: {what}") for where, what in self.norm_entries()]
        lines.append(str(self))
        return "\n".join(lines)

    def norm_entries(self) -> list[tuple[str, str]]:
        """(location, what) of each norm folded (at its first op: the ops folded, into
        which linear op, through which ops), then each part that stays and each norm left
        (one line per pattern that says why)."""
        folded, shown = [], set()
        for norm in self.norms():
            if norm.folds:
                first = norm.folds[0]
                ops = ", ".join(f.op for f in norm.folds)
                patterns = ", ".join(dict.fromkeys(f.pattern for f in norm.folds))
                what = f"folded {ops} into {first.linear}{_through(first)}{_rounded(first)} [{patterns}]"
                folded.append((_where(first), what))
            shown.update(id(s) for s in norm.skips)
        shown.update(id(s) for s in self.not_norms())
        # What stays, in the order it was found (a norm's kept shift among the others).
        rest = [(_where(s), f"not folded {s.op}: {s.reason} [{s.pattern}]") for s in self.skips if id(s) in shown]
        return folded + self._merge_entries() + rest

    def _merge_entries(self) -> list[tuple[str, str]]:
        """(location, what) of each sum of parallel branches merged or left."""
        return [
            (_where(m), f"branches not merged: {m.reason} [{m.pattern}]" if m.reason
             else f"merged {m.branches} branches into {m.linear} [{m.pattern}]")
            for m in self.merges
        ]

    def entries(self) -> list[tuple[str, str]]:
        """(location, what) of every fold, then every skip: what the text report says
        after the location, and the remark `--verify-diagnostics` checks."""
        return [
            (_where(f), f"folded {f.op} into {f.linear}{_through(f)}{_rounded(f)} [{f.pattern}]")
            for f in self.folds
        ] + self._merge_entries() + [(_where(s), f"not folded {s.op}: {s.reason} [{s.pattern}]") for s in self.skips]

    def to_dict(self) -> dict:
        """The report as `to_json` writes it: `folds` (each with `location`, `pattern`,
        `op`, `producer`, and `through` and `rounded_again` when not empty), `skips` (`location`, `pattern`,
        `op`, `reason`), `folded` and `skipped` (the counts), `norms` (`_norm_dict`),
        `not_norms` (ops left alone that are no norm: `not_norms`), `merges` (each sum of
        parallel branches: `location`, `pattern`, `branches`, and `into` the linear op
        merged into or the `reason` they stay) and `summary`. A fold or skip whose location
        does not say which op it is has `position` (`@main op 12`), and `layer` where its
        location is a name with one (`Conv_0` in `jit(model)/Conv_0/mul`)."""
        return {
            "folds": [
                {"location": f.location, "pattern": f.pattern, "op": f.op, "producer": f.linear}
                | ({"through": f.through} if f.through else {})
                | ({"rounded_again": f.rounded_again} if f.rounded_again else {})
                | _placed(f)
                for f in self.folds
            ],
            "skips": [
                {"location": s.location, "pattern": s.pattern, "op": s.op, "reason": s.reason} | _placed(s)
                for s in self.skips
            ],
            "folded": self.folded,
            "skipped": len(self.skips),
            "norms": [_norm_dict(n) for n in self.norms()],
            "not_norms": [
                {"location": s.location, "op": s.op, "reason": s.reason, "pattern": s.pattern} | _placed(s)
                for s in self.not_norms()
            ],
            "merges": [
                {"location": m.location, "pattern": m.pattern, "branches": m.branches}
                | ({"reason": m.reason} if m.reason else {"into": m.linear})
                | _placed(m)
                for m in self.merges
            ],
            "summary": self.summary(),
        }

    def summary(self) -> dict:
        """The counts `str(report)` writes: norms, those folded whole, partly and left, the
        ops folded, the sums of parallel branches merged, and the activation-sized ops
        removed."""
        norms = self.norms()
        return {
            "norms": len(norms),
            **{key: sum(n.status == status for n in norms)
               for key, status in (("folded_whole", "folded"), ("folded_partly", "partly"), ("left", "left"))},
            "ops_folded": len(self.folds),
            "merges": sum(not m.reason for m in self.merges),
            "activation_ops_removed": self.activation_ops_removed,
        }

    def to_json(self) -> str:
        """The report as a JSON object (`to_dict`)."""
        return json.dumps(self.to_dict(), indent=2)


def _not_a_norm(skips) -> bool:
    """Whether an op left alone is no norm: every pattern's reason is one of `NOT_A_NORM`
    (a `batch_norm_inference` is a norm whatever its operands)."""
    return bool(skips) and all(s.reason in NOT_A_NORM and s.op != "stablehlo.batch_norm_inference" for s in skips)


def _norm_dict(norm: Norm) -> dict:
    """One norm for the JSON report: its `status`, where (`location`, `position`), the
    `ops` folded, `into` which linear op, `through` which ops, its `patterns`, and what
    stays, each with its `reason` (`kept` or `left`)."""
    first = (norm.folds or norm.skips)[0]
    entry = {"status": norm.status, "location": first.location} | _placed(first)
    if norm.folds:
        entry |= {"ops": [f.op for f in norm.folds], "into": first.linear,
                  "patterns": list(dict.fromkeys(f.pattern for f in norm.folds))}
        entry |= {"through": first.through} if first.through else {}
    if norm.skips:
        entry["stays"] = [{"location": s.location, "op": s.op, "reason": s.reason, "pattern": s.pattern}
                          for s in norm.skips]
    return entry


def _through(fold: Fold) -> str:
    return f" through {fold.through}" if fold.through else ""


def _where(entry: Fold | Skip) -> str:
    """The location, then the position where there is one: `jit(f)/mul, @main op 12`."""
    return f"{entry.location}, {entry.position}" if entry.position else entry.location


def _placed(entry: Fold | Skip) -> dict:
    """`position` and `layer` for the JSON report, where there are."""
    if not entry.position:
        return {}
    layer = layer_of(entry.location)
    return {"position": entry.position} | ({"layer": layer} if layer else {})


_TRANSFORM = re.compile(r"^\w+\(.*\)$")


def layer_of(name: str) -> str:
    """The layer in a jax name location: the name scopes between the transformations
    (`jit(model)`, `vmap(f)`) and the primitive; "" when there are none.

    >>> layer_of("jit(model)/ResNet/BatchNorm_0/mul")
    'ResNet/BatchNorm_0'
    """
    parts = name.split("/")
    while parts and _TRANSFORM.match(parts[0]):
        parts.pop(0)
    return "/".join(parts[:-1])


def position_of(function: str, index: int) -> str:
    """How the report names an op by its place: the `index`-th op (from 1, in the order
    the function prints them, nested ops included) of `@function`."""
    return f"@{function} op {index}"


def _rounded(fold: Fold) -> str:
    return f" (rounded again in {fold.rounded_again})" if fold.rounded_again else ""


_FILE_LINE_COL = re.compile(r'^loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_NAME = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"')


def describe_location(location: ir.Location, source: str | None = None) -> str:
    """`file:line:col` or the name of a location; `source` replaces the parser's "-".
    Names are shown as written, not as MLIR escapes them (`\\22` for a quote).

    >>> describe_location(op.location, "model.mlir")   # doctest: +SKIP
    'model.mlir:12:5'
    """
    return _described(str(location), source)


def _described(text: str, source: str | None) -> str:
    """`describe_location` of the location printed as `text`."""
    match = _FILE_LINE_COL.match(text)
    if match:
        name = match.group(1)
        if name == "-" and source is not None:
            name = source
        return f"{_unescape(name)}:{match.group(2)}:{match.group(3)}"
    match = _NAME.match(text)
    if match:
        return _unescape(match.group(1))
    return text


_ESCAPE = re.compile(r"\\(\\|[0-9A-Fa-f]{2})")


def _unescape(name: str) -> str:
    """A name as MLIR's printer escapes it (llvm::printEscapedString: a byte outside
    printable ASCII or a quote as `\\XX`, a backslash as `\\\\`), back as written; bytes
    that are not UTF-8 are shown as U+FFFD."""
    if "\\" not in name:
        return name
    data, end = bytearray(), 0
    for match in _ESCAPE.finditer(name):
        escaped = match.group(1)
        byte = b"\\" if escaped == "\\" else bytes([int(escaped, 16)])
        data += name[end : match.start()].encode() + byte
        end = match.end()
    data += name[end:].encode()
    return data.decode("utf-8", errors="replace")


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


_OPERATION_CAPSULE = b"jaxlib.mlir.ir.Operation._CAPIPtr"


def op_key(op: ir.Operation) -> int:
    """The address of the MLIR operation behind `op`. Python handles to one op are not
    unique while the pass rewrites (the bindings may hand out a new one, with a new hash,
    after an operand of the op was replaced); its address stays while the op lives."""
    return _capsule_pointer(op._CAPIPtr, _OPERATION_CAPSULE)


def _functions(root: ir.Operation) -> list[ir.Operation]:
    """The `func.func`s directly in `root`'s body (a module's functions)."""
    return [
        op.operation
        for region in root.regions
        for block in region.blocks
        for op in block.operations
        if op.operation.name == "func.func"
    ]


def _arguments(function: ir.Operation, numbers: tuple[int, ...]) -> list[ir.Value]:
    """`function`'s arguments numbered `numbers` (none of a declaration)."""
    if not numbers:
        return []
    arguments = function.regions[0].blocks[0].arguments
    return [arguments[i] for i in numbers]


@dataclass
class Recorder:
    """Mutable collector used while the pass runs; `finish` turns it into a FoldReport."""

    source: str | None = None
    folds: list[tuple[ir.Location, str, str, str, str, str, int, int]] = field(default_factory=list)
    """(location, pattern, op, linear, through, rounded_again, norm, op address) of each
    fold; made into `Fold`s by `finish`."""
    skips: dict[tuple[int, str], tuple[ir.Location, str, str, str, bool, int]] = field(default_factory=dict)
    """(location, pattern, op, reason, kept, norm) of the last skip per (op, pattern). Locations are
    described once, in `finish`: the driver retries ops, and printing a location costs
    more than the rest of a skip."""
    positions: dict[int, tuple[str, int]] = field(default_factory=dict)
    """Each op's function and index (`position_of`) by address, as the pass found them
    (`number`)."""
    merges: list[tuple[ir.Location, int, str, int, str, str]] = field(default_factory=list)
    """(location, op address, pattern, branches, linear, reason) of each sum of parallel
    branches merged (reason "") or left."""
    errors: list[str] = field(default_factory=list)
    built: set[int] = field(default_factory=set)
    """Ops the patterns built. Every op allocated while the pass runs is one, so a handle
    reused after an erase still names a built op."""
    _skipped: set[int] = field(default_factory=set, repr=False)
    """Addresses of the ops in `skips`."""
    activation_ops_removed: int = 0
    """The activation-sized ops the pass runs removed (`number` counts them before a run,
    `ran` after it)."""
    _activations: tuple[int, dict[str, tuple[int, ...]]] = field(default=(0, {}), repr=False)
    """The activation-sized ops `number` counted, and each function's data arguments
    (`data_arguments`), read once so that a run is counted before and after alike."""
    _norm_count: int = field(default=0, repr=False)
    _continued: dict[int, int] = field(default_factory=dict, repr=False)
    """The norm of the part folded already, by the address of the op that continues it."""
    _chains: dict[int, int] = field(default_factory=dict, repr=False)
    """The chain (`same_norm`) of each op a pattern named one of, by address."""
    _chain_count: int = field(default=0, repr=False)
    """The chains `same_norm` numbered so far."""
    unrounded: dict[int, object] = field(default_factory=dict, repr=False)
    """What each constant a fold built was rounded from, by the constant's address: a
    bias's float64 values, which the next fold of the chain reads
    (`FoldRewriter.unrounded`), so that a chain folded one op at a time rounds its bias
    once, as one fold does; scaled weights' recipe (`rewriter.ScaledWeights`), which a
    merge of parallel branches sums unrounded (`rewriter.unrounded_weights`)."""

    def created(self, op: ir.Operation) -> int:
        """Note that a pattern built `op`: folds and skips of it are not candidates of the
        input (a bias add a fold built, passed on into the next linear op, continues that
        fold), so they are not reported. An op skipped earlier at the same address has
        been erased: its skips go with it, or `finish` would report them for `op`.
        Returns its address (`op_key`), for a note of the caller's."""
        key = op_key(op)
        self.built.add(key)
        self._chains.pop(key, None)
        self.unrounded.pop(key, None)
        if key in self._skipped:
            for stale in [entry for entry in self.skips if entry[0] == key]:
                del self.skips[stale]
            self._skipped.discard(key)
        return key

    def was_built(self, op: ir.OpView) -> bool:
        """Whether a pattern built `op`."""
        return op_key(op.operation) in self.built

    def built_or_skipped(self, op: ir.OpView | ir.Operation) -> bool:
        """Whether a pattern built `op` or recorded why it stays (`was_built` or
        `has_skip`, the op's address read once)."""
        key = op_key(op.operation)
        return key in self.built or key in self._skipped

    def has_skip(self, op: ir.OpView | ir.Operation) -> bool:
        """Whether some pattern recorded why `op` stays."""
        operation = op.operation if isinstance(op, ir.OpView) else op
        return op_key(operation) in self._skipped

    def skip(self, op: ir.OpView, pattern: str, reason: str) -> None:
        if op_key(op.operation) not in self.built:
            self.keep(op, pattern, reason)

    def keep(self, op: ir.OpView, pattern: str, reason: str, kept: bool = False) -> None:
        """Record why `op` stays; with `kept`, an op the fold just recorded built to keep
        what it could not fold (the norm is folded partly)."""
        key = (op_key(op.operation), pattern)
        norm = self.folds[-1][6] if kept and self.folds else 0
        self.skips[key] = (op.location, pattern, op.operation.name, reason, kept, norm)
        self._skipped.add(key[0])

    def same_norm(self, ops: list[ir.OpView]) -> None:
        """Note that `ops` are one chain of per-channel ops (one norm): where patterns
        refuse it at more than one of them, the report counts one norm left."""
        keys = [op_key(op.operation) for op in ops]
        known = {self._chains[k] for k in keys if k in self._chains}
        if not known:
            self._chain_count += 1
        chain = min(known) if known else self._chain_count
        for key, other in list(self._chains.items()):
            if other in known:
                self._chains[key] = chain
        for key in keys:
            self._chains[key] = chain

    def new_norm(self) -> int:
        """A number for a norm folded now (its folds share it: `Fold.norm`)."""
        self._norm_count += 1
        return self._norm_count

    def norm_of(self, op: ir.OpView) -> int:
        """The norm a fold of `op` belongs to: the one an earlier fold of part of it marked
        (`continued_by`), else a new one."""
        return self._continued.pop(op_key(op.operation), None) or self.new_norm()

    def continued_by(self, ops: list[ir.OpView], norm: int) -> None:
        """Note that `ops` (the readers of an op a fold replaced: the rest of its chain)
        belong to `norm` when they are folded."""
        for op in ops:
            self._continued[op_key(op.operation)] = norm

    def fold(
        self, op: ir.OpView, pattern: str, linear: str, through: str = "", rounded_again: str = "",
        norm: int | None = None,
    ) -> None:
        """Record that `op` was folded into `linear`; `norm` is the number (`new_norm`) of
        the chain it was folded with, by default a new one: a norm of its own."""
        key = op_key(op.operation)
        self.skips.pop((key, pattern), None)
        if key not in self.built:
            norm = self.new_norm() if norm is None else norm
            self.folds.append((op.location, pattern, op.operation.name, linear, through, rounded_again, norm, key))

    def merge(self, op: ir.OpView, pattern: str, branches: int, linear: str, reason: str = "") -> None:
        """Record that the sum `op` of `branches` parallel branches was merged into one
        `linear` op, or with `reason` why they stay."""
        self.merges.append((op.location, op_key(op.operation), pattern, branches, linear, str(reason)))

    def number(self, root: ir.Operation) -> None:
        """Note the place of every op under `root` in its function (`position_of`), for
        report lines whose location does not say which op they mean, and count the
        activation-sized ops (`ran` counts them again). Before the pass rewrites anything:
        only ops it did not build are reported, and those keep their addresses."""
        self.positions.clear()
        count, data = 0, {}
        for function in _functions(root):
            name = ir.StringAttr(function.attributes["sym_name"]).value
            self._number_ops(function, name)
            data[name] = data_arguments(function)
            count += count_activation_sized(_arguments(function, data[name]))
        self._activations = (count, data)

    def _number_ops(self, function: ir.Operation, name: str) -> None:
        """Each op's place in `function` (`positions`), the function itself aside."""
        positions, places = self.positions, itertools.count()
        pointer, capsule = _capsule_pointer, _OPERATION_CAPSULE  # (`op_key`, inlined)

        def visit(op: ir.Operation) -> ir.WalkResult:
            positions[pointer(op._CAPIPtr, capsule)] = (name, next(places))
            return ir.WalkResult.ADVANCE

        function.walk(visit, ir.WalkOrder.PRE_ORDER)  # the function first, as op 0
        del positions[op_key(function)]

    def ran(self, root: ir.Operation) -> None:
        """Note that a pass run on `root` ended: the activation-sized ops it removed are
        those `number` counted less those left. What folds rounded from (`unrounded`) is
        read no more: dropped, with the attributes and arrays it holds."""
        self.unrounded.clear()
        before, data = self._activations
        after = 0
        for function in _functions(root):
            name = ir.StringAttr(function.attributes["sym_name"]).value
            after += count_activation_sized(_arguments(function, data.get(name, ())))
        self.activation_ops_removed += before - after

    def error(self, op: ir.OpView, pattern: str, error: BaseException) -> None:
        if isinstance(error, MemoryError):
            # Not a bug: the folded weights do not fit (a gigantic splat kernel is a few
            # bytes in the input and every byte of it once scaled per channel).
            what = f"not enough memory to fold [{pattern}]: {error}"
        else:
            what = f"internal error in pattern {pattern}: {type(error).__name__}: {error}"
        self.errors.append(f"{self._where(op)}: error: {what}")

    def _where(self, op: ir.OpView) -> str:
        return describe_location(op.location, self.source)

    def finish(self, module: ir.Module) -> FoldReport:
        """The report, keeping only skips of ops still in `module`."""
        alive: set[int] = set()
        add, pointer, capsule, advance = alive.add, _capsule_pointer, _OPERATION_CAPSULE, ir.WalkResult.ADVANCE

        def visit(op: ir.Operation) -> ir.WalkResult:
            add(pointer(op._CAPIPtr, capsule))  # (`op_key`, inlined: once an op of the module)
            return advance

        if self.skips or self.merges:
            module.operation.walk(visit)

        folds = [(loc, key, rest) for loc, *rest, key in self.folds]
        skips = [(loc, key, rest) for (key, _), (loc, *rest) in self.skips.items() if key in alive]
        merges = [entry for entry in self.merges if not entry[5] or entry[1] in alive]
        places = self._places([(loc, key) for loc, key, _ in folds + skips] + [m[:2] for m in merges])
        fold_places, skip_places = places[: len(folds)], places[len(folds) : len(folds) + len(skips)]
        merge_places = places[len(folds) + len(skips) :]
        chains = self._skip_chains([key for _, key, rest in skips if not rest[3]])
        return FoldReport(
            tuple(
                Fold(w, *rest[:5], position=p, norm=rest[5]) for (w, p), (_, _, rest) in zip(fold_places, folds)
            ),
            tuple(
                Skip(w, *rest[:3], position=p, kept=rest[3], norm=rest[4], chain=0 if rest[3] else chains.get(key, 0))
                for (w, p), (_, key, rest) in zip(skip_places, skips)
            ),
            tuple(Merge(w, *entry[2:], position=p) for (w, p), entry in zip(merge_places, merges)),
            self.activation_ops_removed,
        )

    def _skip_chains(self, keys: list[int]) -> dict[int, int]:
        """The chain (`same_norm`) of each op of `keys` (ops left alone) that shares it with
        another of them; ops on their own are not in it."""
        members: dict[int, set[int]] = {}
        for key in keys:
            if key in self._chains:
                members.setdefault(self._chains[key], set()).add(key)
        return {key: chain for chain, ops in members.items() if len(ops) > 1 for key in ops}

    def _places(self, entries: list[tuple[ir.Location, int]]) -> list[tuple[str, str]]:
        """(location, position) of each entry's op: the position only where the location
        does not say which op it is, being no file:line:col (a jax name, unknown) or that
        of another op reported too."""
        # Each location printed once: the context keeps one of each (a location's `attr`
        # compares by address), and the records of a network share a few (jax names).
        printed: dict[ir.Attribute, tuple[str, bool]] = {}
        described = []
        for loc, key in entries:
            attr = loc.attr
            if attr not in printed:
                text = str(loc)
                printed[attr] = (_described(text, self.source), bool(_FILE_LINE_COL.match(text)))
            described.append((*printed[attr], key))
        ops_at: dict[str, set[int]] = {}
        for where, _, key in described:
            ops_at.setdefault(where, set()).add(key)
        return [
            (where, position_of(*self.positions[key]) if key in self.positions else "")
            if not file_line_col or len(ops_at[where]) > 1
            else (where, "")
            for where, file_line_col, key in described
        ]
