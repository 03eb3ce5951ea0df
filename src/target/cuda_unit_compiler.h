// A cuda translation unit compiled in parts, in parallel: NVRTC compiles one program on one
// thread, and a model's tensor-core kernels take seconds each to optimise, so the entry
// points are cut into parts of a few kernels — each the preamble, the accessor definitions of
// its own kernels and their entry points (part_source) — compiled side by side, each cached on
// its own (nvrtc_compiler.h). The cut depends on the unit alone, so the same unit hits the same
// cache entries on every machine.
#pragma once

#include <vector>

#include "codegen/translation_unit.h"
#include "jit/nvrtc_compiler.h"
#include "jit/progress.h"

namespace vtc {

struct CompiledCudaUnit {
  // One cubin per part; every DeviceLaunch's entry point is in exactly one.
  std::vector<jit::GpuObject> parts;
  // Per part, the entry points it holds.
  std::vector<std::vector<std::string>> entries;
  double seconds = 0; // wall time of the compiles (0 when every part was cached)
  bool cached = true; // every part came from the cache
};

// Entry points per part.
inline constexpr size_t kEntriesPerCudaPart = 4;

// Compiles `unit`'s entry points (part_source of each part) to cubins with
// `options`, on up to `threads` threads (0: one per core). Throws what nvrtc_compile throws
// for the first part that fails.
// Parts compiled so far are counted on `progress` when given.
CompiledCudaUnit compile_cuda_unit(const TranslationUnit& unit, const jit::NvrtcOptions& options,
                                   unsigned threads = 0, jit::Progress* progress = nullptr);

} // namespace vtc
