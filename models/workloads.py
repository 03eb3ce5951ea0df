"""Registry of the generated workloads, by name: the paper's, in its order (written by
default), and whole models (written when named)."""

from __future__ import annotations

import dataclasses

import decoder_stack
import efficientvit
import gemma2_layer
import llama_layer
import resnet50
import shufflenet_v2
import vit
import yolo11
from graph_builder import Workload

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for module in (llama_layer, gemma2_layer, efficientvit, yolo11, shufflenet_v2)
    for w in module.WORKLOADS
}

# Whole networks: decoders at a configurable depth, ViT-B/16, ResNet-50.
WHOLE_MODELS: dict[str, Workload] = {
    w.name: w for module in (decoder_stack, vit, resnet50) for w in module.WORKLOADS
}

ALL_WORKLOADS: dict[str, Workload] = {**WORKLOADS, **WHOLE_MODELS}


def model_name(workload: str, size: str, dtype: str, batch: int, layers: int | None = None) -> str:
    suffix = "" if layers is None else f"_l{layers}"
    return f"{workload}_{size}_{dtype}_b{batch}{suffix}"


def has_depth(config) -> bool:
    return dataclasses.is_dataclass(config) and any(
        f.name == "layers" for f in dataclasses.fields(config))


def config_at(workload: Workload, size: str, layers: int | None = None):
    """The workload's configuration of `size`, at `layers` deep where it has a depth."""
    config = workload.configs[size]
    if layers is None or not has_depth(config):
        return config
    return dataclasses.replace(config, layers=layers)
