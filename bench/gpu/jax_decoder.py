"""The Llama-3 and Gemma-2 decoder layers at one decode step in JAX, the JAX peer's version.

The same function as models/export_torch.py's LlamaDecoderLayer / Gemma2DecoderLayer, step
for step in the model's element type: RMSNorm in float32 (Llama: w * norm(x).to(dtype);
Gemma: (norm(x) * (1 + w)).to(dtype)), projections, RoPE at `pos`, the KV cache updated at
`pos` (in place when the caller donates it), grouped-query attention, Gemma's soft-capping
and sliding window, softmax in float32, gated MLP (SiLU / tanh-GELU).

Weights are a dict of short names (qkv_proj or q/k/v_proj, o_proj, gate/up/down_proj,
input_norm, post_attention_norm, pre/post_feedforward_norm, cos_table, sin_table), linear
weights stored [in, out]; they come from the torch module's state_dict (params_from_torch)
or from the ONNX generators' initializers (params_from_onnx, for testing without torch).
"""

from __future__ import annotations

import numpy as np

MASK_VALUE = -32768.0


def short_name(key: str, sep: str) -> str:
    """"attn.qkv_proj.weight" -> "qkv_proj", "attn/cos_table" -> "cos_table"."""
    parts = key.split(sep)
    return parts[-2] if parts[-1] == "weight" and len(parts) > 1 else parts[-1]


def params_from_torch(state_dict: dict) -> dict[str, np.ndarray]:
    """{"attn.qkv_proj.weight": [out, in], ...} (torch tensors) -> short names, [in, out]."""
    params = {}
    for key, t in state_dict.items():
        name = short_name(key, ".")
        if name == "key_positions":
            continue
        a = t.detach().float().cpu().numpy()
        params[name] = a.T.copy() if name.endswith("_proj") else a
    return params


def params_from_onnx(path: str) -> dict[str, np.ndarray]:
    """The generators' initializers ("attn/qkv_proj/weight" [in, out], ...) by short name."""
    import onnx
    from onnx import numpy_helper

    params = {}
    for init in onnx.load(path).graph.initializer:
        name = short_name(init.name, "/")
        if name.endswith(("_proj", "_norm")) or name in ("cos_table", "sin_table"):
            params[name] = numpy_helper.to_array(init).astype(np.float32)
    return params


def decoder_layer(jnp, jax, params, cfg, gemma: bool, x, past_k, past_v, pos, mask):
    """One decode step; returns (y, present_k, present_v)."""
    dtype = x.dtype
    b = x.shape[0]
    heads, kv_heads, hd, cache_len = cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.cache_len

    def rms_norm(v, w):
        vf = v.astype(jnp.float32)
        normed = vf * jax.lax.rsqrt(jnp.mean(vf * vf, axis=-1, keepdims=True) + cfg.eps)
        if gemma:
            return (normed * (1.0 + w.astype(jnp.float32))).astype(dtype)
        return w * normed.astype(dtype)

    def rotate_half(v):
        half = v.shape[-1] // 2
        return jnp.concatenate([-v[..., half:], v[..., :half]], axis=-1)

    h = rms_norm(x, params["input_norm"])
    if gemma:
        q, k, v = h @ params["q_proj"], h @ params["k_proj"], h @ params["v_proj"]
    else:
        q_dim, kv_dim = heads * hd, kv_heads * hd
        qkv = h @ params["qkv_proj"]
        q, k, v = (qkv[..., :q_dim], qkv[..., q_dim:q_dim + kv_dim],
                   qkv[..., q_dim + kv_dim:])
    q = q.reshape(b, 1, heads, hd).transpose(0, 2, 1, 3)
    k = k.reshape(b, 1, kv_heads, hd).transpose(0, 2, 1, 3)
    v = v.reshape(b, 1, kv_heads, hd).transpose(0, 2, 1, 3)
    p = pos[0]
    cos = jax.lax.dynamic_slice_in_dim(params["cos_table"], p, 1, 0)[None, None]
    sin = jax.lax.dynamic_slice_in_dim(params["sin_table"], p, 1, 0)[None, None]
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin

    present_k = jax.lax.dynamic_update_slice_in_dim(past_k, k, p, 2)
    present_v = jax.lax.dynamic_update_slice_in_dim(past_v, v, p, 2)
    groups = heads // kv_heads
    keys = jnp.repeat(present_k, groups, axis=1)  # head i reads kv head i // groups
    values = jnp.repeat(present_v, groups, axis=1)
    scores = (q @ keys.transpose(0, 1, 3, 2)) * jnp.asarray(hd ** -0.5, dtype)
    if gemma and cfg.softcap is not None:
        cap = jnp.asarray(cfg.softcap, dtype)
        scores = jnp.tanh(scores / cap) * cap
    if gemma and cfg.local:
        inside = jnp.arange(cache_len) > p - cfg.window
        mask = jnp.where(inside, mask, jnp.asarray(MASK_VALUE, dtype))
    probs = jax.nn.softmax((scores + mask).astype(jnp.float32), axis=-1).astype(dtype)
    out = (probs @ values).transpose(0, 2, 1, 3).reshape(b, 1, heads * hd)
    attn = out @ params["o_proj"]
    if gemma:
        h = x + rms_norm(attn, params["post_attention_norm"])
        m = rms_norm(h, params["pre_feedforward_norm"])
    else:
        h = x + attn
        m = rms_norm(h, params["post_attention_norm"])
    gate = m @ params["gate_proj"]
    act = jax.nn.gelu(gate, approximate=True) if gemma else jax.nn.silu(gate)
    mlp = (act * (m @ params["up_proj"])) @ params["down_proj"]
    if gemma:
        mlp = rms_norm(mlp, params["post_feedforward_norm"])
    return h + mlp, present_k, present_v
