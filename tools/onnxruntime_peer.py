"""Runs an ONNX model on onnxruntime (CPU) for `vtc bench` and `vtc check`, or on OpenVINO (CPU,
f32 precision) for `vtc bench`: the peers measured in the same run, on the same inputs, with the
same number of threads.

    python3 tools/onnxruntime_peer.py --model M --dir D --threads N --warmup W
                                      [--engine onnxruntime|openvino]

D/manifest.json maps each input name to an .npy file in D (written by vtc). The script loads the
model, makes W untimed runs and answers on stdout, one JSON line each, to commands on stdin, so
that vtc can take its timed runs in blocks between the peer's:

    (at start)  {"status": "ready", "how": ...} or {"status": "missing", "reason": ...} (the
                engine cannot be imported or cannot run the model; the script then exits)
    warm N      {"warm": N}: N more untimed runs
    time N      {"times_ms": [...]}: N timed runs
    finish      {"outputs": {name: file}}: the last run's outputs saved as .npy files in D (one
                more run when none was timed); the script then exits

bf16 models run with every bf16 type made f32 (onnxruntime's CPU provider has no bf16 kernels;
see models/check_ort.py), so their outputs come back as float32. OpenVINO runs in f32
(`INFERENCE_PRECISION_HINT`: its default on CPUs with bf16 units is bf16, about 5e-3 off — not
the same function).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def answer(message: dict) -> None:
    print(json.dumps(message), flush=True)


def save_outputs(directory: str, np, named: list[tuple[str, object]]) -> dict:
    outputs = {}
    for k, (name, value) in enumerate(named):
        file = f"output_{k}.npy"
        np.save(os.path.join(directory, file), np.ascontiguousarray(value))
        outputs[name] = file
    return outputs


def openvino_runner(args, ov, onnx, inputs: dict):
    """(how, run) for OpenVINO, run() giving [(name, value)]; None for a bf16 model."""
    model = onnx.load(args.model)
    if any(i.data_type == onnx.TensorProto.BFLOAT16 for i in model.graph.initializer):
        return None
    core = ov.Core()
    compiled = core.compile_model(args.model, "CPU", {"INFERENCE_NUM_THREADS": args.threads,
                                                      "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]

    def run():
        results = request.infer(inputs)
        return [(name, results[compiled.outputs[k]]) for k, name in enumerate(names)]

    return f"openvino {ov.__version__.split('-')[0]} CPU f32, {args.threads} threads", run


def onnxruntime_runner(args, ort, onnx, inputs: dict):
    """(how, run) for onnxruntime's CPU provider, run() giving [(name, value)]."""
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
    return how, lambda: list(zip(names, session.run(names, inputs)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
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
        answer({"status": "missing", "reason": str(e)})
        return 0

    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    inputs = {name: np.load(os.path.join(args.dir, file)) for name, file in manifest.items()}
    if args.engine == "openvino":
        runner = openvino_runner(args, ov, onnx, inputs)
        if runner is None:
            answer({"status": "missing", "reason": "bf16 model"})
            return 0
    else:
        runner = onnxruntime_runner(args, ort, onnx, inputs)
    how, run = runner
    last = None
    for _ in range(args.warmup):
        last = run()
    answer({"status": "ready", "how": how})

    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["time"] and len(words) == 2:
            times = []
            for _ in range(int(words[1])):
                start = time.perf_counter()
                last = run()
                times.append((time.perf_counter() - start) * 1e3)
            answer({"times_ms": times})
        elif words[:1] == ["warm"] and len(words) == 2:
            for _ in range(int(words[1])):
                last = run()
            answer({"warm": int(words[1])})
        elif words == ["finish"]:
            break
        else:
            answer({"error": f"unknown command: {line.strip()!r}"})
            return 1
    if last is None:
        last = run()
    answer({"outputs": save_outputs(args.dir, np, last)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
