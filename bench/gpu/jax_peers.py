"""JAX `jit` as a peer, for the workloads that have a JAX version: the decoder layers
(jax_decoder.py). Vision models have none: they are recorded as unavailable with the reason.

A version is `build(case, arrays, weights, jnp, jax, device) -> (call, state, names)`:
`call(state)` runs one step and returns (outputs in `names`' order, the next state), so a
donated KV cache is fed back as a decode loop does. The weights are the torch module's (its
state_dict) or, without torch, the ONNX generators' initializers: the function vtc ran.
Timing is a wall clock around a blocking call (JAX has no CUDA events), median of `repeat`;
peak memory is the device's peak_bytes_in_use where JAX reports it (less the rotation's copies).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import jax_decoder
import outputs_check

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
DECODER_INPUTS = ("x", "past_k", "past_v", "pos", "mask")


def decoder_version(case, arrays, weights, jnp, jax, device):
    from workloads import WORKLOADS

    cfg = WORKLOADS[case.workload].configs[case.size]
    dt = getattr(jnp, DTYPES[case.dtype])
    params = {k: jax.device_put(jnp.asarray(v, dt), device) for k, v in weights.items()}
    gemma = case.workload.startswith("gemma2")

    def step(x, past_k, past_v, pos, mask):
        return jax_decoder.decoder_layer(jnp, jax, params, cfg, gemma, x, past_k, past_v, pos,
                                         mask)

    jitted = jax.jit(step, donate_argnums=(1, 2))  # the KV cache updated in place
    state = [jax.device_put(jnp.asarray(arrays[n], dt if arrays[n].dtype.kind == "f" else None),
                            device) for n in DECODER_INPUTS]

    def call(s):
        y, k, v = jitted(*s)
        return (y, k, v), [s[0], k, v, s[3], s[4]]

    return call, state, ["y", "present_k", "present_v"]


VERSIONS = {"llama3_layer": decoder_version, "gemma2_local": decoder_version,
            "gemma2_global": decoder_version}


def device_for(jax, target: str):
    if target == "cuda":
        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        return gpus[0] if gpus else None
    return jax.devices("cpu")[0]


def run(case, arrays: dict, expected: dict, repeat: int, warmup: int, target: str,
        weights: dict | None, rotate: int = 1) -> dict:
    """Times the case's JAX version; call i uses state i % rotate (copies of the inputs)."""
    if case.workload not in VERSIONS:
        return {"available": False, "reason": f"no JAX version of {case.workload}"}
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return {"available": False, "reason": f"no jax ({e})"}
    if weights is None:
        return {"available": False, "reason": "no weights for the JAX version"}
    device = device_for(jax, target)
    if device is None:
        return {"available": False, "reason": "jax sees no GPU"}
    call, state, names = VERSIONS[case.workload](case, arrays, weights, jnp, jax, device)
    states = [state] + [[jnp.copy(a) for a in state] for _ in range(rotate - 1)]

    def step(i):
        out, states[i % len(states)] = call(states[i % len(states)])
        return out

    t0 = time.perf_counter()
    jax.block_until_ready(step(0))
    first_call_s = time.perf_counter() - t0
    for i in range(warmup):
        out = step(1 + i)
    jax.block_until_ready(states)
    times = []
    for i in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(step(1 + warmup + i))
        times.append((time.perf_counter() - t0) * 1e3)
    out = step(0)
    actual = {n: np.asarray(o.astype(jnp.float32)) for n, o in zip(names, out)}
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    extra = sum(a.nbytes for st in states[1:] for a in st)  # the rotation's copies
    peak = (stats or {}).get("peak_bytes_in_use")
    return {"available": True, "median_ms": statistics.median(times), "min_ms": min(times),
            "first_call_s": round(first_call_s, 3),
            "peak_bytes": peak - extra if peak is not None else None,
            "rotation_bytes_not_counted": extra, "timer": "wall clock",
            "version": jax.__version__,
            "check": outputs_check.check(actual, expected, case.tolerance)}
