// Three 3 x 3 convolutions in a row as an ONNX model, for tests of the tensors the cuda target
// holds channels-last: x [2, 8, 10, 12] -> Conv (cuDNN, the caller's input staged by its
// prologue) -> c0 -> Conv (bias) -> Relu = a -> Conv -> y, f16, weights small multiples of a
// step; with
// `second_reader`, also Abs(a) -> z, so that a kernel other than a convolution reads a.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model_builder.h"

namespace vtc::testing {

// (i % 13 - 6) * step for every element i.
inline Tensor conv_chain_ramp(const Shape& shape, float step) {
  Tensor t(DType::f16, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, double(i % 13 - 6) * step);
  return t;
}

inline ModelBuilder conv_chain_model(bool second_reader = false) {
  ModelBuilder b;
  b.input("x", DType::f16, {2, 8, 10, 12});
  b.initializer("w0", conv_chain_ramp({16, 8, 3, 3}, 0.01f));
  b.initializer("w1", conv_chain_ramp({16, 16, 3, 3}, 0.005f));
  b.initializer("b1", conv_chain_ramp({16}, 0.1f));
  b.initializer("w2", conv_chain_ramp({16, 16, 3, 3}, 0.004f));
  for (const auto& [in, w, out] :
       {std::array<const char*, 3>{"x", "w0", "c0"}, std::array<const char*, 3>{"c0", "w1", "c1"},
        std::array<const char*, 3>{"a", "w2", "y"}}) {
    std::vector<std::string> inputs{in, w};
    if (std::string(w) == "w1") inputs.push_back("b1");
    ModelBuilder::set_ints(b.node("Conv", inputs, {out}, std::string("conv_") + w), "pads",
                           {1, 1, 1, 1});
    if (std::string(w) == "w1") b.node("Relu", {"c1"}, {"a"}, "relu");
  }
  b.output("y");
  if (second_reader) {
    b.node("Abs", {"a"}, {"z"}, "abs");
    b.output("z");
  }
  return b;
}

} // namespace vtc::testing
