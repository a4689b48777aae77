#!/usr/bin/env python3
"""Peak memory of folding a module that holds >= 1 GB of convolution kernels, over the size
of the kernels.

A child process builds a chain of `convolution` + `batch_norm_inference` layers with f32
3x3x1024x1024 kernels (36 MiB each, standard normal from --seed), as many as it takes to
reach --gigabytes, and writes it as MLIR bytecode, a StableHLO portable artifact or MLIR
text (that child's memory is not measured). Then, for each format, a fresh process folds
the file, through the CLI (`stablehlo-bnfold-opt FILE --stablehlo-fold-batch-norm -o OUT`,
`--emit-bytecode` for the binary formats, run as `cli.main` in that process) or the API
(`fold_batch_norm(bytes or str)`, the result written to OUT), and reports:

  peak      the kernel's VmHWM for the whole process (/proc/self/status), over the kernels'
            bytes: what the issue's "peak memory <= 2x its weights" reads
  above     VmHWM minus VmRSS after the imports (Python, jaxlib, the package), over the
            kernels' bytes: what folding itself adds
  seconds   wall time of the fold, reading and writing included

Linux only (/proc). Needs about 6x the weights of free memory; run it on a quiet machine.

  python benchmarks/limits.py                               # 1 GB, bytecode + portable, CLI
  python benchmarks/limits.py --formats text --via api
  python benchmarks/limits.py --gigabytes 0.1 --formats bytecode   # a quick check
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

KERNEL = (3, 3, 1024, 1024)
KERNEL_BYTES = math.prod(KERNEL) * 4
FORMATS = ("bytecode", "portable", "text")
SUFFIX = {"bytecode": ".mlirbc", "portable": ".stablehlo", "text": ".mlir"}

# Runs in the fresh measured process: argv = [via, format, input, output].
_MEASURE = r"""
import json, sys, time

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

via, fmt, source, target = sys.argv[1:]
import stablehlo_bnfold
from stablehlo_bnfold import cli
after_imports = status("VmRSS")
start = time.perf_counter()
if via == "cli":
    args = [source, "--stablehlo-fold-batch-norm", "-o", target, "--report=json"]
    code = cli.main(args + ([] if fmt == "text" else ["--emit-bytecode"]))
    folded = None
else:
    with open(source, "rb") as f:
        data = f.read()
    if fmt == "text":
        data = data.decode()
    out, report = stablehlo_bnfold.fold_batch_norm(data, with_report=True)
    del data
    with open(target, "w" if isinstance(out, str) else "wb") as f:
        f.write(out)
    code, folded = 0, report.folded
seconds = time.perf_counter() - start
print(json.dumps({"code": code, "folded": folded, "after_imports": after_imports,
                  "peak": status("VmHWM"), "seconds": seconds}))
"""

# Runs in the builder process: argv = [layers, seed, directory, formats...].
_BUILD = r"""
import io, sys
import numpy as np
from jax._src.interpreters.mlir import make_ir_context
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

layers, seed, directory, formats = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
C = 1024
act, kernel, vector = "tensor<1x8x8x1024xf32>", "tensor<3x3x1024x1024xf32>", "tensor<1024xf32>"
lines = [f"func.func @main(%x: {act}) -> {act} {{"]
value = "%x"
for n in range(layers):
    lines.append(f"  %k{n} = stablehlo.constant dense<0.0> : {kernel}")
    for name in ("scale", "offset", "mean", "var"):
        lines.append(f"  %{name}{n} = stablehlo.constant dense<1.0> : {vector}")
    lines.append(
        f"  %c{n} = stablehlo.convolution({value}, %k{n}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]"
        f"->[b, 0, 1, f], window = {{pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, "
        f"feature_group_count = 1 : i64}} : ({act}, {kernel}) -> {act}")
    lines.append(
        f'  %bn{n} = "stablehlo.batch_norm_inference"(%c{n}, %scale{n}, %offset{n}, %mean{n}, '
        f"%var{n}) {{epsilon = 1.0e-5 : f32, feature_index = 3 : i64}} : "
        f"({act}, {vector}, {vector}, {vector}, {vector}) -> {act}")
    value = f"%bn{n}"
lines += [f"  return {value} : {act}", "}"]

