// The cuda target (see cuda_target.h): which kernels kernels/cuda takes, the NVRTC options,
// and a loaded module whose steps launch their kernels on a stream.
#include "target/cuda_target.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "codegen/copy_kernel.h"
#include "codegen/kernel_call.h"
#include "device/cublaslt_conv.h"
#include "device/cuda_device.h"
#include "device/cuda_driver.h"
#include "device/cuda_objects.h"
#include "device/cudnn_conv.h"
#include "kernels/cuda/conv_direct.h"
#include "kernels/cuda/pointwise_tc.h"
#include "passes/merge_matmuls.h"
#include "target/cuda_layouts.h"
#include "target/cuda_unit_compiler.h"
#include "target/shared_workspace.h"
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

// One kernel of a step: its function, launch, workspace (an offset into the unit's shared
// workspace, -1 for none) and the step's site table; or a library convolution (`conv`, the index
// of its plan) reading buffers `x` and `w` of the host table into buffer `y` or, without one,
// the unit's scratch, which the step's next kernel gets as its workspace.
struct LoadedLaunch {
  CUfunction function = nullptr;
  kernels::Launch launch;
  int64_t workspace = -1;
  CUdeviceptr site = 0;
  int conv = -1;
  int x = -1, w = -1;          // a library call's buffers; x -1: it reads the staging buffer
  int y = -1;                  // where the raw product lies (LibraryConvCall::y_buffer)
  bool reads_scratch = false;  // an epilogue: its ws is the raw product
  bool writes_staging = false; // a prologue: its ws is the staging buffer
};

// A library convolution's plan, made once per distinct shape and library of a unit.
struct ConvPlans {
  std::vector<std::unique_ptr<device::ConvPlan>> plans;
  std::map<std::string, int> by_shape;

