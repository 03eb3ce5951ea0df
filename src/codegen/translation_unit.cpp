// Steps in order, each generated on its own (accessor types numbered from 0, buffers and
// integers named through its site table), so that steps whose kernels differ only in their
// buffers give the same text: each distinct text becomes one kernel, its types in a namespace
// of their own, and every step running it passes its own table. A program always gives the
// same text (and cache key), and a deeper stack of identical layers gives the same text too.
// A part of the entry points compiled apart carries only its own kernels' definitions.
#include "codegen/translation_unit.h"

#include <map>
#include <set>

#include "codegen/accessor_emitter.h"
#include "codegen/copy_kernel.h"
#include "codegen/index_check_call.h"
#include "codegen/kernel_call.h"
#include "codegen/site_args.h"
#include "jit/sha256.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// One step's generated text before it is named: its accessor definitions and calls.
struct StepCode {
  std::string defs;
  std::vector<KernelCall> calls;
  std::string skip; // the statement entry points start with after an index check
};

std::string entry_body(const std::string& scope, const StepCode& code, const KernelCall* only) {
  std::string body = "  using namespace " + scope + ";\n" + code.skip;
  if (only) return body + only->render();
  for (const KernelCall& call : code.calls)
    body += call.render();
  return body;
}

// A kernel on the GEMM engine (a matrix product, a convolution) or attention compiles in about
// three times as long as the others (elementwise, normalisation, pooling, copies; -O3, two
// cores).
int compile_weight(const StepInfo& step) {
  if (step.kind != StepKind::kernel) return 1;
  switch (step.kernel->kind) {
  case KernelKind::gemm:
  case KernelKind::conv:
  case KernelKind::attention:
    return 3;
  case KernelKind::pool:
  case KernelKind::norm:
  case KernelKind::softmax:
  case KernelKind::reduce:
  case KernelKind::elementwise:
  case KernelKind::other:
    return 1;
  }
  return 1;
}

// Hex digits of a host kernel's id: 64 bits, no two kernels of a unit share them.
constexpr size_t kKernelIdDigits = 16;

