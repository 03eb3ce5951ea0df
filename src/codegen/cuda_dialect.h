// The cuda dialect: CUDA C++ compiled at run time by NVRTC (-default-device). Accessor member
// functions are VTC_HD, accessors have no run forms (a warp's lanes are the vector), memory
// transactions are 32-byte sectors, and every kernel call of a step is a kernel of its own,
// `extern "C" __global__ void __launch_bounds__(block, min_blocks) <name>(void* const* buf,
// void* ws)` over the device table of buffer addresses and the call's zeroed workspace,
// launched with the call's KernelCall::launch. Kernel templates come from kernels/cuda, the
// accessor contract and scalar types from kernels/common.
#pragma once

#include "codegen/dialect.h"

namespace vtc {

class CudaDialect final : public Dialect {
public:
  KernelLibrary library() const override { return KernelLibrary::cuda; }
  std::string preamble(const TranslationUnitFeatures& features) const override;
  std::string function_qualifier() const override { return "VTC_HD"; }
  bool run_forms() const override { return false; }
  bool vector_forms() const override { return true; }
  int64_t transaction_bytes() const override { return 32; }
  bool entry_per_call() const override { return true; }
  std::string entry(const std::string& name, const std::string& body,
                    const KernelCall* call) const override;
  std::string skip_after_failure(const std::string& status) const override;
  KernelCall copy_buffer(const std::string& to, const std::string& from,
                         int64_t bytes) const override;
};

} // namespace vtc
