"""`vtc bench --interleave N`: every strategy is compiled before any is timed, each one's timed
runs come in N blocks taken in turn (so that load on the host weighs on all alike), and the
figures are those of the plain run: a median and minimum per strategy over --repeat runs, and
each step's time. onnxruntime, where installed, takes its runs in the same N blocks between
vtc's; without it (a python that does not exist) it is n/a with the reason. --interleave outside
[1, --repeat] is refused with its name."""

import json
import os
import subprocess
import sys

from tool_args import small_workload, vtc_and_work


def main() -> int:
    args = vtc_and_work()
    model = small_workload(args.work, "yolo11_c3k2")
    out = os.path.join(args.work, "bench.json")
    r = subprocess.run([args.vtc, "bench", model, "--strategies", "none,greedy", "--repeat", "6",
                        "--interleave", "3", "--json", out, "--python", "/nonexistent/python"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        return 1
    lines = r.stderr.splitlines()
    compiled = [i for i, l in enumerate(lines) if "lowering and compiling" in l]
    timed = [i for i, l in enumerate(lines)
             if l.startswith(("bench: none:", "bench: greedy:")) and "in 3 blocks taken in turn" in l]
    ok = len(compiled) == 2 and len(timed) == 2 and max(compiled) < min(timed)
    with open(out) as f:
        doc = json.load(f)
    ok = ok and doc["interleave"] == 3 and doc["repeat"] == 6
    for name in ("none", "greedy"):
        s = doc["strategies"][name]
        ok = ok and 0 < s["min_ms"] <= s["median_ms"] and len(s["step_times"]) == s["steps"]
    # With onnxruntime: its timed runs in the same 3 blocks, between vtc's.
    with_peer = os.path.join(args.work, "bench_peer.json")
    p = subprocess.run([args.vtc, "bench", model, "--strategies", "greedy", "--repeat", "6",
                        "--interleave", "3", "--json", with_peer, "--python", sys.executable],
                       capture_output=True, text=True)
    ok = ok and p.returncode == 0
    if ok:
        with open(with_peer) as f:
            ort = json.load(f)["onnxruntime"]
        ok = ok and "onnxruntime: 3 warm-up + 6 timed runs on" in p.stderr and \
            "in 3 blocks taken in turn with vtc's" in p.stderr
        ok = ok and (not ort["available"] or (ort["blocks"] == 3 and ort["median_ms"] > 0))
        ok = ok and doc["onnxruntime"]["available"] is False and "nonexistent" in \
            doc["onnxruntime"]["reason"]
    bad = subprocess.run([args.vtc, "bench", model, "--repeat", "2", "--interleave", "3"],
                         capture_output=True, text=True)
    ok = ok and bad.returncode != 0 and "--interleave" in bad.stderr
    if not ok:
        print(r.stderr)
        print(json.dumps(doc["strategies"], indent=1)[:2000])
        print(bad.stderr)
        print(p.stderr)
        return 1
    print("bench --interleave: both strategies compiled first, timed in 3 blocks in turn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
