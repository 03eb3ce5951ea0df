// A cpu translation unit compiled in parts, side by side: the distinct kernels are cut into
// parts, as many as keep every core busy (cut_into_parts) — each the preamble, its kernels'
// accessor definitions and entry points (part_source) — and each part is compiled into a shared
// object of its own, cached on its own (host_compiler.h); the progress line counts kernels
// compiled of all. Kernels are cached one by one: a kernel is named by its text
// (generate_translation_unit), and the cache records which part's object holds it, so a unit
// loads the parts that hold the kernels compiled before — by another strategy of the model or
// another model — and compiles only the kernels new to the cache, in parts of their own; the parts
// are compiled heaviest first (by the weights of their entry points), beside the precompiled header
// when it is still to be built. Template instances that most parts would each compile (the GEMM
// engines) are compiled once, into a shared object of their own that every part links. A unit
// without entry texts (written by hand) is one part.
#pragma once

#include <string>
#include <vector>

#include "codegen/translation_unit.h"
#include "jit/compile_options.h"
#include "jit/host_compiler.h"

namespace vtc {

struct CompiledCpuUnit {
  std::vector<jit::LoadedObject> parts;
  std::vector<std::vector<std::string>> entries; // per part, the entry points it holds
  double seconds = 0; // wall time of the compiles (0 when every part was cached)
  bool cached = true; // every part came from the cache
};

// The most kernels a part holds. A unit's kernels to compile are cut into as few parts as keep
// every core busy: a multiple of the cores' count, none above this size, their weights (the
// entry points' compile weights) balanced. Each part compiles its own copies of the helpers
// every kernel instantiates (the GEMM engine's thunks, the thread pool's loops), so fewer,
// larger parts compile faster: YOLO11n's 55 kernels at full size on two cores took 28.8 s of
// compiler time in ten parts of six, 21.6 in four of fourteen, 19.9-23.5 in two of 27 and 28
// (16.3 -> 11.9 -> 10.7-12.9 s of wall time, cold).
inline constexpr size_t kMaxKernelsPerCpuPart = 28;
// Units of more kernels than this link the shared instances' object rather than compile their
// copies of them in each part (cpu_unit_compiler.cpp).
inline constexpr size_t kSharedInstancesMinKernels = 13;

// `entries` (entry indices of `unit`) cut as above for `cores` cores, each part in unit order.
std::vector<std::vector<size_t>> cut_into_parts(const TranslationUnit& unit,
                                                const std::vector<size_t>& entries, size_t cores);

// Builds into options.cache_dir what every unit's parts would otherwise build in their cache
// first, for both preambles of the cpu dialect (with and without OpenBLAS): the precompiled
// kernel headers and the shared instances' object. A directory so filled is a prebuilt
// directory (CompileOptions::prebuilt_dir). Throws vtc::Error when the headers or the
// instances do not compile or the directory cannot be written.
struct PrebuiltCpuObjects {
  int entries = 0;    // headers and objects the directory holds
  int built = 0;      // of them built now (the others were there)
  double seconds = 0; // in the compiler
};
PrebuiltCpuObjects prebuild_cpu_objects(const jit::CompileOptions& options);

// Compiles and loads `unit` with `options` (its libraries linked into every part), on one
// thread per core; kernels compiled so far are counted on options.progress when given. Throws
// what compile_and_load throws for the first part that fails.
CompiledCpuUnit compile_cpu_unit(const TranslationUnit& unit, const jit::CompileOptions& options);

} // namespace vtc
