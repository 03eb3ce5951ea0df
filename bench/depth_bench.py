"""How strategy search and compilation grow with depth: the small Llama-3 decoder
(models/decoder_stack.py) at several depths, each with its KV caches donated, through one vtc
build. Per depth: nodes, the wall time of `vtc explain` (import, fusion and the greedy search),
and `vtc run`'s prepare time with an empty cache (cold: code generated and compiled) and again
with that cache (warm).

    python3 bench/depth_bench.py --vtc build/tools/vtc [--layers 1,4,16,64]
                                 [--compile-layers 1,4,32] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model(work: str, layers: int) -> str:
    path = os.path.join(work, f"llama3_decoder_small_f32_b1_l{layers}.onnx")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(ROOT, "models", "generate.py"), "--out", work,
                        "--only", "llama3_decoder", "--dtype", "f32", "--batch", "1",
                        "--layers", str(layers)], check=True, stdout=subprocess.DEVNULL)
    return path


def donate(layers: int) -> list[str]:
    return ["--donate"] + [f"past_{kv}_{i}" for i in range(layers) for kv in "kv"]


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ...: exit {r.returncode}\n{r.stderr}")
    return time.perf_counter() - start, r.stdout


def prepared(out: str) -> float:
    m = re.search(r"prepared in ([0-9.]+) s", out)
    return float(m.group(1)) if m else float("nan")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--layers", default="1,4,16,64")
    parser.add_argument("--compile-layers", default="1,4,32")
    parser.add_argument("--work", help="where models are written (default: a temporary dir)")
    args = parser.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="vtc-depth-")
    os.makedirs(work, exist_ok=True)
    search = [int(n) for n in args.layers.split(",") if n]
    compile_ = [int(n) for n in args.compile_layers.split(",") if n]
    print(f"{'layers':>6} {'nodes':>6} {'search s':>9} {'cold s':>8} {'warm s':>8}", flush=True)
    for n in sorted(set(search) | set(compile_)):
        path = model(work, n)
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        row = f"{n:6d} {nodes:6d}"
        if n in search:
            seconds, _ = timed([args.vtc, "explain", path] + donate(n))
            row += f" {seconds:9.2f}"
        else:
            row += f" {'':>9}"
        if n in compile_:
            cache = os.path.join(work, f"cache_l{n}")
            shutil.rmtree(cache, ignore_errors=True)
            run = [args.vtc, "run", path, "-q", "--cache-dir", cache] + donate(n)
            cold = prepared(timed(run)[1])
            warm = prepared(timed(run)[1])
            row += f" {cold:8.2f} {warm:8.2f}"
        print(row, flush=True)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
