#!/usr/bin/env python3
"""Benchmark the fold on the forms producers emit, against torch in the same interleaved run.

For each network a fresh worker process builds the seeded weights and the equivalent
`torch.nn.Module`, and for each form (models.FORMS: `bn`, `jax`, `keras`, `torch_mlir`)
and each weights variant (constants, arguments of `main`) times, as medians of interleaved
rounds (floor, pass, e2e, torch.fx, torch, floor, pass, ...; one untimed round first) of
wall time and of the calling thread's CPU time (the tables' ratios and s/GB use CPU time,
and each table ends with the pass's CPU time fitted as a cost per fold plus one per GB):

  floor     read and write the same input with no pass: for a portable artifact
            io.load + io.dump(consume=True), the reader and writer fold_batch_norm uses;
            for torch-mlir text, MLIR's parser and printer (ir.Module.parse, print to
            bytes, decode), which is what fold_batch_norm(str) does around the pass
  pass      the pass alone on a module already loaded, and its report (session.run)
  e2e       fold_batch_norm(Exported) -> Exported; for torch-mlir, fold_batch_norm(str)
  torch.fx  torch.fx.experimental.optimization.fuse(net) (trace, copy, fold)
  torch     torch.nn.utils.fusion.fuse_conv_bn_eval on every conv/bn pair

torch runs on one thread (torch.set_num_threads(1)), as our pass does.

Interleaving puts the machine's drift on every case alike: on a shared machine the ratios
(pass / torch.fx, e2e / floor) hold better than the times. With --onnx the ONNX peers
(onnxruntime, onnxscript, onnxsim, onnxslim; peers.py) run once per network after that,
on the model's ONNX export. With --memory, peak memory above the input over the weights'
size: fold_batch_norm(Exported) (run.py's probe) and the command on an artifact file, each
in a fresh process, for the `jax` form with constants.

Examples:
  python benchmarks/forms.py --models resnet18 --repeats 5            # a few minutes
  python benchmarks/forms.py --models resnet18,resnet50,mobilenet_v2 --onnx --memory \\
      --json out.json --markdown out.md
  python benchmarks/forms.py --models resnet50x4 --forms jax --variants constants --repeats 3
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from report import _s  # noqa: E402
from measure import (  # noqa: E402
    Case, driver_options, fit, fold_cases, interleaved_samples, run_workers, write_results)

ONNX_PEERS = ("onnxruntime", "onnxscript", "onnxsim", "onnxslim")


def parse_args(argv=None) -> argparse.Namespace:
    parser = models.argument_parser(__doc__)
    parser.add_argument("--models", default="resnet18",
                        help="comma-separated network names (default: %(default)s)")
    parser.add_argument("--forms", default=",".join(models.FORMS),
                        help="comma-separated forms (default: %(default)s)")
    parser.add_argument("--variants", default="constants,arguments",
                        help="weights as 'constants', 'arguments' or both (default: both)")
    parser.add_argument("--repeats", type=int, default=7,
                        help="timed rounds; medians are reported (default 7)")
    parser.add_argument("--onnx", action="store_true", help="also time the ONNX peers")
    parser.add_argument("--memory", action="store_true",
                        help="also measure peak memory (jax form, constants)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--markdown", help="write the tables to this Markdown file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# --- one network, in its own process ------------------------------------------------------


def _our_cases(exported, form: str) -> tuple[dict[str, Case], object]:
    """floor / pass / e2e for one export in `form`; also the input they read."""
    import stablehlo_bnfold
    from jaxlib.mlir import ir
    from stablehlo_bnfold import io as sio

    if form != "torch_mlir":
        data = exported.mlir_module_serialized
        return fold_cases(data, lambda _: stablehlo_bnfold.fold_batch_norm(exported)), data
    data = models.export_text(exported)

    def parse_and_print(_):
        context = sio.make_context()
        module = ir.Module.parse(data, context)
        buffer = io.BytesIO()
        module.operation.print(file=buffer, binary=True)
        return buffer.getvalue().decode()

    return fold_cases(data, lambda _: stablehlo_bnfold.fold_batch_norm(data), parse_and_print), data


def _torch_cases(spec, weights) -> tuple[dict[str, Case], object]:
    try:
        import torch
        from torch.fx.experimental.optimization import fuse

        from peers import torch_fuse_pairs, torch_pairs
    except ImportError:
        return {}, None
    # One thread, like our pass: with two, on a shared 2-core machine, torch's OpenMP
    # threads waited for a core and its times moved 10x to 40x from round to round.
    torch.set_num_threads(1)
    net = models.torch_module(spec, weights)
    pairs = torch_pairs(net)
    return {"torch.fx": Case(lambda _: fuse(net)),
            "torch": Case(lambda _: torch_fuse_pairs(pairs))}, net


def worker(name: str, args: argparse.Namespace) -> dict:
    import stablehlo_bnfold

    spec = models.NETWORKS[name]
    weights = models.make_weights(spec, args.seed)
    result = {"network": name, "title": spec.title,
              "weight_bytes": models.weight_bytes(weights), "forms": {}}
    peer_cases, net = _torch_cases(spec, weights)
    for form in args.forms.split(","):
        for variant in args.variants.split(","):
            exported = models.export_stablehlo(spec, weights, weights_as=variant, form=form)
            cases, data = _our_cases(exported, form)
            samples = interleaved_samples({**cases, **peer_cases}, args.repeats)
            times = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
            times["cpu"] = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
            _, report = stablehlo_bnfold.fold_batch_norm(data, with_report=True)
            times.update(folded=report.folded, skipped=len(report.skips),
                         input_bytes=len(data))
            result["forms"][f"{form}/{variant}"] = times
            print(f"[{time.strftime('%H:%M:%S')}] {name} {form} {variant}: "
                  + ", ".join(f"{k} {v * 1e3:.1f} ms (CPU {times['cpu'][k] * 1e3:.1f})"
                              for k, v in times.items()
                              if isinstance(v, float)), file=sys.stderr, flush=True)
            if args.memory and form == "jax" and variant == "constants":
                result["memory"] = _memory(exported, result["weight_bytes"])
            del exported, cases, data
            gc.collect()
    if args.onnx and net is not None:
        from peers import onnx_export, run_peer

        import numpy as np

        onnx_bytes = onnx_export(net, np.zeros((1, 3, spec.image, spec.image), np.float32))
        result["onnx"] = {peer: run_peer(peer, net, onnx_bytes, args.repeats)
                          for peer in ONNX_PEERS}
    return result


def _memory(exported, weight_bytes: int) -> dict:
    """Peak memory above the input over the weights: fold_batch_norm(Exported) through
    run.py's probe, and the command on the artifact file (its child's peak resident set,
    less that of the same command on a one-layer network: the imports)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.exported")
        with open(path, "wb") as f:
            f.write(exported.serialize())
        probe = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--probe", "e2e",
                                "--input", path], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            out["api"] = json.loads(probe.stdout.strip().splitlines()[-1])["extra"] / weight_bytes
        artifact = os.path.join(tmp, "model.stablehlo")
        with open(artifact, "wb") as f:
            f.write(exported.mlir_module_serialized)
        small = os.path.join(tmp, "tiny.stablehlo")
        with open(small, "wb") as f:
            f.write(models.tiny_exported().mlir_module_serialized)
        peaks = [_cli_peak(p, os.path.join(tmp, "out.stablehlo")) for p in (small, artifact)]
        out["cli"] = (peaks[1] - peaks[0]) / weight_bytes
    return out


