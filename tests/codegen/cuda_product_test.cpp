// Which kernel cuda's f32 products run on, and how gemm_f32_small stages A: a product of a
// small output (EfficientViT's k^T . v per head) reads A through a Slice and a Transpose of a
// [.., tokens, channels] tensor, so A's runs lie along its rows. Made virtual by greedy, A is
// staged along m (gemm_f32_small<true>); copied by the all-physical strategy, A is a dense
// tensor with runs along k and is staged along them. The other product of the pattern (a short
// K and a short side, q . (k^T . v)) runs a thread a row on gemm_f32_skinny.
#include <gtest/gtest.h>

#include "codegen/translation_unit.h"
#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "runtime/lowering.h"
#include "target/target.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

Tensor ints(const std::vector<int64_t>& v) {
  return Tensor::from<int64_t>({int64_t(v.size())}, v);
}

// x [2, 4, 128, 48]: per head, 128 tokens of q, k, v (16 channels each). kv = k^T . v is
// [16 x 16] over 128 tokens; out = q . kv is [128 x 16] over K = 16.
std::string linear_attention() {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4, 128, 48});
  b.initializer("axes", ints({3}));
  const char* names[] = {"q", "k", "v"};
  for (int64_t i = 0; i < 3; ++i) {
    b.initializer(std::string("start_") + names[i], ints({16 * i}));
    b.initializer(std::string("end_") + names[i], ints({16 * i + 16}));
    b.node("Slice", {"x", std::string("start_") + names[i], std::string("end_") + names[i], "axes"},
           {names[i]}, std::string("slice_") + names[i]);
  }
  ModelBuilder::set_ints(b.node("Transpose", {"k"}, {"kt"}, "k_transpose"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"kt", "v"}, {"kv"}, "kv");
  b.node("MatMul", {"q", "kv"}, {"y"}, "out");
  b.output("y");
  return b.bytes();
}

std::string cuda_source(StrategyKind strategy) {
  Graph g = import_onnx_bytes(linear_attention(), ".", "m.onnx");
  canonicalize(g);
  Options o;
  o.target = TargetKind::cuda;
  o.strategy = strategy;
  Program p = lower_for_target(g, o);
  return generate_translation_unit(p, target_for(TargetKind::cuda).dialect()).source;
}

TEST(CudaProduct, SmallOutputStagesAAlongItsRuns) {
  const std::string greedy = cuda_source(StrategyKind::greedy);
  EXPECT_NE(greedy.find("gemm_f32_small<true>("), std::string::npos);
  EXPECT_NE(greedy.find("gemm_f32_skinny("), std::string::npos);
  const std::string none = cuda_source(StrategyKind::none);
  EXPECT_EQ(none.find("gemm_f32_small<true>("), std::string::npos);
  EXPECT_NE(none.find("gemm_f32_small("), std::string::npos);
  EXPECT_NE(none.find("gemm_f32_skinny("), std::string::npos);
}

} // namespace
} // namespace vtc