rng = np.random.default_rng(seed)
with make_ir_context():
    module = ir.Module.parse("\n".join(lines))
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        if op.operation.name != "stablehlo.constant":
            continue
        shape = tuple(ir.RankedTensorType(op.result.type).shape)
        if len(shape) == 4:
            values = (rng.standard_normal(shape) / np.sqrt(9 * C)).astype(np.float32)
        else:
            values = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        op.attributes["value"] = ir.DenseElementsAttr.get(values)
        del values
    for fmt in formats:
        path = f"{directory}/model" + {"bytecode": ".mlirbc", "portable": ".stablehlo", "text": ".mlir"}[fmt]
        if fmt == "bytecode":
            with open(path, "wb") as f:
                module.operation.write_bytecode(f)
        elif fmt == "portable":
            with open(path, "wb") as f:
                f.write(stablehlo.serialize_portable_artifact(module, str(stablehlo.get_current_version())))
        else:
            with open(path, "w") as f:
                module.operation.print(file=f)
"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--gigabytes", type=float, default=1.0, help="at least this many GB (1e9 bytes) of kernels (default 1)")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=["bytecode", "portable"], help="input formats to fold (default: bytecode portable)")
    parser.add_argument("--via", choices=("cli", "api"), default="cli", help="fold through the CLI's main() or fold_batch_norm (default cli)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights (default 0)")
    parser.add_argument("--workdir", help="where to write the modules and their folded copies, kept there (default: a temporary directory, removed)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    layers = math.ceil(args.gigabytes * 1e9 / KERNEL_BYTES)
    weights = layers * KERNEL_BYTES
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
    kept = contextlib.nullcontext(args.workdir) if args.workdir else tempfile.TemporaryDirectory()
    with kept as directory:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", _BUILD, str(layers), str(args.seed), directory, *args.formats],
            check=True,
        )
        print(
            f"built {layers} layers, {weights / 1e9:.3f} GB of f32 kernels "
            f"({layers} x {'x'.join(map(str, KERNEL))}), in {time.perf_counter() - start:.1f} s"
        )
        print(f"{'format':<10} {'via':<4} {'file GB':>8} {'seconds':>8} {'peak GB':>8} {'peak':>7} {'above':>7}  folded")
        results = []
        for fmt in args.formats:
            source = os.path.join(directory, "model" + SUFFIX[fmt])
            target = os.path.join(directory, "folded" + SUFFIX[fmt])
            run = subprocess.run(
                [sys.executable, "-c", _MEASURE, args.via, fmt, source, target],
                capture_output=True,
                text=True,
            )
            if run.returncode != 0:
                print(f"{fmt:<10} {args.via:<4} failed: {run.stderr.strip()[-500:]}")
                continue
            measured = json.loads(run.stdout.strip().splitlines()[-1])
            folded = measured["folded"]
            if folded is None:  # the CLI printed its report as JSON on stderr
                folded = json.loads(run.stderr[run.stderr.index("{"):])["folded"]
            result = {
                "format": fmt,
                "via": args.via,
                "layers": layers,
                "weights_bytes": weights,
                "file_bytes": os.path.getsize(source),
                "exit_code": measured["code"],
                "folded": folded,
                "seconds": measured["seconds"],
                "peak_bytes": measured["peak"],
                "after_imports_bytes": measured["after_imports"],
                "peak_over_weights": measured["peak"] / weights,
                "above_imports_over_weights": (measured["peak"] - measured["after_imports"]) / weights,
            }
            results.append(result)
            print(
                f"{fmt:<10} {args.via:<4} {result['file_bytes'] / 1e9:>8.3f} {result['seconds']:>8.1f} "
                f"{result['peak_bytes'] / 1e9:>8.3f} {result['peak_over_weights']:>6.2f}x "
                f"{result['above_imports_over_weights']:>6.2f}x  {folded}/{layers}"
                + ("" if measured["code"] == 0 else f"  exit {measured['code']}")
            )
            if not args.workdir:
                os.unlink(target)  # the next format's fold needs the space
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"machine": platform.platform(), "python": platform.python_version(),
                 "gigabytes": args.gigabytes, "results": results},
                f,
                indent=2,
            )
    return 0 if all(r["exit_code"] == 0 and r["folded"] == layers for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
