// The ref target: the reference interpreter runs the whole graph, node by node, on host
// tensors. It compiles nothing; it is the oracle every compiled target is checked against.
#pragma once

#include "target/target.h"

namespace vtc {

class RefTarget final : public Target {
public:
  TargetKind kind() const override { return TargetKind::ref; }
  bool compiles() const override { return false; }
  FuseOptions fuse_options() const override { return {}; }
  void choose_implementations(KernelGraph&, const LibraryChoice&) const override {}
  std::vector<const Value*> physical_operands(const Kernel& k) const override;
  bool generates_kernel(const Kernel&) const override { return false; }
  bool generates_copy(const Node&) const override { return false; }
  int64_t transaction_bytes() const override;
  const Dialect& dialect() const override;
  jit::CompileOptions compile_options(const Options&) const override;
  std::unique_ptr<LoadedUnit> load(const TranslationUnit&,
                                   const jit::CompileOptions&) const override;
};

} // namespace vtc
