"""Whole Llama-3 and Gemma-2 decoders at one decode step, as ONNX, at a configurable depth.

`layers` copies of the decoder layer of llama_layer.py / gemma2_layer.py (Gemma-2 alternates
local and global layers, local first, as the 9B model does), each layer's `y` feeding the
next, every layer with weights and a KV cache of its own. Inputs: x [B,1,hidden], pos int64
[1], mask [B,1,1,cache], past_k_<i>/past_v_<i> [B,kv_heads,cache,head_dim] per layer (donate
them: each layer updates its cache in place). Outputs: y, present_k_<i>, present_v_<i>. The
embedding and the LM head are left out: the decoder stack is what the compiler sees grow.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto

import decoder_parts as dp
import gemma2_layer
import llama_layer
from graph_builder import GraphBuilder, Workload


@dataclass(frozen=True)
class DecoderConfig:
    layer: Any  # LlamaConfig or Gemma2Config
    layers: int


def cache_names(i: int) -> tuple[str, str, str, str]:
    return f"past_k_{i}", f"past_v_{i}", f"present_k_{i}", f"present_v_{i}"


def build_decoder(module, name: str, cfg: DecoderConfig, dtype: str, batch: int,
                  layer_config) -> onnx.ModelProto:
    lc = cfg.layer
    b = GraphBuilder(name, dtype)
    x = b.input("x", [batch, 1, lc.hidden])
    pos = b.input("pos", [1], TensorProto.INT64)
    mask = b.input("mask", [batch, 1, 1, lc.cache_len])
    cache_shape = [batch, lc.kv_heads, lc.cache_len, lc.head_dim]
    for i in range(cfg.layers):
        past_k, past_v, present_k, present_v = cache_names(i)
        b.input(past_k, cache_shape)
        b.input(past_v, cache_shape)
        with b.scope(f"layer{i}"):
            x = module.layer(b, x, pos, past_k, past_v, mask, layer_config(lc, i), batch,
                             (present_k, present_v))
    b.output(x, "y", [batch, 1, lc.hidden])
    doc = f"{name}: {cfg.layers} decoder layers at one decode step"
    return b.model(doc, {"config": json.dumps(asdict(cfg))})


def decoder_inputs(cfg: DecoderConfig, batch: int,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    lc = cfg.layer
    first = dp.decode_inputs(batch, lc.hidden, lc.kv_heads, lc.cache_len, lc.head_dim, rng)
    out = {"x": first["x"], "pos": first["pos"], "mask": first["mask"]}
    cache_shape = (batch, lc.kv_heads, lc.cache_len, lc.head_dim)
    for i in range(cfg.layers):
        past_k, past_v, _, _ = cache_names(i)
        out[past_k] = rng.standard_normal(cache_shape, dtype=np.float32)
        out[past_v] = rng.standard_normal(cache_shape, dtype=np.float32)
    return out


def configs(layer_configs: dict[str, Any], small_layers: int, full_layers: int) -> dict:
    return {"small": DecoderConfig(layer_configs["small"], small_layers),
            "full": DecoderConfig(layer_configs["full"], full_layers)}


def with_layers(cfg: DecoderConfig, layers: int) -> DecoderConfig:
    return replace(cfg, layers=layers)


def build_llama(cfg: DecoderConfig, dtype: str, batch: int) -> onnx.ModelProto:
    return build_decoder(llama_layer, "llama3_decoder", cfg, dtype, batch, lambda lc, i: lc)


def build_gemma(cfg: DecoderConfig, dtype: str, batch: int) -> onnx.ModelProto:
    return build_decoder(gemma2_layer, "gemma2_decoder", cfg, dtype, batch,
                         lambda lc, i: replace(lc, local=i % 2 == 0))


WORKLOADS = [
    Workload("llama3_decoder", configs(llama_layer.CONFIGS, 4, 32), ("f32", "f16", "bf16"),
             build_llama, decoder_inputs),
    Workload("gemma2_decoder", configs(gemma2_layer.GLOBAL_CONFIGS, 4, 42),
             ("f32", "f16", "bf16"), build_gemma, decoder_inputs),
]
