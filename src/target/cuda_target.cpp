// The cuda target (see cuda_target.h): which kernels kernels/cuda takes, the NVRTC options,
// and a loaded module whose steps launch their kernels on a stream.
#include "target/cuda_target.h"

#include <cctype>
#include <filesystem>
#include <map>

#include "codegen/copy_kernel.h"
#include "codegen/kernel_call.h"
#include "device/cuda_device.h"
#include "device/cuda_driver.h"
#include "device/cuda_objects.h"
#include "target/cuda_unit_compiler.h"
#include "vtc/error.h"

namespace vtc {

namespace {

bool computes_as_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

// The kinds whose cuda kernels compute in f32 take f32, f16 and bf16 operands only.
bool computes_in_float(const Kernel& k) {
  if (!k.anchor) return false;
  switch (k.kind) {
  case KernelKind::gemm:
  case KernelKind::conv:
  case KernelKind::pool:
  case KernelKind::norm:
  case KernelKind::softmax:
  case KernelKind::reduce:
  case KernelKind::attention:
    return true;
  case KernelKind::elementwise:
    return false;
  case KernelKind::other:
    return k.anchor->op.rfind("Reduce", 0) == 0;
  }
  return false;
}

// One kernel of a step: its function, launch, workspace and the step's site table.
struct LoadedLaunch {
  CUfunction function = nullptr;
  kernels::Launch launch;
  device::DeviceBuffer workspace;
  CUdeviceptr site = 0;
};

class CudaLoadedUnit final : public LoadedUnit {
public:
  CudaLoadedUnit(const TranslationUnit& unit, const jit::CompileOptions& options) {
    const device::DeviceInfo& dev = device::cuda_device();
    const jit::NvrtcOptions nvrtc = cuda_nvrtc_options(options, dev.arch(), dev.driver_version);
    const CompiledCudaUnit code = compile_cuda_unit(unit, nvrtc, 0, options.progress);
    std::map<std::string, size_t> module_of;
    for (size_t p = 0; p < code.parts.size(); ++p) {
      modules_.emplace_back(dev, code.parts[p].code, code.parts[p].code_path);
      for (const std::string& e : code.entries[p])
        module_of[e] = p;
    }
    if (!code.parts.empty()) {
      object_.key = code.parts[0].key;
      object_.so_path = code.parts[0].code_path;
      object_.source_path = code.parts[0].source_path;
    }
    object_.cached = code.cached;
    object_.seconds = code.seconds;
    steps_.resize(unit.launches.size());
    sites_.resize(unit.launches.size());
    for (size_t s = 0; s < unit.launches.size(); ++s) {
      if (s < unit.sites.size() && !unit.sites[s].empty()) {
        const std::vector<int64_t>& table = unit.sites[s];
        sites_[s] = device::DeviceBuffer(table.size() * sizeof(int64_t));
        sites_[s].upload(table.data(), table.size() * sizeof(int64_t));
      }
      for (const DeviceLaunch& l : unit.launches[s]) {
        LoadedLaunch loaded;
        device::CudaModule& module = modules_.at(module_of.at(l.entry));
        loaded.function = module.function(l.entry);
        loaded.launch = l.launch;
        if (l.launch.smem_bytes > 48 * 1024)
          module.set_max_dynamic_shared(loaded.function, l.launch.smem_bytes);
        if (l.workspace_bytes > 0) {
          loaded.workspace = device::DeviceBuffer(size_t(l.workspace_bytes));
          loaded.workspace.zero();
        }
        loaded.site = sites_[s].ptr();
        steps_[s].push_back(std::move(loaded));
      }
    }
  }

