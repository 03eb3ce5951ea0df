"""Runs an ONNX model on onnxruntime (CPU) for `vtc bench` and `vtc check`: the peer measured
in the same run, on the same inputs, with the same number of threads.

    python3 tools/onnxruntime_peer.py --model M --dir D --threads N --warmup W --repeat R

D/manifest.json maps each input name to an .npy file in D (written by vtc). Writes
D/result.json: {"status": "ok", "median_ms": ..., "how": ..., "outputs": {name: file}} with each
output saved as an .npy file in D, or {"status": "missing", "reason": ...} when onnxruntime
cannot be imported. bf16 models run with every bf16 type made f32 (onnxruntime's CPU provider
has no bf16 kernels; see models/check_ort.py), so their outputs come back as float32.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_result(directory: str, result: dict) -> None:
    with open(os.path.join(directory, "result.json"), "w") as f:
        json.dump(result, f)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        write_result(args.dir, {"status": "missing", "reason": str(e)})
        return 0

    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    inputs = {name: np.load(os.path.join(args.dir, file)) for name, file in manifest.items()}

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    model = onnx.load(args.model)
    how = f"onnxruntime {ort.__version__} CPU, {args.threads} threads"
    bf16 = onnx.TensorProto.BFLOAT16
    if any(i.data_type == bf16 for i in model.graph.initializer) or any(
            v.type.tensor_type.elem_type == bf16 for v in [*model.graph.input, *model.graph.output]):
        sys.path.insert(0, os.path.join(ROOT, "models"))
        from check_ort import bf16_as_f32
        model = bf16_as_f32(model)
        how += ", bf16 made f32"
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for _ in range(args.warmup):
        session.run(names, inputs)
    times = []
    results = None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        results = session.run(names, inputs)
        times.append((time.perf_counter() - start) * 1e3)

    outputs = {}
    for k, (name, value) in enumerate(zip(names, results)):
        file = f"output_{k}.npy"
        np.save(os.path.join(args.dir, file), np.ascontiguousarray(value))
        outputs[name] = file
    write_result(args.dir, {"status": "ok", "median_ms": statistics.median(times), "how": how,
                            "outputs": outputs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
