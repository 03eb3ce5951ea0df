"""The cpu target on the model zoo against onnxruntime and OpenVINO, in one table.

For each model of models/zoo/manifest.json (and, with --workloads, the small workloads of
models/ at batch 1 in f32), one `vtc bench --strategies none,greedy --json` after another on a
quiet machine: vtc none and greedy, onnxruntime and OpenVINO (f32 precision, where installed),
all in the same run, on the same inputs and thread count, their timed runs in blocks taken in
turn (so that load on the host weighs on every system alike), and the steps left on the
reference interpreter. The last line is

    cpu-zoo: geomean speedup over onnxruntime S, min M, models N

(speedup: onnxruntime's median over vtc greedy's). --json FILE keeps every row. With --rounds R
every model is timed in R runs of `vtc bench`, each model's rounds apart from the others' (all
models once, then all again): a row's times are the medians over its rounds, so a spell of load
on the host that falls on one run of a peer, or on the start of one row, weighs once in R.

    python3 bench/cpu_zoo.py --vtc build/tools/vtc [--only REGEX] [--repeat 50] [--rounds 3]
                             [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "models", "zoo")


def models(args) -> list[tuple[str, str]]:
    with open(os.path.join(ZOO, "manifest.json")) as f:
        entries = [(e["name"], os.path.join(ZOO, e["file"])) for e in json.load(f)["models"]]
    if args.workloads:
        out = os.path.join(args.work, "workloads")
        subprocess.run([sys.executable, os.path.join(ROOT, "models", "generate.py"), "--out", out,
                        "--size", "small", "--dtype", "f32", "--batch", "1"], check=True,
                       capture_output=True)
        entries += [(f[:-len(".onnx")], os.path.join(out, f)) for f in sorted(os.listdir(out))
                    if f.endswith(".onnx")]
    return [(n, p) for n, p in entries if re.search(args.only, n)]


def bench(args, name: str, path: str, round_: int) -> dict:
    row = {"model": name}
    out = os.path.join(args.work, f"{name}.{round_}.json")
    cmd = [args.vtc, "bench", path, "--strategies", "none,greedy", "--repeat", str(args.repeat),
           "--interleave", str(max(1, min(args.repeat, args.interleave))), "--json", out, "--quiet"]
    if name.startswith(("llama3_", "gemma2_")):
        cmd += ["--donate", "past_k", "past_v"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        row["error"] = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:200]
        return row
    with open(out) as f:
        doc = json.load(f)
    st = doc["strategies"]
    row.update({"none_ms": st["none"]["median_ms"], "greedy_ms": st["greedy"]["median_ms"],
                "interpreted": st["greedy"]["interpreted"],
                "onnxruntime_ms": doc["onnxruntime"].get("median_ms"),
                "openvino_ms": doc["openvino"].get("median_ms"),
                "threads": doc["threads"]})
    if row["onnxruntime_ms"]:
        row["speedup_over_onnxruntime"] = row["onnxruntime_ms"] / row["greedy_ms"]
    return row


def merged(rounds: list[dict]) -> dict:
    """One model's rounds as one row: each time the median over the rounds that measured it (a
    round that failed keeps its error in the row, which fails the table)."""
    ok = [r for r in rounds if "error" not in r]
    if not ok:
        return rounds[-1]
    row = {"model": ok[0]["model"], "rounds": len(ok), "interpreted": ok[0]["interpreted"],
           "threads": ok[0]["threads"]}
    if len(ok) < len(rounds):
        row["error"] = next(r["error"] for r in rounds if "error" in r)
    for key in ("none_ms", "greedy_ms", "onnxruntime_ms", "openvino_ms"):
        values = [r[key] for r in ok if r.get(key)]
        row[key] = statistics.median(values) if values else None
        row[key.replace("_ms", "_rounds_ms")] = values
    if row["onnxruntime_ms"]:
        row["speedup_over_onnxruntime"] = row["onnxruntime_ms"] / row["greedy_ms"]
    return row


def ms(v) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vtc", default=os.path.join(ROOT, "build", "tools", "vtc"))
    parser.add_argument("--only", default="", help="regex over model names")
    parser.add_argument("--workloads", action="store_true",
                        help="also the small workloads of models/ (batch 1, f32)")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--interleave", type=int, default=10,
                        help="blocks of timed runs vtc none, greedy and the peers take in turn "
                             "(vtc bench --interleave), so that a spell of load on the host "
                             "falls on all alike")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of every model, the models' rounds taken in turn; a row is "
                             "the median over its rounds")
    parser.add_argument("--json", help="every row as JSON")
    parser.add_argument("--work", default=None, help="folder for the runs' files")
    args = parser.parse_args()
    args.work = args.work or tempfile.mkdtemp(prefix="vtc-cpu-zoo-")
    os.makedirs(args.work, exist_ok=True)

    chosen = models(args)
    earlier: dict[str, list[dict]] = {name: [] for name, _ in chosen}
    for round_ in range(1, max(1, args.rounds)):
        print(f"round {round_} of {args.rounds} ...", file=sys.stderr, flush=True)
        for name, path in chosen:
            earlier[name].append(bench(args, name, path, round_))
    rows = []
    print(f"{'model':<34} {'none':>8} {'greedy':>8} {'ort':>8} {'openvino':>8} {'interp':>6} "
          f"{'vs ort':>7}", flush=True)
    for name, path in chosen:
        row = merged(earlier[name] + [bench(args, name, path, max(1, args.rounds))])
        rows.append(row)
        if "error" in row:
            print(f"{name:<34} error: {row['error']}", flush=True)
            if "greedy_ms" not in row:
                continue
        speed = row.get("speedup_over_onnxruntime")
        print(f"{name:<34} {ms(row['none_ms']):>8} {ms(row['greedy_ms']):>8} "
              f"{ms(row['onnxruntime_ms']):>8} {ms(row['openvino_ms']):>8} "
              f"{row['interpreted']:>6} {(f'{speed:.2f}x' if speed else 'n/a'):>7}", flush=True)
    speeds = [r["speedup_over_onnxruntime"] for r in rows if r.get("speedup_over_onnxruntime")]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    if speeds:
        geo = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        print(f"cpu-zoo: geomean speedup over onnxruntime {geo:.3f}, min {min(speeds):.3f}, "
              f"models {len(speeds)}")
    else:
        print("cpu-zoo: geomean speedup over onnxruntime n/a, min n/a, models 0")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
