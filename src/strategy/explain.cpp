// The explain report and the Graphviz form of the points-to graph.
#include "strategy/explain.h"

#include <algorithm>
#include <sstream>

#include <fmt/core.h>

namespace vtc {
namespace {

// What became of movement node m: the sides its realized units were removed by.
std::string decision(const Strategy& s, int m) {
  const Vtog& g = *s.vtog;
  bool read = false, write = false, in_place = false, any = false, all = true;
  for (int u : g.movement[size_t(m)].units) {
    bool done = false;
    for (int o : g.units[size_t(u)].realized_by) {
      const VtogOption& opt = g.options[size_t(o)];
      if (s.chosen[size_t(opt.tensor)] != o) continue;
      done = true;
      read = read || opt.kind == OptionKind::read;
      write = write || opt.kind == OptionKind::write;
      in_place = in_place || opt.kind == OptionKind::in_place || opt.mutates;
    }
    any = any || done;
    all = all && done;
  }
  if (!any) return "physical";
  std::string side = read && write ? "virtual read and write sides"
                     : read        ? "virtual read side"
                                   : "virtual write side";
  if (in_place) side += " (in place)";
  if (!all) side = "partly copied, " + side;
  return side;
}

std::string mapping_type(const Strategy& s, int m) {
  const Vtog& g = *s.vtog;
  int worst = -1;
  for (int o : g.movement[size_t(m)].options)
    if (s.chosen[size_t(g.options[size_t(o)].tensor)] == o)
      worst = std::max(worst, int(g.options[size_t(o)].type));
  return worst < 0 ? "-" : profitability_name(Profitability(worst));
}

std::string label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

} // namespace

ExplainTotals explain_totals(const Strategy& s) {
  const Vtog& g = *s.vtog;
  ExplainTotals t;
  t.movement = int(g.movement.size());
  for (size_t m = 0; m < g.movement.size(); ++m)
    t.eliminated += s.eliminated(int(m));
  for (size_t u = 0; u < g.units.size(); ++u)
    if (s.unit_realized(int(u))) t.copy_bytes += g.units[u].bytes;
  for (size_t x = 0; x < g.tensors.size(); ++x)
    if (s.mappings[x]) t.virtual_bytes += g.tensors[x].bytes;
  return t;
}

std::vector<MovementExplanation> explain_movements(const Strategy& s) {
  const Vtog& g = *s.vtog;
  std::vector<double> saving(g.movement.size(), 0);
  for (const Commit& c : s.commits)
    saving[size_t(c.movement)] += c.saving;
  std::vector<MovementExplanation> out;
  for (const VtogStep& st : g.steps) {
    if (st.step.is_kernel) continue;
    int m = st.step.index;
    MovementExplanation e{g.movement[size_t(m)].node, decision(s, m),    s.eliminated(m),
                          mapping_type(s, m),         saving[size_t(m)], {}};
    for (const HeldBack& h : s.held_back) {
      if (h.movement != m) continue;
      const VtogOption& o = g.options[size_t(h.options.front())];
      e.held_back.push_back({option_kind_name(o.kind), g.tensor_name(o.tensor), h.saving,
                             h.peak_before, h.peak_after});
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string explain_text(const Strategy& s) {
  std::ostringstream os;
  os << fmt::format("strategy {} under {}: latency {:.2f} us -> {:.2f} us\n",
                    strategy_kind_name(s.kind), s.model, s.latency_none * 1e6, s.latency * 1e6);
  for (const MovementExplanation& e : explain_movements(s)) {
    os << fmt::format("  {:<44} {:<40} {:<21} saving {:8.3f} us\n", e.node->describe(), e.became,
                      e.mapping_type, e.saving * 1e6);
    for (const HeldBackMove& h : e.held_back)
      os << fmt::format("    held back: {} of {} would save {:.3f} us but raise peak memory from "
                        "{} (the lowest seen) to {} bytes\n",
                        h.side, h.tensor, h.saving * 1e6, h.peak_before, h.peak_after);
  }
  ExplainTotals t = explain_totals(s);
  os << fmt::format("explain: {} data-movement ops, {} eliminated, {} bytes of copies removed, {} "
                    "bytes no longer allocated\n",
                    t.movement, t.eliminated, t.copy_bytes, t.virtual_bytes);
  return os.str();
}

std::string points_to_dot(const Strategy& s) {
  const Vtog& g = *s.vtog;
  std::ostringstream os;
  os << "digraph points_to {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const VtogTensor& x = g.tensors[t];
    if (x.out_edges.empty() && x.in_edges.empty()) continue;
    std::string text = label(x.value->name + "\n" + type_str(x.value->type));
    if (s.mappings[t])
      os << "  t" << t << " [label=\"" << text << "\", shape=ellipse, style=dashed];\n";
    else
      os << "  t" << t << " [label=\"" << text << "\", shape=box];\n";
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (s.chosen[t] < 0) continue;
    const VtogOption& o = g.options[size_t(s.chosen[t])];
    for (int e : o.edges) {
      const VtogEdge& edge = g.edges[size_t(e)];
      os << "  t" << edge.from << " -> t" << edge.to << " [label=\""
         << label(g.movement[size_t(o.movement)].node->op + " " + option_kind_name(o.kind) + "\n" +
                  profitability_name(edge.contiguity.type))
         << "\"];\n";
    }
  }
  os << "}\n";
  return os.str();
}

} // namespace vtc
