"""Runs the lit + FileCheck suite in test/transforms as part of pytest."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_lit_suite_passes():
    lit = [sys.executable, "-c", "from lit.main import main; main()", "-v", "--order=lexical", str(ROOT / "transforms")]
    result = subprocess.run(lit, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"lit failed:\n{result.stdout[-20000:]}\n{result.stderr[-5000:]}")
    assert "Passed" in result.stdout


def test_every_pattern_module_has_a_lit_file_that_names_its_patterns():
    from stablehlo_bnfold.patterns import PATTERNS

    missing = []
    for pattern in PATTERNS:
        module = pattern.apply.__module__.rsplit(".", 1)[-1]
        lit_file = ROOT / "transforms" / f"{module}.mlir"
        if not lit_file.exists() or f"[{pattern.name}]" not in lit_file.read_text():
            missing.append(f"{pattern.name} in transforms/{module}.mlir")
    assert not missing, missing
