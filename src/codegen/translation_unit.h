// The translation unit of a Program on one target: the dialect's preamble, the accessor
// definitions, and the entry points of every generated step (kernels, copies, constant
// outputs) — one per step, or on a GPU one kernel per call with its launch; interpreter
// steps have none.
#pragma once

#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "kernels/cuda/common.h"
#include "lower/program.h"

namespace vtc {

// One GPU kernel of a step: its entry point, grid / block / dynamic shared memory, and the
// bytes of zeroed workspace it is passed.
struct DeviceLaunch {
  std::string entry;
  kernels::Launch launch;
  int64_t workspace_bytes = 0;
};

struct TranslationUnit {
  std::string source; // header, then every entry point's text
  // The source in pieces, where entry points can be compiled apart (one kernel per call):
  // the preamble and every accessor definition, and each DeviceLaunch's entry point in step
  // order; header + the entry texts in order is `source`.
  std::string header;
  std::vector<std::string> entry_texts;
  std::vector<std::string> entries;   // per step of the program: its entry point, "" if none
  std::vector<std::string> libraries; // linked as -l<name> ("openblas")
  // Per step, where the dialect makes each call a kernel of its own: the kernels in order
  // (empty for interpreter steps, and for every step on cpu, whose entries run their calls).
  std::vector<std::vector<DeviceLaunch>> launches;
};

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect);

} // namespace vtc
