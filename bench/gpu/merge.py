"""Merges the GPU benchmark's runs into one table, one JSON file and one chart.

Takes run.py's run.json files (or the folders holding them), and merged gpu-bench.json files
such as a committed bench/results/h200-<date>.json (each of its entries counts as a case of the
run it came from), so a rerun of some workloads can replace their rows in an earlier table; a
case measured in several inputs is taken from the last one given (ratios are only meaningful
within one run, so a case's systems always come from the same run). Warm-up runs are skipped.
Writes into --out:

    gpu-bench.txt   the printed table, ending with
                    gpu-bench: geomean speedup over best peer S, min M, workloads W
    gpu-bench.json  {"workloads": [one entry per workload and batch], "summary", "runs"}
    gpu-bench.png   each system's latency over the best peer's, per workload and batch

    python3 bench/gpu/merge.py RUN.json|RUN_DIR ... --out DIR
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import chart
from record import LABELS, SYSTEMS

MAX_BREAKDOWN_ROWS = 8


def load_runs(paths: list[str]) -> list[dict]:
    runs = []
    for p in paths:
        path = os.path.join(p, "run.json") if os.path.isdir(p) else p
        with open(path) as f:
            doc = json.load(f)
        if "workloads" in doc and "cases" not in doc:
            runs += merged_runs(doc, path)
            continue
        doc["path"] = path
        runs.append(doc)
    return runs


def merged_runs(doc: dict, path: str) -> list[dict]:
    """A merged table as the runs its entries came from, in the table's order."""
    by_path = {r["path"]: r for r in doc.get("runs", [])}
    runs: dict[str, dict] = {}
    for e in doc["workloads"]:
        rec = {k: v for k, v in e.items() if k not in ("run", "run_started")}
        src = e.get("run") or path
        if src not in runs:
            info = {k: v for k, v in by_path.get(src, {}).items() if k != "path"}
            info.setdefault("started", e.get("run_started"))
            runs[src] = {"path": src, "run": info, "cases": []}
        runs[src]["cases"].append(rec)
    return list(runs.values())


def merge_cases(runs: list[dict]) -> list[dict]:
    """One entry per (workload, batch, size, dtype), from the last run holding it, in the
    order first seen."""
    merged: dict[tuple, dict] = {}
    for run in runs:
        if run["run"].get("warm_up"):
            continue
        for rec in run["cases"]:
            key = (rec["workload"], rec["batch"], rec["size"], rec["dtype"])
            merged[key] = {**rec, "run": run["path"], "run_started": run["run"]["started"]}
    return list(merged.values())


def summary(entries: list[dict]) -> dict:
    speedups = [e["speedup_over_best_peer"] for e in entries if e.get("speedup_over_best_peer")]
    if not speedups:
        return {"geomean_speedup": None, "min_speedup": None, "workloads": 0}
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    return {"geomean_speedup": geo, "min_speedup": min(speedups), "workloads": len(speedups)}


def summary_line(s: dict) -> str:
    if not s["workloads"]:
        return "gpu-bench: geomean speedup over best peer n/a, min n/a, workloads 0"
    return (f"gpu-bench: geomean speedup over best peer {s['geomean_speedup']:.3f}, "
            f"min {s['min_speedup']:.3f}, workloads {s['workloads']}")


def fmt(v, spec: str = ".3f", none: str = "—") -> str:
    return none if v is None else format(v, spec)


def system_cell(e: dict, name: str) -> str:
    s = e["systems"][name]
    if not s.get("available"):
        return "n/a"
    ok = s.get("check", {}).get("ok")
    mark = "" if name.startswith("vtc") or ok else ("?" if ok is None else "!")
    return fmt(s["median_ms"]) + mark


def table_lines(entries: list[dict]) -> list[str]:
    head = ["workload", "b", *[LABELS[s] for s in SYSTEMS], "best peer", "floor", "speedup",
            "greedy/floor", "peak MB vtc", "peak MB eager", "copies", "vtc ready s"]
    rows = []
    for e in entries:
        g = e["systems"]["vtc_greedy"]
        compile_s = (e.get("vtc_compile") or {}).get("greedy", {}).get("ready_s")
        rows.append([
            f"{e['workload']} {e['dtype']}", str(e["batch"]),
            *[system_cell(e, s) for s in SYSTEMS],
            LABELS.get(e["best_peer"], "—"), fmt(e.get("floor_ms")),
            fmt(e.get("speedup_over_best_peer"), ".2f") + ("x" if e.get(
                "speedup_over_best_peer") else ""),
            fmt(g["median_ms"] / e["floor_ms"] if g.get("available") and e.get("floor_ms")
                else None, ".2f"),
            fmt(e["peak_mb"].get("vtc_greedy"), ".1f"), fmt(e["peak_mb"].get("torch_eager"), ".1f"),
            f"{e.get('copies_before', '—')}->{e.get('copies_after', '—')}",
            fmt(compile_s, ".1f") + ("" if not e.get("vtc_compile_cached") else " (cached)"),
        ])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return [line(head), "-+-".join("-" * w for w in widths), *[line(r) for r in rows]]


