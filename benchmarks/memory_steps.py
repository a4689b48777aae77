#!/usr/bin/env python3
"""Peak memory of a fold, step by step: what holds it.

For each network (weights as constants, `jax` form by default) a fresh process exports the
network, writes its portable artifact to a file, and a second fresh process (which never
held the weights) reads that file and runs, one by one and on the calling thread, the
steps `fold_batch_norm` runs in the caller's process (`trusted=True`): the reader
(`io.load`, portable artifact -> StableHLO), the pass, the report (`Recorder.finish`), the
writer (`io.dump(consume=True)`: the module turned into VHLO in place and streamed out as
a portable artifact). After each step it prints resident memory and the peak so far,
above the process before the reader (the input's bytes already in memory), over the
weights' size (`measure.rss`, `measure.peak_rss`: the kernel's VmRSS and VmHWM). Beside
them: how much of the resident memory after the pass the C allocator only keeps (freed,
not returned: glibc's `malloc_trim(0)` gives it back; measured in a third process, since
trimming changes the later steps), Python's own peak during the pass (`tracemalloc`,
numpy's temporaries included), and the peak of `fold_batch_norm(Exported, trusted=True)`
itself (the same steps, and the `Exported` built around the output).

Examples:
  python benchmarks/memory_steps.py                         # MobileNetV2 and ResNet-50
  python benchmarks/memory_steps.py --models resnet18 --form keras
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from measure import peak_rss, reset_peak_rss, rss  # noqa: E402


def steps(path: str, mode: str) -> dict:
    """The steps on the artifact at `path`, in this process: resident and peak bytes above
    the start after each step (`mode` "steps"); the bytes `malloc_trim` returns after the
    pass ("trim"); Python's traced peak during the pass ("traced"); the peak of
    `fold_batch_norm(Exported, trusted=True)` on the `Exported` at `path + ".exported"`
    ("api")."""
    import tracemalloc

    if mode == "api":
        return _api(path + ".exported")

    from stablehlo_bnfold import io as sio
    from stablehlo_bnfold import passes
    from stablehlo_bnfold.report import Recorder

    _warm_up()
    with open(path, "rb") as f:
        data = f.read()
    gc.collect()
    base = rss()
    reset_peak_rss()
    marks = []

    def mark(step: str) -> None:
        gc.collect()
        marks.append((step, rss() - base, peak_rss() - base))

    context = sio.make_context()
    loaded = sio.load(data, context)
    mark("io.load")
    with context:
        recorder = Recorder()
        if mode == "traced":
            tracemalloc.start()
        passes.run_pipeline(loaded.module, passes.ARGUMENT, recorder)
        if mode == "traced":
            return {"traced_peak": tracemalloc.get_traced_memory()[1]}
        mark("the pass")
        if mode == "trim":
            before = rss()
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            return {"trimmed": before - rss()}
        recorder.finish(loaded.module)
        mark("Recorder.finish")
        output = sio.dump(loaded, consume=True)
        mark("io.dump(consume=True)")
    del output
    return {"steps": marks}


def _api(path: str) -> dict:
    import jax

    import stablehlo_bnfold

    _warm_up()
    with open(path, "rb") as f:
        exported = jax.export.deserialize(bytearray(f.read()))
    gc.collect()
    base = rss()
    reset_peak_rss()
    folded = stablehlo_bnfold.fold_batch_norm(exported, trusted=True)
    peak = peak_rss() - base
    del folded
    return {"api_peak": peak}


def _warm_up() -> None:
    """Fold a one-layer network first: one-time initialisation is not counted."""
    from stablehlo_bnfold import io as sio
    from stablehlo_bnfold import passes
    from stablehlo_bnfold.report import Recorder

    data = models.tiny_exported().mlir_module_serialized
    context = sio.make_context()
    loaded = sio.load(data, context)
    with context:
        passes.run_pipeline(loaded.module, passes.ARGUMENT, Recorder())
        sio.dump(loaded, consume=True)


def _export(name: str, form: str, path: str) -> int:
    """Write the network's artifact to `path`; its weights' bytes."""
    spec = models.NETWORKS[name]
    weights = models.make_weights(spec, 0)
    exported = models.export_stablehlo(spec, weights, weights_as="constants", form=form)
    with open(path, "wb") as f:
        f.write(exported.mlir_module_serialized)
    with open(path + ".exported", "wb") as f:
        f.write(exported.serialize())
    return models.weight_bytes(weights)


def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mobilenet_v2,resnet50")
    parser.add_argument("--form", default="jax", help="one of models.FORMS but torch_mlir")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--export", nargs=3, metavar=("NAME", "FORM", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(steps(args.child[1], args.child[0])))
        return
    if args.export:
        print(json.dumps({"weight_bytes": _export(*args.export)}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            path = os.path.join(tmp, f"{name}.stablehlo")
            weights = _child("--export", name, args.form, path)["weight_bytes"]
            found = _child("--child", "steps", path)
            trimmed = _child("--child", "trim", path)["trimmed"]
            traced = _child("--child", "traced", path)["traced_peak"]
            api = _child("--child", "api", path)["api_peak"]
            print(f"{name} ({args.form}, constants): weights {weights / 1e6:.1f} MB, "
                  "resident / peak above the input, over the weights")
            for step, resident, peak in found["steps"]:
                print(f"  {step:24s} {resident / weights:5.2f}x  {peak / weights:5.2f}x")
            print(f"  after the pass, kept by the allocator (malloc_trim): {trimmed / weights:.2f}x; "
                  f"Python's traced peak during the pass: {traced / weights:.2f}x")
            print(f"  fold_batch_norm(Exported, trusted=True), peak: {api / weights:.2f}x")


if __name__ == "__main__":
    main()
