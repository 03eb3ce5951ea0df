// Parts of a cpu translation unit compiled on a pool of threads (see cpu_unit_compiler.h).
#include "target/cpu_unit_compiler.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "codegen/cpu_dialect.h"
#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/parallel.h"
#include "jit/precompiled_header.h"
#include "jit/progress.h"
#include "kernels/cpu/column_tail.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// Template instances that most parts would each compile again otherwise: the GEMM engines of
// gemm_core.h under the implicit-GEMM and padded-plane convolutions and the matrix products,
// and their A packers (a third of YOLO11n's generated code, one copy per part). They are
// compiled once, into a shared object of their own (a cache entry like a part), which every
// part declares (`extern template`) and links. The register tiles are the host's (gemm_core.h's
// GemmTile, its one-vector form for narrow planes, conv.h's PaddedPlaneTile), AVX-512's or
// AVX2's (6 rows, where the padded-plane tile is the engine's), each with every column tail
// column_tail_width() gives its two-vector tile (planes of 7 x 7, 14 x 14, 20 x 20, ...: an
// engine of its own, about 1.5 s of a part's compile on two cores where it was compiled
// there); elsewhere the list is empty. Other instances (tails of the one-vector tile, which
// only planes of 2 to 4 positions without constant weights take) stay in the parts that use
// them.
constexpr const char* kEngineSignature =
    "(const vtc::kernels::GemmProblemRef<float>&, int64_t, int64_t, int64_t, int64_t, const "
    "vtc::kernels::PrepackedOperands<float>&)";
constexpr const char* kPackerSignature =
    "(const void*, void (*)(const void*, int64_t, int64_t, int64_t, int64_t, float*), int64_t, "
    "int64_t, int64_t, float*)";

struct InstanceSet {
  const char* condition;                // the preprocessor test of the host's instruction set
  std::vector<std::string> engines;     // gemm_engine<float, ...> arguments
  std::vector<std::string> packer_rows; // pack_a_panels<float, ...> arguments
};

// The engines of a host whose GemmTile is `mr` rows by two vectors of `width` floats: the
// two-vector tile with every column tail it may take (column_tail.h), then the one-vector tile.
std::vector<std::string> engines_of(int mr, int width) {
  const std::string rows = std::to_string(mr) + ", ";
  std::vector<std::string> engines{rows + "2, 0"};
  std::set<int> tails;
  for (int64_t n = 1; n <= 2 * width; ++n) // the last panel's columns repeat with period 2W
    if (const int t = kernels::column_tail_width_of(width, 2, n)) tails.insert(t);
  for (int t : tails)
    engines.push_back(rows + "2, " + std::to_string(t));
  engines.push_back(rows + "1, 0");
  return engines;
}

const std::vector<InstanceSet>& instance_sets() {
  static const std::vector<InstanceSet> sets = [] {
    std::vector<InstanceSet> s = {
        {"defined(__AVX512F__)", engines_of(12, 16), {"12", "8"}},
        {"defined(__AVX2__) && defined(__FMA__)", engines_of(6, 8), {"6"}},
    };
    s[0].engines.push_back("8, 3, 0"); // conv.h's PaddedPlaneTile
    return s;
  }();
  return sets;
}

// The instances as explicit instantiation definitions (`keyword` "template") or declarations
// ("extern template"), each set under its instruction set's test.
std::string shared_instances(const std::string& keyword) {
  std::string out;
  for (const InstanceSet& set : instance_sets()) {
    out += std::string(out.empty() ? "#if " : "#elif ") + set.condition + "\n";
    for (const std::string& args : set.engines)
      out += keyword + " void vtc::kernels::gemm_engine<float, " + args + ">" + kEngineSignature +
             ";\n";
    for (const std::string& rows : set.packer_rows)
      out += keyword + " void vtc::kernels::pack_a_panels<float, " + rows + ">" + kPackerSignature +
             ";\n";
  }
  return out + "#endif\n";
}

// The object of the shared instances for parts starting with `preamble_line`.
std::string shared_instances_source(const std::string& preamble_line) {
  return preamble_line + shared_instances("template");
}

// How long entry k takes to compile relative to the others (TranslationUnit::entry_weights).
int entry_weight(const TranslationUnit& unit, size_t k) {
  return k < unit.entry_weights.size() ? unit.entry_weights[k] : 1;
}

// The order parts are compiled in: the heaviest first (by their entries' weights), so that the
// last part to start is a light one and no core waits long on another at the end.
std::vector<size_t> heaviest_first(const TranslationUnit& unit,
                                   const std::vector<std::vector<size_t>>& parts) {
  std::vector<int> weight(parts.size(), 0);
  for (size_t p = 0; p < parts.size(); ++p)
    for (size_t k : parts[p])
      weight[p] += entry_weight(unit, k);
  std::vector<size_t> order(parts.size());
  for (size_t p = 0; p < parts.size(); ++p)
    order[p] = p;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  return order;
}

