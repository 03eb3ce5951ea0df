"""The GPU benchmark: vtc against PyTorch (eager, torch.compile) and JAX on the workloads of
models/, every system measured in the same run, with the floor, memory and vtc's breakdown.

For each case (workload x batch): prepare.py writes the ONNX model and seeded inputs (once,
into the cache folder); `vtc bench --json` times strategies none and greedy and writes
greedy's outputs; peers.py measures the ceilings, times the torch peers and checks their
outputs against vtc's in one process, and JAX in a second (each with its own CUDA
libraries). Every part is optional: a system that cannot run (no torch, no GPU, no JAX
version, a timeout) is recorded as unavailable with its reason. The run ends with merge.py's
table, JSON and chart in OUT.

A run should stay under 10 minutes on the GPU machine, so the set is split over a few runs
(README.md, "GPU benchmark") and merged. torch.compile max-autotune takes minutes per model:
`--warm-up` runs everything once without timing, filling the caches (exported models, vtc's
compiled programs, the inductor cache); the timed run with the same --cache reuses them and
reports vtc's cold compile times from the warm-up.

    python3 bench/gpu/run.py OUT [--vtc PATH] [--workloads a,b] [--batches 1,16]
        [--size full|small] [--target cuda|cpu] [--skip torch_max_autotune] [--cache DIR]
        [--warm-up] [--repeat 50] [--warmup-calls 10] [--rounds 1]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import floor as floor_mod
import merge
import record as record_mod
import rounds as rounds_mod
from cases import ROOT, WORKLOADS, Case, make_cases, rotation

HERE = os.path.dirname(os.path.abspath(__file__))


def run_vtc(args, case: Case, prepared: dict, case_dir: str, cache: str,
            timing: tuple[int, int], rotate: int) -> tuple[dict | None, str | None]:
    """`vtc bench --json`; returns (its JSON, None) or (None, why not)."""
    json_path = os.path.join(case_dir, "vtc.json")
    out_dir = os.path.join(case_dir, "vtc_outputs")
    repeat, warmup = timing
    for stale in (json_path, out_dir):  # a failed run must leave nothing of an earlier one
        if os.path.isdir(stale):
            shutil.rmtree(stale)
        elif os.path.exists(stale):
            os.remove(stale)
    cmd = [args.vtc, "bench", prepared["model"], "--target", args.target,
           "--strategies", "none,greedy", "--repeat", str(repeat), "--warmup", str(warmup),
           "--json", json_path, "--output-dir", out_dir, "--cache-dir", cache, "--top", "0",
           "--rotate", str(rotate)]
    for name, path in sorted(prepared["inputs"].items()):
        cmd += ["--input", f"{name}={path}"]
    if args.vtc_threads:
        cmd += ["--threads", str(args.vtc_threads)]
    if case.donated:
        cmd += ["--donate", *case.donated]
    env = dict(os.environ)
    env.setdefault("VTC_SOURCE_DIR", ROOT)  # the kernel headers generated code includes
    if env.get("VTC_LIBS"):  # shared libraries a binary built elsewhere brings along
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (env["VTC_LIBS"],
                                                      env.get("LD_LIBRARY_PATH")) if p)
    print(f"run: {case.name}: vtc bench ...", flush=True)
    start = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.vtc_timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return None, f"vtc bench timed out after {args.vtc_timeout} s"
    except OSError as e:
        return None, f"vtc bench could not start: {e}"
    with open(os.path.join(case_dir, "vtc.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return None, f"vtc bench exit {r.returncode}: {lines[-1] if lines else ''}"[:400]
    with open(json_path) as f:
        doc = json.load(f)
    print(f"run: {case.name}: vtc done in {time.perf_counter() - start:.1f} s: " + ", ".join(
        f"{s} {doc['strategies'][s]['median_ms']:.3f} ms" for s in ("none", "greedy")
        if s in doc["strategies"]), flush=True)
    return doc, None


def peers_process(args, case: Case, prepared: dict, case_dir: str, cache: str, timing,
                  rotate: int, systems: list[str], name: str,
                  extra: list[str]) -> tuple[dict | None, str | None]:
    """One peers.py process over `systems`, its results in CASE/NAME.json and NAME.log."""
    out = os.path.join(case_dir, name + ".json")
    log_path = os.path.join(case_dir, name + ".log")
    repeat, warmup = timing
    cmd = [args.python, os.path.join(HERE, "peers.py"), "--case", json.dumps(case.to_json()),
           "--inputs", os.path.dirname(next(iter(prepared["inputs"].values()))),
           "--input-order", ",".join(prepared["input_order"]),
           "--model", prepared["model"], "--model-source", prepared["source"],
           "--expected", os.path.join(case_dir, "vtc_outputs"), "--target", args.target,
           "--systems", ",".join(systems), "--repeat", str(repeat),
           "--warmup", str(warmup), "--rotate", str(rotate), "--out", out, *extra]
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"),
               TORCHINDUCTOR_FX_GRAPH_CACHE="1", TORCHINDUCTOR_AUTOGRAD_CACHE="1",
               XLA_PYTHON_CLIENT_PREALLOCATE="false")  # JAX allocates as it goes
    print(f"run: {case.name}: {name} ({','.join(systems) or 'ceilings'}) ...", flush=True)
    if os.path.exists(out):
        os.remove(out)
    reason = None
    with open(log_path, "w") as log:
        # Its own process group, so that a timeout also ends inductor's compile workers.
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=args.peer_timeout)
            if rc != 0:
                reason = f"{name} process exit {rc} (see {case.name}/{name}.log)"
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            reason = f"{name} process timed out after {args.peer_timeout} s"
    with open(log_path) as f:
        for line in f:
            if line.startswith("peers: ") and "median" in line:
                print("  " + line.rstrip(), flush=True)
    if not os.path.exists(out):
        return None, reason or f"{name} process wrote nothing"
    with open(out) as f:
        doc = json.load(f)
    for s in systems:
        doc["systems"].setdefault(s, {"available": False,
                                      "reason": reason or f"{name} process skipped it"})
    return doc, reason


def run_peers(args, case: Case, prepared: dict, case_dir: str, cache: str, timing,
              rotate: int) -> tuple[dict | None, str | None]:
    """The ceilings and torch systems in one process, JAX in another (each its own CUDA
    libraries); the torch process hands the JAX one its module's weights."""
    torch_systems = [s for s in args.peer_systems if s != "jax_jit"]
    want_jax = "jax_jit" in args.peer_systems
    weights = os.path.join(case_dir, "jax_weights.npz")
    if os.path.exists(weights):
        os.remove(weights)
    extra = ["--weights-out", weights] if want_jax and prepared["source"] == "torch" else []
    doc, reason = peers_process(args, case, prepared, case_dir, cache, timing, rotate,
                                torch_systems, "peers", extra)
    if want_jax:
        jax_doc, jax_reason = peers_process(
            args, case, prepared, case_dir, cache, timing, rotate, ["jax_jit"], "peers_jax",
            ["--no-ceilings"] + (["--weights", weights] if os.path.exists(weights) else []))
        if os.path.exists(weights):
            os.remove(weights)
        jax_record = (jax_doc or {}).get("systems", {}).get("jax_jit") or {
            "available": False, "reason": jax_reason or "peers_jax process wrote nothing"}
        if doc is None:
            doc = {"ceilings": None, "systems": {}}
        doc["systems"]["jax_jit"] = jax_record
    return doc, reason


