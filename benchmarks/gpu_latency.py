#!/usr/bin/env python3
"""Inference latency of the folded vs the original network through XLA on a GPU.

For each network, form (models.FORMS less `torch_mlir`, which is the `jax` form as text)
and weights variant, one process exports the seeded network for the first accelerator JAX
sees (`jax.export`, lowered for its platform), folds it with `fold_batch_norm(Exported)`,
compiles both with `jax.jit(exported.call)` and times them on that device, as medians of
interleaved rounds; each round runs each executable `--inner` times back to back and
waits for the last result, so a sample is device time plus one launch gap. Reported per
batch size: both medians, their ratio, the largest difference of the outputs relative to
the largest output, and the kernels XLA launches (instructions of the optimized entry
computation that are fusions, custom calls or other work; cuDNN convolutions counted apart,
with how many of them took a bias or activation into the call).

With weights as arguments the weights are device arrays passed on every call; the folded
module then scales them on the device on each call (the weights stay parameters), so that
row shows what the fold costs or saves when the weights are not constants.
`--options` folds with the pass's options; `--also-options` folds a second time with
others and times that third module in the same rounds (e.g. the cost rule against
`fold-larger-weight-arguments=true`).

Results are written as they come (`--json`), so a run cut short keeps what it measured.

`--save DIR` exports and folds here (for `--platform`, with a symbolic batch) and writes
each pair as `NAME.original.exported` / `NAME.folded.exported`; `--load DIR` times such
pairs where the GPU is, without folding there (for a GPU machine whose jaxlib differs
from the one the package was tested with).

Examples (on a machine with a GPU and jax's CUDA plugin):
  python benchmarks/gpu_latency.py --models resnet18 --batches 1 --rounds 5   # a minute
  python benchmarks/gpu_latency.py --models resnet18,resnet50,mobilenet_v2 \\
      --forms bn,jax,keras --batches 1,32 --json out.json --markdown out.md
It also runs on the CPU (`JAX_PLATFORMS=cpu`), which is how it is tested.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import models  # noqa: E402

_ENTRY_NOT_KERNELS = frozenset({
    "parameter", "constant", "get-tuple-element", "tuple", "bitcast", "copy-start",
    "copy-done", "after-all", "opt-barrier",
})
_HLO_OP = re.compile(r"^\s*(?:ROOT\s+)?\S+\s*=\s*.*?\s([a-z][a-z0-9-]*)\(")
_CUSTOM_TARGET = re.compile(r'custom_call_target="([^"]+)"')


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2",
                        help="comma-separated network names (models.NETWORKS)")
    parser.add_argument("--forms", default="bn,jax,keras", help="comma-separated forms")
    parser.add_argument("--variants", default="constants,arguments",
                        help="weights as constants of the module and/or arguments of main")
    parser.add_argument("--batches", default="1,32", help="comma-separated batch sizes")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--inner", type=int, default=20, help="calls per sample")
    parser.add_argument("--options", default="",
                        help="the pass's options, e.g. fold-larger-weight-arguments=true")
    parser.add_argument("--also-options", default=None,
                        help="also fold with these options and time that in the same rounds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the results here, updated after each case")
    parser.add_argument("--markdown", help="write the table here at the end")
    parser.add_argument("--save", help="export and fold here, write the pairs to this folder")
    parser.add_argument("--platform", default="cuda", help="what --save lowers for")
    parser.add_argument("--load", help="time the pairs --save wrote to this folder")
    return parser.parse_args(argv)


def entry_kernels(hlo_text: str) -> dict[str, int]:
    """What the optimized module's entry computation launches: `kernels` (instructions
    that do work), `convolutions` (cuDNN or XLA convolutions) and `fused_convolutions`
    (cuDNN calls that also add a bias or apply an activation)."""
    counts = {"kernels": 0, "convolutions": 0, "fused_convolutions": 0}
    in_entry = False
    for line in hlo_text.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
            continue
        if in_entry and line.startswith("}"):
            break
        match = _HLO_OP.match(line) if in_entry else None
        if not match or match.group(1) in _ENTRY_NOT_KERNELS:
            continue
        counts["kernels"] += 1
        target = _CUSTOM_TARGET.search(line)
        name = target.group(1) if target else match.group(1)
        if "conv" in name.lower():
            counts["convolutions"] += 1
            if "BiasActivation" in name or "fused" in name.lower():
                counts["fused_convolutions"] += 1
    return counts


def _timed(fn, inputs, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        out = fn(*inputs)
    out.block_until_ready()
    return (time.perf_counter() - start) / inner


def measure(exported, folded, inputs, *, rounds: int, inner: int, also=None) -> dict:
    """Median seconds per call of both (and of `also`, folded with `--also-options`, in
    the same rounds), interleaved, and what XLA made of each."""
    import jax

    compiled, outputs = {}, {}
    pairs = (("original", exported), ("folded", folded)) + ((("also", also),) if also else ())
    for name, exp in pairs:
        fn = jax.jit(exp.call)
        compiled[name] = fn.lower(*inputs).compile()
        outputs[name] = np.asarray(compiled[name](*inputs))
        _timed(compiled[name], inputs, inner)  # warm up
    samples = {name: [] for name in compiled}
    for _ in range(rounds):
        for name, fn in compiled.items():
            samples[name].append(_timed(fn, inputs, inner))
    medians = {name: statistics.median(v) for name, v in samples.items()}
    reference = outputs["original"]
    extra = {}
    if also is not None:
        extra = {"also_s": medians["also"], "also_ratio": medians["also"] / medians["original"],
                 "also_max_rel_diff": float(np.abs(outputs["also"] - reference).max()
                                            / np.abs(reference).max())}
    return extra | {
        "original_s": medians["original"],
        "folded_s": medians["folded"],
        "ratio": medians["folded"] / medians["original"],
        "max_rel_diff": float(np.abs(outputs["folded"] - reference).max()
                              / np.abs(reference).max()),
        "xla": {name: entry_kernels(c.as_text()) for name, c in compiled.items()},
    }


def run_case(spec, weights, form: str, variant: str, batches: list[int], args) -> list[dict]:
    import jax

    from stablehlo_bnfold import fold_batch_norm

    device = jax.devices()[0]
    platform = "cuda" if device.platform == "gpu" else device.platform
    rows = []
    params = models.jax_params(weights)
    values = [jax.device_put(params[n], device) for n in sorted(weights)]
    for batch in batches:
        start = time.perf_counter()
        exported = models.export_stablehlo(spec, weights, weights_as=variant, batch=batch,
                                           form=form, platform=platform)
        export_s = time.perf_counter() - start
        start = time.perf_counter()
        folded, report = fold_batch_norm(exported, with_report=True, options=args.options)
        fold_s = time.perf_counter() - start
        also = None if args.also_options is None else fold_batch_norm(exported, options=args.also_options)
        image = np.random.default_rng(args.seed + 1).standard_normal(
            (batch, spec.image, spec.image, 3), dtype=np.float32)
        inputs = [jax.device_put(image, device)]
        if variant == "arguments":
            inputs += values
        row = {"network": spec.name, "title": spec.title, "form": form,
               "variant": variant + (f" ({args.options})" if args.options else ""), "batch": batch, "device": device.device_kind, "folds": len(report.folds),
               "export_s": export_s, "fold_s": fold_s}
        row.update(measure(exported, folded, inputs, rounds=args.rounds, inner=args.inner, also=also))
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _line(row: dict) -> str:
    xla = row["xla"]
    also = (f"  also {row['also_s'] * 1e3:8.3f} ms {row['also_ratio']:.2f}x kernels "
            f"{xla['also']['kernels']}") if "also_s" in row else ""
    return (f"{row['title']:<14} {row['form']:<6} {row['variant']:<11} b{row['batch']:<3} "
            f"{row['original_s'] * 1e3:8.3f} ms -> {row['folded_s'] * 1e3:8.3f} ms "
            f"{row['ratio']:.2f}x  kernels {xla['original']['kernels']} -> "
            f"{xla['folded']['kernels']}  diff {row['max_rel_diff']:.1e}{also}")


def markdown(rows: list[dict]) -> str:
    lines = [
        "| network | form | weights | batch | original | folded | folded / original "
        "| XLA kernels before -> after | cuDNN convs with bias/activation after "
        "| max rel diff |",
        "|---|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for row in rows:
        xla = row["xla"]
        lines.append(
            f"| {row['title']} | {row['form']} | {row['variant']} | {row['batch']} "
            f"| {row['original_s'] * 1e3:.3f} ms | {row['folded_s'] * 1e3:.3f} ms "
            f"| {row['ratio']:.2f}x | {xla['original']['kernels']} -> "
            f"{xla['folded']['kernels']} | {xla['folded']['fused_convolutions']} of "
            f"{xla['folded']['convolutions']} | {row['max_rel_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def save_pairs(args) -> None:
    """Export each network and form with a symbolic batch for `args.platform`, fold it
    here, and write both serialized to `args.save`."""
    import jax

    from stablehlo_bnfold import fold_batch_norm

    folder = Path(args.save)
    folder.mkdir(parents=True, exist_ok=True)
    (batch,) = jax.export.symbolic_shape("b")
    for name in args.models.split(","):
        spec = models.NETWORKS[name]
        weights = models.make_weights(spec, args.seed)
        for form in args.forms.split(","):
            exported = models.export_stablehlo(spec, weights, weights_as="constants",
                                               batch=batch, form=form,
                                               platform=args.platform)
            folded = fold_batch_norm(exported, options=args.options)
            for kind, exp in (("original", exported), ("folded", folded)):
                (folder / f"{name}.{form}.{kind}.exported").write_bytes(exp.serialize())


def load_pairs(args, batches: list[int]) -> list[dict]:
    """Time the pairs `save_pairs` wrote, weights as constants."""
    import jax

    device = jax.devices()[0]
    rows = []
    for path in sorted(Path(args.load).glob("*.original.exported")):
        name, form = path.name.split(".")[:2]
        spec = models.NETWORKS[name]
        exported = jax.export.deserialize(bytearray(path.read_bytes()))
        folded = jax.export.deserialize(bytearray(
            path.with_name(f"{name}.{form}.folded.exported").read_bytes()))
        for batch in batches:
            image = np.random.default_rng(args.seed + 1).standard_normal(
                (batch, spec.image, spec.image, 3), dtype=np.float32)
            row = {"network": name, "title": spec.title, "form": form,
                   "variant": "constants (folded elsewhere)", "batch": batch,
                   "device": device.device_kind}
            row.update(measure(exported, folded, [jax.device_put(image, device)],
                               rounds=args.rounds, inner=args.inner))
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.save:
        save_pairs(args)
        return 0
    import jax

    batches = [int(b) for b in args.batches.split(",")]
    result = {"device": jax.devices()[0].device_kind, "jax": jax.__version__, "options": args.options,
              "rounds": args.rounds, "inner": args.inner, "rows": [], "errors": []}
    print(f"device {result['device']}, jax {result['jax']}", flush=True)
    if args.load:
        result["rows"] = load_pairs(args, batches)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
        if args.markdown:
            Path(args.markdown).write_text(markdown(result["rows"]))
        return 0
    for name in args.models.split(","):
        spec = models.NETWORKS[name]
        weights = models.make_weights(spec, args.seed)
        for form in args.forms.split(","):
            for variant in args.variants.split(","):
                try:
                    result["rows"] += run_case(spec, weights, form, variant, batches, args)
                except Exception:  # noqa: BLE001 - one case failing must not lose the rest
                    text = traceback.format_exc()
                    print(text, file=sys.stderr, flush=True)
                    result["errors"].append({"network": name, "form": form,
                                             "variant": variant, "error": text})
                if args.json:
                    Path(args.json).write_text(json.dumps(result, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(markdown(result["rows"]))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