  int plan(const LibraryConvCall& call) {
    const LibraryConvShape& s = call.conv;
    const kernels::Conv2dShape& c = s.shape;
    const bool cublaslt = call.library == KernelImpl::cublaslt_conv;
    std::string key = std::to_string(int(s.dtype)) + (cublaslt ? ",cublaslt" : ",cudnn") +
                      (call.channels_last ? ",nhwc" : ",nchw") + (call.reads_nhwc() ? ",held" : "");
    for (int64_t v : {c.n, c.c_in, c.h, c.w, c.c_out, c.h_out, c.w_out, c.kh, c.kw, c.groups,
                      c.stride_h, c.stride_w, c.dil_h, c.dil_w, c.pad_top, c.pad_left})
      key += "," + std::to_string(v);
    auto [it, fresh] = by_shape.emplace(key, int(plans.size()));
    if (fresh) {
      if (cublaslt)
        plans.push_back(std::make_unique<device::CublasLtConv>(c, s.dtype));
      else
        plans.push_back(
            std::make_unique<device::CudnnConv>(c, s.dtype, call.channels_last, call.reads_nhwc()));
    }
    return it->second;
  }
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
    size_t scratch_bytes = 0, conv_workspace_bytes = 0, staging_bytes = 0;
    std::vector<WorkspaceNeed> needs;
    std::vector<std::pair<size_t, size_t>> needed_by; // (step, launch) of each need
    for (size_t s = 0; s < unit.launches.size(); ++s) {
      if (s < unit.sites.size() && !unit.sites[s].empty()) {
        const std::vector<int64_t>& table = unit.sites[s];
        sites_[s] = device::DeviceBuffer(table.size() * sizeof(int64_t));
        sites_[s].upload(table.data(), table.size() * sizeof(int64_t));
      }
      bool after_conv = false, staged = false;
      int product = -1; // the buffer of the raw product the step's epilogue reads; -1 scratch
      for (const DeviceLaunch& l : unit.launches[s]) {
        LoadedLaunch loaded;
        if (l.library_conv) {
          const LibraryConvCall& call = *l.library_conv;
          VTC_CHECK(call.input_staged == std::exchange(staged, false))
              << "step " << s << ": a library convolution's input staged "
              << (call.input_staged ? "by no prologue" : "but not read from the staging buffer");
          if (call.input_staged) {
            const kernels::Conv2dShape& c = call.conv.shape;
            staging_bytes = std::max(staging_bytes, size_t(c.n * c.c_in * c.h * c.w) *
                                                        dtype_size(call.conv.dtype));
          }
          loaded.conv = conv_plans_.plan(call);
          loaded.x = call.x_buffer;
          loaded.w = call.w_buffer;
          loaded.y = product = call.y_buffer;
          const device::ConvPlan& plan = *conv_plans_.plans[size_t(loaded.conv)];
          if (call.y_buffer < 0)
            scratch_bytes = std::max(scratch_bytes, size_t(call.conv.output_elements()) *
                                                        dtype_size(call.conv.dtype));
          conv_workspace_bytes = std::max(conv_workspace_bytes, plan.workspace_bytes());
          steps_[s].push_back(std::move(loaded));
          after_conv = true;
          continue;
        }
        loaded.reads_scratch = std::exchange(after_conv, false);
        if (loaded.reads_scratch) loaded.y = product;
        loaded.writes_staging = l.writes_staging;
        staged = l.writes_staging;
        device::CudaModule& module = modules_.at(module_of.at(l.entry));
        loaded.function = module.function(l.entry);
        loaded.launch = l.launch;
        if (l.launch.smem_bytes > 48 * 1024)
          module.set_max_dynamic_shared(loaded.function, l.launch.smem_bytes);
        loaded.site = sites_[s].ptr();
        steps_[s].push_back(std::move(loaded));
        if (l.workspace_bytes > 0) {
          needs.push_back({l.workspace_bytes, l.workspace_partial_bytes});
          needed_by.emplace_back(s, steps_[s].size() - 1);
        }
      }
      VTC_CHECK(!after_conv) << "step " << s << ": a library convolution without its epilogue";
    }
    const SharedWorkspace shared = share_workspaces(needs);
    for (size_t i = 0; i < needs.size(); ++i)
      steps_[needed_by[i].first][needed_by[i].second].workspace = shared.offsets[i];
    workspace_ = device::DeviceBuffer(size_t(shared.bytes));
    workspace_.zero();
    scratch_ = device::DeviceBuffer(scratch_bytes);
    conv_workspace_ = device::DeviceBuffer(conv_workspace_bytes);
    staging_ = device::DeviceBuffer(staging_bytes);
  }

  std::vector<int> host_read_buffers(size_t step) const override {
    std::vector<int> ids;
    for (const LoadedLaunch& l : steps_.at(step))
      if (l.conv >= 0) {
        if (l.x >= 0) ids.push_back(l.x);
        ids.push_back(l.w);
        if (l.y >= 0) ids.push_back(l.y); // never bound: LibraryConvCall::y_buffer
      }
    return ids;
  }

  void prepare_constants(const uint64_t* host_buffers, void* stream) override {
    for (const std::vector<LoadedLaunch>& step : steps_)
      for (const LoadedLaunch& l : step)
        if (l.conv >= 0)
          conv_plans_.plans[size_t(l.conv)]->prepare_weights(static_cast<CUstream>(stream),
                                                             host_buffers[l.w]);
  }

  std::vector<std::pair<std::string, int64_t>> workspace_parts() const override {
    size_t prepared = 0;
    for (const std::unique_ptr<device::ConvPlan>& plan : conv_plans_.plans)
      prepared += plan->prepared_bytes();
    return {{"split-K and split-KV partial sums", int64_t(workspace_.size())},
            {"library products", int64_t(scratch_.size())},
            {"library workspace", int64_t(conv_workspace_.size())},
            {"library staged inputs", int64_t(staging_.size())},
            {"library prepared weights", int64_t(prepared)}};
  }

  void launch(size_t step, const LaunchArgs& args) override {
    for (LoadedLaunch& l : steps_.at(step)) {
      if (l.conv >= 0) {
        VTC_CHECK(args.host_buffers)
            << "step " << step << ": a library call without the host table";
        conv_plans_.plans[size_t(l.conv)]->run(
            static_cast<CUstream>(args.stream), l.x >= 0 ? args.host_buffers[l.x] : staging_.ptr(),
            args.host_buffers[l.w], product(l, args), conv_workspace_.ptr());
        continue;
      }
      void* table = const_cast<void**>(args.buffers);
      CUdeviceptr ws = l.reads_scratch    ? product(l, args)
                       : l.writes_staging ? staging_.ptr()
                       : l.workspace >= 0 ? workspace_.ptr() + CUdeviceptr(l.workspace)
                                          : CUdeviceptr(0);
      void* params[] = {&table, &l.site, &ws};
      device::launch_kernel(l.function, l.launch.grid, l.launch.block, l.launch.smem_bytes,
                            static_cast<CUstream>(args.stream), params,
                            "launching step " + std::to_string(step), overlaps(l.launch));
    }
  }

