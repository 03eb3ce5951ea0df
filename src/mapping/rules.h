// Data-movement rules (paper §4.4): for each data-movement op, the two ways to make a tensor
// virtual instead of copying it. The read side makes each output y virtual of the inputs:
// y[i] = x[F(i)], consumers of y read x. The write side makes each data input x virtual of the
// outputs: the producer of x writes x[i] straight to y[F(i)]. A rule gets a Node whose input and
// output types are inferred and whose constant inputs (Reshape's shape, Slice's starts, ...)
// are known, and returns the mappings or the reason that direction is impossible.
//
// The table is one entry per op (rules_*.cpp fill it by family); bases are the graph Values,
// through value_base().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "mapping/mapping.h"

namespace vtc {

struct RuleResult {
  // Read side: one mapping per output (virtual = output, bases = inputs). Write side: one per
  // input, nullopt for inputs that carry no data (shapes, indices, pads).
  std::vector<std::optional<Mapping>> mappings;
  std::string reason; // non-empty: this direction is impossible, and why
  // Constant tables the mappings load from that the rule derived (inverse index tables); they
  // are not graph values, so the caller must materialise them.
  std::vector<std::pair<const Base*, Tensor>> tables;

  bool ok() const { return reason.empty(); }
  static RuleResult impossible(const Node& node, const std::string& why);
};

using RuleFn = RuleResult (*)(const Node& node);

struct MovementRule {
  const char* op;
  RuleFn read;
  RuleFn write;
};

// The rule for `op`, or nullptr when it is not a data-movement op vtc has rules for.
const MovementRule* find_movement_rule(std::string_view op);
std::vector<const MovementRule*> movement_rules();

// Dispatch through the table; an op with no rule gives a result with a reason.
RuleResult read_side(const Node& node);
RuleResult write_side(const Node& node);

// The base standing for a graph value: keyed by the Value, named after it, with the value
// range of its elements when it is an integer constant.
const Base* value_base(const Value* v);

// Registration by family (rules_view.cpp, rules_slice.cpp, rules_broadcast.cpp,
// rules_gather.cpp, rules_scatter.cpp).
void add_view_rules(std::vector<MovementRule>& t);
void add_slice_rules(std::vector<MovementRule>& t);
void add_broadcast_rules(std::vector<MovementRule>& t);
void add_gather_rules(std::vector<MovementRule>& t);
void add_scatter_rules(std::vector<MovementRule>& t);

} // namespace vtc
