"""One case's record: vtc's `bench --json`, the peers' results and the floor, joined.

Every system of SYSTEMS gets an entry, {"available": False, "reason"} when it did not run.
vtc's peak memory is its arena + weights + its kernels' workspaces (split-K partial sums, cuDNN's
scratch and workspace) + the tensors the caller binds (inputs, and outputs not held in a donated
input): PyTorch's max_memory_allocated counts its weights, inputs and
outputs too, so the two are compared like with like. The best peer is the fastest available
peer whose outputs matched vtc's; speedup_over_best_peer is its time over vtc greedy's.
"""

from __future__ import annotations

import floor as floor_mod

VTC_SYSTEMS = ["vtc_none", "vtc_greedy"]
PEER_SYSTEMS = ["torch_eager", "torch_default", "torch_reduce_overhead", "torch_max_autotune",
                "jax_jit"]
SYSTEMS = VTC_SYSTEMS + PEER_SYSTEMS
LABELS = {"vtc_none": "vtc none", "vtc_greedy": "vtc greedy", "torch_eager": "eager",
          "torch_default": "default", "torch_reduce_overhead": "reduce-overhead",
          "torch_max_autotune": "max-autotune", "jax_jit": "jax jit"}


def mb(n) -> float | None:
    return None if n is None else round(n / 1e6, 3)


def vtc_system(vtc: dict | None, strategy: str, reason: str | None) -> dict:
    if vtc is None:
        return {"available": False, "reason": reason or "vtc did not run"}
    s = vtc["strategies"].get(strategy)
    if s is None:
        return {"available": False, "reason": f"strategy {strategy} not timed"}
    peak = s["arena_bytes"] + s["constant_bytes"] + s["bound_bytes"] + s.get("workspace_bytes", 0)
    return {"available": True, "median_ms": s["median_ms"], "min_ms": s["min_ms"],
            "peak_bytes": peak, "arena_bytes": s["arena_bytes"],
            "constant_bytes": s["constant_bytes"], "bound_bytes": s["bound_bytes"],
            "workspace_bytes": s.get("workspace_bytes", 0),
            "workspace_parts": s.get("workspace_parts", {}),
            "steps": s["steps"], "copies": s["copies"], "interpreted": s["interpreted"],
            "ready_s": s["ready_s"], "compile_s": s["compile_s"],
            "rounds_ms": s.get("rounds_ms", [s["median_ms"]])}


def best_peer(systems: dict) -> tuple[str | None, float | None]:
    best = None
    for name in PEER_SYSTEMS:
        s = systems.get(name, {})
        if not s.get("available") or not s.get("check", {}).get("ok"):
            continue
        if best is None or s["median_ms"] < systems[best]["median_ms"]:
            best = name
    return best, (systems[best]["median_ms"] if best else None)


def breakdown(vtc_strategy: dict, ceilings: dict | None, top: int) -> list[dict]:
    """The `top` slowest steps, each with its achieved rate against the measured ceilings."""
    steps = sorted(vtc_strategy["step_times"], key=lambda s: -s["ms"])
    total = sum(s["ms"] for s in steps) or 1.0
    bw = (ceilings or {}).get("copy_bytes_per_s")
    mm = (ceilings or {}).get("matrix_flops_per_s")
    rows = []
    for s in steps[:top]:
        sec = s["ms"] * 1e-3
        bytes_per_s = s["bytes"] / sec if sec > 0 else None
        flops_per_s = s["flops"] / sec if sec > 0 and s["flops"] else None
        rows.append({
            "name": s["name"], "kind": s["kind"], "ms": s["ms"], "share": s["ms"] / total,
            "bytes": s["bytes"], "flops": s["flops"],
            "gb_per_s": None if bytes_per_s is None else bytes_per_s / 1e9,
            "tflop_per_s": None if flops_per_s is None else flops_per_s / 1e12,
            "of_copy_bw": bytes_per_s / bw if bw and bytes_per_s is not None else None,
            "of_matrix_rate": flops_per_s / mm if mm and flops_per_s is not None else None,
        })
    return rows


def case_record(case, prepared: dict | None, vtc: dict | None, vtc_reason: str | None,
                peers: dict | None, peers_reason: str | None, floor_bytes, top: int = 12,
                vtc_cold: dict | None = None) -> dict:
    """The record of one case; `floor_bytes` a floor.FloorBytes or None, `vtc_cold` the vtc
    JSON of a warm-up run that compiled without a cache (its compile times are reported)."""
    systems = {n: vtc_system(vtc, n[len("vtc_"):], vtc_reason) for n in VTC_SYSTEMS}
    peer_systems = (peers or {}).get("systems", {})
    for name in PEER_SYSTEMS:
        systems[name] = peer_systems.get(name) or {
            "available": False, "reason": peers_reason or "skipped (--skip)"}
    ceilings = (peers or {}).get("ceilings")
    best, best_ms = best_peer(systems)
    greedy = systems["vtc_greedy"]
    record = {"workload": case.workload, "batch": case.batch, "size": case.size,
              "dtype": case.dtype, "case": case.name,
              "model_source": (prepared or {}).get("source"), "systems": systems}
    for name in SYSTEMS:
        record[f"{name}_ms"] = systems[name].get("median_ms") if systems[name]["available"] \
            else None
    record["peak_mb"] = {n: mb(s.get("peak_bytes")) for n, s in systems.items()
                         if s.get("available")}
    record["best_peer"] = best
    record["best_peer_ms"] = best_ms
    record["speedup_over_best_peer"] = (best_ms / greedy["median_ms"]
                                        if best_ms and greedy.get("available") else None)
    record["failed_checks"] = [n for n in PEER_SYSTEMS if systems[n].get("available")
                               and systems[n].get("check", {}).get("ok") is False]

    flops = floor_mod.program_flops(vtc["strategies"]["greedy"]) \
        if vtc and "greedy" in vtc["strategies"] else None  # unknown: the floor is bytes only
    have = ceilings and ceilings.get("available")
    if floor_bytes is not None:
        f = floor_mod.floor_ms(floor_bytes.total, flops or 0,
                               ceilings["copy_bytes_per_s"] if have else None,
                               ceilings["matrix_flops_per_s"] if have else None)
        record["floor"] = {**f, "bytes": floor_bytes.to_json(), "flops": flops,
                           "flops_source": "vtc's per-step estimates (greedy)"
                           if flops is not None else "unknown (vtc did not run)"}
    else:
        record["floor"] = {"floor_ms": None, "reason": "no model bytes"}
    if not have:
        record["floor"]["reason"] = (ceilings or {}).get("reason", "no ceilings measured")
    record["floor_ms"] = record["floor"]["floor_ms"]
    record["ceilings"] = ceilings
    if vtc:
        st = vtc["strategies"]
        record["copies_before"] = st["none"]["copies"] if "none" in st else None
        record["copies_after"] = st["greedy"]["copies"] if "greedy" in st else None
        cold = vtc_cold or vtc
        record["vtc_compile"] = {
            s: {"ready_s": v["ready_s"], "compile_s": v["compile_s"]}
            for s, v in cold["strategies"].items()}
        record["vtc_compile_cached"] = vtc_cold is None and all(
            v["compile_s"] == 0 for v in st.values())
        if "greedy" in st:
            record["breakdown"] = breakdown(st["greedy"], ceilings if have else None, top)
    return record
