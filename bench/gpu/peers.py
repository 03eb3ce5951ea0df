"""Times the peers of one case in one process: PyTorch eager, torch.compile in modes
`default`, `reduce-overhead` and `max-autotune`, and JAX `jit` where a JAX version exists;
measures the device's ceilings first; checks every peer's outputs against vtc's.

The module is models/export_torch.py's, built as the export built it (torch.manual_seed(0),
same factory, same element type), so it holds the weights of the ONNX file vtc ran (a model
written by the generators instead has its weights loaded into the module: decoder layers
only); inputs are the case's .npy files, rotated over --rotate copies. The decoder layers
update their KV cache in place (index_copy_). Each system: a first call (compiling, timed as
first_call_s), warm-up calls, then `repeat` calls each timed by a CUDA event pair (wall clock
on the cpu target), median and minimum; peak memory is torch.cuda.max_memory_allocated over
the timed calls (weights, inputs, outputs and everything in between, less the rotation's
extra input copies); then one more call's outputs are compared with vtc's.
The JAX version (jax_peers.py, decoder layers only) runs in a second process of its own
(`--systems jax_jit`), with the torch module's weights written by the first (--weights-out),
or the ONNX generators' initializers for their models; it is timed with a wall clock.
torch.compile reads and writes the inductor cache named by TORCHINDUCTOR_CACHE_DIR, so a
warm-up run's max-autotune results serve the timed run. Results are written to --out after
every system, so a process stopped by a timeout keeps what it finished.

    python3 bench/gpu/peers.py --case CASE_JSON --inputs DIR --input-order x,past_k,...
        --expected DIR --model M.onnx --model-source torch|generate --target cuda
        --systems torch_eager,torch_default,... --out FILE
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np

import ceilings
import jax_decoder
import jax_peers
import outputs_check
from cases import Case

TORCH_MODES = {"torch_default": "default", "torch_reduce_overhead": "reduce-overhead",
               "torch_max_autotune": "max-autotune"}
TORCH_SYSTEMS = ["torch_eager", *TORCH_MODES]
SYSTEMS = [*TORCH_SYSTEMS, "jax_jit"]


class Results:
    """The case's peer results, rewritten to `path` on every change."""

    def __init__(self, path: str, case: Case):
        self.path = path
        self.doc = {"case": case.to_json(), "ceilings": None, "systems": {}, "versions": {}}

    def set(self, key: str, value) -> None:
        self.doc[key] = value
        self.flush()

    def system(self, name: str, value: dict) -> None:
        self.doc["systems"][name] = value
        self.flush()

    def flush(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
        os.replace(tmp, self.path)


def unavailable(reason: str) -> dict:
    return {"available": False, "reason": reason}


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def print_timed(case: Case, system: str, record: dict) -> None:
    """The one line a timed peer reports: its median, first call and output check."""
    ok = "ok" if record["check"]["ok"] else "NOT OK: " + record["check"]["problem"]
    print(f"peers: {case.name}: {system}: median {record['median_ms']:.3f} ms, "
          f"first call {record['first_call_s']:.1f} s, outputs {ok}", flush=True)


def load_inputs(directory: str) -> dict[str, np.ndarray]:
    """Every NAME.npy of `directory`, by NAME."""
    return {f[:-4]: np.load(os.path.join(directory, f))
            for f in sorted(os.listdir(directory)) if f.endswith(".npy")}


def load_generator_weights(torch, module, case: Case, model: str) -> None:
    """Gives a decoder layer the weights of the ONNX generators' model (`prepare.py --source
    generate`, for a vtc that cannot import the torch export); vision models' names do not
    map, so they cannot run on such a model."""
    if case.workload not in jax_peers.VERSIONS:
        raise ValueError(f"{case.workload}: the generators' weights do not map onto the torch "
                         "module (export the model from torch: prepare.py --source torch)")
    params = jax_decoder.params_from_onnx(model)
    with torch.no_grad():
        for key, t in module.state_dict().items():
            short = jax_decoder.short_name(key, ".")
            if short == "key_positions":
                continue
            value = params[short].T if short.endswith("_proj") else params[short]
            if tuple(value.shape) != tuple(t.shape):
                raise ValueError(f"{key}: generator's {short} is {list(value.shape)}")
            t.copy_(torch.from_numpy(np.ascontiguousarray(value)))


def torch_module(torch, case: Case, device, model: str, model_source: str):
    import export_torch
    from workloads import WORKLOADS

    factory, names = export_torch.MODULES[case.workload]
    torch.manual_seed(0)
    module = factory(WORKLOADS[case.workload].configs[case.size]).eval()
    if model_source == "generate":
        load_generator_weights(torch, module, case, model)
    module = module.to(device=device, dtype=export_torch.TORCH_TYPES[case.dtype])
    for m in module.modules():
        if hasattr(m, "in_place_cache"):
            m.in_place_cache = True
    return module, names


def torch_inputs(torch, arrays: dict[str, np.ndarray], case: Case, device, order: list[str]):
    """The model's inputs as tensors, in `order` (its arguments' order)."""
    import export_torch

    dtype = export_torch.TORCH_TYPES[case.dtype]
    out = []
    for name in order:
        t = torch.from_numpy(arrays[name]).to(device)
        out.append(t.to(dtype) if t.is_floating_point() else t)
    return out


def time_calls(torch, fn, repeat: int, on_gpu: bool) -> list[float]:
    times = []
    for _ in range(repeat):
        if on_gpu:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def run_torch_system(torch, system: str, module, arg_sets, names, expected, case: Case,
                     repeat: int, warmup: int, on_gpu: bool) -> dict:
    """Times `system`; call i takes arg_sets[i % len(arg_sets)]."""
    if system == "torch_eager":
        fn = module
    else:
        fn = torch.compile(module, mode=TORCH_MODES[system])
    graphs = system in ("torch_reduce_overhead", "torch_max_autotune")
    calls = itertools.count()

    def call():
        if graphs and on_gpu:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            return fn(*arg_sets[next(calls) % len(arg_sets)])

    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    t0 = time.perf_counter()
    call()
    sync()
    compile_s = time.perf_counter() - t0
    for _ in range(warmup):
        call()
    sync()
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    times = time_calls(torch, call, repeat, on_gpu)
    # The rotation's extra input copies are the benchmark's, not the model's: not counted.
    extra = sum(t.numel() * t.element_size() for a in arg_sets[1:] for t in a)
    peak = torch.cuda.max_memory_allocated() - extra if on_gpu else None
    result = call()
    result = result if isinstance(result, tuple) else (result,)
    actual = {n: r.detach().float().cpu().numpy() for n, r in zip(names, result)}
    sync()
    record = {"available": True, "median_ms": statistics.median(times), "min_ms": min(times),
              "first_call_s": round(compile_s, 3), "peak_bytes": peak,
              "rotation_bytes_not_counted": extra,
              "check": outputs_check.check(actual, expected, case.tolerance)}
    del fn, result, actual
    return record


def run_torch(torch, case: Case, systems: list[str], inputs_dir: str, order: list[str],
              expected, results, repeat: int, warmup: int, target: str, model: str,
              model_source: str, rotate: int):
    """Runs the torch systems; returns the module's weights for the JAX version (or None)."""
    on_gpu = target == "cuda"
    if on_gpu and not torch.cuda.is_available():
        for s in systems:
            results.system(s, unavailable("torch sees no GPU"))
        return None
    device = torch.device("cuda" if on_gpu else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module, names = torch_module(torch, case, device, model, model_source)
    weights = jax_decoder.params_from_torch(module.state_dict()) \
        if case.workload in jax_peers.VERSIONS else None
    arrays = load_inputs(inputs_dir)
    first = torch_inputs(torch, arrays, case, device, order)
    arg_sets = [first] + [[t.clone() for t in first] for _ in range(rotate - 1)]
    for system in systems:
        print(f"peers: {case.name}: {system} ...", flush=True)
        try:
            record = run_torch_system(torch, system, module, arg_sets, names, expected, case,
                                      repeat, warmup, on_gpu)
            print_timed(case, system, record)
        except Exception as e:
            traceback.print_exc()
            record = unavailable(first_line(e))
        results.system(system, record)
        torch._dynamo.reset()
        gc.collect()
        if on_gpu:
            torch.cuda.empty_cache()
    del module, arg_sets, first
    gc.collect()
    if on_gpu:
        torch.cuda.empty_cache()
    return weights


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", required=True, help="JSON object of cases.Case fields")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--input-order", required=True,
                        help="the module's arguments: input names, comma-separated")
    parser.add_argument("--expected", required=True, help="vtc's outputs (NAME.npy)")
    parser.add_argument("--model", required=True, help="the ONNX file vtc ran")
    parser.add_argument("--model-source", choices=["torch", "generate"], required=True,
                        help="who wrote it (prepare.py): its weights' names")
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cuda")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rotate", type=int, default=1,
                        help="sets of inputs and outputs the calls use in turn")
    parser.add_argument("--weights-out", help="write the JAX version's weights here (.npz)")
    parser.add_argument("--weights", help="the JAX version's weights (.npz of --weights-out)")
    parser.add_argument("--no-ceilings", action="store_true", help="measure no ceilings")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    case = Case(**json.loads(args.case))
    systems = [s for s in args.systems.split(",") if s]
    for s in systems:
        if s not in SYSTEMS:
            parser.error(f"unknown system {s}; known: {', '.join(SYSTEMS)}")
    results = Results(args.out, case)
    torch_systems = [s for s in systems if s in TORCH_SYSTEMS]
    # JAX runs in a process of its own (run.py), without torch's CUDA libraries beside it.
    need_torch = bool(torch_systems or args.weights_out) or \
        (not args.no_ceilings and args.target == "cuda")
    torch, no_torch = None, "torch not loaded"
    if need_torch:
        try:
            import torch
            results.doc["versions"]["torch"] = torch.__version__
        except ImportError as e:
            no_torch = f"no torch ({first_line(e)})"
    if not args.no_ceilings:
        results.set("ceilings", ceilings.measure(torch, args.target, case.dtype))

    expected = None  # vtc failed: the peers are timed, unchecked
    if os.path.isdir(args.expected):
        expected = load_inputs(args.expected) or None

    if torch is None:
        for s in torch_systems:
            results.system(s, unavailable(no_torch))
    elif torch_systems or args.weights_out:
        # Also builds the module when only JAX runs: its weights are the JAX version's.
        try:
            weights = run_torch(torch, case, torch_systems, args.inputs,
                                args.input_order.split(","), expected, results, args.repeat,
                                args.warmup, args.target, args.model, args.model_source,
                                args.rotate)
            if args.weights_out and weights is not None:
                np.savez(args.weights_out, **weights)
        except Exception as e:  # the module or its inputs could not be built
            traceback.print_exc()
            for s in torch_systems:
                if s not in results.doc["systems"]:
                    results.system(s, unavailable(first_line(e)))
    if "jax_jit" in systems:
        try:
            weights = None
            if args.weights and os.path.exists(args.weights):
                with np.load(args.weights) as f:
                    weights = dict(f)
            elif args.model_source == "generate" and case.workload in jax_peers.VERSIONS:
                weights = jax_decoder.params_from_onnx(args.model)  # the generators' names
            record = jax_peers.run(case, load_inputs(args.inputs), expected, args.repeat,
                                   args.warmup, args.target, weights, args.rotate)
            if record["available"]:
                print_timed(case, "jax_jit", record)
        except Exception as e:
            traceback.print_exc()
            record = unavailable(first_line(e))
        results.system("jax_jit", record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
