// The scaled dot-product attention subgraph that fusion turns into one kernel of kind
// attention, as the transformer layers of models/ export it:
//   S = MatMul(Q, Kt)                 Q [B,H,T,D], Kt [B,H,D,S] (typically a Transpose of K)
//   S = S * scale  |  S / c           optional; a constant of one element
//   S = cap * Tanh(S / cap)           optional softcap (Div, Tanh, Mul by equal constants)
//   S = S + mask                      optional; mask broadcasts to [B,H,T,S]
//   S = Cast(S)                       optional, float to float (any number in a row)
//   P = Softmax(S, axis = -1)
//   P = Cast(P)                       optional, float to float (any number in a row)
//   O = MatMul(P, V)                  V [B,H,S,Dv], O [B,H,T,Dv]
// in that order, each intermediate value used once (by the next node) and not a graph output,
// every value a float. T = 1 is decode, T > 1 prefill. Anything else (another order, a
// broadcast batch, a mask of the wrong shape) does not match and keeps the unfused kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace vtc {

struct AttentionPattern {
  Node* scores = nullptr; // MatMul(Q, Kt)
  Node* softmax = nullptr;
  Node* output = nullptr; // MatMul(P, V): the kernel's anchor
  // scores .. output in execution order (each consumes the previous one's value).
  std::vector<Node*> chain;
  Value* q = nullptr;
  Value* kt = nullptr; // [B,H,D,S]: K read with its last two dimensions swapped
  Value* v = nullptr;
  Value* mask = nullptr; // null: none
  double scale = 1.0;
  double softcap = 0.0; // 0: none
  int64_t batch = 1, heads = 1, q_len = 1, kv_len = 1, d = 1, dv = 1;
  // Query heads that read the same K and V rows: heads h and (h / group) * group see equal K
  // and V, as the grouped-query Expand of a KV cache makes them (1 when not proven).
  int64_t group = 1;

  bool decode() const { return q_len == 1; }
};

// The attention subgraph ending in MatMul `output`, or nullopt.
std::optional<AttentionPattern> match_attention(Node& output);

} // namespace vtc
