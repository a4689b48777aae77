#!/usr/bin/env python3
"""Before and after: the pass and fold_batch_norm of an older revision of the package
against the working tree's, interleaved in one process on the benchmark networks.

The older revision's `python/stablehlo_bnfold` is taken with `git archive REV` into a
temporary directory and imported as `stablehlo_bnfold_base` (the package imports itself
only relatively). For each network and weights variant the cases run in turn, as in
run.py: floor (this tree's io.load + io.dump, consume=True), pass before, pass after, e2e before, e2e
after, with before and after swapped every other round so that neither always runs
right after the floor (which leaves a lot of freed memory behind); one untimed round
first, then the median of each. Timing both in one process, a few seconds apart, keeps the machine's drift out of
the before/after ratio.

Example:
  python benchmarks/compare.py --base 58e1802                 # ResNet-18, ResNet-50, MobileNetV2
  python benchmarks/compare.py --base HEAD~2 --models mobilenet_v2 --repeats 21
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from measure import Case, interleaved_medians  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Networks: " + ", ".join(f"{n} ({s.title})" for n, s in models.NETWORKS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2",
                        help="comma-separated network names (default: %(default)s)")
    parser.add_argument("--variants", default="constants,arguments",
                        help="weights as 'constants', 'arguments' or both (default: both)")
    parser.add_argument("--form", default="bn", choices=[f for f in models.FORMS if f != "torch_mlir"],
                        help="how batch norms are written (models.FORMS; default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=15,
                        help="timed rounds; medians are reported (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    return parser.parse_args(argv)


def import_base(revision: str, into: str):
    """The package as it was at `revision`, imported as `stablehlo_bnfold_base`."""
    archive = subprocess.run(
        ["git", "-C", os.path.dirname(HERE), "archive", "--prefix=stablehlo_bnfold_base/",
         f"{revision}:python/stablehlo_bnfold"],
        capture_output=True, check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    sys.path.insert(0, into)
    import stablehlo_bnfold_base

    return stablehlo_bnfold_base


def _cases(exported, base_package) -> dict[str, Case]:
    import importlib

    import stablehlo_bnfold

    data = exported.mlir_module_serialized
    here = {name: importlib.import_module(f"stablehlo_bnfold.{name}")
            for name in ("io", "passes", "report")}
    there = {name: importlib.import_module(f"{base_package.__name__}.{name}")
             for name in ("io", "passes", "report")}

    def floor(_):
        context = here["io"].make_context()
        loaded = here["io"].load(data, context)
        with context:
            return here["io"].dump(loaded, consume=True)

    def pass_case(package):
        def setup():
            context = package["io"].make_context()
            return context, package["io"].load(data, context)

        def run(arg):
            context, loaded = arg
            with context:
                package["passes"].run_pipeline(loaded.module, package["passes"].ARGUMENT,
                                               package["report"].Recorder())

        return Case(run, setup=setup)

    return {
        "floor": Case(floor),
        "pass before": pass_case(there),
        "pass after": pass_case(here),
        "e2e before": Case(lambda _: base_package.fold_batch_norm(exported)),
        "e2e after": Case(lambda _: stablehlo_bnfold.fold_batch_norm(exported)),
    }


def _alternating_medians(cases: dict[str, Case], repeats: int) -> dict[str, float]:
    """Medians over `repeats` rounds (after one untimed round), with the before and after
    cases swapped in every other round."""
    swapped = {name: name.replace("before", "@").replace("after", "before").replace("@", "after")
               for name in cases}
    interleaved_medians(cases, 1, warmup=0)  # the untimed round
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(repeats):
        order = list(cases) if round_ % 2 == 0 else [swapped[name] for name in cases]
        in_order = {name: cases[name] for name in order}
        for name, seconds in interleaved_medians(in_order, 1, warmup=0).items():
            times[name].append(seconds)
    return {name: statistics.median(values) for name, values in times.items()}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def main(argv=None) -> int:
    args = parse_args(argv)
    names = args.models.split(",")
    unknown = [n for n in names if n not in models.NETWORKS]
    if unknown:
        print(f"compare.py: error: unknown network(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        base_package = import_base(args.base, tmp)
        print(f"before: {args.base}; after: the working tree; form {args.form}; "
              f"{args.repeats} interleaved rounds\n")
        print("| network | weights | floor | pass before | pass after | after / before "
              "| pass / floor | e2e before | e2e after | after / before | e2e / floor |")
        print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|")
        for name in names:
            spec = models.NETWORKS[name]
            weights = models.make_weights(spec, args.seed)
            for variant in args.variants.split(","):
                exported = models.export_stablehlo(spec, weights, weights_as=variant,
                                                   form=args.form)
                t = _alternating_medians(_cases(exported, base_package), args.repeats)
                floor = t["floor"]
                print(
                    f"| {spec.title} | {variant} | {_ms(floor)} "
                    f"| {_ms(t['pass before'])} | {_ms(t['pass after'])} "
                    f"| {t['pass after'] / t['pass before']:.2f}x "
                    f"| {t['pass before'] / floor:.2f}x -> {t['pass after'] / floor:.2f}x "
                    f"| {_ms(t['e2e before'])} | {_ms(t['e2e after'])} "
                    f"| {t['e2e after'] / t['e2e before']:.2f}x "
                    f"| {t['e2e before'] / floor:.2f}x -> {t['e2e after'] / floor:.2f}x |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
