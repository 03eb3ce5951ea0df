// The cuda target: CUDA C++ (the cuda dialect) compiled by NVRTC for the GPU's architecture
// (sm_90a on Hopper) into a cubin cached on disk, loaded into the device's primary context;
// every kernel call of a step is a kernel launched with its grid, block and shared memory on
// the executor's stream. Kernels from kernels/cuda: tensor-core GEMMs for 16-bit floats, the
// f32 GEMM, split-K gemv for decode-sized products, row kernels, pooling, convolutions as
// implicit GEMMs, the generic copy; cuDNN for 16-bit convolutions and cuBLASLt for pointwise
// ones where they load and are preferred (preferred_conv_impl; Options::library), an epilogue
// kernel storing the product. No fused max pooling; kernels of other dtypes (f64, integer
// arithmetic) run on the reference interpreter. Buffers live in device memory (DeviceExecutor);
// 32-byte memory transactions.
#pragma once

#include "codegen/cuda_dialect.h"
#include "codegen/library_conv.h"
#include "jit/nvrtc_compiler.h"
#include "target/cuda_unit_compiler.h"
#include "target/target.h"

namespace vtc {

// How far greedy may raise the arena above the lowest it has seen on cuda (Target::peak_slack).
inline constexpr double kCudaPeakSlack = 0.15;

class CudaTarget final : public Target {
public:
  TargetKind kind() const override { return TargetKind::cuda; }
  bool compiles() const override { return true; }
  FuseOptions fuse_options() const override;
  void choose_implementations(KernelGraph& kg, const LibraryChoice& choice) const override;
  // A library convolution's input and weights.
  std::vector<const Value*> physical_operands(const Kernel& k) const override;
  bool generates_kernel(const Kernel& k) const override;
  bool generates_copy(const Node& n) const override;
  int64_t transaction_bytes() const override { return dialect_.transaction_bytes(); }
  double peak_slack() const override;
  // Sibling products merged into one where that pays (cuda_merges).
  void prepare_graph(Graph& g) const override;
  // choose_channels_last (cuda_layouts.h).
  void choose_layouts(Program& p) const override;
  bool device_memory() const override { return true; }
  const Dialect& dialect() const override { return dialect_; }
  jit::CompileOptions compile_options(const Options& options) const override;
  // Compiles `unit` for the current device (NVRTC, cached) and loads it; throws vtc::Error
  // when there is no GPU or driver, the driver is older than the toolkit, or NVRTC fails.
  std::unique_ptr<LoadedUnit> load(const TranslationUnit& unit,
                                   const jit::CompileOptions& options) const override;

private:
  CudaDialect dialect_;
};

// The NVRTC options a translation unit is compiled with for architecture `arch` ("sm_90a")
// under driver `driver_version` (0: unknown): include directories, cache and verbosity from
// `options`, the default flags with fused multiply-adds only where a kernel writes them
// (--fmad=false, as the cpu target's -ffp-contract=off).
// Whether cuDNN is preferred to vtc's kernels for a convolution it can compute (library mode
// 'auto'): every window larger than 1x1, and pointwise convolutions of at most
// kCudnnPointwiseMaxPixels output pixels (images times plane).
inline constexpr int64_t kCudnnPointwiseMaxPixels = 32768;
bool prefer_cudnn_conv(const LibraryConvShape& s);

// The libraries that load (and are allowed) for convolutions.
struct ConvLibraries {
  bool cudnn = false, cublaslt = false;
};
// Who computes a convolution a library can (library mode 'auto'): cuBLASLt for a pointwise
// convolution it runs (device::cublaslt_conv_fits) whose input is computed by a kernel, not by
// a data-movement op (`input_moved`: greedy could leave such an input virtual, and the library
// needs it copied), else cuDNN where prefer_cudnn_conv, else vtc's kernels.
KernelImpl preferred_conv_impl(const LibraryConvShape& s, ConvLibraries libraries,
                               bool input_moved = false);
// Whether pointwise convolutions may go to cuBLASLt: yes unless $VTC_CUDA_POINTWISE is "vtc"
// (then they are chosen as before cuBLASLt: cuDNN on small planes, gemm_tc on large ones), so
// that one binary times both.
bool pointwise_on_cublaslt();

jit::NvrtcOptions cuda_nvrtc_options(const jit::CompileOptions& options, const std::string& arch,
                                     int driver_version);

// Compiles `unit` into the cache for a GPU of architecture `arch` ("sm_90a") under a driver of
// `driver_version` (cuDriverGetVersion's number, 13000 for CUDA 13.0), with no GPU needed:
// the cubins a DeviceExecutor made later on such a machine, with the same options, finds there.
// Throws vtc::Error for an architecture NVRTC does not name, or what NVRTC throws.
CompiledCudaUnit compile_cuda_ahead(const TranslationUnit& unit, const jit::CompileOptions& options,
                                    const std::string& arch, int driver_version);

} // namespace vtc
