"""Registry of the generated workloads, by name, in the paper's order."""

from __future__ import annotations

import efficientvit
import gemma2_layer
import llama_layer
import shufflenet_v2
import yolo11
from graph_builder import Workload

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for module in (llama_layer, gemma2_layer, efficientvit, yolo11, shufflenet_v2)
    for w in module.WORKLOADS
}


def model_name(workload: str, size: str, dtype: str, batch: int) -> str:
    return f"{workload}_{size}_{dtype}_b{batch}"
