// Every small model of models/ compiles for the cuda target without a GPU: lowered for
// target cuda under strategies none and greedy (the KV-cache models also with their cache
// donated; with vtc's kernels only, and where cuDNN loads also with every convolution it can
// compute on cuDNN, whose epilogue kernels are then generated), its whole translation unit
// generated in the cuda dialect (accessors, kernel calls of kernels/cuda with their launches)
// and compiled by NVRTC, in parts as the target compiles it, to sm_90a cubins that hold every
// entry point. The code is not optimised here (--Ofast-compile=max: the front end sees
// everything, ptxas does little): what is checked is that it compiles. A code-generation error
// in any kernel fails the test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "codegen/translation_unit.h"
#include "device/cudnn_conv.h"
#include "frontend/onnx_import.h"
#include "jit/compile_options.h"
#include "jit/nvrtc_compiler.h"
#include "runtime/lowering.h"
#include "small_model.h"
#include "target/cuda_target.h"
#include "target/cuda_unit_compiler.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;

struct ModelCase {
  const char* workload;
  const char* dtype;
  bool kv_cache;
};

class CudaUnitNvrtc : public ::testing::TestWithParam<ModelCase> {
protected:
  void SetUp() override {
    if (!jit::nvrtc_available()) GTEST_SKIP() << "vtc was built without NVRTC";
    dir_ = fs::temp_directory_path() / ("vtc-cuda-unit-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string generate(const ModelCase& c) {
    return testing::generate_small_model(c.workload, c.dtype, dir_);
  }

  fs::path dir_;
};

TEST_P(CudaUnitNvrtc, EveryKernelCompiles) {
  const ModelCase c = GetParam();
  const std::string path = generate(c);
  const Target& target = target_for(TargetKind::cuda);
  std::vector<std::vector<std::string>> donations{{}};
  if (c.kv_cache) donations.push_back({"past_k", "past_v"});
  std::vector<LibraryMode> libraries{LibraryMode::never};
  if (device::cudnn_available()) libraries.push_back(LibraryMode::always);
  for (StrategyKind strategy : {StrategyKind::none, StrategyKind::greedy}) {
    for (LibraryMode library : libraries) {
      for (const std::vector<std::string>& donate : donations) {
        Graph g = import_onnx_file(path);
        canonicalize_for_target(g, TargetKind::cuda); // as the session: products merged
        Options o;
        o.target = TargetKind::cuda;
        o.strategy = strategy;
        o.donate = donate;
        o.library = library;
        Program p = lower_for_target(g, o);
        TranslationUnit tu = generate_translation_unit(p, target.dialect());
        size_t kernels = 0, interpreted = 0, cudnn = 0;
        std::set<std::string> launched; // kernels that differ only in their buffers are one
        for (size_t s = 0; s < p.steps.size(); ++s) {
          kernels += tu.launches[s].size();
          interpreted += tu.entries[s].empty();
          for (const DeviceLaunch& l : tu.launches[s]) {
            if (l.library_conv) {
              ++cudnn;
              EXPECT_TRUE(l.entry.empty());
              continue;
            }
            launched.insert(l.entry);
          }
        }
        jit::CompileOptions co;
        co.include_dirs = {VTC_SOURCE_DIR};
        co.cache_dir = (dir_ / "cache").string();
        jit::NvrtcOptions nvrtc = cuda_nvrtc_options(co, "sm_90a", 0);
        nvrtc.flags.push_back("--Ofast-compile=max");
        const auto start = std::chrono::steady_clock::now();
        CompiledCudaUnit cubins;
        try {
          cubins = compile_cuda_unit(tu, nvrtc);
        } catch (const std::exception& e) {
          const fs::path keep =
              fs::temp_directory_path() / (std::string(c.workload) + "_" + c.dtype + "_failed.cu");
          std::ofstream(keep) << tu.source;
          FAIL() << c.workload << " " << c.dtype << " " << strategy_kind_name(strategy) << ": "
                 << e.what() << " (source kept in " << keep.string() << ")";
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%s %s %s%s library %s: %zu steps, %zu kernels (%zu distinct, %zu cuDNN), "
                    "%zu on the interpreter, NVRTC %.1f s\n",
                    c.workload, c.dtype, strategy_kind_name(strategy),
                    donate.empty() ? "" : " +donate", library_mode_name(library), p.steps.size(),
                    kernels, launched.size(), cudnn, interpreted, seconds);
        std::set<std::string> found;
        for (size_t part = 0; part < cubins.parts.size(); ++part) {
          EXPECT_EQ(cubins.parts[part].code.substr(1, 3), "ELF");
          for (const std::string& e : cubins.entries[part]) {
            EXPECT_NE(cubins.parts[part].code.find(e), std::string::npos) << e;
            EXPECT_TRUE(found.insert(e).second) << e << " is in two parts";
          }
        }
        EXPECT_EQ(found, launched);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SmallModels, CudaUnitNvrtc,
                         ::testing::Values(ModelCase{"llama3_layer", "f16", true},
                                           ModelCase{"llama3_layer", "bf16", true},
                                           ModelCase{"llama3_layer", "f32", true},
                                           ModelCase{"gemma2_local", "bf16", true},
                                           ModelCase{"gemma2_global", "f16", true},
                                           ModelCase{"efficientvit", "f16", false},
                                           ModelCase{"efficientvit", "f32", false},
                                           ModelCase{"yolo11_c3k2", "f32", false},
                                           ModelCase{"yolo11n", "f16", false},
                                           ModelCase{"shufflenet_v2", "f32", false},
                                           ModelCase{"shufflenet_v2", "f16", false}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return std::string(info.param.workload) + "_" + info.param.dtype;
                         });

} // namespace
} // namespace vtc
