"""A sharded `jax.export` folded on a CPU mesh; run by test_api.py in its own process,
since the number of CPU devices is fixed when jax starts (XLA_FLAGS).

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python3 sharded_export.py 4 constant DIR

exports a convolution followed by batch norm (Flax's decomposed form) with `jax.jit(f,
in_shardings=..., out_shardings=...)` on a mesh of all the devices, with sharding
constraints inside; the batch-norm values are constants of the module ("constant") or
arguments, replicated ("argument"). It folds the export with `fold_batch_norm`, and the
portable artifact with the command (`stablehlo-bnfold-opt --emit-bytecode`, in DIR), calls
the original and both folded exports on the mesh, and the folded one after
`serialize()` / `jax.export.deserialize()`, on the same seeded input, and prints what it
saw as one JSON object for the test to check.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import subprocess
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import stablehlo_bnfold

DEVICES, FORM, WORK = int(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
FEATURES = 8


def conv(x, kernel):
    return jax.lax.conv_general_dilated(
        x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def batch_norm(y, p):
    # Flax linen's inference batch norm.
    return (y - p["mean"]) * (jax.lax.rsqrt(p["var"] + 1e-5) * p["scale"]) + p["bias"]


def main() -> None:
    assert jax.device_count() == DEVICES, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    batch, replicated = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())
    rng = np.random.default_rng(DEVICES)
    params = {
        "kernel": rng.standard_normal((3, 3, 4, FEATURES)).astype(np.float32),
        "scale": rng.standard_normal(FEATURES).astype(np.float32),
        "bias": rng.standard_normal(FEATURES).astype(np.float32),
        "mean": rng.standard_normal(FEATURES).astype(np.float32),
        "var": rng.uniform(0.5, 2.0, FEATURES).astype(np.float32),
    }
    x = rng.standard_normal((2 * DEVICES, 8, 8, 4)).astype(np.float32)

    def model(p, x):
        x = jax.lax.with_sharding_constraint(x, batch)
        y = batch_norm(conv(x, p["kernel"]), p)
        return jax.lax.with_sharding_constraint(y, batch)

    if FORM == "constant":
        function = jax.jit(lambda x: model(params, x), in_shardings=batch, out_shardings=batch)
        specs, args = (jax.ShapeDtypeStruct(x.shape, x.dtype),), (jax.device_put(x, batch),)
    else:
        function = jax.jit(model, in_shardings=(replicated, batch), out_shardings=batch)
        specs = (jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params),
                 jax.ShapeDtypeStruct(x.shape, x.dtype))
        args = (jax.device_put(params, replicated), jax.device_put(x, batch))
    exported = jax.export.export(function)(*specs)
    if FORM == "parameters":
        print(json.dumps(_parameters(exported, args, mesh)))
        return

    folded, report = stablehlo_bnfold.fold_batch_norm(exported, with_report=True)
    (WORK / "model.stablehlo").write_bytes(exported.mlir_module_serialized)
    command = subprocess.run(
        [sys.executable, "-m", "stablehlo_bnfold", "model.stablehlo", "--stablehlo-fold-batch-norm",
         "--emit-bytecode", "-o", "folded.stablehlo"],
        cwd=WORK, capture_output=True, text=True, timeout=300,
    )
    by_command = dataclasses.replace(
        exported, mlir_module_serialized=(WORK / "folded.stablehlo").read_bytes()
    ) if command.returncode == 0 else None
    restored = jax.export.deserialize(folded.serialize())

    activation = "x".join(map(str, (*x.shape[:3], FEATURES))) + "xf32"
    expected = np.asarray(exported.call(*args), dtype=np.float64)

    def error(result) -> float:
        return float(np.max(np.abs(np.asarray(result, dtype=np.float64) - expected)) / np.max(np.abs(expected)))

    def calling(e: jax.export.Exported) -> dict:
        result = e.call(*args)
        module = e.mlir_module()
        return {
            "error": error(result),
            "sharding": str(result.sharding),
            "nr_devices": e.nr_devices,
            "in_shardings_hlo": repr(e.in_shardings_hlo),
            "out_shardings_hlo": repr(e.out_shardings_hlo),
            "in_shardings": repr(e.in_shardings_jax(mesh)),
            "out_shardings": repr(e.out_shardings_jax(mesh)),
            "sharding_constraints": module.count("sdy.sharding_constraint"),
            # subtract, multiply, add or divide on the activation: the batch norm's steps
            "activation_steps": len(re.findall(
                rf"stablehlo\.(?:subtract|multiply|add|divide) .*: tensor<{activation}>(?: loc\(.*\))?$",
                module, re.MULTILINE)),
        }

    print(json.dumps({
        "report": report.to_text(),
        "folded_count": report.folded,
        "command": {"returncode": command.returncode, "stderr": command.stderr},
        "original": calling(exported),
        "folded": calling(folded),
        "restored": calling(restored),
        "original_restored": calling(jax.export.deserialize(exported.serialize())),
        "by_command": calling(by_command) if by_command else None,
    }))


def _parameters(exported, args, mesh) -> dict:
    """`fold_parameters` on the mesh: prepare's outputs and folded's inputs keep the
    weights' shardings; folded computes what the original does."""
    prepare, folded = stablehlo_bnfold.fold_parameters(exported, parameters=0)
    new_params = prepare.call(args[0])
    expected = np.asarray(exported.call(*args), dtype=np.float64)
    result = folded.call(new_params, args[1])
    return {
        "error": float(np.max(np.abs(np.asarray(result, dtype=np.float64) - expected)) / np.max(np.abs(expected))),
        "sharding": str(result.sharding),
        "original_in": repr(exported.in_shardings_jax(mesh)),
        "prepare_out": repr(prepare.out_shardings_jax(mesh)),
        "folded_in": repr(folded.in_shardings_jax(mesh)),
        "folded_params": len(new_params),
        "folded_module": folded.mlir_module(),
    }


if __name__ == "__main__":
    main()
