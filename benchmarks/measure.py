"""Measuring: medians of interleaved timings, peak resident memory, op counts, XLA latency.

Timings are medians of wall-clock time (`time.perf_counter`) and, beside it, of the
calling thread's CPU time (`time.thread_time`): on a shared machine wall time moves with the
other tenants' load (1.5x to 6x on the 2-core machine of docs/dev/benchmarks.md), the thread's CPU
time much less. The pass and the writers run on the calling thread. The cases of one measurement run in
turn (a, b, c, a, b, c, ...), so that drift of the machine (page-cache state, allocator
growth, another process) falls on all of them alike and their ratios stay meaningful.

Peak memory is read from the kernel, not from tracemalloc (which sees Python's allocations
only, not MLIR's): `VmHWM` in /proc/self/status, reset by writing 5 to
/proc/self/clear_refs, so one fresh process measures one phase.
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Case",
    "OpCounts",
    "count_ops",
    "driver_options",
    "fit",
    "fold_cases",
    "hlo_activation_ops",
    "interleaved_medians",
    "interleaved_samples",
    "peak_rss",
    "reset_peak_rss",
    "rss",
    "run_workers",
    "write_results",
    "xla_compile",
    "xla_latency",
]


@dataclass(frozen=True)
class Case:
    """One timed thing: `run(setup())`, where only `run` is timed."""

    run: Callable
    setup: Callable | None = None


def interleaved_samples(cases: dict[str, Case], repeats: int, warmup: int = 1
                        ) -> dict[str, list[tuple[float, float]]]:
    """(wall, thread CPU) seconds of each case in each of `repeats` rounds, after `warmup`
    untimed rounds."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for round_ in range(warmup + repeats):
        for name, case in cases.items():
            arg = case.setup() if case.setup else None
            gc.collect()
            start, start_cpu = time.perf_counter(), time.thread_time()
            result = case.run(arg)
            elapsed, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
            del arg, result
            if round_ >= warmup:
                times[name].append((elapsed, cpu))
    return times


def interleaved_medians(cases: dict[str, Case], repeats: int, warmup: int = 1,
                        cpu: bool = False) -> dict[str, float]:
    """Median seconds of each case over `repeats` rounds, after `warmup` untimed rounds:
    wall time, or with `cpu` the calling thread's CPU time."""
    samples = interleaved_samples(cases, repeats, warmup)
    return {name: statistics.median(v[int(cpu)] for v in values)
            for name, values in samples.items()}


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def rss() -> int:
    """Resident bytes now."""
    return _status("VmRSS")


def peak_rss() -> int:
    """Peak resident bytes since the process started or since `reset_peak_rss`."""
    return _status("VmHWM")


