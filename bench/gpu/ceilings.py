"""The device's ceilings, measured in the peers' process of each case: copy bandwidth and
matrix rate, the denominators of the floor and of each kernel's achieved fraction.

On a GPU (PyTorch with CUDA): a device-to-device copy of a 1 GiB buffer and a square matrix
product (8192, in the case's element type; f32 with TF32 off), each timed with CUDA events,
median of 20 after warm-up. Bandwidth counts read + write (2 x bytes). Without torch or a
GPU, when the case runs on the cpu target, numpy measures the host's copy bandwidth and f32
matrix rate the same way with a wall clock, so the floor logic runs end to end anywhere.
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def gpu_ceilings(torch, dtype: str, copy_bytes: int = 1 << 30, n: int = 8192,
                 repeat: int = 20) -> dict:
    dev = torch.device("cuda")
    src = torch.empty(copy_bytes, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    copy_ms = time_cuda(torch, lambda: dst.copy_(src), repeat)
    del src, dst
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device=dev, dtype=tdt)
    b = torch.randn(n, n, device=dev, dtype=tdt)
    mm_ms = time_cuda(torch, lambda: torch.mm(a, b), repeat)
    del a, b
    torch.cuda.empty_cache()
    return {
        "available": True,
        "device": torch.cuda.get_device_name(),
        "how": f"torch: D2D copy of {copy_bytes >> 20} MiB, {dtype} matmul {n}^3, CUDA events",
        "copy_bytes_per_s": 2 * copy_bytes / (copy_ms * 1e-3),
        "matrix_flops_per_s": 2.0 * n ** 3 / (mm_ms * 1e-3),
        "matrix_dtype": dtype,
    }


def time_cuda(torch, fn, repeat: int, warmup: int = 3) -> float:
    """Median ms of `fn` by CUDA events, one event pair per call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def host_ceilings(copy_bytes: int = 256 << 20, n: int = 1024, repeat: int = 10) -> dict:
    src = np.ones(copy_bytes, np.uint8)
    dst = np.empty_like(src)
    copy_ms = time_host(lambda: np.copyto(dst, src), repeat)
    a = np.ones((n, n), np.float32)
    b = np.ones((n, n), np.float32)
    mm_ms = time_host(lambda: a @ b, repeat)
    return {
        "available": True,
        "device": "host cpu",
        "how": f"numpy: copy of {copy_bytes >> 20} MiB, f32 matmul {n}^3, wall clock",
        "copy_bytes_per_s": 2 * copy_bytes / (copy_ms * 1e-3),
        "matrix_flops_per_s": 2.0 * n ** 3 / (mm_ms * 1e-3),
        "matrix_dtype": "f32",
    }


def time_host(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def measure(torch, target: str, dtype: str) -> dict:
    """Ceilings for a case on `target`; {"available": False, "reason"} where none can be."""
    if target == "cuda":
        if torch is None:
            return {"available": False, "reason": "no torch to measure the GPU's ceilings"}
        if not torch.cuda.is_available():
            return {"available": False, "reason": "torch sees no GPU"}
        return gpu_ceilings(torch, dtype)
    return host_ceilings()
