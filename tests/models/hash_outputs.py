"""Hashes every model's outputs under every strategy, to prove a compiler change bitwise neutral.

Before a change to lowering or code generation, run this on the old build and keep the JSON;
afterwards run it on the new build with `--compare BEFORE.json`. For each model (ONNX files
written by models/generate.py) and strategy it runs `vtc run` on vtc's seeded random inputs
(the same seed for every strategy) and records the sha256 of each output's raw tensor bytes
(the .npy data, not its header): {model: {strategy: {output: sha256}}}. Models with a KV cache
(inputs past_k and past_v) are run twice: as MODEL, and with the cache donated as
MODEL+donate. The comparison prints per model whether every strategy equals BEFORE and
whether the strategies agree with each other, and ends with
`hash-outputs: N equal, M differ`; it exits 1 when any model differs or its strategies
disagree. Compare on the same machine and thread count as BEFORE.

    python3 tests/models/hash_outputs.py --vtc build/tools/vtc --models DIR --work /tmp/w \\
        --cache-dir /tmp/c --out after.json [--only REGEX] [--compare before.json]
    python3 tests/models/hash_outputs.py --results after.json --compare before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

DONATED = ("past_k", "past_v")


def npy_data_sha256(path: str) -> str:
    """sha256 of an .npy file's tensor bytes (C order), not its header."""
    return hashlib.sha256(np.load(path, allow_pickle=False).tobytes()).hexdigest()


def configurations(model_path: str) -> list[tuple[str, list[str]]]:
    """(suffix, extra vtc flags) per way to run the model: a KV cache is also run donated."""
    model = onnx.load(model_path, load_external_data=False)
    inputs = {i.name for i in model.graph.input}
    configs = [("", [])]
    if all(name in inputs for name in DONATED):
        configs.append(("+donate", ["--donate", *DONATED]))
    return configs


def run_all(args) -> dict:
    results = {}
    files = sorted(f for f in os.listdir(args.models) if f.endswith(".onnx"))
    for file in files:
        name = file[: -len(".onnx")]
        if args.only and not re.search(args.only, name):
            continue
        path = os.path.join(args.models, file)
        for suffix, flags in configurations(path):
            key = name + suffix
            results[key] = {}
            for strategy in args.strategies.split(","):
                out_dir = os.path.join(args.work, key, strategy)
                shutil.rmtree(out_dir, ignore_errors=True)
                cmd = [args.vtc, "run", path, "--strategy", strategy, "--target", args.target,
                       "--seed", str(args.seed), "--cache-dir", args.cache_dir,
                       "--output-dir", out_dir, *flags]
                if args.threads is not None:
                    cmd += ["--threads", str(args.threads)]
                start = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True)
                took = time.perf_counter() - start
                if p.returncode != 0:
                    error = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
                    results[key][strategy] = {"error": error}
                    print(f"{key:45s} {strategy:6s} FAILED ({took:.1f} s): {error}",
                          file=sys.stderr, flush=True)
                    continue
                results[key][strategy] = {
                    f[: -len(".npy")]: npy_data_sha256(os.path.join(out_dir, f))
                    for f in sorted(os.listdir(out_dir)) if f.endswith(".npy")}
                print(f"{key:45s} {strategy:6s} {took:6.1f} s", file=sys.stderr, flush=True)
            if args.out:  # after every model, so an interrupted run keeps what it did
                write_json(args.out, results)
    return results


def write_json(path: str, results: dict) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


def agree(by_strategy: dict) -> bool:
    values = list(by_strategy.values())
    return all("error" not in v for v in values) and all(v == values[0] for v in values)


def compare(results: dict, before: dict, only: str | None) -> int:
    equal = differ = disagree = 0
    names = sorted(set(results) | {m for m in before if not only or re.search(only, m)})
    for name in names:
        now, then = results.get(name), before.get(name)
        same = now is not None and now == then and all("error" not in v for v in now.values())
        agreed = now is not None and agree(now)
        equal += same
        differ += not same
        disagree += not agreed
        state = ("missing now" if now is None else "new (not in before)" if then is None
                 else "equal to before" if same else
                 "DIFFERS from before: " + ", ".join(
                     s for s in sorted(set(now) | set(then)) if now.get(s) != then.get(s)))
        print(f"{name:45s} {state}; strategies {'agree' if agreed else 'DISAGREE'}")
    if disagree:
        print(f"hash-outputs: strategies disagree on {disagree} models")
    print(f"hash-outputs: {equal} equal, {differ} differ")
    return 1 if differ or disagree else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vtc", help="the vtc binary (build/tools/vtc)")
    parser.add_argument("--models", help="directory of .onnx files from models/generate.py")
    parser.add_argument("--strategies", default="none,type1,greedy")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--seed", type=int, default=0, help="vtc run's seed for the inputs")
    parser.add_argument("--threads", type=int, help="vtc run --threads (default: vtc's)")
    parser.add_argument("--cache-dir", help="vtc's JIT cache (keep it private to this run)")
    parser.add_argument("--work", help="directory for the outputs vtc writes")
    parser.add_argument("--out", help="write the hashes here as JSON")
    parser.add_argument("--only", help="only models whose name matches this regex")
    parser.add_argument("--results", help="hashes from an earlier run, instead of running vtc")
    parser.add_argument("--compare", metavar="BEFORE.json", help="compare against these hashes")
    args = parser.parse_args(argv)

    if args.results:
        with open(args.results) as f:
            results = json.load(f)
    else:
        missing = [o for o in ("vtc", "models", "cache_dir", "work") if not getattr(args, o)]
        if missing:
            parser.error("running vtc needs --" + ", --".join(m.replace("_", "-") for m in missing))
        results = run_all(args)
    if args.compare:
        with open(args.compare) as f:
            return compare(results, json.load(f), args.only)
    failed = [f"{m} {s}" for m, by in results.items() for s, v in by.items() if "error" in v]
    split = [m for m, by in results.items() if not agree(by)]
    print(f"hash-outputs: {len(results)} models, {len(failed)} failed runs, "
          f"strategies disagree on {len(split)}{': ' + ', '.join(split) if split else ''}")
    return 1 if failed or split else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
