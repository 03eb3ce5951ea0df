"""YOLOv11 as ONNX: the C3k2 block on its own, and the YOLO11n backbone and neck.

Modules follow Ultralytics (ultralytics/nn/modules/block.py) as exported after fusing:
Conv = Conv2d with the batch norm folded into its bias, then SiLU as x * Sigmoid(x).
C3k2: cv1 1x1 -> Split into two halves -> bottleneck(s) on the second half (a plain
Bottleneck with residual, or a C3k) -> Concat of all pieces -> cv2 1x1. YOLO11n adds
SPPF (three MaxPools, Concat), C2PSA (Split, position-sensitive attention with Reshape/
Split/Transpose, Concat) and the neck's nearest Resize and Concat; the Detect head is left
out, so the outputs are the neck's P3/P4/P5 feature maps.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import onnx

from graph_builder import GraphBuilder, Workload, activation, conv


@dataclass(frozen=True)
class C3k2Config:
    channels: int
    size: int
    repeats: int = 1
    c3k: bool = False
    expand: float = 0.5


@dataclass(frozen=True)
class Yolo11Config:
    resolution: int
    width: float = 0.25
    depth: float = 0.5
    max_channels: int = 1024


C3K2_CONFIGS = {"small": C3k2Config(channels=16, size=16), "full": C3k2Config(channels=128, size=160)}
YOLO11N_CONFIGS = {"small": Yolo11Config(resolution=64), "full": Yolo11Config(resolution=640)}


def conv_silu(b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, name: str,
              stride: int = 1, groups: int = 1, act: bool = True) -> str:
    """Ultralytics Conv with its BatchNorm folded: Conv (with bias), then SiLU unless act=False."""
    with b.scope(name):
        # Gain 2.8 ~ 1 / E[silu(z)^2] for z ~ N(0, 1) keeps activations O(1) through depth.
        y = conv(b, x, c_in, c_out, k, "conv", stride, groups, bias=True,
                 std_gain=2.8 if act else 1.0)
        return activation(b, y, "silu" if act else None, "silu")


def bottleneck(b: GraphBuilder, x: str, c: int, k: tuple[int, int], expand: float,
               name: str) -> str:
    """x + cv2(cv1(x)) with a hidden width of c * expand."""
    hidden = int(c * expand)
    with b.scope(name):
        y = conv_silu(b, x, c, hidden, k[0], "cv1")
        y = conv_silu(b, y, hidden, c, k[1], "cv2")
        return b.op("Add", [x, y], "residual")


def c3k(b: GraphBuilder, x: str, c: int, name: str, repeats: int = 2) -> str:
    """C3k: cv3(Concat(m(cv1(x)), cv2(x))) with m = `repeats` 3x3 bottlenecks."""
    hidden = c // 2
    with b.scope(name):
        y = conv_silu(b, x, c, hidden, 1, "cv1")
        for i in range(repeats):
            y = bottleneck(b, y, hidden, (3, 3), 1.0, f"m{i}")
        z = conv_silu(b, x, c, hidden, 1, "cv2")
        return conv_silu(b, b.op("Concat", [y, z], "concat", axis=1), 2 * hidden, c, 1, "cv3")


def c3k2(b: GraphBuilder, x: str, c_in: int, c_out: int, repeats: int, use_c3k: bool,
         expand: float, name: str) -> str:
    """C3k2: cv1, Split in halves, chained bottlenecks on the last piece, Concat, cv2."""
    c = int(c_out * expand)
    with b.scope(name):
        y = conv_silu(b, x, c_in, 2 * c, 1, "cv1")
        pieces = b.op("Split", [y, b.ints("split_sizes", [c, c])], "split",
                      outputs=["split_a", "split_b"], axis=1)
        for i in range(repeats):
            last = pieces[-1]
            pieces.append(c3k(b, last, c, f"m{i}") if use_c3k
                          else bottleneck(b, last, c, (3, 3), 0.5, f"m{i}"))
        cat = b.op("Concat", pieces, "concat", axis=1)
        return conv_silu(b, cat, (2 + repeats) * c, c_out, 1, "cv2")


def sppf(b: GraphBuilder, x: str, c_in: int, c_out: int, name: str) -> str:
    """cv2(Concat(y, pool(y), pool(pool(y)), pool(pool(pool(y))))) with y = cv1(x)."""
    hidden = c_in // 2
    with b.scope(name):
        pieces = [conv_silu(b, x, c_in, hidden, 1, "cv1")]
        for i in range(3):
            pieces.append(b.op("MaxPool", [pieces[-1]], f"pool{i}", kernel_shape=[5, 5],
                               strides=[1, 1], pads=[2, 2, 2, 2]))
        return conv_silu(b, b.op("Concat", pieces, "concat", axis=1), 4 * hidden, c_out, 1, "cv2")


def psa_attention(b: GraphBuilder, x: str, c: int, heads: int, batch: int, side: int,
                  name: str) -> str:
    """Ultralytics Attention: qkv conv, view/split per head, softmax(qᵀk), v·attnᵀ + pe(v)."""
    head_dim = c // heads
    key_dim = head_dim // 2
    n = side * side
    with b.scope(name):
        qkv = conv_silu(b, x, c, c + 2 * key_dim * heads, 1, "qkv", act=False)
        qkv = b.op("Reshape", [qkv, b.ints("qkv_shape", [batch, heads, 2 * key_dim + head_dim, n])],
                   "qkv_view")
        q, k, v = b.op("Split", [qkv, b.ints("split_sizes", [key_dim, key_dim, head_dim])],
                       "qkv_split", outputs=["q", "k", "v"], axis=2)
        q_t = b.op("Transpose", [q], "q_transpose", perm=[0, 1, 3, 2])
        attn = b.op("MatMul", [q_t, k], "qk_matmul")
        attn = b.op("Mul", [attn, b.scalar("scale", key_dim ** -0.5)], "qk_scale")
        attn = b.op("Softmax", [attn], "softmax", axis=-1)
        attn_t = b.op("Transpose", [attn], "attn_transpose", perm=[0, 1, 3, 2])
        out = b.op("MatMul", [v, attn_t], "av_matmul")
        image_shape = b.ints("image_shape", [batch, c, side, side])
        out = b.op("Reshape", [out, image_shape], "out_view")
        pe = conv_silu(b, b.op("Reshape", [v, image_shape], "v_view"), c, c, 3, "pe", groups=c,
                       act=False)
        return conv_silu(b, b.op("Add", [out, pe], "add_pe"), c, c, 1, "proj", act=False)


def c2psa(b: GraphBuilder, x: str, c_in: int, batch: int, side: int, name: str) -> str:
    """cv2(Concat(a, PSABlock(b))) with a, b = Split(cv1(x))."""
    c = c_in // 2
    with b.scope(name):
        y = conv_silu(b, x, c_in, 2 * c, 1, "cv1")
        a, rest = b.op("Split", [y, b.ints("split_sizes", [c, c])], "split",
                       outputs=["split_a", "split_b"], axis=1)
        with b.scope("psa_block"):
            att = psa_attention(b, rest, c, c // 64, batch, side, "attn")
            rest = b.op("Add", [rest, att], "attn_residual")
            ffn = conv_silu(b, rest, c, 2 * c, 1, "ffn0")
            ffn = conv_silu(b, ffn, 2 * c, c, 1, "ffn1", act=False)
            rest = b.op("Add", [rest, ffn], "ffn_residual")
        return conv_silu(b, b.op("Concat", [a, rest], "concat", axis=1), 2 * c, c_in, 1, "cv2")


def upsample(b: GraphBuilder, x: str, name: str) -> str:
    """nn.Upsample(scale_factor=2, mode='nearest') as PyTorch exports it."""
    scales = b.const(f"{name}_scales", np.array([1, 1, 2, 2], np.float32))
    return b.op("Resize", [x, "", scales], name, mode="nearest",
                coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def build_c3k2(cfg: C3k2Config, dtype: str, batch: int) -> onnx.ModelProto:
    b = GraphBuilder("yolo11_c3k2_block", dtype)
    x = b.input("x", [batch, cfg.channels, cfg.size, cfg.size])
    y = c3k2(b, x, cfg.channels, cfg.channels, cfg.repeats, cfg.c3k, cfg.expand, "c3k2")
    b.output(y, "y", [batch, cfg.channels, cfg.size, cfg.size])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def build_yolo11n(cfg: Yolo11Config, dtype: str, batch: int) -> onnx.ModelProto:
    """Layers 0-22 of ultralytics/cfg/models/11/yolo11.yaml at scale n (no Detect)."""
    def ch(c: int) -> int:
        return int(math.ceil(min(c, cfg.max_channels) * cfg.width / 8) * 8)

    n = max(round(2 * cfg.depth), 1)
    b = GraphBuilder("yolo11n_backbone_neck", dtype)
    r = cfg.resolution
    x = b.input("image", [batch, 3, r, r])
    with b.scope("backbone"):
        x = conv_silu(b, x, 3, ch(64), 3, "l0_conv", stride=2)
        x = conv_silu(b, x, ch(64), ch(128), 3, "l1_conv", stride=2)
        x = c3k2(b, x, ch(128), ch(256), n, False, 0.25, "l2_c3k2")
        x = conv_silu(b, x, ch(256), ch(256), 3, "l3_conv", stride=2)
        p3 = c3k2(b, x, ch(256), ch(512), n, False, 0.25, "l4_c3k2")
        x = conv_silu(b, p3, ch(512), ch(512), 3, "l5_conv", stride=2)
        p4 = c3k2(b, x, ch(512), ch(512), n, True, 0.5, "l6_c3k2")
        x = conv_silu(b, p4, ch(512), ch(1024), 3, "l7_conv", stride=2)
        x = c3k2(b, x, ch(1024), ch(1024), n, True, 0.5, "l8_c3k2")
        x = sppf(b, x, ch(1024), ch(1024), "l9_sppf")
        p5 = c2psa(b, x, ch(1024), batch, r // 32, "l10_c2psa")
    with b.scope("neck"):
        x = b.op("Concat", [upsample(b, p5, "l11_upsample"), p4], "l12_concat", axis=1)
        h4 = c3k2(b, x, ch(1024) + ch(512), ch(512), n, False, 0.5, "l13_c3k2")
        x = b.op("Concat", [upsample(b, h4, "l14_upsample"), p3], "l15_concat", axis=1)
        out3 = c3k2(b, x, ch(512) + ch(512), ch(256), n, False, 0.5, "l16_c3k2")
        x = conv_silu(b, out3, ch(256), ch(256), 3, "l17_conv", stride=2)
        x = b.op("Concat", [x, h4], "l18_concat", axis=1)
        out4 = c3k2(b, x, ch(256) + ch(512), ch(512), n, False, 0.5, "l19_c3k2")
        x = conv_silu(b, out4, ch(512), ch(512), 3, "l20_conv", stride=2)
        x = b.op("Concat", [x, p5], "l21_concat", axis=1)
        out5 = c3k2(b, x, ch(512) + ch(1024), ch(1024), n, True, 0.5, "l22_c3k2")
    b.output(out3, "p3", [batch, ch(256), r // 8, r // 8])
    b.output(out4, "p4", [batch, ch(512), r // 16, r // 16])
    b.output(out5, "p5", [batch, ch(1024), r // 32, r // 32])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def make_c3k2_inputs(cfg: C3k2Config, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal((batch, cfg.channels, cfg.size, cfg.size), dtype=np.float32)}


def make_yolo11n_inputs(cfg: Yolo11Config, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    shape = (batch, 3, cfg.resolution, cfg.resolution)
    return {"image": rng.uniform(0.0, 1.0, shape).astype(np.float32)}


WORKLOADS = [
    Workload("yolo11_c3k2", C3K2_CONFIGS, ("f32", "f16"), build_c3k2, make_c3k2_inputs),
    Workload("yolo11n", YOLO11N_CONFIGS, ("f32", "f16"), build_yolo11n, make_yolo11n_inputs),
]
