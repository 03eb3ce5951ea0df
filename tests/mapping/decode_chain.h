// The paper's Llama decode chain (§3.1) as a graph: QKV projection output → Split → Reshape →
// Transpose → ScatterND into the K cache at a run-time position → Slice to the current length →
// Unsqueeze → Expand (grouped-query attention) → Reshape; and its read-side mapping composed
// into one, as the attention kernel sees the keys.
#pragma once

#include "harness.h"

namespace vtc::test {

struct DecodeConfig {
  int64_t batch, q_heads, kv_heads, head_dim, max_len, cur_len, pos;
};

struct DecodeChain {
  Value* keys = nullptr;    // [B, Hq, S, D], the attention kernel's K operand
  std::vector<Node*> nodes; // in graph order
};

// Builds the chain into `b` (with `evaluate` false only types are inferred: no tensors).
DecodeChain build_decode_chain(Builder& b, const DecodeConfig& c);
// The keys' mapping onto the physical tensors (qkv, k_cache, positions).
Result<Mapping> compose_read_chain(const DecodeChain& chain);

} // namespace vtc::test
