#!/usr/bin/env python3
"""Benchmark stablehlo-fold-batch-norm against its I/O floor, against peer tools, and by its
effect on XLA CPU latency, on standard conv+BN networks built from a seed.

For each network a fresh worker process builds the weights, exports the network with JAX
(weights as dense constants, and again as arguments of `main`), and measures, as medians of
interleaved repeats in that one process:

  floor   read the portable artifact and write it back, no pass (io.load + io.dump,
          consume=True: the writer fold_batch_norm uses)
  pass    the pass alone on a loaded module, and its report (session.run)
  e2e     fold_batch_norm(Exported) -> Exported
  peers   torch.fx fuse, onnxoptimizer, onnxruntime, onnxscript, TVM (see peers.py)
  latency original vs folded module compiled by XLA for the CPU, batch 1

Peak memory is measured in one more fresh process per phase (floor, pass, e2e), from the
kernel's VmHWM. Results print as a table; --json and --markdown write them to files.

Examples:
  python benchmarks/run.py --quick                 # ResNet-18 only, a few minutes
  python benchmarks/run.py                         # ResNet-18, ResNet-50, MobileNetV2
  python benchmarks/run.py --all --markdown out.md # adds ResNet-152 and ResNet-50 (4x)
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from measure import (  # noqa: E402
    count_ops, driver_options, fold_cases, hlo_activation_ops, interleaved_samples, peak_rss,
    reset_peak_rss, rss, run_workers, write_results, xla_compile, xla_latency,
)

DEFAULT_MODELS = ("resnet18", "resnet50", "mobilenet_v2")
QUICK_MODELS = ("resnet18",)
ALL_MODELS = ("resnet18", "resnet50", "resnet152", "mobilenet_v2", "resnet50x4")


def parse_args(argv=None) -> argparse.Namespace:
    parser = models.argument_parser(__doc__)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="ResNet-18 only")
    which.add_argument("--all", action="store_true", help="every network, the 384 M-parameter "
                       "ResNet-50 (4x) included (about an hour on 2 cores)")
    which.add_argument("--models", help="comma-separated network names")
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed repeats per measurement; the median is reported (default 7)")
    parser.add_argument("--peer-repeats", type=int, default=None,
                        help="repeats for the peers (default: --repeats)")
    parser.add_argument("--peers", default=",".join(_peer_names()),
                        help="comma-separated peers, or 'none' (default: all)")
    parser.add_argument("--latency-runs", type=int, default=30,
                        help="most XLA inference rounds per network (default 30, at least 5)")
    parser.add_argument("--latency-budget", type=float, default=60.0,
                        help="seconds of XLA inference rounds per network before stopping "
                             "early (default 60)")
    parser.add_argument("--no-latency", action="store_true", help="skip the XLA latency part")
    parser.add_argument("--no-memory", action="store_true", help="skip peak-memory processes")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    parser.add_argument("--json", help="write all results to this JSON file")
    parser.add_argument("--markdown", help="write the result tables to this Markdown file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _peer_names() -> list[str]:
    return ["torch.fx", "onnxoptimizer", "onnxruntime", "onnxscript", "tvm"]


# --- the worker: everything about one network, in one process -----------------------------


def _ours(exported, repeats: int) -> dict:
    """Floor, pass and e2e medians for one Exported, and the before/after op counts."""
    import stablehlo_bnfold
    from stablehlo_bnfold import io as sio

    data = exported.mlir_module_serialized
    cases = fold_cases(data, lambda _: stablehlo_bnfold.fold_batch_norm(exported))
    samples = interleaved_samples(cases, repeats)
    times = {name: statistics.median(w for w, _ in v) for name, v in samples.items()}
    times["cpu"] = {name: statistics.median(c for _, c in v) for name, v in samples.items()}

    folded_exported, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    context = sio.make_context()
    before = count_ops(sio.load(data, context).module)
    after = count_ops(sio.load(folded_exported.mlir_module_serialized, context).module,
                      before.activation_shapes)
    skip_reasons = sorted({s.reason for s in report.skips})
    return {
        **times,
        "artifact_bytes": len(data),
        "batch_norms": before.batch_norms,
        "pairs": before.pairs,
        "folded": report.folded,
        "skip_reasons": skip_reasons,
        "act_ops_before": before.activation_ops,
        "act_ops_after": after.activation_ops,
        "folded_exported": folded_exported,
    }


def _memory(exported_path: str, weight_bytes: int) -> dict:
    """Peak extra resident memory of each phase, each in its own fresh process."""
    out = {}
    for phase in ("floor", "pass", "e2e"):
        result = subprocess.run(
            [sys.executable, __file__, "--probe", phase, "--input", exported_path],
            capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            out[phase] = {"error": result.stderr.strip().splitlines()[-1:]}
            continue
        probe = json.loads(result.stdout.strip().splitlines()[-1])
        probe["ratio"] = probe["extra"] / weight_bytes
        out[phase] = probe
    return out


def _probe(phase: str, exported_path: str) -> dict:
    """One phase once, in this fresh process: peak resident bytes above the baseline."""
    import jax
    import stablehlo_bnfold
    from stablehlo_bnfold import io as sio
    from stablehlo_bnfold import session

    def run(exported, timed: bool):
        data = exported.mlir_module_serialized
        if phase == "floor":
            context = sio.make_context()
            loaded = sio.load(data, context)
            with context:
                return sio.dump(loaded, consume=True)
        if phase == "e2e":
            # In this process: folded in the sandbox's forked child, the fold's memory
            # would be the child's, which this process's peak does not see.
            return stablehlo_bnfold.fold_batch_norm(exported, trusted=True)
        context = sio.make_context()
        loaded = sio.load(data, context)
        if timed:  # the pass alone: the loaded module is part of the baseline
            gc.collect()
            baseline[0] = rss()
            reset_peak_rss()
        session.run(loaded.module)
        return loaded

    # Warm up on a tiny network, so one-time initialisation is not counted.
    run(models.tiny_exported(), timed=False)
    with open(exported_path, "rb") as f:
        exported = jax.export.deserialize(bytearray(f.read()))
    gc.collect()
    baseline = [rss()]
    reset_peak_rss()
    result = run(exported, timed=True)
    peak = peak_rss()
    del result
    return {"baseline": baseline[0], "peak": peak, "extra": peak - baseline[0]}


def _latency(exported, folded_exported, spec, args) -> dict:
    """Original vs folded inference latency through XLA on the CPU.

    The modules are compiled one at a time, each from its own context, which is dropped
    before the next compile: XLA needs several copies of the constants while it compiles
    (about 9 GB for the 1.5 GB ResNet-50 (4x)).
    """
    import numpy as np
    from stablehlo_bnfold import io as sio

    executables, shapes = {}, None
    start = time.perf_counter()
    for name, source in (("original", exported), ("folded", folded_exported)):
        context = sio.make_context()
        module = sio.load(source.mlir_module_serialized, context).module
        if shapes is None:
            shapes = count_ops(module).activation_shapes
        executables[name] = xla_compile(module)
        del module, context
        gc.collect()
    compile_s = time.perf_counter() - start
    image = np.random.default_rng(args.seed + 1).standard_normal(
        (1, spec.image, spec.image, 3), dtype=np.float32)
    medians, outputs, rounds = xla_latency(executables, image, runs=args.latency_runs,
                                           budget_s=args.latency_budget)
    hlo = {name: hlo_activation_ops(exe.hlo_modules()[0].to_string(), shapes)
           for name, exe in executables.items()}
    reference = outputs["original"]
    return {
        "original": medians["original"],
        "folded": medians["folded"],
        "ratio": medians["folded"] / medians["original"],
        "rounds": rounds,
        "compile_s": compile_s,
        "max_rel_diff": float(np.abs(outputs["folded"] - reference).max()
                              / np.abs(reference).max()),
        "xla_kernels": [hlo["original"][0], hlo["folded"][0]],
        "xla_act_ops": [hlo["original"][1], hlo["folded"][1]],
        "_reference": reference,
        "_image": image,
    }


def worker(name: str, args: argparse.Namespace) -> dict:
    """Everything about network `name`; runs in its own process."""
    spec = models.NETWORKS[name]
    weights = models.make_weights(spec, args.seed)
    weight_bytes = models.weight_bytes(weights)
    result = {"network": name, "title": spec.title, "weight_bytes": weight_bytes,
              "parameters": int(sum(v.size for k, v in weights.items()
                                    if not k.endswith(("running_mean", "running_var"))))}
    repeats = args.repeats
    exports = {}
    for variant in ("constants", "arguments"):
        start = time.perf_counter()
        exports[variant] = (models.export_stablehlo(spec, weights, weights_as=variant),
                            time.perf_counter() - start)
    del weights  # the peers rebuild them from the seed: the 1.5 GB network needs the room
    gc.collect()
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("constants", "arguments"):
            exported, export_s = exports.pop(variant)
            ours = _ours(exported, repeats)
            folded_exported = ours.pop("folded_exported")
            ours["export_s"] = export_s
            if not args.no_memory:
                path = os.path.join(tmp, f"{variant}.exported")
                with open(path, "wb") as f:
                    f.write(exported.serialize())
                ours["memory"] = _memory(path, weight_bytes)
                os.remove(path)
            if variant == "constants" and not args.no_latency:
                ours["latency"] = _latency(exported, folded_exported, spec, args)
            result[variant] = ours
            del exported, folded_exported
            gc.collect()

    peers = [p for p in args.peers.split(",") if p and p != "none"]
    if peers:
        result["peers"] = _peers(spec, models.make_weights(spec, args.seed), result, peers,
                                 args)
    for variant in ("constants", "arguments"):
        result[variant].get("latency", {}).pop("_reference", None)
        result[variant].get("latency", {}).pop("_image", None)
    return result


def _peers(spec, weights, result, names, args) -> dict:
    """Each peer on the equivalent nn.Module / its ONNX export, in this process."""
    import numpy as np

    from peers import onnx_export, run_peer

    out = {}
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        net = models.torch_module(spec, weights)
    except Exception as error:
        return {name: {"error": f"torch unavailable: {error}"} for name in names}
    latency = result["constants"].get("latency", {})
    if "_image" in latency:  # the nn.Module computes what the StableHLO module computes
        with torch.no_grad():
            image = np.ascontiguousarray(latency["_image"].transpose(0, 3, 1, 2))
            torch_out = net(torch.from_numpy(image)).numpy()
        reference = latency["_reference"]
        out["equivalence_max_rel_diff"] = float(np.abs(torch_out - reference).max()
                                                / np.abs(reference).max())
    onnx_bytes = None
    try:
        start = time.perf_counter()
        onnx_bytes = onnx_export(net, np.zeros((1, 3, spec.image, spec.image), np.float32))
        out["onnx_export_s"] = time.perf_counter() - start
        out["onnx_bytes"] = len(onnx_bytes)
    except Exception as error:
        out["onnx_export_error"] = f"{type(error).__name__}: {error}"
    repeats = args.peer_repeats or args.repeats
    for name in names:
        start = time.perf_counter()
        out[name] = run_peer(name, net, onnx_bytes, repeats)
        out[name]["wall_s"] = time.perf_counter() - start
        gc.collect()
    return out


# --- the driver ---------------------------------------------------------------------------


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    git = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                         capture_output=True, text=True, check=False)
    versions["stablehlo-bnfold commit"] = git.stdout.strip() or "unknown"
    for module in ("jax", "jaxlib", "numpy", "stablehlo_bnfold", "torch", "onnx",
                   "onnxoptimizer", "onnxruntime", "onnxscript", "tvm"):
        try:
            versions[module] = __import__(module).__version__
        except Exception as error:
            versions[module] = f"not installed ({type(error).__name__})"
    return versions


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) / 2**20
    return f"{cpu}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()}"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.probe:
        print(json.dumps(_probe(args.probe, args.input)))
        return 0
    if args.worker:
        with open(args.output, "w") as f:
            json.dump(worker(args.worker, args), f)
        return 0
    names = (QUICK_MODELS if args.quick else ALL_MODELS if args.all
             else tuple(args.models.split(",")) if args.models else DEFAULT_MODELS)
    unknown = [n for n in names if n not in models.NETWORKS]
    if unknown:
        print(f"run.py: error: unknown network(s) {', '.join(unknown)}; "
              f"known: {', '.join(models.NETWORKS)}", file=sys.stderr)
        return 2
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    run = {"command": command.strip(), "date": datetime.date.today().isoformat(),
           "machine": _machine(), "versions": _versions(), "results": []}
    options = driver_options(argv if argv is not None else sys.argv[1:],
                             own=("--json", "--markdown", "--models"), flags=("--quick", "--all"))
    run_workers(__file__, names, options, run)
    from report import render

    write_results(render(run), run, args.json, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
