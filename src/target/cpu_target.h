// The cpu target: host C++ (the cpu dialect) compiled by the system compiler into a shared
// object cached on disk and loaded with dlopen; kernels from kernels/cpu, f32 matrix
// products optionally on OpenBLAS (cpu_kernel_choice.h), a stem convolution's max pooling
// fused into it on AVX-512 hosts (cpu_conv_pool_rule.h), 64-byte cache lines.
#pragma once

#include "codegen/cpu_dialect.h"
#include "target/target.h"

namespace vtc {

class CpuTarget final : public Target {
public:
  TargetKind kind() const override { return TargetKind::cpu; }
  bool compiles() const override { return true; }
  FuseOptions fuse_options() const override;
  void choose_implementations(KernelGraph& kg, const LibraryChoice& choice) const override;
  std::vector<const Value*> physical_operands(const Kernel& k) const override;
  bool generates_kernel(const Kernel& k) const override;
  bool generates_copy(const Node& n) const override;
  int64_t transaction_bytes() const override;
  void choose_layouts(Program& p) const override;
  const Dialect& dialect() const override { return dialect_; }
  jit::CompileOptions compile_options(const Options& options) const override;
  std::unique_ptr<LoadedUnit> load(const TranslationUnit& unit,
                                   const jit::CompileOptions& options) const override;

private:
  CpuDialect dialect_;
};

} // namespace vtc
