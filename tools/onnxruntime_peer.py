"""Runs an ONNX model on onnxruntime (CPU) for `vtc bench` and `vtc check`, or on OpenVINO (CPU,
f32 precision) for `vtc bench`: the peers measured in the same run, on the same inputs, with the
same number of threads.

    python3 tools/onnxruntime_peer.py --model M --dir D --threads N --warmup W --repeat R
                                      [--engine onnxruntime|openvino]

D/manifest.json maps each input name to an .npy file in D (written by vtc). Writes
D/result.json: {"status": "ok", "median_ms": ..., "how": ..., "outputs": {name: file}} with each
output saved as an .npy file in D, or {"status": "missing", "reason": ...} when the engine
cannot be imported. bf16 models run with every bf16 type made f32 (onnxruntime's CPU provider
has no bf16 kernels; see models/check_ort.py), so their outputs come back as float32. OpenVINO
runs in f32 (`INFERENCE_PRECISION_HINT`: its default on CPUs with bf16 units is bf16, about
5e-3 off — not the same function).
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


def timed(args, call) -> tuple[list[float], object]:
    """`call()` after args.warmup untimed calls, args.repeat times: (milliseconds, last result)."""
    for _ in range(args.warmup):
        call()
    times, result = [], None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - start) * 1e3)
    return times, result


def save_outputs(directory: str, np, named: list[tuple[str, object]]) -> dict:
    outputs = {}
    for k, (name, value) in enumerate(named):
        file = f"output_{k}.npy"
        np.save(os.path.join(directory, file), np.ascontiguousarray(value))
        outputs[name] = file
    return outputs


def run_openvino(args, ov, np, onnx, inputs: dict) -> int:
    model = onnx.load(args.model)
    if any(i.data_type == onnx.TensorProto.BFLOAT16 for i in model.graph.initializer):
        write_result(args.dir, {"status": "missing", "reason": "bf16 model"})
        return 0
    core = ov.Core()
    compiled = core.compile_model(args.model, "CPU", {"INFERENCE_NUM_THREADS": args.threads,
                                                      "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]
    times, results = timed(args, lambda: request.infer(inputs))
    named = [(name, results[compiled.outputs[k]]) for k, name in enumerate(names)]
    how = f"openvino {ov.__version__.split('-')[0]} CPU f32, {args.threads} threads"
    write_result(args.dir, {"status": "ok", "median_ms": statistics.median(times), "how": how,
                            "outputs": save_outputs(args.dir, np, named)})
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--engine", choices=["onnxruntime", "openvino"], default="onnxruntime")
    args = parser.parse_args()

    try:
        import numpy as np
        import onnx
        if args.engine == "onnxruntime":
            import onnxruntime as ort
        else:
            import openvino as ov
    except ImportError as e:
        write_result(args.dir, {"status": "missing", "reason": str(e)})
        return 0

    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    inputs = {name: np.load(os.path.join(args.dir, file)) for name, file in manifest.items()}
    if args.engine == "openvino":
        return run_openvino(args, ov, np, onnx, inputs)

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
    times, results = timed(args, lambda: session.run(names, inputs))
    write_result(args.dir, {"status": "ok", "median_ms": statistics.median(times), "how": how,
                            "outputs": save_outputs(args.dir, np, list(zip(names, results)))})
    return 0


if __name__ == "__main__":
    sys.exit(main())
