// Buffers first (graph inputs, outputs, constants, then every other physical value a step
// touches), then one step per kernel or copy in execution order, each kernel step with the
// access of every value it touches; kernels and copies the target has no code for become
// interpreter steps. Last, each run-time index tensor gets its check step, right after the
// last step writing what it is stored in (first of all for graph inputs).
#include "lower/lower.h"

#include "lower/index_checks.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "ops/matrix_flops.h"
#include "ops/movement_bytes.h"
#include "passes/fusion.h"
#include "vtc/error.h"

namespace vtc {

const char* buffer_role_name(BufferRole r) {
  switch (r) {
  case BufferRole::input:
    return "input";
  case BufferRole::output:
    return "output";
  case BufferRole::constant:
    return "constant";
  case BufferRole::intermediate:
    return "intermediate";
  }
  return "?";
}

const char* access_kind_name(AccessKind k) {
  switch (k) {
  case AccessKind::physical:
    return "physical";
  case AccessKind::mapped:
    return "mapped";
  case AccessKind::prologue:
    return "prologue";
  case AccessKind::epilogue:
    return "epilogue";
  }
  return "?";
}

const char* step_kind_name(StepKind k) {
  switch (k) {
  case StepKind::kernel:
    return "kernel";
  case StepKind::copy:
    return "copy";
  case StepKind::constant_output:
    return "constant";
  case StepKind::interpreter:
    return "interpreter";
  case StepKind::index_check:
    return "index-check";
  }
  return "?";
}

int Program::find_buffer(const std::string& name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return int(i);
  return -1;
}

std::string print_program(const Program& p) {
  std::ostringstream os;
  os << "program strategy " << p.strategy << "\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferInfo& b = p.buffers[i];
    os << "  buffer " << i << " " << buffer_role_name(b.role) << " '" << b.name << "' "
       << type_str(b.type);
    if (b.alias_of >= 0) os << " aliases " << b.alias_of;
    if (b.value && p.storage.channels_last.count(b.value)) os << " channels-last";
    os << "\n";
  }
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    os << "  step " << s << " " << step_kind_name(step.kind) << " " << step.name << " reads [";
    for (size_t k = 0; k < step.reads.size(); ++k)
      os << (k ? "," : "") << step.reads[k];
    os << "] writes [";
    for (size_t k = 0; k < step.writes.size(); ++k)
      os << (k ? "," : "") << step.writes[k];
    os << "]\n";
    for (const OperandAccess& a : step.operands) {
      os << "    " << access_kind_name(a.kind) << " '" << a.value->name << "'";
      if (a.kind == AccessKind::physical) os << " buffer " << a.buffer;
      if (a.kind == AccessKind::mapped) os << " " << to_string(*a.mapping);
      if (a.kind == AccessKind::prologue) os << " by " << a.producer->op;
      for (const Node* n : a.chain)
        os << " then " << n->op;
      os << "\n";
    }
  }
  return os.str();
}

std::vector<const Value*> stored_values(const Value* v, const Mapping* mapping) {
  if (!mapping) return {v};
  std::vector<const Value*> out;
  for (const Piece& piece : mapping->pieces)
    if (piece.base) out.push_back(static_cast<const Value*>(piece.base->key));
  // Values loaded by index expressions (run-time indices): physical, read by the step.
  std::function<void(IndexExpr)> walk = [&](IndexExpr e) {
    if (e.kind() == ExprKind::load) out.push_back(static_cast<const Value*>(e.load_base()->key));
    for (const ExprNode* op : e.node()->ops)
      walk(IndexExpr(op));
  };
  for (const Piece& p : mapping->pieces) {
    for (const IndexExpr& e : p.index)
      walk(e);
    for (const Search& s : p.searches)
      for (const auto& [a, b] : s.eqs) {
        walk(a);
        walk(b);
      }
  }
  return out;
}

