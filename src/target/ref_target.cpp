// The ref target (see ref_target.h) and the registry of targets.
#include "target/ref_target.h"

#include "mapping/contiguity.h"
#include "target/cpu_target.h"
#include "target/cuda_target.h"
#include "vtc/error.h"

namespace vtc {

std::vector<const Value*> RefTarget::physical_operands(const Kernel& k) const {
  std::vector<const Value*> all(k.inputs.begin(), k.inputs.end());
  all.insert(all.end(), k.outputs.begin(), k.outputs.end());
  return all;
}

int64_t RefTarget::transaction_bytes() const {
  return kCpuCacheLineBytes;
}

const Dialect& RefTarget::dialect() const {
  VTC_FAIL() << "target ref runs the reference interpreter: it generates no code";
}

jit::CompileOptions RefTarget::compile_options(const Options&) const {
  VTC_FAIL() << "target ref runs the reference interpreter: it compiles nothing";
}

std::unique_ptr<LoadedUnit> RefTarget::load(const TranslationUnit&,
                                            const jit::CompileOptions&) const {
  VTC_FAIL() << "target ref runs the reference interpreter: it loads nothing";
}

const Target& target_for(TargetKind kind) {
  static const CpuTarget cpu;
  static const RefTarget ref;
  static const CudaTarget cuda;
  switch (kind) {
  case TargetKind::cpu:
    return cpu;
  case TargetKind::ref:
    return ref;
  case TargetKind::cuda:
    return cuda;
  }
  VTC_FAIL() << "unknown target";
}

} // namespace vtc
