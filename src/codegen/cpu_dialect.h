// The cpu dialect: host C++ compiled by the system compiler into a shared object. Entry
// points are `extern "C" void <name>(void* const* buf, void* packs)` (packs: the executor's
// kernels::ConstantPacks); accessors get run forms for the vectorised kernels of kernels/cpu.
#pragma once

#include "codegen/dialect.h"

namespace vtc {

class CpuDialect final : public Dialect {
public:
  KernelLibrary library() const override { return KernelLibrary::cpu; }
  std::string preamble(const TranslationUnitFeatures& features) const override;
  std::string function_qualifier() const override { return ""; }
  bool run_forms() const override { return true; }
  int64_t transaction_bytes() const override;
  bool entry_per_call() const override { return false; }
  std::string entry(const std::string& name, const std::string& body,
                    const KernelCall* call) const override;
  std::string skip_after_failure(const std::string& status) const override;
  KernelCall copy_buffer(const std::string& to, const std::string& from,
                         int64_t bytes) const override;
};

} // namespace vtc
