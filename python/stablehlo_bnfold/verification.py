"""Proof on the user's own model: run the original and the folded module through XLA on
the CPU on the same seeded random inputs and compare every output, against the original's
own rounding.

The criterion, per output, over every trial:

    err(folded, original) <= max(NOISE_FACTOR * noise, floor)

with err(a, b) = max|a - b| / max|b|, `noise` = err(original at inputs moved by one unit
in the last place, original), and `floor` = TOLERANCE of the element type (f32, f64:
1e-6; f16, bf16: 4 units in the last place of 1.0). Folding rounds each folded weight
once (half an ulp) and changes the order of a few roundings: a perturbation of the size
of moving every argument by an ulp, so a correct fold stays within a small multiple of
the original's own response to that (`noise`), however deep or ill-conditioned the
network; a wrong fold (a weight or a channel off) is off by far more. Where `noise`
exceeds NOISE_LIMIT, random inputs cannot tell a correct fold from a wrong one and the
module cannot be verified here, as when an output of the original is NaN or infinite.

Inputs are drawn at the scale of a trained network: kernels and dense weights that are
arguments (the weights operand of a convolution or dot_general, seen through convert,
reshape and transpose) N(0, 2 / fan_in) (He), so that a deep network neither overflows
nor vanishes; 1-D float arguments (scale, offset, mean, variance) uniform in [0.5, 1.5),
so a variance is positive; other float arguments standard normal; integer and boolean
arguments zero (a platform index selects the first platform). A symbolic dimension
takes the sizes BATCH_SIZES, one per trial.

An `Exported` (or the bytes of an `Exported.serialize()`) runs through `Exported.call`:
JAX refines its symbolic shapes and picks its CPU lowering. A sharded one runs on as many
CPU devices as it was exported for, in a child Python process started with
`XLA_FLAGS=--xla_force_host_platform_device_count=N` when this process has fewer. A bare
module runs as `@main`, its dynamic dimensions refined by StableHLO's
`stablehlo-refine-arguments` and `stablehlo-refine-shapes`. What cannot run here is "cannot
verify here: <reason>", never "passed", and never "FAILED" (that is a fold that differs).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from typing import Callable

import jax
import ml_dtypes
import numpy as np
from jax import export as jax_export
from jax._src.interpreters import mlir as jax_mlir
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from . import exported as _exported
from . import io as _io
from . import sandbox as _sandbox
from . import session as _session
from .constants import float_dtype
from .report import FoldError

__all__ = [
    "BATCH_SIZES",
    "NOISE_FACTOR",
    "NOISE_LIMIT",
    "TOLERANCE",
    "OutputCheck",
    "Verification",
    "run_on_cpu",
    "verify",
]

TOLERANCE: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-6,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float16): 4 * 2.0**-10,
    np.dtype(ml_dtypes.bfloat16): 4 * 2.0**-7,
}
"""The floor of the relative tolerance per output element type (see the module docstring)."""

NOISE_FACTOR = 8.0
"""How many times the original's own response to a one-ulp move of its inputs the fold may
differ by."""

NOISE_LIMIT = 1e-2
"""Beyond this one-ulp response (1%), the original's outputs are rounding noise on random
inputs: "cannot verify here"."""

BATCH_SIZES = (2, 1, 3)
"""The sizes a symbolic (dynamic) dimension takes, one per trial, in turn."""

@dataclass(frozen=True)
class OutputCheck:
    """One output compared over every trial: its largest relative error, the original's
    largest response to a one-ulp move of the inputs (`noise`), and the tolerance
    max(NOISE_FACTOR * noise, floor of the type)."""

    index: int
    dtype: str
    max_relative_error: float
    tolerance: float
    noise: float = 0.0

    @property
    def ok(self) -> bool:
        return self.max_relative_error <= self.tolerance

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        return (
            f"output {self.index} ({self.dtype}): max relative error "
            f"{self.max_relative_error:.3g} (tolerance {self.tolerance:.3g}; one-ulp noise "
            f"{self.noise:.3g}): {verdict}"
        )


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: `ok` only when every output was compared and within
    tolerance; `reason` says why a module could not be verified here."""

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
            return f"cannot verify here: {self.reason}"
        verdict = "passed" if self.ok else "FAILED"
        return f"verification {verdict} ({len(self.outputs)} outputs, {self.trials} trials)"

    def lines(self) -> list[str]:
        """One line per output, then the verdict."""
        return [str(o) for o in self.outputs] + [str(self)]

    def to_dict(self) -> dict:
        """For a JSON report: `ok`, `verdict` (the line `str` gives), `reason` (why it
        could not be verified here, else null), `trials`, and `outputs`, each with `index`,
        `dtype`, `max_relative_error`, `tolerance`, `noise` and `ok`."""
        return {
            "ok": self.ok,
            "verdict": str(self),
            "reason": self.reason,
            "trials": self.trials,
            "outputs": [asdict(o) | {"ok": o.ok} for o in self.outputs],
        }

    def message(self) -> str:
        """One line for a failed or impossible verification: the verdict and the first
        output that failed."""
        failed = [str(o) for o in self.outputs if not o.ok]
        return f"{self}: {failed[0]}" if failed else str(self)


