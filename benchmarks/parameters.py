#!/usr/bin/env python3
"""Weights as arguments: the original, the fold in the graph, and `fold_parameters`.

For each network and form, exported with its weights as arguments (`main(image,
*weights)`) at each batch size, one process times through XLA on this machine's first
device, as medians of interleaved rounds (original, in-graph, parameters, original, ...):

- original: the export as it is;
- in graph: `fold_batch_norm(exported)` with the default options (the cost rule on): the
  folded weights are computed on every call;
- parameters: `fold_parameters(exported)`'s folded module, called with the weights
  prepare computed once (prepare's own time is reported apart: it runs when the weights
  change, not per call).

It prints each one's median, the ratios to the original, the StableHLO ops each module
holds and the outputs' largest difference relative to the largest output.

    python3 benchmarks/parameters.py --models resnet18,mobilenet_v2 --forms jax,keras --batches 1,32
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
sys.path.insert(0, str(HERE))

import models  # noqa: E402


def _ops(exported) -> int:
    """Every op of the module (in every function and region; the module itself aside)."""
    from jaxlib.mlir import ir

    from stablehlo_bnfold.io import load, make_context

    count = 0

    def visit(op):
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    with make_context() as context:
        load(exported.mlir_module_serialized, context).module.operation.walk(visit)
    return count - 1


def _timed(call, args, inner: int) -> float:
    import jax

    start = time.perf_counter()
    for _ in range(inner):
        out = call(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / inner


def measure(name: str, form: str, batch: int, rounds: int, inner: int) -> dict:
    import jax

    import stablehlo_bnfold

    spec = models.NETWORKS[name]
    weights = models.make_weights(spec, seed=0)
    exported = models.export_stablehlo(spec, weights, weights_as="arguments", batch=batch, form=form)
    names = sorted(weights)
    values = [np.asarray(models.jax_params(weights)[n]) for n in names]
    image = np.random.default_rng(1).standard_normal((batch, spec.image, spec.image, 3)).astype(np.float32)
    in_graph = stablehlo_bnfold.fold_batch_norm(exported)
    positions = tuple(range(1, len(values) + 1))
    prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=positions)
    start = time.perf_counter()
    new_params = jax.block_until_ready(prepare.call(*values))
    prepare_s = time.perf_counter() - start
    runs = {
        "original": (jax.jit(exported.call), (image, *values)),
        "in graph": (jax.jit(in_graph.call), (image, *values)),
        "parameters": (jax.jit(folded.call), (image, new_params)),
    }
    outputs = {k: np.asarray(f(*a)) for k, (f, a) in runs.items()}  # compile, warm up
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for key, (call, args) in runs.items():
            times[key].append(_timed(call, args, inner))
    medians = {k: statistics.median(v) for k, v in times.items()}
    scale = np.max(np.abs(outputs["original"]))
    return {
        "network": spec.title, "form": form, "batch": batch, "medians": medians,
        "ops": {"original": _ops(exported), "in graph": _ops(in_graph), "parameters": _ops(folded)},
        "error": max(float(np.max(np.abs(outputs[k] - outputs["original"])) / scale) for k in runs),
        "prepare_s": prepare_s,
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| network | form | batch | original | in graph | parameters | in graph / original | "
        "parameters / original | ops: original, in graph, parameters | max rel. difference |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in rows:
        m, o = r["medians"], r["ops"]
        lines.append(
            f"| {r['network']} | `{r['form']}` | {r['batch']} | {m['original'] * 1e3:.1f} ms | "
            f"{m['in graph'] * 1e3:.1f} ms | {m['parameters'] * 1e3:.1f} ms | "
            f"{m['in graph'] / m['original']:.2f}x | {m['parameters'] / m['original']:.2f}x | "
            f"{o['original']}, {o['in graph']}, {o['parameters']} | {r['error']:.1e} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet18,mobilenet_v2", help="comma-separated (models.NETWORKS)")
    parser.add_argument("--forms", default="jax,keras", help="comma-separated batch-norm forms (models.FORMS)")
    parser.add_argument("--batches", default="1,32", help="comma-separated batch sizes")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds; medians reported")
    parser.add_argument("--inner", type=int, default=3, help="calls per sample")
    args = parser.parse_args()
    import jax

    rows = []
    for name in args.models.split(","):
        for form in args.forms.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                rows.append(measure(name, form, batch, args.rounds, args.inner))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"{datetime.date.today()}, {platform.processor() or platform.machine()}, "
          f"{jax.devices()[0].device_kind}, jax {jax.__version__}; "
          f"`python3 benchmarks/parameters.py {' '.join(sys.argv[1:])}`\n")
    print(table(rows))


if __name__ == "__main__":
    main()
