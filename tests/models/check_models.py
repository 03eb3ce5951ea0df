"""Whole-model test: every small workload model runs in vtc and matches onnxruntime.

Generates the small models (models/generate.py), computes onnxruntime references on seeded
inputs (models/check_ort.py), runs each model through `vtc run` with those inputs, compares
with models/compare.py (relative L2: f32 1e-5, f16 1e-2, bf16 1e-2 against an f32
reference on bf16 values), and checks that `vtc info` reports the model's data-movement ops.
With a compiled target it first runs `vtc check` on the same inputs: strategies none, type1
and greedy must give bitwise-identical outputs that match the reference interpreter and
onnxruntime. Models are checked side by side, one per core. Prints one table and exits
non-zero on any failure.

    python3 tests/models/check_models.py --vtc build/tools/vtc --work build/models-test
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def check_model(args: argparse.Namespace, models_dir: str, ref_dir: str, out_dir: str,
                name: str) -> tuple[list[str], int]:
    """Checks one model; returns the lines to print and whether it failed (0 or 1)."""
    lines: list[str] = []
    model = os.path.join(models_dir, name + ".onnx")
    with open(os.path.join(ref_dir, name, "meta.json")) as f:
        json.load(f)
    inputs_dir = os.path.join(ref_dir, name, "inputs")
    bindings = []
    for file in sorted(os.listdir(inputs_dir)):
        bindings += ["--input", f"{file[:-4]}={os.path.join(inputs_dir, file)}"]
    actual = os.path.join(out_dir, name)
    if args.target != "ref":
        r = run([args.vtc, "check", model] + bindings)
        last = r.stdout.strip().splitlines()[-1:] or [r.stderr.strip()]
        lines.append(f"{name}: {last[0]}")
        if r.returncode != 0:
            lines.append(r.stdout[-3000:] + r.stderr[-3000:])
            return lines, 1
    command = [args.vtc, "run", model, "--target", args.target, "--output-dir", actual]
    if args.target != "ref":
        command += ["--strategy", args.strategy]
    r = run(command + bindings)
    if r.returncode != 0:
        lines.append(f"FAIL {name}: vtc run: {r.stderr.strip()}")
        return lines, 1
    failed = 0
    r = run([sys.executable, f"{ROOT}/models/compare.py", "--expected",
             os.path.join(ref_dir, name), "--actual", actual, "--tol-bf16", "1e-2"])
    lines.append(r.stdout.rstrip())
    if r.returncode != 0:
        failed = 1
    info = run([args.vtc, "info", model])
    m = re.search(r"info: (\d+) ops, (\d+) data-movement ops moving (\d+) bytes", info.stdout)
    if info.returncode != 0 or not m or int(m.group(2)) == 0:
        lines.append(f"FAIL {name}: vtc info reports no data-movement ops: {info.stderr.strip()}")
        failed = 1
    return lines, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", default="ref")
    parser.add_argument("--strategy", default="greedy", help="for compiled targets")
    parser.add_argument("--only", default="", help="regex: only models whose name matches")
    args = parser.parse_args()

    models_dir = os.path.join(args.work, "models")
    ref_dir = os.path.join(args.work, "ref")
    out_dir = os.path.join(args.work, "out")
    for cmd in ([sys.executable, f"{ROOT}/models/generate.py", "--out", models_dir, "--size",
                 "small"],
                [sys.executable, f"{ROOT}/models/check_ort.py", "--models", models_dir, "--out",
                 ref_dir]):
        r = run(cmd)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return 1

    names = sorted(n for n in os.listdir(ref_dir)
                   if os.path.exists(os.path.join(ref_dir, n, "meta.json")))
    names = [n for n in names if re.search(args.only, n)]
    # Models are checked side by side, one per core (compiling a model keeps one core busy);
    # each model's lines are printed together, in name order.
    workers = max(1, min(len(names), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda name: check_model(args, models_dir, ref_dir, out_dir, name),
                                names))
    failures = 0
    for lines, failed in results:
        if lines:
            print("\n".join(lines))
        failures += failed
    print(f"models: {len(names) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
