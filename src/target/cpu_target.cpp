// The cpu target (see cpu_target.h): its policies gathered from cpu_kernel_choice,
// cpu_conv_pool_rule and the code generator, and a loaded shared object whose entry points
// are plain functions.
#include "target/cpu_target.h"

#include <filesystem>
#include <map>

#include "codegen/copy_kernel.h"
#include "codegen/kernel_call.h"
#include "jit/shared_library.h"
#include "mapping/contiguity.h"
#include "target/cpu_conv_pool_rule.h"
#include "target/cpu_kernel_choice.h"
#include "target/cpu_layouts.h"
#include "target/cpu_task_pool.h"
#include "target/cpu_unit_compiler.h"
#include "vtc/error.h"

namespace vtc {

namespace {

class CpuLoadedUnit final : public LoadedUnit {
public:
  CpuLoadedUnit(const TranslationUnit& unit, const jit::CompileOptions& options)
      : code_(compile_cpu_unit(unit, options)) {
    std::map<std::string, StepFn*> by_name; // steps sharing a kernel share its symbol
    // Every object of the cpu dialect runs on the process's pool; a unit written by hand
    // without its preamble keeps OpenMP.
    for (size_t p = 0; p < code_.parts.size(); ++p)
      if (auto* bind = code_.parts[p].library.find_symbol<void(const kernels::TaskPoolApi*)>(
              "vtc_bind_task_pool"))
        bind(CpuTaskPool::instance().api());
    for (size_t p = 0; p < code_.parts.size(); ++p)
      for (const std::string& e : code_.entries[p])
        by_name[e] = code_.parts[p].library.symbol<StepFn>(e.c_str());
    for (const std::string& e : unit.entries) {
      auto it = by_name.find(e);
      VTC_CHECK(e.empty() || it != by_name.end()) << "no compiled entry point " << e;
      functions_.push_back(e.empty() ? nullptr : it->second);
    }
    sites_ = unit.sites;
    sites_.resize(unit.entries.size());
    object_ = code_.parts.at(0).object;
    object_.cached = code_.cached;
    object_.seconds = code_.seconds;
    object_.objects = int(code_.parts.size());
  }

  void launch(size_t step, const LaunchArgs& args) override {
    functions_.at(step)(args.buffers, sites_[step].data(), args.packs);
  }

private:
  using StepFn = void(void* const*, const int64_t*, void*);
  CompiledCpuUnit code_;
  std::vector<StepFn*> functions_;          // per step; null where the step has no entry point
  std::vector<std::vector<int64_t>> sites_; // per step: the table its entry point reads
};

} // namespace

FuseOptions CpuTarget::fuse_options() const {
  FuseOptions options = cpu_fuse_options();
  options.attention = cpu_takes_attention;
  return options;
}

void CpuTarget::choose_implementations(KernelGraph& kg, const LibraryChoice& choice) const {
  choose_kernel_impls(kg, choice);
}

std::vector<const Value*> CpuTarget::physical_operands(const Kernel& k) const {
  return library_operands(k);
}

bool CpuTarget::generates_kernel(const Kernel& k) const {
  if (!vtc::generates_kernel(k)) return false;
  if (k.kind == KernelKind::attention) return cpu_takes_attention(*match_attention(*k.anchor));
  // The window kernels (kernels/cpu conv.h, pool.h) accumulate in floating point: integer
  // convolutions and poolings (a uint8 MaxPool) run on the interpreter.
  if (k.anchor && (k.kind == KernelKind::conv || k.kind == KernelKind::pool))
    for (const Value* v : k.anchor->inputs)
      if (v && !is_float(v->type.dtype)) return false;
  return true;
}

bool CpuTarget::generates_copy(const Node& n) const {
  return vtc::generates_copy(n);
}

int64_t CpuTarget::transaction_bytes() const {
  return kCpuCacheLineBytes;
}

void CpuTarget::choose_layouts(Program& p) const {
  choose_cpu_channels_last(p);
}

jit::CompileOptions CpuTarget::compile_options(const Options& o) const {
  jit::CompileOptions c;
  if (!o.cache_dir.empty()) c.cache_dir = o.cache_dir;
  std::string root = o.source_dir.empty() ? jit::default_source_dir(VTC_SOURCE_DIR) : o.source_dir;
  std::filesystem::path kernels = std::filesystem::path(root) / "kernels" / "cpu";
  VTC_CHECK(std::filesystem::exists(kernels / "accessor.h"))
      << "kernel templates not found in " << kernels.string()
      << " (Options::source_dir names the vtc source tree)";
  c.include_dirs = {kernels.string(), root};
  c.prebuilt_dir = jit::default_prebuilt_dir(VTC_PREBUILT_DIR);
  c.verbose = o.verbose;
  c.sanitize = c.sanitize || o.sanitize;
  return c;
}

std::unique_ptr<LoadedUnit> CpuTarget::load(const TranslationUnit& unit,
                                            const jit::CompileOptions& options) const {
  return std::make_unique<CpuLoadedUnit>(unit, options);
}

} // namespace vtc
