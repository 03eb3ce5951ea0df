"""The fixed cost of a step on the cpu target, against onnxruntime's cost of a node.

Models of N steps that do almost no work (a chain of N small MatMuls, [1, 16] x [16, 16] with
constant weights by default, --rows and --width to change: no two fuse, each is its own step
in vtc and its own node in onnxruntime)
are timed by `vtc bench --strategies greedy` for N in --steps; a least-squares line through
the medians gives each system's time per step (its slope) and its time outside the steps (its
intercept). The last line is

    step-overhead: vtc X us a step (+ Y us a run), onnxruntime Z us a node (+ W us a run)

    python3 bench/step_overhead.py --vtc build/tools/vtc [--steps 1,8,32,128] [--threads 2]
        [--rows 1] [--width 16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain_model(steps: int, rows: int, width: int) -> onnx.ModelProto:
    rng = np.random.default_rng(steps)
    nodes, inits = [], []
    prev = "x"
    for i in range(steps):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = "y" if i == steps - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [out], name=f"matmul{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def fit(ns: list[int], ms: list[float]) -> tuple[float, float]:
    """Slope and intercept (ms) of the least-squares line through (n, ms)."""
    slope, intercept = np.polyfit(np.array(ns, float), np.array(ms, float), 1)
    return float(slope), float(intercept)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--steps", default="1,8,32,128")
    parser.add_argument("--rows", type=int, default=1, help="rows of x: 1 is pure overhead; "
                        "more gives steps large enough for several threads")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    ns = [int(s) for s in args.steps.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="vtc-step-overhead-") as work:
        for n in ns:
            path = os.path.join(work, f"chain{n}.onnx")
            onnx.save(chain_model(n, args.rows, args.width), path)
            out = os.path.join(work, f"chain{n}.json")
            r = subprocess.run([args.vtc, "bench", path, "--strategies", "greedy", "--repeat",
                                str(args.repeat), "--warmup", "20", "--threads",
                                str(args.threads), "--json", out, "--quiet"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"step-overhead: vtc bench failed on {n} steps: {r.stderr.strip()[-300:]}")
                return 1
            with open(out) as f:
                doc = json.load(f)
            greedy = doc["strategies"]["greedy"]
            ort = doc["onnxruntime"].get("median_ms")
            rows.append((n, len(greedy["step_times"]), greedy["median_ms"], ort))
            print(f"{n:5d} MatMuls: vtc {rows[-1][1]:4d} steps {rows[-1][2] * 1e3:9.2f} us, "
                  f"onnxruntime {ort * 1e3 if ort else float('nan'):9.2f} us", flush=True)
    vs, vi = fit([r[1] for r in rows], [r[2] for r in rows])
    have_ort = all(r[3] is not None for r in rows)
    line = f"step-overhead: vtc {vs * 1e3:.2f} us a step (+ {vi * 1e3:.2f} us a run)"
    if have_ort:
        os_, oi = fit([r[0] for r in rows], [r[3] for r in rows])
        line += f", onnxruntime {os_ * 1e3:.2f} us a node (+ {oi * 1e3:.2f} us a run)"
    else:
        line += ", onnxruntime n/a"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
