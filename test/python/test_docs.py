"""docs/passes.md is generated from the code (the pass's options, the patterns' docstrings,
the reasons of fold/reasons.py) and must not go stale."""

import pathlib
import re

from stablehlo_bnfold.docs import reference
from stablehlo_bnfold.fold import reasons
from stablehlo_bnfold.patterns import PATTERNS

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "passes.md"


def test_docs_passes_md_matches_the_pattern_docstrings():
    assert DOC.read_text() == reference(), (
        "docs/passes.md is stale: run `python3 -m stablehlo_bnfold.docs > docs/passes.md`"
    )


def test_every_pattern_states_its_identity_and_conditions():
    for pattern in PATTERNS:
        doc = pattern.apply.__doc__ or ""
        assert "=" in doc.strip().splitlines()[0], pattern.name
        assert "Holds when" in doc, pattern.name


def test_the_reference_lists_every_reason_with_its_constant_once():
    text = DOC.read_text()
    names = [name for name in reasons.__all__ if isinstance(getattr(reasons, name), reasons.Reason)]
    assert len(names) > 50
    for name in names:
        assert text.count(f"- `{getattr(reasons, name)}` (`{name}`)") == 1, name


USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""What users read; docs/dev/ holds the team's notes (dated logs, design history)."""


def test_the_readme_is_a_front_page_of_at_most_150_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_user_docs_cite_no_issue_numbers_or_commit_hashes():
    for path in USER_DOCS:
        text = path.read_text()
        assert not re.search(r"\bissues? \d+", text, re.I), path.name
        assert not re.search(r"`[0-9a-f]{7,40}`|\bcommit [0-9a-f]{7,40}\b", text), path.name


def test_the_reference_says_what_a_scale_passes_from_the_commuting_table():
    from stablehlo_bnfold.analysis import commuting

    identities = commuting.__doc__.split("\n\n")[2].strip()
    assert identities.startswith("relu(v * s)") and identities in DOC.read_text()
    lines = [line for line in DOC.read_text().splitlines() if line.startswith("| ")]
    for row in commuting.TABLE:
        found = [line for line in lines if line.startswith(f"| {row.kind} | ")]
        assert len(found) == 1 and f"`{row.identity}`" in found[0], row.kind


def test_the_readme_quotes_reasons_the_code_gives():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## What it leaves", 1)[1].split("\n## ", 1)[0]
    quoted = re.findall(r"^\| [^|]+ \| `([^`]+)` \|$", table, re.M)
    texts = [str(getattr(reasons, name)) for name in reasons.__all__
             if isinstance(getattr(reasons, name), reasons.Reason)]
    assert len(quoted) >= 5
    for quote in quoted:
        stem = quote.split(" (")[0].removesuffix(" ...").removesuffix(": ...")
        assert any(text.startswith(stem) for text in texts), quote
