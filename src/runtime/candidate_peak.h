// The arena size of the program a strategy candidate would lower to, computed without lowering
// it: the buffers are the physical intermediates the steps touch (a virtual operand touches
// its bases and the index tensors its mapping loads), in the order lower_program creates
// them, live from the first to the last step touching them, and placed by place_in_arena as
// plan_memory places them. Lowering also inserts index-check steps, but each reads only its
// index tensor right after that tensor's last writer, inside its lifetime, so the lifetimes
// it sees overlap exactly as these do and the figure is plan_memory's. The greedy search asks
// this once per move it would take; one call costs the steps and their operands, not a
// lowering and a plan quadratic in the buffers.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"
#include "passes/kernel_graph.h"
#include "strategy/greedy.h"
#include "strategy/vtog.h"

namespace vtc {

class CandidatePeak {
public:
  CandidatePeak(const Graph& g, const KernelGraph& kg);
  int64_t operator()(const Vtog& vtog, const CandidateStorage& candidate) const;

private:
  bool in_arena(const Value* v) const;

  const KernelGraph& kg_;
  std::unordered_set<const Value*> bound_; // graph inputs and outputs: not in the arena
};

} // namespace vtc
