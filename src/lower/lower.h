// Lowering: from a fused KernelGraph and a storage decision (which values are virtual, and
// through which mapping onto physical values) to a Program — buffers for physical values only,
// one step per kernel or remaining copy, and for each kernel step how it accesses every value
// it touches. Data only: no code is generated here, so a strategy search can lower and plan
// memory for each candidate cheaply.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "lower/program.h"
#include "mapping/mapping.h"
#include "passes/kernel_graph.h"

namespace vtc {

struct StorageDecision {
  std::string strategy = "none";
  // Virtual values and their mappings onto physical values (bases are value_base(Value*)).
  std::map<const Value*, Mapping> virtual_values;
  // Data-movement nodes that no longer run.
  std::set<const Node*> eliminated;
  // Execution order; empty: the kernel graph's own.
  std::vector<Step> steps;
  // Graph outputs stored in a donated input's buffer (output, input); empty: lower_program
  // aliases each donated input updated in place by a scatter that is a graph output.
  std::vector<std::pair<const Value*, const Value*>> aliases;
};

struct LowerOptions {
  // Graph inputs the caller donates: their buffers may be reused for the graph output that
  // updates them in place (a ScatterND/ScatterElements of the input that is a graph output).
  std::set<std::string> donated;
  // Whether the target generates code for a kernel or a remaining copy; the others run on the
  // reference interpreter (their operands must then be physical). Unset: every one.
  std::function<bool(const Kernel&)> generates_kernel;
  std::function<bool(const Node&)> generates_copy;
};

// The values whose buffers a step touches when it reads or writes `v`: v itself when physical
// (`mapping` null), else the bases of the mapping's pieces in order, then the values its index
// expressions load from (run-time indices, physical).
std::vector<const Value*> stored_values(const Value* v, const Mapping* mapping);

Program lower_program(const Graph& g, const KernelGraph& kg, const StorageDecision& decision,
                      const LowerOptions& options);

} // namespace vtc
