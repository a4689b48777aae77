"""Fold an `Exported.serialize()` file with the command, then load and call the result.

    python3 examples/exported_file.py

`jax.export` models are often kept as the bytes `Exported.serialize()` returns (here
`model.jax`). `stablehlo-bnfold-opt` reads such a file and writes one back, the same
kind with the same calling convention, which `jax.export.deserialize` loads.
The files go to a temporary folder; the commands are printed as a shell would run them.
"""

import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

import jax
import numpy as np


def model(x):
    """A convolution followed by a batch norm written as Flax writes it."""
    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((3, 3, 4, 8)).astype(np.float32)
    mean, var = rng.normal(0, 0.2, 8).astype(np.float32), rng.uniform(0.5, 2, 8).astype(np.float32)
    scale, bias = rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.normal(0, 0.2, 8).astype(np.float32)
    y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (y - mean) * (jax.lax.rsqrt(var + 1e-5) * scale) + bias


def command() -> list[str]:
    """The command as installed, or the same command through this Python."""
    found = shutil.which("stablehlo-bnfold-opt")
    return [found] if found else [sys.executable, "-m", "stablehlo_bnfold"]


def main() -> int:
    folder = pathlib.Path(tempfile.mkdtemp())
    x = np.random.default_rng(1).standard_normal((2, 8, 8, 4)).astype(np.float32)
    (folder / "model.jax").write_bytes(jax.export.export(jax.jit(model))(x).serialize())

    arguments = ["model.jax", "--stablehlo-fold-batch-norm", "--report", "-o", "folded.jax"]
    print("$ stablehlo-bnfold-opt " + shlex.join(arguments))
    run = subprocess.run(command() + arguments, cwd=folder, capture_output=True, text=True)
    print(run.stderr, end="")
    if run.returncode != 0:
        return run.returncode

    original = jax.export.deserialize((folder / "model.jax").read_bytes())
    folded = jax.export.deserialize((folder / "folded.jax").read_bytes())
    want, got = np.asarray(original.call(x)), np.asarray(folded.call(x))
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error < 1e-5, f"the folded model differs: {error:.2e}"
    print(f"folded.jax loads, and matches model.jax (max relative difference {error:.1e})")
    shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
