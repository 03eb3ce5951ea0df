// The translation unit of a Program on one target: the dialect's preamble, the accessor
// definitions, and the entry points of every distinct generated kernel (kernels, copies,
// constant outputs) — one per step's kernel, or on a GPU one per call with its launch — with
// the table each step passes its entry point; interpreter steps have none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/library_conv.h"
#include "kernels/cuda/common.h"
#include "lower/program.h"

namespace vtc {

// One GPU kernel of a step: its entry point, grid / block / dynamic shared memory, and the
// bytes of zeroed workspace it is passed.
// A launch whose library_conv is set runs cuDNN on the host's side of the stream instead (no
// entry point): its raw product goes to the step's scratch, which the step's next launch is
// given as its workspace.
struct DeviceLaunch {
  std::string entry;
  kernels::Launch launch;
  int64_t workspace_bytes = 0;
  int64_t workspace_partial_bytes = 0; // KernelCall::workspace_partial_bytes
  std::optional<LibraryConvCall> library_conv;
  // `ws` is the executor's staging buffer (KernelCall::writes_staging), which the library
  // convolution launched next reads.
  bool writes_staging = false;
};

struct TranslationUnit {
  std::string source; // header, then every entry point's text
  // The source in pieces, so that entry points can be compiled apart: the preamble and every
  // accessor definition, and each distinct kernel's entry point (on a GPU one per call), named
  // in entry_names; header + the entry texts in order is `source`. On the host a kernel's names
  // come from its text (the same kernel is named alike in every unit), on a GPU from its number.
  std::string header;
  std::vector<std::string> entry_texts;
  std::vector<std::string> entry_names;
  // Per entry text, how long it takes to compile relative to the others (estimated by its
  // kernel's kind): what the parts compiled side by side are ordered by.
  std::vector<int> entry_weights;
  // The same by kernel, so that a part of the entry points needs only its own kernels'
  // definitions (part_source): the dialect's preamble, each distinct kernel's accessor
  // definitions (its namespace), and per entry point the kernel it belongs to.
  std::string preamble;
  std::vector<std::string> kernel_defs;
  std::vector<int> entry_kernels;
  // Per step of the program: its entry point, "" if none. Steps whose kernels differ only in
  // their buffers share one.
  std::vector<std::string> entries;
  // Per step: its site table (codegen/site_args.h) — the buffer ids and integers its entry
  // point reads as site[k]; empty where the step has none.
  std::vector<std::vector<int64_t>> sites;
  int kernels = 0;                    // distinct kernels generated
  std::vector<std::string> libraries; // linked as -l<name> ("openblas")
  // Per step, where the dialect makes each call a kernel of its own: the kernels in order
  // (empty for interpreter steps, and for every step on cpu, whose entries run their calls).
  std::vector<std::vector<DeviceLaunch>> launches;
};

TranslationUnit generate_translation_unit(const Program& p, const Dialect& dialect);

// The source of entry points [first, end) of `unit` compiled apart: the preamble, the
// definitions of the kernels those entry points belong to, and their texts.
std::string part_source(const TranslationUnit& unit, size_t first, size_t end);
// The same starting with `preamble` in place of the unit's (an include of its precompiled form).
std::string part_source(const TranslationUnit& unit, size_t first, size_t end,
                        const std::string& preamble);
// The same for the entry points listed, in that order (a kernel's entry points together).
std::string part_source(const TranslationUnit& unit, const std::vector<size_t>& entries,
                        const std::string& preamble);

} // namespace vtc
