// Building the VTOG: tensors in order of first use, the rules of every data-movement node as
// options and edges, conflicts by guard overlap, units, and the schedule with the producers of
// index tensors hoisted.
#include "strategy/vtog.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "mapping/rules.h"
#include "vtc/error.h"

namespace vtc {

const char* option_kind_name(OptionKind k) {
  switch (k) {
  case OptionKind::read:
    return "read";
  case OptionKind::write:
    return "write";
  case OptionKind::in_place:
    return "in place";
  }
  return "?";
}

int Vtog::tensor_of(const Value* v) const {
  auto it = by_value.find(v);
  return it != by_value.end() ? it->second : -1;
}

int Vtog::tensor_of(const Base* b) const {
  return b ? tensor_of(static_cast<const Value*>(b->key)) : -1;
}

std::string Vtog::edge_name(int e) const {
  const VtogEdge& edge = edges[size_t(e)];
  return tensor_name(edge.from) + " -> " + tensor_name(edge.to);
}

namespace {

bool is_scatter(const std::string& op) {
  return op == "ScatterND" || op == "ScatterElements" || op == "Scatter";
}

int severity(Profitability p) {
  switch (p) {
  case Profitability::type1:
    return 0;
  case Profitability::partial:
    return 1;
  case Profitability::type2:
    return 2;
  }
  return 2;
}

bool boxes_overlap(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.size() && d < b.size(); ++d)
    if (std::max(a[d].lo, b[d].lo) >= std::min(a[d].hi, b[d].hi)) return false;
  return true;
}

void collect_loads(const ExprNode* e, std::set<const Base*>& out) {
  if (!e) return;
  if (e->kind == ExprKind::load) out.insert(e->base);
  for (const ExprNode* c : e->ops)
    collect_loads(c, out);
}

// Bases that `m` reads indices from (loads in index expressions and in search equalities).
std::set<const Base*> loaded_bases(const Mapping& m) {
  std::set<const Base*> out;
  for (const Piece& p : m.pieces) {
    for (IndexExpr e : p.index)
      collect_loads(e.node(), out);
    for (const Search& s : p.searches)
      for (auto& [a, b] : s.eqs) {
        collect_loads(a.node(), out);
        collect_loads(b.node(), out);
      }
  }
  return out;
}

class Builder {
public:
  Builder(const KernelGraph& kg, const VtogOptions& o) : kg_(kg), o_(o) { g_.kg = &kg; }

  Vtog build() {
    g_.transaction_bytes = o_.transaction_bytes;
    collect_tensors();
    g_.movement.resize(kg_.movement.size());
    for (size_t m = 0; m < kg_.movement.size(); ++m) {
      g_.movement[m].node = kg_.movement[m];
      add_movement_units(g_, int(m));
    }
    for (size_t m = 0; m < kg_.movement.size(); ++m)
      add_options(int(m));
    mark_index_tensors();
    schedule();
    add_conflicts();
    return std::move(g_);
  }

private:
  int add_tensor(const Value* v) {
    if (!v) return -1;
    int t = g_.tensor_of(v);
    if (t >= 0) return t;
    VTC_CHECK(v->has_type) << "strategy: value '" << v->name << "' has no type";
    VtogTensor tensor;
    tensor.value = v;
    tensor.base = value_base(v);
    tensor.bytes = int64_t(v->type.nbytes());
    tensor.elem_bytes = int(dtype_size(v->type.dtype));
    tensor.graph_input = v->is_graph_input;
    tensor.physical_only = o_.physical_only.count(v) != 0;
    tensor.constant = v->is_constant();
    tensor.graph_output = v->is_graph_output;
    t = int(g_.tensors.size());
    g_.tensors.push_back(std::move(tensor));
    g_.by_value.emplace(v, t);
    return t;
  }

