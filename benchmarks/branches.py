#!/usr/bin/env python3
"""Parallel branches merged: XLA CPU time of a re-parameterizable stage, merged vs not.

A stage of `--blocks` RepVGG blocks (3x3 + 1x1 + identity batch norm, relu; Flax, NHWC,
stride one, `--channels` features on a `--size` x `--size` image) or MobileOne blocks,
exported with its weights as constants, three ways:

- original: the export as it is;
- folded: `fold_batch_norm(exported, options="merge-parallel-branches=false")`, every
  branch's batch norm folded into its convolution, the branches kept (the identity's
  norm stays);
- merged: `fold_batch_norm(exported)`, one convolution and bias add per block.

One process times each through XLA on this machine's first device, as medians of
interleaved rounds (original, folded, merged, original, ...), wall time beside the
process's CPU time, and prints the ratios and each module's convolution count.

    python3 benchmarks/branches.py --block repvgg --blocks 4 --channels 64 --size 56
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python"))


def _stage(block: str, blocks: int, channels: int):
    import flax.linen as nn
    from networks import MobileOneBlock, RepVGGBlock

    class Stage(nn.Module):
        @nn.compact
        def __call__(self, x):
            for _ in range(blocks):
                x = RepVGGBlock(channels)(x) if block == "repvgg" else MobileOneBlock(channels)(x)
            return x

    return Stage()


def _timed(call, x, inner: int) -> tuple[float, float]:
    import jax

    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(inner):
        out = call(x)
    jax.block_until_ready(out)
    return (time.perf_counter() - wall) / inner, (time.process_time() - cpu) / inner


def measure(block: str, blocks: int, channels: int, size: int, rounds: int, inner: int) -> dict:
    import jax
    from jax import export
    from networks import _flax_variables

    import stablehlo_bnfold

    stage = _stage(block, blocks, channels)
    spec = jax.ShapeDtypeStruct((1, size, size, channels), np.float32)
    variables = _flax_variables(jax.eval_shape(stage.init, jax.random.PRNGKey(0), spec), seed=0)
    exported = export.export(jax.jit(lambda x: stage.apply(variables, x)))(spec)
    modules = {
        "original": exported,
        "folded": stablehlo_bnfold.fold_batch_norm(exported, options="merge-parallel-branches=false"),
        "merged": stablehlo_bnfold.fold_batch_norm(exported),
    }
    x = np.random.default_rng(1).standard_normal(spec.shape).astype(np.float32)
    calls = {name: jax.jit(module.call) for name, module in modules.items()}
    outputs = {name: np.asarray(call(x)) for name, call in calls.items()}  # compiled once
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            times[name].append(_timed(call, x, inner))
    scale = float(np.abs(outputs["original"]).max())
    row = {"block": block, "blocks": blocks, "channels": channels, "size": size}
    for name in calls:
        row[f"{name}_ms"] = 1e3 * statistics.median(t[0] for t in times[name])
        row[f"{name}_cpu_ms"] = 1e3 * statistics.median(t[1] for t in times[name])
        row[f"{name}_convolutions"] = modules[name].mlir_module().count("stablehlo.convolution(")
    for name in ("folded", "merged"):
        row[f"{name}_vs_original"] = row[f"{name}_ms"] / row["original_ms"]
        row[f"{name}_max_rel_difference"] = float(np.abs(outputs[name] - outputs["original"]).max()) / scale
    row["merged_vs_folded"] = row["merged_ms"] / row["folded_ms"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--block", choices=("repvgg", "mobileone"), default="repvgg")
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--size", type=int, default=56)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inner", type=int, default=5)
    args = parser.parse_args()
    print(f"{datetime.date.today()}, {platform.machine()}, {platform.processor() or 'cpu'}")
    row = measure(args.block, args.blocks, args.channels, args.size, args.rounds, args.inner)
    print("| stage | original | folded (branches kept) | merged | merged / folded | merged / original "
          "| convolutions: original, folded, merged | max rel. difference, merged |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    print(
        f"| {row['blocks']} x {row['block']}, {row['channels']} ch, {row['size']}x{row['size']} "
        f"| {row['original_ms']:.2f} ms | {row['folded_ms']:.2f} ms | {row['merged_ms']:.2f} ms "
        f"| {row['merged_vs_folded']:.2f}x | {row['merged_vs_original']:.2f}x "
        f"| {row['original_convolutions']}, {row['folded_convolutions']}, {row['merged_convolutions']} "
        f"| {row['merged_max_rel_difference']:.1e} |"
    )
    print(f"(CPU time: original {row['original_cpu_ms']:.2f} ms, folded {row['folded_cpu_ms']:.2f} ms, "
          f"merged {row['merged_cpu_ms']:.2f} ms)")


if __name__ == "__main__":
    main()
