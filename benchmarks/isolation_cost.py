#!/usr/bin/env python3
"""What folding bytecode in a child process costs the API: `fold_batch_norm(Exported)`,
weights as constants, in a forked child (the default, `stablehlo_bnfold.sandbox`) and in
the calling process (`trusted=True`), and in a child without `gc.freeze()` around the fork.

Interleaved medians (benchmarks/measure.py) in one process, after JAX has run a
computation, as in a caller that has just exported its model. Results: docs/dev/reliability.md.

  python benchmarks/isolation_cost.py --repeats 9 resnet18 resnet50 mobilenet_v2
"""

from __future__ import annotations

import argparse
import gc
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from measure import Case, interleaved_medians  # noqa: E402
from models import NETWORKS, export_stablehlo, make_weights  # noqa: E402


class _NoFreeze:
    """Stands in for `gc` in stablehlo_bnfold.sandbox: freezing does nothing."""

    freeze = staticmethod(lambda: None)
    unfreeze = staticmethod(lambda: None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("networks", nargs="+", choices=sorted(NETWORKS))
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    import jax

    import stablehlo_bnfold
    from stablehlo_bnfold import sandbox

    def fold(*, trusted: bool = False, freeze: bool = True):
        def run(exported):
            sandbox.gc = gc if freeze else _NoFreeze
            try:
                return stablehlo_bnfold.fold_batch_norm(exported, trusted=trusted)
            finally:
                sandbox.gc = gc

        return run

    jax.numpy.zeros(1).block_until_ready()  # the backends up, as in a caller that exported
    for name in args.networks:
        spec = NETWORKS[name]
        exported = export_stablehlo(spec, make_weights(spec, seed=0), weights_as="constants")
        assert fold()(exported).mlir_module_serialized == fold(trusted=True)(exported).mlir_module_serialized
        medians = interleaved_medians(
            {
                "child": Case(fold(), lambda: exported),
                "child without gc.freeze": Case(fold(freeze=False), lambda: exported),
                "in process (trusted=True)": Case(fold(trusted=True), lambda: exported),
            },
            repeats=args.repeats,
        )
        size = len(exported.mlir_module_serialized) / 1e6
        times = ", ".join(f"{case} {seconds * 1e3:.0f} ms" for case, seconds in medians.items())
        ratio = medians["child"] / medians["in process (trusted=True)"]
        print(f"{name} ({size:.1f} MB): {times}; child / in process {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
