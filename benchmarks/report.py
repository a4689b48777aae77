"""Markdown tables from one run of run.py (the dict it also writes with --json)."""

from __future__ import annotations

__all__ = ["render"]

TARGETS = {
    "pass": 0.5,   # pass alone <= 0.5x floor
    "e2e": 1.5,    # end to end <= 1.5x floor
    "memory": 2.0,  # peak memory <= 2x weights
}


def _s(value) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def _x(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def render(run: dict) -> str:
    lines = [
        f"Date: {run['date']}  ",
        f"Machine: {run['machine']}  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items()) + "  ",
        f"Command: `{run['command']}`  ",
        f"Load average at the end (1, 5, 15 min): {run.get('load_average', '-')}",
        "",
    ]
    results = [r for r in run["results"] if "error" not in r]
    for r in run["results"]:
        if "error" in r:
            lines.append(f"- {r['network']}: {r['error']}")
    lines += _ours_table(results, "constants",
                         "Weights as constants: pass against the I/O floor")
    lines += _ours_table(results, "arguments", "Weights as arguments of `main`")
    lines += _memory_table(results)
    lines += _peer_table(results)
    lines += _latency_table(results)
    lines += _targets(results)
    return "\n".join(lines)


def _with_cpu(o: dict, key: str) -> str:
    """Wall time, and the thread's CPU time after it where the run recorded it."""
    cpu = o.get("cpu", {}).get(key)
    return _s(o[key]) if cpu is None else f"{_s(o[key])} (CPU {_s(cpu)})"


def _ours_table(results, variant, title) -> list[str]:
    lines = [f"### {title}", "",
             "| network | params | artifact MB | BN / conv+BN pairs / folded | floor | pass "
             "| pass / floor | e2e | e2e / floor | pass s/GB | e2e s/GB | act-sized ops "
             "before -> after |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        o = r[variant]
        gb = r["weight_bytes"] / 1e9
        note = f" ({'; '.join(o['skip_reasons'])})" if o["skip_reasons"] and not o["folded"] else ""
        lines.append(
            f"| {r['title']} | {r['parameters'] / 1e6:.1f} M | {_mb(o['artifact_bytes'])} "
            f"| {o['batch_norms']} / {o['pairs']} / {o['folded']}{note} "
            f"| {_with_cpu(o, 'floor')} | {_with_cpu(o, 'pass')} | {_x(o['pass'] / o['floor'])} "
            f"| {_with_cpu(o, 'e2e')} | {_x(o['e2e'] / o['floor'])} "
            f"| {o['pass'] / gb:.2f} | {o['e2e'] / gb:.2f} "
            f"| {o['act_ops_before']} -> {o['act_ops_after']} |"
        )
    return lines + [""]


def _memory_table(results) -> list[str]:
    rows = [r for r in results if "memory" in r["constants"]]
    if not rows:
        return []
    lines = ["### Peak memory above the input, over the weights' size (weights as constants)",
             "",
             "| network | weights MB | floor | pass | e2e |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        m = r["constants"]["memory"]
        cells = [_x(m[p].get("ratio")) if "ratio" in m[p] else "error" for p in
                 ("floor", "pass", "e2e")]
        lines.append(f"| {r['title']} | {_mb(r['weight_bytes'])} | " + " | ".join(cells) + " |")
    return lines + [""]


def _peer_table(results) -> list[str]:
    rows = [r for r in results if "peers" in r]
    if not rows:
        return []
    lines = ["### Peers on the same network (ours / peer < 1: we are faster)", "",
             "| network | tool | pass | ours / peer (pass) | e2e | ours / peer (e2e) | folded |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        o = r["constants"]
        lines.append(f"| {r['title']} | **stablehlo-bnfold** | {_s(o['pass'])} | - "
                     f"| {_s(o['e2e'])} | - | {o['folded']} |")
        for name, p in r["peers"].items():
            if not isinstance(p, dict):
                continue
            if "error" in p:
                lines.append(f"| {r['title']} | {name} | failed: {p['error']} | | | | |")
                continue
            lines.append(
                f"| {r['title']} | {name} {p.get('version', '')} | {_s(p['pass'])} "
                f"| {_x(o['pass'] / p['pass']) if p['pass'] else '-'} | {_s(p['e2e'])} "
                f"| {_x(o['e2e'] / p['e2e']) if p['e2e'] else '-'} | {p['folded']} |"
            )
    return lines + [""]


def _latency_table(results) -> list[str]:
    rows = [r for r in results if "latency" in r["constants"]]
    if not rows:
        return []
    lines = ["### XLA CPU inference, batch 1: original vs folded", "",
             "| network | original | folded | folded / original | rounds | XLA kernels "
             "before -> after | XLA act-sized ops before -> after | folded vs original "
             "(max rel diff) | torch vs StableHLO (max rel diff) |",
             "|---|---:|---:|---:|---:|---|---|---:|---:|"]
    for r in rows:
        lat = r["constants"]["latency"]
        eq = r.get("peers", {}).get("equivalence_max_rel_diff")
        lines.append(
            f"| {r['title']} | {_s(lat['original'])} | {_s(lat['folded'])} "
            f"| {_x(lat['ratio'])} | {lat['rounds']} "
            f"| {lat['xla_kernels'][0]} -> {lat['xla_kernels'][1]} "
            f"| {lat['xla_act_ops'][0]} -> {lat['xla_act_ops'][1]} "
            f"| {lat['max_rel_diff']:.1e} | {'-' if eq is None else f'{eq:.1e}'} |"
        )
    return lines + [""]


def _targets(results) -> list[str]:
    lines = ["### Targets (weights as constants)", ""]
    for r in results:
        o = r["constants"]
        checks = [
            f"pass/floor {o['pass'] / o['floor']:.2f} "
            f"{'<=' if o['pass'] / o['floor'] <= TARGETS['pass'] else '>'} {TARGETS['pass']}",
            f"e2e/floor {o['e2e'] / o['floor']:.2f} "
            f"{'<=' if o['e2e'] / o['floor'] <= TARGETS['e2e'] else '>'} {TARGETS['e2e']}",
        ]
        memory = o.get("memory", {}).get("e2e", {}).get("ratio")
        if memory is not None:
            checks.append(f"e2e peak memory {memory:.2f}x "
                          f"{'<=' if memory <= TARGETS['memory'] else '>'} {TARGETS['memory']}x")
        slower = [name for name, p in r.get("peers", {}).items()
                  if isinstance(p, dict) and "error" not in p
                  and ((p["pass"] and o["pass"] > p["pass"]) or (p["e2e"] and o["e2e"] > p["e2e"]))]
        measured = [p for p in r.get("peers", {}).values()
                    if isinstance(p, dict) and "error" not in p]
        checks.append("peers not measured" if not measured
                      else "faster than every peer" if not slower
                      else "slower than " + ", ".join(slower))
        lines.append(f"- {r['title']}: " + "; ".join(checks))
    return lines + [""]
