// Tensors the cuda target holds channels-last (target/cuda_layouts.h): one written by a cuDNN
// channels-last convolution and read only as the input of another lies [n, h, w, c] under
// every strategy, its writer's epilogue stores it in the product's order and its reader's call
// takes it as it lies; a second reader of another kind keeps it NCHW. Needs cuDNN to load (not
// a GPU): skipped where it does not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "codegen/translation_unit.h"
#include "conv_chain_model.h"
#include "device/cudnn_conv.h"
#include "frontend/onnx_import.h"
#include "passes/canonicalize.h"
#include "runtime/lowering.h"
#include "target/cuda_target.h"

namespace vtc {
namespace {

// The program and the graph its values live in.
struct Lowered {
  std::unique_ptr<Graph> graph;
  Program program;
};

Lowered lowered(const std::string& bytes, StrategyKind strategy) {
  auto g = std::make_unique<Graph>(import_onnx_bytes(bytes, ".", "conv_chain.onnx"));
  canonicalize(*g);
  Options o;
  o.target = TargetKind::cuda;
  o.strategy = strategy;
  o.profile = false;
  Program p = lower_for_target(*g, o);
  return {std::move(g), std::move(p)};
}

std::vector<std::string> held(const Program& p) {
  std::vector<std::string> names;
  for (const Value* v : p.storage.channels_last)
    names.push_back(v->name);
  return names;
}

TEST(CudaLayouts, TensorsBetweenChannelsLastConvolutionsLieChannelsLast) {
  if (!device::cudnn_available()) GTEST_SKIP() << device::cudnn_unavailable_reason();
  if (std::getenv("VTC_CUDNN_CHANNELS_LAST") || std::getenv("VTC_CUDA_HOLD_CHANNELS_LAST"))
    GTEST_SKIP() << "a channels-last variable is set";
  for (StrategyKind s : {StrategyKind::none, StrategyKind::greedy}) {
    const Lowered l = lowered(testing::conv_chain_model().bytes(), s);
    const Program& p = l.program;
    EXPECT_EQ(held(p), std::vector<std::string>{"a"}) << strategy_kind_name(s);
    const TranslationUnit unit = generate_translation_unit(p, CudaTarget().dialect());
    EXPECT_NE(unit.source.find("library_epilogue_to_nhwc"), std::string::npos);
    int taken_as_it_lies = 0, transposed = 0;
    for (const std::vector<DeviceLaunch>& step : unit.launches)
      for (const DeviceLaunch& l : step)
        if (l.library_conv) {
          EXPECT_TRUE(l.library_conv->channels_last);
          ++(l.library_conv->input_channels_last ? taken_as_it_lies : transposed);
        }
    EXPECT_EQ(taken_as_it_lies, 1) << strategy_kind_name(s);
    EXPECT_EQ(transposed, 1) << strategy_kind_name(s);
  }
  // Read by an elementwise kernel too: it stays NCHW.
  EXPECT_TRUE(
      held(lowered(testing::conv_chain_model(true).bytes(), StrategyKind::greedy).program).empty());
}

} // namespace
} // namespace vtc
