"""ViT-B/16 image classifier (Dosovitskiy et al.; the Hugging Face ViTForImageClassification
layout), as ONNX with random weights.

Patch embedding by a stride-16 Conv, Reshape/Transpose to tokens, a class token Concat'ed in
front, learned position embeddings, then `layers` pre-norm encoder blocks: LayerNorm,
separate q/k/v projections with bias, Reshape/Transpose to heads, softmax(q·kᵀ/√d)·v,
Transpose/Reshape back, output projection, residual; LayerNorm, MLP with exact (erf) GELU,
residual. A final LayerNorm, the class token gathered out, and the classifier head.
Input: pixels [B,3,H,W]. Output: logits [B,classes].
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import onnx

from graph_builder import GraphBuilder, Workload, image_inputs


@dataclass(frozen=True)
class VitConfig:
    image: int
    patch: int
    hidden: int
    heads: int
    mlp: int
    layers: int
    classes: int
    eps: float = 1e-12


CONFIGS = {
    "small": VitConfig(image=32, patch=8, hidden=32, heads=2, mlp=64, layers=2, classes=10),
    "full": VitConfig(image=224, patch=16, hidden=768, heads=12, mlp=3072, layers=12,
                      classes=1000),
}


def linear_bias(b: GraphBuilder, x: str, d_in: int, d_out: int, name: str) -> str:
    w = b.weight(f"{name}/weight", [d_in, d_out], std=1.0 / math.sqrt(d_in))
    bias = b.weight(f"{name}/bias", [d_out], std=0.02)
    return b.op("Add", [b.op("MatMul", [x, w], f"{name}_matmul"), bias], name)


def layer_norm(b: GraphBuilder, x: str, dim: int, name: str, eps: float) -> str:
    with b.scope(name):
        scale = b.weight("weight", [dim], std=0.1, mean=1.0)
        shift = b.weight("bias", [dim], std=0.1)
    return b.op("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=eps)


def gelu(b: GraphBuilder, x: str, name: str) -> str:
    """0.5 x (1 + erf(x / sqrt 2)): the exact GELU as exported at opset 17."""
    with b.scope(name):
        scaled = b.op("Div", [x, b.scalar("sqrt_2", math.sqrt(2.0))], "div_sqrt_2")
        one_plus = b.op("Add", [b.op("Erf", [scaled], "erf"), b.scalar("one", 1.0)], "one_plus")
        half_x = b.op("Mul", [x, b.scalar("half", 0.5)], "half_x")
    return b.op("Mul", [half_x, one_plus], name)


def attention(b: GraphBuilder, h: str, cfg: VitConfig, batch: int, tokens: int) -> str:
    head_dim = cfg.hidden // cfg.heads
    heads_shape = b.ints("heads_shape", [batch, tokens, cfg.heads, head_dim])
    q, k, v = (b.op("Reshape", [linear_bias(b, h, cfg.hidden, cfg.hidden, f"{n}_proj"),
                                heads_shape], f"{n}_reshape") for n in "qkv")
    q = b.op("Transpose", [q], "q_transpose", perm=[0, 2, 1, 3])
    k = b.op("Transpose", [k], "k_transpose", perm=[0, 2, 3, 1])
    v = b.op("Transpose", [v], "v_transpose", perm=[0, 2, 1, 3])
    scores = b.op("MatMul", [q, k], "qk_matmul")
    scores = b.op("Mul", [scores, b.scalar("scale", 1.0 / math.sqrt(head_dim))], "qk_scale")
    context = b.op("MatMul", [b.op("Softmax", [scores], "softmax", axis=-1), v], "pv_matmul")
    context = b.op("Transpose", [context], "out_transpose", perm=[0, 2, 1, 3])
    context = b.op("Reshape", [context, b.ints("out_shape", [batch, tokens, cfg.hidden])],
                   "out_reshape")
    return linear_bias(b, context, cfg.hidden, cfg.hidden, "o_proj")


def block(b: GraphBuilder, x: str, cfg: VitConfig, batch: int, tokens: int) -> str:
    h = attention(b, layer_norm(b, x, cfg.hidden, "norm_before", cfg.eps), cfg, batch, tokens)
    x = b.op("Add", [x, h], "attn_residual")
    m = linear_bias(b, layer_norm(b, x, cfg.hidden, "norm_after", cfg.eps), cfg.hidden,
                    cfg.mlp, "fc1")
    m = linear_bias(b, gelu(b, m, "gelu"), cfg.mlp, cfg.hidden, "fc2")
    return b.op("Add", [x, m], "mlp_residual")


def build(cfg: VitConfig, dtype: str, batch: int) -> onnx.ModelProto:
    b = GraphBuilder("vit", dtype)
    x = b.input("pixels", [batch, 3, cfg.image, cfg.image])
    grid = cfg.image // cfg.patch
    tokens = grid * grid + 1
    with b.scope("embed"):
        w = b.weight("patch/weight", [cfg.hidden, 3, cfg.patch, cfg.patch],
                     std=1.0 / math.sqrt(3 * cfg.patch * cfg.patch))
        bias = b.weight("patch/bias", [cfg.hidden], std=0.02)
        p = b.op("Conv", [x, w, bias], "patch", kernel_shape=[cfg.patch, cfg.patch],
                 strides=[cfg.patch, cfg.patch])
        p = b.op("Reshape", [p, b.ints("flat_shape", [batch, cfg.hidden, grid * grid])],
                 "flatten")
        p = b.op("Transpose", [p], "to_tokens", perm=[0, 2, 1])
        cls = b.op("Expand", [b.weight("cls_token", [1, 1, cfg.hidden], std=0.02),
                              b.ints("cls_shape", [batch, 1, cfg.hidden])], "cls_expand")
        x = b.op("Concat", [cls, p], "with_cls", axis=1)
        x = b.op("Add", [x, b.weight("position", [1, tokens, cfg.hidden], std=0.02)],
                 "add_position")
    for i in range(cfg.layers):
        with b.scope(f"layer{i}"):
            x = block(b, x, cfg, batch, tokens)
    x = layer_norm(b, x, cfg.hidden, "final_norm", cfg.eps)
    cls = b.op("Gather", [x, b.ints("cls_index", [0])], "cls_gather", axis=1)
    cls = b.op("Squeeze", [cls, b.ints("cls_axis", [1])], "cls_squeeze")
    logits = linear_bias(b, cls, cfg.hidden, cfg.classes, "classifier")
    b.output(logits, "logits", [batch, cfg.classes])
    return b.model(__doc__.split("\n\n")[0], {"config": json.dumps(asdict(cfg))})


def make_inputs(cfg: VitConfig, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return image_inputs("pixels", batch, cfg.image, rng)


WORKLOADS = [Workload("vit_b16", CONFIGS, ("f32", "f16"), build, make_inputs)]