namespace {

class Lowerer {
public:
  Lowerer(const Graph& g, const KernelGraph& kg, const StorageDecision& d, const LowerOptions& o)
      : g_(g), kg_(kg), d_(d), o_(o) {
    p_.storage.virtual_values = d.virtual_values;
  }

  Program run() {
    p_.strategy = d_.strategy;
    for (const Value* v : g_.inputs)
      p_.inputs.push_back(buffer(v, BufferRole::input));
    for (const Value* v : g_.outputs)
      p_.outputs.push_back(buffer(v, BufferRole::output));
    alias_donated_outputs();
    constant_outputs();
    for (const Step& s : d_.steps.empty() ? kg_.steps : d_.steps) {
      if (s.is_kernel) {
        kernel_step(kg_.kernels[size_t(s.index)]);
      } else {
        const Node* n = kg_.movement[size_t(s.index)];
        if (!d_.eliminated.count(n)) copy_step(*n);
      }
    }
    index_check_steps();
    return std::move(p_);
  }

private:
  int buffer(const Value* v, BufferRole role) {
    auto it = p_.storage.buffer_of.find(v);
    if (it != p_.storage.buffer_of.end()) return it->second;
    BufferInfo b;
    b.name = v->name;
    b.type = v->type;
    b.role = v->constant && role == BufferRole::intermediate ? BufferRole::constant : role;
    b.value = v;
    p_.buffers.push_back(b);
    int id = int(p_.buffers.size()) - 1;
    p_.storage.buffer_of[v] = id;
    return id;
  }

  bool is_virtual(const Value* v) const { return d_.virtual_values.count(v) != 0; }

  // The bytes a kernel moves for value v (for reports): its size, or, for a virtual value, the
  // size of the bases its mapping reads when that is smaller — a grouped-query Expand of a KV
  // cache or a broadcast fetches each stored element once, however many indices map onto it.
  int64_t moved_bytes(const Value* v) const {
    const int64_t own = int64_t(v->type.nbytes());
    auto it = d_.virtual_values.find(v);
    if (it == d_.virtual_values.end() || v->type.numel() == 0) return own;
    const int64_t element = own / v->type.numel();
    std::set<const Base*> bases;
    int64_t stored = 0;
    for (const Piece& piece : it->second.pieces)
      if (piece.base && bases.insert(piece.base).second)
        stored += shape_numel(piece.base->shape) * element;
    return std::min(own, stored);
  }

  // Ids of the buffers a step reads or writes for value v: its own, or its bases' when virtual.
  void touch(const Value* v, std::vector<int>& ids) {
    if (!v) return;
    auto it = d_.virtual_values.find(v);
    for (const Value* stored :
         stored_values(v, it == d_.virtual_values.end() ? nullptr : &it->second))
      ids.push_back(buffer(stored, BufferRole::intermediate));
  }

  // A donated input updated in place by a scatter whose result is a graph output shares that
  // output's buffer.
  void alias_donated_outputs() {
    const auto& buffer_of = p_.storage.buffer_of;
    if (!d_.aliases.empty()) {
      for (const auto& [out, in] : d_.aliases)
        p_.buffers[size_t(buffer_of.at(out))].alias_of = buffer_of.at(in);
      return;
    }
    for (const auto& n : g_.nodes()) {
      if (n->op != "ScatterND" && n->op != "ScatterElements" && n->op != "Scatter") continue;
      const Value* data = n->input(0);
      const Value* out = n->output(0);
      if (!data || !out || !data->is_graph_input || !out->is_graph_output) continue;
      if (!o_.donated.count(data->name)) continue;
      int in_id = buffer_of.at(data), out_id = buffer_of.at(out);
      p_.buffers[size_t(out_id)].alias_of = in_id;
    }
  }

