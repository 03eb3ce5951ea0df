// The accessor contract compiles for the GPU: every accessor vtc generates for real models
// (the Llama-3 decode layer in f16 and bf16, the YOLO11 C3k2 block in f32: Split, Concat,
// Transpose, the grouped-query Expand and the KV-cache ScatterND under strategy greedy),
// emitted in the cuda dialect with kernels/common's contract, is compiled by NVRTC to an
// sm_90a cubin together with a trivial kernel per accessor that loads from it and, for the
// kernels' outputs, stores through it; a fused prologue's accessor (EfficientViT's Relu and Cast
// into its linear attention's product) is read through load_floats<8> as well, which takes its
// loads<8> (the operands' runs as vectors). No GPU is needed; a codegen error fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "codegen/accessor_emitter.h"
#include "codegen/cuda_dialect.h"
#include "frontend/onnx_import.h"
#include "jit/nvrtc_compiler.h"
#include "passes/canonicalize.h"
#include "runtime/lowering.h"
#include "small_model.h"
#include "strategy/cost_model.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;

struct Emitted {
  std::string source;
  int mapped = 0;    // accessors of virtual operands
  int prologues = 0; // accessors of fused prologues offering loads<N>
  int kernels = 0;
};

// Every kernel operand of the greedy program of `path` as an accessor, and a kernel per
// operand reading (and for outputs writing) element 0 through it.
Emitted emit_program_accessors(const std::string& path, const std::vector<std::string>& donate) {
  Graph g = import_onnx_file(path);
  canonicalize(g);
  Options o;
  o.donate = donate;
  KernelPlan plan = plan_kernels(g, o);
  Strategy s = choose_for_target(g, plan, o, AnalyticCostModel());
  Program p = lower_strategy(g, plan.kg, s, o);

  CudaDialect dialect;
  Emitted e;
  std::string defs, kernels;
  int counter = 0;
  for (const StepInfo& step : p.steps) {
    for (const OperandAccess& a : step.operands) {
      SiteArgs site;
      AccessorEmitter emitter(p.storage, dialect, defs, counter, site);
      // A prologue the kernel's anchor reads, in a kernel of one product (an attention
      // kernel's second product reads the first's result, which no accessor computes).
      const bool one_product =
          step.kernel &&
          std::count_if(step.kernel->nodes.begin(), step.kernel->nodes.end(),
                        [](const Node* n) { return n->op == "MatMul" || n->op == "Gemm"; }) == 1;
      const bool operand_prologue =
          a.kind == AccessKind::prologue && a.value->type.rank() > 0 && one_product &&
          step.kernel->anchor &&
          std::find(step.kernel->anchor->inputs.begin(), step.kernel->anchor->inputs.end(),
                    a.value) != step.kernel->anchor->inputs.end();
      if (operand_prologue) {
        for (const Node* n : step.kernel->nodes) // values the kernel computes
          for (const Value* v : n->outputs)
            if (v) emitter.inside.insert(v);
        const size_t before = defs.size();
        Acc acc = emitter.value(a.value);
        e.prologues += defs.find("has_loads = true", before) != std::string::npos;
        const std::string name = "k" + std::to_string(e.kernels++);
        kernels +=
            "extern \"C\" __global__ void " + name +
            "(void* const* buf, const int64_t* site, float* out) {\n  const auto a = " + acc.init +
            ";\n  Index<" + std::to_string(acc.rank) +
            "> i{};\n  float d[8];\n  vtc::kernels::cuda::load_floats<8>(a, i, false, 8, "
            "d);\n  out[threadIdx.x] = d[threadIdx.x % 8] + float(a.load(i));\n}\n";
        continue;
      }
      if (a.kind != AccessKind::mapped && a.kind != AccessKind::physical) continue;
      Acc acc = emitter.stored(a.value);
      e.mapped += a.kind == AccessKind::mapped;
      // Index-check steps read their indices only.
      const bool output =
          step.kernel && std::find(step.kernel->outputs.begin(), step.kernel->outputs.end(),
                                   a.value) != step.kernel->outputs.end();
      const std::string name = "k" + std::to_string(e.kernels++);
      kernels +=
          "extern \"C\" __global__ void " + name +
          "(void* const* buf, const int64_t* site, float* out) {\n  const auto a = " + acc.init +
          ";\n  static_assert(Accessor<" + acc.type + ">);\n  Index<" + std::to_string(acc.rank) +
          "> i{};\n  out[threadIdx.x] = float(a.load(i));\n" +
          (output ? "  a.store(i, out[0]);\n" : "") + "}\n";
    }
  }
  e.source = dialect.preamble({}) + "\nnamespace {\n" + defs + "} // namespace\n\n" + kernels;
  return e;
}

class GeneratedAccessorNvrtc : public ::testing::Test {
protected:
  void SetUp() override {
    if (!jit::nvrtc_available()) GTEST_SKIP() << "vtc was built without NVRTC";
    dir_ = fs::temp_directory_path() / ("vtc-accessor-nvrtc-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void expect_compiles(const std::string& workload, const std::string& dtype, int min_mapped,
                       const std::vector<std::string>& donate = {}, int min_prologues = 0) {
    Emitted e =
        emit_program_accessors(testing::generate_small_model(workload, dtype, dir_), donate);
    std::printf("%s %s: %d accessors, %d of virtual operands, %d prologues\n", workload.c_str(),
                dtype.c_str(), e.kernels, e.mapped, e.prologues);
    EXPECT_GE(e.mapped, min_mapped) << workload << ": too few virtual operands to test";
    EXPECT_GE(e.prologues, min_prologues) << workload << ": too few prologues to test";
    jit::NvrtcOptions o;
    o.include_dirs = {VTC_SOURCE_DIR};
    o.cache_dir = (dir_ / "cache").string();
    jit::GpuObject cubin = jit::nvrtc_compile(e.source, jit::GpuCode::cubin, o);
    EXPECT_GT(cubin.code.size(), 1000u);
    EXPECT_EQ(cubin.code.substr(1, 3), "ELF");
    for (int k = 0; k < e.kernels; ++k)
      EXPECT_NE(cubin.code.find("k" + std::to_string(k)), std::string::npos) << k;
  }

  fs::path dir_;
};

TEST_F(GeneratedAccessorNvrtc, LlamaLayerF16) {
  expect_compiles("llama3_layer", "f16", 4, {"past_k", "past_v"});
}

TEST_F(GeneratedAccessorNvrtc, LlamaLayerBf16) {
  expect_compiles("llama3_layer", "bf16", 4, {"past_k", "past_v"});
}

TEST_F(GeneratedAccessorNvrtc, C3k2BlockF32) {
  expect_compiles("yolo11_c3k2", "f32", 2);
}

TEST_F(GeneratedAccessorNvrtc, EfficientVitProloguesF16) {
  expect_compiles("efficientvit", "f16", 2, {}, 2);
}

} // namespace
} // namespace vtc
