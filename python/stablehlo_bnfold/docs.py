"""Writes docs/passes.md: `python3 -m stablehlo_bnfold.docs > docs/passes.md`.

The reference is generated from the code so that it cannot drift from it: the pass, its
options and each pattern's identity and conditions (`passes.documentation`), parallel
branches merged (`fold/branches.py`), the ops a
per-channel scale and shift pass (`analysis/commuting.py`'s identities and a table of its
rows, `TABLE`), then every reason a candidate is left with, in the groups of
`fold/reasons.py`, with its meaning where the constant has a docstring.
"""

from __future__ import annotations

import ast
import inspect

from .analysis import commuting
from .fold import branches, reasons
from .passes import documentation

__all__ = ["branches_section", "commuting_table", "passage_section", "reasons_section", "reference"]

_DEBUG_ONLY = "debug log only"
"""The group whose reasons say an op is no candidate: the report never prints them."""


def reference() -> str:
    """docs/passes.md: the pass's documentation, what passes what, the reasons."""
    return "\n".join([documentation(), branches_section(), passage_section(), reasons_section()])


def branches_section() -> str:
    """Parallel convolution branches merged (`fold/branches.py`'s module docstring)."""
    title, _, rest = (inspect.getdoc(branches) or "").partition("\n")
    return "\n".join([
        "## Parallel branches merged: `merge_parallel_branches`",
        "",
        f"{title} {rest.lstrip()}",
        "",
    ])


def passage_section() -> str:
    """The identities by which a per-channel map passes the ops between a norm and a
    linear op (`analysis/commuting.py`'s module docstring, up to its description of the
    table), then the table of what passes what (`commuting_table`)."""
    paragraphs = (inspect.getdoc(commuting) or "").split("\n\n")
    end = next(i for i, text in enumerate(paragraphs) if text.startswith("`TABLE`"))
    return "\n".join([
        "## What a per-channel scale and shift pass",
        "",
        "Between a norm and its linear op (`fold_scale_through_relu` on the output side, the",
        "input-side patterns forward), generated from `python/stablehlo_bnfold/analysis/commuting.py`.",
        "",
        "\n\n".join(paragraphs[1:end]),
        "",
        commuting_table(),
    ])


def commuting_table() -> str:
    """One line per row of `analysis.commuting.TABLE`: the op kind and what it is (the row
    constant's docstring), the ops it is written as, its identity, the scales that pass it
    (s > 0 only, or any sign), how the shift passes, its refusals (reasons by constant),
    the report's name for it and the directions that pass it (back: the output side;
    forward: the input side)."""
    lines = [
        "Each row is one op kind, read by both directions: back (`fold_scale_through_relu`,",
        "from a chain after the op into the linear op before it) and forward (the input-side",
        "patterns, from a chain before the op into the linear ops after it). A shift passes",
        "*as it is*, *as n * t* (n the elements a sum adds, where that is one number), *into",
        "the bounds* (forward: a clamp's bounds move by it; back it stays behind), or *no*:",
        "it stays as one add. The reasons are those of the list below.",
        "",
        "| op | what it is | written as | identity | scale | shift | refused | reported as | passed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    names = {id(getattr(reasons, name)): name for name in reasons.__all__}
    docs = _row_docs()
    for constant, row in ((name, getattr(commuting, name)) for name in docs):
        refused = [f"`{names[id(reason)]}`" for reason in row.refusals]
        refused += [f"forward: `{names[id(reason)]}`" for reason in row.forward_refusals]
        if row.users is not None:
            refused.append(f"back: `{names[id(row.users)]}`")
        if row.negative is not None:
            refused.append(f"forward, s < 0: `{names[id(row.negative)]}`")
        cells = [
            row.kind, docs[constant], ", ".join(f"`{op.OPERATION_NAME}`" for op in row.ops),
            f"`{row.identity}`", "s > 0" if row.positive else "any", row.shift,
            ", ".join(refused), f"`{row.name}`", _directions(row),
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _directions(row: commuting.Row) -> str:
    """The directions that pass `row`'s ops."""
    if row.down is None:
        return "forward"
    return "both (back: the last op only)" if row.last else "both"


def _row_docs() -> dict[str, str]:
    """{constant name: its docstring on one line} for each `NAME = Row(...)` of
    `analysis/commuting.py`, in the order of `TABLE`."""
    body = ast.parse(inspect.getsource(commuting)).body
    found = {}
    for index, node in enumerate(body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value.func
            if isinstance(call, ast.Name) and call.id == "Row" and isinstance(node.targets[0], ast.Name):
                following = body[index + 1] if index + 1 < len(body) else None
                found[node.targets[0].id] = _docstring(following)
    order = [row.kind for row in commuting.TABLE]
    return dict(sorted(found.items(), key=lambda item: order.index(getattr(commuting, item[0]).kind)))


def reasons_section() -> str:
    """Every reason of `fold/reasons.py` as Markdown lists, one per group of the module
    (its `# ...` comments), with each constant's docstring as its meaning."""
    lines = [
        "## Reasons",
        "",
        "What `--report` prints at a candidate it leaves alone, grouped as in the code",
        "(`python/stablehlo_bnfold/fold/reasons.py`). A line may add a detail in",
        "parentheses, such as the op that blocks a fold. Reasons of the group marked",
        f"*{_DEBUG_ONLY}* say an op is no candidate at all: the report does not print them,",
        "`--debug` logs them.",
    ]
    for group, entries in _reason_groups():
        lines += ["", f"### {group}", ""]
        for name, meaning in entries:
            line = f"- `{getattr(reasons, name)}` (`{name}`)"
            lines.append(f"{line}: {meaning}" if meaning else line)
    return "\n".join(lines) + "\n"


def _reason_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """(group title, [(constant name, meaning)]) in the order of the module's source."""
    source = inspect.getsource(reasons)
    comments = _group_comments(source)
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    body = ast.parse(source).body
    for index, node in enumerate(body):
        name = _reason_name(node)
        if name is None:
            continue
        title = max((line, text) for line, text in comments if line < node.lineno)[1]
        if not groups or groups[-1][0] != title:
            groups.append((title, []))
        following = body[index + 1] if index + 1 < len(body) else None
        groups[-1][1].append((name, _docstring(following)))
    return groups


def _group_comments(source: str) -> list[tuple[int, str]]:
    """(line, title) of each comment block at the top level of `source`, joined into one
    title without its closing full stop."""
    found: list[tuple[int, str]] = [(0, "Reasons")]
    previous = -1
    for number, line in enumerate(source.splitlines(), start=1):
        if line.startswith("# "):
            if previous == number - 1:
                found[-1] = (number, f"{found[-1][1]} {line[2:].strip()}")
            else:
                found.append((number, line[2:].strip()))
            previous = number
    return [(line, title.rstrip(".")) for line, title in found]


def _reason_name(node: ast.stmt) -> str | None:
    """The constant a `NAME = Reason(...)` statement defines, else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0], node.value
    is_reason = (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                 and value.func.id == "Reason")
    return target.id if is_reason and isinstance(target, ast.Name) else None


def _docstring(node: ast.stmt | None) -> str:
    """The string literal statement `node` is (a constant's docstring), on one line."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        if isinstance(node.value.value, str):
            return " ".join(node.value.value.split())
    return ""


if __name__ == "__main__":
    print(reference(), end="")