// What a distinct kernel's names end with. Where entry points are compiled in parts on the host,
// the start of its text's SHA-256: the same kernel has the same names in every unit, so a part
// of kernels another strategy or model also runs is the same source and hits the same cache
// entry. On a GPU (kernel names a profiler shows) its number in the unit.
std::string kernel_id(const Dialect& dialect, const std::string& text, int index) {
  if (dialect.entry_per_call()) return std::to_string(index);
  return jit::sha256_hex(text).substr(0, kKernelIdDigits);
}

} // namespace

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect) {
  TranslationUnit tu;
  TranslationUnitFeatures features;
  std::string defs, bodies;
  std::map<std::string, int> kernel_of_text; // canonical text -> distinct kernel
  std::vector<std::string> kernel_ids;       // per distinct kernel, what its names end with
  std::set<std::string> distinct_ids;
  tu.launches.resize(p.steps.size());
  tu.sites.resize(p.steps.size());
  bool after_check = false; // a check ran before this step: entries return when it failed
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    StepCode code;
    SiteArgs site;
    int counter = 0;
    AccessorEmitter g(p.storage, dialect, code.defs, counter, site);
    switch (step.kind) {
    case StepKind::kernel:
      VTC_CHECK(step.kernel) << "step " << s << " '" << step.name
                             << "' is a kernel step without its kernel";
      code.calls = kernel_calls(*step.kernel, g);
      features.openblas |= step.kernel->impl == KernelImpl::openblas_sgemm;
      break;
    case StepKind::copy:
      VTC_CHECK(step.node) << "step " << s << " '" << step.name
                           << "' is a copy step without its node";
      code.calls = copy_calls(*step.node, g);
      break;
    case StepKind::constant_output:
      code.calls.push_back(
          dialect.copy_buffer(site.buffer(step.writes.at(0)), site.buffer(step.reads.at(0)),
                              int64_t(p.buffers[size_t(step.writes[0])].type.nbytes())));
      break;
    case StepKind::interpreter:
      break;
    case StepKind::index_check:
      code.calls.push_back(index_check_call(step, s, p.status_slot(), g));
      break;
    }
    if (after_check) code.skip = dialect.skip_after_failure(site.buffer(p.status_slot()));
    after_check |= step.kind == StepKind::index_check;
    if (step.kind == StepKind::interpreter) {
      tu.entries.push_back("");
      continue;
    }
    for (const KernelCall& call : code.calls)
      VTC_CHECK(!dialect.entry_per_call() || call.launch)
          << "step " << s << " '" << step.name << "': call " << call.function << " has no launch";
    tu.sites[s] = site.values();

    // The text without names decides which kernel the step runs.
    std::string text = code.defs;
    if (dialect.entry_per_call()) {
      for (const KernelCall& call : code.calls)
        if (!call.library_conv) text += dialect.entry("", entry_body("", code, &call), &call);
    } else {
      text += dialect.entry("", entry_body("", code, nullptr), nullptr);
    }
    auto [it, fresh] = kernel_of_text.emplace(text, int(kernel_of_text.size()));
    if (fresh) {
      kernel_ids.push_back(kernel_id(dialect, text, it->second));
      VTC_CHECK(distinct_ids.insert(kernel_ids.back()).second)
          << "step " << s << " '" << step.name << "': two different kernels have the id "
          << kernel_ids.back();
    }
    const std::string name = "vtc_kernel_" + kernel_ids[size_t(it->second)];
    const std::string scope = "vtc_k" + kernel_ids[size_t(it->second)];
    tu.entries.push_back(name);
    if (fresh) {
      tu.kernel_defs.push_back("namespace " + scope + " {\n" + code.defs + "} // namespace " +
                               scope + "\n");
      defs += tu.kernel_defs.back();
    }
    if (!dialect.entry_per_call()) {
      if (fresh) {
        tu.entry_texts.push_back(dialect.entry(name, entry_body(scope, code, nullptr), nullptr));
        tu.entry_names.push_back(name);
        tu.entry_weights.push_back(compile_weight(step));
        tu.entry_kernels.push_back(it->second);
        bodies += tu.entry_texts.back();
      }
      continue;
    }
    for (size_t c = 0; c < code.calls.size(); ++c) {
      const KernelCall& call = code.calls[c];
      if (call.library_conv) {
        tu.launches[s].push_back({"", *call.launch, 0, 0, call.library_conv});
        continue;
      }
      DeviceLaunch launch{name + "_" + std::to_string(c),
                          *call.launch,
                          call.workspace_bytes,
                          call.workspace_partial_bytes,
                          {}};
      launch.writes_staging = call.writes_staging;
      if (fresh) {
        tu.entry_texts.push_back(
            dialect.entry(launch.entry, entry_body(scope, code, &call), &call));
        tu.entry_names.push_back(launch.entry);
        tu.entry_weights.push_back(compile_weight(step));
        tu.entry_kernels.push_back(it->second);
        bodies += tu.entry_texts.back();
      }
      tu.launches[s].push_back(std::move(launch));
    }
  }
  tu.kernels = int(kernel_of_text.size());
  if (features.openblas) tu.libraries.push_back("openblas");
  tu.preamble = dialect.preamble(features);
  tu.header = tu.preamble + "\nnamespace {\n" + defs + "} // namespace\n\n";
  tu.source = tu.header + bodies;
  return tu;
}

std::string part_source(const TranslationUnit& unit, size_t first, size_t end) {
  return part_source(unit, first, end, unit.preamble);
}

std::string part_source(const TranslationUnit& unit, size_t first, size_t end,
                        const std::string& preamble) {
  std::vector<size_t> entries;
  for (size_t k = first; k < end; ++k)
    entries.push_back(k);
  return part_source(unit, entries, preamble);
}

std::string part_source(const TranslationUnit& unit, const std::vector<size_t>& entries,
                        const std::string& preamble) {
  VTC_CHECK(unit.entry_kernels.size() == unit.entry_texts.size())
      << "part_source: " << unit.entry_kernels.size() << " kernels for " << unit.entry_texts.size()
      << " entry points";
  std::string defs;
  int last = -1; // a kernel's entry points are consecutive (one per call on a GPU)
  for (size_t k : entries) {
    VTC_CHECK(k < unit.entry_texts.size())
        << "part_source: entry " << k << " of " << unit.entry_texts.size();
    if (unit.entry_kernels[k] != last) {
      last = unit.entry_kernels[k];
      defs += unit.kernel_defs.at(size_t(last));
    }
  }
  std::string source = preamble + "\nnamespace {\n" + defs + "} // namespace\n\n";
  for (size_t k : entries)
    source += unit.entry_texts[k];
  return source;
}

} // namespace vtc
