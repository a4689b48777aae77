"""Shared test helpers: run a StableHLO module through XLA on the CPU, and fold-and-compare.

`fold_and_compare` is the one check every numerical test makes: fold with the public API,
run the original and the folded module on the same seeded inputs, and compare the outputs
with the element type's tolerance, the batch norms left, and the report.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir, passmanager

import stablehlo_bnfold
from stablehlo_bnfold.io import make_context
from stablehlo_bnfold.report import describe_location
from stablehlo_bnfold.verification import TOLERANCE, run_on_cpu

LARGER = "fold-larger-weight-arguments=true"
"""The pass option that folds weights passed as arguments even where they have more
elements than the activation: the toy modules of the tests that check how such folds are
built (not whether they pay) need it, their weights being larger than their activations."""

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


def data_ops(text: str) -> tuple[list[str], int]:
    """Each op of `text` that reads a value computed from a function or region argument,
    as its printed form without SSA names and locations, in order; and how many ops the
    module has in all. Ops computed from constants alone are left out of the list."""
    with make_ir_context():
        module = ir.Module.parse(text)
        on_data: set = set()
        found: list[str] = []
        total = 0

        def reads_data(value: ir.Value) -> bool:
            return isinstance(value.owner, ir.Block) or value.owner.operation in on_data

        def visit(op: ir.Operation) -> ir.WalkResult:
            nonlocal total
            total += 1
            if any(reads_data(v) for v in op.operands):
                on_data.add(op)
                found.append(_without_names(op))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return found, total


def _without_names(op: ir.Operation) -> str:
    """`op` printed without its SSA names (they are renumbered when ops go); an op with
    regions as its name and types (the ops in its regions are listed on their own)."""
    if op.regions:
        return f"{op.name} : {[str(r.type) for r in op.results]}"
    return re.sub(r"%[\w#]+", "%", op.get_asm(print_generic_op_form=True))


def with_static_batch(text: str, size: int = 2) -> str:
    """`text` with every dynamic leading dimension (a symbolic batch, `tensor<?x...>`) set
    to `size`, and the shape computations that become constant folded away (canonicalize,
    stablehlo-canonicalize-dynamism): XLA on the CPU runs static shapes only, and cannot
    read `shape` dialect shapes. The module is unchanged when it has no such dimension."""
    if "tensor<?x" not in text:
        return text
    with make_context():  # StableHLO's passes registered
        module = ir.Module.parse(text.replace("tensor<?x", f"tensor<{size}x"))
        pipeline = "builtin.module(canonicalize,func.func(stablehlo-canonicalize-dynamism),canonicalize)"
        passmanager.PassManager.parse(pipeline).run(module.operation)
        return str(module)


def fold_and_compare(
    text: str, *, seed: int, batch_norms_left: int, folds: int | None = None, options: str = ""
) -> Compared:
    """Fold `text` with the API, run both modules on the same seeded inputs, and check:
    every output within tolerance; `batch_norms_left` batch norms remain; the report
    counts `folds` folds (by default one per batch norm removed; `options` are the pass's); and a module with
    nothing to fold comes back with the same ops on the data (`data_ops`) and no more ops:
    only arithmetic on constants, a linear op's weights or bias, may have become one
    constant (fold/literals.py). A symbolic batch is set to 2 for the run
    (`with_static_batch`), after folding."""
    folded, report = stablehlo_bnfold.fold_batch_norm(text, with_report=True, options=options)
    assert isinstance(folded, str)
    before, after = count_batch_norms(text), count_batch_norms(folded)
    assert after == batch_norms_left, f"{after} batch norms left, expected {batch_norms_left}"
    expected_folds = before - after if folds is None else folds
    assert report.folded == expected_folds, f"report: {report.folded} folds, expected {expected_folds}"
    if report.folded == 0:
        (kept, ops), (original_kept, original_ops) = data_ops(folded), data_ops(text)
        assert kept == original_kept and ops <= original_ops, "changed without a fold in the report"

    original, folded_static = with_static_batch(text), with_static_batch(folded)
    inputs = random_inputs(original, seed)
    expected, actual = run_on_cpu(original, inputs), run_on_cpu(folded_static, inputs)
    assert len(actual) == len(expected)
    errors = tuple(
        assert_close(e, a, what=f"output {i}") for i, (e, a) in enumerate(zip(expected, actual))
    )
    return Compared(folded, report, errors)


BN_OPS = {"stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide", "stablehlo.batch_norm_inference"}


def activation_sized_bn_ops(exported) -> list[str]:
    """Subtract/multiply/divide/batch_norm_inference ops whose result has the type of a
    linear op's result: batch-norm work left on the activation."""
    with make_ir_context():
        module = ir.Module.parse(exported.mlir_module())
        linear_types, candidates = set(), []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in LINEAR_OPS:
                linear_types.add(str(op.results[0].type))
            elif op.name in BN_OPS:
                candidates.append((op.name, str(op.results[0].type)))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return [name for name, type_ in candidates if type_ in linear_types]


AFFINE_OPS = ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide")
LINEAR_OPS = ("stablehlo.convolution", "stablehlo.dot_general")
_SEE_THROUGH = (
    "stablehlo.broadcast_in_dim",
    "stablehlo.dynamic_broadcast_in_dim",
    "stablehlo.reshape",
    "stablehlo.convert",
)


@dataclass(frozen=True)
class AffineBeforeLinear:
    """A per-feature multiply / add / subtract / divide on an activation whose result
    reaches a linear op through ops that keep it affine: `op` and `linear` are the ops'
    names, `path` the locations (as the report writes them) of the affine ops from `op`
    up to the linear op."""

    op: str
    linear: str
    path: tuple[str, ...]


def affine_ops_before_linear(
    module: str, activations: tuple[int, ...] = (-1,)
) -> list[AffineBeforeLinear]:
    """Every per-feature affine op left in front of a linear op in `@main` of `module`.

    An op is *per-feature* when one operand is broadcast (through broadcast_in_dim,
    reshape, convert) from a vector with exactly one non-unit dimension (a norm's scale
    or offset, a bias; scalars do not count), and its other operand depends on `@main`'s
    arguments `activations` (by default the last: `model.apply(variables, x)` puts x
    last), so weights scaled in the graph do not count. From there the value is followed
    through users that are add / subtract / multiply / divide whose other operand does not
    depend on it (the result stays affine in the vector: `(x - m) * (r * s) + t` from `s`,
    but not through GELU's `x * cdf(x)`); a linear op reached that way (as any operand)
    makes it a leftover. Checked independently of the package's own analysis.

    >>> affine_ops_before_linear(exported.mlir_module())   # doctest: +SKIP
    [AffineBeforeLinear(op='stablehlo.multiply', linear='stablehlo.dot_general', path=(...))]
    """
    with make_ir_context():
        parsed = ir.Module.parse(module)
        main = next(op for op in parsed.body.operations if op.sym_name.value == "main")
        block = main.regions[0].blocks[0]
        arguments = [block.arguments[i] for i in activations]
        on_activation = _dependents(block, arguments)
        found = []
        for op in block.operations:
            op = op.operation
            if op.name not in AFFINE_OPS or len(op.operands) != 2:
                continue
            narrow = [_is_vector(v) for v in op.operands]
            if sum(narrow) != 1:
                continue
            other = op.operands[narrow.index(False)]
            if not _depends(other, on_activation, arguments):
                continue
            hit = _reaches_linear(block, op)
            if hit is not None:
                found.append(hit)
        return found


def _depends(value: ir.Value, ops: set, arguments: list) -> bool:
    if isinstance(value.owner, ir.Block):
        return any(value == a for a in arguments)
    return value.owner.operation in ops


def _dependents(block: ir.Block, arguments: list, start: ir.Operation | None = None) -> set:
    """The ops of `block` that depend on `arguments` (or, with `start`, on its result)."""
    dependent: set = set() if start is None else {start}
    started = start is None
    for op in block.operations:
        op = op.operation
        if not started:
            started = op == start
            continue
        if any(_depends(v, dependent, [] if start else arguments) for v in op.operands):
            dependent.add(op)
    return dependent


def _is_vector(value: ir.Value) -> bool:
    """Whether `value` is broadcast from a tensor with exactly one non-unit dimension."""
    result_size = np.prod(ir.ShapedType(value.type).shape)
    while isinstance(value.owner, ir.OpView) and value.owner.operation.name in _SEE_THROUGH:
        value = value.owner.operation.operands[0]
    shape = ir.ShapedType(value.type).shape
    return sum(n != 1 for n in shape) == 1 and np.prod(shape) < result_size


def _reaches_linear(block: ir.Block, start: ir.Operation) -> AffineBeforeLinear | None:
    downstream = _dependents(block, [], start)
    frontier = [(start, (describe_location(start.location),))]
    seen = set()
    while frontier:
        op, path = frontier.pop()
        for use in op.results[0].uses:
            user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
            if user.name in LINEAR_OPS:
                return AffineBeforeLinear(start.name, user.name, path)
            if user.name not in AFFINE_OPS or user in seen:
                continue
            others = [v for i, v in enumerate(user.operands) if i != use.operand_number]
            if any(_depends(v, downstream, []) for v in others):
                continue
            seen.add(user)
            frontier.append((user, path + (describe_location(user.location),)))
    return None


def op_count(text: str) -> int:
    """Every op of the module in `text` (the module itself included), at every depth."""
    with make_ir_context():
        module = ir.Module.parse(text)
        count = 0

        def visit(op: ir.Operation) -> ir.WalkResult:
            nonlocal count
            count += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return count
