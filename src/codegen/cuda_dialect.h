// The cuda dialect: CUDA C++ compiled at run time by NVRTC (-default-device). Accessor member
// functions are VTC_HD, accessors have no run forms (a warp's lanes are the vector), memory
// transactions are 32-byte sectors, and an entry point is `extern "C" __global__ void
// <name>(void* const* buf)` over the device table of buffer addresses. Kernel templates come
// from kernels/cuda, the accessor contract and scalar types from kernels/common.
#pragma once

#include "codegen/dialect.h"

namespace vtc {

class CudaDialect final : public Dialect {
public:
  std::string preamble(const TranslationUnitFeatures& features) const override;
  std::string function_qualifier() const override { return "VTC_HD"; }
  bool run_forms() const override { return false; }
  int64_t transaction_bytes() const override { return 32; }
  std::string entry(const std::string& name, const std::string& body) const override;
  std::string copy_buffer(int to, int from, int64_t bytes) const override;
};

} // namespace vtc
