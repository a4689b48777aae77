"""Proof on the user's own model: run the original and the folded module through XLA on
the CPU on the same seeded random inputs and compare every output.

Tolerance, per output element type, on max|folded - original| / max|original|:

- f32, f64: 1e-6. Folding changes each output by a few roundings of the element type
  (f32's unit roundoff is 6e-8).
- f16, bf16: 4 units in the last place of 1.0 (4 * 2**-10, 4 * 2**-7). The original rounds
  after the linear op, the bias add and each step of the batch norm; the folded module
  rounds the scaled weights, the linear op and one add: about 8 roundings of half an ulp.

A module XLA cannot run here (dynamic shapes in a bare module, an entry point other than
`main`, ops the CPU lacks) is "not verified" with the reason, never "passed".
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import BinaryIO, Callable

import jax
import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from . import exported as _exported
from . import io as _io
from . import isolation as _isolation
from .constants import float_dtype
from .report import FoldError

__all__ = ["TOLERANCE", "OutputCheck", "Verification", "run_on_cpu", "verify"]

TOLERANCE: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-6,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float16): 4 * 2.0**-10,
    np.dtype(ml_dtypes.bfloat16): 4 * 2.0**-7,
}
"""Relative tolerance per output element type (see the module docstring)."""

_DYNAMIC_SIZE = 2


@dataclass(frozen=True)
class OutputCheck:
    """One output compared over every trial."""

    index: int
    dtype: str
    max_relative_error: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.max_relative_error <= self.tolerance

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        return (
            f"output {self.index} ({self.dtype}): max relative error "
            f"{self.max_relative_error:.3g} (tolerance {self.tolerance:.3g}): {verdict}"
        )


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: `ok` only when every output was compared and within
    tolerance; `reason` says why a module was not verified."""

    outputs: tuple[OutputCheck, ...]
    trials: int
    reason: str | None = None

    @property
    def verified(self) -> bool:
        return self.reason is None

    @property
    def ok(self) -> bool:
        return self.verified and all(o.ok for o in self.outputs)

    def __str__(self) -> str:
        if not self.verified:
            return f"not verified: {self.reason}"
        verdict = "passed" if self.ok else "FAILED"
        return f"verification {verdict} ({len(self.outputs)} outputs, {self.trials} trials)"

    def lines(self) -> list[str]:
        """One line per output, then the verdict."""
        return [str(o) for o in self.outputs] + [str(self)]


def verify(
    original, folded, *, trials: int = 3, seed: int = 0, rtol: float | None = None
) -> Verification:
    """Compare `original` and `folded` (Exported, ir.Module, text or bytes) through XLA on
    the CPU on `trials` seeded random inputs.

    Float inputs are standard normal, 1-D float inputs (per-channel parameters passed as
    arguments) uniform in [0.5, 1.5); integer and boolean inputs are zero (in range for an
    index or a platform selector); dynamic dimensions get size 2 (through `Exported.call`,
    which refines shapes). NaN and infinities must match exactly. `rtol` overrides the
    per-dtype tolerance.

    >>> verify(exported, fold_batch_norm(exported)).ok   # doctest: +SKIP
    True
    """
    try:
        run_original, specs = _runner(original)
        run_folded, _ = _runner(folded)
    except _NotRunnable as reason:
        return Verification((), trials, str(reason))
    rng = np.random.default_rng(seed)
    worst: dict[int, float] = {}
    dtypes: dict[int, np.dtype] = {}
    for _ in range(trials):
        inputs = [_random(shape, dtype, rng) for shape, dtype in specs]
        try:
            expected, actual = run_original(inputs), run_folded(inputs)
        except Exception as error:  # XLA could not compile or run it
            return Verification((), trials, f"XLA on the CPU failed: {_first_line(error)}")
        if len(expected) != len(actual):
            return Verification((), trials, "the modules have different numbers of outputs")
        for i, (e, a) in enumerate(zip(expected, actual)):
            dtypes[i] = np.asarray(e).dtype
            worst[i] = max(worst.get(i, 0.0), _relative_error(e, a))
    outputs = tuple(
        OutputCheck(i, str(dtypes[i]), worst[i], rtol if rtol is not None else _tolerance(dtypes[i]))
        for i in sorted(worst)
    )
    return Verification(outputs, trials)


class _NotRunnable(Exception):
    pass