  // A graph output folded to a constant: a step copies the constant into the output buffer.
  void constant_outputs() {
    for (const Value* v : g_.outputs) {
      if (!v->constant) continue;
      BufferInfo c;
      c.name = v->name + "#constant";
      c.type = v->type;
      c.role = BufferRole::constant;
      c.value = v;
      p_.buffers.push_back(c);
      int from = int(p_.buffers.size()) - 1, to = p_.storage.buffer_of.at(v);
      StepInfo s;
      s.name = "constant output '" + v->name + "'";
      s.kind = StepKind::constant_output;
      s.reads = {from};
      s.writes = {to};
      s.bytes = 2 * int64_t(v->type.nbytes());
      p_.steps.push_back(std::move(s));
    }
  }

  OperandAccess stored_access(const Value* v) {
    OperandAccess a;
    a.value = v;
    auto it = d_.virtual_values.find(v);
    if (it != d_.virtual_values.end()) {
      a.kind = AccessKind::mapped;
      a.mapping = it->second;
    } else {
      a.buffer = buffer(v, BufferRole::intermediate);
    }
    return a;
  }

  // Every value kernel k reads or writes, with its access: memory operands physical or mapped,
  // values its fused nodes compute before the anchor as prologues, and the anchor's result as
  // an epilogue when a chain follows it.
  std::vector<OperandAccess> kernel_operands(const Kernel& k) {
    std::vector<OperandAccess> ops;
    for (const Value* v : k.inputs)
      ops.push_back(stored_access(v));
    for (const Node* n : k.nodes) {
      if (n == k.anchor || n == max_pool_tail(k)) continue;
      const Value* out = n->outputs[0];
      bool before_anchor = k.anchor && std::find(k.nodes.begin(), k.nodes.end(), n) <
                                           std::find(k.nodes.begin(), k.nodes.end(), k.anchor);
      if (!k.anchor || before_anchor) {
        OperandAccess a;
        a.value = out;
        a.kind = AccessKind::prologue;
        a.producer = n;
        ops.push_back(std::move(a));
      }
    }
    std::vector<const Node*> chain = epilogue_chain(k);
    if (!chain.empty()) {
      OperandAccess a;
      a.value = k.anchor->outputs[0];
      a.kind = AccessKind::epilogue;
      a.chain = chain;
      ops.push_back(std::move(a));
    }
    for (const Value* v : k.outputs)
      ops.push_back(stored_access(v));
    return ops;
  }

  void kernel_step(const Kernel& k) {
    StepInfo s;
    std::ostringstream name;
    name << k.name << " " << kernel_kind_name(k.kind);
    if (k.impl != KernelImpl::vtc_template) name << " (" << kernel_impl_name(k.impl) << ")";
    name << " [";
    for (size_t i = 0; i < k.nodes.size(); ++i)
      name << (i ? ", " : "") << k.nodes[i]->op << " '" << k.nodes[i]->name << "'";
    s.name = name.str() + "]";
    for (const Value* v : k.inputs)
      touch(v, s.reads);
    for (const Value* v : k.outputs)
      touch(v, s.writes);
    for (const Value* v : k.inputs)
      s.bytes += moved_bytes(v);
    for (const Value* v : k.outputs)
      s.bytes += moved_bytes(v);
    for (const Node* n : k.nodes)
      s.flops += matrix_flops(*n);
    if (!o_.generates_kernel || o_.generates_kernel(k)) {
      s.kind = StepKind::kernel;
      s.kernel = k;
      s.operands = kernel_operands(k);
    } else {
      for (const Value* v : k.inputs)
        VTC_CHECK(!is_virtual(v))
            << s.name << ": runs on the reference interpreter, so its operands must be physical";
      for (const Value* v : k.outputs)
        VTC_CHECK(!is_virtual(v))
            << s.name << ": runs on the reference interpreter, so its operands must be physical";
      s.kind = StepKind::interpreter;
      s.fallback.assign(k.nodes.begin(), k.nodes.end());
    }
    p_.steps.push_back(std::move(s));
  }

