// Parts of a cpu translation unit compiled on a pool of threads (see cpu_unit_compiler.h).
#include "target/cpu_unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "jit/cache_key.h"
#include "jit/parallel.h"
#include "jit/precompiled_header.h"
#include "jit/progress.h"

namespace vtc {

namespace {

// Template instances that most parts would each compile again otherwise: the GEMM engines of
// gemm_core.h under the implicit-GEMM and padded-plane convolutions and the matrix products,
// and their A packers (a third of YOLO11n's generated code, one copy per part). They are
// compiled once, into a shared object of their own (a cache entry like a part), which every
// part declares (`extern template`) and links. The register tiles are AVX-512's (gemm_core.h's
// GemmTile, its one-vector form for narrow planes, conv.h's PaddedPlaneTile), with the column
// tail of 16 (planes of 20 x 20 or 28 x 28); elsewhere the list is empty. Other instances
// (other column tails) stay in the parts that use them.
constexpr const char* kSharedInstances[] = {
    "void vtc::kernels::gemm_engine<float, 12, 2, 0>(const vtc::kernels::GemmProblemRef<float>&, "
    "int64_t, int64_t, int64_t, int64_t, const vtc::kernels::PrepackedOperands<float>&)",
    "void vtc::kernels::gemm_engine<float, 12, 2, 16>(const vtc::kernels::GemmProblemRef<float>&, "
    "int64_t, int64_t, int64_t, int64_t, const vtc::kernels::PrepackedOperands<float>&)",
    "void vtc::kernels::gemm_engine<float, 12, 1, 0>(const vtc::kernels::GemmProblemRef<float>&, "
    "int64_t, int64_t, int64_t, int64_t, const vtc::kernels::PrepackedOperands<float>&)",
    "void vtc::kernels::gemm_engine<float, 8, 3, 0>(const vtc::kernels::GemmProblemRef<float>&, "
    "int64_t, int64_t, int64_t, int64_t, const vtc::kernels::PrepackedOperands<float>&)",
    "void vtc::kernels::pack_a_panels<float, 12>(const void*, void (*)(const void*, int64_t, "
    "int64_t, int64_t, int64_t, float*), int64_t, int64_t, int64_t, float*)",
    "void vtc::kernels::pack_a_panels<float, 8>(const void*, void (*)(const void*, int64_t, "
    "int64_t, int64_t, int64_t, float*), int64_t, int64_t, int64_t, float*)",
};

// The instances as explicit instantiation definitions (`keyword` "template") or declarations
// ("extern template").
std::string shared_instances(const std::string& keyword) {
  std::string out = "#if defined(__AVX512F__)\n";
  for (const char* instance : kSharedInstances)
    out += keyword + " " + instance + ";\n";
  return out + "#endif\n";
}

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
  // written first: the parts' cache keys cover its content. Then the declarations of the
  // shared instances, defined by the object that every part links (its path in their keys).
  std::string preamble = jit::preamble_include(unit.preamble, options);
  jit::CompileOptions part = options;
  part.libraries.insert(part.libraries.end(), unit.libraries.begin(), unit.libraries.end());
  part.progress = nullptr; // one line for the unit, counting kernels
  part.verbose = false;
  const jit::CompileOptions shared_options = part;
  std::string shared_source;
  if (!unit.entry_texts.empty()) jit::write_preamble(unit.preamble, options);
  // A unit of one or two parts compiles its few copies of the instances beside each other
  // sooner than it would wait for their object (before the first part could start).
  const size_t parts = (unit.entry_texts.size() + kKernelsPerCpuPart - 1) / kKernelsPerCpuPart;
  if (parts > 2) {
    shared_source = preamble + shared_instances("template");
    const std::filesystem::path dir = std::filesystem::absolute(options.cache_dir);
    part.link_objects.push_back(
        (dir / (jit::cache_key(shared_source, shared_options) + ".so")).string());
    preamble += shared_instances("extern template");
  }
  for (size_t first = 0; first < unit.entry_texts.size(); first += kKernelsPerCpuPart) {
    const size_t end = std::min(unit.entry_texts.size(), first + kKernelsPerCpuPart);
    out.entries.emplace_back();
    for (size_t k = first; k < end; ++k)
      out.entries.back().push_back(unit.entry_names.at(k));
    sources.push_back(part_source(unit, first, end, preamble));
  }
  part.verbose = options.verbose && sources.size() == 1;
  const size_t kernels = unit.entry_texts.empty() ? out.entries[0].size() : unit.entry_texts.size();
  if (options.progress) options.progress->stage("compiling C++ kernels", kernels);
  // The work: the shared instances' object, where it misses the cache, and the precompiled
  // header, where a part misses the cache and the header is not built yet; then the parts,
  // heaviest first, once the shared object is there to link (they wait for it: on two cores
  // only when the header is built first). Whatever starts while the header is being built
  // parses its text (about 1.5 s more on two cores, against the 4 s the other core would wait
  // for the header).
  const std::vector<size_t> order =
      unit.entry_texts.empty() ? std::vector<size_t>{0} : heaviest_first(unit, sources.size());
  bool any_missing = false;
  for (size_t p = 0; p < sources.size() && !unit.entry_texts.empty() && !any_missing; ++p)
    any_missing = !jit::object_cached(sources[p], part);
  const size_t shared_tasks =
      !shared_source.empty() && !jit::object_cached(shared_source, shared_options) ? 1 : 0;
  const size_t first_part = shared_tasks + (any_missing ? 1 : 0);
  std::mutex shared_mutex;
  std::condition_variable shared_built;
  bool shared_done = shared_tasks == 0;
  std::vector<std::optional<jit::LoadedObject>> loaded(sources.size());
  std::atomic<size_t> compiled{0};
  const auto start = std::chrono::steady_clock::now();
  jit::run_in_parallel(first_part + sources.size(), 0, [&](size_t task) {
    if (task < shared_tasks) {
      struct Done { // told to the waiting parts however the compile ends
        std::mutex& m;
        std::condition_variable& cv;
        bool& done;
        ~Done() {
          std::lock_guard<std::mutex> lock(m);
          done = true;
          cv.notify_all();
        }
      } done{shared_mutex, shared_built, shared_done};
      jit::compile_object(shared_source, shared_options);
      return;
    }
    if (task < first_part) {
      const jit::PreambleBuild b = jit::build_preamble(unit.preamble, options);
      if (options.verbose && b.built)
        std::fprintf(stderr, "vtc: precompiled the kernel headers in %.2f s\n", b.seconds);
      return;
    }
    {
      std::unique_lock<std::mutex> lock(shared_mutex);
      shared_built.wait(lock, [&] { return shared_done; });
    }
    const size_t p = order[task - first_part];
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
