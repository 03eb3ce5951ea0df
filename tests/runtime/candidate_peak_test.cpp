// The peak memory greedy weighs, kept up to date between questions (runtime/candidate_peak.h),
// equals the arena of the program each candidate lowers to, planned from scratch: checked at
// every question the search asks on the small workloads (decoder layers with and without
// their caches donated, a two-layer decoder, the convolutional blocks), including the
// questions after a move was held back and undone.
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "jit/process.h"
#include "passes/canonicalize.h"
#include "runtime/candidate_peak.h"
#include "runtime/lowering.h"
#include "runtime/memory_plan.h"
#include "strategy/strategy.h"

namespace vtc {
namespace {

class CandidatePeakTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ =
        std::filesystem::temp_directory_path() / ("vtc-candidate-peak-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    for (std::vector<std::string> extra :
         {std::vector<std::string>{"--only", "llama3_layer", "gemma2_local", "yolo11_c3k2",
                                   "shufflenet_v2", "efficientvit"},
          std::vector<std::string>{"--only", "llama3_decoder", "--layers", "2"}}) {
      std::vector<std::string> cmd{VTC_PYTHON, std::string(VTC_SOURCE_DIR) + "/models/generate.py",
                                   "--out",    dir_.string(),
                                   "--size",   "small",
                                   "--dtype",  "f32",
                                   "--batch",  "1"};
      cmd.insert(cmd.end(), extra.begin(), extra.end());
      jit::ProcessResult r = jit::run_process(cmd);
      ASSERT_TRUE(r.ok()) << "models/generate.py: " << r.describe_status() << "\n" << r.output;
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  // Runs greedy on `model`, comparing the two figures at every question; returns how many.
  static int compare(const std::string& model, const std::vector<std::string>& donate) {
    Graph g = import_onnx_file((dir_ / model).string());
    canonicalize(g);
    Options o;
    o.donate = donate;
    KernelPlan plan = plan_kernels(g, o);
    StrategyOptions so = plan.strategy;
    AnalyticCostModel model_cost;
    CandidatePeak incremental(g, plan.kg);
    int questions = 0;
    so.peak_bytes = [&](const Vtog& vtog, const CandidateStorage& c) {
      int64_t fast = incremental(vtog, c);
      std::vector<int> options;
      for (int choice : c.choice)
        if (choice >= 0) options.push_back(choice);
      std::shared_ptr<const Vtog> shared(&vtog, [](const Vtog*) {});
      PointsToResult r = points_to_from_options(shared, options, model_cost);
      EXPECT_TRUE(r.reasons.empty()) << model << ": " << r.reasons.front();
      int64_t planned = plan_memory(lower_strategy(g, plan.kg, *r.strategy, o)).peak_bytes;
      EXPECT_EQ(fast, planned) << model << ", question " << questions;
      ++questions;
      return fast;
    };
    choose_strategy(plan.kg, so, model_cost);
    return questions;
  }

  static std::filesystem::path dir_;
};
std::filesystem::path CandidatePeakTest::dir_;

TEST_F(CandidatePeakTest, EqualsThePlannedArenaAtEveryQuestion) {
  int questions = 0;
  for (const char* m : {"llama3_layer_small_f32_b1.onnx", "gemma2_local_small_f32_b1.onnx",
                        "yolo11_c3k2_small_f32_b1.onnx", "shufflenet_v2_small_f32_b1.onnx",
                        "efficientvit_small_f32_b1.onnx"})
    questions += compare(m, {});
  questions += compare("llama3_layer_small_f32_b1.onnx", {"past_k", "past_v"});
  questions += compare("llama3_decoder_small_f32_b1_l2.onnx",
                       {"past_k_0", "past_v_0", "past_k_1", "past_v_1"});
  EXPECT_GT(questions, 20);
}

} // namespace
} // namespace vtc
