// The rule table and its dispatch.
#include "mapping/rules.h"

#include <algorithm>

#include "vtc/error.h"

namespace vtc {

RuleResult RuleResult::impossible(const Node& node, const std::string& why) {
  RuleResult r;
  r.reason = node.describe() + ": " + why;
  return r;
}

static const std::vector<MovementRule>& table() {
  static const std::vector<MovementRule> t = [] {
    std::vector<MovementRule> t;
    add_view_rules(t);
    add_slice_rules(t);
    add_broadcast_rules(t);
    add_gather_rules(t);
    add_scatter_rules(t);
    std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) {
      return std::string_view(a.op) < std::string_view(b.op);
    });
    return t;
  }();
  return t;
}

const MovementRule* find_movement_rule(std::string_view op) {
  for (const MovementRule& r : table())
    if (op == r.op) return &r;
  return nullptr;
}

std::vector<const MovementRule*> movement_rules() {
  std::vector<const MovementRule*> v;
  for (const MovementRule& r : table())
    v.push_back(&r);
  return v;
}

// A rule that cannot read its parameters (a non-constant shape, a missing type) throws; the
// caller gets that as the reason.
static RuleResult guarded(RuleFn fn, const Node& node) {
  for (const Value* v : node.inputs)
    if (v && !v->has_type) return RuleResult::impossible(node, "input " + v->name + " has no type");
  for (const Value* v : node.outputs)
    if (v && !v->has_type)
      return RuleResult::impossible(node, "output " + v->name + " has no type");
  try {
    return fn(node);
  } catch (const Error& e) {
    RuleResult r;
    r.reason = e.what();
    return r;
  }
}

RuleResult read_side(const Node& node) {
  const MovementRule* r = find_movement_rule(node.op);
  if (!r) return RuleResult::impossible(node, "no data-movement rule for op " + node.op);
  return guarded(r->read, node);
}

RuleResult write_side(const Node& node) {
  const MovementRule* r = find_movement_rule(node.op);
  if (!r) return RuleResult::impossible(node, "no data-movement rule for op " + node.op);
  return guarded(r->write, node);
}

const Base* value_base(const Value* v) {
  VTC_CHECK(v && v->has_type) << "a mapping base needs a value with a known type";
  std::optional<Interval> range;
  if (v->constant && is_integer(v->constant->dtype()) && v->constant->numel() > 0) {
    const Tensor& t = *v->constant;
    Interval r = Interval::point(t.get_i64(0));
    for (int64_t k = 1; k < t.numel(); ++k)
      r = hull(r, Interval::point(t.get_i64(k)));
    range = r;
  }
  return intern_base(v, v->name, v->type.shape, range);
}

} // namespace vtc
