"""Mutation testing: break the package one small edit at a time and check that a test notices.

    python3 test/mutation/mutants.py --list                  # count the mutants per module
    nice -n 10 python3 test/mutation/mutants.py --seed 15 --budget patterns=40,constants=20 \\
        --out mutants.jsonl                                  # run a seeded sample

Each mutant is one AST edit of one module of `python/stablehlo_bnfold/`, applied to a copy
of the package in a temporary directory (the checkout is never touched):

- arithmetic: `+` <-> `-`, `*` <-> `/`, `//` -> `/`, `**` -> `*`; unary `-x` -> `x`
- comparison: `==` <-> `!=`, `<` <-> `<=`, `>` <-> `>=`, `<` <-> `>`, `in` <-> `not in`,
  `is` <-> `is not`
- logic: `and` <-> `or`, `not x` -> `x`, `if c:` -> `if not c:`, `True` <-> `False`
- numbers: `0` <-> `1`, `n` -> `n + 1`; `None` returned for a returned value

The copy is put first on PYTHONPATH, which pytest, the CLI's subprocesses and lit
(`test/lit.cfg.py`) all use. Then a fast selection of tests runs for the module's family,
cheapest first, stopping at the first failure (`-x`): a mutant is *killed* when a test fails
or the selection runs past its time limit, *survived* when every test passes. The
selection per family is `SELECTIONS` below: seconds per mutant, not the whole suite.

With `--conditions`, the mutants are instead one per early exit of a pattern: an `if` whose
body returns a refusal (`rw.skip(...)`, `rw.not_candidate(...)`, a `_refuse(...)`, a reason
string or a named reason constant) gets its condition replaced by `False`, so the exit is
dropped and the pattern goes on as if the condition held. Each condition a docstring states
needs a test that fails without it: every such mutant should be killed.

    nice -n 10 python3 test/mutation/mutants.py --conditions --families patterns \\
        --timeout 300 --out conditions.jsonl

Mutants are enumerated in source order and sampled with `random.Random(seed)`, so a run is
reproducible from its command line. Results are JSON lines (one per mutant: module, line,
the original and mutated source, status, seconds), and a summary per module on stderr.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "python", "stablehlo_bnfold")

PY = "test/python/"
LIT = ("lit", "test/transforms")
UNIT = ("pytest", PY + "test_algebra.py", PY + "test_constants.py", PY + "test_rounding.py",
        PY + "test_per_channel.py")
NUMERIC = ("pytest", PY + "test_exactness.py", PY + "test_operand_order.py",
           PY + "test_dynamic_shapes.py", PY + "test_edge_values.py")
TESTDATA = ("pytest", PY + "test_testdata.py")

# Families: which modules, and the test commands (cheapest first) that guard them.
SELECTIONS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = {
    "patterns": (
        ("fold/affine_map.py", "fold/plan.py", "fold/rewriter.py", "fold/literals.py", "fold/branches.py",
         "patterns/batch_norm.py", "patterns/bias.py", "patterns/decomposed.py",
         "patterns/input_side.py", "patterns/precision.py", "patterns/through.py",
         "patterns/left.py",
         "patterns/__init__.py"),
        (UNIT, NUMERIC, LIT, TESTDATA, ("pytest", PY + "test_input_side.py")),
    ),
    "analysis": (
        ("analysis/__init__.py", "analysis/commuting.py", "analysis/layouts.py", "analysis/passage.py",
         "analysis/per_channel.py", "analysis/shapes.py", "analysis/users.py"),
        (UNIT, NUMERIC, LIT, TESTDATA),
    ),
    "constants": (("constants.py",), (UNIT, NUMERIC, LIT, TESTDATA)),
    "io": (
        ("io/__init__.py", "io/reader.py", "io/resources.py", "io/writer.py"),
        (("pytest", PY + "test_io.py", PY + "test_api.py"), LIT, ("pytest", PY + "test_fuzz.py")),
    ),
    "report": (("report.py",), (("pytest", PY + "test_report.py"), LIT, ("pytest", PY + "test_api.py"))),
    "cli": (
        ("cli.py",),
        (LIT, ("pytest", PY + "test_cli.py", "-k",
               "split or report or exit or output or verify or stdin or version or temporary "
               "or killed or signal")),
    ),
    "sandbox": (
        ("sandbox.py",),
        (("pytest", PY + "test_untrusted_text.py"),
         ("pytest", PY + "test_cli.py", "-k",
          "killed or signal or temporary or interrupt or dies or sigchld"),
         ("pytest", PY + "test_fuzz.py", "-k",
          "(crash or finish or sigchld) and not fuzzing"),
         ("pytest", PY + "test_startup.py")),
    ),
    "api": (
        ("api.py", "session.py"),
        (("pytest", PY + "test_api.py", PY + "test_untrusted_text.py"),),
    ),
}

_BINOPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
           ast.FloorDiv: ast.Div, ast.Pow: ast.Mult}
_CMPOPS = {ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Lt: [ast.LtE, ast.Gt],
           ast.LtE: [ast.Lt], ast.Gt: [ast.GtE, ast.Lt], ast.GtE: [ast.Gt],
           ast.In: [ast.NotIn], ast.NotIn: [ast.In], ast.Is: [ast.IsNot], ast.IsNot: [ast.Is]}


@dataclass(frozen=True)
class Mutant:
    module: str  # relative to the package
    line: int
    original: str
    mutated: str
    start: tuple[int, int]  # (line, col) of the replaced source span
    end: tuple[int, int]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _variants(node: ast.AST) -> list[ast.AST]:
    """Each mutated copy of `node` (an expression, or an `if` test), none if not mutable."""
    out = []
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        new = copy.deepcopy(node)
        new.op = _BINOPS[type(node.op)]()
        out.append(new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        out.append(copy.deepcopy(node.operand))
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        for op in _CMPOPS.get(type(node.ops[0]), []):
            new = copy.deepcopy(node)
            new.ops = [op()]
            out.append(new)
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(new)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(ast.Constant(not node.value))
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
        replacement = 1 if value == 0 else 0 if value == 1 else value + 1
        out.append(ast.Constant(type(value)(replacement)))
    return out


def enumerate_mutants(module: str) -> list[Mutant]:
    """Every mutant of `module` (a path relative to the package), in source order."""
    path = os.path.join(PACKAGE, module)
    source = open(path).read()
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    mutants = []
    skip = set()  # annotations and decorators: not behaviour
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.annotation is not None:
                    skip.update(id(n) for n in ast.walk(arg.annotation))
            if node.returns is not None:
                skip.update(id(n) for n in ast.walk(node.returns))
        if isinstance(node, ast.AnnAssign):
            skip.update(id(n) for n in ast.walk(node.annotation))
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in docstrings:
            continue
        targets = []
        if isinstance(node, (ast.If, ast.While)):
            test = node.test
            negated = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
                else ast.UnaryOp(ast.Not(), copy.deepcopy(test))
            targets.append((test, negated))
        elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            targets.append((node.value, ast.Constant(None)))
        else:
            targets.extend((node, v) for v in _variants(node))
        for old, new in targets:
            if not hasattr(old, "end_lineno"):
                continue
            original = ast.get_source_segment(source, old)
            if original is None:
                continue
            mutated = f"({ast.unparse(new)})"
            if mutated.strip("()") == original.strip("()"):
                continue
            mutants.append(Mutant(module, old.lineno, original, mutated,
                                  (old.lineno, old.col_offset), (old.end_lineno, old.end_col_offset)))
    mutants.sort(key=lambda m: (m.start, m.end, m.mutated))
    return mutants


_REFUSALS = ("skip", "not_candidate")
"""Calls (methods of the rewriter) that leave the root op alone."""


def _is_refusal(value: ast.expr | None) -> bool:
    """Whether `value`, returned from an early exit, refuses the fold: a refusal call
    (`rw.skip`, `rw.not_candidate`, a `*refuse*` helper), a reason string, or a named
    reason constant (`NARROW_WEIGHTS`, `reasons.NOT_LINEAR`)."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _REFUSALS or "refuse" in name
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.Name):
        return value.id.lstrip("_").isupper()
    if isinstance(value, ast.Attribute):  # a constant of fold.reasons: reasons.NOT_LINEAR
        return value.attr.lstrip("_").isupper()
    return False


