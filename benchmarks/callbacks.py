"""Where a pass's per-fold time goes: each pattern callback's thread CPU time, by pattern
and outcome (folded, removed, declined), beside the pass's own and the walk after the
driver (`report_chains_left`); optionally a cProfile of the pass.

The network is built and exported as `compare.py` builds it (`models.export_stablehlo`,
the same forms and weight variants), loaded once per pass with `io.load`, and folded with
`passes.run_pipeline` (the pass alone, as `compare.py` times it). Each pattern's `apply`
is wrapped for the measurement (`passes.PATTERNS` is replaced while this runs); the first
pass is a warm-up and not counted.

Example:
  python benchmarks/callbacks.py --models mobilenet_v2 --form jax
  python benchmarks/callbacks.py --models mobilenet_v2 --variants arguments --profile 30
"""

from __future__ import annotations

import argparse
import cProfile
import collections
import io
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = models.argument_parser(__doc__)
    parser.add_argument("--models", default="mobilenet_v2",
                        help="comma-separated network names (default: %(default)s)")
    parser.add_argument("--variants", default="constants,arguments",
                        help="weights as 'constants', 'arguments' or both (default: both)")
    parser.add_argument("--form", default="jax", choices=models.FORMS,
                        help="how batch norms are written (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=8,
                        help="timed passes; per-callback times are their mean (default 8)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print the N functions of most internal time in a "
                             "cProfile of 3 more passes (default: none)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    return parser.parse_args(argv)


def _timed(patterns, stats: dict) -> tuple:
    """`patterns` with each `apply` timed into `stats[(name, outcome)] = [calls, seconds]`."""
    from stablehlo_bnfold.fold.rewriter import Outcome, Pattern

    def wrap(pattern: Pattern) -> Pattern:
        def apply(op, rw, _apply=pattern.apply, _name=pattern.name):
            start = time.thread_time()
            outcome = _apply(op, rw)
            entry = stats[(_name, "declined" if outcome is Outcome.SKIPPED else outcome.value)]
            entry[0] += 1
            entry[1] += time.thread_time() - start
            return outcome

        return Pattern(pattern.name, pattern.root, apply)

    return tuple(wrap(p) for p in patterns)


def measure(data, repeats: int, profile: int) -> str:
    """The table of one input (a portable artifact's bytes or MLIR text)."""
    from stablehlo_bnfold import io as sio
    from stablehlo_bnfold import passes, report

    stats: dict = collections.defaultdict(lambda: [0, 0.0])
    walk_after = [0.0]
    original_patterns, original_left = passes.PATTERNS, passes.report_chains_left

    def left(*args):
        start = time.thread_time()
        original_left(*args)
        walk_after[0] += time.thread_time() - start

    def one(profiler=None) -> float:
        context = sio.make_context()
        loaded = sio.load(data, context)
        with context:
            start = time.thread_time()
            if profiler is not None:
                profiler.enable()
            passes.run_pipeline(loaded.module, passes.ARGUMENT, report.Recorder())
            if profiler is not None:
                profiler.disable()
            return time.thread_time() - start

    passes.PATTERNS = _timed(original_patterns, stats)
    passes.report_chains_left = left
    try:
        one()  # warm-up
        stats.clear()
        walk_after[0] = 0.0
        times = [one() for _ in range(repeats)]
    finally:
        passes.PATTERNS, passes.report_chains_left = original_patterns, original_left
    lines = [
        f"pass: {statistics.median(times) * 1e3:.1f} ms CPU (median of {repeats}, callbacks timed)",
        "",
        "| pattern | outcome | calls a pass | us each | ms a pass |",
        "|---|---|---:|---:|---:|",
    ]
    calls = seconds = 0.0
    for (name, outcome), (n, t) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"| {name} | {outcome} | {n / repeats:.0f} | {t / n * 1e6:.1f} | "
                     f"{t / repeats * 1e3:.2f} |")
        calls += n / repeats
        seconds += t / repeats
    lines += ["", f"callbacks a pass: {calls:.0f}, {seconds * 1e3:.1f} ms in them; "
                  f"report_chains_left {walk_after[0] / repeats * 1e3:.1f} ms"]
    if profile:
        profiler = cProfile.Profile()
        for _ in range(3):
            one(profiler)
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(profile)
        lines += ["", text.getvalue()]
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    for name in args.models.split(","):
        spec = models.NETWORKS[name]
        weights = models.make_weights(spec, args.seed)
        for variant in args.variants.split(","):
            exported = models.export_stablehlo(spec, weights, weights_as=variant, form=args.form)
            data = (models.export_text(exported) if args.form == "torch_mlir"
                    else exported.mlir_module_serialized)
            print(f"\n### {spec.title}, `{args.form}`, weights as {variant}\n")
            print(measure(data, args.repeats, args.profile))


if __name__ == "__main__":
    main()
