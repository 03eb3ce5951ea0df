"""EfficientViT (B1-style backbone) as ONNX, following the official MIT-Han-Lab code.

Input stem (Conv-BN-HardSwish, DSConv blocks), two MBConv stages, then two stages of a
strided MBConv followed by EfficientViT blocks: lite multi-scale linear attention (LiteMLA:
1x1 QKV conv, multi-scale aggregation by a 5x5 depthwise conv and a grouped 1x1 conv,
Concat, Reshape to [B, heads, 3*dim, H*W], Slice into q/k/v, ReLU kernel, k Transpose, v
Pad with a row of ones, two MatMuls, Slice and Div by the normaliser row, Reshape back,
projection conv, residual) and an MBConv. Batch norms stay BatchNormalization ops. As in
the official code the attention runs in float32 when the model is f16. Input `image`
[B, 3, R, R]; output `features` [B, widths[-1], R/32, R/32] (the backbone's last stage).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import onnx

from graph_builder import GraphBuilder, Workload, activation, batch_norm, conv


@dataclass(frozen=True)
class EfficientViTConfig:
    resolution: int
    widths: tuple[int, ...]
    depths: tuple[int, ...]
    dim: int
    expand_ratio: int = 4
    scale: int = 5
    eps: float = 1e-15


CONFIGS = {
    "small": EfficientViTConfig(resolution=128, widths=(8, 16, 16, 32, 32), depths=(1, 1, 1, 1, 1),
                                dim=8),
    "full": EfficientViTConfig(resolution=512, widths=(16, 32, 64, 128, 256),
                               depths=(1, 2, 3, 3, 4), dim=16),
}


def conv_layer(b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, name: str,
               stride: int = 1, groups: int = 1, bias: bool = False, norm: bool = True,
               act: str | None = None) -> str:
    """The official ConvLayer: Conv, optional BatchNormalization, optional activation.

    Layers without activation end residual branches (or feed the attention); their smaller
    random weights keep activations O(1) through the un-normalised residual stream.
    """
    with b.scope(name):
        y = conv(b, x, c_in, c_out, k, "conv", stride, groups, bias,
                 std_gain=2.0 if act else 0.25)
        if norm:
            y = batch_norm(b, y, c_out, "bn")
        return activation(b, y, act, "act")


def ds_conv(b: GraphBuilder, x: str, channels: int, name: str) -> str:
    """DSConv: depthwise 3x3 (BN, HardSwish), pointwise 1x1 (BN)."""
    with b.scope(name):
        y = conv_layer(b, x, channels, channels, 3, "depth_conv", groups=channels, act="hswish")
        return conv_layer(b, y, channels, channels, 1, "point_conv")


def mb_conv(b: GraphBuilder, x: str, c_in: int, c_out: int, stride: int, expand: int,
            name: str, fewer_norm: bool) -> str:
    """MBConv: 1x1 expand, depthwise 3x3, 1x1 project; fewer_norm: biases instead of the
    first two batch norms (the stage-3/4 and EfficientViT-block variant)."""
    mid = c_in * expand
    with b.scope(name):
        y = conv_layer(b, x, c_in, mid, 1, "inverted_conv", bias=fewer_norm,
                       norm=not fewer_norm, act="hswish")
        y = conv_layer(b, y, mid, mid, 3, "depth_conv", stride=stride, groups=mid,
                       bias=fewer_norm, norm=not fewer_norm, act="hswish")
        return conv_layer(b, y, mid, c_out, 1, "point_conv")


def relu_linear_attention(b: GraphBuilder, qkv: str, batch: int, heads: int, dim: int,
                          side: int, eps: float) -> str:
    """The official relu_linear_att on the multi-scale qkv [B, heads*3*dim, H, W]."""
    hw = side * side
    with b.scope("linear_att"):
        if b.dtype != "f32":
            qkv = b.cast(qkv, "f32", "to_f32")
        qkv = b.op("Reshape", [qkv, b.ints("qkv_shape", [batch, heads, 3 * dim, hw])],
                   "qkv_reshape")
        axis = b.ints("axis", [2])
        q, k, v = (b.op("Slice", [qkv, b.ints(f"{n}_start", [i * dim]),
                                  b.ints(f"{n}_end", [(i + 1) * dim]), axis], f"{n}_slice")
                   for i, n in enumerate("qkv"))
        q = b.op("Relu", [q], "q_relu")
        k = b.op("Relu", [k], "k_relu")
        k_t = b.op("Transpose", [k], "k_transpose", perm=[0, 1, 3, 2])
        v = b.op("Pad", [v, b.ints("v_pads", [0, 0, 0, 0, 0, 0, 1, 0]),
                         b.scalar("one", 1.0, "f32")], "v_pad_ones", mode="constant")
        vk = b.op("MatMul", [v, k_t], "vk_matmul")
        out = b.op("MatMul", [vk, q], "vkq_matmul")
        num = b.op("Slice", [out, b.ints("num_start", [0]), b.ints("num_end", [-1]), axis],
                   "numerator_slice")
        den = b.op("Slice", [out, b.ints("den_start", [-1]), b.ints("den_end", [dim + 1]), axis],
                   "denominator_slice")
        den = b.op("Add", [den, b.scalar("eps", eps, "f32")], "denominator_eps")
        out = b.op("Div", [num, den], "normalize")
        out = b.op("Reshape", [out, b.ints("out_shape", [batch, heads * dim, side, side])],
                   "out_reshape")
        return b.cast(out, b.dtype, "to_dtype") if b.dtype != "f32" else out


def lite_mla(b: GraphBuilder, x: str, channels: int, dim: int, scale: int, batch: int,
             side: int, eps: float, name: str) -> str:
    """LiteMLA: qkv conv, multi-scale aggregation, Concat, linear attention, projection."""
    heads = channels // dim
    total = heads * dim
    with b.scope(name):
        qkv = conv_layer(b, x, channels, 3 * total, 1, "qkv", norm=False)
        with b.scope("aggreg"):
            agg = conv(b, qkv, 3 * total, 3 * total, scale, "depthwise", groups=3 * total,
                       std_gain=1.0)
            agg = conv(b, agg, 3 * total, 3 * total, 1, "grouped_pointwise", groups=3 * heads,
                       std_gain=1.0)
        multi = b.op("Concat", [qkv, agg], "multi_scale_concat", axis=1)
        out = relu_linear_attention(b, multi, batch, 2 * heads, dim, side, eps)
        return conv_layer(b, out, 2 * total, channels, 1, "proj")


def efficientvit_block(b: GraphBuilder, x: str, channels: int, cfg: EfficientViTConfig,
                       batch: int, side: int, name: str) -> str:
    """Context module (LiteMLA + residual), then local module (MBConv + residual)."""
    with b.scope(name):
        ctx = lite_mla(b, x, channels, cfg.dim, cfg.scale, batch, side, cfg.eps, "context")
        x = b.op("Add", [ctx, x], "context_residual")
        local = mb_conv(b, x, channels, channels, 1, cfg.expand_ratio, "local", fewer_norm=True)
        return b.op("Add", [local, x], "local_residual")


def build(cfg: EfficientViTConfig, dtype: str, batch: int) -> onnx.ModelProto:
    b = GraphBuilder("efficientvit_backbone", dtype)
    w = cfg.widths
    x = b.input("image", [batch, 3, cfg.resolution, cfg.resolution])
    side = cfg.resolution // 2
    with b.scope("input_stem"):
        x = conv_layer(b, x, 3, w[0], 3, "stem_conv", stride=2, act="hswish")
        for i in range(cfg.depths[0]):
            x = b.op("Add", [ds_conv(b, x, w[0], f"ds_conv{i}"), x], f"residual{i}")
    c_in = w[0]
    for stage in (1, 2):
        with b.scope(f"stage{stage}"):
            for i in range(cfg.depths[stage]):
                stride = 2 if i == 0 else 1
                y = mb_conv(b, x, c_in, w[stage], stride, cfg.expand_ratio, f"mb_conv{i}",
                            fewer_norm=False)
                x = y if stride == 2 else b.op("Add", [y, x], f"residual{i}")
                c_in = w[stage]
        side //= 2
    for stage in (3, 4):
        side //= 2
        if side * side <= cfg.dim:
            raise ValueError(f"stage {stage}: {side}x{side} too small for linear attention")
        with b.scope(f"stage{stage}"):
            x = mb_conv(b, x, c_in, w[stage], 2, cfg.expand_ratio, "downsample",
                        fewer_norm=True)
            for i in range(cfg.depths[stage]):
                x = efficientvit_block(b, x, w[stage], cfg, batch, side, f"block{i}")
            c_in = w[stage]
    b.output(x, "features", [batch, w[-1], side, side])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def make_inputs(cfg: EfficientViTConfig, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    shape = (batch, 3, cfg.resolution, cfg.resolution)
    return {"image": rng.standard_normal(shape, dtype=np.float32)}


WORKLOADS = [Workload("efficientvit", CONFIGS, ("f32", "f16"), build, make_inputs)]
