"""Writes the benchmark workloads as ONNX files: DIR/<workload>_<size>_<dtype>_b<batch>.onnx.

Small configurations (the default) take seconds in all and are what tests use; full ones
are the paper's sizes, written with their weights in an external `<file>.onnx.data`.
Combinations a workload does not support (bf16 outside the two language-model layers) are
skipped. Each model records its workload, size, dtype, batch and configuration in its
metadata, which check_ort.py reads.

    python3 models/generate.py --out DIR [--size small|full|all] [--dtype f32,f16,bf16]
                               [--batch 1,16] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from onnx import StringStringEntryProto

from graph_builder import save_model
from workloads import WORKLOADS, model_name

SIZES = ("small", "full")


def generate(out_dir: str, sizes: list[str], dtypes: list[str], batches: list[int],
             only: list[str] | None = None) -> list[str]:
    """Writes every requested combination; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, workload in WORKLOADS.items():
        if only and name not in only:
            continue
        for size in sizes:
            for dtype in dtypes:
                if dtype not in workload.dtypes:
                    continue
                for batch in batches:
                    written.append(generate_one(out_dir, name, size, dtype, batch))
    return written


def generate_one(out_dir: str, name: str, size: str, dtype: str, batch: int) -> str:
    workload = WORKLOADS[name]
    start = time.perf_counter()
    model = workload.build(workload.configs[size], dtype, batch)
    for key, value in (("workload", name), ("size", size), ("dtype", dtype),
                       ("batch", str(batch))):
        model.metadata_props.append(StringStringEntryProto(key=key, value=value))
    weight_bytes = sum(len(t.raw_data) for t in model.graph.initializer)
    path = os.path.join(out_dir, model_name(name, size, dtype, batch) + ".onnx")
    save_model(model, path, external_data=size == "full")
    print(f"{os.path.basename(path):40s} {len(model.graph.node):5d} nodes "
          f"{weight_bytes / 2**20:9.2f} MiB weights {time.perf_counter() - start:6.2f} s",
          flush=True)
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--size", choices=[*SIZES, "all"], default="small")
    parser.add_argument("--dtype", default="f32,f16,bf16", help="comma-separated: f32,f16,bf16")
    parser.add_argument("--batch", default="1,16", help="comma-separated batch sizes")
    parser.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), metavar="NAME",
                        help=f"workloads to write (default all: {', '.join(WORKLOADS)})")
    args = parser.parse_args(argv)
    dtypes = args.dtype.split(",")
    unknown = [d for d in dtypes if d not in ("f32", "f16", "bf16")]
    if unknown:
        parser.error(f"unknown dtype(s): {', '.join(unknown)}")
    sizes = list(SIZES) if args.size == "all" else [args.size]
    generate(args.out, sizes, dtypes, [int(b) for b in args.batch.split(",")], args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
