// A small attention subgraph as an ONNX model, for tests of the attention kernels: a computed
// Q (x * w), K and V the grouped-query expansion of two caches (Unsqueeze, Expand, Reshape;
// K then transposed), scale, optional softcap, a broadcast mask, Softmax and the product by V.
// Shapes and the form of each step are parameters, including forms fusion must not take.
#pragma once

#include <string>
#include <vector>

#include "model_builder.h"

namespace vtc::testing {

struct AttentionModel {
  int64_t heads = 4, kv_heads = 2, q_len = 1, kv_len = 40, d = 16;
  bool softcap = true;
  bool divide = false;     // scale as Div by 4 instead of Mul by 0.25
  bool mask_first = false; // mask added before the scale: not the fused pattern
  // Float-to-float Casts between Softmax and the product by V, as PyTorch exports
  // `softmax(s.float()).to(q.dtype)`: two in a row when the dtypes agree.
  int casts_after_softmax = 0;
};

// y = softmax(scale(x * w . K^T) [+ softcap] + mask) . V, K and V the grouped-query
// expansion of the caches k_cache, v_cache [1, kv_heads, kv_len, d].
inline ModelBuilder attention_model(const AttentionModel& m) {
  const int64_t g = m.heads / m.kv_heads;
  ModelBuilder b;
  b.input("x", DType::f32, {1, m.heads, m.q_len, m.d});
  b.input("k_cache", DType::f32, {1, m.kv_heads, m.kv_len, m.d});
  b.input("v_cache", DType::f32, {1, m.kv_heads, m.kv_len, m.d});
  b.input("mask", DType::f32, {1, 1, m.q_len, m.kv_len});
  std::vector<float> w(size_t(m.d));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.125f * float(int(i % 13) - 6);
  b.initializer("w", Tensor::from<float>({m.d}, w));
  b.initializer("axes", Tensor::from<int64_t>({1}, {2}));
  b.initializer("expand_shape", Tensor::from<int64_t>({5}, {1, m.kv_heads, g, m.kv_len, m.d}));
  b.initializer("heads_shape", Tensor::from<int64_t>({4}, {1, m.heads, m.kv_len, m.d}));
  b.initializer("scale", Tensor::from<float>({1}, {m.divide ? 4.0f : 0.25f}));
  b.initializer("cap", Tensor::from<float>({1}, {5.0f}));
  b.node("Mul", {"x", "w"}, {"q"}, "q_scale");
  for (const char* c : {"k", "v"}) {
    const std::string s(c);
    b.node("Unsqueeze", {s + "_cache", "axes"}, {s + "_u"}, s + "_unsqueeze");
    b.node("Expand", {s + "_u", "expand_shape"}, {s + "_e"}, s + "_expand");
    b.node("Reshape", {s + "_e", "heads_shape"}, {s + "_heads"}, s + "_reshape");
  }
  ModelBuilder::set_ints(b.node("Transpose", {"k_heads"}, {"kt"}, "k_transpose"), "perm",
                         {0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s0"}, "qk");
  std::string s = "s0";
  auto step = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    b.node(op, in, {out}, out);
    s = out;
  };
  if (m.mask_first) step("Add", {s, "mask"}, "masked");
  step(m.divide ? "Div" : "Mul", {s, "scale"}, "scaled");
  if (m.softcap) {
    step("Div", {s, "cap"}, "capped_div");
    step("Tanh", {s}, "capped_tanh");
    step("Mul", {s, "cap"}, "capped");
  }
  if (!m.mask_first) step("Add", {"mask", s}, "masked");
  ModelBuilder::set_int(b.node("Softmax", {s}, {"p"}, "softmax"), "axis", -1);
  std::string p = "p";
  for (int c = 0; c < m.casts_after_softmax; ++c) {
    const std::string out = "p_cast" + std::to_string(c);
    ModelBuilder::set_int(b.node("Cast", {p}, {out}, out), "to", 1); // FLOAT
    p = out;
  }
  b.node("MatMul", {p, "v_heads"}, {"y"}, "pv");
  b.output("y");
  return b;
}

} // namespace vtc::testing
