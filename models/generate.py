"""Writes the benchmark workloads as ONNX files: DIR/<workload>_<size>_<dtype>_b<batch>.onnx.

Small configurations (the default) take seconds in all and are what tests use; full ones
are the paper's sizes, written with their weights in an external `<file>.onnx.data`.
Combinations a workload does not support (bf16 outside the language models) are skipped. The
whole models (llama3_decoder, gemma2_decoder, vit_b16, resnet50) are written only when named
with --only; --layers N sets the depth of those that have one (the decoders, ViT), and their
file names end in _l<N>. Each model records its workload, size, dtype, batch and configuration in its
metadata, which check_ort.py reads.

    python3 models/generate.py --out DIR [--size small|full|all] [--dtype f32,f16,bf16]
                               [--batch 1,16] [--only NAME ...] [--layers N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from onnx import StringStringEntryProto

from graph_builder import save_model
from workloads import ALL_WORKLOADS, WORKLOADS, config_at, has_depth, model_name

SIZES = ("small", "full")


def generate(out_dir: str, sizes: list[str], dtypes: list[str], batches: list[int],
             only: list[str] | None = None, layers: int | None = None) -> list[str]:
    """Writes every requested combination; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, workload in ALL_WORKLOADS.items():
        if (only and name not in only) or (not only and name not in WORKLOADS):
            continue
        for size in sizes:
            for dtype in dtypes:
                if dtype not in workload.dtypes:
                    continue
                for batch in batches:
                    written.append(generate_one(out_dir, name, size, dtype, batch, layers))
    return written


def generate_one(out_dir: str, name: str, size: str, dtype: str, batch: int,
                 layers: int | None = None) -> str:
    workload = ALL_WORKLOADS[name]
    if not has_depth(workload.configs[size]):
        layers = None
    start = time.perf_counter()
    config = config_at(workload, size, layers)
    model = workload.build(config, dtype, batch)
    meta = [("workload", name), ("size", size), ("dtype", dtype), ("batch", str(batch))]
    if layers is not None:
        meta.append(("layers", str(layers)))
    for key, value in meta:
        model.metadata_props.append(StringStringEntryProto(key=key, value=value))
    weight_bytes = sum(len(t.raw_data) for t in model.graph.initializer)
    path = os.path.join(out_dir, model_name(name, size, dtype, batch, layers) + ".onnx")
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
    parser.add_argument("--only", nargs="+", choices=sorted(ALL_WORKLOADS), metavar="NAME",
                        help=f"workloads to write (default the paper's: {', '.join(WORKLOADS)}; "
                        f"whole models: {', '.join(n for n in ALL_WORKLOADS if n not in WORKLOADS)})")
    parser.add_argument("--layers", type=int, help="depth of the whole models that have one")
    args = parser.parse_args(argv)
    if args.layers is not None and args.layers < 1:
        parser.error(f"--layers {args.layers}: at least one layer")
    dtypes = args.dtype.split(",")
    unknown = [d for d in dtypes if d not in ("f32", "f16", "bf16")]
    if unknown:
        parser.error(f"unknown dtype(s): {', '.join(unknown)}")
    sizes = list(SIZES) if args.size == "all" else [args.size]
    generate(args.out, sizes, dtypes, [int(b) for b in args.batch.split(",")], args.only,
             args.layers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
