// Explaining a strategy to a person (`vtc explain`): per data-movement node, what became of it
// (virtual read side, virtual write side, in place, partly or wholly a copy), the type of the
// mapping it uses and the latency the search credited to it; then the totals. The points-to
// graph as Graphviz: physical tensors as boxes, virtual ones as dashed ellipses, each chosen
// edge from a virtual tensor to its base labelled with the op, the side and the mapping type.
#pragma once

#include <cstdint>
#include <string>

#include "strategy/strategy.h"

namespace vtc {

struct ExplainTotals {
  int movement = 0;          // data-movement ops
  int eliminated = 0;        // ... whose copy work is all gone
  int64_t copy_bytes = 0;    // bytes the removed copy units would have read and written
  int64_t virtual_bytes = 0; // bytes of tensors that no longer need storage
};

ExplainTotals explain_totals(const Strategy& s);

// One line per data-movement node in schedule order, then
//   explain: D data-movement ops, E eliminated, B bytes of copies removed, M bytes no longer
//   allocated
std::string explain_text(const Strategy& s);

std::string points_to_dot(const Strategy& s);

} // namespace vtc
