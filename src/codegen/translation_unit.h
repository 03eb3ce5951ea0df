// The translation unit of a Program on one target: the dialect's preamble, the accessor
// definitions, and one entry point per generated step (kernels, copies, constant outputs);
// interpreter steps have none.
#pragma once

#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "lower/program.h"

namespace vtc {

struct TranslationUnit {
  std::string source;
  std::vector<std::string> entries;   // per step of the program: its entry point, "" if none
  std::vector<std::string> libraries; // linked as -l<name> ("openblas")
};

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect);

} // namespace vtc
