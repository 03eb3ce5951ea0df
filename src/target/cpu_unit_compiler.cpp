// Parts of a cpu translation unit compiled on a pool of threads (see cpu_unit_compiler.h).
#include "target/cpu_unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>

#include "jit/parallel.h"
#include "jit/precompiled_header.h"
#include "jit/progress.h"

namespace vtc {

namespace {

// The order parts are compiled in: the heaviest first (by their entries' weights), so that the
// last part to start is a light one and no core waits long on another at the end.
std::vector<size_t> heaviest_first(const TranslationUnit& unit, size_t parts) {
  std::vector<int> weight(parts, 0);
  for (size_t k = 0; k < unit.entry_texts.size(); ++k)
    weight[k / kKernelsPerCpuPart] += k < unit.entry_weights.size() ? unit.entry_weights[k] : 1;
  std::vector<size_t> order(parts);
  for (size_t p = 0; p < parts; ++p)
    order[p] = p;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  return order;
}

} // namespace

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
  // once for every part (and every later unit), not once a part. The header it names is
  // written first: the parts' cache keys cover its content.
  const std::string preamble = jit::preamble_include(unit.preamble, options);
  if (!unit.entry_texts.empty()) jit::write_preamble(unit.preamble, options);
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
  // The work: the precompiled header first, where a part misses the cache and the header is not
  // built yet, then the parts, heaviest first. Parts that start while the header is being
  // built parse its text (about 1.5 s more each on two cores, against the 4 s the other core
  // would wait for the header).
  const std::vector<size_t> order =
      unit.entry_texts.empty() ? std::vector<size_t>{0} : heaviest_first(unit, sources.size());
  bool any_missing = false;
  for (size_t p = 0; p < sources.size() && !unit.entry_texts.empty() && !any_missing; ++p)
    any_missing = !jit::object_cached(sources[p], part);
  const size_t header_tasks = any_missing ? 1 : 0;
  std::vector<std::optional<jit::LoadedObject>> loaded(sources.size());
  std::atomic<size_t> compiled{0};
  const auto start = std::chrono::steady_clock::now();
  jit::run_in_parallel(header_tasks + sources.size(), 0, [&](size_t task) {
    if (task < header_tasks) {
      const jit::PreambleBuild b = jit::build_preamble(unit.preamble, options);
      if (options.verbose && b.built)
        std::fprintf(stderr, "vtc: precompiled the kernel headers in %.2f s\n", b.seconds);
      return;
    }
    const size_t p = order[task - header_tasks];
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
