"""JAX `jit` as a peer, for the workloads that have a JAX version.

A JAX version is a function `build(case, arrays) -> (fn, args, output_names)` registered in
VERSIONS: `fn` is jitted, takes `args` (device arrays holding the case's inputs and the torch
module's weights, so it computes the function vtc ran) and returns the outputs in
`output_names`' order. None is written yet; every case is recorded as unavailable with the
reason, and the rest of the run is unaffected.
"""

from __future__ import annotations

import statistics
import time

VERSIONS: dict = {}


def run(case, arrays: dict, expected: dict, repeat: int, warmup: int, target: str) -> dict:
    if case.workload not in VERSIONS:
        return {"available": False, "reason": f"no JAX version of {case.workload}"}
    try:
        import jax
    except ImportError as e:
        return {"available": False, "reason": f"no jax ({e})"}
    import numpy as np

    import outputs_check

    fn, args, names = VERSIONS[case.workload](case, arrays)
    jitted = jax.jit(fn)
    t0 = time.perf_counter()
    jax.block_until_ready(jitted(*args))
    first_call_s = time.perf_counter() - t0
    for _ in range(warmup):
        jax.block_until_ready(jitted(*args))
    times = []
    for _ in range(repeat):  # JAX has no CUDA events: wall clock around a blocking call
        t0 = time.perf_counter()
        jax.block_until_ready(jitted(*args))
        times.append((time.perf_counter() - t0) * 1e3)
    out = jitted(*args)
    actual = {n: np.asarray(o, np.float32) for n, o in zip(names, out)}
    return {"available": True, "median_ms": statistics.median(times), "min_ms": min(times),
            "first_call_s": round(first_call_s, 3), "peak_bytes": None,
            "timer": "wall clock", "check": outputs_check.check(actual, expected, case.tolerance)}
