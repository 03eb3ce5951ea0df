// Helpers shared by the rule families (rules_*.cpp): bases of a node's values, constant integer
// operands (inputs of newer opsets, attributes of older ones), and index normalisation.
#pragma once

#include <optional>
#include <vector>

#include "mapping/rules.h"
#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc::rule_util {

inline const Base* in_base(const Node& n, size_t i) {
  return value_base(n.input(i));
}
inline const Base* out_base(const Node& n, size_t i) {
  return value_base(n.output(i));
}
inline const Shape& in_shape(const Node& n, size_t i) {
  return n.input(i)->type.shape;
}
inline const Shape& out_shape(const Node& n, size_t i) {
  return n.output(i)->type.shape;
}

// The integer list of attribute `key` when present, else of constant input `i`; nullopt when
// neither is given. Throws naming the node when the input is not a constant.
inline std::optional<std::vector<int64_t>> ints_operand(const Node& n, const char* key, size_t i) {
  if (key && n.has_attr(key)) return n.attr_ints(key);
  const Value* v = n.input(i);
  if (!v) return std::nullopt;
  VTC_CHECK(v->constant) << n.describe() << ": input " << i << " '" << v->name
                         << "' must be a constant";
  return v->constant->to_i64_vector();
}

// An index read from a run-time tensor, made non-negative against a dimension of size `dim`
// (ONNX allows [-dim, dim)); free when the tensor's values are known to be non-negative.
inline IndexExpr wrap_index(IndexExpr loaded, int64_t dim) {
  return mod(loaded, dim);
}

// A read-side result with one mapping.
inline RuleResult one(Mapping m) {
  RuleResult r;
  r.mappings.push_back(std::move(m));
  return r;
}
// A write-side result: `m` for input 0, nothing for the other inputs.
inline RuleResult first_input(const Node& n, Mapping m) {
  RuleResult r;
  r.mappings.resize(n.num_inputs());
  r.mappings[0] = std::move(m);
  return r;
}

} // namespace vtc::rule_util