// Where each kernel of a unit was compiled before. A kernel's key is the cache key of its own
// part source (the preamble, its definitions, its entry point) under the parts' options; the
// file <cache_dir>/<key>.in names the cached object of the part that holds it, written once
// that object is in place. A kernel whose file is missing, or names no valid object, is missing.
struct KernelIndex {
  std::vector<std::string> keys;                    // per entry point
  std::map<std::string, std::vector<size_t>> found; // object key -> its entry points here
  std::vector<size_t> missing;                      // entry points to compile, in unit order
};

std::filesystem::path index_path(const std::string& key, const jit::CompileOptions& options) {
  return std::filesystem::path(options.cache_dir) / (key + ".in");
}

KernelIndex find_compiled_kernels(const TranslationUnit& unit, const std::string& preamble,
                                  const jit::CompileOptions& options) {
  KernelIndex index;
  const std::filesystem::path dir(options.cache_dir);
  for (size_t k = 0; k < unit.entry_texts.size(); ++k) {
    index.keys.push_back(jit::cache_key(part_source(unit, {k}, preamble), options));
    std::string object = jit::read_small_file(index_path(index.keys.back(), options));
    while (!object.empty() && std::isspace(static_cast<unsigned char>(object.back())))
      object.pop_back();
    const bool valid = object.size() == 64 &&
                       object.find_first_not_of("0123456789abcdef") == std::string::npos &&
                       jit::entry_valid(dir / (object + ".so"), dir / (object + ".ok"));
    if (valid)
      index.found[object].push_back(k);
    else
      index.missing.push_back(k);
  }
  return index;
}

// Records that the object `key` holds the kernels `entries`.
void record_compiled_kernels(const KernelIndex& index, const std::vector<size_t>& entries,
                             const std::string& key, const jit::CompileOptions& options) {
  for (size_t k : entries)
    jit::write_atomically(index_path(index.keys.at(k), options), key + "\n");
}

} // namespace

PrebuiltCpuObjects prebuild_cpu_objects(const jit::CompileOptions& options) {
  PrebuiltCpuObjects out;
  const CpuDialect dialect;
  for (bool openblas : {false, true}) {
    if (openblas && !VTC_OPENBLAS) continue;
    TranslationUnitFeatures features;
    features.openblas = openblas;
    const std::string preamble = dialect.preamble(features);
    const jit::PreambleBuild b = jit::build_preamble(preamble, options);
    out.built += b.built ? 1 : 0;
    out.seconds += b.seconds;
    VTC_CHECK(jit::preamble_built(preamble, options))
        << "the kernel headers do not compile into a precompiled header in " << options.cache_dir
        << " (compile a model with --verbose to see the compiler's diagnostics)";
    jit::CompileOptions shared = options;
    if (openblas) shared.libraries.push_back("openblas");
    const jit::CompiledObject o = jit::compile_object(
        shared_instances_source(jit::preamble_include(preamble, options)), shared);
    out.built += o.cached ? 0 : 1;
    out.seconds += o.seconds;
    out.entries += 2;
  }
  return out;
}

std::vector<std::vector<size_t>> cut_into_parts(const TranslationUnit& unit,
                                                const std::vector<size_t>& entries, size_t cores) {
  if (entries.empty()) return {};
  cores = std::max<size_t>(cores, 1);
  const size_t rounds =
      (entries.size() + cores * kMaxKernelsPerCpuPart - 1) / (cores * kMaxKernelsPerCpuPart);
  const size_t count = std::min(entries.size(), cores * rounds);
  auto weight = [&](size_t k) { return entry_weight(unit, k); };
  // The heaviest entries first, each to the lightest part that has room (the first of equals).
  std::vector<size_t> by_weight = entries;
  std::stable_sort(by_weight.begin(), by_weight.end(),
                   [&](size_t a, size_t b) { return weight(a) > weight(b); });
  const size_t room = (entries.size() + count - 1) / count;
  std::vector<std::vector<size_t>> parts(count);
  std::vector<int> load(count, 0);
  for (size_t k : by_weight) {
    size_t best = count;
    for (size_t p = 0; p < count; ++p)
      if (parts[p].size() < room && (best == count || load[p] < load[best])) best = p;
    parts[best].push_back(k);
    load[best] += weight(k);
  }
  for (std::vector<size_t>& p : parts)
    std::sort(p.begin(), p.end());
  return parts;
}

