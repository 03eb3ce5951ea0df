// The assignment state, its trials and its legality checks. A View reads the state, optionally
// through the overlay of the trial in progress (choices and composed mappings of the affected
// tensors, kept in scratch arrays stamped per trial), so the same checks and step costs serve
// trials, commits and the full check of a given assignment.
#include "strategy/assignment.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "mapping/compose.h"
#include "vtc/error.h"

namespace vtc {

namespace {
constexpr int kInA = 1, kHasChoice = 2, kVisiting = 4, kDone = 8;
constexpr int kUnknown = -2;
} // namespace

class AssignmentView {
public:
  AssignmentView(const Assignment& a, bool overlay) : a_(a), g_(a.g_), overlay_(overlay) {}

  bool hyp(int t, int flag) const {
    return overlay_ && a_.stamp_[size_t(t)] == a_.cur_stamp_ && (a_.visit_[size_t(t)] & flag);
  }
  int choice(int t) const {
    return hyp(t, kHasChoice) ? a_.hyp_choice_[size_t(t)] : a_.choice_[size_t(t)];
  }
  const Composed* composed(int t) const {
    return hyp(t, kDone) ? a_.hyp_composed_[size_t(t)].get() : a_.composed_[size_t(t)].get();
  }
  bool chosen(int o) const { return choice(g_.options[size_t(o)].tensor) == o; }

  bool realized(int u) const {
    for (int o : g_.units[size_t(u)].realized_by)
      if (chosen(o)) return true;
    return false;
  }
  int realizer(int u) const {
    for (int o : g_.units[size_t(u)].realized_by)
      if (chosen(o)) return o;
    return -1;
  }

  // Someone writes t's elements: its producing kernel, or a copy that still writes into it.
  bool written(int t) const {
    int s = g_.tensors[size_t(t)].producer_step;
    if (s < 0) return false;
    const Step& st = g_.steps[size_t(s)].step;
    if (st.is_kernel) return true;
    for (int u : g_.movement[size_t(st.index)].units)
      if (g_.units[size_t(u)].out == t && !realized(u)) return true;
    return false;
  }

  // The step after which t's elements are all in storage: its producer, or, for a tensor whose
  // producing copy is gone, the steps that wrote what it views.
  int def_step(int t, std::vector<int>& memo) const {
    if (memo[size_t(t)] != kUnknown) return memo[size_t(t)];
    const VtogTensor& tensor = g_.tensors[size_t(t)];
    int s = tensor.producer_step, d = -1;
    if (s >= 0 && g_.steps[size_t(s)].step.is_kernel)
      d = s;
    else if (s >= 0) {
      for (int u : g_.movement[size_t(g_.steps[size_t(s)].step.index)].units) {
        const VtogUnit& unit = g_.units[size_t(u)];
        if (unit.out != t) continue;
        if (!realized(u))
          d = std::max(d, s);
        else if (unit.in >= 0)
          d = std::max(d, def_step(unit.in, memo));
      }
    }
    return memo[size_t(t)] = d;
  }

  // The physical tensors t's elements live in.
  std::vector<int> storage(int t) const {
    const Composed* c = composed(t);
    return c ? c->bases : std::vector<int>{t};
  }

  // Boxes of base p's index space that t reaches.
  std::vector<Box> region(int t, int p) const {
    const Composed* c = composed(t);
    const Base* base = g_.tensors[size_t(p)].base;
    if (!c) return {full_box(base->shape)};
    std::vector<Box> out;
    for (const Piece& piece : c->mapping.pieces) {
      if (piece.base != base) continue;
      Box b;
      for (size_t d = 0; d < piece.index.size(); ++d) {
        Interval i = bounds(piece.index[d], piece.guard);
        b.push_back({std::max<int64_t>(i.lo, 0), std::min<int64_t>(i.hi, base->shape[d] - 1) + 1});
      }
      out.push_back(std::move(b));
    }
    return out;
  }

  OperandQuery operand(int t, bool write, double fraction) const {
    const VtogTensor& tensor = g_.tensors[size_t(t)];
    OperandQuery q;
    q.value = tensor.value;
    q.write = write;
    q.bytes = int64_t(double(tensor.bytes) * fraction);
    q.elem_bytes = tensor.elem_bytes;
    if (const Composed* c = composed(t)) {
      q.mapping = &c->mapping;
      q.profile = &c->profile;
    }
    return q;
  }

