// A stem (Conv, batch-norm Mul and Add, Relu, MaxPool) compiled for the cpu target: on a host
// where the target fuses the pooling into the convolution (cpu_fuses_max_pool) it is one step
// whose program holds no buffer for the convolution's output, and the pooled value read
// through a Split by two convolutions and a Concat gives every strategy the same bits and
// the reference interpreter's values. Elsewhere the same checks hold with two steps.
#include <fstream>

#include "model_builder.h"
#include "runtime_test_util.h"
#include "target/cpu_conv_pool_rule.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::ramp;
using testing::RuntimeTest;

// x [1, 3, 40, 64] -> conv 3x3 stride 2 (3 -> 16) -> * scale + shift -> Relu -> MaxPool 3x3
// stride 2 -> Split [8, 8] -> a 1x1 conv on each half -> Concat -> y [1, 16, 10, 16].
ModelBuilder stem_then_split() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 3, 40, 64});
  b.initializer("w", ramp({16, 3, 3, 3}, 0.0625f, 1));
  b.initializer("scale", ramp({16, 1, 1}, 0.0625f, 2));
  b.initializer("shift", ramp({16, 1, 1}, 0.0625f, 3));
  b.initializer("w_a", ramp({8, 8, 1, 1}, 0.0625f, 4));
  b.initializer("w_b", ramp({8, 8, 1, 1}, 0.0625f, 5));
  b.initializer("halves", Tensor::from<int64_t>({2}, {8, 8}));
  auto& conv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
  ModelBuilder::set_ints(conv, "strides", {2, 2});
  ModelBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Mul", {"c", "scale"}, {"m"}, "bn_mul");
  b.node("Add", {"m", "shift"}, {"n"}, "bn_add");
  b.node("Relu", {"n"}, {"r"}, "relu");
  auto& pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
  ModelBuilder::set_ints(pool, "kernel_shape", {3, 3});
  ModelBuilder::set_ints(pool, "strides", {2, 2});
  ModelBuilder::set_ints(pool, "pads", {1, 1, 1, 1});
  ModelBuilder::set_int(b.node("Split", {"p", "halves"}, {"h0", "h1"}, "split"), "axis", 1);
  b.node("Conv", {"h0", "w_a"}, {"a"}, "conv_a");
  b.node("Conv", {"h1", "w_b"}, {"b"}, "conv_b");
  ModelBuilder::set_int(b.node("Concat", {"a", "b"}, {"y"}, "concat"), "axis", 1);
  b.output("y");
  return b;
}

TEST_F(RuntimeTest, FusedStemGivesEveryStrategyTheSameBitsAndTheReferenceValues) {
  const std::string path = (dir_ / "stem.onnx").string();
  std::ofstream(path, std::ios::binary) << stem_then_split().bytes();
  testing::expect_strategies_match_reference(
      path, options(), 1e-5, [](const std::string& strategy, const Session& s) {
        const Node* conv = nullptr;
        const Node* pool = nullptr;
        for (const auto& n : s.graph().nodes()) {
          if (n->name == "conv") conv = n.get();
          if (n->name == "pool") pool = n.get();
        }
        ASSERT_TRUE(conv && pool);
        const bool fused = cpu_fuses_max_pool(*conv, *pool);
        int pool_steps = 0, stem_steps = 0;
        for (const StepInfo& st : s.program().steps) {
          pool_steps += st.name.find("MaxPool 'pool'") != std::string::npos;
          stem_steps += st.name.find("Conv 'conv'") != std::string::npos;
          EXPECT_TRUE(st.fallback.empty()) << st.name << " runs on the interpreter";
        }
        EXPECT_EQ(pool_steps, 1) << strategy;
        EXPECT_EQ(stem_steps, 1) << strategy;
        bool relu_buffer = false;
        for (const BufferInfo& b : s.program().buffers)
          relu_buffer = relu_buffer || b.name == "r";
        EXPECT_EQ(relu_buffer, !fused) << strategy << ": the convolution's output "
                                       << (fused ? "needs no buffer" : "has a buffer");
      });
}

} // namespace
} // namespace vtc