CompiledCpuUnit compile_cpu_unit(const TranslationUnit& unit, const jit::CompileOptions& options) {
  CompiledCpuUnit out;
  if (unit.entry_texts.empty()) { // written by hand: one part, all its entry points
    std::set<std::string> names(unit.entries.begin(), unit.entries.end());
    names.erase("");
    jit::CompileOptions whole = options;
    whole.libraries.insert(whole.libraries.end(), unit.libraries.begin(), unit.libraries.end());
    if (options.progress) options.progress->stage("compiling C++ kernels", int64_t(names.size()));
    out.parts.push_back(jit::compile_and_load(unit.source, whole));
    out.entries.emplace_back(names.begin(), names.end());
    out.cached = out.parts[0].object.cached;
    out.seconds = out.parts[0].object.seconds;
    return out;
  }
  // Parts start with an include of the preamble's precompiled form: its headers are parsed
  // once for every part (and every later unit), not once a part. The header it names is
  // written first: the parts' cache keys cover its content. It is the prebuilt directory's
  // where that holds it (nothing to build), else the cache directory's. Then the declarations
  // of the shared instances, defined by the object that every part links (its path in their
  // keys): the prebuilt one where it matches, else the cache directory's.
  jit::CompileOptions prebuilt = options;
  prebuilt.cache_dir = options.prebuilt_dir;
  const bool header_prebuilt =
      !options.prebuilt_dir.empty() && jit::preamble_built(unit.preamble, prebuilt);
  std::string preamble = jit::preamble_include(unit.preamble, header_prebuilt ? prebuilt : options);
  jit::CompileOptions part = options;
  part.libraries.insert(part.libraries.end(), unit.libraries.begin(), unit.libraries.end());
  part.progress = nullptr; // one line for the unit, counting kernels
  part.verbose = false;
  const jit::CompileOptions shared_options = part;
  std::string shared_source;
  if (!header_prebuilt) jit::write_preamble(unit.preamble, options);
  // A unit of few kernels compiles its own copies of the instances sooner than it would wait
  // for their object (before its first part could start).
  if (unit.entry_texts.size() >= kSharedInstancesMinKernels) {
    shared_source = shared_instances_source(preamble);
    const std::string key = jit::cache_key(shared_source, shared_options);
    jit::CompileOptions prebuilt_shared = shared_options;
    prebuilt_shared.cache_dir = options.prebuilt_dir;
    const bool shared_prebuilt =
        !options.prebuilt_dir.empty() && jit::object_cached(shared_source, prebuilt_shared);
    const std::filesystem::path dir =
        std::filesystem::absolute(shared_prebuilt ? options.prebuilt_dir : options.cache_dir);
    part.link_objects.push_back((dir / (key + ".so")).string());
    preamble += shared_instances("extern template");
    if (shared_prebuilt) shared_source.clear(); // nothing to build
  }

  // The kernels compiled before, by this unit or another, come from the parts that hold them;
  // the others are compiled, in parts cut for this machine's cores.
  const KernelIndex index = find_compiled_kernels(unit, preamble, part);
  const std::vector<std::vector<size_t>> parts =
      cut_into_parts(unit, index.missing, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> sources;
  for (const std::vector<size_t>& entries : parts)
    sources.push_back(part_source(unit, entries, preamble));
  part.verbose = options.verbose && sources.size() == 1;
  if (options.progress && !sources.empty())
    options.progress->stage("compiling C++ kernels", int64_t(index.missing.size()));
  // The work: the shared instances' object, where it misses the cache, and the precompiled
  // header, where a part is to be compiled and the header is not built yet; then the parts,
  // heaviest first, once the shared object is there to link (they wait for it: on two cores
  // only when the header is built first). Whatever starts while the header is being built
  // parses its text (about 1.5 s more on two cores, against the 4 s the other core would wait
  // for the header).
  const std::vector<size_t> order = heaviest_first(unit, parts);
  const size_t shared_tasks =
      !shared_source.empty() && !jit::object_cached(shared_source, shared_options) ? 1 : 0;
  const size_t first_part = shared_tasks + (sources.empty() || header_prebuilt ? 0 : 1);
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
    if (task < first_part) { // the precompiled header, in the cache directory
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
    record_compiled_kernels(index, parts[p], loaded[p]->object.key, part);
    if (options.progress) options.progress->count(int64_t(compiled += parts[p].size()));
  });
  for (size_t p = 0; p < parts.size(); ++p) {
    out.cached = out.cached && loaded[p]->object.cached;
    out.parts.push_back(std::move(*loaded[p]));
    out.entries.emplace_back();
    for (size_t k : parts[p])
      out.entries.back().push_back(unit.entry_names.at(k));
  }
  if (!out.cached)
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The parts compiled before, loaded last: a part whose object does not load any more gives
  // its kernels to a part compiled now.
  std::vector<size_t> reload;
  for (const auto& [key, entries] : index.found) {
    std::optional<jit::LoadedObject> object = jit::load_cached_object(key, part);
    if (!object) {
      reload.insert(reload.end(), entries.begin(), entries.end());
      continue;
    }
    out.parts.push_back(std::move(*object));
    out.entries.emplace_back();
    for (size_t k : entries)
      out.entries.back().push_back(unit.entry_names.at(k));
  }
  if (!reload.empty()) {
    std::sort(reload.begin(), reload.end());
    const auto again = std::chrono::steady_clock::now();
    out.parts.push_back(jit::compile_and_load(part_source(unit, reload, preamble), part));
    record_compiled_kernels(index, reload, out.parts.back().object.key, part);
    out.entries.emplace_back();
    for (size_t k : reload)
      out.entries.back().push_back(unit.entry_names.at(k));
    out.cached = false;
    out.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
  }
  return out;
}

} // namespace vtc
