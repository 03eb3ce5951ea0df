"""What the Python package's tests share: the repository root, the small models of
models/generate.py, decode-step feeds of the small Llama layer, and the relative L2 error the
whole-model tests are judged by (README, "Tests and tolerances")."""

import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def generate(work_dir, workload, dtype):
    """models/generate.py's small `workload` at batch 1 in `dtype`, written once."""
    path = work_dir / f"{workload}_small_{dtype}_b1.onnx"
    if not path.exists():
        subprocess.run(
            [sys.executable, str(REPO / "models" / "generate.py"), "--out", str(work_dir),
             "--size", "small", "--only", workload, "--dtype", dtype, "--batch", "1"],
            check=True, capture_output=True)
    return path


def decode_feed(pos, rng, cache_len=32, dtype=np.float32):
    """Inputs of one decode step of the small Llama layer at cache position `pos`."""
    return {
        "x": rng.standard_normal((1, 1, 64)).astype(dtype),
        "past_k": rng.standard_normal((1, 2, cache_len, 16)).astype(dtype),
        "past_v": rng.standard_normal((1, 2, cache_len, 16)).astype(dtype),
        "pos": np.array([pos], dtype=np.int64),
        "mask": np.where(np.arange(cache_len) <= pos, 0.0, -32768.0)
        .astype(dtype)
        .reshape(1, 1, 1, cache_len),
    }


def relative_l2(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
