// Parts of a cpu translation unit compiled on a pool of threads (see cpu_unit_compiler.h).
#include "target/cpu_unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>

#include "jit/parallel.h"
#include "jit/precompiled_header.h"
#include "jit/progress.h"

namespace vtc {

CompiledCpuUnit compile_cpu_unit(const TranslationUnit& unit, const jit::CompileOptions& options) {
  CompiledCpuUnit out;
  std::vector<std::string> sources;
  if (unit.entry_texts.empty()) {
    std::set<std::string> names(unit.entries.begin(), unit.entries.end());
    names.erase("");
    sources.push_back(unit.source);
    out.entries.emplace_back(names.begin(), names.end());
  }
  // Parts start with an include of the preamble's precompiled form: its headers are parsed
  // once for every part (and every later unit), not once a part.
  const std::string preamble = jit::preamble_include(unit.preamble, options);
  for (size_t first = 0; first < unit.entry_texts.size(); first += kKernelsPerCpuPart) {
    const size_t end = std::min(unit.entry_texts.size(), first + kKernelsPerCpuPart);
    out.entries.emplace_back();
    for (size_t k = first; k < end; ++k)
      out.entries.back().push_back(unit.entry_names.at(k));
    sources.push_back(part_source(unit, first, end, preamble));
  }
  jit::CompileOptions part = options;
  part.libraries.insert(part.libraries.end(), unit.libraries.begin(), unit.libraries.end());
  part.progress = nullptr; // one line for the unit, counting kernels
  part.verbose = options.verbose && sources.size() == 1;
  const size_t kernels = unit.entry_texts.empty() ? out.entries[0].size() : unit.entry_texts.size();
  if (options.progress) options.progress->stage("compiling C++ kernels", kernels);
  std::vector<std::optional<jit::LoadedObject>> loaded(sources.size());
  std::atomic<size_t> compiled{0};
  const auto start = std::chrono::steady_clock::now();
  // The precompiled header is built, once, by the first part that misses the cache; parts
  // that find theirs need none.
  std::once_flag header_once;
  jit::run_in_parallel(sources.size(), 0, [&](size_t p) {
    if (!unit.entry_texts.empty() && !jit::object_cached(sources[p], part))
      std::call_once(header_once, [&] {
        const jit::PreambleBuild b = jit::build_preamble(unit.preamble, options);
        if (options.verbose && b.built)
          std::fprintf(stderr, "vtc: precompiled the kernel headers in %.2f s\n", b.seconds);
      });
    loaded[p].emplace(jit::compile_and_load(sources[p], part));
    if (options.progress) options.progress->count(compiled += out.entries[p].size());
  });
  for (std::optional<jit::LoadedObject>& o : loaded) {
    out.cached = out.cached && o->object.cached;
    out.parts.push_back(std::move(*o));
  }
  if (!out.cached)
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace vtc
