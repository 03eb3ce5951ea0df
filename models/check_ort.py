"""Runs generated models in onnxruntime (CPU) and stores their inputs and expected outputs.

For every model in --models (small ones unless --include-full), this makes seeded inputs
with the workload's own input maker (a position inside the KV cache, the matching causal
mask, a random cache), runs onnxruntime, fails on any NaN or infinity, and writes

    <out>/<model>/inputs/<name>.npy     <out>/<model>/expected/<name>.npy     <out>/<model>/meta.json

Tensors of f32 and f16 models are stored in their own type. numpy has no bfloat16, so the
float tensors of bf16 models are stored as float32 holding bf16-exact values. onnxruntime's
CPU provider has no bf16 kernels for most ops (MatMul, Add, Softmax, ...), so a bf16 model's
reference is the same model with every bf16 type turned into f32: its weights and inputs
are exactly the bf16 values, only the arithmetic is f32. meta.json says which reference
was used. compare.py checks another runtime's outputs against these files.

    python3 models/check_ort.py --models DIR --out DIR [--seed 0] [--include-full]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper

from graph_builder import round_to_dtype
from workloads import ALL_WORKLOADS, config_at

FLOAT_NPY = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}


def bf16_as_f32(model: onnx.ModelProto) -> onnx.ModelProto:
    """Copy of `model` with every bf16 initializer, value type and Cast target made f32."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    for i, init in enumerate(graph.initializer):
        if init.data_type == TensorProto.BFLOAT16:
            values = numpy_helper.to_array(init).astype(np.float32)
            graph.initializer[i].CopyFrom(numpy_helper.from_array(values, init.name))
    for info in [*graph.input, *graph.output, *graph.value_info]:
        if info.type.tensor_type.elem_type == TensorProto.BFLOAT16:
            info.type.tensor_type.elem_type = TensorProto.FLOAT
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.BFLOAT16:
                attr.i = TensorProto.FLOAT
            elif attr.type in (onnx.AttributeProto.TENSOR, onnx.AttributeProto.GRAPH):
                raise ValueError(f"{node.name}: attribute {attr.name} not handled")
    return model


def model_inputs(meta: dict[str, str]) -> dict[str, np.ndarray]:
    """Seeded inputs for the model described by `meta`, in their .npy storage types."""
    workload = ALL_WORKLOADS[meta["workload"]]
    rng = np.random.default_rng(int(meta["seed"]))
    layers = int(meta["layers"]) if "layers" in meta else None
    config = config_at(workload, meta["size"], layers)
    values = workload.make_inputs(config, int(meta["batch"]), rng)
    dtype = meta["dtype"]
    return {name: (round_to_dtype(v, dtype).astype(FLOAT_NPY[dtype])
                   if v.dtype == np.float32 else v)
            for name, v in values.items()}


def run_reference(path: str, meta: dict[str, str],
                  inputs: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], str]:
    """Runs onnxruntime; returns the outputs by name and how the reference was made."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    if meta["dtype"] == "bf16":
        model = bf16_as_f32(onnx.load(path))
        source, how = model.SerializeToString(), "onnxruntime CPU on the model with bf16 made f32"
    else:
        source, how = path, "onnxruntime CPU"
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    declared = [i.name for i in session.get_inputs()]
    if sorted(declared) != sorted(inputs):
        raise ValueError(f"{path}: model inputs {declared} but made {sorted(inputs)}")
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs))), how


def save_tensors(directory: str, tensors: dict[str, np.ndarray]) -> dict[str, dict]:
    os.makedirs(directory, exist_ok=True)
    for name, value in tensors.items():
        np.save(os.path.join(directory, f"{name}.npy"), value)
    return {name: {"shape": list(v.shape), "npy_dtype": str(v.dtype)} for name, v in tensors.items()}


def model_meta(path: str) -> dict[str, str]:
    """The metadata generate.py recorded (workload, size, dtype, batch, config)."""
    header = onnx.load(path, load_external_data=False)
    return {p.key: p.value for p in header.metadata_props}


def check_model(path: str, out_root: str, seed: int) -> bool:
    """Writes one model's inputs, expected outputs and meta.json; True when all finite."""
    meta = model_meta(path)
    meta["seed"] = str(seed)
    name = os.path.basename(path)[: -len(".onnx")]
    inputs = model_inputs(meta)
    start = time.perf_counter()
    outputs, how = run_reference(path, meta, inputs)
    seconds = time.perf_counter() - start
    finite = all(np.isfinite(v).all() for v in outputs.values())

    model_dir = os.path.join(out_root, name)
    record = {key: meta[key] for key in ("workload", "size", "dtype", "batch", "seed", "config")}
    record.update(model=name, reference=how, finite=bool(finite),
                  inputs=save_tensors(os.path.join(model_dir, "inputs"), inputs),
                  expected=save_tensors(os.path.join(model_dir, "expected"), outputs))
    with open(os.path.join(model_dir, "meta.json"), "w") as f:
        json.dump(record, f, indent=1)

    summary = " ".join(f"{n}{list(v.shape)} rms={float(np.sqrt(np.mean(np.square(v, dtype=np.float64)))):.3g}"
                       for n, v in outputs.items())
    print(f"{name:40s} {'ok ' if finite else 'NaN/inf'} {seconds * 1e3:7.1f} ms  {summary}",
          flush=True)
    return finite


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="directory of generated .onnx files")
    parser.add_argument("--out", required=True, help="directory for inputs and expected outputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--include-full", action="store_true",
                        help="also run full-size models (slow, large)")
    args = parser.parse_args(argv)
    paths = sorted(glob.glob(os.path.join(args.models, "*.onnx")))
    if not args.include_full:
        paths = [p for p in paths if model_meta(p)["size"] != "full"]
    if not paths:
        print(f"no models in {args.models}", file=sys.stderr)
        return 1
    failed = [p for p in paths if not check_model(p, args.out, args.seed)]
    print(f"{len(paths) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
