"""ResNet-50 image classifier (He et al.; torchvision's v1.5, stride on the 3×3 conv), as ONNX
with random weights.

A 7×7 stride-2 stem with BatchNorm, ReLU and a 3×3 stride-2 MaxPool; four stages of
bottleneck blocks (1×1 reduce, 3×3, 1×1 expand ×4, each with BatchNorm; a 1×1 stride-s
projection with BatchNorm on the shortcut where the shape changes; residual Add, ReLU);
GlobalAveragePool, Flatten, and the classifier Gemm. Input: pixels [B,3,H,W]. Output: logits
[B,classes].
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import onnx

from graph_builder import GraphBuilder, Workload, batch_norm, conv, image_inputs


@dataclass(frozen=True)
class ResNetConfig:
    image: int
    width: int  # channels of the first stage's bottleneck (64 in ResNet-50)
    blocks: tuple[int, ...]
    classes: int


CONFIGS = {
    "small": ResNetConfig(image=32, width=8, blocks=(1, 1, 1, 1), classes=10),
    "full": ResNetConfig(image=224, width=64, blocks=(3, 4, 6, 3), classes=1000),
}


def conv_bn(b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, name: str,
            stride: int = 1, relu: bool = True) -> str:
    y = batch_norm(b, conv(b, x, c_in, c_out, k, f"{name}_conv", stride=stride), c_out,
                   f"{name}_bn")
    return b.op("Relu", [y], f"{name}_relu") if relu else y


def bottleneck(b: GraphBuilder, x: str, c_in: int, width: int, stride: int) -> str:
    c_out = 4 * width
    h = conv_bn(b, x, c_in, width, 1, "reduce")
    h = conv_bn(b, h, width, width, 3, "spatial", stride=stride)
    h = conv_bn(b, h, width, c_out, 1, "expand", relu=False)
    shortcut = x
    if stride != 1 or c_in != c_out:
        shortcut = conv_bn(b, x, c_in, c_out, 1, "shortcut", stride=stride, relu=False)
    return b.op("Relu", [b.op("Add", [h, shortcut], "residual")], "out_relu")


def build(cfg: ResNetConfig, dtype: str, batch: int) -> onnx.ModelProto:
    b = GraphBuilder("resnet50", dtype)
    x = b.input("pixels", [batch, 3, cfg.image, cfg.image])
    with b.scope("stem"):
        x = conv_bn(b, x, 3, cfg.width, 7, "stem", stride=2)
        x = b.op("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = cfg.width
    for stage, count in enumerate(cfg.blocks):
        width = cfg.width << stage
        for i in range(count):
            with b.scope(f"stage{stage + 1}/block{i}"):
                x = bottleneck(b, x, channels, width, 2 if i == 0 and stage > 0 else 1)
            channels = 4 * width
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    w = b.weight("fc/weight", [cfg.classes, channels], std=1.0 / math.sqrt(channels))
    bias = b.weight("fc/bias", [cfg.classes], std=0.02)
    b.output(b.op("Gemm", [x, w, bias], "fc", transB=1), "logits", [batch, cfg.classes])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def make_inputs(cfg: ResNetConfig, batch: int,
                rng: np.random.Generator) -> dict[str, np.ndarray]:
    return image_inputs("pixels", batch, cfg.image, rng)


WORKLOADS = [Workload("resnet50", CONFIGS, ("f32", "f16"), build, make_inputs)]