def verify(
    original, folded, *, trials: int = 3, seed: int = 0, rtol: float | None = None
) -> Verification:
    """Compare `original` and `folded` (Exported, ir.Module, text or bytes, the bytes of an
    `Exported.serialize()` too) through XLA on the CPU on `trials` seeded random inputs,
    against the original's own rounding (the module docstring). `rtol` replaces the
    criterion by a fixed relative tolerance.

    >>> verify(exported, fold_batch_norm(exported)).ok   # doctest: +SKIP
    True
    """
    try:
        first, second = _program(original), _program(folded)
        like = next((p for p in (first, second) if _exported.is_exported(p)), None)
        if like is not None:  # folding keeps the calling convention: both run as Exported
            first, second = (
                p if _exported.is_exported(p) else _as_exported(p, like=like) for p in (first, second)
            )
            if first.nr_devices > len(jax.devices("cpu")):
                return _in_child(first, second, trials=trials, seed=seed, rtol=rtol)
            runners = _exported_runner(first), _exported_runner(second)
            arguments = _exported_arguments(first)
        else:
            first, second = _module_of(first), _module_of(second)
            runners = _module_runner(first), _module_runner(second)
            arguments = _module_arguments(first)
        # (Inside the try: a runner refines shapes when it first runs.)
        return _compare(*runners, arguments, trials=trials, seed=seed, rtol=rtol)
    except _NotRunnable as reason:
        return Verification((), trials, str(reason))


def _compare(run_original, run_folded, arguments, *, trials, seed, rtol) -> Verification:
    rng = np.random.default_rng(seed)
    worst: dict[int, float] = {}
    noise: dict[int, float] = {}
    dtypes: dict[int, np.dtype] = {}
    for trial in range(trials):
        size = BATCH_SIZES[trial % len(BATCH_SIZES)]
        inputs = [argument.draw(size, rng) for argument in arguments]
        moved = [_one_ulp(x, rng) for x in inputs]
        try:
            expected, actual = run_original(inputs), run_folded(inputs)
            nearby = run_original(moved)
        except _NotRunnable:
            raise
        except Exception as error:  # XLA could not compile or run it
            return Verification((), trials, f"XLA on the CPU failed: {_first_line(error)}")
        if len(expected) != len(actual):
            return Verification((), trials, "the modules have different numbers of outputs")
        for i, (e, a, n) in enumerate(zip(expected, actual, nearby)):
            e = np.asarray(e)
            if _is_float(e.dtype) and not np.all(np.isfinite(e.astype(np.float64))):
                return Verification(
                    (), trials, f"output {i} of the original is not finite on random inputs"
                )
            dtypes[i] = e.dtype
            worst[i] = max(worst.get(i, 0.0), _relative_error(e, a))
            noise[i] = max(noise.get(i, 0.0), _relative_error(e, n))
    for i in sorted(noise):
        if noise[i] > NOISE_LIMIT and rtol is None:
            return Verification(
                (),
                trials,
                f"output {i} of the original moves by {noise[i]:.3g} when its inputs move by "
                "one ulp: random inputs cannot tell a correct fold from a wrong one",
            )
    outputs = tuple(
        OutputCheck(
            i,
            str(dtypes[i]),
            worst[i],
            rtol if rtol is not None else max(NOISE_FACTOR * noise[i], _tolerance(dtypes[i])),
            noise[i],
        )
        for i in sorted(worst)
    )
    return Verification(outputs, trials)