def model_bytes(case: Case, prepared: dict, outputs_dir: str | None = None):
    """The case's floor bytes; outputs whose shapes neither the model nor shape inference give
    are sized by the .npy files vtc wrote to `outputs_dir`, where given."""
    shapes = None
    if outputs_dir and os.path.isdir(outputs_dir):
        import numpy as np
        shapes = {f[:-len(".npy")]: np.load(os.path.join(outputs_dir, f), mmap_mode="r").shape
                  for f in os.listdir(outputs_dir) if f.endswith(".npy")}
    try:
        return floor_mod.model_bytes(prepared["model"], case.aliases, shapes)
    except Exception as e:  # recorded as a missing floor
        print(f"run: {case.name}: model bytes{' (from vtc outputs)' if shapes else ''}: {e}",
              flush=True)
        return None


def keep_cold_compile(case: Case, case_dir: str, cache: str, vtc: dict) -> None:
    """The first `vtc bench --json` that compiled cold, kept for later runs' compile times."""
    cold_path = os.path.join(cache, "vtc-cold", case.name + ".json")
    if any(v["compile_s"] > 0 for v in vtc["strategies"].values()) and \
            not os.path.exists(cold_path):
        os.makedirs(os.path.dirname(cold_path), exist_ok=True)
        shutil.copyfile(os.path.join(case_dir, "vtc.json"), cold_path)