def enumerate_condition_mutants(module: str) -> list[Mutant]:
    """One mutant per early exit of `module` (`if c: ... return <refusal>`), its condition
    replaced by `False`, in source order."""
    path = os.path.join(PACKAGE, module)
    source = open(path).read()
    mutants = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.If) or not isinstance(node.body[-1], ast.Return):
            continue
        if not _is_refusal(node.body[-1].value):
            continue
        test = node.test
        original = ast.get_source_segment(source, test)
        mutants.append(Mutant(module, test.lineno, original, "(False)",
                              (test.lineno, test.col_offset), (test.end_lineno, test.end_col_offset)))
    mutants.sort(key=lambda m: (m.start, m.end))
    return mutants


def apply(source: str, mutant: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    start = offsets[mutant.start[0] - 1] + mutant.start[1]
    end = offsets[mutant.end[0] - 1] + mutant.end[1]
    return (data[:start] + mutant.mutated.encode() + data[end:]).decode()


def run_mutant(
    mutant: Mutant, family: str, timeout: float, conditions: bool = False
) -> tuple[str, str, float]:
    """(status, the command that decided, seconds); a condition mutant runs the lit files
    before the family's other commands."""
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bnfold-mutant-") as scratch:
        package = os.path.join(scratch, "stablehlo_bnfold")
        shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
        path = os.path.join(package, mutant.module)
        mutated = apply(open(path).read(), mutant)
        try:
            compile(mutated, path, "exec")
        except SyntaxError:
            return "invalid", "", 0.0
        with open(path, "w") as handle:
            handle.write(mutated)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (scratch, os.environ.get("PYTHONPATH")) if p),
            PYTHONDONTWRITEBYTECODE="1")
        commands = SELECTIONS[family][1]
        if conditions:  # a dropped condition wants a negative case: the lit files first
            commands = tuple(sorted(commands, key=lambda c: c != LIT))
        for command in commands:
            if command[0] == "lit":
                argv = [sys.executable, "-c", "from lit.main import main; main()", "-q",
                        "--max-failures=1", *command[1:]]
            else:
                argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *command[1:]]
            left = timeout - (time.monotonic() - began)
            if left <= 0:
                return "timeout", " ".join(command), time.monotonic() - began
            try:
                result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=left)
            except subprocess.TimeoutExpired:
                return "timeout", " ".join(command), time.monotonic() - began
            if result.returncode != 0:
                return "killed", " ".join(command), time.monotonic() - began
    return "survived", "", time.monotonic() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="count mutants per module and exit")
    parser.add_argument("--conditions", action="store_true",
                        help="one mutant per early exit (its condition -> False) instead")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--budget", default="",
                        help="FAMILY=N,... mutants sampled per family (all when absent)")
    parser.add_argument("--families", default=",".join(SELECTIONS))
    parser.add_argument("--only", default="", help="comma-separated MODULE:LINE to run (triage)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant")
    parser.add_argument("--out", default="-", help="JSON lines file (default stdout)")
    args = parser.parse_args(argv)
    budget = {k: int(v) for k, v in (p.split("=") for p in args.budget.split(",") if p)}
    only = {tuple(p.rsplit(":", 1)) for p in args.only.split(",") if p}
    rng = random.Random(args.seed)
    plan = []
    enumerate_ = enumerate_condition_mutants if args.conditions else enumerate_mutants
    for family in args.families.split(","):
        mutants = [m for module in SELECTIONS[family][0] for m in enumerate_(module)]
        if args.list:
            print(f"{family}: {len(mutants)} mutants")
            continue
        if only:
            mutants = [m for m in mutants if (m.module, str(m.line)) in only]
        elif family in budget and budget[family] < len(mutants):
            mutants = sorted(rng.sample(mutants, budget[family]), key=lambda m: (m.module, m.start))
        plan.extend((family, m) for m in mutants)
    if args.list:
        return 0
    out = sys.stdout if args.out == "-" else open(args.out, "a")
    tally: dict[str, dict[str, int]] = {}
    for i, (family, mutant) in enumerate(plan, 1):
        status, decided, seconds = run_mutant(mutant, family, args.timeout, args.conditions)
        record = dict(asdict(mutant), family=family, status=status, by=decided, seconds=round(seconds, 1))
        out.write(json.dumps(record) + "\n")
        out.flush()
        counts = tally.setdefault(mutant.module, {})
        counts[status] = counts.get(status, 0) + 1
        print(f"[{i}/{len(plan)}] {status:8} {mutant.module}:{mutant.line} "
              f"{mutant.original!r} -> {mutant.mutated!r} ({seconds:.0f} s)", file=sys.stderr)
    for module, counts in sorted(tally.items()):
        print(f"{module}: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
