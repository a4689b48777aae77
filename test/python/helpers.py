"""Shared test helpers: run a StableHLO module through XLA on the CPU, and fold-and-compare.

`fold_and_compare` is the one check every numerical test makes: fold with the public API,
run the original and the folded module on the same seeded inputs, and compare the outputs
with the element type's tolerance, the batch norms left, and the report.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir

import stablehlo_bnfold
from stablehlo_bnfold.verification import TOLERANCE, run_on_cpu

TESTDATA = pathlib.Path(__file__).resolve().parents[1] / "testdata"

# Tolerance per output element type: the one the package's `verify` uses (its module
# docstring gives the reasoning), except float64, which the numerical tests hold to
# TOLERANCE_F64: `verify` lets a float64 model share float32's 1e-6, which would pass a fold
# that computed a step in float32 (about 3e-8 off).

TOLERANCE_F64 = 1e-12

DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}


def read_testdata(name: str) -> str:
    """The text of `test/testdata/<name>`."""
    return (TESTDATA / name).read_text()


def count_batch_norms(module: str | ir.Module) -> int:
    """How many batch_norm_inference ops a module (text or ir.Module) holds; comments and
    names that merely mention one do not count."""
    if not isinstance(module, ir.Module):
        with make_ir_context():
            return count_batch_norms(ir.Module.parse(module))
    count = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count
        count += op.name == "stablehlo.batch_norm_inference"
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


def main_input_types(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    """(shape, dtype) of each argument of `@main` in the module `text`."""
    with make_ir_context():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations if op.sym_name.value == "main")
        types = [ir.RankedTensorType(t) for t in main.type.inputs]
        return [(tuple(t.shape), DTYPES[str(t.element_type)]) for t in types]


def random_inputs(text: str, seed: int) -> list[np.ndarray]:
    """Standard-normal arguments for `@main`, from a fresh generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape, dtype in main_input_types(text)]


def relative_error(expected: np.ndarray, actual: np.ndarray) -> float:
    """max|actual - expected| / max|expected|, computed in float64."""
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    scale = np.max(np.abs(expected))
    assert scale > 0, "the reference output is all zeros: the comparison would check nothing"
    return float(np.max(np.abs(actual - expected)) / scale)


def assert_close(expected: np.ndarray, actual: np.ndarray, what: str = "output") -> float:
    """`actual` matches `expected` within the tolerance of `expected`'s element type;
    returns the relative error."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    tolerance = TOLERANCE[np.dtype(expected.dtype)]
    if expected.dtype == np.float64:
        tolerance = TOLERANCE_F64
    error = relative_error(expected, actual)
    assert error <= tolerance, f"{what}: relative error {error:.3g} > {tolerance:.3g}"
    return error


@dataclass(frozen=True)
class Compared:
    """What `fold_and_compare` saw: the folded text, its report, each output's error."""

    folded: str
    report: stablehlo_bnfold.FoldReport
    errors: tuple[float, ...]


def fold_and_compare(text: str, *, seed: int, batch_norms_left: int) -> Compared:
    """Fold `text` with the API, run both modules on the same seeded inputs, and check:
    every output within tolerance; `batch_norms_left` batch norms remain; the report
    counts one fold per batch norm removed; and a module with nothing to fold comes back
    unchanged (as MLIR prints it)."""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True)
    assert isinstance(folded, str)
    before, after = count_batch_norms(text), count_batch_norms(folded)
    assert after == batch_norms_left, f"{after} batch norms left, expected {batch_norms_left}"
    assert report.folded == before - after, f"report: {report.folded} folds, IR: {before - after}"
    if report.folded == 0:
        with make_ir_context():
            assert folded == str(ir.Module.parse(text))

    inputs = random_inputs(text, seed)
    expected, actual = run_on_cpu(text, inputs), run_on_cpu(folded, inputs)
    assert len(actual) == len(expected)
    errors = tuple(
        assert_close(e, a, what=f"output {i}") for i, (e, a) in enumerate(zip(expected, actual))
    )
    return Compared(folded, report, errors)