class _NotRunnable(Exception):
    pass


def _tolerance(dtype: np.dtype) -> float:
    return TOLERANCE.get(np.dtype(dtype), 0.0)


def _is_float(dtype: np.dtype) -> bool:
    return np.issubdtype(dtype, np.floating) or dtype == np.dtype(ml_dtypes.bfloat16)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _relative_error(expected, actual) -> float:
    """max|actual - expected| / max|expected| over finite elements; a NaN or infinity in
    one output where the other has a different value, or another shape or element type,
    counts as infinitely wrong."""
    if np.asarray(expected).dtype != np.asarray(actual).dtype:
        return float("inf")
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


def _one_ulp(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Float `x` with each element moved to a neighbouring value of its type, up or down
    at random; other types unchanged."""
    if not _is_float(x.dtype):
        return x
    direction = np.where(rng.random(x.shape) < 0.5, -np.inf, np.inf).astype(x.dtype)
    return np.nextafter(x, direction)


@dataclass(frozen=True)
class _Argument:
    """An argument of main: its shape (None where a dimension is symbolic: `dims(size)`
    gives it), element type and, for weights, their fan-in."""

    shape: Callable[[int], tuple[int, ...]]
    dtype: np.dtype
    fan_in: int | None = None

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        shape = self.shape(size)
        if not _is_float(self.dtype):
            return np.zeros(shape, dtype=self.dtype)
        if self.fan_in:
            return (rng.standard_normal(shape) * math.sqrt(2.0 / self.fan_in)).astype(self.dtype)
        if len(shape) == 1:
            return rng.uniform(0.5, 1.5, shape).astype(self.dtype)
        return rng.standard_normal(shape).astype(self.dtype)


def _program(value):
    """An `Exported` for an Exported or the bytes of its serialization; else the value."""
    if isinstance(value, (bytes, bytearray)) and _io.sniff(bytes(value))[0] is _io.Format.EXPORTED:
        try:
            return jax_export.deserialize(bytearray(value))
        except Exception as error:
            raise _NotRunnable(f"invalid {_io.Format.EXPORTED.value}: {_first_line(error)}") from None
    return value


def _as_exported(module, *, like):
    """The module `module` (text, bytes, ir.Module) with the calling convention of the
    Exported `like`: what the command's text output of a folded Exported stands for."""
    text = _module_of(module)
    with _io.make_context():
        parsed = ir.Module.parse(text)
        artifact = stablehlo.serialize_portable_artifact(
            parsed, str(stablehlo.get_current_version()), True
        )
    return _exported.replace_module(like, artifact)


def _module_of(value) -> str:
    """The module text of anything `verify` takes."""
    if _exported.is_exported(value):
        value = value.mlir_module_serialized
    return _text(value)


def _exported_runner(exported):
    """run(inputs) -> outputs through `Exported.call`, on a mesh of its devices."""
    treedef = exported.in_tree
    placed = _placement(exported)

    def run(inputs):
        with jax.enable_x64(True):
            args, kwargs = jax.tree.unflatten(treedef, placed(inputs))
            return [np.asarray(o) for o in jax.tree.leaves(exported.call(*args, **kwargs))]

    return run


def _placement(exported) -> Callable[[list], list]:
    """How inputs reach a sharded export: put on a mesh of its devices with its input
    shardings (unsharded ones replicated)."""
    if exported.nr_devices == 1:
        return lambda inputs: inputs
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    named = [s for s in getattr(exported, "_in_named_shardings", ()) if s is not None]
    devices = np.array(jax.devices("cpu")[: exported.nr_devices])
    if named:
        abstract = named[0].mesh
        mesh = Mesh(devices.reshape(abstract.axis_sizes), abstract.axis_names)
    else:
        mesh = Mesh(devices, ("devices",))
    shardings = [s or NamedSharding(mesh, PartitionSpec()) for s in exported.in_shardings_jax(mesh)]
    return lambda inputs: [jax.device_put(x, s) for x, s in zip(inputs, shardings)]


def _exported_arguments(exported) -> list[_Argument]:
    """The Exported's inputs, with the fan-in of those that are weights in its module."""
    fan_ins = _fan_ins(_module_of(exported))
    kept = list(exported.module_kept_var_idx)
    offset = len(fan_ins) - len(kept)  # a platform index and tokens come first
    by_input = {index: fan_ins[offset + n] for n, index in enumerate(kept) if offset + n < len(fan_ins)}
    arguments = []
    for index, aval in enumerate(exported.in_avals):
        dims = tuple(aval.shape)

        def shape(size: int, dims=dims) -> tuple[int, ...]:
            return tuple(
                d if isinstance(d, int) else int(d._evaluate({v: size for v in d._get_vars()}))
                for d in dims
            )

        arguments.append(_Argument(shape, np.dtype(aval.dtype), by_input.get(index)))
    return arguments


def _in_child(first, second, *, trials, seed, rtol) -> Verification:
    """`verify` of two sharded Exporteds in a Python process with their number of CPU
    devices (fixed when jax starts, by XLA_FLAGS)."""
    devices = first.nr_devices
    with tempfile.TemporaryDirectory(prefix="bnfold-verify-") as directory:
        paths = [pathlib.Path(directory, name) for name in ("original.jax", "folded.jax")]
        for path, exported in zip(paths, (first, second)):
            path.write_bytes(exported.serialize())
        flags = os.environ.get("XLA_FLAGS", "")
        environment = dict(
            os.environ,
            XLA_FLAGS=f"{flags} --xla_force_host_platform_device_count={devices}".strip(),
            JAX_PLATFORMS="cpu",
        )
        request = json.dumps({"trials": trials, "seed": seed, "rtol": rtol})
        child = subprocess.run(
            [sys.executable, "-m", __name__, *map(str, paths), request],
            env=environment,
            capture_output=True,
            text=True,
        )
    if child.returncode != 0:
        said = [line for line in child.stderr.splitlines() if line.strip()]
        reason = said[-1] if said else f"exit {child.returncode}"
        return Verification(
            (), trials, f"cannot run it on {devices} CPU devices here: {reason}"
        )
    found = json.loads(child.stdout.strip().splitlines()[-1])
    outputs = tuple(OutputCheck(**o) for o in found["outputs"])
    return Verification(outputs, found["trials"], found["reason"])


def _main() -> None:
    """The child of `_in_child`: verify two serialized Exporteds, print the result as JSON."""
    original, folded, request = sys.argv[1:4]
    options = json.loads(request)
    result = verify(
        pathlib.Path(original).read_bytes(), pathlib.Path(folded).read_bytes(), **options
    )
    print(json.dumps({"outputs": [asdict(o) for o in result.outputs], "trials": result.trials,
                      "reason": result.reason}))


def _module_runner(text: str):
    """run(inputs) -> outputs of the module's @main, refined to the inputs' shapes when
    it has dynamic ones."""
    dynamic = any(-1 in shape for shape, _ in _main_types(text))
    compiled: dict[tuple, Callable] = {}

    def run(inputs):
        key = tuple(x.shape for x in inputs)
        if key not in compiled:
            module = _refined(text, inputs) if dynamic else text
            compiled[key] = functools.partial(run_on_cpu, module)
        return compiled[key](inputs)

    return run


def _refined(text: str, inputs: list[np.ndarray]) -> str:
    """`text` with main's arguments given the inputs' shapes, and every shape refined."""
    with _io.make_context() as context, ir.Location.unknown():
        module = ir.Module.parse(text)
        main = _main_of(module)
        types = []
        for value, x in zip(main.type.inputs, inputs):
            tensor = ir.RankedTensorType(value)
            types.append(str(ir.RankedTensorType.get(list(x.shape), tensor.element_type)))
        pipeline = "builtin.module(stablehlo-refine-arguments{types='" + ",".join(types) + "'})"
        try:
            passmanager.PassManager.parse(pipeline, context=context).run(module.operation)
            # What Exported.call does next: refine every shape, check and drop jax's
            # shape assertions (custom calls XLA's CPU backend does not have).
            return _refined_by_jax(module)
        except Exception as error:
            cause = error.__cause__ or error
            raise _NotRunnable(f"its dynamic shapes cannot be refined: {_first_line(cause)}") from None


def _refined_by_jax(module: ir.Module) -> str:
    """jax's `refine_polymorphic_shapes` of `module`, as text. It reads the module in a
    context of its own, whose diagnostics C++ prints on stderr (a dialect it does not
    load, `shape` or `tensor`: "dialect 'shape' is unknown"); they are kept, and make the
    error's message where it fails, printed as usual where it does not."""
    with tempfile.TemporaryFile() as printed:
        with _sandbox.stderr_to(printed):
            try:
                refined, failure = str(jax_mlir.refine_polymorphic_shapes(module)), None
            except Exception as error:
                refined, failure = None, error
        printed.seek(0)
        text = printed.read().decode("utf-8", errors="replace")
    if failure is None:
        if text and sys.stderr is not None:  # (None: the process started without one)
            with contextlib.suppress(OSError):  # no stderr to print on (closed): not a failure
                sys.stderr.write(text)
                sys.stderr.flush()
        return refined
    said = [line.split(": error: ", 1)[1] for line in text.splitlines() if ": error: " in line]
    if said:
        raise RuntimeError(said[0].split(". ", 1)[0]) from None
    raise failure


def _module_arguments(text: str) -> list[_Argument]:
    arguments = []
    for (shape, dtype), fan_in in zip(_main_types(text), _fan_ins(text)):
        def concrete(size: int, shape=shape) -> tuple[int, ...]:
            return tuple(size if d < 0 else d for d in shape)

        arguments.append(_Argument(concrete, dtype, fan_in))
    return arguments


_TRANSPARENT = ("stablehlo.convert", "stablehlo.reshape", "stablehlo.transpose")
"""Ops through which an argument still is the weights it becomes."""


def _fan_ins(text: str) -> list[int | None]:
    """For each argument of main: the fan-in of the weights it is (the weights operand of
    a convolution, or the second operand of a dot_general, through convert, reshape and
    transpose), else None."""
    with _io.make_context():
        module = ir.Module.parse(text)  # kept: main's body lives as long as it does
        return [_fan_in(argument) for argument in _main_of(module).arguments]


def _fan_in(value: ir.Value, depth: int = 0) -> int | None:
    for use in value.uses:
        op = use.owner
        name = op.operation.name if hasattr(op, "operation") else op.name
        if name == "stablehlo.convolution" and use.operand_number == 1:
            shape = ir.RankedTensorType(value.type).shape
            dims = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
            outputs = shape[dims.kernel_output_feature_dimension]
            return max(1, math.prod(shape) // max(1, outputs)) if outputs > 0 else None
        if name == "stablehlo.dot_general" and use.operand_number == 1:
            shape = ir.RankedTensorType(value.type).shape
            numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
            return max(1, math.prod(shape[d] for d in numbers.rhs_contracting_dimensions))
        if name in _TRANSPARENT and depth < 4:
            inner = _fan_in(op.results[0], depth + 1)
            if inner is not None:
                return inner
    return None


def _text(module) -> str:
    if isinstance(module, ir.Module):
        return str(module)
    if isinstance(module, (str, bytes)):
        # jaxlib's bytecode readers crash or loop on some corrupted bytes, and MLIR's text
        # parser overflows the stack on deep nesting: read them in a child process
        # (stablehlo_bnfold.sandbox), as fold_batch_norm does.
        try:
            _, text = _sandbox.run(
                functools.partial(_session.fold_into, module, pipeline="", fmt=_io.Format.TEXT),
                source="<input>",
                size=len(module),
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


def _main_of(module: ir.Module):
    mains = [op for op in module.body.operations if _symbol(op) == "main"]
    if not mains:
        raise _NotRunnable("no function named main")
    return mains[0]


def _main_types(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Shape (-1 where dynamic) and element type of each argument of main."""
    with _io.make_context():
        module = ir.Module.parse(text)
        main = _main_of(module)
        specs = []
        for t in main.type.inputs:
            tensor = ir.RankedTensorType(t)
            dtype = float_dtype(tensor.element_type) or _integer_dtype(tensor.element_type)
            if dtype is None:
                raise _NotRunnable(f"argument element type {tensor.element_type} is not supported")
            shape = tuple(-1 if tensor.is_dynamic_dim(i) else d for i, d in enumerate(tensor.shape))
            specs.append((shape, dtype))
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


if __name__ == "__main__":
    _main()
