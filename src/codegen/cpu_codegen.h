// C++ code generation for the cpu target: for each step of a lowered program, accessor
// structs emitted from the mappings of its operands (physical tensors are identity mappings,
// so every stride is a compile-time constant), fused prologues as computed accessors,
// epilogues as storing accessors, and a call of a kernel template from kernels/cpu.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "mapping/mapping.h"
#include "passes/kernel_graph.h"

namespace vtc {

// What the code generator needs to know about storage: each physical value's buffer id, and
// each virtual value's mapping onto physical values.
struct StorageMap {
  std::map<const Value*, int> buffer_of;
  std::map<const Value*, Mapping> virtual_values;
};

// The body of `extern "C" void <entry>(void* const* buf, void* packs)` for a kernel, or
// nullopt when a node of the kernel has no cpu code (the step then runs on the reference
// interpreter).
// `defs` receives the struct definitions the body uses.
std::optional<std::string> generate_kernel(const Kernel& k, const StorageMap& storage,
                                           std::string& defs, int& counter);
// Whether generate_kernel has code for `k` (else it runs on the reference interpreter, and its
// operands must be physical).
bool can_generate_kernel(const Kernel& k);
// The body for a data-movement node that stays a copy (all its outputs physical).
std::string generate_copy(const Node& n, const StorageMap& storage, std::string& defs,
                          int& counter);

} // namespace vtc
