"""ShuffleNet V2 (torchvision's architecture) as ONNX.

conv1 (3x3 stride 2, BN, ReLU) and a 3x3 MaxPool, three stages of inverted residual units
and conv5, global average pooling and the classifier (Gemm). A stride-1 unit splits its
input channels in halves (Split), runs branch2 (1x1 conv, BN, ReLU, depthwise 3x3, BN, 1x1
conv, BN, ReLU) on the second half and concatenates; a stride-2 unit concatenates branch1
(depthwise 3x3 stride 2, BN, 1x1, BN, ReLU) and branch2 applied to the whole input. Every
unit ends with the channel shuffle Reshape [B, 2, C/2, H, W] -> Transpose -> Reshape.
Batch norms stay BatchNormalization ops. Input `image` [B, 3, R, R]; output `logits`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import onnx

from graph_builder import GraphBuilder, Workload, batch_norm, conv, image_inputs


@dataclass(frozen=True)
class ShuffleNetConfig:
    resolution: int
    stage_repeats: tuple[int, ...]
    channels: tuple[int, ...]
    classes: int


CONFIGS = {
    "small": ShuffleNetConfig(resolution=32, stage_repeats=(2, 2, 2), channels=(8, 16, 32, 64, 128),
                              classes=10),
    "full": ShuffleNetConfig(resolution=224, stage_repeats=(4, 8, 4),
                             channels=(24, 116, 232, 464, 1024), classes=1000),
}


def conv_bn(b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, name: str,
            stride: int = 1, groups: int = 1, relu: bool = False) -> str:
    """Conv (no bias), BatchNormalization, optional ReLU."""
    with b.scope(name):
        y = conv(b, x, c_in, c_out, k, "conv", stride, groups, std_gain=2.0 if relu else 1.0)
        y = batch_norm(b, y, c_out, "bn")
        return b.op("Relu", [y], "relu") if relu else y


def branch(b: GraphBuilder, x: str, c_in: int, c_out: int, stride: int, name: str) -> str:
    """branch2: 1x1 (BN, ReLU), depthwise 3x3 (BN), 1x1 (BN, ReLU)."""
    with b.scope(name):
        y = conv_bn(b, x, c_in, c_out, 1, "pw1", relu=True)
        y = conv_bn(b, y, c_out, c_out, 3, "dw", stride=stride, groups=c_out)
        return conv_bn(b, y, c_out, c_out, 1, "pw2", relu=True)


def channel_shuffle(b: GraphBuilder, x: str, batch: int, channels: int, side: int) -> str:
    """view(B, 2, C/2, H, W), transpose(1, 2), view(B, C, H, W)."""
    with b.scope("shuffle"):
        y = b.op("Reshape", [x, b.ints("group_shape", [batch, 2, channels // 2, side, side])],
                 "reshape_groups")
        y = b.op("Transpose", [y], "transpose", perm=[0, 2, 1, 3, 4])
        return b.op("Reshape", [y, b.ints("flat_shape", [batch, channels, side, side])],
                    "reshape_flat")


def inverted_residual(b: GraphBuilder, x: str, c_in: int, c_out: int, stride: int, batch: int,
                      side: int, name: str) -> str:
    """One ShuffleNet V2 unit; `side` is its output height and width."""
    half = c_out // 2
    with b.scope(name):
        if stride == 1:
            x1, x2 = b.op("Split", [x, b.ints("split_sizes", [half, half])], "split",
                          outputs=["split_a", "split_b"], axis=1)
            y = b.op("Concat", [x1, branch(b, x2, half, half, 1, "branch2")], "concat", axis=1)
        else:
            with b.scope("branch1"):
                left = conv_bn(b, x, c_in, c_in, 3, "dw", stride=2, groups=c_in)
                left = conv_bn(b, left, c_in, half, 1, "pw", relu=True)
            right = branch(b, x, c_in, half, 2, "branch2")
            y = b.op("Concat", [left, right], "concat", axis=1)
        return channel_shuffle(b, y, batch, c_out, side)


def build(cfg: ShuffleNetConfig, dtype: str, batch: int) -> onnx.ModelProto:
    b = GraphBuilder("shufflenet_v2", dtype)
    c = cfg.channels
    x = b.input("image", [batch, 3, cfg.resolution, cfg.resolution])
    x = conv_bn(b, x, 3, c[0], 3, "conv1", stride=2, relu=True)
    x = b.op("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    side = cfg.resolution // 4
    c_in = c[0]
    for s, repeats in enumerate(cfg.stage_repeats):
        side //= 2
        with b.scope(f"stage{s + 2}"):
            for i in range(repeats):
                x = inverted_residual(b, x, c_in, c[s + 1], 2 if i == 0 else 1, batch, side,
                                      f"unit{i}")
                c_in = c[s + 1]
    x = conv_bn(b, x, c_in, c[-1], 1, "conv5", relu=True)
    x = b.op("ReduceMean", [x], "global_pool", axes=[2, 3], keepdims=0)
    with b.scope("fc"):
        w = b.weight("weight", [cfg.classes, c[-1]], std=c[-1] ** -0.5)
        bias = b.weight("bias", [cfg.classes], std=0.05)
    logits = b.op("Gemm", [x, w, bias], "fc", transB=1)
    b.output(logits, "logits", [batch, cfg.classes])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def make_inputs(cfg: ShuffleNetConfig, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return image_inputs("image", batch, cfg.resolution, rng)


WORKLOADS = [Workload("shufflenet_v2", CONFIGS, ("f32", "f16"), build, make_inputs)]
