// Tensors the cuda target holds channels-last (target/cuda_layouts.h): one written by a cuDNN
// channels-last convolution and read only as the input of another lies [n, h, w, c] under
// every strategy, its writer's epilogue stores it in the product's order and its reader's call
// takes it as it lies; a second reader of another kind keeps it NCHW. The first convolution
// reads the caller's input: its prologue stages it. Needs cuDNN to load (not a GPU): skipped
// where it does not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "codegen/translation_unit.h"
#include "conv_chain_model.h"
#include "device/cudnn_conv.h"
#include "layout_test_util.h"
#include "target/cuda_target.h"

namespace vtc {
namespace {

using testing::held;
using testing::Lowered;

Lowered lowered(const std::string& bytes, StrategyKind strategy) {
  return testing::lowered(bytes, TargetKind::cuda, strategy);
}

TEST(CudaLayouts, TensorsBetweenChannelsLastConvolutionsLieChannelsLast) {
  if (!device::cudnn_available()) GTEST_SKIP() << device::cudnn_unavailable_reason();
  if (std::getenv("VTC_CUDNN_CHANNELS_LAST") || std::getenv("VTC_CUDA_HOLD_CHANNELS_LAST"))
    GTEST_SKIP() << "a channels-last variable is set";
  for (StrategyKind s : {StrategyKind::none, StrategyKind::greedy}) {
    const Lowered l = lowered(testing::conv_chain_model().bytes(), s);
    const Program& p = l.program;
    EXPECT_EQ(held(p), (std::set<std::string>{"c0", "a"})) << strategy_kind_name(s);
    const TranslationUnit unit = generate_translation_unit(p, CudaTarget().dialect());
    EXPECT_NE(unit.source.find("library_epilogue_to_nhwc"), std::string::npos);
    EXPECT_NE(unit.source.find("library_prologue_nhwc"), std::string::npos);
    int taken_as_it_lies = 0, staged = 0;
    for (const std::vector<DeviceLaunch>& step : unit.launches)
      for (size_t i = 0; i < step.size(); ++i)
        if (const std::optional<LibraryConvCall>& call = step[i].library_conv) {
          EXPECT_TRUE(call->channels_last);
          EXPECT_NE(call->input_channels_last, call->input_staged);
          // A staged input: the launch before writes the staging buffer, and no buffer is read.
          EXPECT_EQ(call->input_staged, i > 0 && step[i - 1].writes_staging);
          EXPECT_EQ(call->input_staged, call->x_buffer < 0);
          ++(call->input_staged ? staged : taken_as_it_lies);
        }
    EXPECT_EQ(taken_as_it_lies, 2) << strategy_kind_name(s);
    EXPECT_EQ(staged, 1) << strategy_kind_name(s);
  }
  // `a` read by an elementwise kernel too: it stays NCHW (c0 is still held).
  EXPECT_EQ(held(lowered(testing::conv_chain_model(true).bytes(), StrategyKind::greedy).program),
            std::set<std::string>{"c0"});
}

} // namespace
} // namespace vtc