  void collect_tensors() {
    for (const Step& s : kg_.steps) {
      if (s.is_kernel) {
        const Kernel& k = kg_.kernels[size_t(s.index)];
        for (const Value* v : k.inputs)
          add_tensor(v);
        for (const Value* v : k.outputs)
          add_tensor(v);
      } else {
        const Node* n = kg_.movement[size_t(s.index)];
        for (const Value* v : n->inputs)
          add_tensor(v);
        for (const Value* v : n->outputs)
          add_tensor(v);
      }
    }
    for (const std::string& name : o_.donated) {
      const Value* v = kg_.graph ? kg_.graph->find_value(name) : nullptr;
      VTC_CHECK(v && v->is_graph_input)
          << "donated value '" << name << "' is not an input of the graph";
      int t = g_.tensor_of(v);
      if (t >= 0) g_.tensors[size_t(t)].donated = true;
    }
  }

  int add_option(int m, OptionKind kind, int slot, const Value* v, Mapping mapping) {
    int t = g_.tensor_of(v);
    if (t < 0) return -1;
    VtogOption o;
    o.id = int(g_.options.size());
    o.tensor = t;
    o.movement = m;
    o.kind = kind;
    o.slot = slot;
    o.mapping = std::move(mapping);
    // One edge per base tensor, in order of first appearance among the pieces.
    std::vector<int> bases;
    for (const Piece& p : o.mapping.pieces) {
      int b = g_.tensor_of(p.base);
      if (b >= 0 && std::find(bases.begin(), bases.end(), b) == bases.end()) bases.push_back(b);
    }
    int worst = 0;
    for (int b : bases) {
      VtogEdge e;
      e.id = int(g_.edges.size());
      e.option = o.id;
      e.from = t;
      e.to = b;
      e.mapping.shape = o.mapping.shape;
      for (const Piece& p : o.mapping.pieces)
        if (g_.tensor_of(p.base) == b) e.mapping.pieces.push_back(p);
      e.contiguity = contiguity(e.mapping, g_.tensors[size_t(t)].elem_bytes, o_.transaction_bytes);
      worst = std::max(worst, severity(e.contiguity.type));
      o.edges.push_back(e.id);
      g_.tensors[size_t(t)].out_edges.push_back(e.id);
      g_.tensors[size_t(b)].in_edges.push_back(e.id);
      g_.edges.push_back(std::move(e));
    }
    o.type = worst == 0   ? Profitability::type1
             : worst == 1 ? Profitability::partial
                          : Profitability::type2;
    for (int u : g_.movement[size_t(m)].units) {
      const VtogUnit& unit = g_.units[size_t(u)];
      bool realizes = kind == OptionKind::read    ? unit.out_slot == slot
                      : kind == OptionKind::write ? unit.in_slot == slot
                                                  : unit.in_slot == 0;
      if (realizes) o.units.push_back(u);
    }
    for (int u : o.units)
      g_.units[size_t(u)].realized_by.push_back(o.id);
    g_.tensors[size_t(t)].options.push_back(o.id);
    g_.movement[size_t(m)].options.push_back(o.id);
    g_.options.push_back(std::move(o));
    return g_.options.back().id;
  }

  int unit_with_input_slot(int m, int slot) const {
    for (int u : g_.movement[size_t(m)].units)
      if (g_.units[size_t(u)].in_slot == slot) return u;
    return -1;
  }

