#!/usr/bin/env python3
"""Before and after: the pass and fold_batch_norm of an older revision of the package
against the working tree's, interleaved in one process on the benchmark networks.

The older revision's `python/stablehlo_bnfold` is taken with `git archive REV` into a
temporary directory and imported as `stablehlo_bnfold_base` (the package imports itself
only relatively); with --after REV2 the newer one is too, as `stablehlo_bnfold_after`, so
that the working tree may change while it runs. For each network and weights variant the cases run in turn, as in
run.py: floor (this tree's io.load + io.dump, consume=True; for torch-mlir text MLIR's
parser and printer, as forms.py), pass before, pass after, e2e before, e2e after, with
before and after swapped every other round so that neither always runs right after the
floor (which leaves a lot of freed memory behind); one untimed round first, then the
median of each, of wall time and of the thread's CPU time. Timing both in one process, a
few seconds apart, keeps the machine's drift out of the before/after ratio; on a shared
machine the CPU-time ratio is the one to read.

Before timing, each version folds the input once and the digests of the two outputs are
compared ("identical" in the last column). Last, the pass's CPU time is fitted, over all
rows, as a cost per fold plus a cost per GB of weights, before and after.

Example:
  python benchmarks/compare.py --base 58e1802                 # ResNet-18, ResNet-50, MobileNetV2
  python benchmarks/compare.py --base HEAD~2 --models mobilenet_v2 --repeats 21
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
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
from measure import Case, fit, interleaved_samples  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = models.argument_parser(__doc__)
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--after", help="git revision to compare (default: the working tree)")
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2",
                        help="comma-separated network names (default: %(default)s)")
    parser.add_argument("--variants", default="constants,arguments",
                        help="weights as 'constants', 'arguments' or both (default: both)")
    parser.add_argument("--form", default="bn", choices=models.FORMS,
                        help="how batch norms are written (models.FORMS; default: %(default)s); "
                             "torch_mlir: the jax form as torch-mlir's text, folded as a str")
    parser.add_argument("--repeats", type=int, default=15,
                        help="timed rounds; medians are reported (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    return parser.parse_args(argv)


def import_revision(revision: str, into: str, name: str):
    """The package as it was at `revision`, imported as `name`."""
    archive = subprocess.run(
        ["git", "-C", os.path.dirname(HERE), "archive", f"--prefix={name}/",
         f"{revision}:python/stablehlo_bnfold"],
        capture_output=True, check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    if into not in sys.path:
        sys.path.insert(0, into)
    return importlib.import_module(name)


def _data(exported, form: str):
    """The input the cases read: the portable artifact, or torch-mlir's text."""
    return models.export_text(exported) if form == "torch_mlir" else exported.mlir_module_serialized


def _cases(exported, data, base_package, after_package) -> dict[str, Case]:
    from jaxlib.mlir import ir

    here = {name: importlib.import_module(f"{after_package.__name__}.{name}")
            for name in ("io", "passes", "report")}
    there = {name: importlib.import_module(f"{base_package.__name__}.{name}")
             for name in ("io", "passes", "report")}

    def floor(_):
        context = here["io"].make_context()
        if isinstance(data, str):  # MLIR's own parser and printer, as forms.py
            buffer = io.BytesIO()
            ir.Module.parse(data, context).operation.print(file=buffer, binary=True)
            return buffer.getvalue()
        loaded = here["io"].load(data, context)
        with context:
            return here["io"].dump(loaded, consume=True)

    def pass_case(package):
        def setup():
            context = package["io"].make_context()
            return context, package["io"].load(data, context)  # resources inlined

        def run(arg):  # not session.run: the older revision may have no session module
            context, loaded = arg
            with context:
                package["passes"].run_pipeline(loaded.module, package["passes"].ARGUMENT,
                                               package["report"].Recorder())

        return Case(run, setup=setup)

    given = data if isinstance(data, str) else exported
    return {
        "floor": Case(floor),
        "pass before": pass_case(there),
        "pass after": pass_case(here),
        "e2e before": Case(lambda _: base_package.fold_batch_norm(given)),
        "e2e after": Case(lambda _: after_package.fold_batch_norm(given)),
    }


