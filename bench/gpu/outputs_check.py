"""Checks a peer's outputs against vtc's: relative L2 error per output, within a tolerance.

vtc writes each output as NAME.npy (bf16 as float32 holding the exact values); a peer's
outputs arrive as numpy arrays of any float type. A peer whose outputs differ computes
another function, which is a bug in the benchmark, so the table marks it.
"""

from __future__ import annotations

import os

import numpy as np


def rel_l2(actual: np.ndarray, expected: np.ndarray) -> float:
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    if a.shape != e.shape:
        raise ValueError(f"shape {list(a.shape)} against {list(e.shape)}")
    if not np.isfinite(a).all():
        return float("inf")
    norm = float(np.linalg.norm(e))
    return float(np.linalg.norm(a - e)) / max(norm, 1e-30)


def load_expected(directory: str, names: list[str]) -> dict[str, np.ndarray]:
    return {n: np.load(os.path.join(directory, f"{n}.npy")) for n in names}


def check(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray] | None,
          tolerance: float) -> dict:
    """{"ok", "tolerance", "rel_l2": {name: error}, "problem"}: every expected output must be
    present, of the same shape, and within `tolerance`. Without vtc's outputs (`expected`
    None) "ok" is None: the peer is timed but unchecked, so it is never the best peer."""
    if expected is None:
        return {"ok": None, "tolerance": tolerance, "rel_l2": {},
                "problem": "unchecked: vtc wrote no outputs"}
    errors: dict[str, float] = {}
    problems = []
    for name, want in expected.items():
        if name not in actual:
            problems.append(f"no output '{name}'")
            continue
        try:
            errors[name] = rel_l2(actual[name], want)
        except ValueError as e:
            problems.append(f"{name}: {e}")
            continue
        if not errors[name] <= tolerance:
            problems.append(f"{name}: rel L2 {errors[name]:.2e} > {tolerance:g}")
    return {"ok": not problems, "tolerance": tolerance, "rel_l2": errors,
            "problem": "; ".join(problems) or None}
