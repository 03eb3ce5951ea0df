"""Pieces shared by the Llama-3 and Gemma-2 decoder layers at one decode step.

These build the data-movement chain between the QKV projection and attention that the
paper's figure 2 shows: head reshapes and transposes, rotary embedding with Slice/Neg/
Concat, the KV-cache update by ScatterND at a run-time position, a constant-bound Slice of
the cache, grouped-query Unsqueeze/Expand/Reshape, and the attention itself. Every shape is
static: the attention reads the whole cache and an additive mask hides the positions past
`pos`. Also here: the rotary tables and the seeded inputs of a decode step.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import onnx
from onnx import TensorProto

from graph_builder import GraphBuilder, linear

# Additive mask value for hidden positions; a power of two, exact in f32, f16 and bf16.
MASK_VALUE = -32768.0


def rope_tables(cache_len: int, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin tables [cache_len, head_dim] with the halves repeated (HF layout)."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    freqs = np.outer(np.arange(cache_len, dtype=np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def rotary_at_position(b: GraphBuilder, pos: str, cache_len: int, head_dim: int,
                       theta: float) -> tuple[str, str]:
    """cos/sin rows at run-time `pos`, by Gather on constant tables, shaped [1, 1, 1, hd]."""
    cos_table, sin_table = rope_tables(cache_len, head_dim, theta)
    axes = b.ints("rope_unsqueeze_axes", [0, 1])
    rows = []
    for label, table in (("cos", cos_table), ("sin", sin_table)):
        row = b.op("Gather", [b.tensor(f"{label}_table", table), pos], f"{label}_gather", axis=0)
        rows.append(b.op("Unsqueeze", [row, axes], f"{label}_unsqueeze"))
    return rows[0], rows[1]


def apply_rotary(b: GraphBuilder, x: str, cos: str, sin: str, head_dim: int,
                 name: str) -> str:
    """x * cos + rotate_half(x) * sin with rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2])."""
    half = head_dim // 2
    with b.scope(name):
        axis = b.ints("axis", [-1])
        x1 = b.op("Slice", [x, b.ints("start_lo", [0]), b.ints("end_lo", [half]), axis],
                  "slice_lo")
        x2 = b.op("Slice", [x, b.ints("start_hi", [half]), b.ints("end_hi", [head_dim]), axis],
                  "slice_hi")
        rotated = b.op("Concat", [b.op("Neg", [x2], "neg_hi"), x1], "rotate_half", axis=-1)
        x_cos = b.op("Mul", [x, cos], "mul_cos")
        rot_sin = b.op("Mul", [rotated, sin], "mul_sin")
    return b.op("Add", [x_cos, rot_sin], name)


def split_heads(b: GraphBuilder, x: str, batch: int, heads: int, head_dim: int,
                name: str) -> str:
    """[B, 1, heads*hd] -> Reshape [B, 1, heads, hd] -> Transpose [B, heads, 1, hd]."""
    shaped = b.op("Reshape", [x, b.ints(f"{name}_shape", [batch, 1, heads, head_dim])],
                  f"{name}_reshape")
    return b.op("Transpose", [shaped], f"{name}_transpose", perm=[0, 2, 1, 3])


def cache_write_indices(b: GraphBuilder, pos: str, batch: int, kv_heads: int) -> str:
    """ScatterND indices [B, kv, 1, 3] = (b, h, pos), built from run-time `pos`."""
    with b.scope("cache_index"):
        grid = np.stack(np.meshgrid(np.arange(batch), np.arange(kv_heads), indexing="ij"), -1)
        batch_head = b.const("batch_head_grid", grid.reshape(batch, kv_heads, 1, 2).astype(np.int64))
        pos4 = b.op("Reshape", [pos, b.ints("pos_shape", [1, 1, 1, 1])], "pos_reshape")
        pos_grid = b.op("Expand", [pos4, b.ints("grid_shape", [batch, kv_heads, 1, 1])],
                        "pos_expand")
        return b.op("Concat", [batch_head, pos_grid], "indices", axis=-1)


def update_cache(b: GraphBuilder, past: str, new: str, indices: str, name: str) -> str:
    """The updated cache: ScatterND of `new` [B, kv, 1, hd] into `past` at `indices`."""
    return b.op("ScatterND", [past, indices, new], name)


def read_cache(b: GraphBuilder, cache: str, batch: int, kv_heads: int, groups: int,
               cache_len: int, head_dim: int, name: str) -> str:
    """Constant Slice to the cache length, then grouped-query repeat to [B, heads, C, hd]."""
    with b.scope(name):
        sliced = b.op("Slice", [cache, b.ints("start", [0]), b.ints("end", [cache_len]),
                                b.ints("axis", [2])], "slice")
        wide = b.op("Unsqueeze", [sliced, b.ints("axes", [2])], "unsqueeze")
        expanded = b.op("Expand", [wide, b.ints("expand_shape",
                                                [batch, kv_heads, groups, cache_len, head_dim])],
                        "expand")
        return b.op("Reshape", [expanded, b.ints("heads_shape",
                                                 [batch, kv_heads * groups, cache_len, head_dim])],
                    "reshape")


def softmax(b: GraphBuilder, scores: str) -> str:
    """Softmax over the last axis in float32, cast back (softmax(dtype=float32).to(dtype))."""
    if b.dtype == "f32":
        return b.op("Softmax", [scores], "softmax", axis=-1)
    probs = b.op("Softmax", [b.cast(scores, "f32", "scores_to_f32")], "softmax", axis=-1)
    return b.cast(probs, b.dtype, "probs_to_dtype")


def merge_heads(b: GraphBuilder, x: str, batch: int, heads: int, head_dim: int) -> str:
    """[B, heads, 1, hd] -> Transpose [B, 1, heads, hd] -> Reshape [B, 1, heads*hd]."""
    merged = b.op("Transpose", [x], "out_transpose", perm=[0, 2, 1, 3])
    return b.op("Reshape", [merged, b.ints("out_shape", [batch, 1, heads * head_dim])],
                "out_reshape")


def decode_inputs(batch: int, hidden: int, kv_heads: int, cache_len: int, head_dim: int,
                  rng: np.random.Generator) -> dict[str, np.ndarray]:
    """x, random KV cache, a position in the second half of the cache, and its causal mask."""
    pos = int(rng.integers(cache_len // 2, cache_len))
    mask = np.where(np.arange(cache_len) <= pos, 0.0, MASK_VALUE).astype(np.float32)
    cache_shape = (batch, kv_heads, cache_len, head_dim)
    return {
        "x": rng.standard_normal((batch, 1, hidden), dtype=np.float32),
        "past_k": rng.standard_normal(cache_shape, dtype=np.float32),
        "past_v": rng.standard_normal(cache_shape, dtype=np.float32),
        "pos": np.array([pos], np.int64),
        "mask": np.broadcast_to(mask, (batch, 1, 1, cache_len)).copy(),
    }


def single_layer_model(name: str, layer, cfg, dtype: str, batch: int, doc: str) -> onnx.ModelProto:
    """A model of one decoder layer: `layer(b, x, pos, past_k, past_v, mask, cfg, batch)` on the
    decode inputs, its result the output y [B, 1, hidden]."""
    b = GraphBuilder(name, dtype)
    x, past_k, past_v, pos, mask = declare_decode_inputs(
        b, batch, cfg.hidden, cfg.kv_heads, cfg.cache_len, cfg.head_dim)
    b.output(layer(b, x, pos, past_k, past_v, mask, cfg, batch), "y", [batch, 1, cfg.hidden])
    return b.model(doc, {"config": json.dumps(asdict(cfg))})


def declare_decode_inputs(b: GraphBuilder, batch: int, hidden: int, kv_heads: int,
                          cache_len: int, head_dim: int) -> tuple[str, str, str, str, str]:
    """Graph inputs x, past_k, past_v, pos (int64 [1]) and mask [B, 1, 1, C]."""
    cache_shape = [batch, kv_heads, cache_len, head_dim]
    return (b.input("x", [batch, 1, hidden]), b.input("past_k", cache_shape),
            b.input("past_v", cache_shape), b.input("pos", [1], TensorProto.INT64),
            b.input("mask", [batch, 1, 1, cache_len]))


def gated_mlp(b: GraphBuilder, h: str, hidden: int, ffn: int, activation, act_name: str) -> str:
    """down(activation(gate(h)) * up(h)): SwiGLU with silu, GeGLU with gelu_tanh."""
    gate = linear(b, h, hidden, ffn, "gate_proj")
    up = linear(b, h, hidden, ffn, "up_proj")
    act = b.op("Mul", [activation(b, gate, act_name), up], "gate_mul_up")
    return linear(b, act, ffn, hidden, "down_proj")


def attend(b: GraphBuilder, scores: str, mask: str, values: str, batch: int, heads: int,
           head_dim: int, hidden: int) -> str:
    """o_proj(merge_heads(softmax(scores + mask) @ values)): the end of decode attention."""
    scores = b.op("Add", [scores, mask], "add_mask")
    context = b.op("MatMul", [softmax(b, scores), values], "pv_matmul")
    context = merge_heads(b, context, batch, heads, head_dim)
    return linear(b, context, heads * head_dim, hidden, "o_proj")
