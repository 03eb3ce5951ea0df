"""Zoo test: every exported model of models/zoo runs compiled on cpu, nothing on the interpreter.

For each model of models/zoo/manifest.json (those whose export succeeded, and whose name matches
--only), runs `vtc check MODEL --compiled-only`: strategies none, type1 and greedy must give
bitwise-identical outputs that match the reference interpreter and onnxruntime, and no program
may leave a step to the reference interpreter (vtc decides that on the lowered program's steps).
With --bench, also times greedy against onnxruntime (`vtc bench --strategies greedy`). Models
are checked side by side, one per core. Prints one table row per model and exits non-zero on
any failure.

    python3 tests/models/check_zoo.py --vtc build/tools/vtc [--only REGEX] [--bench]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.path.join(ROOT, "models", "zoo")


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def check_model(args: argparse.Namespace, entry: dict) -> tuple[str, int]:
    """One model's table row, and whether it failed (0 or 1)."""
    model = os.path.join(ZOO, entry["file"])
    start = time.monotonic()
    common = ["--quiet", "--python", args.python] + (["--cache-dir", args.cache_dir]
                                                      if args.cache_dir else [])
    r = run([args.vtc, "check", model, "--compiled-only"] + common)
    seconds = time.monotonic() - start
    summary = re.search(r"check: strategies bitwise-equal: (\w+); max rel err vs ref: (\S+); "
                        r"vs onnxruntime: (\S+)", r.stdout)
    interpreted = [int(n) for n in re.findall(r"(\d+) on the interpreter", r.stdout)]
    row = (f"{entry['name']:<26} {entry['exporter']:<11} {entry['nodes']:>5} "
           f"{max(interpreted, default=-1):>6} ")
    if summary:
        row += f"{summary.group(1):>8} {summary.group(2):>9} {summary.group(3):>9}"
    else:
        row += f"{'-':>8} {'-':>9} {'-':>9}"
    row += f" {seconds:7.1f}"
    if args.bench and r.returncode == 0:
        b = run([args.vtc, "bench", model, "--strategies", "greedy", "--repeat",
                 str(args.repeat)] + common)
        m = re.search(r"bench: none \S+ ?\S*, greedy (\S+) ms, onnxruntime (\S+) ms", b.stdout)
        row += f" {m.group(1):>9} {m.group(2):>9}" if m else f" {'n/a':>9} {'n/a':>9}"
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-12:])
        return f"{row}  FAIL\n{tail}", 1
    return row, 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--only", default="", help="regex: only models whose name matches")
    parser.add_argument("--python", default=sys.executable, help="python with onnxruntime")
    parser.add_argument("--cache-dir", default="", help="vtc's compiled-model cache")
    parser.add_argument("--bench", action="store_true", help="time greedy and onnxruntime")
    parser.add_argument("--repeat", type=int, default=20, help="timed runs with --bench")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    with open(os.path.join(ZOO, "manifest.json")) as f:
        manifest = json.load(f)
    entries = [e for e in manifest["models"]
               if "failed" not in e and re.search(args.only, e["name"])]
    if not entries:
        print(f"zoo: no model matches '{args.only}'")
        return 1
    header = (f"{'model':<26} {'exporter':<11} {'nodes':>5} {'interp':>6} {'bitwise':>8} "
              f"{'err ref':>9} {'err ort':>9} {'check s':>7}")
    if args.bench:
        header += f" {'greedy ms':>9} {'ort ms':>9}"
    print(header, flush=True)
    # Compiling a model keeps one core busy: one model per core; rows in manifest order, each
    # printed as soon as it and those before it are done.
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row, failed in pool.map(lambda e: check_model(args, e), entries):
            print(row, flush=True)
            failures += failed
    skipped = [e["name"] for e in manifest["models"] if "failed" in e]
    if skipped:
        print(f"zoo: not exported: {', '.join(skipped)}")
    print(f"zoo: {len(entries) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