  void add_options(int m) {
    const Node& n = *kg_.movement[size_t(m)];
    VtogMovement& mv = g_.movement[size_t(m)];
    RuleResult read = read_side(n);
    if (read.ok()) {
      for (size_t k = 0; k < read.mappings.size(); ++k)
        if (read.mappings[k] && n.output(k)) {
          int o = add_option(m, OptionKind::read, int(k), n.output(k), *read.mappings[k]);
          if (o >= 0) g_.options[size_t(o)].tables = read.tables;
        }
    } else {
      mv.read_reason = read.reason;
    }
    bool scatter = is_scatter(n.op);
    RuleResult write = write_side(n);
    if (write.ok()) {
      for (size_t j = 0; j < write.mappings.size(); ++j) {
        if (!write.mappings[j] || !n.input(j)) continue;
        int o = add_option(m, OptionKind::write, int(j), n.input(j), *write.mappings[j]);
        if (o < 0) continue;
        VtogOption& opt = g_.options[size_t(o)];
        opt.tables = write.tables;
        if (scatter && j == 0) opt.mutates = true;
        if (scatter && j == 2) opt.requires_unit = unit_with_input_slot(m, 0);
      }
    } else {
      mv.write_reason = write.reason;
    }
    if (scatter && n.input(0) && n.output(0) && n.attr_string("reduction", "none") == "none") {
      // The output is the data, updated in place: an identity onto the data's storage.
      int o = add_option(m, OptionKind::in_place, 0, n.output(0),
                         identity_mapping(value_base(n.input(0))));
      if (o >= 0) g_.options[size_t(o)].mutates = true;
    }
    if (mv.options.empty() && mv.read_reason.empty() && mv.write_reason.empty())
      mv.read_reason = n.describe() + ": no option touches a tensor of the kernel graph";
  }

  void mark_index_tensors() {
    for (const VtogOption& o : g_.options)
      for (const Base* b : loaded_bases(o.mapping)) {
        int t = g_.tensor_of(b);
        if (t >= 0) g_.tensors[size_t(t)].index = true;
      }
  }

  // Kahn's algorithm over the KernelGraph's steps, preferring the producers of index tensors
  // (and what they need) and otherwise keeping the original order.
  void schedule() {
    size_t n = kg_.steps.size();
    std::vector<const Value*> value_of_tensor;
    std::map<const Value*, size_t> producer; // value -> original step
    std::vector<std::vector<const Value*>> reads(n), writes(n);
    for (size_t s = 0; s < n; ++s) {
      const Step& st = kg_.steps[s];
      if (st.is_kernel) {
        const Kernel& k = kg_.kernels[size_t(st.index)];
        reads[s].assign(k.inputs.begin(), k.inputs.end());
        writes[s].assign(k.outputs.begin(), k.outputs.end());
      } else {
        const Node* nd = kg_.movement[size_t(st.index)];
        reads[s].assign(nd->inputs.begin(), nd->inputs.end());
        writes[s].assign(nd->outputs.begin(), nd->outputs.end());
      }
      for (const Value* v : writes[s])
        if (v) producer[v] = s;
    }
    std::vector<std::vector<size_t>> deps(n), users(n);
    for (size_t s = 0; s < n; ++s)
      for (const Value* v : reads[s]) {
        auto it = v ? producer.find(v) : producer.end();
        if (it == producer.end() || it->second == s) continue;
        if (std::find(deps[s].begin(), deps[s].end(), it->second) == deps[s].end()) {
          deps[s].push_back(it->second);
          users[it->second].push_back(s);
        }
      }
    std::vector<bool> early(n, false);
    std::function<void(size_t)> mark = [&](size_t s) {
      if (early[s]) return;
      early[s] = true;
      for (size_t d : deps[s])
        mark(d);
    };
    for (const VtogTensor& t : g_.tensors)
      if (t.index) {
        auto it = producer.find(t.value);
        if (it != producer.end()) mark(it->second);
      }
    using Key = std::pair<int, size_t>;
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
    std::vector<size_t> pending(n);
    for (size_t s = 0; s < n; ++s) {
      pending[s] = deps[s].size();
      if (pending[s] == 0) ready.push({early[s] ? 0 : 1, s});
    }
    g_.kernel_step.assign(kg_.kernels.size(), -1);
    while (!ready.empty()) {
      size_t s = ready.top().second;
      ready.pop();
      int pos = int(g_.steps.size());
      VtogStep step;
      step.step = kg_.steps[s];
      if (step.step.is_kernel) {
        g_.kernel_step[size_t(step.step.index)] = pos;
        for (const Value* v : reads[s]) {
          int t = g_.tensor_of(v);
          bool seen = false;
          for (const VtogAccess& a : step.accesses)
            seen = seen || (a.tensor == t && !a.write);
          if (t >= 0 && !seen) step.accesses.push_back({t, false, -1});
        }
        for (const Value* v : writes[s])
          if (int t = g_.tensor_of(v); t >= 0) step.accesses.push_back({t, true, -1});
      } else {
        g_.movement[size_t(step.step.index)].step = pos;
        for (int u : g_.movement[size_t(step.step.index)].units) {
          const VtogUnit& unit = g_.units[size_t(u)];
          if (unit.in >= 0) step.accesses.push_back({unit.in, false, u});
          step.accesses.push_back({unit.out, true, u});
        }
      }
      for (const VtogAccess& a : step.accesses) {
        VtogTensor& t = g_.tensors[size_t(a.tensor)];
        if (a.write)
          t.producer_step = pos;
        else if (t.reader_steps.empty() || t.reader_steps.back() != pos)
          t.reader_steps.push_back(pos);
      }
      g_.steps.push_back(std::move(step));
      for (size_t u : users[s])
        if (--pending[u] == 0) ready.push({early[u] ? 0 : 1, u});
    }
    VTC_CHECK(g_.steps.size() == n) << "strategy: the kernel graph's steps have a cycle";
  }

