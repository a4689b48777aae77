"""Every example in examples/ runs: each module folds, verifies and reports through the CLI,
as the README shows (`--stablehlo-fold-batch-norm --report --verify`), and each script
exits 0 having printed its report and its check of the folded model against the original."""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples").glob("*.mlir"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_each_example_folds_every_batch_norm_and_passes_verification(path):
    result = subprocess.run(
        ["stablehlo-bnfold-opt", str(path), "--stablehlo-fold-batch-norm", "--report", "--verify"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"{path.name}: verification passed" in result.stderr
    assert "not folded" not in result.stderr
    folded = [line for line in result.stderr.splitlines() if ": folded " in line]
    norms = f"{len(folded)} norm{'s' if len(folded) != 1 else ''}: {len(folded)} folded whole, 0 folded partly, 0 left"
    assert folded and result.stderr.rstrip().splitlines()[-1].startswith(norms)
    assert "batch_norm_inference" not in result.stdout


def test_examples_cover_both_sides_of_a_linear_op():
    assert {p.name for p in EXAMPLES} >= {"conv_bn.mlir", "bn_head.mlir"}


# The example scripts: each runs as a user would run it (`python3 examples/NAME.py`, the
# package importable), exits 0 and prints these lines among its output.
SCRIPTS = {
    "flax_resnet.py": [
        "4 norms: 4 folded whole, 0 folded partly, 0 left (10 ops folded); 6 activation-sized ops removed",
        "weights as constants: the folded model matches the original",
        "4 norms: 3 folded whole, 0 folded partly, 1 left (9 ops folded); 6 activation-sized ops removed",
        "weights as arguments: the folded model matches the original",
    ],
    "keras_jax.py": [
        "3 norms: 3 folded whole, 0 folded partly, 0 left (5 ops folded); 4 activation-sized ops removed",
        "weights as constants: the folded model matches Keras",
        "3 norms: 2 folded whole, 0 folded partly, 1 left (4 ops folded); 4 activation-sized ops removed",
        "weights as arguments: the folded model matches Keras",
    ],
    "exported_file.py": [
        "$ stablehlo-bnfold-opt model.jax --stablehlo-fold-batch-norm --report -o folded.jax",
        "1 norm: 1 folded whole, 0 folded partly, 0 left (3 ops folded); 2 activation-sized ops removed",
        "folded.jax loads, and matches model.jax",
    ],
    "pytorch_export.py": [],  # its lines depend on what is installed: see _optional_lines
    "tensorflow_keras.py": [],
}
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _optional_lines(name: str) -> list[str]:
    """What an example of an optional producer prints: that it skipped, and why, or that
    its fold verified."""
    if name == "tensorflow_keras.py":
        if importlib.util.find_spec("tensorflow") is None:
            return ["skipped: tensorflow is not installed (pip install tensorflow)"]
        return ["verification passed"]
    if importlib.util.find_spec("torch") is None:
        return ["skipped: torch is not installed (pip install torch torch-mlir, or torch torch_xla)"]
    if not any(importlib.util.find_spec(name) for name in ("torch_mlir", "torch_xla")):
        return ["skipped: neither torch-mlir nor torch_xla is installed"]
    return ["verification passed"]


def test_every_example_script_is_run_by_this_file():
    assert {p.name for p in (ROOT / "examples").glob("*.py")} == set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_no_example_script_is_named_as_a_module_it_imports(name):
    # Run as `python3 examples/NAME.py`, the script's folder comes first on the path: an
    # example named torch_mlir.py imported itself for `from torch_mlir import fx`.
    tree = ast.parse((ROOT / "examples" / name).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    assert pathlib.Path(name).stem not in imported


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_each_example_script_runs_and_prints_its_report_and_check(name):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p))
    environment.pop("KERAS_BACKEND", None)  # keras_jax.py must set it itself
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, env=environment,
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    printed = run.stdout.splitlines()
    for line in SCRIPTS[name] or _optional_lines(name):
        assert any(p.startswith(line) for p in printed), f"{name} did not print {line!r}:\n{run.stdout}"
