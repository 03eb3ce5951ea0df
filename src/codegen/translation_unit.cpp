// Steps in order, one shared counter naming the accessor structs, so a program always gives
// the same text (and the same cache key).
#include "codegen/translation_unit.h"

#include "codegen/accessor_emitter.h"
#include "codegen/copy_kernel.h"
#include "codegen/kernel_call.h"
#include "vtc/error.h"

namespace vtc {

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect) {
  TranslationUnit tu;
  TranslationUnitFeatures features;
  std::string defs, bodies;
  int counter = 0;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    std::string body;
    switch (step.kind) {
    case StepKind::kernel: {
      AccessorEmitter g(p.storage, dialect, defs, counter);
      body = kernel_body(*step.kernel, g);
      features.openblas |= step.kernel->impl == KernelImpl::openblas_sgemm;
      break;
    }
    case StepKind::copy: {
      AccessorEmitter g(p.storage, dialect, defs, counter);
      body = copy_body(*step.node, g);
      break;
    }
    case StepKind::constant_output:
      body = dialect.copy_buffer(step.writes.at(0), step.reads.at(0),
                                 int64_t(p.buffers[size_t(step.writes[0])].type.nbytes()));
      break;
    case StepKind::interpreter:
      break;
    }
    if (step.kind == StepKind::interpreter) {
      tu.entries.push_back("");
      continue;
    }
    tu.entries.push_back("vtc_step_" + std::to_string(s));
    bodies += dialect.entry(tu.entries.back(), body);
  }
  if (features.openblas) tu.libraries.push_back("openblas");
  tu.source = dialect.preamble(features) + "\nnamespace {\n" + defs + "} // namespace\n\n" + bodies;
  return tu;
}

} // namespace vtc