  void launch(size_t step, const LaunchArgs& args) override {
    for (LoadedLaunch& l : steps_.at(step)) {
      void* table = const_cast<void**>(args.buffers);
      CUdeviceptr ws = l.workspace.ptr();
      void* params[] = {&table, &l.site, &ws};
      device::launch_kernel(l.function, l.launch.grid, l.launch.block, l.launch.smem_bytes,
                            static_cast<CUstream>(args.stream), params,
                            "launching step " + std::to_string(step));
    }
  }

private:
  std::vector<device::CudaModule> modules_; // one per compiled part
  std::vector<std::vector<LoadedLaunch>> steps_;
  std::vector<device::DeviceBuffer> sites_; // per step: its site table in device memory
};

} // namespace

FuseOptions CudaTarget::fuse_options() const {
  FuseOptions options;
  options.attention = cuda_takes_attention;
  return options;
}

void CudaTarget::choose_implementations(KernelGraph& kg, LibraryMode) const {
  for (Kernel& k : kg.kernels)
    k.impl = KernelImpl::vtc_template;
}

bool CudaTarget::generates_kernel(const Kernel& k) const {
  if (!vtc::generates_kernel(k)) return false;
  // Attention: f32, f16 and bf16 operands; prefill within its shared memory.
  if (k.kind == KernelKind::attention) return cuda_takes_attention(*match_attention(*k.anchor));
  if (resamples_by_taps(k)) return false; // kernels/cuda has no tap-table Resize yet
  if (!computes_in_float(k)) return true;
  for (const Value* v : k.anchor->inputs)
    if (v && !computes_as_float(v->type.dtype)) return false;
  for (const Value* v : k.anchor->outputs)
    if (v && !computes_as_float(v->type.dtype)) return false;
  return true;
}

bool CudaTarget::generates_copy(const Node& n) const {
  return vtc::generates_copy(n);
}

jit::CompileOptions CudaTarget::compile_options(const Options& o) const {
  jit::CompileOptions c;
  if (!o.cache_dir.empty()) c.cache_dir = o.cache_dir;
  std::string root = o.source_dir.empty() ? jit::default_source_dir(VTC_SOURCE_DIR) : o.source_dir;
  VTC_CHECK(std::filesystem::exists(std::filesystem::path(root) / "kernels" / "cuda" / "gemm.h"))
      << "kernel templates not found in " << root
      << "/kernels/cuda (Options::source_dir names the vtc source tree)";
  c.include_dirs = {root};
  c.verbose = o.verbose;
  return c;
}

std::unique_ptr<LoadedUnit> CudaTarget::load(const TranslationUnit& unit,
                                             const jit::CompileOptions& options) const {
  return std::make_unique<CudaLoadedUnit>(unit, options);
}

jit::NvrtcOptions cuda_nvrtc_options(const jit::CompileOptions& options, const std::string& arch,
                                     int driver_version) {
  jit::NvrtcOptions o;
  o.arch = arch;
  o.flags.push_back("--fmad=false");
  o.include_dirs = options.include_dirs;
  o.driver_version = driver_version;
  o.cache_dir = options.cache_dir;
  o.verbose = options.verbose;
  return o;
}

CompiledCudaUnit compile_cuda_ahead(const TranslationUnit& unit, const jit::CompileOptions& options,
                                    const std::string& arch, int driver_version) {
  // sm_<major><minor> with an optional feature suffix (sm_90a, sm_100f), as NVRTC spells it.
  bool named = arch.size() >= 5 && arch.rfind("sm_", 0) == 0;
  size_t digits = 0;
  for (size_t i = 3; named && i < arch.size() && std::isdigit(uint8_t(arch[i])); ++i)
    ++digits;
  named = named && digits >= 2 && arch.size() - 3 - digits <= 1 &&
          (arch.size() == 3 + digits || std::isalpha(uint8_t(arch.back())));
  VTC_CHECK(named) << "target cuda: '" << arch
                   << "' is not a GPU architecture (sm_90a for H100 / H200)";
  VTC_CHECK(driver_version > 0) << "target cuda: driver version " << driver_version
                                << " (cuDriverGetVersion's number, e.g. 13000)";
  return compile_cuda_unit(unit, cuda_nvrtc_options(options, arch, driver_version), 0,
                           options.progress);
}

} // namespace vtc
