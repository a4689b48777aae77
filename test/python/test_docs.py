"""docs/passes.md is generated from the patterns' docstrings and must not go stale."""

import pathlib

from stablehlo_bnfold.passes import documentation
from stablehlo_bnfold.patterns import PATTERNS

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "passes.md"


def test_docs_passes_md_matches_the_pattern_docstrings():
    assert DOC.read_text() == documentation(), (
        "docs/passes.md is stale: run `python3 -m stablehlo_bnfold.docs > docs/passes.md`"
    )


def test_every_pattern_states_its_identity_and_conditions():
    for pattern in PATTERNS:
        doc = pattern.apply.__doc__ or ""
        assert "=" in doc.strip().splitlines()[0], pattern.name
        assert "Holds when" in doc, pattern.name
