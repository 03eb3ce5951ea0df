// Parts of a cuda translation unit compiled on a pool of threads (see cuda_unit_compiler.h).
#include "target/cuda_unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "jit/parallel.h"
#include "vtc/error.h"

namespace vtc {

CompiledCudaUnit compile_cuda_unit(const TranslationUnit& unit, const jit::NvrtcOptions& options,
                                   unsigned threads, jit::Progress* progress) {
  const std::vector<std::string>& names = unit.entry_names;
  VTC_CHECK(names.size() == unit.entry_texts.size())
      << "the translation unit has " << unit.entry_texts.size() << " entry texts for "
      << names.size() << " kernel names";
  CompiledCudaUnit out;
  std::vector<std::string> sources;
  for (size_t first = 0; first < names.size(); first += kEntriesPerCudaPart) {
    const size_t end = std::min(names.size(), first + kEntriesPerCudaPart);
    out.entries.emplace_back();
    for (size_t k = first; k < end; ++k)
      out.entries.back().push_back(names[k]);
    sources.push_back(part_source(unit, first, end));
  }
  out.parts.resize(sources.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, unsigned(std::max<size_t>(sources.size(), 1)));

  jit::NvrtcOptions quiet = options;
  quiet.verbose = false; // one line for the unit instead of one per part
  std::atomic<size_t> compiled{0};
  if (progress) progress->stage("compiling CUDA kernels, parts", sources.size());
  const auto start = std::chrono::steady_clock::now();
  jit::run_in_parallel(sources.size(), threads, [&](size_t p) {
    out.parts[p] = jit::nvrtc_compile(sources[p], jit::GpuCode::cubin, quiet);
    if (progress) progress->count(++compiled);
  });
  for (const jit::GpuObject& o : out.parts)
    out.cached &= o.cached;
  if (!out.cached)
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.verbose) {
    size_t lines = size_t(std::count(unit.source.begin(), unit.source.end(), '\n'));
    std::fprintf(stderr,
                 "vtc: %s %zu lines of CUDA C++ (%zu kernels in %zu parts, %s) with NVRTC for "
                 "%s on %u threads: %s\n",
                 out.cached ? "found" : "compiled", lines, names.size(), out.parts.size(),
                 options.cache_dir.c_str(), options.arch.c_str(), threads,
                 out.cached ? "cached" : (std::to_string(out.seconds) + " s").c_str());
  }
  return out;
}

} // namespace vtc