private:
  // Where a library convolution writes its raw product and its epilogue reads it: the output's
  // own buffer where the code generator gave one, else the scratch.
  CUdeviceptr product(const LoadedLaunch& l, const LaunchArgs& args) const {
    if (l.y < 0) return scratch_.ptr();
    VTC_CHECK(args.host_buffers) << "a library convolution's product without the host table";
    return CUdeviceptr(args.host_buffers[l.y]);
  }

  // Generated kernels may overlap the one before them (programmatic dependent launch: each
  // waits for it first, cuda::await_previous_kernel). Off unless VTC_CUDA_OVERLAP says: "1"
  // every kernel, "small" kernels of fewer blocks than the device has multiprocessors. Measured
  // on the H200 (kernels/cuda/NOTES.md): ShuffleNet V2 b1 5 % faster with every kernel
  // overlapped, EfficientViT b16 9 % and the Llama-3 layer 6 % slower (blocks of a one-wave
  // kernel placed early onto the few multiprocessors with room).
  enum class Overlap { none, small, all };
  const Overlap overlap_ = overlap_mode();
  static Overlap overlap_mode() {
    const char* v = std::getenv("VTC_CUDA_OVERLAP");
    const std::string s = v ? v : "";
    return s == "1" ? Overlap::all : s == "small" ? Overlap::small : Overlap::none;
  }
  bool overlaps(const kernels::Launch& l) const {
    if (overlap_ == Overlap::small)
      return uint64_t(l.grid[0]) * l.grid[1] * l.grid[2] < uint64_t(device::cuda_device().sm_count);
    return overlap_ == Overlap::all;
  }

  std::vector<device::CudaModule> modules_; // one per compiled part
  std::vector<std::vector<LoadedLaunch>> steps_;
  std::vector<device::DeviceBuffer> sites_; // per step: its site table in device memory
  ConvPlans conv_plans_;
  // Shared by every library convolution (steps run one after another on the stream): the raw
  // product its epilogue reads, the library's workspace, and the input its prologue stages.
  device::DeviceBuffer scratch_, conv_workspace_, staging_;
  // Every generated kernel's split-K or split-KV workspace (share_workspaces).
  device::DeviceBuffer workspace_;
};

} // namespace

FuseOptions CudaTarget::fuse_options() const {
  FuseOptions options;
  options.attention = cuda_takes_attention;
  return options;
}

