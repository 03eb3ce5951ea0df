// Steps in order, one shared counter naming the accessor structs, so a program always gives
// the same text (and the same cache key).
#include "codegen/translation_unit.h"

#include "codegen/accessor_emitter.h"
#include "codegen/copy_kernel.h"
#include "codegen/index_check_call.h"
#include "codegen/kernel_call.h"
#include "vtc/error.h"

namespace vtc {

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect) {
  TranslationUnit tu;
  TranslationUnitFeatures features;
  std::string defs, bodies;
  int counter = 0;
  tu.launches.resize(p.steps.size());
  bool after_check = false; // a check ran before this step: entries return when it failed
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    std::vector<KernelCall> calls;
    switch (step.kind) {
    case StepKind::kernel: {
      VTC_CHECK(step.kernel) << "step " << s << " '" << step.name
                             << "' is a kernel step without its kernel";
      AccessorEmitter g(p.storage, dialect, defs, counter);
      calls = kernel_calls(*step.kernel, g);
      features.openblas |= step.kernel->impl == KernelImpl::openblas_sgemm;
      break;
    }
    case StepKind::copy: {
      VTC_CHECK(step.node) << "step " << s << " '" << step.name
                           << "' is a copy step without its node";
      AccessorEmitter g(p.storage, dialect, defs, counter);
      calls = copy_calls(*step.node, g);
      break;
    }
    case StepKind::constant_output:
      calls.push_back(
          dialect.copy_buffer(step.writes.at(0), step.reads.at(0),
                              int64_t(p.buffers[size_t(step.writes[0])].type.nbytes())));
      break;
    case StepKind::interpreter:
      break;
    case StepKind::index_check: {
      AccessorEmitter g(p.storage, dialect, defs, counter);
      calls.push_back(index_check_call(step, s, p.status_slot(), g));
      break;
    }
    }
    const std::string skip = after_check ? dialect.skip_after_failure(p.status_slot()) : "";
    after_check |= step.kind == StepKind::index_check;
    if (step.kind == StepKind::interpreter) {
      tu.entries.push_back("");
      continue;
    }
    tu.entries.push_back("vtc_step_" + std::to_string(s));
    if (!dialect.entry_per_call()) {
      std::string body = skip;
      for (const KernelCall& call : calls)
        body += call.render();
      bodies += dialect.entry(tu.entries.back(), body, nullptr);
      continue;
    }
    for (size_t c = 0; c < calls.size(); ++c) {
      const KernelCall& call = calls[c];
      VTC_CHECK(call.launch) << "step " << s << " '" << step.name << "': call " << call.function
                             << " has no launch";
      DeviceLaunch launch{tu.entries.back() + "_" + std::to_string(c), *call.launch,
                          call.workspace_bytes};
      tu.entry_texts.push_back(dialect.entry(launch.entry, skip + call.render(), &call));
      bodies += tu.entry_texts.back();
      tu.launches[s].push_back(std::move(launch));
    }
  }
  if (features.openblas) tu.libraries.push_back("openblas");
  tu.header = dialect.preamble(features) + "\nnamespace {\n" + defs + "} // namespace\n\n";
  tu.source = tu.header + bodies;
  return tu;
}

} // namespace vtc