def _tolerance(dtype: np.dtype) -> float:
    return TOLERANCE.get(np.dtype(dtype), 0.0)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _relative_error(expected, actual) -> float:
    """max|actual - expected| / max|expected| over finite elements; a NaN or infinity in
    one output where the other has a different value counts as infinitely wrong."""
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    if expected.shape != actual.shape:
        return float("inf")
    same_special = (np.isnan(expected) & np.isnan(actual)) | (
        np.isinf(expected) & (expected == actual)
    )
    finite = np.isfinite(expected) & np.isfinite(actual)
    if not np.all(same_special | finite):
        return float("inf")
    expected, actual = expected[finite], actual[finite]
    scale = np.max(np.abs(expected), initial=0.0)
    difference = np.max(np.abs(actual - expected), initial=0.0)
    if scale == 0:
        return 0.0 if difference == 0 else float("inf")
    return float(difference / scale)


def _random(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Standard normal for float tensors; uniform in [0.5, 1.5) for 1-D float arguments,
    which are per-channel parameters (a variance must stay positive); zeros otherwise."""
    if np.issubdtype(dtype, np.floating) or dtype == np.dtype(ml_dtypes.bfloat16):
        if len(shape) == 1:
            return rng.uniform(0.5, 1.5, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    return np.zeros(shape, dtype=dtype)


def _runner(module):
    """(run(inputs) -> outputs, [(shape, dtype)]) for any accepted input kind."""
    if _exported.is_exported(module):
        specs = [
            (tuple(d if isinstance(d, int) else _DYNAMIC_SIZE for d in aval.shape), np.dtype(aval.dtype))
            for aval in module.in_avals
        ]
        treedef = module.in_tree

        def run_exported(inputs):
            args, kwargs = jax.tree.unflatten(treedef, inputs)
            with jax.enable_x64(True):
                return [np.asarray(o) for o in jax.tree.leaves(module.call(*args, **kwargs))]

        return run_exported, specs
    text = _text(module)
    return (lambda inputs: run_on_cpu(text, inputs)), _main_inputs(text)


def _text(module) -> str:
    if isinstance(module, ir.Module):
        return str(module)
    if isinstance(module, bytes) and module.startswith(_io.BYTECODE_MAGIC):
        # jaxlib's bytecode readers crash or loop on some corrupted bytes: read them in a
        # child process (stablehlo_bnfold.isolation), as fold_batch_norm does.
        try:
            _, text = _isolation.run(
                functools.partial(_print_text, module), source="<input>", size=len(module)
            )
        except FoldError as error:
            raise _NotRunnable(str(error)) from None
        return text.decode()
    context = _io.make_context()
    try:
        loaded = _io.load(module, context)
    except FoldError as error:
        raise _NotRunnable(str(error)) from None
    with context:
        return str(loaded.module)


def _print_text(
    data: bytes, output: BinaryIO, reading: Callable[[], AbstractContextManager]
) -> None:
    """Write the module `data` (bytecode or a portable artifact) to `output` as text."""
    context = _io.make_context()
    with reading():
        loaded = _io.load(data, context)
    _io.write(loaded, output, _io.Format.TEXT)


def _main_inputs(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    with _io.make_context():
        module = ir.Module.parse(text)
        mains = [op for op in module.body.operations if _symbol(op) == "main"]
        if not mains:
            raise _NotRunnable("no function named main")
        specs = []
        for t in mains[0].type.inputs:
            tensor = ir.RankedTensorType(t)
            if not tensor.has_static_shape:
                raise _NotRunnable("main has arguments of dynamic shape")
            dtype = float_dtype(tensor.element_type) or _integer_dtype(tensor.element_type)
            if dtype is None:
                raise _NotRunnable(f"argument element type {tensor.element_type} is not supported")
            specs.append((tuple(tensor.shape), dtype))
        return specs


def _symbol(op: ir.OpView) -> str | None:
    name = op.operation.attributes["sym_name"] if "sym_name" in op.operation.attributes else None
    return ir.StringAttr(name).value if name is not None else None


def _integer_dtype(element_type: ir.Type) -> np.dtype | None:
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        if width == 1:
            return np.dtype(np.bool_)
        kind = "u" if element_type.is_unsigned else "i"
        return np.dtype(f"{kind}{max(width, 8) // 8}")
    return None


def run_on_cpu(module: str | bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Compile `module` (entry `@main`) with XLA for the CPU and run it on `inputs`."""
    from jax._src import xla_bridge
    from jaxlib import _jax as xc

    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    executable = backend.compile_and_load(module, xc.DeviceList((device,)), xc.CompileOptions())
    with jax.enable_x64(True):  # otherwise device_put turns f64 arguments into f32
        arguments = [jax.device_put(x, device) for x in inputs]
    outputs = executable.execute_sharded(arguments).disassemble_into_single_device_arrays()
    return [np.asarray(out[0]) for out in outputs]