namespace {

// Whether v is a buffer the caller binds (a model input or output): cuDNN takes its operands'
// addresses when queued, and a replayed CUDA graph would keep them, while vtc's kernels read
// addresses from the buffer table each run. A library convolution reading one as its weights,
// or as an input it does not stage through library_prologue_nhwc (channels-last cuDNN stages
// every input not held NHWC), stays on vtc's kernel in every library mode. (Launched outside
// the graphs instead, C3k2 at batch 1 with rotated inputs took 0.217 ms against 0.139 on vtc's
// kernel inside them, and EfficientViT with rotated inputs stopped with an illegal address.)
bool bound(const Value* v) {
  return v->is_graph_input || v->is_graph_output;
}

// Whether cuDNN runs `s` channels-last, its input staged (or held) NHWC by generated kernels.
bool cudnn_stages_input(const LibraryConvShape& s, const ConvLibraries& libraries) {
  return libraries.cudnn && prefer_cudnn_conv(s) && cudnn_channels_last(s.shape);
}

} // namespace

void CudaTarget::choose_implementations(KernelGraph& kg, const LibraryChoice& choice) const {
  VTC_CHECK(!choice.uses(LibraryMode::always) || device::cudnn_available())
      << "library mode 'always' on cuda: " << device::cudnn_unavailable_reason();
  ConvLibraries available;
  available.cudnn = device::cudnn_available();
  available.cublaslt = device::cublaslt_available() && pointwise_on_cublaslt();
  for (Kernel& k : kg.kernels) {
    k.impl = KernelImpl::vtc_template;
    const LibraryMode mode = choice.of(k);
    const ConvLibraries libraries =
        mode == LibraryMode::never ? ConvLibraries{false, false} : available;
    if (!libraries.cudnn || !generates_kernel(k)) continue;
    std::optional<LibraryConvShape> form = library_conv_form(k);
    if (!form || bound(k.anchor->inputs[1])) continue;
    if (bound(k.anchor->inputs[0])) {
      if (cudnn_stages_input(*form, libraries)) k.impl = KernelImpl::cudnn_conv;
      continue;
    }
    if (mode == LibraryMode::always)
      k.impl = libraries.cublaslt && device::cublaslt_conv_fits(form->shape)
                   ? KernelImpl::cublaslt_conv
                   : KernelImpl::cudnn_conv;
    else
      k.impl = preferred_conv_impl(*form, libraries,
                                   kg.producer_movement(k.anchor->inputs[0]) != nullptr);
  }
}

namespace {

// Which sibling products the cuda target merges: those of one row (decode at batch 1: gemv
// streams the merged weights at the rate of the largest, and each product saved is a launch,
// a ramp and a split-K tail) and, at more rows, those whose weights are at most 64 MiB
// (Gemma-2's q, k and v projections, 29 and 15 MB at full size; the MLP's gate and up, 103-117
// MB, are faster apart on gemv_tc at 16 rows). Measured on the H200 (kernels/cuda/NOTES.md,
// "Sibling products merged again"). $VTC_CUDA_MERGE_PRODUCTS: "none", "all", or the size limit
// in MiB for products of more than one row.
bool cuda_merges(const Node& n) {
  const char* v = std::getenv("VTC_CUDA_MERGE_PRODUCTS");
  const std::string mode = v ? v : "";
  if (mode == "none") return false;
  if (mode == "all") return true;
  const double limit_mib = mode.empty() ? 64.0 : std::atof(mode.c_str());
  const TensorType& a = n.inputs[0]->type;
  const int64_t k = a.shape.empty() ? 1 : a.shape.back();
  const int64_t rows = k > 0 ? a.numel() / k : 0;
  return rows == 1 || double(n.inputs[1]->type.nbytes()) <= limit_mib * double(int64_t(1) << 20);
}

} // namespace

void CudaTarget::prepare_graph(Graph& g) const {
  merge_sibling_matmuls(g, cuda_merges);
}

void CudaTarget::choose_layouts(Program& p) const {
  choose_channels_last(p);
}

