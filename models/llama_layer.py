"""Llama-3-8B decoder layer at one decode step, as ONNX (the paper's figure 2 workload).

The graph is written the way TensorRT/ONNX exporters see it: RMSNorm, ONE merged QKV
MatMul, Split into q/k/v, Reshape/Transpose to heads, rotary embedding (cos/sin gathered
at the run-time position `pos`), KV-cache update by ScatterND at `pos` (outputs
`present_k`/`present_v`), a constant Slice of the cache, grouped-query Unsqueeze/Expand/
Reshape, Q·Kᵀ, scale, additive `mask`, Softmax, ·V, Transpose/Reshape back, output
projection, residual, RMSNorm, SwiGLU MLP, residual. Inputs: x [B,1,hidden], past_k/past_v
[B,kv_heads,cache_len,head_dim], pos int64 [1], mask [B,1,1,cache_len] (0 where position
<= pos, -32768 after). Output y [B,1,hidden].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx

import decoder_parts as dp
from graph_builder import GraphBuilder, Workload, linear, rms_norm, silu


@dataclass(frozen=True)
class LlamaConfig:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    cache_len: int
    rope_theta: float = 500000.0
    eps: float = 1e-5


CONFIGS = {
    "small": LlamaConfig(hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128, cache_len=32),
    "full": LlamaConfig(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                        cache_len=4096),
}


def attention(b: GraphBuilder, h: str, pos: str, past_k: str, past_v: str, mask: str,
              cfg: LlamaConfig, batch: int,
              present: tuple[str, str] = ("present_k", "present_v")) -> str:
    """Self-attention of one new token against the updated KV cache; returns [B, 1, hidden]."""
    q_dim, kv_dim = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
    groups = cfg.heads // cfg.kv_heads
    qkv = linear(b, h, cfg.hidden, q_dim + 2 * kv_dim, "qkv_proj")
    q, k, v = b.op("Split", [qkv, b.ints("qkv_split_sizes", [q_dim, kv_dim, kv_dim])],
                   "qkv_split", outputs=["q", "k", "v"], axis=-1)
    q = dp.split_heads(b, q, batch, cfg.heads, cfg.head_dim, "q")
    k = dp.split_heads(b, k, batch, cfg.kv_heads, cfg.head_dim, "k")
    v = dp.split_heads(b, v, batch, cfg.kv_heads, cfg.head_dim, "v")

    cos, sin = dp.rotary_at_position(b, pos, cfg.cache_len, cfg.head_dim, cfg.rope_theta)
    q = dp.apply_rotary(b, q, cos, sin, cfg.head_dim, "q_rope")
    k = dp.apply_rotary(b, k, cos, sin, cfg.head_dim, "k_rope")

    indices = dp.cache_write_indices(b, pos, batch, cfg.kv_heads)
    present_k = dp.update_cache(b, past_k, k, indices, "k_cache_update")
    present_v = dp.update_cache(b, past_v, v, indices, "v_cache_update")
    cache_shape = [batch, cfg.kv_heads, cfg.cache_len, cfg.head_dim]
    present_k = b.output(present_k, present[0], cache_shape)
    present_v = b.output(present_v, present[1], cache_shape)

    keys = dp.read_cache(b, present_k, batch, cfg.kv_heads, groups, cfg.cache_len,
                         cfg.head_dim, "k_read")
    values = dp.read_cache(b, present_v, batch, cfg.kv_heads, groups, cfg.cache_len,
                           cfg.head_dim, "v_read")
    keys_t = b.op("Transpose", [keys], "keys_transpose", perm=[0, 1, 3, 2])
    scores = b.op("MatMul", [q, keys_t], "qk_matmul")
    scores = b.op("Mul", [scores, b.scalar("scale", 1.0 / math.sqrt(cfg.head_dim))], "qk_scale")
    return dp.attend(b, scores, mask, values, batch, cfg.heads, cfg.head_dim, cfg.hidden)


def layer(b: GraphBuilder, x: str, pos: str, past_k: str, past_v: str, mask: str,
          cfg: LlamaConfig, batch: int,
          present: tuple[str, str] = ("present_k", "present_v")) -> str:
    """One decoder layer on `x` [B, 1, hidden]; its updated caches become outputs `present`."""
    with b.scope("attn"):
        h = rms_norm(b, x, cfg.hidden, "input_norm", cfg.eps)
        attn = attention(b, h, pos, past_k, past_v, mask, cfg, batch, present)
    h = b.op("Add", [x, attn], "attn_residual")
    with b.scope("mlp"):
        mlp = dp.gated_mlp(b, rms_norm(b, h, cfg.hidden, "post_attention_norm", cfg.eps),
                           cfg.hidden, cfg.ffn, silu, "silu")
    return b.op("Add", [h, mlp], "mlp_residual")


def build(cfg: LlamaConfig, dtype: str, batch: int) -> onnx.ModelProto:
    return dp.single_layer_model("llama3_decoder_layer", layer, cfg, dtype, batch,
                                 __doc__.split("\n\n")[0])


def make_inputs(cfg: LlamaConfig, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return dp.decode_inputs(batch, cfg.hidden, cfg.kv_heads, cfg.cache_len, cfg.head_dim, rng)


WORKLOADS = [Workload("llama3_layer", CONFIGS, ("f32", "f16", "bf16"), build, make_inputs)]
