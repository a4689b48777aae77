"""Every module in test/testdata, folded and run through XLA on the CPU against the original.

The expectations live in each file's header (see test/testdata/generate.py):
`// EXPECT-BATCH-NORMS-LEFT: n`, one `// EXPECT-SKIP: reason` per batch norm left alone, and
for decomposed batch norms `// EXPECT-FOLDS: n`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zlib

import pytest
from helpers import TESTDATA, fold_and_compare

MODULES = sorted(TESTDATA.glob("*.mlir"))


def _header(text: str, key: str) -> list[str]:
    return re.findall(rf"^// {key}: (.*)$", text, flags=re.MULTILINE)


def test_testdata_has_the_modules_the_generator_writes():
    result = subprocess.run(
        [sys.executable, str(TESTDATA / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_folded_module_computes_what_the_original_computes(path):
    text = path.read_text()
    (left,) = _header(text, "EXPECT-BATCH-NORMS-LEFT")
    # A fixed seed per file: the same inputs on every run, different inputs per module.
    seed = zlib.crc32(path.name.encode())
    folds = [int(n) for n in _header(text, "EXPECT-FOLDS")]
    compared = fold_and_compare(
        text, seed=seed, batch_norms_left=int(left), folds=folds[0] if folds else None
    )
    assert sorted(s.reason for s in compared.report.skips) == sorted(_header(text, "EXPECT-SKIP"))