def _alternating_medians(cases: dict[str, Case], repeats: int
                         ) -> dict[str, tuple[float, float]]:
    """(wall, thread CPU) medians over `repeats` rounds (after one untimed round), with
    the before and after cases swapped in every other round."""
    swapped = {name: name.replace("before", "@").replace("after", "before").replace("@", "after")
               for name in cases}
    interleaved_samples(cases, 1, warmup=0)  # the untimed round
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for round_ in range(repeats):
        order = list(cases) if round_ % 2 == 0 else [swapped[name] for name in cases]
        in_order = {name: cases[name] for name in order}
        for name, samples in interleaved_samples(in_order, 1, warmup=0).items():
            times[name] += samples
    return {name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
            for name, values in times.items()}


def _outputs(exported, data, base_package, after_package) -> tuple[str, str, int]:
    """Digests of the folded module before and after (the bytes of the artifact, or the
    text), and the number of folds after."""
    given = data if isinstance(data, str) else exported
    digests = []
    for package in (base_package, after_package):
        folded, report = package.fold_batch_norm(given, with_report=True)
        out = folded if isinstance(folded, str) else folded.mlir_module_serialized
        digests.append(hashlib.sha256(out.encode() if isinstance(out, str) else out).hexdigest())
    return digests[0], digests[1], report.folded


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def _pair(t: tuple[float, float]) -> str:
    return f"{_ms(t[0])} / {_ms(t[1])}"


def _ratio(after: tuple[float, float], before: tuple[float, float]) -> str:
    return f"{after[0] / before[0]:.2f}x / {after[1] / before[1]:.2f}x"


def main(argv=None) -> int:
    args = parse_args(argv)
    names = args.models.split(",")
    unknown = [n for n in names if n not in models.NETWORKS]
    if unknown:
        print(f"compare.py: error: unknown network(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    rows: dict[str, list[tuple[int, float, float]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        base_package = import_revision(args.base, tmp, "stablehlo_bnfold_base")
        after_package = (importlib.import_module("stablehlo_bnfold") if args.after is None
                         else import_revision(args.after, tmp, "stablehlo_bnfold_after"))
        print(f"before: {args.base}; after: {args.after or 'the working tree'}; form {args.form}; "
              f"{args.repeats} interleaved rounds; times in ms as wall / thread CPU\n")
        print("| network | weights | folds | floor | pass before | pass after | after / before "
              "| e2e before | e2e after | after / before | e2e / floor (CPU) | output |")
        print("|---|---|---:|---:|---:|---:|---|---:|---:|---|---|---|")
        for name in names:
            spec = models.NETWORKS[name]
            weights = models.make_weights(spec, args.seed)
            for variant in args.variants.split(","):
                exported = models.export_stablehlo(spec, weights, weights_as=variant,
                                                   form=args.form)
                data = _data(exported, args.form)
                before, after, folds = _outputs(exported, data, base_package, after_package)
                t = _alternating_medians(_cases(exported, data, base_package, after_package), args.repeats)
                gb = models.weight_bytes(weights) / 1e9 if variant == "constants" else 0.0
                rows["before"].append((folds, gb, t["pass before"][1]))
                rows["after"].append((folds, gb, t["pass after"][1]))
                floor = t["floor"][1]
                same = "identical" if before == after else f"differs ({before[:8]} -> {after[:8]})"
                print(
                    f"| {spec.title} | {variant} | {folds} | {_pair(t['floor'])} "
                    f"| {_pair(t['pass before'])} | {_pair(t['pass after'])} "
                    f"| {_ratio(t['pass after'], t['pass before'])} "
                    f"| {_pair(t['e2e before'])} | {_pair(t['e2e after'])} "
                    f"| {_ratio(t['e2e after'], t['e2e before'])} "
                    f"| {t['e2e before'][1] / floor:.2f}x -> {t['e2e after'][1] / floor:.2f}x "
                    f"| {same} |",
                    flush=True,
                )
    for which, measured in rows.items():
        fitted = fit(measured)
        if fitted is not None:
            print(f"\npass CPU time {which}: {fitted[0] * 1e3:.3f} ms per fold "
                  f"+ {fitted[1]:.2f} s per GB of weights (least squares over the rows above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
