"""Writes docs/passes.md: `python3 -m stablehlo_bnfold.docs > docs/passes.md`.

The reference is generated from the code so that it cannot drift from it: the pass, its
options and each pattern's identity and conditions (`passes.documentation`), the ops a
per-channel scale and shift pass (`analysis/passage.py`'s identities), then every reason a
candidate is left with, in the groups of `fold/reasons.py`, with its meaning where the
constant has a docstring.
"""

from __future__ import annotations

import ast
import inspect

from .analysis import passage
from .fold import reasons
from .passes import documentation

__all__ = ["passage_section", "reasons_section", "reference"]

_DEBUG_ONLY = "debug log only"
"""The group whose reasons say an op is no candidate: the report never prints them."""


def reference() -> str:
    """docs/passes.md: the pass's documentation, what passes what, the reasons."""
    return "\n".join([documentation(), passage_section(), reasons_section()])


def passage_section() -> str:
    """The identities by which a per-channel map passes the ops between a norm and a
    linear op: `analysis/passage.py`'s module docstring, without its list of functions."""
    doc = inspect.getdoc(passage) or ""
    identities = doc.split("\n- `", 1)[0].strip()
    return "\n".join([
        "## What a per-channel scale and shift pass",
        "",
        "Between a norm and its linear op (`fold_scale_through_relu` on the output side, the",
        "input-side patterns forward), generated from `python/stablehlo_bnfold/analysis/passage.py`.",
        "",
        identities,
        "",
    ])


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