def notes_lines(entries: list[dict]) -> list[str]:
    out = []
    for e in entries:
        title = (f"{e['workload']} {e['dtype']} b{e['batch']} (model from "
                 f"{e.get('model_source') or '?'}, {e.get('rotate', 1)} input set(s) in turn)")
        lines = []
        for name in SYSTEMS:
            s = e["systems"][name]
            if not s.get("available"):
                lines.append(f"  {LABELS[name]}: n/a: {s.get('reason')}")
            elif s.get("check") and s["check"]["ok"] is None:
                lines.append(f"  {LABELS[name]}: {s['check']['problem']}")
            elif s.get("check") and not s["check"]["ok"]:
                lines.append(f"  {LABELS[name]}: OUTPUTS DIFFER FROM VTC'S: "
                             f"{s['check']['problem']}")
        fl = e.get("floor") or {}
        if fl.get("floor_ms") is not None:
            b = fl["bytes"]
            lines.append(f"  floor {fl['floor_ms']:.4f} ms ({fl['bound']}-bound): "
                         f"{b['total'] / 1e6:.1f} MB (weights {b['weights'] / 1e6:.1f}, inputs "
                         f"{b['inputs'] / 1e6:.1f}, outputs {b['outputs'] / 1e6:.1f}), "
                         + (f"{fl['flops'] / 1e9:.2f} GFLOP" if fl["flops"] is not None
                            else "FLOPs unknown (vtc did not run)"))
        else:
            lines.append(f"  floor n/a: {fl.get('reason')}")
        c = e.get("ceilings") or {}
        if c.get("available"):
            lines.append(f"  ceilings: copy {c['copy_bytes_per_s'] / 1e12:.4g} TB/s, "
                         f"{c['matrix_dtype']} matrix {c['matrix_flops_per_s'] / 1e12:.4g} "
                         f"TFLOP/s ({c['device']}; {c['how']})")
        firsts = ", ".join(f"{LABELS[n]} {e['systems'][n]['first_call_s']:.1f}" for n in SYSTEMS
                           if e["systems"][n].get("first_call_s") is not None)
        if firsts:
            lines.append(f"  peers' first call (compile) s: {firsts}")
        peaks = ", ".join(f"{LABELS[n]} {v:.1f}" for n, v in e["peak_mb"].items()
                          if v is not None)
        if peaks:
            lines.append(f"  peak MB: {peaks}")
        parts = e["systems"].get("vtc_greedy", {}).get("workspace_parts") or {}
        held = ", ".join(f"{what} {b / 1e6:.1f}" for what, b in parts.items() if b > 0)
        if held:
            lines.append(f"  vtc greedy workspace MB: {held}")
        rows = e.get("breakdown") or []
        if rows:
            lines.append("  vtc greedy, slowest steps: ms  share  GB/s (of copy)  "
                         "TFLOP/s (of matrix)  step")
        for r in rows[:MAX_BREAKDOWN_ROWS]:
            bw = "" if r["gb_per_s"] is None else f"{r['gb_per_s']:8.1f}"
            bw += "" if r["of_copy_bw"] is None else f" ({100 * r['of_copy_bw']:4.1f}%)"
            tf = "" if r["tflop_per_s"] is None else f"{r['tflop_per_s']:7.2f}"
            tf += "" if r["of_matrix_rate"] is None else f" ({100 * r['of_matrix_rate']:4.1f}%)"
            lines.append(f"    {r['ms']:8.4f} {100 * r['share']:5.1f}%  {bw:17s}  {tf:16s}  "
                         f"{r['name']}")
        out += [title, *lines]
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run.json files or the folders holding them")
    parser.add_argument("--out", required=True)
    parser.add_argument("--quiet", action="store_true", help="print the last line only")
    args = parser.parse_args(argv)
    runs = load_runs(args.runs)
    entries = merge_cases(runs)
    s = summary(entries)
    os.makedirs(args.out, exist_ok=True)
    text = ["Times: median ms after warm-up (vtc: CUDA events around a run on its stream, wall "
            "clock on the cpu target; torch: CUDA events; jax: wall clock around a blocking "
            "call).",
            "'!' a peer whose outputs differ from vtc's, '?' one unchecked (neither is ever "
            "the best peer); speedup = best "
            "peer / vtc greedy; peak MB: vtc's arena + weights + bound tensors, torch's "
            "max_memory_allocated.", "",
            *table_lines(entries), "", *notes_lines(entries), "", summary_line(s)]
    with open(os.path.join(args.out, "gpu-bench.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    doc = {"workloads": entries, "summary": s,
           "runs": [{"path": r["path"], **r["run"]} for r in runs]}
    with open(os.path.join(args.out, "gpu-bench.json"), "w") as f:
        json.dump(doc, f, indent=1)
    chart_note = chart.write(os.path.join(args.out, "gpu-bench.png"), entries, SYSTEMS, LABELS)
    if not args.quiet:
        print("\n".join(text[:-1]))
        print(f"chart: {chart_note}")
    print(text[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