def _cli_peak(path: str, output: str) -> int:
    """Peak resident bytes of the largest process of one `stablehlo-bnfold-opt` run."""
    script = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'stablehlo_bnfold.cli', sys.argv[1], "
        "'--stablehlo-fold-batch-norm', '--emit-bytecode', '-o', sys.argv[2]], check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, path, output], capture_output=True,
                          text=True, check=True)
    return int(done.stdout.split()[-1])


# --- the driver ---------------------------------------------------------------------------


def _both(t: dict, key: str) -> str:
    """Wall and CPU median of case `key` (wall alone in runs that did not record CPU)."""
    if t.get(key) is None:
        return "-"
    cpu = t.get("cpu", {}).get(key)
    return _s(t[key]) if cpu is None else f"{_s(t[key])} / {_s(cpu)}"


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def render(run: dict) -> str:
    lines = [f"Command: `{run['command']}`  ", f"Date: {run['date']}  ",
             f"Load average at the end (1, 5, 15 min): {run['load_average']}", ""]
    lines += [f"- {r['network']}: {r['error']}" for r in run["results"] if "error" in r]
    forms = []
    for r in run["results"]:
        forms += [k for k in r.get("forms", {}) if k not in forms]
    for key in forms:
        form, variant = key.split("/")
        lines += [f"#### `{form}`, weights as {variant} (wall / thread CPU; ratios and s/GB of CPU time)", "",
                  "| network | weights MB | input MB | folded | floor | pass | e2e | e2e / floor "
                  "| torch.fx | torch | pass / torch.fx | pass / torch | pass s/GB | e2e s/GB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        rows = []
        for r in run["results"]:
            t = r.get("forms", {}).get(key)
            if t is None:
                continue
            gb = r["weight_bytes"] / 1e9
            c = t.get("cpu", t)  # runs before CPU time was recorded: wall only
            rows.append((t["folded"], gb if variant == "constants" else 0.0, c["pass"]))
            lines.append(
                f"| {r['title']} | {r['weight_bytes'] / 1e6:.1f} | {t['input_bytes'] / 1e6:.1f} "
                f"| {t['folded']} | {_both(t, 'floor')} | {_both(t, 'pass')} | {_both(t, 'e2e')} "
                f"| {_ratio(c['e2e'], c['floor'])} | {_both(t, 'torch.fx')} | {_both(t, 'torch')} "
                f"| {_ratio(c['pass'], c.get('torch.fx'))} | {_ratio(c['pass'], c.get('torch'))} "
                f"| {c['pass'] / gb:.2f} | {c['e2e'] / gb:.2f} |")
        fitted = fit(rows)
        if fitted is not None:
            lines += ["", f"Pass CPU time fitted over these rows: {fitted[0] * 1e3:.3f} ms per fold "
                          f"+ {fitted[1]:.2f} s per GB of weights."]
        lines.append("")
    memory = [r for r in run["results"] if "memory" in r]
    if memory:
        lines += ["#### Peak memory above the input, over the weights (`jax`, constants)", "",
                  "| network | weights MB | fold_batch_norm(Exported) | command on a file |",
                  "|---|---:|---:|---:|"]
        for r in memory:
            m = r["memory"]
            api = f"{m['api']:.2f}x" if "api" in m else "error"
            lines.append(f"| {r['title']} | {r['weight_bytes'] / 1e6:.1f} | {api} "
                         f"| {m['cli']:.2f}x |")
        lines.append("")
    onnx = [r for r in run["results"] if "onnx" in r]
    if onnx:
        lines += ["#### ONNX peers on the same network (after the rounds above)", "",
                  "| network | tool | pass | e2e | folded |", "|---|---|---:|---:|---:|"]
        for r in onnx:
            for peer, p in r["onnx"].items():
                if "error" in p:
                    lines.append(f"| {r['title']} | {peer} | failed: {p['error']} | | |")
                else:
                    lines.append(f"| {r['title']} | {peer} {p.get('version', '')} "
                                 f"| {_s(p['pass'])} | {_s(p['e2e'])} | {p['folded']} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    import datetime

    args = parse_args(argv)
    if args.worker:
        with open(args.output, "w") as f:
            json.dump(worker(args.worker, args), f)
        return 0
    argv = list(sys.argv[1:] if argv is None else argv)
    run = {"command": "python benchmarks/forms.py " + " ".join(argv),
           "date": datetime.date.today().isoformat(), "results": []}
    options = driver_options(argv, own=("--models", "--json", "--markdown"))
    run_workers(__file__, args.models.split(","), options, run)
    write_results(render(run), run, args.json, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
