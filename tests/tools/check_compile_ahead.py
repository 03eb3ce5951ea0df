"""`vtc compile`: builds a model's code into the cache without running it. On cuda for a named
architecture (sm_90a) with no GPU here: the cubins land in the cache directory, a second
compile finds them all, and the architecture or a cuda-only flag given wrongly is refused with
a one-line error. On cpu the shared object is built once and found the second time."""

import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tool_args import vtc_and_work

SKIP = 77


def tiny_model(path: str) -> None:
    """y = softmax(relu(transpose(x) . w)): a copy greedy can make virtual and two kernels."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8), "w")
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0], name="t"),
             helper.make_node("MatMul", ["xt", "w"], ["h"], name="mm"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1, name="softmax")]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def vtc(args, *argv):
    return subprocess.run([args.vtc, *argv], capture_output=True, text=True)


def main() -> int:
    args = vtc_and_work()
    model = os.path.join(args.work, "tiny.onnx")
    tiny_model(model)
    failures = []

    # cpu: built once, then found.
    cpu_cache = os.path.join(args.work, "cpu-cache")
    shutil.rmtree(cpu_cache, ignore_errors=True)  # an earlier run's entries would be found
    first = vtc(args, "compile", model, "--cache-dir", cpu_cache, "--quiet")
    second = vtc(args, "compile", model, "--cache-dir", cpu_cache, "--quiet")
    print(first.stdout.strip(), "|", second.stdout.strip())
    if first.returncode or "compiled in" not in first.stdout:
        failures.append(f"cpu first compile: {first.returncode} {first.stdout} {first.stderr}")
    if second.returncode or "all cached" not in second.stdout:
        failures.append(f"cpu second compile: {second.returncode} {second.stdout} {second.stderr}")

    # Flags for another target are refused.
    wrong = vtc(args, "compile", model, "--arch", "sm_90a", "--cache-dir", cpu_cache)
    if wrong.returncode == 0 or "target cuda" not in wrong.stderr:
        failures.append(f"--arch on cpu accepted: {wrong.returncode} {wrong.stderr}")

    # cuda for sm_90a, no GPU needed.
    cuda_cache = os.path.join(args.work, "cuda-cache")
    shutil.rmtree(cuda_cache, ignore_errors=True)
    flags = ["--target", "cuda", "--arch", "sm_90a", "--cuda-driver", "13000",
             "--strategies", "none,greedy", "--cache-dir", cuda_cache, "--quiet"]
    first = vtc(args, "compile", model, *flags)
    if "without NVRTC" in first.stderr:
        print("skipped cuda: vtc was built without NVRTC")
        return SKIP if not failures else 1
    second = vtc(args, "compile", model, *flags)
    print(first.stdout.strip(), "|", second.stdout.strip())
    lines = first.stdout.splitlines()
    if first.returncode or len(lines) != 2 or not all("sm_90a" in l for l in lines):
        failures.append(f"cuda compile: {first.returncode} {first.stdout} {first.stderr}")
    cubins = [f for f in os.listdir(cuda_cache) if f.endswith(".cubin")] if os.path.isdir(cuda_cache) else []
    if not cubins:
        failures.append(f"no cubin in {cuda_cache}")
    if second.returncode or second.stdout.count("all cached") != 2:
        failures.append(f"cuda second compile: {second.returncode} {second.stdout} {second.stderr}")
    bad = vtc(args, "compile", model, "--target", "cuda", "--arch", "hopper", "--cache-dir", cuda_cache)
    if bad.returncode == 0 or "'hopper' is not a GPU architecture" not in bad.stderr:
        failures.append(f"--arch hopper: {bad.returncode} {bad.stderr}")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
