#!/usr/bin/env python3
"""Random byte mutations of examples/conv_bn.mlir as MLIR bytecode and as a portable
artifact, each folded by the command (`python -m stablehlo_bnfold.cli FILE
--stablehlo-fold-batch-norm --emit-bytecode -o OUT`) in its own process.

The command's contract on any input: exit 0, or exit 1 with exactly one line on stderr
and no traceback, within the time limit. A crash of jaxlib's C++ reader counts as one
line (`... the MLIR reader crashed on it (SIGSEGV)`), since the command reads in a child
process. Inputs that break the contract are kept in --keep. Slow (a process per input):
run by hand, results in docs/dev/reliability.md.

With --via api, each input goes to `stablehlo_bnfold.fold_batch_norm(bytes)` in this one
process instead (which reads it in a forked child): the contract is a result or a
one-line FoldError, and this process surviving every input.

  python3 test/fuzz/mutate_cli.py --seed 7 --count 80
  python3 test/fuzz/mutate_cli.py --seed 1 --count 600 --via api
"""

from __future__ import annotations

import argparse
import collections
import io
import pathlib
import random
import subprocess
import sys
import tempfile

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "conv_bn.mlir"


def _seeds() -> dict[str, bytes]:
    from jax._src.interpreters.mlir import make_ir_context
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    with make_ir_context():
        module = ir.Module.parse(EXAMPLE.read_text())
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        artifact = stablehlo.serialize_portable_artifact(module, str(stablehlo.get_current_version()))
    return {"m.mlirbc": buffer.getvalue(), "m.stablehlo": artifact}


def _through_the_api(data: bytes) -> str:
    """What `fold_batch_norm(data)` did, as an outcome of the table."""
    import stablehlo_bnfold

    try:
        stablehlo_bnfold.fold_batch_norm(data)
    except stablehlo_bnfold.FoldError as error:
        message = str(error)
        if "\n" in message:
            return "broken (a message of more than one line)"
        if "crashed" in message or "did not finish" in message:
            return "reader crash or loop, one line"
        return "one-line error"
    except Exception as error:  # anything but a FoldError breaks the contract
        return f"broken ({type(error).__name__})"
    return "folded"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=40, help="inputs, half of each format")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per input")
    parser.add_argument("--keep", default="mutants", help="where inputs that break the contract go")
    parser.add_argument("--via", choices=("cli", "api"), default="cli",
                        help="fold through the command (a process per input) or the API")
    args = parser.parse_args()
    if args.via == "api":
        import stablehlo_bnfold.sandbox

        stablehlo_bnfold.sandbox.READ_SECONDS = args.timeout
    rng = random.Random(args.seed)
    seeds = list(_seeds().items())
    outcomes: collections.Counter[str] = collections.Counter()
    broken = []
    with tempfile.TemporaryDirectory() as work:
        for index in range(args.count):
            name, seed = seeds[index % 2]
            data = bytearray(seed)
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            if args.via == "api":
                outcome = _through_the_api(bytes(data))
                outcomes[outcome] += 1
                if outcome.startswith("broken"):
                    broken.append((index, name, data))
                continue
            pathlib.Path(work, name).write_bytes(data)
            command = [sys.executable, "-m", "stablehlo_bnfold.cli", name,
                       "--stablehlo-fold-batch-norm", "--emit-bytecode", "-o", "out"]
            try:
                run = subprocess.run(command, cwd=work, capture_output=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                outcomes["timeout"] += 1
                broken.append((index, name, data))
                continue
            lines = run.stderr.decode(errors="replace").splitlines()
            if run.returncode == 0:
                outcomes["folded"] += 1
            elif run.returncode == 1 and len(lines) == 1 and b"Traceback" not in run.stderr:
                outcomes["reader crash, one line" if "crashed" in lines[0] else "one-line error"] += 1
            else:
                outcomes[f"broken (exit {run.returncode}, {len(lines)} lines)"] += 1
                broken.append((index, name, data))
                print(f"input {index} ({name}): exit {run.returncode}:", *lines[:5], sep="\n  ")
    for index, name, data in broken:
        path = pathlib.Path(args.keep, f"{index}-{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(dict(outcomes))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
