"""The GPU benchmark's cases: which workloads, at which element type, batches and sizes.

A case is one workload of models/ at one size, element type and batch. The element type of
each workload at full size is the one its peers were measured in (bf16 language layers,
f16 vision models); small sizes for testing the flow default to f32. The decoder layers'
KV cache is donated to vtc and updated in place by the peers (as model code does), so
`present_k`/`present_v` are the `past_k`/`past_v` buffers: the floor counts them once.
Inputs and outputs that fit in the L2 are rotated over several copies by every system alike.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import asdict, dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "models")
if MODELS_DIR not in sys.path:
    sys.path.insert(0, MODELS_DIR)

# Workload -> element type at full size.
FULL_DTYPES = {
    "llama3_layer": "bf16",
    "gemma2_local": "bf16",
    "gemma2_global": "bf16",
    "efficientvit": "f16",
    "yolo11_c3k2": "f16",
    "yolo11n": "f16",
    "shufflenet_v2": "f16",
}
WORKLOADS = list(FULL_DTYPES)
DECODERS = ("llama3_layer", "gemma2_local", "gemma2_global")
KV_ALIASES = {"present_k": "past_k", "present_v": "past_v"}

# The H200's L2: inputs and outputs that fit in it are rotated over several sets, so that a
# run does not find the previous run's tensors in the cache.
L2_BYTES = 60e6
MAX_ROTATE = 32

# Tolerances (relative L2) of a peer's outputs against vtc's, by element type.
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}


@dataclass(frozen=True)
class Case:
    workload: str
    size: str  # small | full
    dtype: str  # f32 | f16 | bf16
    batch: int

    @property
    def name(self) -> str:
        return f"{self.workload}_{self.size}_{self.dtype}_b{self.batch}"

    @property
    def donated(self) -> list[str]:
        """Inputs vtc may update in place (the decoder layers' KV cache)."""
        return list(KV_ALIASES.values()) if self.workload in DECODERS else []

    @property
    def aliases(self) -> dict[str, str]:
        """Output -> the input whose buffer holds it."""
        return dict(KV_ALIASES) if self.workload in DECODERS else {}

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.dtype]

    def to_json(self) -> dict:
        return asdict(self)


def default_dtype(workload: str, size: str) -> str:
    return FULL_DTYPES[workload] if size == "full" else "f32"


def make_cases(workloads: list[str], batches: list[int], size: str,
               dtype: str | None = None) -> list[Case]:
    """Every workload at every batch, in the given order; `dtype` overrides the default."""
    unknown = [w for w in workloads if w not in FULL_DTYPES]
    if unknown:
        raise ValueError(f"unknown workloads {unknown}; known: {', '.join(WORKLOADS)}")
    cases = []
    for w in workloads:
        d = dtype or default_dtype(w, size)
        if d not in TOLERANCE:
            raise ValueError(f"unknown dtype {d}")
        if d == "bf16" and w not in DECODERS:
            raise ValueError(f"{w}: the generators write bf16 only for the decoder layers")
        cases.extend(Case(w, size, d, b) for b in batches)
    return cases


def rotation(io_bytes: int, l2_bytes: float = L2_BYTES) -> int:
    """Sets of inputs and outputs to use in turn: enough to span twice the L2 when one set
    fits in it (at most MAX_ROTATE), else 1."""
    if io_bytes <= 0 or io_bytes >= l2_bytes:
        return 1
    return max(1, min(MAX_ROTATE, math.ceil(2 * l2_bytes / io_bytes)))