  StepQuery step_query(int s, const std::vector<int>* only_units = nullptr) const {
    const VtogStep& st = g_.steps[size_t(s)];
    StepQuery q;
    if (st.step.is_kernel) {
      q.kernel = &g_.kg->kernels[size_t(st.step.index)];
      for (const VtogAccess& a : st.accesses)
        q.operands.push_back(operand(a.tensor, a.write, 1));
      return q;
    }
    q.movement = g_.movement[size_t(st.step.index)].node;
    q.active = false;
    for (const VtogAccess& a : st.accesses) {
      bool wanted = only_units ? std::find(only_units->begin(), only_units->end(), a.unit) !=
                                     only_units->end()
                               : !realized(a.unit);
      if (!wanted) continue;
      q.active = true;
      const VtogUnit& u = g_.units[size_t(a.unit)];
      OperandQuery o = operand(a.tensor, a.write, a.write ? u.write_fraction : u.read_fraction);
      if (a.write) {
        o.extra_bytes = u.extra_bytes;
        if (u.scatter) o.scatter = &a_.scatter_profile_[size_t(a.unit)];
      }
      q.operands.push_back(o);
    }
    return q;
  }

  double step_cost(int s) const { return a_.model_.latency(step_query(s)); }

  // ---- legality ----

  void check_tensor(int t, std::vector<std::string>& out) const {
    int o = choice(t);
    if (o < 0) return;
    const VtogTensor& tensor = g_.tensors[size_t(t)];
    const VtogOption& opt = g_.options[size_t(o)];
    const std::string name = tensor.value->name;
    if (tensor.graph_input)
      out.push_back("graph input " + name + " is physical: its storage is the caller's");
    if (tensor.constant) out.push_back("constant " + name + " is physical");
    const Composed* c = composed(t);
    if (!c) return;
    if (tensor.graph_output && !aliases_donated_input(t, *c))
      out.push_back("graph output " + name +
                    " must be physical and contiguous (it may only alias a donated input it "
                    "updates in place)");
    check_loads(t, *c, out);
    if (written(t))
      for (int b : c->bases) {
        const VtogTensor& base = g_.tensors[size_t(b)];
        if (base.constant)
          out.push_back(name + " would be written into constant " + base.value->name);
        else if (base.graph_input && !base.donated)
          out.push_back(name + " would be written into graph input " + base.value->name +
                        ", which is read-only (donate it to allow updating it in place)");
      }
    if (opt.requires_unit >= 0 && !realized(opt.requires_unit))
      out.push_back(name + " written into " +
                    g_.tensor_name(g_.units[size_t(opt.requires_unit)].out) +
                    " by its producer needs " + g_.movement[size_t(opt.movement)].node->describe() +
                    " to update its data in place: the copy of the data would overwrite it");
  }

  bool aliases_donated_input(int t, const Composed& c) const {
    if (c.mapping.pieces.size() != 1) return false;
    const Piece& p = c.mapping.pieces[0];
    int b = g_.tensor_of(p.base);
    if (b < 0 || !g_.tensors[size_t(b)].donated || !p.searches.empty()) return false;
    if (g_.tensors[size_t(b)].value->type != g_.tensors[size_t(t)].value->type) return false;
    Box full = full_box(c.mapping.shape);
    if (p.guard != full) return false;
    for (int d = 0; d < c.mapping.rank(); ++d)
      if (p.index[size_t(d)] != box_var(full, d)) return false;
    return true;
  }

