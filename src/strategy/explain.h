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

// A data-movement node the strategy held back from making virtual: it would raise peak memory.
struct HeldBackMove {
  std::string side;   // option_kind_name: "read", "write", ...
  std::string tensor; // the tensor that would have become virtual
  double saving = 0;  // seconds
  int64_t peak_before = 0, peak_after = 0;
};

// What became of one data-movement node: the data of one line of explain_text.
struct MovementExplanation {
  const Node* node = nullptr;
  // "physical", "virtual read side", "virtual write side", "virtual read and write sides",
  // each optionally "(in place)", prefixed "partly copied, " when some units still copy.
  std::string became;
  bool eliminated = false;  // all of its copy work is gone
  std::string mapping_type; // profitability_name of the least profitable chosen mapping; "-"
  double saving = 0;        // seconds the search credited to it
  std::vector<HeldBackMove> held_back;
};

// One entry per data-movement node in schedule order.
std::vector<MovementExplanation> explain_movements(const Strategy& s);

// One line per data-movement node in schedule order, then
//   explain: D data-movement ops, E eliminated, B bytes of copies removed, M bytes no longer
//   allocated
std::string explain_text(const Strategy& s);

std::string points_to_dot(const Strategy& s);

} // namespace vtc