def run_case(args, case: Case, prepared: dict | None, cache: str, timing) -> dict:
    case_dir = os.path.join(args.out, case.name)
    os.makedirs(case_dir, exist_ok=True)
    rotate = 1
    if prepared is None or "error" in prepared:
        why = (prepared or {}).get("error", "not prepared")
        vtc = peers = None
        vtc_reason = peers_reason = f"model not prepared: {why}"
        fb = None
    else:
        fb = model_bytes(case, prepared)
        rotate = args.rotate or (rotation(fb.inputs + fb.outputs) if fb else 1)
        # vtc and the peers in alternating rounds, each system keeping its best (rounds.py).
        vtc_rounds, peer_rounds = [], []
        vtc_reason = peers_reason = None
        for round_index in range(max(1, args.rounds)):
            if args.rounds > 1:
                print(f"run: {case.name}: round {round_index + 1} of {args.rounds}", flush=True)
            doc, why = run_vtc(args, case, prepared, case_dir, os.path.join(cache, "vtc"),
                               timing, rotate)
            vtc_rounds.append(doc)
            vtc_reason = vtc_reason or why
            if round_index == 0 and doc is not None:
                keep_cold_compile(case, case_dir, cache, doc)
            if fb is None and doc is not None:  # outputs sized by the run instead
                fb = model_bytes(case, prepared, os.path.join(case_dir, "vtc_outputs"))
            # Without vtc's outputs the peers still run, unchecked (never a best peer).
            doc, why = run_peers(args, case, prepared, case_dir, cache, timing, rotate)
            peer_rounds.append(doc)
            peers_reason = peers_reason or why
        vtc, peers = rounds_mod.best_vtc(vtc_rounds), rounds_mod.best_peers(peer_rounds)
        if vtc is not None:
            vtc_reason = None
    cold_path = os.path.join(cache, "vtc-cold", case.name + ".json")
    vtc_cold = None
    if vtc is not None:
        cold_compile = any(v["compile_s"] > 0 for v in vtc["strategies"].values())
        if not cold_compile and os.path.exists(cold_path):
            with open(cold_path) as f:
                vtc_cold = json.load(f)
    rec = record_mod.case_record(case, prepared, vtc, vtc_reason, peers, peers_reason, fb,
                                 vtc_cold=vtc_cold)
    rec["rotate"] = rotate
    if not args.keep_outputs:
        shutil.rmtree(os.path.join(case_dir, "vtc_outputs"), ignore_errors=True)
    with open(os.path.join(case_dir, "record.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def default_vtc() -> str:
    return os.environ.get("VTC") or os.path.join(ROOT, "build", "tools", "vtc")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder for this run's files, table, JSON and chart")
    parser.add_argument("--vtc", default=default_vtc(), help="the vtc executable ($VTC)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--size", choices=["full", "small"], default="full")
    parser.add_argument("--dtype", help="element type of every case (default: per workload)")
    parser.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--skip", default="", help="peer systems not to run, comma-separated")
    parser.add_argument("--cache", help="exported models, vtc's and inductor's caches "
                        "(default $VTC_BENCH_CACHE or OUT/cache)")
    parser.add_argument("--source", choices=["auto", "torch", "generate"], default="auto",
                        help="ONNX models from the torch modules or the onnx generators")
    parser.add_argument("--warm-up", action="store_true",
                        help="run everything once untimed, to fill the caches")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup-calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1,
                        help="vtc and the peers timed in this many alternating rounds, each "
                        "system keeping its fastest (rounds.py)")
    parser.add_argument("--rotate", type=int, default=0,
                        help="sets of inputs/outputs used in turn (0: enough to span twice the "
                        "L2 when one set fits in it)")
    parser.add_argument("--vtc-timeout", type=int, default=400)
    parser.add_argument("--peer-timeout", type=int, default=540)
    parser.add_argument("--vtc-threads", type=int, default=0,
                        help="vtc's kernel threads on the cpu target (0: vtc's default)")
    parser.add_argument("--keep-outputs", action="store_true", help="keep vtc's output files")
    parser.add_argument("--python", default=sys.executable, help="python for the peers")
    args = parser.parse_args(argv)

    skip = {s for s in args.skip.split(",") if s}
    unknown = skip - set(record_mod.PEER_SYSTEMS)
    if unknown:
        parser.error(f"--skip: unknown {sorted(unknown)}; peers: {record_mod.PEER_SYSTEMS}")
    args.peer_systems = [s for s in record_mod.PEER_SYSTEMS if s not in skip]
    cases = make_cases(args.workloads.split(","), [int(b) for b in args.batches.split(",")],
                       args.size, args.dtype)
    os.makedirs(args.out, exist_ok=True)
    cache = os.path.abspath(args.cache or os.environ.get("VTC_BENCH_CACHE")
                            or os.path.join(args.out, "cache"))
    models_dir = os.path.join(cache, "models")
    timing = (1, 0) if args.warm_up else (args.repeat, args.warmup_calls)
    if args.warm_up:
        args.rounds = 1
    started = datetime.datetime.now(datetime.timezone.utc)

    cases_file = os.path.join(args.out, "cases.json")
    with open(cases_file, "w") as f:
        json.dump([c.to_json() for c in cases], f, indent=1)
    report_file = os.path.join(args.out, "prepare.json")
    print(f"run: preparing {len(cases)} cases in {models_dir} ...", flush=True)
    with open(os.path.join(args.out, "prepare.log"), "w") as log:
        subprocess.run([args.python, os.path.join(HERE, "prepare.py"), "--models", models_dir,
                        "--cases", cases_file, "--source", args.source, "--report", report_file],
                       stdout=log, stderr=subprocess.STDOUT)
    prepared = {}
    if os.path.exists(report_file):
        with open(report_file) as f:
            prepared = json.load(f)

    records = []
    for case in cases:
        rec = run_case(args, case, prepared.get(case.name), cache, timing)
        records.append(rec)
    doc = {"run": {"started": started.isoformat(timespec="seconds"),
                   "finished": datetime.datetime.now(datetime.timezone.utc)
                   .isoformat(timespec="seconds"),
                   "host": socket.gethostname(), "target": args.target, "size": args.size,
                   "vtc": args.vtc, "warm_up": args.warm_up, "repeat": timing[0],
                   "warmup_calls": timing[1], "rounds": args.rounds, "argv": argv},
           "cases": records}
    run_file = os.path.join(args.out, "run.json")
    with open(run_file, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"run: wrote {run_file}", flush=True)
    if args.warm_up:
        print("run: warm-up only: caches filled, nothing timed", flush=True)
        return 0
    return merge.main([run_file, "--out", args.out])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