  void add_conflicts() {
    for (const VtogTensor& t : g_.tensors)
      for (size_t a = 0; a < t.out_edges.size(); ++a)
        for (size_t b = a + 1; b < t.out_edges.size(); ++b) {
          const VtogEdge& ea = g_.edges[size_t(t.out_edges[a])];
          const VtogEdge& eb = g_.edges[size_t(t.out_edges[b])];
          if (ea.option == eb.option) continue; // one mapping: its piece order decides
          bool overlap = false;
          for (const Piece& p : ea.mapping.pieces)
            for (const Piece& q : eb.mapping.pieces)
              overlap = overlap || boxes_overlap(p.guard, q.guard);
          if (overlap) g_.conflicts.push_back({std::min(ea.id, eb.id), std::max(ea.id, eb.id)});
        }
    std::sort(g_.conflicts.begin(), g_.conflicts.end());
  }

  const KernelGraph& kg_;
  const VtogOptions& o_;
  Vtog g_;
};

std::string step_name(const Vtog& g, const Step& s) {
  if (s.is_kernel) return "kernel " + g.kg->kernels[size_t(s.index)].name;
  return "move " + g.kg->movement[size_t(s.index)]->describe();
}

} // namespace

Vtog build_vtog(const KernelGraph& kg, const VtogOptions& options) {
  return Builder(kg, options).build();
}

std::string print_vtog(const Vtog& g) {
  std::ostringstream os;
  os << "vtog: " << g.tensors.size() << " tensors, " << g.options.size() << " options, "
     << g.edges.size() << " edges, " << g.conflicts.size() << " conflicts\n";
  for (size_t s = 0; s < g.steps.size(); ++s)
    os << "step " << s << ": " << step_name(g, g.steps[s].step) << "\n";
  for (const VtogOption& o : g.options) {
    os << "option " << o.id << ": " << g.tensor_name(o.tensor) << " " << option_kind_name(o.kind)
       << " " << g.movement[size_t(o.movement)].node->describe() << " "
       << profitability_name(o.type) << "\n";
    for (int e : o.edges) {
      const VtogEdge& edge = g.edges[size_t(e)];
      os << "  edge " << e << ": " << g.edge_name(e) << "  "
         << profitability_name(edge.contiguity.type) << "  run " << edge.contiguity.run << "\n";
      std::istringstream pieces(to_string(edge.mapping));
      for (std::string line; std::getline(pieces, line);)
        os << "    " << line << "\n";
    }
  }
  for (auto [a, b] : g.conflicts)
    os << "conflict: edge " << a << " (" << g.edge_name(a) << ") x edge " << b << " ("
       << g.edge_name(b) << ")\n";
  return os.str();
}

} // namespace vtc
