"""`--verify-diagnostics`: the command's errors and its report, checked against the
`expected-*` comments of the input, as mlir-opt checks its diagnostics.

Every fold and every skip of the report is a remark at the op's location (the text after
the location in `--report`'s line: `folded stablehlo.batch_norm_inference into
stablehlo.convolution [fold_bn_into_linear]`), and every located error an error. A comment

    // expected-remark@+1 {{folded stablehlo.batch_norm_inference into}}

expects a remark on the next line that contains the text between the braces (`@-N`,
`@above`, `@below` and no suffix, the same line, as in MLIR; `expected-error` for
errors). The check passes when every diagnostic is expected and every expectation met.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .report import one_line

__all__ = ["Diagnostic", "check"]

_EXPECTED = re.compile(
    r"expected-(?P<kind>error|warning|remark|note)"
    r"(?:@(?P<where>[+-]\d+|above|below))?\s*\{\{(?P<text>.*?)\}\}"
)
_LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)$")


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic the command produced: `kind` (error, remark) at `location` (as the
    report and errors give it, `file:line:col` when located)."""

    kind: str
    location: str
    message: str


def check(text: str, source: str, produced: list[Diagnostic]) -> list[str]:
    """The problems, one line each (empty when the diagnostics are what `text`, the
    input read from `source`, expects)."""
    expected = _expectations(text)
    problems = []
    for diagnostic in produced:
        match = _LOCATED.match(diagnostic.location)
        line = int(match.group("line")) if match else None
        hit = next(
            (
                e
                for e in expected
                if not e.met
                and e.kind == diagnostic.kind
                and e.line == line
                and e.text in diagnostic.message
            ),
            None,
        )
        if hit is None:
            problems.append(
                f"{diagnostic.location}: error: unexpected {diagnostic.kind}: {diagnostic.message}"
            )
        else:
            hit.met = True
    for e in expected:
        if not e.met:
            problems.append(
                f"{source}:{e.written}: error: expected {e.kind} \"{e.text}\" was not produced"
            )
    return [one_line(problem) for problem in problems]


@dataclass
class _Expected:
    kind: str
    line: int
    text: str
    written: int
    met: bool = False


def _expectations(text: str) -> list[_Expected]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "expected-" not in line:
            continue
        for match in _EXPECTED.finditer(line):
            where = match.group("where")
            if where is None:
                target = number
            elif where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            else:
                target = number + int(where)
            found.append(_Expected(match.group("kind"), target, match.group("text"), number))
    return found
