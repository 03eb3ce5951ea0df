"""The cpu target on the model zoo against onnxruntime and OpenVINO, in one table.

For each model of models/zoo/manifest.json (and, with --workloads, the small workloads of
models/ at batch 1 in f32), one `vtc bench --strategies none,greedy --json` after another on a
quiet machine: vtc none and greedy (their timed runs in blocks taken in turn, so that load on
the host weighs on both alike), onnxruntime and OpenVINO (f32 precision, where installed;
`vtc bench` times both in the same run, on the same inputs and thread count), and the steps left
on the reference interpreter. The last line is

    cpu-zoo: geomean speedup over onnxruntime S, min M, models N

(speedup: onnxruntime's median over vtc greedy's). --json FILE keeps every row.

    python3 bench/cpu_zoo.py --vtc build/tools/vtc [--only REGEX] [--repeat 50] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
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


def bench(args, name: str, path: str) -> dict:
    row = {"model": name}
    out = os.path.join(args.work, name + ".json")
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
                        help="blocks of timed runs none and greedy take in turn (vtc bench "
                             "--interleave), so that a spell of load on the host falls on both")
    parser.add_argument("--json", help="every row as JSON")
    parser.add_argument("--work", default=None, help="folder for the runs' files")
    args = parser.parse_args()
    args.work = args.work or tempfile.mkdtemp(prefix="vtc-cpu-zoo-")
    os.makedirs(args.work, exist_ok=True)

    rows = []
    print(f"{'model':<34} {'none':>8} {'greedy':>8} {'ort':>8} {'openvino':>8} {'interp':>6} "
          f"{'vs ort':>7}", flush=True)
    for name, path in models(args):
        row = bench(args, name, path)
        rows.append(row)
        if "error" in row:
            print(f"{name:<34} error: {row['error']}", flush=True)
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
