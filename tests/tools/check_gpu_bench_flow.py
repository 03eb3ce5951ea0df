"""Runs the GPU benchmark end to end on the cpu target with the small Llama layer (a donated
KV cache, an int64 position, three outputs) and checks what it writes: vtc bench's JSON, the
outputs it wrote, the case record, the merged table, JSON and chart. Peers that cannot run
here (no torch) must be recorded with a reason; where torch runs they must match vtc.

    python3 tests/tools/check_gpu_bench_flow.py --vtc build/tools/vtc --work DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE = "llama3_layer_small_f32_b1"


def fail(message: str) -> None:
    print(f"FAIL: {message}")
    sys.exit(1)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args(argv)
    out = os.path.join(args.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    # Models and inputs are made anew (a generator may have changed); vtc's cache is kept.
    shutil.rmtree(os.path.join(args.work, "cache", "models"), ignore_errors=True)
    cmd = [sys.executable, os.path.join(ROOT, "bench/gpu/run.py"), out, "--vtc", args.vtc,
           "--size", "small", "--target", "cpu", "--workloads", "llama3_layer", "--batches", "1",
           "--repeat", "3", "--warmup-calls", "1", "--cache", os.path.join(args.work, "cache"),
           "--keep-outputs", "--skip", "torch_max_autotune", "--vtc-threads", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout[-4000:], r.stderr[-4000:])
    if r.returncode != 0:
        fail(f"run.py exit {r.returncode}")
    if not r.stdout.strip().splitlines()[-1].startswith("gpu-bench: geomean speedup over best"):
        fail("the printed table does not end with the gpu-bench line")

    with open(os.path.join(out, CASE, "vtc.json")) as f:
        vtc = json.load(f)
    for strategy in ("none", "greedy"):
        s = vtc["strategies"][strategy]
        for key in ("median_ms", "arena_bytes", "constant_bytes", "bound_bytes", "copies",
                    "ready_s", "compile_s"):
            if key not in s:
                fail(f"vtc.json: {strategy} has no {key}")
        if not s["step_times"] or not all({"ms", "bytes", "flops", "kind"} <= set(t)
                                          for t in s["step_times"]):
            fail(f"vtc.json: {strategy}'s step_times incomplete")
    if vtc["rotate"] != 32:
        fail(f"vtc bench rotated {vtc['rotate']} sets; the small layer's tensors need 32")
    if vtc["strategies"]["greedy"]["copies"] >= vtc["strategies"]["none"]["copies"]:
        fail("greedy should leave fewer copy steps than none on the Llama layer")
    outputs = sorted(os.listdir(os.path.join(out, CASE, "vtc_outputs")))
    if outputs != ["present_k.npy", "present_v.npy", "y.npy"]:
        fail(f"vtc outputs {outputs}")
    if not np.isfinite(np.load(os.path.join(out, CASE, "vtc_outputs", "y.npy"))).all():
        fail("vtc's y is not finite")

    with open(os.path.join(out, "gpu-bench.json")) as f:
        doc = json.load(f)
    (w,) = doc["workloads"]
    for key in ("workload", "batch", "vtc_none_ms", "vtc_greedy_ms", "torch_eager_ms",
                "jax_jit_ms", "floor_ms", "peak_mb", "speedup_over_best_peer", "breakdown"):
        if key not in w:
            fail(f"gpu-bench.json entry has no {key}")
    if not w["floor_ms"] or w["floor"]["bytes"]["outputs"] >= w["floor"]["bytes"]["inputs"]:
        fail(f"floor: {w['floor']} (the KV cache outputs must not be counted again)")
    for name, s in w["systems"].items():
        if not s["available"] and not s.get("reason"):
            fail(f"{name} unavailable without a reason")
        if s["available"] and name != "vtc_none" and name != "vtc_greedy" \
                and not s["check"]["ok"]:
            fail(f"{name}'s outputs differ from vtc's: {s['check']['problem']}")
    if w["peak_mb"]["vtc_greedy"] <= 0:
        fail("vtc greedy's peak memory")
    with open(os.path.join(out, "gpu-bench.png"), "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail("gpu-bench.png is not a PNG")
    print("gpu bench flow: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
