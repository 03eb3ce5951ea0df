// Tensors the cpu target holds channels-last (target/cpu_layouts.h): between convolutions on
// planes of at most 16 positions, a tensor written by one and read only by others (as their
// input or in their epilogue) lies [n, h, w, c] under every strategy, and those convolutions
// run on the channels-last kernels (kernels/cpu/conv_nhwc.h); a tensor another kind of kernel
// reads stays NCHW, and on larger planes only tensors between 3x3 convolutions over enough
// channels are held. A max pooling reads and writes held tensors too (kernels/cpu/pool_nhwc.h).
// Convolutions on the Winograd kernel keep their tensors NCHW.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "codegen/translation_unit.h"
#include "layout_test_util.h"
#include "model_builder.h"
#include "target/cpu_target.h"

namespace vtc {
namespace {

using testing::held;
using testing::Lowered;

Tensor ramp(const Shape& shape, float step) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, double(i % 13 - 6) * step);
  return t;
}

// x [1, 8, side, side] -> Conv -> c0 -> Conv (bias) -> Relu = a -> depthwise Conv -> y; with
// `second_reader`, also Abs(a) -> z.
testing::ModelBuilder conv_chain(int64_t side, bool second_reader) {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {1, 8, side, side});
  b.initializer("w0", ramp({16, 8, 3, 3}, 0.01f));
  b.initializer("w1", ramp({16, 16, 3, 3}, 0.005f));
  b.initializer("b1", ramp({16}, 0.1f));
  b.initializer("w2", ramp({16, 1, 3, 3}, 0.02f));
  auto conv = [&](std::vector<std::string> in, const char* out, const char* name, int64_t group) {
    onnx::NodeProto& n = b.node("Conv", in, {out}, name);
    testing::ModelBuilder::set_ints(n, "pads", {1, 1, 1, 1});
    if (group > 1) testing::ModelBuilder::set_int(n, "group", group);
  };
  conv({"x", "w0"}, "c0", "conv0", 1);
  conv({"c0", "w1", "b1"}, "c1", "conv1", 1);
  b.node("Relu", {"c1"}, {"a"}, "relu");
  conv({"a", "w2"}, "y", "conv2", 16);
  b.output("y");
  if (second_reader) {
    b.node("Abs", {"a"}, {"z"}, "abs");
    b.output("z");
  }
  return b;
}

// x [1, 3, 36, 36] -> Conv 7x7 stride 2 -> s [1, 16, 15, 15] -> MaxPool 3x3 stride 2 -> p
// [1, 16, 7, 7] -> Conv 3x3 -> y; with `second_reader`, also Abs(p) -> z.
testing::ModelBuilder stem_and_pool(bool second_reader) {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {1, 3, 36, 36});
  b.initializer("w0", ramp({16, 3, 7, 7}, 0.01f));
  b.initializer("w1", ramp({16, 16, 3, 3}, 0.005f));
  onnx::NodeProto& stem = b.node("Conv", {"x", "w0"}, {"s"}, "stem");
  testing::ModelBuilder::set_ints(stem, "strides", {2, 2});
  onnx::NodeProto& pool = b.node("MaxPool", {"s"}, {"p"}, "pool");
  testing::ModelBuilder::set_ints(pool, "kernel_shape", {3, 3});
  testing::ModelBuilder::set_ints(pool, "strides", {2, 2});
  onnx::NodeProto& conv = b.node("Conv", {"p", "w1"}, {"y"}, "conv");
  testing::ModelBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
  b.output("y");
  if (second_reader) {
    b.node("Abs", {"p"}, {"z"}, "abs");
    b.output("z");
  }
  return b;
}

// x [1, 16, 8, 8] -> Conv 3x3 16 -> 64 -> c0 -> Conv 3x3 64 -> 64 -> y: shapes the Winograd
// kernel takes (kernels/cpu/conv_shape.h's winograd_conv_fits).
testing::ModelBuilder winograd_pair() {
  testing::ModelBuilder b;
  b.input("x", DType::f32, {1, 16, 8, 8});
  b.initializer("w0", ramp({64, 16, 3, 3}, 0.01f));
  b.initializer("w1", ramp({64, 64, 3, 3}, 0.005f));
  for (auto [in, w, out, name] : {std::array<const char*, 4>{"x", "w0", "c0", "conv0"},
                                  std::array<const char*, 4>{"c0", "w1", "y", "conv1"}}) {
    onnx::NodeProto& n = b.node("Conv", {in, w}, {out}, name);
    testing::ModelBuilder::set_ints(n, "pads", {1, 1, 1, 1});
  }
  b.output("y");
  return b;
}

Lowered lowered(const std::string& bytes, StrategyKind strategy) {
  return testing::lowered(bytes, TargetKind::cpu, strategy);
}