double CudaTarget::peak_slack() const {
  // Measured on the H200 (vtc bench greedy, f16, torch-exported models, slack 0 against 0.15 in
  // one run): C3k2 b16 0.713 -> 0.698 ms (cv1 writing its Split's pieces, arena 209.7 -> 235.9
  // MB); YOLO11n b1 and b16 and EfficientViT b16 unchanged within 0.3 %. Device memory is
  // plentiful beside the peers' peaks (bench/results), so a little of it buys the time.
  // $VTC_PEAK_SLACK overrides the fraction (0: the arena never rises).
  const char* v = std::getenv("VTC_PEAK_SLACK");
  return v && *v ? std::max(0.0, std::atof(v)) : kCudaPeakSlack;
}

std::vector<const Value*> CudaTarget::physical_operands(const Kernel& k) const {
  if (!library_conv_impl(k.impl)) return {};
  // Channels-last cuDNN reads its input through library_prologue_nhwc, which takes any mapping.
  const std::optional<LibraryConvShape> form = library_conv_form(k);
  if (k.impl == KernelImpl::cudnn_conv && form && cudnn_channels_last(form->shape))
    return {k.anchor->inputs[1]};
  return {k.anchor->inputs[0], k.anchor->inputs[1]};
}

bool pointwise_on_cublaslt() {
  const char* v = std::getenv("VTC_CUDA_POINTWISE");
  return !(v && std::string(v) == "vtc");
}

KernelImpl preferred_conv_impl(const LibraryConvShape& s, ConvLibraries libraries,
                               bool input_moved) {
  // Measured on the H200 (kernels/cuda/NOTES.md, "Pointwise convolutions on cuBLASLt"): at
  // batch 16, cuBLASLt's product and the epilogue pass took 0.144 ms against gemm_tc's 0.190
  // for EfficientViT's largest pointwise convolution (EfficientViT b16 3.535 -> 3.360 ms); but
  // where the input is a Concat, Split or shuffle greedy leaves virtual, the copy the library
  // needs cost more than it saved (C3k2 b16 0.739 -> 0.773 ms, YOLO11n b16 1.88 -> 1.93).
  // Few input channels over many pixels: pointwise_tc streams the input once and stores the
  // output from its accumulators (H100, EfficientViT b16's 16 -> 64 channels over 256^2
  // pixels: 0.126 ms in the model against cuBLASLt's 0.167).
  if (kernels::pointwise_tc_takes(s.shape) && (s.dtype == DType::f16 || s.dtype == DType::bf16))
    return KernelImpl::vtc_template;
  if (libraries.cublaslt && !input_moved && device::cublaslt_conv_fits(s.shape))
    return KernelImpl::cublaslt_conv;
  if (libraries.cudnn && prefer_cudnn_conv(s)) return KernelImpl::cudnn_conv;
  return KernelImpl::vtc_template;
}

bool prefer_cudnn_conv(const LibraryConvShape& s) {
  // Measured on the H200 (vtc bench greedy, YOLO11 and its C3k2 block, f16): vtc's implicit
  // GEMM gathers a window's taps element by element, cuDNN is faster on every window larger
  // than 1x1 (C3k2 b16 1.56 -> 1.12 ms, YOLO11n b16 3.09 -> 2.63). A pointwise convolution is
  // a GEMM over rows, which the tensor-core GEMM reads whole: faster than cuDNN's NCHW
  // kernels on large planes (C3k2 b16, 409600 pixels: 1.12 ms against 2.42 with cuDNN), slower
  // on small ones (YOLO11n b1, at most 25600 pixels: 1.00 ms against 0.73).
  // A window of few taps (a stem over 3 channels) runs on conv2d_direct: cuDNN's NCHW kernels
  // took 0.25-0.33 ms for the stems of EfficientViT and YOLO11n at batch 16 (about 250 GB/s).
  const kernels::Conv2dShape& c = s.shape;
  if (kernels::conv2d_direct_fits(c)) return false;
  return c.kh * c.kw > 1 || c.n * c.h_out * c.w_out <= kCudnnPointwiseMaxPixels;
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
