"""Compares the strategies two vtc builds choose: `vtc explain` on every model of a directory,
once as is and, for models with KV caches (graph inputs named past_*), once with them donated
as the Makefile's demo does; prints one line per run and exits non-zero when an output differs.

    python3 bench/explain_diff.py --before OLD/vtc --after build/tools/vtc --models DIR
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time

import onnx


def caches(path: str) -> list[str]:
    model = onnx.load(path, load_external_data=False)
    return [i.name for i in model.graph.input if i.name.startswith("past_")]


def explain(vtc: str, path: str, donate: list[str]) -> tuple[str, float]:
    cmd = [vtc, "explain", path] + (["--donate", *donate] if donate else [])
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()}", seconds
    return r.stdout, seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--models", required=True, nargs="+", help="directories of .onnx files")
    args = parser.parse_args(argv)
    differ = runs = 0
    for d in args.models:
        for path in sorted(glob.glob(os.path.join(d, "*.onnx"))):
            donated = caches(path)
            for donate in ([[], donated] if donated else [[]]):
                old, t_old = explain(args.before, path, donate)
                new, t_new = explain(args.after, path, donate)
                same = old == new
                runs += 1
                differ += not same
                print(f"{'same' if same else 'DIFFERENT':9s} {os.path.basename(path):40s} "
                      f"{'donated' if donate else '':7s} before {t_old:7.2f} s after {t_new:7.2f} s",
                      flush=True)
    print(f"{runs - differ} of {runs} explain outputs identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