  void check_loads(int t, const Composed& c, std::vector<std::string>& out) const {
    std::set<const Base*> loaded;
    std::function<void(const ExprNode*)> walk = [&](const ExprNode* e) {
      if (!e) return;
      if (e->kind == ExprKind::load) loaded.insert(e->base);
      for (const ExprNode* x : e->ops)
        walk(x);
    };
    for (const Piece& p : c.mapping.pieces) {
      for (IndexExpr e : p.index)
        walk(e.node());
      for (const Search& s : p.searches)
        for (auto& [a, b] : s.eqs)
          walk(a.node()), walk(b.node());
    }
    if (loaded.empty()) return;
    const VtogTensor& tensor = g_.tensors[size_t(t)];
    int first = tensor.reader_steps.empty() ? int(g_.steps.size()) : tensor.reader_steps.front();
    if (written(t)) first = std::min(first, tensor.producer_step);
    std::vector<int> memo(g_.tensors.size(), kUnknown);
    for (const Base* b : loaded) {
      int l = g_.tensor_of(b);
      if (l < 0) continue; // a constant table the rule derived
      if (choice(l) >= 0) {
        out.push_back(tensor.value->name + " loads indices from " + b->name +
                      ", which is virtual: index tensors must be physical");
        continue;
      }
      int d = def_step(l, memo);
      if (d >= first)
        out.push_back(tensor.value->name + " is accessed at step " + std::to_string(first) +
                      " but its indices " + b->name + " are computed at step " + std::to_string(d));
    }
  }

  // In-place updates: a scatter whose data is updated in place changes its storage at the step
  // the updates land; any older value on that storage read at or after that step is clobbered.
  void check_clobbers(std::vector<std::string>& out) const {
    std::vector<int> memo(g_.tensors.size(), kUnknown);
    struct Mutation {
      const VtogMovement* mv;
      int y, w, own;
    };
    std::vector<Mutation> mutations;
    for (const VtogMovement& mv : g_.movement) {
      int mutating = -1;
      for (int o : mv.options)
        if (g_.options[size_t(o)].mutates && chosen(o)) mutating = o;
      if (mutating < 0) continue;
      int y = -1, w = mv.step, own = -1;
      for (int u : mv.units) {
        const VtogUnit& unit = g_.units[size_t(u)];
        y = unit.out;
        if (unit.in_slot == 0) own = u;
        if (unit.in_slot != 2) continue;
        // Updates written by their producer land when that producer (through any chain of
        // eliminated copies) writes them.
        int r = realizer(u);
        if (r >= 0 && g_.options[size_t(r)].tensor == unit.in) w = def_step(unit.in, memo);
      }
      if (y >= 0) mutations.push_back({&mv, y, w, own});
    }
    if (mutations.empty()) return;
    // The tensors whose elements live in each physical tensor a mutation changes, ascending.
    std::map<int, std::vector<int>> living_in;
    for (const Mutation& m : mutations)
      for (int p : storage(m.y))
        living_in[p];
    for (size_t v = 0; v < g_.tensors.size(); ++v) {
      const Composed* c = composed(int(v));
      if (!c) {
        auto it = living_in.find(int(v));
        if (it != living_in.end()) it->second.push_back(int(v));
        continue;
      }
      for (int b : c->bases) {
        auto it = living_in.find(b);
        if (it != living_in.end()) it->second.push_back(int(v));
      }
    }
    for (const Mutation& m : mutations)
      for (int p : storage(m.y)) {
        std::vector<Box> changed = region(m.y, p);
        for (int v : living_in.at(p)) {
          if (def_step(v, memo) >= m.w) continue;
          int r = late_read(v, m.w, m.own);
          if (r < 0 || !overlaps(region(v, p), changed)) continue;
          std::string reader =
              r == int(g_.steps.size()) ? std::string("the caller") : "step " + std::to_string(r);
          out.push_back(m.mv->node->describe() + " updates " + g_.tensor_name(p) +
                        " in place at step " + std::to_string(m.w) + ", but " + reader +
                        " still reads " + g_.tensor_name(v) + " from it");
        }
      }
  }

  // The first step at or after `from` that reads t, other than the unit `own` (the updated data
  // of the mutation being checked); a graph output is read after the last step. A scatter that
  // keeps its data in place reads it where it runs, though it copies nothing: its output is
  // the data's elements as they are at that step.
  int late_read(int t, int from, int own) const {
    for (int s : g_.tensors[size_t(t)].reader_steps) {
      if (s < from) continue;
      for (const VtogAccess& a : g_.steps[size_t(s)].accesses) {
        if (a.tensor != t || a.write || (a.unit >= 0 && a.unit == own)) continue;
        int r = a.unit < 0 ? -1 : realizer(a.unit);
        if (a.unit < 0 || r < 0 || g_.options[size_t(r)].mutates) return s;
      }
    }
    return g_.tensors[size_t(t)].graph_output ? int(g_.steps.size()) : -1;
  }

