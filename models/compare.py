"""Compares a runtime's outputs with the expected outputs written by check_ort.py.

--expected is either one model's directory (holding meta.json and expected/) or a
directory of such model directories. --actual mirrors it: for one model it holds
<output>.npy directly (what `vtc run --output-dir` writes); for many, <model>/<output>.npy.
For each output this prints the relative L2 error ||a - e|| / ||e|| and the largest
absolute error, and fails when the relative error is over the tolerance of the model's
element type, when a file is missing, when shapes differ or when the actual values are not
finite. bf16 references are f32 arithmetic on bf16 values (see check_ort.py), hence the
looser --tol-bf16. Exits 0 when everything passes, 1 otherwise.

    python3 models/compare.py --expected DIR --actual DIR [--tol-f32 1e-5] [--tol-f16 1e-2]
                              [--tol-bf16 5e-2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np


def model_dirs(expected: str, actual: str) -> list[tuple[str, str, str]]:
    """(model name, expected model dir, actual outputs dir) for each model to compare."""
    if os.path.exists(os.path.join(expected, "meta.json")):
        return [(os.path.basename(os.path.normpath(expected)), expected, actual)]
    return [(name, os.path.join(expected, name), os.path.join(actual, name))
            for name in sorted(os.listdir(expected))
            if os.path.exists(os.path.join(expected, name, "meta.json"))]


def errors(actual: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """(relative L2 error, max absolute error); relative to 1 when `expected` is all zero."""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    diff = np.linalg.norm(a - e)
    norm = np.linalg.norm(e)
    return float(diff / norm if norm > 0 else diff), float(np.max(np.abs(a - e), initial=0.0))


def compare_model(name: str, expected_dir: str, actual_dir: str,
                  tolerances: dict[str, float]) -> list[tuple]:
    """One row per output: (model, output, dtype, rel_l2, max_abs, tol, status)."""
    with open(os.path.join(expected_dir, "meta.json")) as f:
        meta = json.load(f)
    tol = tolerances[meta["dtype"]]
    rows = []
    for output in meta["expected"]:
        expected = np.load(os.path.join(expected_dir, "expected", f"{output}.npy"))
        path = os.path.join(actual_dir, f"{output}.npy")
        if not os.path.exists(path):
            rows.append((name, output, meta["dtype"], None, None, tol, "MISSING"))
            continue
        actual = np.load(path)
        if actual.shape != expected.shape:
            rows.append((name, output, meta["dtype"], None, None, tol,
                         f"SHAPE {list(actual.shape)} != {list(expected.shape)}"))
            continue
        if not np.isfinite(actual.astype(np.float64)).all():
            rows.append((name, output, meta["dtype"], None, None, tol, "NOT FINITE"))
            continue
        rel, max_abs = errors(actual, expected)
        rows.append((name, output, meta["dtype"], rel, max_abs, tol,
                     "ok" if rel <= tol else "FAIL"))
    return rows


def print_table(rows: list[tuple]) -> None:
    def number(x):
        return "-" if x is None else f"{x:.3e}"

    header = ("model", "output", "dtype", "rel_l2", "max_abs", "tol", "status")
    lines = [header] + [(m, o, d, number(r), number(a), f"{t:.0e}", s)
                        for m, o, d, r, a, t, s in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--expected", required=True)
    parser.add_argument("--actual", required=True)
    parser.add_argument("--tol-f32", type=float, default=1e-5)
    parser.add_argument("--tol-f16", type=float, default=1e-2)
    parser.add_argument("--tol-bf16", type=float, default=5e-2)
    args = parser.parse_args(argv)
    tolerances = {"f32": args.tol_f32, "f16": args.tol_f16, "bf16": args.tol_bf16}
    models = model_dirs(args.expected, args.actual)
    if not models:
        print(f"no meta.json under {args.expected}", file=sys.stderr)
        return 1
    rows = [row for m in models for row in compare_model(*m, tolerances)]
    print_table(rows)
    failed = sum(row[-1] != "ok" for row in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
