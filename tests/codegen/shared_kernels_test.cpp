// Kernels that differ only in their buffers are generated once (codegen/site_args.h): a stack
// of identical decoder layers gives, on the cpu and the cuda dialects, the same translation
// unit whatever its depth — the same distinct kernels, hence the same cache key — while each
// step's site table names its own buffers; and the stack compiled so still computes, on the
// cpu, outputs bitwise equal between strategies.
#include <filesystem>
#include <set>
#include <unistd.h>

#include <gtest/gtest.h>

#include "codegen/cpu_dialect.h"
#include "codegen/cuda_dialect.h"
#include "codegen/translation_unit.h"
#include "frontend/onnx_import.h"
#include "passes/canonicalize.h"
#include "ref/random_inputs.h"
#include "runtime/lowering.h"
#include "small_model.h"
#include "vtc/vtc.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> caches(int layers) {
  std::vector<std::string> out;
  for (int i = 0; i < layers; ++i) {
    out.push_back("past_k_" + std::to_string(i));
    out.push_back("past_v_" + std::to_string(i));
  }
  return out;
}

class SharedKernels : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("vtc-shared-kernels-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (int layers : {1, 3})
      testing::generate_small_model("llama3_decoder", "f32", dir_, layers);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string model(int layers) {
    return (dir_ / ("llama3_decoder_small_f32_b1_l" + std::to_string(layers) + ".onnx")).string();
  }

  static TranslationUnit unit(int layers, const Dialect& dialect, TargetKind target) {
    Graph g = import_onnx_file(model(layers));
    canonicalize(g);
    Options o;
    o.target = target;
    o.donate = caches(layers);
    Program p = lower_for_target(g, o);
    TranslationUnit tu = generate_translation_unit(p, dialect);
    EXPECT_EQ(tu.entries.size(), p.steps.size());
    return tu;
  }

  static fs::path dir_;
};
fs::path SharedKernels::dir_;

void expect_shared(const TranslationUnit& one, const TranslationUnit& three) {
  EXPECT_EQ(one.source, three.source);
  EXPECT_EQ(one.kernels, three.kernels);
  EXPECT_GT(three.entries.size(), 2 * one.entries.size());
  std::set<std::string> names(three.entries.begin(), three.entries.end());
  names.erase("");
  EXPECT_EQ(int(names.size()), three.kernels);
  // Steps sharing an entry point pass different buffers.
  std::set<std::vector<int64_t>> tables;
  for (size_t s = 0; s < three.entries.size(); ++s)
    if (three.entries[s] == three.entries[1]) tables.insert(three.sites[s]);
  EXPECT_GT(tables.size(), 1u);
}

TEST_F(SharedKernels, DeeperStackOfIdenticalLayersGivesTheSameCpuUnit) {
  CpuDialect dialect;
  expect_shared(unit(1, dialect, TargetKind::cpu), unit(3, dialect, TargetKind::cpu));
}

TEST_F(SharedKernels, DeeperStackOfIdenticalLayersGivesTheSameCudaUnit) {
  CudaDialect dialect;
  TranslationUnit one = unit(1, dialect, TargetKind::cuda);
  TranslationUnit three = unit(3, dialect, TargetKind::cuda);
  expect_shared(one, three);
  EXPECT_EQ(one.entry_names, three.entry_names);
  EXPECT_EQ(three.entry_names.size(), three.entry_texts.size());
}

TEST_F(SharedKernels, SharedKernelsComputeTheSameOutputsUnderEveryStrategy) {
  std::optional<HostTensorMap> first;
  for (StrategyKind kind : {StrategyKind::none, StrategyKind::greedy}) {
    Options o;
    o.strategy = kind;
    o.donate = caches(3);
    o.cache_dir = (dir_ / "cache").string();
    o.progress = false;
    Session session(model(3), o);
    HostTensorMap inputs;
    uint64_t seed = 0;
    for (const TensorSpec& spec : session.inputs())
      inputs.emplace(spec.name, random_tensor(spec.type, seed++));
    HostTensorMap outputs = session.run(inputs);
    if (!first) {
      first = std::move(outputs);
      continue;
    }
    for (const auto& [name, t] : *first)
      EXPECT_TRUE(t.bitwise_equal(outputs.at(name))) << name;
  }
}

} // namespace
} // namespace vtc
