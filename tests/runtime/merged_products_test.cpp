// The graph the cuda target lowers, with sibling matrix products merged (q, k, v of the Gemma-2
// layer, gate and up of both), lowered for the cpu target: every strategy computes the same
// bits (the Split's pieces made views, the gated product's prologue reading them) and the
// outputs match the reference interpreter on the unmerged graph within vtc's f32 tolerance.
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "jit/process.h"
#include "passes/canonicalize.h"
#include "passes/merge_matmuls.h"
#include "ref/compare.h"
#include "ref/interpreter.h"
#include "ref/random_inputs.h"
#include "runtime/lowering.h"
#include "vtc/vtc.h"

namespace vtc {
namespace {

class MergedProductsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("vtc-merged-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    jit::ProcessResult r =
        jit::run_process({VTC_PYTHON, std::string(VTC_SOURCE_DIR) + "/models/generate.py", "--out",
                          dir_.string(), "--size", "small", "--dtype", "f32", "--batch", "1",
                          "--only", "llama3_layer", "gemma2_local"});
    ASSERT_TRUE(r.ok()) << "models/generate.py: " << r.describe_status() << "\n" << r.output;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::filesystem::path dir_;
};
std::filesystem::path MergedProductsTest::dir_;

// The session of `path`'s graph with its siblings merged (`groups` of them), lowered by
// `strategy` for the cpu.
Session merged_session(const std::string& path, StrategyKind strategy, int groups) {
  auto g = std::make_unique<Graph>(import_onnx_file(path));
  canonicalize(*g);
  EXPECT_EQ(merge_sibling_matmuls(*g), groups) << path;
  Options o;
  o.strategy = strategy;
  Program p = lower_for_target(*g, o);
  return Session(std::move(g), std::move(p), o);
}

TEST_F(MergedProductsTest, StrategiesAgreeAndMatchTheUnmergedReference) {
  for (auto [model, groups] : {std::pair{"llama3_layer_small_f32_b1.onnx", 1},
                               std::pair{"gemma2_local_small_f32_b1.onnx", 2}}) {
    const std::string path = (dir_ / model).string();
    Graph plain = import_onnx_file(path);
    canonicalize(plain);
    TensorMap in;
    uint64_t seed = 7;
    for (const Value* v : plain.inputs)
      in.emplace(v->name, random_tensor(v->type, seed++));
    TensorMap expected = run_reference(plain, in);
    Session none = merged_session(path, StrategyKind::none, groups);
    Session greedy = merged_session(path, StrategyKind::greedy, groups);
    HostTensorMap a = none.run(in), b = greedy.run(in);
    for (const Value* v : plain.outputs) {
      EXPECT_TRUE(a.at(v->name).bitwise_equal(b.at(v->name))) << model << ": " << v->name;
      Comparison c =
          compare_rel_l2(b.at(v->name), expected.at(v->name), model_tolerance(DType::f32));
      EXPECT_TRUE(c.ok) << model << ": " << v->name << ": " << c.message;
    }
  }
}

} // namespace
} // namespace vtc
