"""Several rounds of one case joined into one: every system keeps its best round.

Peers' times on the GPU machine move between runs more than vtc's (a torch.compile
max-autotune Llama-3 layer at batch 1 took 0.290 ms in one run and 0.567 in another), so a
table of record times vtc and the peers in alternating rounds (`run.py --rounds N`) and gives
each system the round with its lowest median: vtc's whole `bench --json` of the round where
greedy was fastest, and for each peer the fastest round whose outputs matched vtc's (the first
round's record when none did). Each system keeps every round's median, in order, as
`rounds_ms`.
"""

from __future__ import annotations


def _median(doc: dict | None, strategy: str) -> float | None:
    s = ((doc or {}).get("strategies") or {}).get(strategy)
    return s["median_ms"] if s else None


def best_vtc(docs: list[dict | None]) -> dict | None:
    """The round whose greedy median is lowest, with each strategy's medians by round."""
    ran = [d for d in docs if d is not None]
    if not ran:
        return None
    timed = [d for d in ran if _median(d, "greedy") is not None]
    best = dict(min(timed, key=lambda d: _median(d, "greedy")) if timed else ran[0])
    best["strategies"] = {name: dict(s, rounds_ms=[_median(d, name) for d in docs])
                          for name, s in best["strategies"].items()}
    return best


def best_peers(docs: list[dict | None]) -> dict | None:
    """The first round's ceilings; each system's fastest checked round, with its medians."""
    ran = [d for d in docs if d is not None]
    if not ran:
        return None
    joined = dict(ran[0], systems={})
    names = [n for d in ran for n in d.get("systems", {})]
    for name in dict.fromkeys(names):
        records = [(d.get("systems") or {}).get(name) for d in docs]
        present = [r for r in records if r is not None]
        good = [r for r in present
                if r.get("available") and (r.get("check") or {}).get("ok")]
        chosen = min(good, key=lambda r: r["median_ms"]) if good else present[0]
        joined["systems"][name] = dict(chosen, rounds_ms=[
            r.get("median_ms") if r and r.get("available") else None for r in records])
    return joined
