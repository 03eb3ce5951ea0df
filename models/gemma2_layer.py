"""Gemma-2 decoder layer at one decode step, as ONNX, in a local and a global variant.

Follows the Hugging Face Gemma2DecoderLayer: RMSNorms with (1 + w) before and after both
attention and MLP, separate q/k/v projections, Reshape/Transpose to heads, rotary embedding,
KV-cache update by ScatterND at the run-time position `pos` (outputs `present_k`/
`present_v`), a constant Slice of the cache, grouped-query Unsqueeze/Expand/Reshape, logits
scaled by query_pre_attn_scalar^-1/2 and soft-capped (tanh(x / 50) * 50), the additive
`mask`, Softmax, GeGLU MLP with GELU's tanh approximation written out in ops (opset 17). The
local (sliding-window) variant also hides, inside the graph, every key position at or
before pos - window: Where(key_pos > pos - window, mask, -32768). Inputs and outputs are
those of the Llama layer: x, past_k, past_v, pos, mask -> y, present_k, present_v.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import onnx

import decoder_parts as dp
from graph_builder import GraphBuilder, Workload, gelu_tanh, linear, rms_norm


@dataclass(frozen=True)
class Gemma2Config:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    cache_len: int
    window: int
    local: bool
    softcap: float = 50.0
    rope_theta: float = 10000.0
    eps: float = 1e-6


GLOBAL_CONFIGS = {
    "small": Gemma2Config(hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128, cache_len=32,
                          window=8, local=False),
    "full": Gemma2Config(hidden=3584, heads=16, kv_heads=8, head_dim=256, ffn=14336,
                         cache_len=8192, window=4096, local=False),
}
LOCAL_CONFIGS = {size: replace(cfg, local=True) for size, cfg in GLOBAL_CONFIGS.items()}


def sliding_window_mask(b: GraphBuilder, mask: str, pos: str, cfg: Gemma2Config) -> str:
    """`mask` with the key positions at or before pos - window hidden as well."""
    with b.scope("sliding_window"):
        key_pos = b.const("key_positions", np.arange(cfg.cache_len, dtype=np.int64))
        oldest = b.op("Sub", [pos, b.ints("window", [cfg.window])], "pos_minus_window")
        inside = b.op("Greater", [key_pos, oldest], "inside_window")
        return b.op("Where", [inside, mask, b.scalar("mask_value", dp.MASK_VALUE)], "mask")


def attention(b: GraphBuilder, h: str, pos: str, past_k: str, past_v: str, mask: str,
              cfg: Gemma2Config, batch: int,
              present: tuple[str, str] = ("present_k", "present_v")) -> str:
    """Soft-capped grouped-query attention of one new token; returns [B, 1, hidden]."""
    q_dim, kv_dim = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
    groups = cfg.heads // cfg.kv_heads
    q = dp.split_heads(b, linear(b, h, cfg.hidden, q_dim, "q_proj"), batch, cfg.heads,
                       cfg.head_dim, "q")
    k = dp.split_heads(b, linear(b, h, cfg.hidden, kv_dim, "k_proj"), batch, cfg.kv_heads,
                       cfg.head_dim, "k")
    v = dp.split_heads(b, linear(b, h, cfg.hidden, kv_dim, "v_proj"), batch, cfg.kv_heads,
                       cfg.head_dim, "v")

    cos, sin = dp.rotary_at_position(b, pos, cfg.cache_len, cfg.head_dim, cfg.rope_theta)
    q = dp.apply_rotary(b, q, cos, sin, cfg.head_dim, "q_rope")
    k = dp.apply_rotary(b, k, cos, sin, cfg.head_dim, "k_rope")

    indices = dp.cache_write_indices(b, pos, batch, cfg.kv_heads)
    cache_shape = [batch, cfg.kv_heads, cfg.cache_len, cfg.head_dim]
    present_k = b.output(dp.update_cache(b, past_k, k, indices, "k_cache_update"), present[0],
                         cache_shape)
    present_v = b.output(dp.update_cache(b, past_v, v, indices, "v_cache_update"), present[1],
                         cache_shape)

    keys = dp.read_cache(b, present_k, batch, cfg.kv_heads, groups, cfg.cache_len,
                         cfg.head_dim, "k_read")
    values = dp.read_cache(b, present_v, batch, cfg.kv_heads, groups, cfg.cache_len,
                           cfg.head_dim, "v_read")
    keys_t = b.op("Transpose", [keys], "keys_transpose", perm=[0, 1, 3, 2])
    scores = b.op("MatMul", [q, keys_t], "qk_matmul")
    # query_pre_attn_scalar is head_dim for Gemma-2 9B.
    scores = b.op("Mul", [scores, b.scalar("scale", 1.0 / math.sqrt(cfg.head_dim))], "qk_scale")
    with b.scope("softcap"):
        capped = b.op("Div", [scores, b.scalar("cap", cfg.softcap)], "div_cap")
        capped = b.op("Tanh", [capped], "tanh")
        scores = b.op("Mul", [capped, b.scalar("cap", cfg.softcap)], "mul_cap")
    if cfg.local:
        mask = sliding_window_mask(b, mask, pos, cfg)
    return dp.attend(b, scores, mask, values, batch, cfg.heads, cfg.head_dim, cfg.hidden)


def layer(b: GraphBuilder, x: str, pos: str, past_k: str, past_v: str, mask: str,
          cfg: Gemma2Config, batch: int,
          present: tuple[str, str] = ("present_k", "present_v")) -> str:
    """One decoder layer on `x` [B, 1, hidden]; its updated caches become outputs `present`."""
    with b.scope("attn"):
        h = rms_norm(b, x, cfg.hidden, "input_norm", cfg.eps, unit_offset=True)
        h = attention(b, h, pos, past_k, past_v, mask, cfg, batch, present)
        h = rms_norm(b, h, cfg.hidden, "post_attention_norm", cfg.eps, unit_offset=True)
    h = b.op("Add", [x, h], "attn_residual")
    with b.scope("mlp"):
        m = rms_norm(b, h, cfg.hidden, "pre_feedforward_norm", cfg.eps, unit_offset=True)
        m = dp.gated_mlp(b, m, cfg.hidden, cfg.ffn, gelu_tanh, "gelu")
        m = rms_norm(b, m, cfg.hidden, "post_feedforward_norm", cfg.eps, unit_offset=True)
    return b.op("Add", [h, m], "mlp_residual")


def build(cfg: Gemma2Config, dtype: str, batch: int) -> onnx.ModelProto:
    return dp.single_layer_model("gemma2_decoder_layer", layer, cfg, dtype, batch,
                                 __doc__.split("\n\n")[0])


def make_inputs(cfg: Gemma2Config, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Decode-step inputs; pos lies in the cache's second half, past the window when local."""
    return dp.decode_inputs(batch, cfg.hidden, cfg.kv_heads, cfg.cache_len, cfg.head_dim, rng)


WORKLOADS = [
    Workload("gemma2_local", LOCAL_CONFIGS, ("f32", "f16", "bf16"), build, make_inputs),
    Workload("gemma2_global", GLOBAL_CONFIGS, ("f32", "f16", "bf16"), build, make_inputs),
]
