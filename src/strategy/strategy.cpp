// Strategy: the search's result made concrete (composed mappings, remaining copies, aliases),
// built from a search or from a given set of options or edges, and its printer.
#include "strategy/strategy.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/core.h>

#include "strategy/assignment.h"
#include "vtc/error.h"

namespace vtc {

Operand Strategy::operand(const Value* v) const {
  int t = vtog->tensor_of(v);
  if (t < 0 || !mappings[size_t(t)]) return {};
  return {false, &*mappings[size_t(t)]};
}

std::vector<const Value*> Strategy::physical() const {
  std::vector<const Value*> out;
  for (size_t t = 0; t < vtog->tensors.size(); ++t)
    if (!mappings[t]) out.push_back(vtog->tensors[t].value);
  return out;
}

std::vector<const Value*> Strategy::virtual_values() const {
  std::vector<const Value*> out;
  for (size_t t = 0; t < vtog->tensors.size(); ++t)
    if (mappings[t]) out.push_back(vtog->tensors[t].value);
  return out;
}

bool Strategy::unit_realized(int u) const {
  for (int o : vtog->units[size_t(u)].realized_by)
    if (chosen[size_t(vtog->options[size_t(o)].tensor)] == o) return true;
  return false;
}

bool Strategy::eliminated(int m) const {
  for (int u : vtog->movement[size_t(m)].units)
    if (!unit_realized(u)) return false;
  return true;
}

std::vector<RemainingCopy> Strategy::copies() const {
  std::vector<RemainingCopy> out;
  for (size_t s = 0; s < vtog->steps.size(); ++s) {
    const Step& st = vtog->steps[s].step;
    if (st.is_kernel) continue;
    RemainingCopy c{vtog->movement[size_t(st.index)].node, {}};
    for (int u : vtog->movement[size_t(st.index)].units)
      if (!unit_realized(u))
        c.units.push_back({vtog->units[size_t(u)].in_slot, vtog->units[size_t(u)].out_slot});
    if (!c.units.empty()) out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::pair<const Value*, const Value*>> Strategy::aliases() const {
  std::vector<std::pair<const Value*, const Value*>> out;
  for (size_t t = 0; t < vtog->tensors.size(); ++t) {
    if (!vtog->tensors[t].graph_output || !mappings[t]) continue;
    int b = vtog->tensor_of(mappings[t]->pieces.front().base);
    out.push_back({vtog->tensors[t].value, vtog->tensors[size_t(b)].value});
  }
  return out;
}

std::vector<Step> Strategy::steps() const {
  std::vector<Step> out;
  for (const VtogStep& s : vtog->steps)
    out.push_back(s.step);
  return out;
}

std::vector<std::pair<const Base*, Tensor>> Strategy::tables() const {
  std::vector<std::pair<const Base*, Tensor>> out;
  for (size_t t = 0; t < vtog->tensors.size(); ++t)
    if (chosen[t] >= 0)
      for (const auto& tab : vtog->options[size_t(chosen[t])].tables)
        if (std::none_of(out.begin(), out.end(),
                         [&](const auto& x) { return x.first == tab.first; }))
          out.push_back(tab);
  return out;
}

std::map<const Value*, Mapping> Strategy::virtual_mappings() const {
  std::map<const Value*, Mapping> out;
  for (size_t t = 0; t < vtog->tensors.size(); ++t)
    if (mappings[t]) out.emplace(vtog->tensors[t].value, *mappings[t]);
  return out;
}

std::set<const Node*> Strategy::eliminated_nodes() const {
  std::set<const Node*> out;
  for (size_t m = 0; m < vtog->movement.size(); ++m)
    if (eliminated(int(m))) out.insert(vtog->movement[m].node);
  return out;
}

namespace {

Strategy make_strategy(std::shared_ptr<const Vtog> g, const Assignment& a, const CostModel& model,
                       StrategyKind kind) {
  Strategy s;
  s.kind = kind;
  s.model = model.describe();
  s.vtog = std::move(g);
  for (size_t t = 0; t < s.vtog->tensors.size(); ++t) {
    s.chosen.push_back(a.choice(int(t)));
    const Composed* c = a.composed(int(t));
    s.mappings.push_back(c ? std::optional<Mapping>(c->mapping) : std::nullopt);
  }
  s.latency = a.latency();
  s.latency_none = Assignment(*s.vtog, model).latency();
  return s;
}

} // namespace

Strategy choose_strategy(const KernelGraph& kg, const StrategyOptions& o, const CostModel& model) {
  VtogOptions vo;
  vo.donated = o.donated;
  vo.transaction_bytes = o.transaction_bytes;
  vo.physical_only = o.physical_only;
  auto g = std::make_shared<const Vtog>(build_vtog(kg, vo));
  PeakOfCandidate peak_of;
  if (o.peak_bytes) peak_of = [&](const CandidateStorage& c) { return o.peak_bytes(*g, c); };
  SearchResult r;
  if (o.kind != StrategyKind::none)
    r = greedy_search(*g, model, o.kind == StrategyKind::type1, peak_of, o.peak_slack);
  Assignment a(*g, model);
  std::vector<std::string> reasons = a.assign(r.options);
  VTC_CHECK(reasons.empty()) << "strategy " << strategy_kind_name(o.kind)
                             << " chose an illegal points-to graph: " << reasons.front();
  Strategy s = make_strategy(g, a, model, o.kind);
  s.commits = std::move(r.commits);
  s.held_back = std::move(r.held_back);
  return s;
}

PointsToResult points_to_from_options(std::shared_ptr<const Vtog> g,
                                      const std::vector<int>& options, const CostModel& model) {
  PointsToResult r;
  std::map<int, int> per_tensor;
  for (int o : options) {
    VTC_CHECK(o >= 0 && size_t(o) < g->options.size()) << "strategy: no option " << o;
    int t = g->options[size_t(o)].tensor;
    auto [it, fresh] = per_tensor.emplace(t, o);
    if (!fresh && it->second != o)
      r.reasons.push_back("conflict: " + g->tensor_name(t) + " is virtual through both option " +
                          std::to_string(it->second) + " and option " + std::to_string(o) +
                          ": one virtual index may map to only one base");
  }
  if (!r.reasons.empty()) return r;
  std::vector<int> unique;
  for (auto [t, o] : per_tensor)
    unique.push_back(o);
  Assignment a(*g, model);
  r.reasons = a.assign(unique);
  if (r.reasons.empty()) r.strategy = make_strategy(g, a, model, StrategyKind::none);
  return r;
}

PointsToResult points_to_from_edges(std::shared_ptr<const Vtog> g, const std::vector<int>& edges,
                                    const CostModel& model) {
  PointsToResult r;
  std::vector<int> sorted = edges;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (auto [a, b] : g->conflicts)
    if (std::binary_search(sorted.begin(), sorted.end(), a) &&
        std::binary_search(sorted.begin(), sorted.end(), b))
      r.reasons.push_back("conflict: edges " + g->edge_name(a) + " and " + g->edge_name(b) +
                          " map overlapping indices of " +
                          g->tensor_name(g->edges[size_t(a)].from) +
                          ": one virtual index may map to only one base");
  std::vector<int> options;
  for (int e : sorted) {
    VTC_CHECK(e >= 0 && size_t(e) < g->edges.size()) << "strategy: no edge " << e;
    int o = g->edges[size_t(e)].option;
    if (std::find(options.begin(), options.end(), o) != options.end()) continue;
    options.push_back(o);
    for (int other : g->options[size_t(o)].edges)
      if (!std::binary_search(sorted.begin(), sorted.end(), other))
        r.reasons.push_back("incomplete: " + g->tensor_name(g->options[size_t(o)].tensor) +
                            " needs edge " + g->edge_name(other) +
                            " too: without it part of its "
                            "index space has no base");
  }
  if (!r.reasons.empty()) return r;
  return points_to_from_options(std::move(g), options, model);
}

std::string print_strategy(const Strategy& s) {
  const Vtog& g = *s.vtog;
  std::ostringstream os;
  int eliminated = 0;
  for (size_t m = 0; m < g.movement.size(); ++m)
    eliminated += s.eliminated(int(m));
  os << fmt::format(
      "strategy {}: {} data-movement ops, {} eliminated; latency {:.2f} us (none: {:.2f} us)\n",
      strategy_kind_name(s.kind), g.movement.size(), eliminated, s.latency * 1e6,
      s.latency_none * 1e6);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const VtogTensor& tensor = g.tensors[t];
    std::string type = type_str(tensor.value->type);
    if (!s.mappings[t]) {
      os << "physical %" << tensor.value->name << " " << type << "\n";
      continue;
    }
    const VtogOption& o = g.options[size_t(s.chosen[t])];
    os << "virtual  %" << tensor.value->name << " " << type << " <- "
       << g.movement[size_t(o.movement)].node->describe() << " " << option_kind_name(o.kind) << " ("
       << profitability_name(o.type) << ")\n";
    std::istringstream pieces(to_string(*s.mappings[t]));
    for (std::string line; std::getline(pieces, line);)
      os << "  " << line << "\n";
  }
  for (const RemainingCopy& c : s.copies()) {
    os << "copy     " << c.node->describe() << " units";
    for (auto [i, o] : c.units)
      os << " (" << (i < 0 ? std::string("fill") : std::to_string(i)) << "->" << o << ")";
    os << "\n";
  }
  for (auto [out, in] : s.aliases())
    os << "alias    %" << out->name << " = donated %" << in->name << "\n";
  return os.str();
}

} // namespace vtc