  void copy_step(const Node& n) {
    StepInfo s;
    s.name = "copy " + n.op + " '" + n.name + "'";
    s.is_copy = true;
    for (const Value* v : n.inputs)
      touch(v, s.reads);
    for (const Value* v : n.outputs)
      touch(v, s.writes);
    s.bytes = data_movement_bytes(n);
    if (!o_.generates_copy || o_.generates_copy(n)) {
      s.kind = StepKind::copy;
      s.node = &n;
    } else {
      // No mapping for this node (a run-time pad value, a reducing scatter): the reference
      // interpreter runs it, on physical operands.
      for (const Value* v : n.inputs)
        VTC_CHECK(!v || !is_virtual(v))
            << s.name << ": has no generated code and reads a virtual tensor";
      for (const Value* v : n.outputs)
        VTC_CHECK(!v || !is_virtual(v))
            << s.name << ": has no generated code and writes a virtual tensor";
      s.kind = StepKind::interpreter;
      s.fallback = {&n};
    }
    p_.steps.push_back(std::move(s));
  }

  // A check step for every node reading run-time indices (constant ones are checked now),
  // each placed after the last step writing a buffer its indices are stored in. Nodes reading
  // the same indices against the same sizes (a rotary table's cos and sin, a key and a value
  // cache update) share the first one's check, which names the node an in-order run fails at;
  // indices that constants and earlier checks already bound (indices_known_in_range) get none.
  void index_check_steps() {
    std::vector<std::pair<size_t, StepInfo>> checks;
    std::set<std::pair<const Value*, std::vector<int64_t>>> seen;
    // Indices a check kept so far covers, each against one size for all its elements.
    std::set<std::pair<const Value*, int64_t>> uniform;
    auto covered = [&](const Value* v, int64_t size) { return uniform.count({v, size}) != 0; };
    for (const auto& n : g_.nodes()) {
      std::optional<IndexCheck> check = index_check_of(*n);
      if (!check) continue;
      if (check->indices->constant) {
        check_constant_indices(*check);
        continue;
      }
      std::vector<int64_t> sizes;
      for (const IndexBound& b : check->bounds)
        sizes.push_back(b.size);
      if (!seen.emplace(check->indices, sizes).second) continue;
      if (indices_known_in_range(*check, covered)) continue;
      StepInfo s;
      s.name = "check indices '" + check->indices->name + "' of " + n->describe();
      s.kind = StepKind::index_check;
      touch(check->indices, s.reads);
      s.operands.push_back(stored_access(check->indices));
      s.bytes = int64_t(check->indices->type.nbytes());
      if (std::all_of(sizes.begin(), sizes.end(), [&](int64_t x) { return x == sizes[0]; }))
        uniform.emplace(check->indices, sizes[0]);
      s.check = std::move(check);
      size_t at = 0;
      for (size_t k = 0; k < p_.steps.size(); ++k)
        for (int id : p_.steps[k].writes)
          if (std::find(s.reads.begin(), s.reads.end(), id) != s.reads.end()) at = k + 1;
      checks.emplace_back(at, std::move(s));
    }
    if (checks.empty()) return;
    std::vector<StepInfo> steps;
    for (size_t k = 0; k <= p_.steps.size(); ++k) {
      for (auto& [at, s] : checks)
        if (at == k) steps.push_back(std::move(s));
      if (k < p_.steps.size()) steps.push_back(std::move(p_.steps[k]));
    }
    p_.steps = std::move(steps);
  }

  const Graph& g_;
  const KernelGraph& kg_;
  const StorageDecision& d_;
  const LowerOptions& o_;
  Program p_;
};

} // namespace

Program lower_program(const Graph& g, const KernelGraph& kg, const StorageDecision& decision,
                      const LowerOptions& options) {
  return Lowerer(g, kg, decision, options).run();
}

} // namespace vtc