  static bool overlaps(const std::vector<Box>& a, const std::vector<Box>& b) {
    for (const Box& x : a)
      for (const Box& y : b) {
        bool meet = true;
        for (size_t d = 0; d < x.size() && d < y.size(); ++d)
          meet = meet && std::max(x[d].lo, y[d].lo) < std::min(x[d].hi, y[d].hi);
        if (meet) return true;
      }
    return false;
  }

  // Units of node m that are realized or may still be (some option realizing them is chosen,
  // or open and not excluded for good).
  std::vector<bool> realizable(int m) const {
    const VtogMovement& mv = g_.movement[size_t(m)];
    std::vector<bool> out;
    for (int u : mv.units) {
      bool ok = false;
      for (int o : g_.units[size_t(u)].realized_by) {
        int c = choice(g_.options[size_t(o)].tensor);
        ok = ok || c == o || (c < 0 && a_.static_ok_[size_t(o)]);
      }
      out.push_back(ok);
    }
    return out;
  }

private:
  const Assignment& a_;
  const Vtog& g_;
  bool overlay_;
};

// ---- Assignment ----

Assignment::Assignment(const Vtog& g, const CostModel& model)
    : g_(g), model_(model), choice_(g.tensors.size(), -1), composed_(g.tensors.size()),
      users_(g.tensors.size()), scatter_profile_(g.units.size()), mutated_(g.tensors.size(), false),
      stamp_(g.tensors.size(), 0), hyp_choice_(g.tensors.size(), -1),
      hyp_composed_(g.tensors.size()), visit_(g.tensors.size(), 0) {
  for (size_t u = 0; u < g.units.size(); ++u)
    if (g.units[u].scatter)
      scatter_profile_[u] = profile_mapping(
          *g.units[u].scatter, g.tensors[size_t(g.units[u].out)].elem_bytes, g.transaction_bytes);
  for (size_t o = 0; o < g.options.size(); ++o)
    static_ok_.push_back(static_reason(int(o)).empty());
  AssignmentView v(*this, false);
  for (size_t s = 0; s < g.steps.size(); ++s)
    step_cost_.push_back(v.step_cost(int(s)));
}

bool Assignment::realized(int unit) const {
  return AssignmentView(*this, false).realized(unit);
}

double Assignment::latency() const {
  return std::accumulate(step_cost_.begin(), step_cost_.end(), 0.0);
}

std::string Assignment::static_reason(int o) const {
  const VtogOption& opt = g_.options[size_t(o)];
  const VtogTensor& t = g_.tensors[size_t(opt.tensor)];
  const std::string& name = t.value->name;
  if (t.graph_input) return "graph input " + name + " is physical: its storage is the caller's";
  if (t.constant) return "constant " + name + " is physical";
  if (t.index) return name + " is read through load() by a mapping and stays physical";
  if (t.physical_only) return name + " is an operand of a kernel that takes physical operands";
  if (t.graph_output && opt.kind != OptionKind::in_place)
    return "graph output " + name + " must be physical and contiguous";
  return "";
}

namespace {

Result<Composed> compose_option(const Vtog& g, const VtogOption& o,
                                const std::function<const Composed*(int)>& base_composed) {
  Mapping m = o.mapping;
  for (int e : o.edges) {
    int b = g.edges[size_t(e)].to;
    const Composed* cb = base_composed(b);
    if (!cb) continue;
    Result<Mapping> r = compose(m, g.tensors[size_t(b)].base, cb->mapping);
    if (!r.ok())
      return Result<Composed>::fail("cannot compose " + g.tensor_name(o.tensor) + " through " +
                                    g.tensor_name(b) + ": " + r.reason);
    m = std::move(*r.value);
  }
  Composed c;
  std::set<int> bases;
  for (const Piece& p : m.pieces)
    if (int b = g.tensor_of(p.base); b >= 0) bases.insert(b);
  c.bases.assign(bases.begin(), bases.end());
  const VtogTensor& t = g.tensors[size_t(o.tensor)];
  c.profile = profile_mapping(m, t.elem_bytes, g.transaction_bytes);
  c.mapping = std::move(m);
  return {std::move(c), {}};
}

} // namespace

Trial Assignment::trial(std::span<const int> options) const {
  ++cur_stamp_;
  Trial r;
  r.options.assign(options.begin(), options.end());
  auto touch = [&](int t) {
    if (stamp_[size_t(t)] != cur_stamp_) {
      stamp_[size_t(t)] = cur_stamp_;
      visit_[size_t(t)] = 0;
      hyp_composed_[size_t(t)].reset();
    }
  };
  AssignmentView v(*this, true);
  std::vector<int> affected;
  for (int o : options) {
    int t = g_.options[size_t(o)].tensor;
    touch(t);
    if (choice_[size_t(t)] >= 0 || (visit_[size_t(t)] & kHasChoice)) {
      r.reason = g_.tensor_name(t) + " is already virtual";
      return r;
    }
    visit_[size_t(t)] |= kHasChoice | kInA;
    hyp_choice_[size_t(t)] = o;
    affected.push_back(t);
  }
  for (size_t i = 0; i < affected.size(); ++i)
    for (int u : users_[size_t(affected[i])]) {
      touch(u);
      if (visit_[size_t(u)] & kInA) continue;
      visit_[size_t(u)] |= kInA;
      affected.push_back(u);
    }

  std::vector<int> stack;
  std::function<bool(int)> compose_hyp = [&](int t) -> bool {
    if (visit_[size_t(t)] & kDone) return true;
    if (visit_[size_t(t)] & kVisiting) {
      std::string path;
      auto it = std::find(stack.begin(), stack.end(), t);
      for (; it != stack.end(); ++it)
        path += g_.tensor_name(*it) + " -> ";
      r.reason = "cycle: " + path + g_.tensor_name(t);
      return false;
    }
    visit_[size_t(t)] |= kVisiting;
    stack.push_back(t);
    const VtogOption& o = g_.options[size_t(v.choice(t))];
    for (int e : o.edges) {
      int b = g_.edges[size_t(e)].to;
      if (stamp_[size_t(b)] == cur_stamp_ && (visit_[size_t(b)] & kInA) && !compose_hyp(b))
        return false;
    }
    Result<Composed> c = compose_option(g_, o, [&](int b) { return v.composed(b); });
    if (!c.ok()) {
      r.reason = c.reason;
      return false;
    }
    hyp_composed_[size_t(t)] = std::make_shared<const Composed>(std::move(*c.value));
    visit_[size_t(t)] = (visit_[size_t(t)] & ~kVisiting) | kDone;
    stack.pop_back();
    return true;
  };
  for (int t : affected)
    if (!compose_hyp(t)) return r;

  std::vector<std::string> reasons;
  bool clobber_check = false;
  for (int o : options) {
    const VtogOption& opt = g_.options[size_t(o)];
    clobber_check = clobber_check || opt.mutates || opt.requires_unit >= 0;
  }
  for (int t : affected) {
    v.check_tensor(t, reasons);
    if (!reasons.empty()) {
      r.reason = reasons.front();
      return r;
    }
    for (int b : v.composed(t)->bases)
      clobber_check = clobber_check || mutated_[size_t(b)];
  }
  if (clobber_check) {
    v.check_clobbers(reasons);
    if (!reasons.empty()) {
      r.reason = reasons.front();
      return r;
    }
  }
  r.legal = true;

  std::vector<int> steps;
  std::set<int> nodes;
  for (int t : affected) {
    const VtogTensor& tensor = g_.tensors[size_t(t)];
    if (tensor.producer_step >= 0) steps.push_back(tensor.producer_step);
    steps.insert(steps.end(), tensor.reader_steps.begin(), tensor.reader_steps.end());
  }
  for (int o : options) {
    steps.push_back(g_.movement[size_t(g_.options[size_t(o)].movement)].step);
    for (int other : g_.tensors[size_t(g_.options[size_t(o)].tensor)].options)
      nodes.insert(g_.options[size_t(other)].movement);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  for (int s : steps) {
    double after = v.step_cost(s);
    r.saving += step_cost_[size_t(s)] - after;
    r.step_costs.push_back({s, after});
  }
  AssignmentView now(*this, false);
  double launch = model_.latency(StepQuery{});
  for (int m : nodes) {
    std::vector<bool> before = now.realizable(m), after = v.realizable(m);
    std::vector<int> lost;
    bool whole_before = true;
    for (size_t i = 0; i < before.size(); ++i) {
      whole_before = whole_before && before[i];
      if (before[i] && !after[i]) lost.push_back(g_.movement[size_t(m)].units[i]);
    }
    if (lost.empty()) continue;
    double cost = model_.latency(now.step_query(g_.movement[size_t(m)].step, &lost));
    r.forfeit += whole_before ? cost : cost - launch;
  }
  for (int t : affected)
    r.composed.push_back({t, hyp_composed_[size_t(t)]});
  return r;
}

void Assignment::commit(const Trial& t) {
  VTC_CHECK(t.legal) << "strategy: committing an illegal move: " << t.reason;
  for (int o : t.options) {
    const VtogOption& opt = g_.options[size_t(o)];
    choice_[size_t(opt.tensor)] = o;
    for (int e : opt.edges)
      users_[size_t(g_.edges[size_t(e)].to)].push_back(opt.tensor);
  }
  for (auto& [tensor, c] : t.composed)
    composed_[size_t(tensor)] = c;
  for (auto [s, cost] : t.step_costs)
    step_cost_[size_t(s)] = cost;
  recompute_mutated();
}

void Assignment::recompute_mutated() {
  std::fill(mutated_.begin(), mutated_.end(), false);
  AssignmentView v(*this, false);
  for (const VtogOption& o : g_.options)
    if (o.mutates && choice_[size_t(o.tensor)] == o.id) {
      int y = g_.units[size_t(o.units.front())].out;
      for (int p : v.storage(y))
        mutated_[size_t(p)] = true;
    }
}

std::vector<std::string> Assignment::assign(const std::vector<int>& options) {
  std::vector<std::string> reasons;
  std::fill(choice_.begin(), choice_.end(), -1);
  for (auto& c : composed_)
    c.reset();
  for (auto& u : users_)
    u.clear();
  for (int o : options) {
    int t = g_.options[size_t(o)].tensor;
    VTC_CHECK(choice_[size_t(t)] < 0) << "strategy: two options for " << g_.tensor_name(t);
    choice_[size_t(t)] = o;
  }
  // Compose every chain, depth first; a cycle or a failed composition leaves its tensors physical.
  std::vector<int> state(g_.tensors.size(), 0), stack;
  std::vector<bool> failed(g_.tensors.size(), false);
  std::function<bool(int)> visit = [&](int t) -> bool {
    if (state[size_t(t)] == 2) return !failed[size_t(t)];
    if (state[size_t(t)] == 1) {
      std::string path;
      for (auto it = std::find(stack.begin(), stack.end(), t); it != stack.end(); ++it)
        path += g_.tensor_name(*it) + " -> ";
      reasons.push_back("cycle: " + path + g_.tensor_name(t));
      return false;
    }
    state[size_t(t)] = 1;
    stack.push_back(t);
    const VtogOption& o = g_.options[size_t(choice_[size_t(t)])];
    bool ok = true;
    for (int e : o.edges) {
      int b = g_.edges[size_t(e)].to;
      if (choice_[size_t(b)] >= 0) ok = visit(b) && ok;
    }
    if (ok) {
      Result<Composed> c = compose_option(g_, o, [&](int b) { return composed_[size_t(b)].get(); });
      if (c.ok())
        composed_[size_t(t)] = std::make_shared<const Composed>(std::move(*c.value));
      else
        reasons.push_back(c.reason), ok = false;
    }
    failed[size_t(t)] = !ok;
    state[size_t(t)] = 2;
    stack.pop_back();
    return ok;
  };
  for (size_t t = 0; t < g_.tensors.size(); ++t)
    if (choice_[t] >= 0) visit(int(t));
  for (size_t t = 0; t < g_.tensors.size(); ++t)
    if (failed[t]) choice_[t] = -1, composed_[t].reset();
  for (size_t t = 0; t < g_.tensors.size(); ++t)
    if (choice_[t] >= 0)
      for (int e : g_.options[size_t(choice_[t])].edges)
        users_[size_t(g_.edges[size_t(e)].to)].push_back(int(t));
  AssignmentView v(*this, false);
  for (size_t t = 0; t < g_.tensors.size(); ++t)
    v.check_tensor(int(t), reasons);
  v.check_clobbers(reasons);
  for (size_t s = 0; s < g_.steps.size(); ++s)
    step_cost_[s] = v.step_cost(int(s));
  recompute_mutated();
  return reasons;
}

} // namespace vtc
