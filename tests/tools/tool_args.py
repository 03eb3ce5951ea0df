"""What the checks of vtc's commands share: their command line (--vtc, the binary; --work, a
folder for their files, created) and a workload of models/ at small size, f32, batch 1."""

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def vtc_and_work() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vtc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def small_workload(work: str, name: str) -> str:
    """Writes workload `name` (small, f32, batch 1) into `work`; returns its path."""
    subprocess.run([sys.executable, os.path.join(ROOT, "models", "generate.py"), "--out", work,
                    "--size", "small", "--only", name, "--dtype", "f32", "--batch", "1"],
                   check=True, capture_output=True)
    return os.path.join(work, f"{name}_small_f32_b1.onnx")
