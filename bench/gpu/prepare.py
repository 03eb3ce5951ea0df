"""Writes each case's ONNX model and seeded inputs, once, into a models folder.

With PyTorch, the model is exported from models/export_torch.py's module (torch.manual_seed(0),
the same factory the peers build), so vtc runs exactly the function the peers time. Without
PyTorch the onnx-only generator (models/generate.py) writes the workload instead: the flow
can then be tested, but its weights are not the torch modules' (no torch peer runs then).
Inputs are the workload's own seeded values (seed 0, as export_torch.torch_inputs makes them),
rounded to the model's type and stored as .npy (bf16 as float32 holding exact values):

    MODELS/<case>.onnx  MODELS/<case>.inputs/<input>.npy  MODELS/<case>.json (how it was made)

A case whose three are present is left as it is (a warm-up run's files serve the timed run).

    python3 bench/gpu/prepare.py --models DIR --cases CASES.json [--source auto|torch|generate]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

from cases import Case


def case_files(models_dir: str, case: Case) -> tuple[str, str, str]:
    base = os.path.join(models_dir, case.name)
    return base + ".onnx", base + ".inputs", base + ".json"


def write_inputs(case: Case, directory: str) -> list[str]:
    from graph_builder import round_to_dtype
    from workloads import WORKLOADS

    workload = WORKLOADS[case.workload]
    values = workload.make_inputs(workload.configs[case.size], case.batch,
                                  np.random.default_rng(0))
    os.makedirs(directory, exist_ok=True)
    storage = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}[case.dtype]
    for name, v in values.items():
        if v.dtype == np.float32:
            v = round_to_dtype(v, case.dtype).astype(storage)
        np.save(os.path.join(directory, f"{name}.npy"), v)
    return list(values)  # the input maker's order: the module's argument order


def export_with_torch(case: Case, models_dir: str) -> None:
    import torch

    import export_torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if not export_torch.export_one(models_dir, case.workload, case.size, case.dtype, case.batch,
                                   device, check=False):
        raise RuntimeError(f"torch export of {case.name} failed (see above)")


def prepare(case: Case, models_dir: str, source: str, have_torch: bool) -> dict:
    model, inputs, meta = case_files(models_dir, case)
    use_torch = source == "torch" or (source == "auto" and have_torch)
    if os.path.exists(model) and os.path.isdir(inputs) and os.path.exists(meta):
        with open(meta) as f:
            record = json.load(f)
        if record.get("source") == ("torch" if use_torch else "generate"):
            record["cached"] = True
            return record
    start = time.perf_counter()
    if use_torch:
        export_with_torch(case, models_dir)
        how = "torch.onnx.export of models/export_torch.py's module (seed 0)"
    else:
        import generate

        generate.generate_one(models_dir, case.workload, case.size, case.dtype, case.batch)
        how = "models/generate.py (onnx generator's weights, not the torch module's)"
    names = write_inputs(case, inputs)
    record = {"case": case.name, "model": model, "inputs": {n: os.path.join(inputs, n + ".npy")
                                                            for n in names},
              "input_order": names, "source": "torch" if use_torch else "generate",
              "how": how,
              "seconds": round(time.perf_counter() - start, 2)}
    with open(meta, "w") as f:
        json.dump(record, f, indent=1)
    record["cached"] = False
    return record


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True)
    parser.add_argument("--cases", required=True, help="JSON list of cases (cases.Case fields)")
    parser.add_argument("--source", choices=["auto", "torch", "generate"], default="auto")
    parser.add_argument("--report", help="write {case: record or error} here as JSON")
    args = parser.parse_args(argv)
    os.makedirs(args.models, exist_ok=True)
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    with open(args.cases) as f:
        cases = [Case(**c) for c in json.load(f)]
    report, failed = {}, 0
    for case in cases:
        try:
            report[case.name] = prepare(case, args.models, args.source, have_torch)
            r = report[case.name]
            print(f"prepare: {case.name}: {'cached' if r['cached'] else r['how']}", flush=True)
        except Exception as e:
            traceback.print_exc()
            report[case.name] = {"error": f"{type(e).__name__}: {e}"}
            failed += 1
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