def reset_peak_rss() -> None:
    """Start a new peak: the kernel sets VmHWM to the current VmRSS."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


# --- op counts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpCounts:
    """What a StableHLO module holds, for the before/after columns."""

    batch_norms: int
    pairs: int
    """Batch norms whose operand is a convolution or dot_general (maybe plus a bias add)."""
    activation_ops: int
    """Ops (constants excluded) whose result has an activation shape."""
    activation_shapes: frozenset
    """The shapes of every convolution result: what a feature map looks like here."""


_LINEAR = ("stablehlo.convolution", "stablehlo.dot_general")
_NOT_COUNTED = ("stablehlo.constant", "func.func", "builtin.module", "func.return")


def count_ops(module, activation_shapes: frozenset | None = None) -> OpCounts:
    """Count batch norms, conv+BN pairs and activation-sized ops of a StableHLO module.

    An op is activation-sized when its result has the shape of a convolution result (of
    this module, unless `activation_shapes` is given): it reads or writes a whole feature
    map. Ops on weights (a kernel scaled in the graph) are not counted.
    """
    from jaxlib.mlir import ir

    ops: list = []

    def visit(op):
        ops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    bns = [op for op in ops if op.name == "stablehlo.batch_norm_inference"]
    if activation_shapes is None:
        activation_shapes = frozenset(
            _shape(op.results[0].type) for op in ops if op.name == "stablehlo.convolution")
    pairs = sum(1 for op in bns if _is_linear_pair(op.operands[0]))
    activation = sum(
        1 for op in ops
        if op.name not in _NOT_COUNTED
        and any(_shape(r.type) in activation_shapes for r in op.results)
    )
    return OpCounts(len(bns), pairs, activation, activation_shapes)


def _shape(type_) -> tuple[int, ...] | None:
    from jaxlib.mlir import ir

    if not isinstance(type_, ir.RankedTensorType):
        return None
    return tuple(type_.shape)


def _is_linear_pair(value) -> bool:
    from jaxlib.mlir import ir

    if isinstance(value, ir.BlockArgument):
        return False
    owner = value.owner
    if owner.name in _LINEAR:
        return True
    return owner.name == "stablehlo.add" and any(
        not isinstance(o, ir.BlockArgument) and o.owner.name in _LINEAR for o in owner.operands
    )


_HLO_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%\S+ = \w+\[([\d,]*)\]\S* (\S+?)\(")
_NOT_WORK = {"parameter", "constant", "bitcast", "tuple", "get-tuple-element"}


def hlo_activation_ops(hlo_text: str, activation_shapes: frozenset) -> tuple[int, int]:
    """(kernels, ops) of XLA's optimized HLO: activation-sized instructions in the entry
    computation (each one pass over a feature map), and activation-sized instructions in
    all computations, fused bodies included (the arithmetic done per element)."""
    kernels = ops = 0
    in_entry = False
    for line in hlo_text.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
        elif line.startswith("}"):
            in_entry = False
        match = _HLO_INSTRUCTION.match(line)
        if not match or match.group(2) in _NOT_WORK:
            continue
        dims = tuple(int(d) for d in match.group(1).split(",") if d)
        if dims in activation_shapes:
            ops += 1
            kernels += in_entry
    return kernels, ops


# --- XLA on the CPU -----------------------------------------------------------------------


def xla_compile(module):
    """Compile a StableHLO `ir.Module` for one CPU device (through its bytecode)."""
    from jax._src import xla_bridge
    from jaxlib import _jax as xc

    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    backend = xla_bridge.get_backend("cpu")
    devices = xc.DeviceList(tuple(backend.local_devices()[:1]))
    return backend.compile_and_load(buffer.getvalue(), devices, xc.CompileOptions())


def _run(executable, inputs):
    results = executable.execute_sharded(inputs).disassemble_into_single_device_arrays()
    for result in results:
        result[0].block_until_ready()
    return results


def xla_latency(executables: dict[str, object], image: np.ndarray, *, runs: int,
                budget_s: float, warmup: int = 2) -> tuple[dict[str, float], dict, int]:
    """Median seconds per inference of each executable on `image`, interleaved.

    At least 5 and at most `runs` rounds, fewer than `runs` when `budget_s` would be
    exceeded. Returns (medians, outputs as numpy, rounds run).
    """
    import jax
    from jax._src import xla_bridge

    device = xla_bridge.get_backend("cpu").local_devices()[0]
    inputs = [jax.device_put(image, device)]
    outputs = {}
    for name, executable in executables.items():
        for _ in range(warmup):
            results = _run(executable, inputs)
        outputs[name] = np.asarray(results[0][0])
    times: dict[str, list[float]] = {name: [] for name in executables}
    start = time.perf_counter()
    rounds = 0
    while rounds < runs and (rounds < 5 or time.perf_counter() - start < budget_s):
        for name, executable in executables.items():
            t0 = time.perf_counter()
            _run(executable, inputs)
            times[name].append(time.perf_counter() - t0)
        rounds += 1
    return {name: statistics.median(v) for name, v in times.items()}, outputs, rounds


def driver_options(argv: list[str], own: tuple[str, ...], flags: tuple[str, ...] = ()) -> list[str]:
    """The options a worker needs: `argv` less the driver's own options `own` (each with
    its value, as `--x v` or `--x=v`) and flags `flags`."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in own:
            skip = True
        elif arg not in flags and not arg.startswith(tuple(o + "=" for o in own)):
            out.append(arg)
    return out


def run_workers(script: str, names, options: list[str], run: dict) -> None:
    """Measure each network in a fresh process, `script --worker NAME --output FILE
    OPTIONS`, and append its JSON result to `run["results"]`; a worker that fails is
    recorded as `{"network": NAME, "error": ...}` and the rest go on."""
    for name in names:
        print(f"[{time.strftime('%H:%M:%S')}] {name} ...", file=sys.stderr, flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        try:
            done = subprocess.run(
                [sys.executable, script, "--worker", name, "--output", path, *options], check=False
            )
            if done.returncode != 0:
                run["results"].append({"network": name, "error": f"worker exit {done.returncode}"})
                continue
            with open(path) as f:
                run["results"].append(json.load(f))
        finally:
            os.remove(path)
    run["load_average"] = [round(x, 2) for x in os.getloadavg()]


def write_results(text: str, run: dict, json_path: str | None, markdown_path: str | None) -> None:
    """Print the rendered `text`; save `run` as JSON and `text` as Markdown where asked."""
    print(text)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(run, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w") as f:
            f.write(text + "\n")


def fold_cases(data, e2e: Callable, floor: Callable | None = None) -> dict[str, Case]:
    """The timed cases of our fold of the module `data` (a portable artifact or text):
    `floor`, by default reading and writing it back the way `fold_batch_norm` does; `pass`,
    the pass alone on a module loaded untimed; and `e2e`."""
    from stablehlo_bnfold import io as sio
    from stablehlo_bnfold import session

    def read_and_write(_):
        context = sio.make_context()
        loaded = sio.load(data, context)
        with context:
            return sio.dump(loaded, consume=True)

    def loaded_module():
        context = sio.make_context()
        return context, sio.load(data, context)

    def fold_pass(arg):
        _, loaded = arg
        session.run(loaded.module)

    return {
        "floor": Case(floor or read_and_write),
        "pass": Case(fold_pass, setup=loaded_module),
        "e2e": Case(e2e),
    }


def fit(rows: list[tuple[int, float, float]]) -> tuple[float, float] | None:
    """Least-squares (seconds per fold, seconds per GB) of `rows` of (folds, GB, seconds):
    the pass's cost as a fixed cost per fold plus a cost per byte of input; None when the
    rows cannot tell them apart."""
    import numpy as np

    a = np.array([[folds, gb] for folds, gb, _ in rows], dtype=np.float64)
    if len(rows) < 2 or np.linalg.matrix_rank(a) < 2:
        return None
    solution = np.linalg.lstsq(a, np.array([s for _, _, s in rows]), rcond=None)[0]
    return float(solution[0]), float(solution[1])