TEST(CpuLayouts, TensorsBetweenSmallPlaneConvolutionsLieChannelsLast) {
  if (std::getenv("VTC_CPU_HOLD_CHANNELS_LAST") || std::getenv("VTC_CPU_CHANNELS_LAST_PLANE") ||
      std::getenv("VTC_CPU_CHANNELS_LAST_MIN_K"))
    GTEST_SKIP() << "a channels-last variable is set";
  for (StrategyKind s : {StrategyKind::none, StrategyKind::greedy}) {
    const Lowered l = lowered(conv_chain(4, false).bytes(), s);
    EXPECT_EQ(held(l.program), (std::set<std::string>{"c0", "a"})) << strategy_kind_name(s);
    const std::string source = generate_translation_unit(l.program, CpuTarget().dialect()).source;
    // conv0 reads the caller's NCHW input and writes c0 channels-last.
    EXPECT_NE(source.find("conv2d_nhwc<4, 4, 1, 8, 48, 1, 1, false, true>"), std::string::npos);
    EXPECT_NE(source.find("conv2d_nhwc<4, 4, 1, 16, 96, 1, 1, true, true>"), std::string::npos);
    EXPECT_NE(source.find("depthwise_nhwc"), std::string::npos);
  }
  // `a` read by an elementwise kernel too: it stays NCHW (c0 is still held).
  EXPECT_EQ(held(lowered(conv_chain(4, true).bytes(), StrategyKind::greedy).program),
            std::set<std::string>{"c0"});
  // Planes of 8 x 8: only between convolutions of 3x3 filters over 8 or more channels (c0,
  // 72 and 144 products a position), not into the depthwise one (a).
  EXPECT_EQ(held(lowered(conv_chain(8, false).bytes(), StrategyKind::greedy).program),
            std::set<std::string>{"c0"});
}

TEST(CpuLayouts, MaxPoolingReadsAndWritesChannelsLast) {
  if (std::getenv("VTC_CPU_HOLD_CHANNELS_LAST") || std::getenv("VTC_CPU_CHANNELS_LAST_PLANE") ||
      std::getenv("VTC_CPU_CHANNELS_LAST_MIN_K"))
    GTEST_SKIP() << "a channels-last variable is set";
  for (StrategyKind s : {StrategyKind::none, StrategyKind::greedy}) {
    const Lowered l = lowered(stem_and_pool(false).bytes(), s);
    EXPECT_EQ(held(l.program), (std::set<std::string>{"s", "p"})) << strategy_kind_name(s);
    const std::string source = generate_translation_unit(l.program, CpuTarget().dialect()).source;
    EXPECT_NE(source.find("max_pool2d_nhwc<true, true>"), std::string::npos);
  }
  // p read by an elementwise kernel too: it stays NCHW, the pooling writes it so.
  const Lowered l = lowered(stem_and_pool(true).bytes(), StrategyKind::greedy);
  EXPECT_EQ(held(l.program), std::set<std::string>{"s"});
  const std::string source = generate_translation_unit(l.program, CpuTarget().dialect()).source;
  EXPECT_NE(source.find("max_pool2d_nhwc<true, false>"), std::string::npos);
}

// Convolutions that run the Winograd kernel (its bits its own) hold none of their tensors
// channels-last, under every strategy, so that every strategy runs the same kernel; with the
// kernel off ($VTC_CPU_WINOGRAD=0) the tensor between them is held as for any 3x3 pair.
TEST(CpuLayouts, WinogradConvolutionsKeepTheirTensorsNchw) {
  if (std::getenv("VTC_CPU_HOLD_CHANNELS_LAST") || std::getenv("VTC_CPU_CHANNELS_LAST_PLANE") ||
      std::getenv("VTC_CPU_CHANNELS_LAST_MIN_K") || std::getenv("VTC_CPU_WINOGRAD"))
    GTEST_SKIP() << "a channels-last or Winograd variable is set";
  for (StrategyKind s : {StrategyKind::none, StrategyKind::greedy}) {
    const Lowered l = lowered(winograd_pair().bytes(), s);
    EXPECT_TRUE(held(l.program).empty()) << strategy_kind_name(s);
    const std::string source = generate_translation_unit(l.program, CpuTarget().dialect()).source;
    const std::string call = "conv2d_winograd<16, 4, 1>";
    const size_t first = source.find(call);
    ASSERT_NE(first, std::string::npos) << strategy_kind_name(s);
    EXPECT_NE(source.find(call, first + 1), std::string::npos) << strategy_kind_name(s);
  }
  setenv("VTC_CPU_WINOGRAD", "0", 1);
  const Lowered off = lowered(winograd_pair().bytes(), StrategyKind::greedy);
  const std::string source = generate_translation_unit(off.program, CpuTarget().dialect()).source;
  unsetenv("VTC_CPU_WINOGRAD");
  EXPECT_EQ(held(off.program), std::set<std::string>{"c0"});
  EXPECT_EQ(source.find("conv2d_winograd"), std::string::npos);
}

} // namespace
} // namespace vtc
